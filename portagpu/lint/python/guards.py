"""Guard detection: where vendor-specific code is deliberate, not a finding.

A guard "covers" a set of targets: a finding is dropped when every target the
rule breaks on (among those the user lints for) is covered by an enclosing
guard. The heuristics, in order of strength:

* Vendor dispatch covers every target: tests on `torch.version.hip`,
  `torch.version.cuda`, names or calls containing `hip`/`rocm` (`is_hip()`,
  `TEST_WITH_ROCM`), string comparisons with "hip"/"rocm", and the user's
  `guard_names`. Both branches are guarded: each is one vendor's path.
* Device checks cover mps and cpu (on ROCm these are true, so ROCm-specific
  findings still fire): `torch.cuda.*` calls/attributes in a test
  (`torch.cuda.is_available()`, `device_count() > 0`, capability checks),
  `x.is_cuda`, names containing `cuda`/`cudnn`/`nccl` (`HAS_CUDA`,
  `args.cuda`), and comparisons with "cuda"/"cuda:N" (`device.type == "cuda"`,
  `device.startswith("cuda:")`).
* A device check covers its body only when it is a plain test (no
  and/or): its else branch then runs exactly where there is no CUDA device
  (`if args.cuda: ... else: model.to("cuda")` fails there). A compound test
  (`if warm or not use_cuda_graphs:`) covers both branches: its other branch
  may be the CUDA one.
* A negated device test (`x.device != "cuda"`, `not x.is_cuda`) covers only
  its else branch: its body runs exactly where there is no CUDA device.
  A loop over `range(torch.cuda.device_count())` (or a name counting GPUs)
  covers its body like the count's test: it runs only where devices exist.
* MPS checks (`torch.backends.mps.is_available()`, `== "mps"`) cover mps: the
  author handled MPS; the other branch still has to work on CPU.
* An `if <guard>:` whose body ends in return/raise/continue/break, or an
  `assert <guard>`, also guards the statements after it in the same block.
* `@skipIf(<guard>)`-style decorators, decorators named for a vendor
  (`@onlyCUDA`, `@requires_cuda`) and GPU-presence decorators
  (`@skip_if_no_gpu`) guard the decorated function or class.
* Backend implementations (lint/vendor_paths.py, which the CUDA side asks
  too). A module in a directory named for a vendor
  (torch/cuda/, torch/backends/cudnn/, triton/backends/nvidia/,
  _inductor/codegen/rocm/) is that vendor's backend: every target is covered.
  A file named for a vendor's side of a dispatch (nvml.py, cuda_backend.py,
  gemm_sm90.py: vendor words, an NVIDIA architecture, role words such as
  backend/impl/device) covers like a vendor name; a vendor word beside a topic
  (ptx_assembly.py, cuda_kernels.py) does not exempt the file. A class deriving from a base named *Accelerator / *DeviceInterface /
  *DeviceOpOverrides implements a device abstraction (CUDA_Accelerator(
  DeepSpeedAccelerator), CudaInterface(DeviceInterface)) and is that vendor's
  side of it (every target when its own name names no vendor). A function or
  class whose name holds a vendor word (`_cuda_synchronize`, `emit_nvtx`,
  `init_nvml`) declares itself vendor-specific, except a function named for an
  NVIDIA tool (`parse_nvidia_smi`) in a module with no AMD side at all: that
  is a helper named for what it runs, called whatever the GPU.
* Vendor words: "cuda"/"cudnn"/"nccl"/"cublas" name CUDA APIs that ROCm builds
  map to HIP, so they cover mps and cpu only; NVIDIA hardware words
  ("nvidia", "nvml", "nvtx", "ptx", "cutlass", "sm90"...) and AMD words
  ("hip", "rocm", "amd") cover every target; "mps" covers mps.
* `hasattr(...)` in a test is a feature probe and covers all targets when it
  probes an imported module or one of its objects (`hasattr(torch,
  "accelerator")`) or a `__dunder__` protocol (`__cuda_array_interface__`),
  and not on a private attribute (`hasattr(f, "_buffer")`): the program's own
  objects (`hasattr(model, "gpus")`) say nothing about the device.
* A name assigned a device probe (`n = torch.cuda.device_count()`) tests
  like the probe; names counting GPUs (`device_count`, `num_gpus`) are
  device checks.
* Version checks (`torch.__version__ < "2.4"`, `Version(...) >= ...`,
  `is_torch_version(">=", ...)`) mark the old-version path (`version_gate`),
  as do `except (ImportError, AttributeError)` fallbacks: nothing there is
  reported, so no fix rewrites it to an API the old version lacks.
* Optional imports (inside `try:` with an ImportError handler) and calls inside
  `try:` blocks that catch the failure are left to each checker
  (`Context.catches`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from portagpu.lint.vendor_names import (
    EVERY,
    MPS,
    NON_CUDA,
    NONE,
    name_words,
    word_cover,
)

# "cuda", "cuda:0", and the prefix "cuda:" of `device.startswith("cuda:")`
_CUDA_STRING = re.compile(r"^cuda(:\d*)?$")
_ABSTRACTION_BASES = ("Accelerator", "DeviceInterface", "DeviceOpOverrides")
_SKIP_DECORATORS = ("skipIf", "skipif", "skipUnless", "skip_if", "skip_unless")
_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


# words that show a module has an AMD side (a dispatch's other branch)
AMD_SIDE_WORDS = ("amdsmi", "amd-smi", "rocm-smi", "rocm_smi", "rocm", "ROCm", "ROCM", "hip", "HIP")
# NVIDIA tool words: a function named with one wraps that tool
_NVIDIA_TOOL_WORDS = ("nvidia", "nvml", "nvsmi")


def names_nvidia_tool(name: str) -> bool:
    """`parse_nvidia_smi`, `nvml_info`: named for the NVIDIA tool it runs."""
    return any(w.startswith(_NVIDIA_TOOL_WORDS) for w in name_words(name))


# what torch.backends.cudnn / torch.backends.cuda answer about the device;
# everything else there (benchmark, deterministic, allow_tf32, matmul.*) is a knob
_BACKEND_PROBES = ("is_available", "is_built", "version", "is_acceptable")


def _is_knob(qual: str) -> bool:
    rest = qual.split(".", 3)[3]  # after torch.backends.<name>.
    return rest.split(".", 1)[0] not in _BACKEND_PROBES


def names_gpu_option(name: str) -> bool:
    """`gpus`, `n_gpu`, `use_cuda`, `cuda`: a name for a GPU count or a CUDA
    switch (not `cuda_graphs`, `is_cuda_available`'s helpers named otherwise)."""
    words = name_words(name)
    return _device_presence(name) or (bool(words) and words[-1] == "cuda")


def _names_tool_presence(name: str) -> bool:
    """`nvidia_smi_path`, `have_nvml`, `nvml_ok`: a name for the NVIDIA tool
    itself, whose test asks whether the tool is installed, not which GPU runs
    (`is_nvidia`, `nvidia_gpu` stay vendor tests)."""
    words = name_words(name)
    return any(w == "smi" or w.startswith(("nvml", "nvsmi")) for w in words) and any(
        w.startswith(_NVIDIA_TOOL_WORDS) for w in words
    )


def name_cover(name: str, guard_names: Iterable[str] = ()) -> frozenset[str]:
    """Cover implied by an identifier (last component of a name or call)."""
    if name in guard_names:
        return EVERY
    return word_cover(name)


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _device_presence(name: str) -> bool:
    """`device_count`, `DEVICE_COUNT`, `num_gpus`, `n_gpu`: counts of GPUs
    (compared with 0, they are device checks)."""
    words = name_words(name)
    return ("device" in words and "count" in words) or any(
        w in ("gpu", "gpus", "ngpu", "ngpus") for w in words
    )


def _probed_name(call: ast.Call) -> str:
    """The attribute name `hasattr(obj, "name")` asks about ("" if not a literal)."""
    name = call.args[1] if len(call.args) == 2 else None
    return name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else ""


def _probes_an_api(call: ast.Call, qualify) -> bool:
    """`hasattr(torch, "accelerator")`, `hasattr(F, "scaled_dot_product_attention")`:
    an imported module or one of its objects is probed; `hasattr(x,
    "__cuda_array_interface__")`: a protocol only CUDA arrays have.
    `hasattr(model, "gpus")` asks about the program's own object, which says
    nothing of the device."""
    if not call.args:
        return False
    name = _probed_name(call)
    return (name.startswith("__") and name.endswith("__")) or qualify(call.args[0]) is not None


def _private_attribute_probe(call: ast.Call) -> bool:
    """`hasattr(fn, "_buffer")`: a lazily built cache, not an API probe
    (a dunder such as `__dlpack__` is a protocol, and is one)."""
    name = _probed_name(call)
    return name.startswith("_") and not name.endswith("__")


def test_cover(
    test: ast.AST, qualify, guard_names: Iterable[str] = (), resolve=None
) -> frozenset[str]:
    """Targets covered by code that runs under (or instead of) `test`.
    `resolve(name)` gives the value a plain name was assigned (so that
    `n = torch.cuda.device_count()` ... `if n > 0:` is a device check), or
    the cover of a flag another module computed (project_flags)."""
    cover: set[str] = set()
    skipped: set[int] = set()  # the inner parts of a backend knob (`torch.backends.cudnn`)
    for node in ast.walk(test):
        if skipped and id(node) in skipped:
            continue
        if resolve is not None and isinstance(node, ast.Name):
            value = resolve(node)
            if value is not None:
                cover |= value if isinstance(value, frozenset) else test_cover(value, qualify, guard_names)
                if cover >= EVERY:
                    return EVERY
        if isinstance(node, (ast.Name, ast.Attribute)) and _device_presence(_last_name(node) or ""):
            cover |= NON_CUDA
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "hasattr"
            and not _private_attribute_probe(node)
            and _probes_an_api(node, qualify)
        ):
            return EVERY  # a feature probe: the branch runs only where the API exists
        if isinstance(node, (ast.Attribute, ast.Name)):
            qual = qualify(node)
            if qual is not None:
                if qual in ("torch.version.hip", "torch.version.cuda"):
                    return EVERY
                if qual.startswith(("torch.backends.cudnn.", "torch.backends.cuda.")) and _is_knob(qual):
                    # `if torch.backends.cudnn.benchmark: return`: a setting, True or
                    # False on every device; what follows still runs on MPS
                    inner = node.value if isinstance(node, ast.Attribute) else None
                    while isinstance(inner, ast.Attribute):
                        skipped.add(id(inner))
                        inner = inner.value
                    continue
                if qual.startswith(
                    ("torch.cuda.", "torch.backends.cudnn.", "torch.backends.cuda.")
                ):
                    cover |= NON_CUDA
                    continue
                if qual.startswith("torch.backends.mps."):
                    cover |= MPS
                    continue
            name = _last_name(node)
            if name and _names_tool_presence(name) and name not in guard_names:
                continue  # `if smi_path is None: raise`: the tool is there, not an NVIDIA GPU
            if name:
                found = name_cover(name, guard_names)
                if found == EVERY:
                    return EVERY
                cover |= found
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value.lower()
            if value in ("hip", "rocm", "amd"):
                return EVERY
            if _CUDA_STRING.match(value) or value in ("nvidia", "nccl"):
                cover |= NON_CUDA
            elif value == "mps":
                cover |= MPS
    return frozenset(cover)


# accelerators none of the targets is: code only they run never runs on ROCm, MPS or a CPU
_OTHER_VENDORS = frozenset(("xpu", "npu", "hpu", "mlu", "musa", "mtia", "xla", "sdaa", "neuron", "tpu"))


def other_vendor_test(test: ast.AST, qualify) -> bool:
    """`device.type == "xpu"`, `torch.xpu.is_available()`, `hasattr(torch,
    "npu") and torch.npu.is_available()`: true only on an accelerator that is
    none of the targets, so what runs under it breaks none of them (what runs
    instead of it is judged as usual)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(other_vendor_test(value, qualify) for value in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        for side in (test.left, test.comparators[0]):
            if isinstance(side, ast.Constant) and isinstance(side.value, str):
                if side.value.split(":")[0].lower() in _OTHER_VENDORS:
                    return True
        return False
    if isinstance(test, ast.Call) and not test.args:
        parts = (qualify(test.func) or "").split(".")
        return len(parts) == 3 and parts[0] == "torch" and parts[1] in _OTHER_VENDORS and parts[2] == "is_available"
    return False


def negated_device_test(test: ast.AST, qualify) -> bool:
    """`x.device != "cuda"`, `x.device.type != torch.device("cuda")`,
    `not x.is_cuda`, `torch.cuda.device_count() < world_size`: a device test
    whose true branch runs off CUDA (no device is fewer than any count)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    if _fewer_devices_than(test, qualify):
        return True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq):
        for side in (test.left, test.comparators[0]):
            if isinstance(side, ast.Call) and qualify(side.func) == "torch.device" and side.args:
                side = side.args[0]
            if (
                isinstance(side, ast.Constant)
                and isinstance(side.value, str)
                and _CUDA_STRING.match(side.value)
            ):
                return True
    return False


def _is_device_count(node: ast.AST, qualify) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
        return (qualify(node) or "").endswith(".device_count")
    return isinstance(node, (ast.Name, ast.Attribute)) and _device_presence(_last_name(node) or "")


def _fewer_devices_than(test: ast.AST, qualify) -> bool:
    """`count < k`, `count <= 0`, `count == 0`, `k > count`: true with no device at all."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _is_device_count(right, qualify) and not _is_device_count(left, qualify):
        left, right = right, left  # `k > count` reads as `count < k`
        op = {ast.Gt: ast.Lt(), ast.GtE: ast.LtE(), ast.Lt: ast.Gt(), ast.LtE: ast.GtE()}.get(type(op), op)
    if not _is_device_count(left, qualify):
        return False
    bound = right.value if isinstance(right, ast.Constant) and isinstance(right.value, int) else None
    if isinstance(op, ast.Lt):
        return bound is None or bound > 0
    if isinstance(op, ast.LtE):
        return bound is None or bound >= 0
    return isinstance(op, ast.Eq) and bound == 0


_VERSION_CALLS = ("parse", "Version", "parse_version", "LooseVersion", "StrictVersion")
_NEWER = ("greater", "newer", "at_least", "atleast", "min", "ge", "gt", "after")
_OLDER = ("less", "older", "below", "before", "lt", "le", "max")


def _mentions_version(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        name = _last_name(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else None
        if name and "version" in name.lower():
            return True
        if isinstance(sub, ast.Call) and (_last_name(sub.func) or "") in _VERSION_CALLS:
            return True
    return False


def version_gate(test: ast.AST) -> str | None:
    """Which branch of a torch/library version check is the old-version path:
    "body", "orelse", "both" (cannot tell), or None for a test that is not a
    version check. `if torch.__version__ < "2.4":` -> "body"."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = version_gate(test.operand)
        return {"body": "orelse", "orelse": "body"}.get(inner or "", inner)
    if isinstance(test, ast.BoolOp):
        gates = [g for g in (version_gate(v) for v in test.values) if g]
        return gates[0] if len(set(gates)) == 1 else ("both" if gates else None)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = _mentions_version(test.left), _mentions_version(test.comparators[0])
        if not (left or right):
            return None
        op = test.ops[0]
        if isinstance(op, (ast.Lt, ast.LtE)):
            return "body" if left else "orelse"
        if isinstance(op, (ast.Gt, ast.GtE)):
            return "orelse" if left else "body"
        return "both"
    if isinstance(test, ast.Call):
        name = (_last_name(test.func) or "").lower()
        if "version" not in name:
            return None
        hints = set(name_words(name)) | {(_last_name(a) or "").lower() for a in test.args}
        hints |= {
            a.value
            for a in test.args
            if isinstance(a, ast.Constant) and a.value in ("<", "<=", ">", ">=")
        }
        if hints & set(_NEWER) or hints & {">=", ">"}:
            return "orelse"
        if hints & set(_OLDER) or hints & {"<=", "<"}:
            return "body"
        return "both"
    return None


# calls that end the code after them: `pytest.skip("...", allow_module_level=True)`,
# `sys.exit(1)`; by their dotted spelling (a bare `skip()` may be anything)
_ENDING_CALLS = frozenset({"pytest.skip", "pytest.exit", "sys.exit", "os._exit", "exit", "quit"})


def terminates(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, _TERMINATORS):
        return True
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and _dotted(last.value.func) in _ENDING_CALLS
    )


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


def pytestmark_cover(body: list[ast.stmt], qualify, guard_names=(), probe=None) -> frozenset[str]:
    """What a module's or class's `pytestmark = pytest.mark.skipif(<device
    test>, ...)` (or a list of marks) guards: every test defined beside it
    is skipped where the test fails (module-level statements still run)."""
    cover: frozenset[str] = NONE
    for stmt in body:
        if (
            isinstance(stmt, (ast.Assign, ast.AnnAssign))
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in _targets(stmt))
            and stmt.value is not None
        ):
            marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            cover |= decorator_cover(marks, qualify, guard_names, probe)
    return cover


def _targets(stmt: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]


def is_skip_decorator(deco: ast.Call) -> bool:
    return (_last_name(deco.func) or "") in _SKIP_DECORATORS


def decorator_cover(decorators: list[ast.expr], qualify, guard_names=(), probe=None) -> frozenset[str]:
    """`probe` says what a name in a skip test was assigned (`_HAS_GPU = torch.cuda.is_available()`)."""
    cover: set[str] = set()
    for deco in decorators:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = _last_name(target) or ""
        if isinstance(deco, ast.Call) and name in _SKIP_DECORATORS:
            for arg in deco.args[:1]:
                cover |= test_cover(arg, qualify, guard_names, probe)
        elif "gpu" in name_words(name):
            cover |= NON_CUDA  # @skip_if_no_gpu, @requires_gpu: a device check
        else:
            cover |= name_cover(name, guard_names)
    return frozenset(cover)


def class_cover(node: ast.ClassDef, guard_names=()) -> frozenset[str]:
    """A vendor-named class, or one implementing a device abstraction."""
    own = name_cover(node.name, guard_names)
    for base in node.bases:
        if (_last_name(base) or "").endswith(_ABSTRACTION_BASES):
            return own if own else EVERY
    return own


def function_cover(node: ast.FunctionDef | ast.AsyncFunctionDef, guard_names=()) -> frozenset[str]:
    return name_cover(node.name, guard_names)
