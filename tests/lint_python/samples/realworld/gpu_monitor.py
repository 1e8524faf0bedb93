"""GPU utilisation through nvidia-smi, in the style of small monitoring libraries (lint sample)."""

import os
import platform
import shutil
from subprocess import PIPE, Popen

__all__ = ["gpus", "pynvml"]


def gpus():
    if platform.system() == "Windows":
        smi = shutil.which("nvidia-smi") or os.path.join(
            os.environ["SystemDrive"], "nvidia-smi.exe"
        )
    else:
        smi = "nvidia-smi"
    try:
        query = [smi, "--query-gpu=index,utilization.gpu", "--format=csv,noheader"]
        proc = Popen(query, stdout=PIPE)  # expect: PG202
        out, _ = proc.communicate()
    except OSError:
        return []  # AMD GPUs end up here, unseen
    return [line.split(", ") for line in out.decode().splitlines()]


def pynvml():
    import GPUtil  # expect: PG201

    return GPUtil.getGPUs()
