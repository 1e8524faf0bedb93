"""PG8xx: multi-GPU code through torch.distributed (rules/distributed.yaml)."""

from __future__ import annotations

import ast
import re

from portagpu.lint.model import Fix, Rule
from portagpu.lint.python.checkers.common import const_str, last_name
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker


def _argument(
    node: ast.Call, keyword: str, position: int | None, ctx: Context | None = None
) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == keyword:
            return kw.value
    if position is not None and len(node.args) > position:
        arg = node.args[position]
        return None if isinstance(arg, ast.Starred) else arg
    if ctx is not None:
        for kw in node.keywords:
            if kw.arg is None and _unpacked_key(ctx, kw.value, keyword) is not None:
                return kw  # `f(**params)`: reported at the unpacking
    return None


def _unpacked_key(ctx: Context, node: ast.AST, key: str) -> ast.AST | None:
    """The value of `key` in the dict `**node` unpacks: a dict literal or
    `dict(key=...)`, directly or through a name assigned one."""
    if isinstance(node, ast.Name):
        node = ctx.assigned_value(node)
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if k is not None and const_str(k) == key:
                return v
    elif isinstance(node, ast.Call) and last_name(node.func) == "dict" and not node.args:
        return next((kw.value for kw in node.keywords if kw.arg == key), None)
    return None


def _string_value(ctx: Context, node: ast.AST, constants: tuple[str, ...]) -> str | None:
    """A literal string, a `Backend.NCCL`-style constant, or a name assigned one."""
    text = const_str(node)
    if text is not None:
        return text
    qual = ctx.qualify(node)
    if qual is not None and qual in constants:
        return qual.rsplit(".", 1)[-1].lower()
    if isinstance(node, (ast.Name, ast.Attribute)):
        value = ctx.assigned_value(node)
        return const_str(value) if value is not None else None
    return None


@checker("nccl_backend", ast.Call)
def nccl_backend(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """`init_process_group(backend="nccl")` and the same in new_group/deepspeed."""
    qual = ctx.qualify(node.func)
    where = rule.options.get("functions", {}).get(qual) if qual else None
    if where is None:
        return
    arg = _argument(node, where["keyword"], where.get("position"), ctx)
    if arg is None:
        return
    if isinstance(arg, ast.keyword):  # `**params`: the backend is a key of that dict
        source = _unpacked_key(ctx, arg.value, where["keyword"])
        value = _string_value(ctx, source, tuple(rule.options.get("constants", ())))
    else:
        value = _string_value(ctx, arg, tuple(rule.options.get("constants", ())))
    if value is None or value.strip().lower() != "nccl":
        return
    if isinstance(arg, ast.Attribute) and const_str(arg) is None:
        # `args.dist_backend = "nccl"` overrides what the user configured: the
        # finding is that assignment, where the backend is hard-coded
        assigned = ctx.assigned_value(arg)
        arg = assigned if assigned is not None else arg
    ctx.report(rule, arg, Fix("suggestion", rule.replacement), value=value)


def _mentions_rank(node: ast.AST, words: frozenset[str]) -> bool:
    for sub in ast.walk(node):
        name = last_name(sub)
        if name is None and isinstance(sub, ast.Call):
            name = last_name(sub.func)
        if name is None:
            name = const_str(sub)
        if name is not None and name.lower() in words:
            return True
    return False


@checker("set_device_per_rank", ast.Call)
def set_device_per_rank(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """`torch.cuda.set_device(local_rank)`: a rank bound to a CUDA device."""
    qual = ctx.qualify(node.func)
    if qual not in rule.options.get("functions", ()) or len(node.args) != 1 or ctx.in_test:
        return
    words = frozenset(w.lower() for w in rule.options.get("rank_words", ()))
    if not _mentions_rank(node.args[0], words):
        return
    ctx.report(
        rule, node, Fix("suggestion", rule.replacement), call=qual, arg=ctx.text_of(node.args[0])
    )


def _rank_device(node: ast.Call) -> ast.AST | None:
    """The device operand of `x.to(rank)` or `f(..., device=rank)`."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "to" and node.args:
        return node.args[0]
    return next((kw.value for kw in node.keywords if kw.arg == "device"), None)


@checker("rank_as_device", ast.Call)
def rank_as_device(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """`model.to(rank)`, `torch.randn(n, device=args.gpu)` in a module that binds
    ranks to CUDA devices (NCCL, torch.cuda.set_device): an int device is a
    CUDA device index."""
    value = _rank_device(node)
    if not isinstance(value, (ast.Name, ast.Attribute)) or ctx.in_test:
        return
    if (last_name(value) or "").lower() not in rule.options.get("rank_names", ()):
        return
    if not ctx.text_mentions(*rule.requires):
        return  # a rank that is never a CUDA device here (gloo, CPU ranks)
    ctx.report(rule, value, Fix("suggestion", rule.replacement), value=ctx.text_of(value))


def _env_writes(node: ast.AST, ctx: Context) -> list[ast.AST]:
    """Key nodes of environment variables this node may write: a subscript
    assignment (`os.environ[...] =`, and as well a child process's copy,
    `env = os.environ.copy(); env[...] =`, or a launcher's `current_env[...]`:
    the caller keeps only keys naming the variables it knows), setdefault,
    putenv, update(NAME=...), and keys of dict literals (the env= of a child
    process, os.environ.update({...}))."""
    if isinstance(node, ast.Assign):
        return [t.slice for t in node.targets if isinstance(t, ast.Subscript)]
    if isinstance(node, ast.Dict):
        return [key for key in node.keys if key is not None]
    if isinstance(node, ast.Call):
        qual = ctx.qualify(node.func) or ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if (method == "setdefault" or qual == "os.putenv") and node.args:
            return [node.args[0]]
        if method == "update" or qual == "dict":
            return [kw for kw in node.keywords if kw.arg is not None]
    return []


@checker("cuda_visible_devices_write", ast.Assign, ast.Call, ast.Dict)
def cuda_visible_devices_write(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """CUDA_VISIBLE_DEVICES written in a file that never mentions AMD's variables."""
    variables = rule.options.get("variables", ())
    for key in _env_writes(node, ctx):
        name = key.arg if isinstance(key, ast.keyword) else const_str(key)
        if name in variables and not ctx.text_mentions(*rule.options.get("hip_markers", ())):
            ctx.report(rule, key, Fix("suggestion", rule.replacement), variable=name)


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


@checker("ddp_device_ids", ast.Call)
def ddp_device_ids(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """`DistributedDataParallel(model, device_ids=[rank])`: CUDA modules only."""
    if ctx.qualify(node.func) not in rule.options.get("classes", ()):
        return
    value = _argument(node, "device_ids", 1)
    if value is None or _is_none(value) or not isinstance(value, (ast.List, ast.Tuple)):
        return  # a variable may hold None off the GPU: not decidable here
    ctx.report(rule, value, Fix("suggestion", rule.replacement), value=ctx.text_of(value))


_MPS_DEVICE = re.compile(r"^mps(:\d+)?$")


def _mps_facts(ctx: Context, rule: Rule) -> tuple[bool, bool]:
    """(the module can pick MPS, the module checks for MPS), from its code (not
    its comments): torch.accelerator.current_accelerator() or an "mps" device
    can pick it; a comparison with "mps" or torch.backends.mps.* checks it."""
    cached = getattr(ctx, "_mps_facts", None)
    if cached is not None:
        return cached
    pickers = tuple(rule.options.get("mps_pickers", ()))
    text = ctx.source.text
    if "mps" not in text and not any(p.rsplit(".", 1)[-1] in text for p in pickers):
        # every fact below needs "mps" or a picker's name in the text: no walk
        ctx._mps_facts = (False, False)  # type: ignore[attr-defined]
        return False, False
    compared: set[int] = set()
    devices: list[int] = []  # "mps" constants: a device picked unless compared
    picks = checks = False
    for node in ast.walk(ctx.tree):  # one walk: the module may be large
        cls = node.__class__
        if cls is ast.Constant:
            if _MPS_DEVICE.match(const_str(node) or ""):
                devices.append(id(node))
        elif cls is ast.Compare:
            for operand in (node.left, *node.comparators):
                if _MPS_DEVICE.match(const_str(operand) or ""):
                    checks = True
                    compared.add(id(operand))
        elif cls is ast.Attribute:
            qual = ctx.qualify(node) or ""
            if qual.startswith("torch.backends.mps.") or node.attr == "is_mps":
                checks = True
            elif qual in pickers:
                picks = True
    if not checks:
        picks = picks or any(device not in compared for device in devices)
    ctx._mps_facts = (picks, checks)  # type: ignore[attr-defined]
    return picks, checks


@checker("distributed_on_mps", ast.Call)
def distributed_on_mps(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """DDP/FSDP in a module that can run on MPS and never checks for it."""
    qual = ctx.qualify(node.func)
    if qual not in rule.options.get("callees", ()):
        return
    if ctx.text_mentions(*rule.options.get("handled_by", ())):
        return
    picks, checks = _mps_facts(ctx, rule)
    if picks and not checks:
        ctx.report(
            rule, node.func, Fix("suggestion", rule.replacement), call=qual.rsplit(".", 1)[-1]
        )
