"""A kernel specialisation: one Triton kernel with the argument types, constexprs
and launch options of one launch (or one autotune config), as plain JSON data.

Specialisations are made by Triton's own binder (the function `JITFunction.run`
uses to key its cache), run once per backend family because the AMD backend
specialises tensors a little differently (buffer-op pointer ranges). Nothing
here compiles; `portagpu.kernelcheck.worker` does, in another process.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import types
from dataclasses import asdict, dataclass, field, replace
from typing import Any

FAMILIES = ("cuda", "hip")  # Triton backends: NVIDIA, AMD
# Triton adds these to the options of every launch (JITFunction.run); they are
# not the caller's and are set again where the kernel is compiled.
RUNTIME_OPTIONS = ("debug", "instrumentation_mode", "fpsan_homomorphic_casts")
LAUNCH_ONLY = ("grid", "warmup", "stream")


LOCAL_KERNEL = (
    "defined inside a function: the compile process imports kernels by module and "
    "name; define it at module level to have it checked"
)


class SpecError(Exception):
    """A launch whose specialisation cannot be carried to the compiler process."""


@dataclass(frozen=True)
class KernelRef:
    """Where a kernel is defined, enough for another process to import it."""

    name: str  # qualified name in its module
    module: str
    file: str
    line: int

    @property
    def label(self) -> str:
        return f"{self.module}:{self.name}"

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class KernelSpec:
    """One kernel specialisation to compile for each target."""

    kernel: KernelRef
    source_hash: str
    params: tuple[str, ...]
    families: dict[str, list]  # family -> Triton specialisation [[type, key or constexpr], ...]
    options: dict[str, Any]  # num_warps, num_stages, vendor options, as the caller gave them
    warp_units: bool = False  # num_warps in 32-thread units (portagpu.launch scales per target)
    mode: str = "fixed"  # fixed | autotune
    config: str = ""  # autotune: "2/8" (index/count)
    group: str = ""  # autotune: shared by the configs of one launch
    origin: str = ""  # where it was seen first (a test id, "declared", a tuning row)
    assumed: str = ""  # what was assumed rather than known (declared-less argument types)
    problem: str = ""  # why it cannot be checked; empty when it can

    def identity(self) -> str:
        """Equal for equal specialisations, whatever origin they were seen at."""
        data = [
            self.kernel.label,
            self.kernel.file,
            self.source_hash,
            self.families,
            sorted(self.options.items()),
            self.warp_units,
            self.mode,
            self.group,
        ]
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[
            :24
        ]

    def constexprs(self) -> dict[str, Any]:
        spec = next(iter(self.families.values()), [])
        return {
            name: value
            for name, (kind, value) in zip(self.params, spec, strict=False)
            if kind == "constexpr"
        }

    def arg_types(self) -> dict[str, str]:
        spec = next(iter(self.families.values()), [])
        return {
            name: kind
            for name, (kind, _) in zip(self.params, spec, strict=False)
            if kind != "constexpr"
        }

    def label(self) -> str:
        """`BLOCK=1024 nw=4 ns=2 | *fp32` style: what tells specialisations apart."""
        short = {"num_warps": "nw", "num_stages": "ns"}
        parts = [f"{short[k]}={self.options[k]}" for k in short if self.options.get(k) is not None]
        if self.warp_units and self.options.get("num_warps") is not None:
            parts[0] += "x32"  # 32-thread units: portagpu.launch scales them per target
        constexprs = {
            k: v
            for k, v in self.constexprs().items()
            if not (isinstance(v, int) and v == 1 and k.islower())
        }
        # tile sizes first: what a reader compares between rows; then options, then the rest
        sizes = {k: v for k, v in constexprs.items() if type(v) is int and k.isupper()}
        parts += [f"{k}={v}" for k, v in sizes.items()]
        parts += [
            f"{k}={v}"
            for k, v in sorted(self.options.items())
            if v is not None and k not in short and not (k == "num_ctas" and v == 1)
        ]
        parts += [f"{k}={_show(v)}" for k, v in constexprs.items() if k not in sizes]
        pointers = sorted({t for t in self.arg_types().values() if t.startswith("*")})
        text = " ".join(parts)
        return f"{text} | {','.join(pointers)}" if pointers and text else ",".join(pointers) or text

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelSpec:
        data = dict(data)
        data["kernel"] = KernelRef(**data["kernel"])
        data["params"] = tuple(data["params"])
        return cls(**data)


def _show(value: Any) -> str:
    if isinstance(value, dict) and "dtype" in value:
        return str(value["dtype"])
    if isinstance(value, dict) and "jit" in value:
        return str(value["jit"][1])
    return repr(value) if isinstance(value, str) else str(value)


# --- kernels and their wrappers ------------------------------------------------------
def kernel_kind(obj: Any) -> str:
    return type(obj).__name__


def is_triton_kernel(obj: Any) -> bool:
    return kernel_kind(obj) in ("JITFunction", "InterpretedFunction", "Autotuner", "Heuristics")


def unwrap(kernel: Any) -> tuple[Any, Any | None, list[Any]]:
    """(base JIT/interpreted function, the Autotuner if any, Heuristics outermost first)."""
    autotuner, heuristics = None, []
    seen = 0
    while kernel_kind(kernel) not in ("JITFunction", "InterpretedFunction") and seen < 16:
        if kernel_kind(kernel) == "Autotuner" and autotuner is None:
            autotuner = kernel
        elif kernel_kind(kernel) == "Heuristics":
            heuristics.append(kernel)
        inner = getattr(kernel, "fn", None)
        if inner is None:
            raise SpecError(f"{kernel!r} wraps no Triton kernel")
        kernel, seen = inner, seen + 1
    return kernel, autotuner, heuristics


def kernel_ref(base: Any) -> KernelRef:
    fn = base.fn
    code = fn.__code__
    return KernelRef(
        name=fn.__qualname__, module=fn.__module__, file=code.co_filename, line=code.co_firstlineno
    )


def source_hash(base: Any) -> str:
    """sha256 of the kernel's source and of what it reads at compile time: the
    Triton functions it calls (recursively) and constant globals. The same for
    a JITFunction and for the interpreter's version of one kernel."""
    found = _SOURCE_HASHES.get(id(base.fn))
    if found is not None and found[0] is base.fn:
        return found[1]
    digest = hashlib.sha256()
    _hash_function(base.fn, digest, set())
    _SOURCE_HASHES[id(base.fn)] = (base.fn, digest.hexdigest())  # holding fn keeps its id unique
    return digest.hexdigest()


# id(python function) -> (function, hash): a process hashes each kernel's source once
_SOURCE_HASHES: dict[int, tuple[Any, str]] = {}


def _hash_function(fn: Any, digest: Any, seen: set[int]) -> None:
    if id(fn) in seen:
        return
    seen.add(id(fn))
    try:
        digest.update(inspect.getsource(fn).encode())
    except (OSError, TypeError):
        digest.update(fn.__code__.co_code)
    scope = dict(fn.__globals__)
    if fn.__closure__:
        scope.update(
            zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__), strict=False)
        )
    for name in sorted(_names(fn.__code__)):
        value = scope.get(name)
        if value is None or isinstance(value, types.ModuleType):
            continue
        if is_triton_kernel(value):
            try:
                inner, _, _ = unwrap(value)
            except SpecError:
                continue
            digest.update(name.encode())
            _hash_function(inner.fn, digest, seen)
        elif kernel_kind(value) == "constexpr" or isinstance(value, (bool, int, float, str)):
            digest.update(f"{name}={getattr(value, 'value', value)!r}".encode())


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


# --- constexpr values as JSON ------------------------------------------------------
def encode_value(value: Any) -> Any:
    """A constexpr value as JSON; SpecError for what another process cannot rebuild."""
    kind = kernel_kind(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if kind == "constexpr":
        return encode_value(value.value)
    if kind == "dtype" or (kind.endswith("_type") and hasattr(value, "name")):
        return {"dtype": str(value)}
    if kind in ("JITFunction", "InterpretedFunction"):
        return {"jit": [value.fn.__module__, value.fn.__qualname__]}
    if isinstance(value, (tuple, list)):
        return {"tuple": [encode_value(v) for v in value]}
    raise SpecError(
        f"a constexpr of type {type(value).__name__} ({value!r:.40}) cannot be "
        "sent to the compiler process"
    )


# --- Triton's binder, once per kernel and family ---------------------------------------
_BINDERS: dict[int, tuple[Any, dict[str, Any]]] = {}
_BACKENDS: dict[str, Any] = {}


def backend_class(family: str) -> Any | None:
    """Triton's backend class for a family, or None when this Triton lacks it."""
    if family not in _BACKENDS:
        try:
            if family == "hip":
                from triton.backends.amd.compiler import HIPBackend as cls
            else:
                from triton.backends.nvidia.compiler import CUDABackend as cls
        except ImportError:
            cls = None
        _BACKENDS[family] = cls
    return _BACKENDS[family]


def _binders(base: Any) -> tuple[Any, dict[str, Any]]:
    found = _BINDERS.get(id(base))
    if found is not None and found[0] is base:
        return found[1]
    from triton.runtime.jit import JITFunction, create_function_from_signature

    jit = base
    if kernel_kind(base) != "JITFunction":  # the interpreter's: make the compiler's twin
        options = getattr(base, "kwargs", {}) or {}
        keep = {
            k: options[k]
            for k in ("do_not_specialize", "do_not_specialize_on_alignment")
            if options.get(k)
        }
        jit = JITFunction(base.fn, **keep)
    binders = {}
    for family in FAMILIES:
        cls = backend_class(family)
        if cls is not None:
            binders[family] = create_function_from_signature(jit.signature, jit.params, cls)
    value = (jit, binders)
    _BINDERS[id(base)] = (base, value)  # holding base keeps its id from being reused
    return value


def specialise(
    base: Any, args: tuple, kwargs: dict[str, Any]
) -> tuple[tuple[str, ...], dict, dict]:
    """(parameter names, family -> JSON specialisation, leftover launch options)."""
    jit, binders = _binders(base)
    params = tuple(p.name for p in jit.params)
    families: dict[str, list] = {}
    options: dict[str, Any] = {}
    for family, binder in binders.items():
        try:
            _, specialization, options = binder(*args, **kwargs)
        except TypeError as exc:
            raise SpecError(
                f"the arguments do not bind to {jit.fn.__name__}{jit.signature}: {exc}"
            ) from None
        families[family] = [
            [kind, encode_value(value) if kind == "constexpr" else value]
            for kind, value in specialization
        ]
        for kind, value in families[family]:
            if not isinstance(kind, str) or (
                kind != "constexpr" and not (value is None or isinstance(value, str))
            ):
                raise SpecError(
                    f"an argument specialised as {kind!r} (tuples, descriptors) is "
                    "not supported by the compile check yet"
                )
    clean = {k: v for k, v in options.items() if k not in RUNTIME_OPTIONS and k not in LAUNCH_ONLY}
    return params, families, clean


def _apply_heuristics(heuristics: list[Any], args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    for wrapper in reversed(heuristics):  # innermost runs last, as Heuristics.run nests
        for name, rule in wrapper.values.items():
            kwargs[name] = rule({**dict(zip(wrapper.arg_names, args, strict=False)), **kwargs})
    return kwargs


def specs_of_call(
    kernel: Any, args: tuple, kwargs: dict[str, Any], *, warp_units: bool = False, origin: str = ""
) -> list[KernelSpec]:
    """The specialisations one launch would compile: one, or one per autotune config."""
    base, autotuner, heuristics = unwrap(kernel)
    ref = kernel_ref(base)
    digest = source_hash(base)
    kwargs = {k: v for k, v in kwargs.items() if k not in LAUNCH_ONLY}
    if autotuner is None:
        return [
            _one_spec(
                base,
                ref,
                digest,
                args,
                _apply_heuristics(heuristics, args, dict(kwargs)),
                warp_units=warp_units,
                origin=origin,
            )
        ]
    configs = list(autotuner.configs)
    specs = []
    for index, config in enumerate(configs):
        merged = _apply_heuristics(heuristics, args, {**kwargs, **config.all_kwargs()})
        specs.append(
            _one_spec(
                base,
                ref,
                digest,
                args,
                merged,
                warp_units=warp_units,
                origin=origin,
                mode="autotune",
                config=f"{index + 1}/{len(configs)}",
            )
        )
    # one group per autotuned launch shape: the kernel, its argument types, the caller's own keywords
    shape = [
        ref.label,
        digest,
        specs[0].arg_types() if specs else {},
        warp_units,
        sorted((k, _brief(v)) for k, v in kwargs.items()),
    ]
    group = hashlib.sha256(json.dumps(shape, default=str).encode()).hexdigest()[:16]
    return [replace(spec, group=group) for spec in specs]


def _brief(value: Any) -> str:
    return str(value.dtype) if hasattr(value, "data_ptr") else repr(value)[:60]


def _one_spec(
    base: Any,
    ref: KernelRef,
    digest: str,
    args: tuple,
    kwargs: dict[str, Any],
    *,
    warp_units: bool,
    origin: str,
    **extra: Any,
) -> KernelSpec:
    try:
        params, families, options = specialise(base, args, kwargs)
        problem = ""
    except SpecError as exc:
        params, families, options, problem = (), {}, {}, str(exc)
    if "<locals>" in ref.name and not problem:
        problem = LOCAL_KERNEL
    return KernelSpec(
        kernel=ref,
        source_hash=digest,
        params=params,
        families=families,
        options=options,
        warp_units=warp_units,
        origin=origin,
        problem=problem,
        **extra,
    )


def with_origin(spec: KernelSpec, origin: str) -> KernelSpec:
    return replace(spec, origin=origin)


@dataclass
class SpecSet:
    """Distinct specialisations in the order they were first seen."""

    specs: dict[str, KernelSpec] = field(default_factory=dict)

    def add(self, spec: KernelSpec) -> bool:
        key = spec.identity()
        if key in self.specs:
            return False
        self.specs[key] = spec
        return True

    def __iter__(self):
        return iter(self.specs.values())

    def __len__(self) -> int:
        return len(self.specs)
