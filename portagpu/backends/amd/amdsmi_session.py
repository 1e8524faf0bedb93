"""amdsmi, AMD's management library. PyPI's amdsmi raises KeyError at import
when libamd_smi.so is absent, so imports go through optional_import."""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

from portagpu.backends._common import call, library_session, loaded, optional_import


def amdsmi() -> AbstractContextManager[ModuleType | None]:
    """An initialised amdsmi, or None when it or libamd_smi.so is absent."""
    lib = loaded("amdsmi") or optional_import("amdsmi")
    return library_session(lib, "amdsmi_init", "amdsmi_shut_down")


def hip_ordered_handles(lib: ModuleType) -> list[Any]:
    """amdsmi's handles ordered by HIP device index: the two numberings can
    differ, and amdsmi_get_gpu_enumeration_info()['hip_id'] maps them."""
    handles = call(lib.amdsmi_get_processor_handles) or []
    enum = getattr(lib, "amdsmi_get_gpu_enumeration_info", None)

    def hip_id(pair: tuple[int, Any]) -> int:
        position, h = pair
        info = call(enum, h) if enum else None
        value = info.get("hip_id") if isinstance(info, dict) else None
        return int(value) if isinstance(value, int) else position

    return [h for _, h in sorted(enumerate(handles), key=hip_id)]


def visible_handles(lib: ModuleType) -> list[Any] | None:
    """The handles of the GPUs this process sees, by HIP index: amdsmi lists
    every GPU, HIP only those ROCR_/HIP_VISIBLE_DEVICES leave. None when the
    variables cannot be resolved here (UUIDs, conflicts)."""
    from portagpu.visibility import visible_physical

    handles = hip_ordered_handles(lib)
    order = visible_physical("rocm", len(handles))
    return None if order is None else [handles[i] for i in order]
