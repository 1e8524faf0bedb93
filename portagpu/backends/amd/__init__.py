"""ROCm (AMD) backend."""

from __future__ import annotations

from portagpu.backends.amd import probe, telemetry
from portagpu.backends.amd.runtime import AmdRuntime
from portagpu.backends.base import Backend


class AmdBackend(AmdRuntime, Backend):
    name = "rocm"
    vendor = "amd"
    display_name = "ROCm (AMD)"

    def present(self) -> bool:
        return probe.present()

    def probe(self, force: bool = False):
        return probe.probe(force=force)

    def absence_reason(self) -> str:
        return probe.absence_reason()

    def telemetry(self, device):
        return telemetry.read(device)


BACKEND = AmdBackend()
