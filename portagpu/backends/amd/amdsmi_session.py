"""amdsmi, AMD's management library. PyPI's amdsmi raises KeyError at import
when libamd_smi.so is absent, so imports go through optional_import."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from portagpu.backends._common import loaded, optional_import


@contextmanager
def amdsmi() -> Iterator[ModuleType | None]:
    lib = loaded("amdsmi") or optional_import("amdsmi")
    if lib is None:
        yield None
        return
    try:
        lib.amdsmi_init()
    except Exception:  # noqa: BLE001 - AmdSmiLibraryException when no driver
        yield None
        return
    try:
        yield lib
    finally:
        try:
            lib.amdsmi_shut_down()
        except Exception:  # noqa: BLE001
            pass


def call(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - unsupported on this GPU / driver
        return None


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
