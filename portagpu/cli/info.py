"""`portagpu info`: which device portagpu runs on, its facts and live readings."""

from __future__ import annotations

import argparse
import json
import platform
from typing import Any

from portagpu._version import __version__

# distributions whose versions tell a reader which GPU stack is installed
STACK = ("torch", "triton", "cupy-cuda13x", "cupy-cuda12x", "cupy-rocm-6-0", "nvidia-ml-py",
         "amdsmi", "numpy", "libcst", "tree-sitter", "tree-sitter-cuda")  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "info",
        help="show the detected device, its warp size, BLAS and live readings",
        description="Detect the device portagpu would run on (override with PORTAGPU_DEVICE="
        "cuda|rocm|mps|cpu) and print its facts and telemetry.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every device of every backend present (GPUs and the CPU), each with telemetry, "
        "and the visible-device variables in effect",
    )
    parser.set_defaults(func=run)


def every_device() -> list[Any]:
    """The chosen backend's devices, then those of every other backend present."""
    from portagpu.backends import all_backends
    from portagpu.device import devices

    found = devices()
    for backend in all_backends():
        if backend.name != found[0].backend:
            found += backend.probe(force=False)
    return found


def visibility() -> dict[str, str]:
    """backend -> its visible-device variables, for the GPU backends that have them set."""
    from portagpu.backends import all_backends
    from portagpu.errors import VisibilityError
    from portagpu.visibility import masked, read

    shown = {}
    for backend in all_backends():
        if backend.visible_devices_var and masked(backend.name):
            try:
                shown[backend.name] = read(backend.name).describe()
            except VisibilityError as exc:
                shown[backend.name] = f"CONFLICT: {exc}"
    return shown


def collect(everything: bool = False) -> dict[str, Any]:
    from portagpu.device import detect, devices
    from portagpu.readings import telemetry

    found = every_device() if everything else devices()
    report = {
        "portagpu": __version__,
        "python": platform.python_version(),
        "device": detect().to_dict(),
        "devices": [d.to_dict() for d in found],
        "telemetry": [telemetry(d).to_dict() for d in found],
        "stack": installed_stack(),
    }
    if everything:
        report["visibility"] = visibility()
    return report


def installed_stack() -> dict[str, str]:
    # imported here: every CLI call builds this module's parser, and
    # importlib.metadata costs 35-70 ms at import
    from importlib import metadata

    versions = {}
    for dist in STACK:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return versions


def run(args: argparse.Namespace) -> int:
    report = collect(everything=args.all)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(render_table(report))
    return 0


def _bytes(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**30:.1f} GiB"


def _value(v: Any, unit: str = "") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.1f}{unit}"
    return f"{v}{unit}"


def render_table(report: dict[str, Any]) -> str:
    rows: list[tuple[str, str]] = []
    for device, reading in zip(report["devices"], report["telemetry"], strict=True):
        rows += [
            ("device", f"{device['backend']}:{device['index']}  {device['name']}"),
            ("vendor / backend", f"{device['vendor']} / {device['backend']}"),
            ("arch", _value(device["arch"])),
            ("warp size", _value(device["warp_size"])),
            ("multiprocessors", _value(device["multiprocessors"])),
            ("memory", _bytes(device["memory_total"])),
            ("BLAS", device["blas"]),
            ("runtime", _value(device["runtime_version"])),
            ("driver", _value(device["driver_version"])),
            ("detected via", device["source"]),
            ("memory used", _bytes(reading["memory_used"])),
            ("utilization", _value(reading["utilization"], " %")),
            ("temperature", _value(reading["temperature"], " C")),
            ("power", _value(reading["power"], " W")),
            ("telemetry via", reading["source"] or "-"),
            ("", ""),
        ]
    for backend, variables in report.get("visibility", {}).items():
        rows.append((f"{backend} visible devices", variables))
    stack = ", ".join(f"{k} {v}" for k, v in report["stack"].items()) or "-"
    rows += [("portagpu", f"{report['portagpu']} (Python {report['python']})"), ("stack", stack)]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" if k else "" for k, v in rows)
