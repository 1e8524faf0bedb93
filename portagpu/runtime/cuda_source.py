"""CUDA C source kernels: `CudaKernel`, `CudaModule`.

NVIDIA compiles with CuPy (NVRTC); AMD translates with hipify_bridge and
compiles with CuPy on ROCm (hiprtc) -- both through the backend's
`compile_cuda` hook. Backends with no CUDA compiler (MPS, CPU) run the
kernel's registered `reference` function instead.

Arguments are checked before launch (count, device, contiguity, grid and block
limits) and Python scalars are converted to the C type the kernel's own
signature declares (a Python float for a `float` parameter becomes float32,
not the float64 CuPy would pass).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from portagpu.errors import LaunchError

DEFAULT_BLOCK = (256, 1, 1)
BLOCK_LIMITS = (1024, 1024, 64)
MAX_BLOCK_THREADS = 1024
GRID_LIMITS = (2**31 - 1, 65535, 65535)
MAX_PATTERNS = 4  # argument-type patterns with generated launch code, per kernel
_MISSING = object()

# (sha1 of source, options, backend, device index) -> compiled CuPy RawModule
_COMPILED: dict[tuple[str, tuple[str, ...], str, int], Any] = {}
_DIMS: dict[tuple[Any, Any], tuple[tuple[int, int, int], tuple[int, int, int]]] = {}


# --- compiling ----------------------------------------------------------------
def compiled_module(source: str, options: tuple[str, ...], device: Any) -> Any:
    """The compiled module for `device`, cached per (source, options, device)."""
    from portagpu.backends import backend_for

    key = (hashlib.sha1(source.encode()).hexdigest(), options, device.backend, device.index)
    module = _COMPILED.get(key)
    if module is None:
        module = backend_for(device).compile_cuda(source, options=options, device=device)
        _COMPILED[key] = module
    return module


# --- kernel signatures -----------------------------------------------------------
_GLOBAL_RE = r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+{name}\s*\(([^)]*)\)"


def _regex_signature(source: str, name: str) -> list[Any]:
    """Fallback when tree-sitter is not installed: a plain `__global__ void f(...)`."""
    from portagpu.cuda.signature import Param

    match = re.search(_GLOBAL_RE.format(name=re.escape(name)), source)
    if match is None:
        raise LaunchError(f"kernel {name!r} is not defined in the CUDA source")
    params = []
    for position, text in enumerate(p.strip() for p in match.group(1).split(",")):
        if not text or text == "void":
            continue
        ident = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?$", text)
        pname = ident.group(1) if ident else f"arg{position}"
        ctype = text[: ident.start()].strip() if ident else text
        pointer = "*" in ctype or bool(ident and ident.group(2))
        base = " ".join(w for w in ctype.replace("*", " ").split() if w not in ("const", "__restrict__"))
        params.append(Param(pname, ctype, pointer, base))
    return params


def kernel_params(source: str, name: str) -> list[Any]:
    try:
        from portagpu.cuda import kernel_signature
    except ImportError:
        return _regex_signature(source, name)
    try:
        return kernel_signature(source, name)
    except ImportError:  # tree_sitter missing on this host
        return _regex_signature(source, name)
    except LookupError as exc:
        raise LaunchError(str(exc)) from None


# --- grid and block ---------------------------------------------------------------
def _dims(value: Any, what: str, limits: tuple[int, int, int]) -> tuple[int, int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        dims: tuple = (value,)
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        dims = tuple(value)
    else:
        raise LaunchError(f"{what} must be an int or a tuple of 1-3 ints, got {value!r}")
    for axis, (size, limit) in enumerate(zip(dims, limits, strict=False)):
        if isinstance(size, bool) or not isinstance(size, int):
            raise LaunchError(f"{what}[{axis}] must be an int, got {size!r}")
        if not 1 <= size <= limit:
            raise LaunchError(f"{what}[{axis}] = {size} is out of range 1..{limit}")
    return (*dims, 1, 1)[:3]  # type: ignore[return-value]


def launch_dims(grid: Any, block: Any) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    try:
        return _DIMS[(grid, block)]
    except (KeyError, TypeError):
        pass
    g = _dims(grid, "grid", GRID_LIMITS)
    b = DEFAULT_BLOCK if block is None else _dims(block, "block", BLOCK_LIMITS)
    if b[0] * b[1] * b[2] > MAX_BLOCK_THREADS:
        raise LaunchError(f"block {b} has {b[0] * b[1] * b[2]} threads; at most {MAX_BLOCK_THREADS}")
    try:
        if len(_DIMS) < 4096:
            _DIMS[(grid, block)] = (g, b)
    except TypeError:  # lists are not hashable
        pass
    return g, b


# --- streams ------------------------------------------------------------------------
class _StreamPtr:
    """What CuPy's Function.__call__ needs of a stream: `.ptr`."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


_STREAMS: dict[int, _StreamPtr] = {}


def _stream_ptr(ptr: int) -> _StreamPtr:
    wrapped = _STREAMS.get(ptr)
    if wrapped is None:
        wrapped = _STREAMS[ptr] = _StreamPtr(ptr)
    return wrapped


def _explicit_stream(stream: Any) -> Any:
    if isinstance(stream, int) and not isinstance(stream, bool):
        return _stream_ptr(stream)
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return _stream_ptr(stream.cuda_stream)
    if hasattr(stream, "ptr"):  # cupy Stream / ExternalStream
        return stream
    raise LaunchError(f"stream must be a torch/CuPy stream or a raw pointer, got {stream!r}")


# --- arguments as CuPy holds them ----------------------------------------------------
def cupy_argument_holders(cupy: Any) -> tuple[Any, Any]:
    """CuPy's own holders for a kernel argument: an address (CIntptr) and a
    scalar (CScalar). CuPy's launcher passes them as they are; a plain int or
    numpy scalar it converts on every launch (~0.2 us each). (None, None) for a
    CuPy without them, or a stand-in module that is not the CuPy package: then
    ints and numpy scalars are passed."""
    if not hasattr(cupy, "__path__"):
        return None, None
    try:
        from cupy._core._scalar import CScalar
        from cupy.cuda.function import CIntptr
    except ImportError:
        return None, None
    return CIntptr, CScalar


def only_one_gpu(cupy: Any) -> bool:
    """CuPy sees exactly one GPU: every torch tensor or CuPy array on a GPU is
    on index 0, and index 0 is always the current device (the launch code then
    reads neither). The count is fixed for the life of the process (the driver
    reads CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES once, for torch and CuPy
    alike). False where CuPy cannot say."""
    try:
        return cupy.cuda.runtime.getDeviceCount() == 1
    except Exception:  # noqa: BLE001 - a CuPy without it, or a driver error: assume several
        return False


_ADDRESSES: dict[int, Any] = {}  # address -> its CIntptr, reused by later launches


def _address(ptr: int, holder: Any) -> Any:
    wrapped = _ADDRESSES.get(ptr)
    if wrapped is None:
        if len(_ADDRESSES) >= 4096:  # a program that allocates without end
            _ADDRESSES.clear()
        wrapped = _ADDRESSES[ptr] = holder(ptr)
    return wrapped


# --- kernels ---------------------------------------------------------------------
class CudaModule:
    """CUDA C source holding one or more `__global__` kernels, compiled once per
    device and options: `module.get_kernel("name")` (or `module["name"]`)."""

    def __init__(self, source: str, *, options: Sequence[str] = (),
                 references: Mapping[str, Callable[..., Any]] | None = None) -> None:
        if not isinstance(source, str) or not source.strip():
            raise LaunchError("CudaModule needs CUDA C source text")
        self.source = source
        self.options = tuple(options)
        self.references = dict(references or {})
        self._kernels: dict[str, CudaKernel] = {}

    def get_kernel(self, name: str, reference: Callable[..., Any] | None = None) -> CudaKernel:
        kernel = self._kernels.get(name)
        if kernel is None or (reference is not None and kernel.reference is not reference):
            kernel = CudaKernel(self.source, name, options=self.options,
                                reference=reference or self.references.get(name), module=self)
            self._kernels[name] = kernel
        return kernel

    __getitem__ = get_kernel

    def compiled(self, device: Any) -> Any:
        return compiled_module(self.source, self.options, device)

    def __repr__(self) -> str:
        return f"CudaModule({len(self.source)} chars, options={self.options!r})"


LINEAR_LIMIT = 0xFFFFFFFF  # threads of a 1-D launch that linear_launch runs as given on CUDA and HIP


def linear_size(grid3: tuple[int, int, int], block3: tuple[int, int, int]) -> int:
    """The thread count of a 1-D launch for CuPy's Function.linear_launch
    (which launches ceil(size / block) blocks of `block` threads: the same
    grid and block here), or 0 when the launch is not 1-D or so large that
    CuPy on HIP would shrink its grid."""
    if grid3[1] == grid3[2] == block3[1] == block3[2] == 1 and grid3[0] * block3[0] <= LINEAR_LIMIT:
        return grid3[0] * block3[0]
    return 0


class _Prepared:
    """A kernel ready to launch on one device: the CuPy kernel, and `call`, which
    launches it as call(grid3, block3, args, shared_mem, stream); `linear`,
    where CuPy has it, launches a 1-D grid as linear(size, args, shared_mem,
    block, stream) (see linear_size)."""

    __slots__ = ("function", "index", "call", "linear")

    def __init__(self, function: Any, index: int, direct: Any = None) -> None:
        self.function = function
        self.index = index
        # CuPy's RawKernel.__call__ re-reads the current device and looks up its
        # per-device Function on every launch. This object is per device, so it
        # keeps that Function (RawKernel.kernel) and calls it positionally.
        # Function.linear_launch takes its sizes as C integers: for a 1-D
        # launch it skips __call__'s tuple padding and max() per dimension
        # (0.24 us on the H200 host, benchmarks/results/host_profile_h200_round4.json).
        self.linear = None
        if callable(direct):
            self.call = direct
            linear = getattr(direct, "linear_launch", None)
            self.linear = linear if callable(linear) else None
        else:
            def call(grid: Any, block: Any, args: Any, shared_mem: int, stream: Any) -> None:
                function(grid, block, args, shared_mem=shared_mem, stream=stream)

            self.call = call


class CudaKernel:
    """One `__global__` function of CUDA C source, launched with
    `portagpu.launch(kernel, grid, *args, block=..., stream=..., shared_mem=0)`.

    `reference` (a torch or numpy function taking the same arguments and
    writing the same outputs in place) runs where no CUDA compiler exists.
    """

    def __init__(self, source: str, name: str, *, options: Sequence[str] = (),
                 reference: Callable[..., Any] | None = None,
                 module: CudaModule | None = None) -> None:
        self.module = module if module is not None else CudaModule(source, options=options)
        self.name = name
        self.reference = reference
        self._params: list[Any] | None = None
        self._prepared: dict[int, _Prepared] = {}
        self._device = None
        # generated launch code for the argument-type patterns of the launches
        # on this device (a chain, one function per pattern, at most
        # MAX_PATTERNS; see make_fast_launch); dispatch calls it while the
        # device layer's detection count equals `_ready`
        self._fast: Callable[..., bool] | None = None
        self._patterns: set[tuple[type, ...]] = set()
        self._ready = -1

    @property
    def source(self) -> str:
        return self.module.source

    @property
    def options(self) -> tuple[str, ...]:
        return self.module.options

    @property
    def params(self) -> list[Any]:
        if self._params is None:
            self._params = kernel_params(self.source, self.name)
            self._scalar_types = [self._scalar_type(p) for p in self._params]
        return self._params

    @staticmethod
    def _scalar_type(param: Any) -> tuple[Any, bool, tuple[type, ...]] | None:
        """(numpy scalar type, is it an integer type, accepted Python types)
        for a scalar parameter; None for pointers and unknown types."""
        if param.is_pointer or not param.dtype:
            return None
        import numpy

        scalar = getattr(numpy, param.dtype)
        return scalar, numpy.dtype(scalar).kind in "iub", (int, float, numpy.generic)

    def __repr__(self) -> str:
        return f"CudaKernel({self.name!r})"

    # -- launching -------------------------------------------------------------------
    def _configure(self, device: Any) -> None:
        """Per-device facts reused by every launch (the types to check against)."""
        from portagpu.backends import backend_for

        self._can_compile = backend_for(device).cuda_compiler() is not None
        if not self._can_compile:
            self.params  # noqa: B018 - the reference path checks against the signature too
        if self._can_compile:
            import cupy

            self.params  # noqa: B018 - parse the signature now, not mid-launch
            self._cupy = cupy
            self._cupy_array = cupy.ndarray
            # CuPy keeps contiguity as a plain attribute; .flags builds an object
            self._cupy_flag = hasattr(cupy.ndarray, "_c_contiguous")
            self._address_type, self._scalar_holder = cupy_argument_holders(cupy)
            self._one_gpu = only_one_gpu(cupy)
        self._fast = None
        self._patterns = set()
        self._device = device

    def _launch(self, device: Any, grid: Any, args: tuple, block: Any, stream: Any,
                meta: dict) -> None:
        if device is not self._device:
            self._configure(device)
        if not self._can_compile:
            self._run_reference(device, args, meta, grid, block)
            return
        shared_mem = 0
        if meta:
            shared_mem = meta.get("shared_mem", 0)
            unknown = sorted(k for k in meta if k != "shared_mem")
            if unknown:
                raise LaunchError(f"{self!r}: unknown launch options {unknown}; "
                                  "CUDA kernels take block=, stream=, shared_mem=")
        grid3, block3 = launch_dims(grid, block)
        converted, index, framework = self._convert(device, args)
        prepared = self._prepared.get(index)
        if prepared is None:
            prepared = self._prepare(device, index)
        if stream is not None:
            stream = _explicit_stream(stream)
        elif framework == "torch":
            stream = _stream_ptr(sys.modules["torch"]._C._cuda_getCurrentRawStream(index))
        cupy = self._cupy
        if cupy.cuda.runtime.getDevice() == index:
            prepared.call(grid3, block3, converted, shared_mem, stream)
        else:
            with cupy.cuda.Device(index):
                prepared.call(grid3, block3, converted, shared_mem, stream)
        # this call's argument types were all accepted: generated code for them
        pattern = tuple(map(type, args))
        if pattern not in self._patterns and len(self._patterns) < MAX_PATTERNS:
            self._patterns.add(pattern)
            self._fast = make_fast_launch(self, args, self._fast or _never, prepared) or self._fast

    def _run_reference(self, device: Any, args: tuple, meta: dict, grid: Any = None,
                       block: Any = None) -> None:
        """The reference, after the checks a GPU launch would make, so a CPU
        run refuses what a GPU would (a wrong name, block, grid, argument)."""
        if self.reference is None:
            from portagpu.backends import all_backends, backend_for

            able = [f"{b.display_name} via {b.cuda_compiler()}" for b in all_backends()
                    if b.cuda_compiler() is not None]
            raise LaunchError(
                f"{self!r} cannot run on {backend_for(device).display_name} ({device.name}): "
                f"CUDA C source runs on {', '.join(able)}; give CudaKernel(..., reference=fn) "
                "with a torch/numpy function taking the same arguments to run it here"
            )
        launch_dims(grid, block)
        unknown = sorted(k for k in meta if k != "shared_mem")  # meta is not mutated
        if unknown:
            raise LaunchError(f"{self!r}: unknown launch options {unknown}; "
                              "CUDA kernels take block=, stream=, shared_mem=")
        self._check_host_args(device, args)
        self.reference(*args)

    def _check_host_args(self, device: Any, args: tuple) -> None:
        """`_convert`'s checks where the device reads host memory or is not
        CUDA: the signature (name, count, scalar types) and that every array
        is contiguous and in memory this device reads."""
        from portagpu.backends import backend_for

        params = self.params  # raises when the kernel is not in the source
        if len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise LaunchError(f"{self!r} takes {len(params)} arguments ({names}), got {len(args)}")
        torch = sys.modules.get("torch")
        host_is_device = not backend_for(device).is_gpu
        for position, (value, param, scalar) in enumerate(zip(args, params, self._scalar_types, strict=True)):
            if scalar is not None:
                self._scalar(position, param, scalar, value)
            elif not param.is_pointer or value is None or type(value) is int:
                continue  # a type numpy has no name for, NULL, a raw address: as on a GPU
            elif torch is not None and isinstance(value, torch.Tensor):
                if value.device.type != device.torch_device.split(":")[0]:
                    raise self._arg_error(position, param, f"is a torch tensor on {value.device}, "
                                          f"not on {device.torch_device}")
                if not value.is_contiguous():
                    raise self._arg_error(position, param, "is not contiguous: call .contiguous()")
            elif type(value).__module__ == "numpy" and hasattr(value, "flags") and host_is_device:
                if not value.flags.c_contiguous:
                    raise self._arg_error(position, param, "is not C-contiguous: use numpy.ascontiguousarray")
            else:
                raise self._arg_error(position, param, self._not_device_array(value))

    def _prepare(self, device: Any, index: int) -> _Prepared:
        if index != device.index:
            from portagpu.device import devices

            matching = [d for d in devices() if d.index == index]
            if not matching:
                raise LaunchError(f"{self!r}: arguments are on device {index}, which portagpu did not find")
            device = matching[0]
        import cupy

        module = self.module.compiled(device)
        with cupy.cuda.Device(index):
            try:
                function = module.get_function(self.name)
                direct = getattr(function, "kernel", None)  # this device's Function
            except Exception as exc:
                raise LaunchError(f"{self!r}: no kernel of that name in the compiled module ({exc})") from None
        prepared = self._prepared[index] = _Prepared(function, index, direct)
        return prepared

    def _convert(self, device: Any, args: tuple) -> tuple[list[Any], int, str | None]:
        """Arguments as CuPy takes them, the device index they live on, and the
        framework that owns them (for its current stream)."""
        params = self._params
        if len(args) != len(params):
            names = ", ".join(p.name for p in params)
            raise LaunchError(f"{self!r} takes {len(params)} arguments ({names}), got {len(args)}")
        torch = sys.modules.get("torch")
        tensor_type = torch.Tensor if torch is not None else None
        cupy_array = self._cupy_array
        out: list[Any] = []
        index: int | None = None
        framework: str | None = None
        position = -1
        for value, param, scalar in zip(args, params, self._scalar_types, strict=True):
            position += 1
            if scalar is not None:
                out.append(self._scalar(position, param, scalar, value))
                continue
            if not param.is_pointer:  # a type numpy has no name for: pass as given
                out.append(value)
                continue
            kind = type(value)
            if kind is tensor_type or (tensor_type is not None and isinstance(value, tensor_type)):
                if not value.is_cuda:
                    raise self._arg_error(position, param, f"is a torch tensor on {value.device}, "
                                          f"not on the GPU ({device.torch_device})")
                if not value.is_contiguous():
                    raise self._arg_error(position, param, "is not contiguous: call .contiguous()")
                where, owner, value = value.get_device(), "torch", value.data_ptr()
            elif kind is cupy_array or isinstance(value, cupy_array):
                if not (value._c_contiguous if self._cupy_flag else value.flags.c_contiguous):
                    raise self._arg_error(position, param, "is not C-contiguous: use cupy.ascontiguousarray")
                where, owner = value.data.device_id, "cupy"
            elif value is None or (kind is int):
                out.append(value)  # NULL or a raw device address
                continue
            else:
                raise self._arg_error(position, param, self._not_device_array(value))
            if index is None:
                index, framework = where, owner
            elif where != index:
                from portagpu.backends import backend_for

                label = backend_for(device).torch_device
                raise self._arg_error(position, param, f"is on {label(where)}, other arguments on {label(index)}: "
                                      "put them on one device")
            out.append(value)
        return out, (device.index if index is None else index), framework

    def _scalar(self, position: int, param: Any, scalar: tuple, value: Any) -> Any:
        scalar, integral, accepted = scalar
        if not isinstance(value, accepted):
            raise self._arg_error(position, param, f"is a scalar, got {type(value).__name__}")
        if integral and isinstance(value, float):
            raise self._arg_error(position, param, f"is an integer, got float {value!r}")
        try:
            return scalar(value)
        except (OverflowError, ValueError, TypeError) as exc:
            raise self._arg_error(position, param, f"cannot hold {value!r} ({exc})") from None

    def _arg_error(self, position: int, param: Any, problem: str) -> LaunchError:
        return LaunchError(f"{self!r} argument {position} `{param.ctype} {param.name}` {problem}")

    @staticmethod
    def _not_device_array(value: Any) -> str:
        kind = type(value)
        if kind.__module__ == "numpy":
            return "is a numpy array in host memory: pass a torch CUDA tensor or a CuPy array"
        return f"is a pointer parameter, got {kind.__module__}.{kind.__name__}"


# --- generated fast launches -------------------------------------------------------
def _never(grid: Any, args: tuple, block: Any, stream: Any, meta: dict) -> bool:
    return False


def _scalar_converter(kernel: CudaKernel, position: int, param: Any, scalar: tuple) -> Callable[[Any], Any]:
    """value -> the scalar argument the kernel takes (the numpy scalar of its C
    type, in CuPy's CScalar holder where CuPy has one), or None when `_scalar`
    would refuse it. Results are remembered per value (a launch loop passes the
    same sizes again and again: a dict hit is ~4x cheaper than numpy's
    constructor); zeros are not, because -0.0 == 0.0 would share an entry."""
    memo: dict[Any, Any] = {}
    holder = kernel._scalar_holder

    def convert(value: Any) -> Any:
        try:
            converted = kernel._scalar(position, param, scalar, value)
        except LaunchError:
            return None
        if holder is not None:
            converted = holder(converted)
        if len(memo) < 256 and value != 0:
            memo[value] = converted
        return converted

    convert.memo_get = memo.get  # type: ignore[attr-defined]
    return convert


def make_fast_launch(kernel: CudaKernel, args: tuple, fallback: Callable[..., bool],
                     prepared: _Prepared | None = None) -> Callable[..., bool] | None:
    """Straight-line launch code for the argument types of `args` (a call that
    `CudaKernel._launch` just accepted), with every check of the general path.

    A call with other argument types goes to `fallback` (the code made for an
    earlier pattern, or `_never`). The function returns False, having done
    nothing, for anything else it must not launch or that the general path
    must judge (a non-contiguous array, arguments on different GPUs, an
    unconvertible scalar, a grid/block pair not yet validated, another current
    device, unknown options): the caller then takes `CudaKernel._launch`,
    which launches or raises the error. Torch tensors are passed as their
    addresses, held in CuPy's CIntptr where CuPy has it. None when an argument
    has a type it does not handle."""
    torch = sys.modules.get("torch")
    tensor = torch.Tensor if torch is not None else None
    scope: dict[str, Any] = {
        "dims_get": _DIMS.get, "prepared_get": kernel._prepared.get,
        "cupy_device": kernel._cupy.cuda.runtime.getDevice, "explicit_stream": _explicit_stream,
        "streams_get": _STREAMS.get, "stream_ptr": _stream_ptr, "fallback": fallback,
        "addresses_get": _ADDRESSES.get, "address": _address, "HOLDER": kernel._address_type,
        "linear_size": linear_size,
    }
    a = [f"a{i}" for i in range(len(args))]
    guards, checks, out, pointers = [], [], [], []
    on_gpu: list[str] = []  # torch tensors' checks, one test
    where: list[str] = []
    framework = None
    for i, (value, param, scalar) in enumerate(zip(args, kernel._params, kernel._scalar_types, strict=True)):
        kind = type(value)
        if scalar is not None:
            if kind not in (int, float) and not isinstance(value, scalar[2]):
                return None
            scope[f"V{i}"], scope[f"convert{i}"] = kind, _scalar_converter(kernel, i, param, scalar)
            scope[f"memo{i}"] = scope[f"convert{i}"].memo_get
            guards.append(f"type(a{i}) is V{i}")
            checks += [f"c{i} = memo{i}(a{i})", f"if c{i} is None:", f"    c{i} = convert{i}(a{i})",
                       f"    if c{i} is None:", "        return False"]
            out.append(f"c{i}")
        elif not param.is_pointer:
            out.append(a[i])
        elif value is None or kind is int:
            guards.append(f"a{i} is None" if value is None else f"type(a{i}) is int")
            out.append(a[i])
        elif tensor is not None and isinstance(value, tensor):
            if not on_gpu:
                # the first tensor's exact type tells this pattern from a CuPy
                # one; a later argument that is no tensor fails an attribute
                # read below, which hands the call on as a type guard would
                scope[f"V{i}"] = kind
                guards.append(f"type(a{i}) is V{i}")
            on_gpu += [f"a{i}.is_cuda", f"a{i}.is_contiguous()"]
            where.append(f"a{i}.get_device()")
            if kernel._address_type is None:
                out.append(f"a{i}.data_ptr()")
            else:
                pointers += [f"q{i} = a{i}.data_ptr()", f"q{i} = addresses_get(q{i}) or address(q{i}, HOLDER)"]
                out.append(f"q{i}")
            framework = framework or "torch"
        elif isinstance(value, kernel._cupy_array):
            scope[f"V{i}"] = kind
            guards.append(f"type(a{i}) is V{i}")
            flag = f"a{i}._c_contiguous" if kernel._cupy_flag else f"a{i}.flags.c_contiguous"
            checks += [f"if not {flag}:", "    return False"]
            where.append(f"a{i}.data.device_id")
            out.append(a[i])
            framework = framework or "cupy"
        else:
            return None
    other = "    return fallback(grid, args, block, stream, meta)"
    scope.update({"GRID": _MISSING, "BLOCK": _MISSING, "DIMS": None})
    body = ["global GRID, BLOCK, DIMS", f"if len(args) != {len(args)}:", other]
    if args:
        body.append(f"{', '.join(a)}, = args")
    if guards:
        body += [f"if not ({' and '.join(guards)}):", other]
    # one GPU in the process: every array on a GPU is on it and it is current,
    # so the code reads no array's device and not the current one
    one = kernel._one_gpu and 0 in kernel._prepared
    read = [f"if not ({' and '.join(on_gpu)}):", "    return False"] if on_gpu else []
    if not one and where:
        read.append(f"d = {where[0]}")
        if len(where) > 1:
            read += [f"if {' or '.join(f'{w} != d' for w in where[1:])}:", "    return False"]
    if read:
        body += ["try:", *[f"    {line}" for line in read], "except AttributeError:  # not a tensor where one was",
                 other]
    if not one and not where:
        body.append(f"d = {kernel._device.index}")
    body += checks
    body += [
        "if meta:",
        "    if len(meta) != 1 or 'shared_mem' not in meta:",
        "        return False",
        "    shared = meta['shared_mem']",
        "else:",
        "    shared = 0",
        # the grid and block objects of the last call, checked (by identity:
        # both are immutable once validated) before hashing the pair
        "if grid is GRID and block is BLOCK:",
        "    grid3, block3, size = DIMS",
        "else:",
        "    try:",
        "        grid3, block3 = dims_get((grid, block))",
        "    except TypeError:  # not validated yet (None), or a list",
        "        return False",
        "    size = linear_size(grid3, block3)",
        "    GRID, BLOCK, DIMS = grid, block, (grid3, block3, size)",
    ]
    if one:
        scope["PREPARED"] = kernel._prepared[0]
        body.append("prepared = PREPARED")
    else:
        body += ["prepared = prepared_get(d)", "if prepared is None or cupy_device() != d:", "    return False"]
    body += ["if stream is not None:", "    stream = explicit_stream(stream)"]
    if framework == "torch":
        scope["raw_stream"] = torch._C._cuda_getCurrentRawStream
        body += ["else:", f"    ptr = raw_stream({0 if one else 'd'})", "    stream = streams_get(ptr) or stream_ptr(ptr)"]
    body += pointers
    arguments = f"[{', '.join(out)}]"
    if prepared is not None and prepared.linear is not None:
        # CuPy's 1-D launch, as `prepared` (this call's) has it: every device's Function is of one CuPy
        body += ["if size:", f"    prepared.linear(size, {arguments}, shared, block3[0], stream)", "else:",
                 f"    prepared.call(grid3, block3, {arguments}, shared, stream)"]
    else:
        body.append(f"prepared.call(grid3, block3, {arguments}, shared, stream)")
    body.append("return True")
    source = "def fast_launch(grid, args, block, stream, meta):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(source, f"<portagpu fast launch of {kernel.name}>", "exec"), scope)
    function = scope["fast_launch"]
    function.source = source  # for debugging: print(kernel._fast.source)
    return function
