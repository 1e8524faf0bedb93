"""`--check`: compile the CUDA original with nvcc and the HIP translation with
hipcc for a wave64 (gfx90a) and a wave32 (gfx1030) target, with no GPU.

hipcc from Debian (HIP 5.2, clang 15) needs HIP_PLATFORM=amd (else it looks
for nvcc), -std=c++17 (rocPRIM needs it) and -include hip/hip_runtime.h (for
RawKernel-style sources that include nothing). -c, not -fsyntax-only: only code
generation rejects inline PTX. Library headers that are not packaged here
(hipCUB, hipBLAS, MIOpen, ...) make a target "not checkable here", not failed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

DEFAULT_TARGETS = ("gfx90a", "gfx1030")  # CDNA2 wave64, RDNA2 wave32
WAVE = {"gfx90a": 64, "gfx908": 64, "gfx906": 64, "gfx900": 64, "gfx940": 64, "gfx1030": 32,
        "gfx1010": 32}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.MULTILINE)
NOT_FOUND = re.compile(r"fatal error: '([^']+)' file not found")
# header prefix -> the package that provides it (none of them is in Debian)
LIBRARY_HEADERS = {
    "hipcub/": "hipCUB", "hipblas": "hipBLAS", "rocblas": "rocBLAS", "miopen/": "MIOpen",
    "hiprand/": "hipRAND", "rocrand/": "rocRAND", "hipsparse": "hipSPARSE",
    "rocsparse": "rocSPARSE", "hipfft": "hipFFT", "rocfft": "rocFFT", "thrust/": "rocThrust",
    "rocwmma/": "rocWMMA", "hipblaslt": "hipBLASLt", "nvtx3/roctracer": "roctracer (rocTX)",
    "roctracer/": "roctracer (rocTX)",
}
PACKAGE_TOKENS = {
    "hipCUB": ("hipcub::", "cub::"), "hipBLAS": ("hipblas",), "rocBLAS": ("rocblas",),
    "MIOpen": ("miopen",), "hipRAND": ("hiprand",), "rocRAND": ("rocrand",),
    "hipSPARSE": ("hipsparse",), "rocSPARSE": ("rocsparse",), "hipFFT": ("hipfft",),
    "rocFFT": ("rocfft",), "rocThrust": ("thrust::",), "rocWMMA": ("rocwmma",),
    "hipBLASLt": ("hipblasLt",),
}
TIMEOUT_S = 300


@dataclass(frozen=True)
class CompileFlags:
    """What a project's build passes to its compiler: include dirs, defines,
    the C++ standard and relocatable device code (nvcc -rdc / hipcc -fgpu-rdc)."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # NAME or NAME=VALUE
    std: str = "c++17"
    rdc: bool = False
    extra: tuple[str, ...] = ()  # passed as given (kernelcheck: -arch, -Xptxas -v, -Rpass-...)

    def common(self) -> list[str]:
        return [f"-std={self.std}", *(f"-I{d}" for d in self.include_dirs),
                *(f"-D{d}" for d in self.defines)]

    def nvcc_args(self) -> list[str]:
        return self.common() + (["-rdc=true"] if self.rdc else []) + list(self.extra)

    def hipcc_args(self) -> list[str]:
        return self.common() + (["-fgpu-rdc"] if self.rdc else []) + list(self.extra)

    def with_include_dirs(self, dirs: list[str] | tuple[str, ...]) -> CompileFlags:
        return CompileFlags(tuple(dirs), self.defines, self.std, self.rdc, self.extra)


@dataclass(frozen=True)
class TargetResult:
    target: str  # "nvcc" or a gfx arch
    status: str  # ok | failed | not-checkable | skipped
    detail: str = ""
    seconds: float = 0.0
    # the compiler's whole output, for callers that parse it (portagpu.kernelcheck)
    log: str = field(default="", repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        del data["log"]
        return data


def include_dirs(compiler: str) -> list[str]:
    roots = [os.environ.get("ROCM_PATH", ""), "/opt/rocm", "/usr"] if compiler == "hipcc" else [
        os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda", "/usr"]
    return [os.path.join(r, "include") for r in roots if r]


def missing_library_headers(text: str) -> list[str]:
    """'hipcub/hipcub.hpp (hipCUB)' for each library header the text includes and
    this machine lacks."""
    missing = []
    dirs = include_dirs("hipcc")
    for header in INCLUDE.findall(text):
        package = next((p for prefix, p in LIBRARY_HEADERS.items() if header.startswith(prefix)),
                       None)
        if package and not any(os.path.exists(os.path.join(d, header)) for d in dirs):
            missing.append(f"{header} ({package})")
    return missing


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return output.strip().splitlines()[-1][:300] if output.strip() else ""


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, float]:
    import time

    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {TIMEOUT_S} s", time.perf_counter() - start
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def compile_cuda(path: str, flags: CompileFlags = CompileFlags()) -> TargetResult:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return TargetResult("nvcc", "skipped", "nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="portagpu-check-") as tmp:
        rc, out, secs = _run([nvcc, "-c", *flags.nvcc_args(), "-x", "cu", path,
                              "-o", os.path.join(tmp, "out.o")])
    if rc == 0:
        return TargetResult("nvcc", "ok", "", secs, log=out)
    return TargetResult("nvcc", "failed", _first_error(out), secs, log=out)


def compile_hip(path: str, target: str, text: str | None = None,
                include_dirs: list[str] | tuple[str, ...] = (),
                flags: CompileFlags = CompileFlags()) -> TargetResult:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        return TargetResult(target, "skipped", "hipcc is not on PATH "
                            "(apt-get install -y --no-install-recommends hipcc)")
    if text is None:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    missing = missing_library_headers(text)
    if missing:
        # say precisely what blocks the check, then check everything else
        rest, dropped = strip_library_code(text, missing)
        detail = "not checkable here: needs " + ", ".join(missing)
        if not dropped and rest == text:
            return TargetResult(target, "not-checkable", detail)
        with tempfile.TemporaryDirectory(prefix="portagpu-check-") as tmp:
            rest_path = os.path.join(tmp, "rest.hip")
            with open(rest_path, "w", encoding="utf-8") as fh:
                fh.write(rest)
            part = compile_hip(rest_path, target, rest,
                               [os.path.dirname(os.path.abspath(path)), *include_dirs], flags)
        what = f"without {', '.join(dropped)}" if dropped else "without those includes"
        verdict = "compiles" if part.status == "ok" else f"fails: {part.detail}"
        return TargetResult(target, "not-checkable", f"{detail}; the rest ({what}) {verdict}",
                            part.seconds)
    env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory(prefix="portagpu-check-") as tmp:
        rc, out, secs = _run([hipcc, "-c", "-include", "hip/hip_runtime.h",
                              *[f"-I{d}" for d in include_dirs], *flags.hipcc_args(),
                              "-x", "hip", f"--offload-arch={target}", path,
                              "-o", os.path.join(tmp, "out.o")], env)
    if rc == 0:
        return TargetResult(target, "ok", f"wave{WAVE.get(target, '?')}", secs, log=out)
    header = NOT_FOUND.search(out)
    package = header and next((p for prefix, p in LIBRARY_HEADERS.items()
                               if header.group(1).startswith(prefix)), None)
    if header and package:
        return TargetResult(target, "not-checkable",
                            f"not checkable here: {header.group(1)} ({package}) is not installed",
                            secs, log=out)
    return TargetResult(target, "failed", _first_error(out), secs, log=out)


def strip_library_code(text: str, missing: list[str]) -> tuple[str, list[str]]:
    """The text without the missing headers' #includes and without the top-level
    definitions that use those libraries; and the names of what was dropped."""
    from portagpu.cuda.parser import parse, text_of

    packages = {m.rsplit("(", 1)[-1].rstrip(")") for m in missing}
    headers = {m.rsplit(" (", 1)[0] for m in missing}
    tokens = tuple(t for p in packages for t in PACKAGE_TOKENS.get(p, ()))
    data = text.encode("utf-8", "surrogatepass")
    cuts: list[tuple[int, int]] = []
    dropped: list[str] = []

    def visit(container) -> None:
        for node in container.named_children:
            if node.type == "preproc_include":
                path = node.child_by_field_name("path")
                if path is not None and text_of(path).strip('<>"') in headers:
                    cuts.append((node.start_byte, node.end_byte))
            elif node.type in ("linkage_specification", "namespace_definition"):
                body = node.child_by_field_name("body")
                if body is not None and body.type == "declaration_list":
                    visit(body)
                elif tokens and any(t in text_of(node) for t in tokens):
                    cuts.append((node.start_byte, node.end_byte))
                    dropped.append(_name_of(node))
            elif tokens and any(t in text_of(node) for t in tokens):
                cuts.append((node.start_byte, node.end_byte))
                dropped.append(_name_of(node))

    visit(parse(data).root_node)
    for start, end in sorted(cuts, reverse=True):
        data = data[:start] + data[end:]
    return data.decode("utf-8", "surrogatepass"), dropped


def _name_of(node) -> str:
    from portagpu.cuda.parser import text_of, walk

    for child in walk(node):
        if child.type == "function_declarator":
            name = child.child_by_field_name("declarator")
            return text_of(name) if name is not None else "a function"
    return " ".join(text_of(node).split())[:40]


def check_pair(cuda_path: str | None, hip_path: str, hip_text: str | None = None,
               targets: tuple[str, ...] = DEFAULT_TARGETS, jobs: int = 2,
               include_dirs: list[str] | tuple[str, ...] = (),
               cuda_flags: CompileFlags | None = None,
               hip_flags: CompileFlags | None = None) -> list[TargetResult]:
    """nvcc on the original (when given) and hipcc per target, run side by side.
    Without flags the original is compiled beside its own folder (include_dirs)."""
    cuda_flags = cuda_flags or CompileFlags(tuple(include_dirs))
    hip_flags = hip_flags or CompileFlags(tuple(include_dirs))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = []
        if cuda_path is not None:
            futures.append(pool.submit(compile_cuda, cuda_path, cuda_flags))
        futures += [pool.submit(compile_hip, hip_path, t, hip_text, (), hip_flags)
                    for t in targets]
        return [f.result() for f in futures]
