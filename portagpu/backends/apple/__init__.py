"""MPS (Apple) backend."""

from __future__ import annotations

from portagpu.backends.apple import probe, telemetry
from portagpu.backends.apple.runtime import AppleRuntime
from portagpu.backends.base import Backend


class AppleBackend(AppleRuntime, Backend):
    name = "mps"
    vendor = "apple"
    display_name = "MPS (Apple)"
    priority = 30
    probes = probe
    readings = telemetry
    # torch maps mps to gloo, which takes CPU tensors: no collective library
    # moves MPS tensors, so portagpu refuses more than one rank here
    dist_backend = "gloo"
    collective_library = None
    torch_device_type = "mps"
    torch_device_indexed = False  # torch calls the one Apple GPU "mps"
    test_marker_help = "mps: needs an Apple GPU through MPS; skipped elsewhere"

    def warp_size_for(self, arch: str | None) -> int | None:
        return probe.SIMD_WIDTH


BACKEND = AppleBackend()
