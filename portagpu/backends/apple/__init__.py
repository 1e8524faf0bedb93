"""MPS (Apple) backend."""

from __future__ import annotations

from portagpu.backends.apple import probe, telemetry
from portagpu.backends.apple.runtime import AppleRuntime
from portagpu.backends.base import Backend


class AppleBackend(AppleRuntime, Backend):
    name = "mps"
    vendor = "apple"
    display_name = "MPS (Apple)"
    probes = probe
    readings = telemetry
    # torch maps mps to gloo, which takes CPU tensors: no collective library
    # moves MPS tensors, so portagpu refuses more than one rank here
    dist_backend = "gloo"
    collective_library = None


BACKEND = AppleBackend()
