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


BACKEND = AppleBackend()
