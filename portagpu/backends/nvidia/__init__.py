"""CUDA (NVIDIA) backend."""

from __future__ import annotations

from portagpu.backends.base import Backend
from portagpu.backends.nvidia import probe, telemetry
from portagpu.backends.nvidia.runtime import NvidiaRuntime


class NvidiaBackend(NvidiaRuntime, Backend):
    name = "cuda"
    vendor = "nvidia"
    display_name = "CUDA (NVIDIA)"

    def present(self) -> bool:
        return probe.present()

    def probe(self, force: bool = False):
        return probe.probe(force=force)

    def absence_reason(self) -> str:
        return probe.absence_reason()

    def telemetry(self, device):
        return telemetry.read(device)


BACKEND = NvidiaBackend()
