"""The interface every vendor backend implements (one package per vendor, as in
Triton's backends/nvidia and backends/amd). Callers ask the backend of a
device; nothing else in portagpu branches on the vendor."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from portagpu.device import Device
    from portagpu.readings import Telemetry


class Backend(ABC):
    name: str  # "cuda" | "rocm" | "mps" | "cpu"
    vendor: str  # "nvidia" | "amd" | "apple" | "cpu"
    display_name: str  # for messages: "CUDA (NVIDIA)"

    # --- discovery -------------------------------------------------------
    @abstractmethod
    def present(self) -> bool:
        """Cheap hint that this backend's hardware may exist, importing nothing heavy."""

    @abstractmethod
    def probe(self, force: bool = False) -> list[Device]:
        """The devices of this backend; [] when absent. `force` skips the cheap
        presence hint (PORTAGPU_DEVICE asked for this backend)."""

    def absence_reason(self) -> str:
        """Why probe() found nothing, for the error message."""
        return "no device and no driver library answered"

    # --- telemetry -------------------------------------------------------
    @abstractmethod
    def telemetry(self, device: Device) -> Telemetry:
        """Live readings; fields a library cannot give are None, never a crash."""
