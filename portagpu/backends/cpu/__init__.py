"""CPU backend."""

from __future__ import annotations

from portagpu.backends.base import Backend
from portagpu.backends.cpu import probe, telemetry
from portagpu.backends.cpu.runtime import CpuRuntime


class CpuBackend(CpuRuntime, Backend):
    name = "cpu"
    vendor = "cpu"
    display_name = "CPU"

    def present(self) -> bool:
        return probe.present()

    def probe(self, force: bool = False):
        return probe.probe(force=force)

    def absence_reason(self) -> str:
        return probe.absence_reason()

    def telemetry(self, device):
        return telemetry.read(device)


BACKEND = CpuBackend()
