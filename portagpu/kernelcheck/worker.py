"""Compile kernel specialisations with Triton's own backends, in a process of its own.

    python -m portagpu.kernelcheck.worker JOBS.json RESULTS.jsonl

Why a separate process: the session that recorded the launches may run Triton's
interpreter (then every @triton.jit function, tl.sum included, is an interpreted
one the compiler cannot use); LLVM prints its diagnostics on file descriptor 2
and can abort the process; and a compile cannot be interrupted. The parent
starts this with TRITON_INTERPRET=0 in the child's environment only.

Each job's result is one JSON line, written and flushed as soon as it is known,
preceded by a "start" line: if this process dies, the parent knows which job
killed it. Nothing is pickled.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

# Errors Triton's autotuner catches while benchmarking (the config is then skipped):
# triton/runtime/autotuner.py, Autotuner._bench.
DROPPED_BY_AUTOTUNE = ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError")
_AMD_FIELDS = {
    "vgpr": r"\.vgpr_count:\s+(\d+)",
    "sgpr": r"\.sgpr_count:\s+(\d+)",
    "agpr": r"\.agpr_count:\s+(\d+)",
    "vgpr_spill": r"\.vgpr_spill_count:\s+(\d+)",
    "sgpr_spill": r"\.sgpr_spill_count:\s+(\d+)",
    "scratch": r"\.private_segment_fixed_size:\s+(\d+)",
    "occupancy": r";\s*Occupancy:\s+(\d+)",
}
_CUOBJDUMP = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
_ERROR_LINE = re.compile(r"\berror:")


class NotCheckable(Exception):
    """The kernel cannot be found or rebuilt here (not the kernel's fault)."""


# --- finding the kernel ----------------------------------------------------------------
_MODULES: dict[tuple[str, str], Any] = {}


def _same_file(a: str | None, b: str) -> bool:
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


def load_module(module: str, file: str) -> Any:
    key = (module, file)
    if key in _MODULES:
        return _MODULES[key]
    found = None
    if module and module != "__main__":
        try:
            found = importlib.import_module(module)
        except Exception:  # noqa: BLE001 - fall back to loading the file itself
            found = None
        if found is not None and not _same_file(getattr(found, "__file__", None), file):
            found = None
    if found is None:
        if not os.path.isfile(file):
            raise NotCheckable(f"cannot import {module!r}: {file} is not a file")
        name = "_portagpu_kernelcheck_" + hashlib.sha256(file.encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, file)
        if spec is None or spec.loader is None:
            raise NotCheckable(f"cannot load {file}")
        found = importlib.util.module_from_spec(spec)
        sys.modules[name] = found
        try:
            spec.loader.exec_module(found)
        except Exception as exc:  # noqa: BLE001 - the user's module failed to import
            del sys.modules[name]
            raise NotCheckable(f"importing {file} failed: {type(exc).__name__}: {exc}") from None
    _MODULES[key] = found
    return found


def locate(kernel: dict[str, Any]) -> Any:
    """The JITFunction of `kernel` (module, file, qualified name, line). A kernel made
    by calling triton.jit(fn) is found under whatever name holds it in the module."""
    from portagpu.kernelcheck.spec import SpecError, is_triton_kernel, unwrap

    module = load_module(kernel["module"], kernel["file"])
    obj: Any = module
    for part in kernel["name"].split("."):
        obj = getattr(obj, part, None)
    candidates = [obj] if obj is not None and is_triton_kernel(obj) else []
    candidates += [value for value in vars(module).values() if is_triton_kernel(value)]
    for candidate in candidates:
        try:
            base, _, _ = unwrap(candidate)
        except SpecError:
            continue
        fn = getattr(base, "fn", None)
        if (
            fn is not None
            and fn.__qualname__ == kernel["name"]
            and (kernel.get("line") in (None, fn.__code__.co_firstlineno))
        ):
            if type(base).__name__ != "JITFunction":
                raise NotCheckable(
                    f"{kernel['name']} is a {type(base).__name__} here, not a JITFunction "
                    "(is TRITON_INTERPRET set for the compile process?)"
                )
            return base
    raise NotCheckable(f"{kernel['file']} has no Triton kernel {kernel['name']}")


def decode_value(value: Any) -> Any:
    if isinstance(value, dict):
        if "dtype" in value:
            import triton.language as tl

            name = value["dtype"]
            return tl.str_to_ty(name, None)
        if "jit" in value:
            module, name = value["jit"]
            obj = importlib.import_module(module)
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        if "tuple" in value:
            return tuple(decode_value(v) for v in value["tuple"])
    return value


# --- compiling -------------------------------------------------------------------------
@contextlib.contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """What the compiler writes to fds 1 and 2 (LLVM and MLIR diagnostics), as lines."""
    lines: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", "replace").splitlines())


def _first_error(lines: list[str]) -> str:
    for line in lines:
        if _ERROR_LINE.search(line):
            return line.strip()[:400]
    return ""


def _error_text(exc: BaseException, diagnostics: list[str]) -> str:
    kind = type(exc).__name__
    message = str(exc).strip()
    if kind == "CompilationError" or kind in DROPPED_BY_AUTOTUNE or hasattr(exc, "error_message"):
        detail = getattr(exc, "error_message", None) or message.splitlines()[-1:] or [""]
        detail = detail if isinstance(detail, str) else detail[0]
        node = getattr(exc, "node", None)
        where = f" (kernel line {node.lineno})" if getattr(node, "lineno", None) else ""
        return f"{kind}{where}: {detail.strip()[:400]}"
    best = _first_error(diagnostics)
    first = message.splitlines()[0][:300] if message else kind
    return f"{kind}: {best}" if best and best not in first else f"{kind}: {first}"


def compile_job(job: dict[str, Any]) -> dict[str, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend

    start = time.perf_counter()
    facts: dict[str, Any] = {"triton": triton.__version__}
    try:
        fn = locate(job["kernel"])
    except NotCheckable as exc:
        return {**facts, "not_checkable": str(exc)}
    target = job["target"]
    gpu = GPUTarget(target["backend"], target["arch"], target["warp"])
    backend = make_backend(gpu)
    spec, params = job["spec"], job["params"]
    signature = {name: kind for name, (kind, _) in zip(params, spec, strict=True)}
    constexprs = {
        (i,): decode_value(value) for i, (kind, value) in enumerate(spec) if kind == "constexpr"
    }
    attrs = {
        (i,): backend.parse_attr(value)
        for i, (kind, value) in enumerate(spec)
        if kind != "constexpr" and isinstance(value, str)
    }
    options = {k: v for k, v in job["options"].items() if v is not None}
    from triton import knobs

    launch = {
        **options,
        "debug": bool(getattr(fn, "debug", False)) or knobs.runtime.debug,
        "instrumentation_mode": knobs.compilation.instrumentation_mode,
    }
    parsed = backend.parse_options(launch)
    unknown = sorted(k for k in options if k not in parsed.__dict__)
    if unknown:  # what JITFunction._pack_args raises at launch
        return {
            **facts,
            "compiled": False,
            "error_type": "KeyError",
            "droppable": False,
            "error": f"KeyError: launch option(s) {', '.join(unknown)} unknown to Triton's "
            f"{target['backend']} backend: the launch raises",
            "seconds": time.perf_counter() - start,
        }
    source = ASTSource(fn, signature, constexprs, attrs)
    diagnostics: list[str] = []
    try:
        with captured_stderr() as diagnostics:
            compiled = triton.compile(source, target=gpu, options=parsed.__dict__)
    except Exception as exc:  # noqa: BLE001 - any compiler error is the result
        text = _error_text(exc, diagnostics)
        return {
            **facts,
            "compiled": False,
            "error_type": type(exc).__name__,
            "droppable": type(exc).__name__ in DROPPED_BY_AUTOTUNE,
            "error": text,
            "unsupported_target": "unsupported target" in "\n".join(diagnostics) + text,
            "diagnostics": [line for line in diagnostics if _ERROR_LINE.search(line)][:8],
            "seconds": time.perf_counter() - start,
        }
    metadata = compiled.metadata
    facts.update(
        compiled=True,
        num_warps=int(metadata.num_warps),
        warp_size=int(metadata.warp_size),
        shared=int(metadata.shared),
    )
    error = _first_error(diagnostics)
    if error:  # LLVM reported an error yet Triton returned a binary (seen with inline asm on AMD)
        facts.update(
            compiled=False,
            error_type="CompilerDiagnostic",
            droppable=False,
            error=f"the compiler reported an error and Triton returned a binary anyway: {error}",
        )
    facts.update(
        _amd_resources(compiled.asm.get("amdgcn", ""))
        if target["backend"] == "hip"
        else _nvidia_resources(compiled.asm.get("cubin"))
    )
    facts["seconds"] = time.perf_counter() - start
    return facts


def _amd_resources(amdgcn: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, pattern in _AMD_FIELDS.items():
        match = re.search(pattern, amdgcn)
        if match:
            found[key] = int(match.group(1))
    return {
        "registers": {k: found[k] for k in ("vgpr", "agpr", "sgpr") if k in found},
        "spills": found.get("vgpr_spill", 0) + found.get("sgpr_spill", 0) if found else None,
        "scratch": found.get("scratch"),
        "occupancy": found.get("occupancy"),
        "resources_from": "amdgcn metadata" if found else "not reported",
    }


def _nvidia_resources(cubin: bytes | None) -> dict[str, Any]:
    """Registers and local memory from the cubin, as Triton's driver would read them
    on a GPU (n_spills = local bytes / 4), via the cuobjdump in Triton's wheel."""
    if not cubin:
        return {"resources_from": "not reported (no cubin)"}
    from triton import knobs

    try:
        tool = knobs.nvidia.cuobjdump.path
    except Exception:  # noqa: BLE001 - an older Triton without the knob
        tool = None
    if not tool or not os.path.exists(tool):
        return {"resources_from": "not reported (cuobjdump not found)"}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as handle:
        handle.write(cubin)
        handle.flush()
        proc = subprocess.run(
            [tool, "--dump-resource-usage", handle.name],
            capture_output=True,
            text=True,
            timeout=120,
        )
    match = _CUOBJDUMP.search(proc.stdout)
    if not match:
        return {"resources_from": "not reported (cuobjdump gave no resource usage)"}
    regs, stack, _static_shared, local = (int(g) for g in match.groups())
    return {
        "registers": {"regs": regs},
        "spills": local // 4,
        "scratch": local,
        "stack": stack,
        "occupancy": None,
        "resources_from": "cubin (cuobjdump)",
    }


# --- the process -----------------------------------------------------------------------
def main(argv: list[str]) -> int:
    jobs_path, results_path = argv
    with open(jobs_path, encoding="utf-8") as fh:
        work = json.load(fh)
    for path in reversed(work.get("sys_path", [])):
        if path not in sys.path:
            sys.path.insert(0, path)
    with open(results_path, "a", encoding="utf-8") as out:
        for job in work["jobs"]:
            out.write(json.dumps({"id": job["id"], "event": "start"}) + "\n")
            out.flush()
            try:
                facts = compile_job(job)
            except Exception as exc:  # noqa: BLE001 - a bug here must not lose the other jobs
                facts = {"not_checkable": f"the compile check failed: {type(exc).__name__}: {exc}"}
            out.write(json.dumps({"id": job["id"], "event": "done", "facts": facts}) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
