"""The targets table: names, aliases, per-arch limits, families for unknown archs."""

import pytest

from portagpu.errors import ConfigError
from portagpu.kernelcheck.targets import DEFAULT_TARGETS, KIB, parse_targets, resolve


@pytest.mark.parametrize(
    "name, vendor, warp, lds",
    [
        ("gfx942", "amd", 64, 64 * KIB),
        ("gfx90a", "amd", 64, 64 * KIB),
        ("gfx950", "amd", 64, 160 * KIB),
        ("gfx1100", "amd", 32, 64 * KIB),
        ("sm_90", "nvidia", 32, 227 * KIB),
        ("sm_80", "nvidia", 32, 163 * KIB),
        ("sm_86", "nvidia", 32, 99 * KIB),
    ],
)
def test_limits_per_arch(name, vendor, warp, lds):
    target = resolve(name)
    assert (target.vendor, target.warp_size, target.max_shared, target.max_threads) == (
        vendor,
        warp,
        lds,
        1024,
    )
    assert not target.inferred


@pytest.mark.parametrize(
    "spelling, name",
    [
        ("sm90", "sm_90"),
        ("90", "sm_90"),
        ("sm_90a", "sm_90"),
        ("H100", "sm_90"),
        ("mi300x", "gfx942"),
        ("gfx942:sramecc+:xnack-", "gfx942"),
        (" GFX1100 ", "gfx1100"),
    ],
)
def test_spellings(spelling, name):
    assert resolve(spelling).name == name


def test_triton_target_of_each_vendor():
    assert (resolve("gfx942").triton_backend, resolve("gfx942").triton_arch) == ("hip", "gfx942")
    assert (resolve("sm_80").triton_backend, resolve("sm_80").triton_arch) == ("cuda", 80)


def test_unknown_arch_gets_its_family_and_says_so():
    rdna = resolve("gfx1151")
    assert (rdna.warp_size, rdna.max_shared, rdna.inferred) == (32, 64 * KIB, True)
    cdna = resolve("gfx940")
    assert (cdna.warp_size, cdna.inferred) == (64, True)
    blackwell_like = resolve("sm_103")
    assert (blackwell_like.max_shared, blackwell_like.inferred) == (227 * KIB, True)


def test_bad_names_are_clear_errors():
    with pytest.raises(ConfigError, match="unknown target 'tpu'"):
        resolve("tpu")
    with pytest.raises(ConfigError, match="sm_60: Triton compiles for sm_70 and newer"):
        resolve("sm_60")
    with pytest.raises(ConfigError, match="--target: name at least one target"):
        parse_targets(" , ")


def test_parse_keeps_order_and_drops_duplicates():
    assert [t.name for t in parse_targets("gfx942,sm_90,mi300x")] == ["gfx942", "sm_90"]
    assert [t.name for t in parse_targets(list(DEFAULT_TARGETS))] == list(DEFAULT_TARGETS)
