"""What a file's place says about vendors: a module in a vendor's folder or
named for one side of a dispatch (nvml.py, cuda_backend.py, gpu_nvidia.py
beside gpu_amd.py) is that vendor's path, and a CUDA source whose twin sits
in an AMD-named sibling folder is the CUDA half of a per-vendor pair. Asked by
the Python guards (a path's cover) and by the CUDA analysis alike."""

from __future__ import annotations

import os
import re

from portagpu.lint.vendor_names import (
    EVERY,
    NON_CUDA,
    NONE,
    NVIDIA_ARCH,
    amd_words,
    name_words,
    names_nvidia,
    other_side_words,
    word_cover,
)


def _project_relative(path: str) -> str:
    """Only directories inside the project count: a checkout living under
    /home/me/hip/ must not make every file a HIP backend. Paths outside the
    working directory keep their last three directories (torch/cuda/x.py)."""
    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive on Windows
            relative = ".."
        if not relative.startswith(".."):
            return relative
        return os.path.join(*re.split(r"[\\/]", path)[-4:])
    return path


# Words that, beside a vendor word, name one side of a dispatch by device
# (cuda_backend.py, impl_rocm.py); any other word makes a vendor-named file a
# topic (ptx_assembly.py, cuda_kernels.py, nvidia_demo.py), not a backend
_DISPATCH_ROLES = frozenset(
    (
        "backend",
        "backends",
        "impl",
        "implementation",
        "interface",
        "device",
        "accelerator",
        "platform",
        "runtime",
        "driver",
        "provider",
        "dispatch",
        "specific",
        "only",
        "native",
        "ext",
        "extension",
        "smi",
    )
)


def _dispatch_stem_cover(stem: str) -> frozenset[str]:
    """Cover of a file named for a vendor: one NVIDIA architecture's variant
    (gemm_sm90.py) or a vendor's side of a dispatch (nvml.py, cuda_backend.py)."""
    if NVIDIA_ARCH.search(stem.lower()):
        return EVERY
    cover = word_cover(stem)
    if not cover or amd_words(name_words(stem)):
        return cover  # an AMD file (hip_kernels.py) is the port itself
    vendor = [w for w in name_words(stem) if word_cover(w)]
    rest = [w for w in name_words(stem) if not word_cover(w)]
    return cover if vendor and all(w in _DISPATCH_ROLES for w in rest) else NONE


def path_cover(path: str) -> frozenset[str]:
    """A module inside a vendor-named package is that vendor's backend (every
    target): an AMD- or Apple-named one always, an NVIDIA-named one (cuda/,
    nvidia/) beside another side's file or folder; a file named for a vendor's side of a dispatch (nvml.py,
    cuda_backend.py, gemm_sm90.py) covers like a vendor name. A file named
    just `cuda` (cuda.py, _cuda.py) is a dispatch side only beside another
    device's file or folder (rocm.py, cpu.py, mps/): a utils/cuda.py among
    checkpoint and logging helpers is a module about CUDA, checked as such."""
    stem = os.path.basename(path).rsplit(".", 1)[0]
    for part, where in _folders(path):
        # only a directory named just for a vendor (not "cuda-projects/"): an AMD
        # or Apple one is that side; an NVIDIA one only beside another side
        # (torch/cuda/ beside mps/, triton/backends/nvidia/ beside amd/): a
        # mylib/cuda/ with no counterpart is the project's only path, checked as such
        if len(name_words(part)) == 1 and word_cover(part):
            if not names_nvidia(part) or sibling_has_other_side(where):
                return EVERY  # torch/cuda/, triton/backends/nvidia/, codegen/rocm/
    cover = _dispatch_stem_cover(stem)
    if (
        not cover
        and any(names_nvidia(w) for w in name_words(stem))
        and _holds_twin(
            os.path.dirname(os.path.abspath(path)), os.path.basename(path), amd_named=True
        )
    ):
        return EVERY  # gpu_nvidia.py beside gpu_amd.py: one side of a per-vendor module pair
    # (an NVIDIA tool's name, nvml.py, says the module wraps that tool: kept)
    if (
        cover == NON_CUDA
        and all(word_cover(w) for w in name_words(stem))
        and not sibling_has_other_side(path)
    ):
        return NONE
    return cover


def _folders(path: str) -> list[tuple[str, str]]:
    """(name, path on disk) of each project folder `path` lies in, outermost first."""
    parts = re.split(r"[\\/]", _project_relative(path))[:-1]
    folder = os.path.dirname(os.path.abspath(path))
    out = []
    for part in reversed(parts):
        out.append((part, folder))
        folder = os.path.dirname(folder)
    return out[::-1]


def cuda_side_of_vendor_folders(path: str) -> bool:
    """A source inside a folder named for NVIDIA (`backends/gpu/cuda/`) whose
    AMD-named sibling folder (`backends/gpu/rocm/`) holds its twin (the same
    place and name, vendor words aside: cuda_device_function.h beside
    rocm_device_function.h): the CUDA half of a per-vendor pair the build
    picks from, never compiled for AMD. A folder of CUDA kernels next to a
    few AMD-only files (hipified for AMD at build time) is not a pair."""
    folders = _folders(path)
    for at, (part, where) in enumerate(folders):
        if len(name_words(part)) != 1 or not names_nvidia(part):
            continue
        parent = os.path.dirname(where)
        below = [name for name, _ in folders[at + 1 :]]  # the path under this folder
        try:
            siblings = [n for n in os.listdir(parent) if n != part and amd_words(name_words(n))]
        except OSError:
            return False
        if any(
            _holds_twin(os.path.join(parent, s, *below), os.path.basename(path)) for s in siblings
        ):
            return True
    return False


def _holds_twin(folder: str, name: str, *, amd_named: bool = False) -> bool:
    """`folder` holds a file other than `name` itself named as `name` is once
    vendor words are dropped (with an AMD word in its name, if `amd_named`:
    gpu_amd.py for gpu_nvidia.py)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    own = _neutral_stem(name)
    for other in names:
        if _neutral_stem(other) != own:
            continue
        if amd_named and (other == name or not amd_words(name_words(other.split(".", 1)[0]))):
            continue
        return True
    return False


def _neutral_stem(name: str) -> tuple[str, ...]:
    stem = name.split(".", 1)[0]
    return tuple(w for w in name_words(stem) if not (names_nvidia(w) or amd_words([w])))


def sibling_has_other_side(path: str) -> bool:
    """Whether a file or folder beside `path` names another side of a
    dispatch (words its own name shares do not count). A folder that cannot
    be listed (code linted from a string) counts as having one, as before
    this check existed."""
    try:
        # listed each time (asked only of files and classes named just for CUDA):
        # a cache would go stale in a process that lints a changing tree
        names = os.listdir(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return True
    own = set(name_words(os.path.basename(path).rsplit(".", 1)[0]))
    return any(other_side_words(set(name_words(name.rsplit(".", 1)[0])) - own) for name in names)
