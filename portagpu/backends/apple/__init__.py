"""MPS (Apple) backend."""

from __future__ import annotations

from portagpu.backends.apple import probe, telemetry
from portagpu.backends.apple.runtime import AppleRuntime
from portagpu.backends.base import Backend


class AppleBackend(AppleRuntime, Backend):
    name = "mps"
    vendor = "apple"
    display_name = "MPS (Apple)"

    def present(self) -> bool:
        return probe.present()

    def probe(self, force: bool = False):
        return probe.probe(force=force)

    def absence_reason(self) -> str:
        return probe.absence_reason()

    def telemetry(self, device):
        return telemetry.read(device)


BACKEND = AppleBackend()
