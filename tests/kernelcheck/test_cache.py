"""The compile cache: JSON files keyed by everything a compile depends on."""

import json

from portagpu.kernelcheck.cache import SCHEMA, CompileCache, default_dir, key_of


def test_round_trip_as_json_never_pickle(tmp_path):
    cache = CompileCache(tmp_path)
    key = key_of(
        "3.9.0", "m:k", "source-hash", [["*fp32", "D"]], [("num_warps", 4)], "hip", "gfx942", 64
    )
    assert cache.get(key) is None and cache.misses == 1
    cache.put(key, {"compiled": True, "shared": 1024})
    (path,) = tmp_path.rglob("*.json")
    assert path.parent.parent.name == f"v{SCHEMA}" and json.loads(path.read_text())["key"] == key
    assert cache.get(key) == {"compiled": True, "shared": 1024} and cache.hits == 1
    assert not list(tmp_path.rglob("*.pickle")) and not list(tmp_path.rglob(".tmp-*"))


def test_every_input_changes_the_key():
    base = ["3.9.0", "m:k", "h", [["*fp32", "D"]], [("num_warps", 4)], "hip", "gfx942", 64]
    keys = {key_of(*base)}
    for i, other in enumerate(
        ["3.6.0", "m:k2", "h2", [["*fp16", "D"]], [("num_warps", 8)], "cuda", "gfx90a", 32]
    ):
        changed = list(base)
        changed[i] = other
        keys.add(key_of(*changed))
    assert len(keys) == 9


def test_a_damaged_or_foreign_file_is_ignored(tmp_path):
    cache = CompileCache(tmp_path)
    key = key_of("x")
    cache.put(key, {"compiled": True})
    (path,) = tmp_path.rglob("*.json")
    path.write_text("{not json")
    assert cache.get(key) is None
    path.write_text(json.dumps({"key": "another", "facts": {}}))
    assert cache.get(key) is None


def test_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PORTAGPU_CACHE_DIR", str(tmp_path / "c"))
    assert default_dir() == tmp_path / "c" / "kernelcheck"
    monkeypatch.delenv("PORTAGPU_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if __import__("sys").platform.startswith("linux"):
        assert default_dir() == tmp_path / "xdg" / "portagpu" / "kernelcheck"
