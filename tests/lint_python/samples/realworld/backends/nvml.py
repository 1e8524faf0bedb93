"""The NVML side of a multi-vendor monitor: a module named for its vendor (lint sample)."""

import pynvml

pynvml.nvmlInit()


def memory_used(index):
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used
