"""Stand-ins for vendor libraries we cannot reach here (AMD, Apple): their
answers follow the vendors' documentation. These paths are SIMULATED."""

from __future__ import annotations

from types import SimpleNamespace


def fake_torch(*, hip: str | None = None, cuda: str | None = None, props=(), mps=False):
    """A torch whose CUDA/HIP runtime is already initialised with `props` devices."""
    cuda_ns = SimpleNamespace(
        is_initialized=lambda: True,
        is_available=lambda: bool(props),
        device_count=lambda: len(props),
        get_device_properties=lambda i: props[i],
    )
    return SimpleNamespace(
        __version__="2.13.0-fake",
        version=SimpleNamespace(hip=hip, cuda=cuda),
        cuda=cuda_ns,
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)),
        mps=SimpleNamespace(
            recommended_max_memory=lambda: 48 * 2**30,
            driver_allocated_memory=lambda: 3 * 2**30,
        ),
    )


def rocm_props(name: str, arch: str, *, warp_size: int | None, cus: int, memory: int):
    fields = dict(
        name=name, gcnArchName=arch, multi_processor_count=cus, total_memory=memory,
        major=9, minor=4,
    )  # fmt: skip
    if warp_size is not None:
        fields["warp_size"] = warp_size
    return SimpleNamespace(**fields)


MI300X = rocm_props("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", warp_size=64, cus=304,
                    memory=192 * 2**30)  # fmt: skip
# RDNA3; this one reports no warp_size, so portagpu derives it from the arch
RX7900 = rocm_props("AMD Radeon RX 7900 XTX", "gfx1100", warp_size=None, cus=96,
                    memory=24 * 2**30)  # fmt: skip


class AmdSmiError(Exception):
    pass


def fake_amdsmi(*, power: dict, vram_mb=(10240, 196608), hip_ids=(1, 0)):
    """amdsmi with two GPUs whose amdsmi order is the reverse of HIP's."""
    handles = ["h-a", "h-b"]

    def enumeration(h):
        return {"hip_id": hip_ids[handles.index(h)]}

    def temp(h, kind, metric):
        if kind == "HOTSPOT":
            raise AmdSmiError("not supported")
        return 45 if h == "h-a" else 52

    return SimpleNamespace(
        amdsmi_init=lambda *a: None,
        amdsmi_shut_down=lambda: None,
        amdsmi_get_processor_handles=lambda: list(handles),
        amdsmi_get_gpu_enumeration_info=enumeration,
        amdsmi_get_gpu_asic_info=lambda h: {
            "market_name": f"MI300X {h}", "target_graphics_version": "gfx942",
            "num_compute_units": 304,
        },  # fmt: skip
        amdsmi_get_gpu_vram_info=lambda h: {"vram_size": 196608},
        amdsmi_get_gpu_driver_info=lambda h: {"driver_version": "6.10.5"},
        amdsmi_get_gpu_device_bdf=lambda h: f"0000:{handles.index(h):02x}:00.0",
        amdsmi_get_gpu_vram_usage=lambda h: {"vram_used": vram_mb[0], "vram_total": vram_mb[1]}
        if h == "h-b" else {"vram_used": 1, "vram_total": 2},
        amdsmi_get_gpu_activity=lambda h: {"gfx_activity": 87 if h == "h-b" else "N/A"},
        amdsmi_get_power_info=lambda h: power,
        amdsmi_get_temp_metric=temp,
        AmdSmiTemperatureType=SimpleNamespace(HOTSPOT="HOTSPOT", EDGE="EDGE"),
        AmdSmiTemperatureMetric=SimpleNamespace(CURRENT="CURRENT"),
    )
