# The NVIDIA side of a telemetry dispatch (its AMD sibling is amdsmi.py): a
# file named just for the vendor is that vendor's backend.
import pynvml


def used_bytes(index):
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used
