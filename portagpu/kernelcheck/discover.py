"""Find the kernels of files and modules and the specialisations to check for them,
without running anything: `portagpu check-kernels`.

A Triton kernel is checked when it states what to compile:
- `@portagpu.kernelcheck.signature(...)` declarations, or entries in
  `[tool.portagpu.kernels]` of pyproject.toml (same keys);
- `@triton.autotune` configs: every config, with the declared argument types,
  or, without a declaration, types inferred from the code: parameters used as
  pointers (tl.load/tl.store/... addresses) become `*<pointer dtype>` (fp16
  unless told otherwise), other runtime parameters i32 (fp32 for a float
  default). The report names what was assumed.
Kernels with neither are listed as not checked, with how to declare them.
CUDA C: every `__global__` of .cu/.cuh files, and module-level
`portagpu.CudaKernel` objects of Python files.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import pkgutil
import sys
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portagpu.errors import ConfigError
from portagpu.kernelcheck.cuda_check import CudaSpec, specs_from_cu_file
from portagpu.kernelcheck.declare import declarations
from portagpu.kernelcheck.spec import (
    FAMILIES,
    LOCAL_KERNEL,
    KernelSpec,
    SpecError,
    backend_class,
    encode_value,
    is_triton_kernel,
    kernel_ref,
    source_hash,
    unwrap,
)

POINTER_CALLS = (
    "load",
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_cas",
    "atomic_xchg",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "make_block_ptr",
    "make_tensor_descriptor",
    "prefetch",
)
CUDA_SUFFIXES = (".cu", ".cuh")
OPTION_NAMES = (
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "waves_per_eu",
    "matrix_instr_nonkdim",
    "kpack",
    "enable_fp_fusion",
    "launch_cooperative_grid",
    "launch_pdl",
)


@dataclass
class Found:
    specs: list[KernelSpec] = field(default_factory=list)
    cuda: list[CudaSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- building specs from declarations and configs ----------------------------------------------
def _additive(expr: ast.AST | None) -> set[str]:
    """Names added at the top of an address expression (`p + offs * s` -> {p, offs}):
    the pointer is among them; names under *, [], calls are offsets or strides."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _additive(expr.left) | _additive(expr.right)
    if isinstance(expr, ast.Name):
        return {expr.id}
    return set()


def pointer_params(fn: Any) -> set[str]:
    """Parameters the kernel body uses as addresses (directly or through assignments)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    params = set(inspect.signature(fn).parameters)
    names: set[str] = set()
    assigns: list[tuple[set[str], set[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in POINTER_CALLS:
                first = node.args[:1] or [
                    k.value for k in node.keywords if k.arg in ("pointer", "base")
                ]
                for arg in first:
                    names |= _additive(arg)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            assigns.append(({node.targets[0].id}, _additive(node.value)))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            assigns.append(({node.target.id}, _additive(node.value)))
    changed = True
    while changed:  # a = x_ptr + offs; tl.load(a) makes x_ptr a pointer
        changed = False
        for lhs, rhs in assigns:
            if lhs & names and not rhs <= names:
                names |= rhs
                changed = True
    return names & params


def _hip_pointer_key() -> str:
    """What Triton's AMD backend adds to an aligned tensor under 2 GiB: 'S' with buffer ops."""
    try:
        from triton import knobs

        return "DS" if knobs.amd.use_buffer_ops else "D"
    except Exception:  # noqa: BLE001 - an older Triton
        return "D"


def spec_from_declaration(
    kernel: Any,
    declared: dict[str, Any],
    *,
    origin: str,
    pointer_dtype: str = "fp16",
    config: Any = None,
    config_label: str = "",
) -> KernelSpec:
    """One spec from declared types/values, plus an autotune config's values if given."""
    base, _, heuristics = unwrap(kernel)
    from portagpu.kernelcheck.spec import _binders

    jit, _ = _binders(base)
    params = [p for p in jit.params]
    values = dict(declared)
    if config is not None:
        values.update(config.all_kwargs())
    assumed: list[str] = []
    pointers = None
    runtime_values: dict[str, Any] = {}
    types: dict[str, str] = {}
    problem = ""
    for p in params:
        if p.is_constexpr:
            continue
        given = values.get(p.name)
        if isinstance(given, str):
            types[p.name] = given
        elif isinstance(given, bool):
            types[p.name], runtime_values[p.name] = "u1", given
        elif isinstance(given, int):
            types[p.name], runtime_values[p.name] = (
                ("i32" if -(2**31) <= given < 2**31 else "i64"),
                given,
            )
        elif isinstance(given, float):
            types[p.name], runtime_values[p.name] = "fp32", given
        else:
            if pointers is None:
                pointers = pointer_params(base.fn)
            default = p.default if p.has_default else None
            types[p.name] = (
                f"*{pointer_dtype}"
                if p.name in pointers
                else "fp32"
                if isinstance(default, float)
                else "i32"
            )
            assumed.append(f"{p.name}:{types[p.name]}")
    for wrapper in reversed(heuristics):
        for name, rule in wrapper.values.items():
            try:
                values[name] = rule({**runtime_values, **values})
            except Exception as exc:  # noqa: BLE001
                problem = (
                    f"heuristic for {name} needs argument values ({type(exc).__name__}: {exc}); "
                    "declare them with values, e.g. n_cols=4096"
                )
    families: dict[str, list] = {}
    try:
        for family in FAMILIES:
            if backend_class(family) is None:
                continue
            pointer_key = _hip_pointer_key() if family == "hip" else "D"
            entries = []
            for p in params:
                if p.is_constexpr:
                    if p.name in values:
                        entries.append(["constexpr", encode_value(values[p.name])])
                    elif p.has_default:
                        entries.append(["constexpr", encode_value(p.default)])
                    else:
                        raise SpecError(
                            f"constexpr {p.name} has no value: declare it, e.g. {p.name}=..."
                        )
                elif type(runtime_values.get(p.name)) is int and runtime_values[p.name] == 1:
                    entries.append(["constexpr", 1])  # as Triton specialises an int argument of 1
                else:
                    kind, value = types[p.name], runtime_values.get(p.name)
                    if kind.startswith("*"):
                        key = pointer_key
                    elif kind[0] in "iu" and kind != "u1":  # Triton's divisibility-by-16 mark
                        key = "D" if type(value) is int and value % 16 == 0 else ""
                    else:
                        key = None
                    entries.append([kind, key])
            families[family] = entries
    except SpecError as exc:
        problem, families = problem or str(exc), {}
    options = {k: v for k, v in values.items() if k not in {p.name for p in params}}
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown and not problem:
        problem = f"unknown declaration key(s) {', '.join(unknown)}: not a parameter of {base.fn.__name__} or a launch option"
    return KernelSpec(
        kernel=kernel_ref(base),
        source_hash=source_hash(base),
        params=tuple(p.name for p in params),
        families=families,
        options=options,
        mode="autotune" if config is not None else "fixed",
        config=config_label,
        group=f"{kernel_ref(base).label}#{origin}" if config is not None else "",
        origin=origin,
        problem=problem,
        assumed=("argument types assumed: " + ", ".join(assumed)) if assumed else "",
    )


def specs_for_kernel(
    kernel: Any,
    extra: Sequence[dict[str, Any]] = (),
    *,
    pointer_dtype: str = "fp16",
    origin: str = "declared",
) -> tuple[list[KernelSpec], str]:
    """(specs, note when the kernel states nothing to check)."""
    base, autotuner, _ = unwrap(kernel)
    declared = declarations(kernel) + list(extra)
    ref = kernel_ref(base)
    if "<locals>" in ref.name:
        return [], f"{ref.label}: {LOCAL_KERNEL}"
    specs = []
    if autotuner is not None:
        for number, decl in enumerate(declared or [{}], start=1):
            where = origin if len(declared) <= 1 else f"{origin} #{number}"
            configs = list(autotuner.configs)
            for index, config in enumerate(configs):
                specs.append(
                    spec_from_declaration(
                        kernel,
                        decl,
                        origin=where,
                        pointer_dtype=pointer_dtype,
                        config=config,
                        config_label=f"{index + 1}/{len(configs)}",
                    )
                )
        return specs, ""
    if not declared:
        return [], (
            f"{ref.label} ({_rel(ref.file)}:{ref.line}): no @triton.autotune configs and no "
            "declared signature: not checked (add @portagpu.kernelcheck.signature(...) or a "
            "[tool.portagpu.kernels] entry)"
        )
    for number, decl in enumerate(declared, start=1):
        where = origin if len(declared) == 1 else f"{origin} #{number}"
        specs.append(spec_from_declaration(kernel, decl, origin=where, pointer_dtype=pointer_dtype))
    return specs, ""


# --- finding kernels ------------------------------------------------------------------------
def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _module_name_for(path: Path) -> tuple[str, Path]:
    """(dotted name, folder to put on sys.path) for a .py file, honouring packages."""
    path = path.resolve()
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts), folder


def load_path(path: Path) -> Any:
    """Import a .py file: by its package name where it is in one, else by path."""
    name, root = _module_name_for(path)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    where = _rel(str(path))
    try:
        module = importlib.import_module(name)
        if Path(getattr(module, "__file__", "") or "").resolve() == path.resolve():
            return module
    except ModuleNotFoundError as exc:
        if not (exc.name and (name == exc.name or name.startswith(exc.name + "."))):
            raise ConfigError(f"{where}: importing it failed: {exc}") from None
    except SyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: not valid Python: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module raised while importing
        raise ConfigError(f"{where}: importing it raised {type(exc).__name__}: {exc}") from None
    spec = importlib.util.spec_from_file_location(f"_portagpu_check_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{where}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ConfigError(f"{where}:{exc.lineno}: not valid Python: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"{where}: importing it raised {type(exc).__name__}: {exc}") from None
    return module


def _modules_of(target: str) -> list[Any]:
    path = Path(target)
    if path.is_dir():
        return [
            load_path(p)
            for p in sorted(path.rglob("*.py"))
            if not any(part.startswith(".") or part == "__pycache__" for part in p.parts)
        ]
    if path.suffix == ".py":
        if not path.is_file():
            raise ConfigError(f"{target}: no such file")
        return [load_path(path)]
    try:
        module = importlib.import_module(target)
    except ImportError as exc:
        raise ConfigError(f"{target}: not a file, folder or importable module ({exc})") from None
    modules = [module]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
            try:
                modules.append(importlib.import_module(info.name))
            except Exception as exc:  # noqa: BLE001 - report, keep going
                raise ConfigError(
                    f"{info.name}: importing it raised {type(exc).__name__}: {exc}"
                ) from None
    return modules


def _pyproject_entries(
    table: dict[str, Any], kernel: Any, root: Path | None
) -> list[dict[str, Any]]:
    if not table:
        return []
    base, _, _ = unwrap(kernel)
    ref = kernel_ref(base)
    names = {ref.label, f"{ref.module}:{ref.short}"}
    if root is not None:
        try:
            rel = Path(ref.file).resolve().relative_to(root.resolve()).as_posix()
            names |= {f"{rel}:{ref.name}", f"{rel}:{ref.short}"}
        except ValueError:
            pass
    entries: list[dict[str, Any]] = []
    for key, value in table.items():
        if key in names:
            entries += value if isinstance(value, list) else [value]
    return entries


def discover(
    targets: Iterable[str],
    *,
    pointer_dtype: str = "fp16",
    kernels_table: dict[str, Any] | None = None,
    table_root: Path | None = None,
) -> Found:
    found = Found()
    seen: set[int] = set()
    for target in targets:
        if target.endswith(CUDA_SUFFIXES):
            if not Path(target).is_file():
                raise ConfigError(f"{target}: no such file")
            found.cuda += specs_from_cu_file(target)
            continue
        for module in _modules_of(target):
            for _, value in sorted(vars(module).items()):
                if is_triton_kernel(value) and id(value) not in seen:
                    try:
                        base, _, _ = unwrap(value)
                    except SpecError:
                        continue
                    if base.fn.__module__ != module.__name__:
                        continue  # imported from elsewhere: checked where it is defined
                    seen.add(id(value))
                    extra = _pyproject_entries(kernels_table or {}, value, table_root)
                    specs, note = specs_for_kernel(value, extra, pointer_dtype=pointer_dtype)
                    found.specs += specs
                    if note:
                        found.notes.append(note)
                elif type(value).__name__ == "CudaKernel" and id(value) not in seen:
                    seen.add(id(value))
                    found.cuda.append(
                        CudaSpec(
                            name=value.name,
                            source=value.source,
                            options=tuple(value.options),
                            file=getattr(module, "__file__", "<module>") or "<module>",
                            line=1,
                            origin="module-level CudaKernel",
                        )
                    )
    return found


def check_kernels(kernels: Iterable[Any], targets: Any = None, **options: Any) -> Any:
    """Check Triton kernel objects (declared or autotuned) for targets; returns a Report."""
    from portagpu.kernelcheck.cache import CompileCache
    from portagpu.kernelcheck.check import check_specs
    from portagpu.kernelcheck.targets import DEFAULT_TARGETS, parse_targets

    chosen = parse_targets(targets or list(DEFAULT_TARGETS))
    specs, notes = [], []
    for kernel in kernels:
        made, note = specs_for_kernel(kernel, pointer_dtype=options.pop("pointer_dtype", "fp16"))
        specs += made
        notes += [note] if note else []
    cache = options.pop("cache", None)
    report = check_specs(
        specs, list(chosen), cache=cache if cache is not None else CompileCache(), **options
    )
    report.notes += notes
    return report
