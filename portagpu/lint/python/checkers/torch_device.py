"""PG1xx: torch device APIs that tie code to CUDA."""

from __future__ import annotations

import ast
import re

from portagpu.lint.model import Edit, Fix, Rule
from portagpu.lint.python import guards
from portagpu.lint.python.checkers.common import const_str, last_name, open_paren_after, torch_base
from portagpu.lint.python.context import Context
from portagpu.lint.python.registry import checker

_CUDA_DEVICE = re.compile(r"^cuda(:\d+)?$")


@checker("torch_cuda_call", ast.Call)
def torch_cuda_call(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """`torch.cuda.X(...)` where torch.accelerator/torch has X's portable twin."""
    qual = ctx.qualify(node.func)
    if qual is None or not qual.startswith("torch.cuda."):
        return
    api = rule.options.get("apis", {}).get(qual[len("torch.cuda.") :])
    if api is None:
        return
    # In a test it still raises (`if "A100" in torch.cuda.get_device_name():`)
    # unless an earlier operand checked the device (`is_available() and ...`).
    if ctx.in_test and (api.get("probe") or ctx.checked_earlier_in_test()):
        return
    if api.get("probe") and _defines_flag(ctx.parent()):
        return  # TEST_CUDA = torch.cuda.is_available(): defines a guard, used in tests
    replacement = api["replacement"]
    fix = Fix("suggestion", replacement)
    base = torch_base(ctx, node.func)
    rewrite = api.get("rewrite")  # only where the new callee works on CPU and MPS too
    if rewrite and base is not None:
        new = base + rewrite[len("torch") :]
        fix = Fix("suggestion", replacement, (ctx.edit(node.func, None, new),))
    ctx.report(rule, node, fix, call=qual, replacement=replacement)


def _defines_flag(parent: ast.AST | None) -> bool:
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return any(guards.name_cover(_assigned_name(t)) for t in targets)
    return False


def _device_arg(node: ast.Call) -> ast.AST | None:
    if node.args:
        return node.args[0]
    for kw in node.keywords:
        if kw.arg == "device":
            return kw.value
    return None


@checker("tensor_to_cuda", ast.Call)
def tensor_to_cuda(node: ast.Call, ctx: Context, rule: Rule) -> None:
    """`x.cuda()` and `x.to("cuda")`: fixed to `.to(device)` when a device is in scope."""
    func = node.func
    if not isinstance(func, ast.Attribute):
        return
    where: ast.AST = node  # the line to point at
    if func.attr == "cuda":
        qual = ctx.qualify(func)
        if qual is not None and qual not in ("torch.Tensor.cuda", "torch.nn.Module.cuda"):
            return  # a module attribute such as numba.cuda, not a method call
        keep = [kw for kw in node.keywords if kw.arg in ("non_blocking", "memory_format")]
        simple = not node.args and len(keep) == len(node.keywords)
        call = ".cuda()"
    elif func.attr == "to":
        value = const_str(_device_arg(node))
        if value is None and _cuda_fstring(_device_arg(node)):
            value = "cuda:{...}"  # `.to(f"cuda:{rank}")`: a device index chosen at run time
        elif value is None or not _CUDA_DEVICE.match(value):
            return
        keep = [
            kw
            for kw in node.keywords
            if kw.arg in ("non_blocking", "copy", "memory_format", "dtype")
        ]
        # `.to("cuda:1")` names a device: replacing it needs the author's intent
        simple = value == "cuda" and len(node.args) == 1 and len(keep) == len(node.keywords)
        call = f'.to("{value}")'
        arg = _device_arg(node)
        if arg is not None and arg.lineno > (func.end_lineno or node.lineno):
            where = arg  # `.to(\n    "cuda"\n)`: the literal's own line
    else:
        return
    device = (
        ctx.bound_in_scope(rule.options.get("device_names", ["device"]), node) if simple else None
    )
    if device is not None:
        args = ", ".join([device] + [ctx.text_of(kw) for kw in keep])
        between = ctx.source.segment(*_zero_based(ctx, func.value, node))
        if "#" not in between and all(args.split(", ")):
            edit = ctx.edit(func.value, node, f".to({args})", from_end=True)
            fix = Fix("safe", f"Replace with `.to({args})`", (edit,))
            ctx.report(rule, where, fix, call=call, replacement=f".to({device})")
            return
    fix = Fix(
        "suggestion",
        "Move it with `.to(device)`, device chosen once (e.g. torch.accelerator.current_accelerator())",
    )
    ctx.report(rule, where, fix, call=call, replacement=".to(device)")


def _cuda_fstring(node: ast.AST | None) -> bool:
    """f"cuda:{index}": an f-string that starts with the CUDA device prefix."""
    return (
        isinstance(node, ast.JoinedStr)
        and bool(node.values)
        and (const_str(node.values[0]) or "").startswith("cuda:")
    )


def _zero_based(ctx: Context, start: ast.AST, end: ast.AST) -> tuple[int, int, int, int]:
    _, _, line, col = ctx.span(start)
    _, _, end_line, end_col = ctx.span(end)
    return line, col - 1, end_line, end_col - 1


def _assigned_name(target: ast.AST) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return ""


@checker("cuda_device_string", ast.Constant)
def cuda_device_string(node: ast.Constant, ctx: Context, rule: Rule) -> None:
    """ "cuda"/"cuda:N" literals (and f"cuda:{i}") where a device is expected."""
    value = node.value
    if not isinstance(value, str) or not value.startswith("cuda") or ctx.in_test:
        return
    subject: ast.AST = node
    depth = 1
    if _CUDA_DEVICE.match(value):
        pass
    elif value == "cuda:" and isinstance(ctx.parent(1), ast.JoinedStr):
        subject, depth = ctx.parent(1), 2
    else:
        return
    parent = ctx.parent(depth)
    names = tuple(rule.options.get("device_names", ("device",)))
    keywords = rule.options.get("keywords", ["device", "map_location"])
    hit = False
    callee_of_device: str | None = None  # the device function the literal is given to
    functions = rule.options.get("device_functions", ("torch.device",))
    if isinstance(parent, ast.Call):
        # torch.device("cuda"), torch.set_default_device("cuda"), torch.autocast("cuda"):
        # the device is the first argument
        callee_of_device = _callee(ctx, parent.func)
        hit = callee_of_device in functions and parent.args[:1] == [subject]
        # Model(cfg, "cuda") where this module defines `Model.__init__(self, cfg, device)`
        hit = hit or any(n in own_parameter(ctx, parent, subject).lower() for n in names)
    elif isinstance(parent, ast.keyword):
        call = ctx.parent(depth + 1)
        is_to = (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "to"
        )
        # `.to(device="cuda")` is the .to rule's; check_device(x, device="cuda") tests
        callee = (last_name(call.func) or "") if isinstance(call, ast.Call) else ""
        is_query = callee.lstrip("_").startswith(("check", "is_", "has_", "assert"))
        hit = parent.arg in keywords and not is_to and not is_query
        # torch.autocast(device_type="cuda"): the device keyword of a device function
        if not hit and parent.arg == "device_type" and isinstance(call, ast.Call):
            callee_of_device = _callee(ctx, call.func)
            hit = callee_of_device in functions
        # parser.add_argument("--device", default="cuda"), @click.option("--device", default="cuda")
        hit = hit or (parent.arg == "default" and _device_option(call, callee, names))
    elif isinstance(parent, (ast.Assign, ast.AnnAssign)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        hit = any(any(n in _assigned_name(t).lower() for n in names) for t in targets)
        # `loc = f"cuda:{rank}"` ... `torch.load(path, map_location=loc)`: a name of
        # any kind that the same function (or module) then hands over as a device
        hit = hit or any(
            isinstance(t, ast.Name) and _used_as_device(ctx, t.id, keywords, functions) for t in targets
        )
    elif isinstance(parent, ast.arguments):
        hit = any(n in _default_owner(parent, subject).lower() for n in names)
    elif isinstance(parent, ast.Dict):
        for key, val in zip(parent.keys, parent.values, strict=False):
            if val is subject and any(n in (const_str(key) or "").lower() for n in names):
                hit = True
    if hit:
        shown = value if subject is node else "cuda:{...}"
        effect = (
            "autocast warns and turns itself off where there is no CUDA device (full precision)"
            if (callee_of_device or "").endswith("autocast")
            else "fails where there is no CUDA device"
        )
        ctx.report(rule, subject, Fix("suggestion", rule.replacement), value=shown, effect=effect)


def own_parameter(ctx: Context, call: ast.Call, argument: ast.AST) -> str:
    """The name of the parameter that a positional `argument` of `call` binds,
    when the callee is defined in this module: a function, a class (its
    `__init__`) or a method called on `self`; "" otherwise."""
    func = call.func
    if isinstance(func, ast.Name):
        name, on_self = func.id, False
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        name, on_self = func.attr, True
    else:
        return ""
    if argument not in call.args or name.startswith(("register", "_register")):
        return ""  # register_backend("cuda", Impl): a table keyed by device, not a placement
    index = call.args.index(argument)
    if any(isinstance(a, ast.Starred) for a in call.args[:index]):
        return ""  # positions unknown after *args
    key = f"own_parameters:{name}:{on_self}"  # per file: the module text is read once per callee
    if key not in ctx.memo:
        text = ctx.module_text
        # f("cuda", ...) beside f("cpu", ...): one entry of a per-device dispatch
        ctx.memo[key] = None if _other_devices_given(text, name) else parameters_of(text, name, on_self)
    params = ctx.memo[key]
    return params[index] if params is not None and index < len(params) else ""


def parameters_of(text: str, name: str, method: bool) -> tuple[str, ...] | None:
    """The positional parameters of `def name(...)` in `text` (of a class
    `name`'s `__init__` when there is no such def), `self`/`cls` left out;
    None when it is not defined here, or defined more than once. Read from the
    module's whole text: narrowing may have blanked the definition."""
    defs = list(re.finditer(rf"^([ \t]*)(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", text, re.M))
    bound = method
    if not defs and not method:
        classes = list(re.finditer(rf"^class[ \t]+{re.escape(name)}\b[^\n]*:", text, re.M))
        if len(classes) != 1:
            return None
        start = classes[0].end()
        following = re.search(r"^\S", text[start:], re.M)  # the class ends at the next column-0 line
        body = text[start : start + following.start()] if following else text[start:]
        defs = [m for m in re.finditer(r"^([ \t]+)def[ \t]+__init__[ \t]*\(", body, re.M)]
        text, bound = body, True
    if len(defs) != 1:
        return None
    close = _closing_paren(text, defs[0].end())
    if close < 0:
        return None
    try:
        tree = ast.parse(f"def f({text[defs[0].end():close]}): pass")
    except SyntaxError:
        return None
    args = tree.body[0].args  # type: ignore[attr-defined]
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if bound and names and names[0] in ("self", "cls"):
        names = names[1:]
    elif bound:
        return None  # a staticmethod, or not what it seemed
    return tuple(names)


_OTHER_DEVICES = "cpu|mps|xpu|hpu|npu|mtia|hip|rocm|meta|privateuseone"


def _other_devices_given(text: str, name: str) -> bool:
    """Whether `text` calls `name` with another device's name somewhere."""
    pattern = rf"\b{re.escape(name)}\([^)\n]*?['\"](?:{_OTHER_DEVICES})(?::\d+)?['\"]"
    return re.search(pattern, text) is not None


def _closing_paren(text: str, start: int) -> int:
    """The offset of the `)` that closes a parameter list opened just before `start`."""
    depth = 1
    for at in range(start, min(len(text), start + 4000)):
        char = text[at]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at
    return -1


def _used_as_device(ctx: Context, name: str, keywords, functions) -> bool:
    """`name` is given as a device in the innermost function around the
    current node (or the module): a device keyword (`map_location=name`), a
    device function's first argument (`torch.device(name)`) or `.to(name)`."""
    scope = next(
        (n for n in reversed(ctx.stack) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), ctx.tree
    )
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call):
            continue
        if any(k.arg in keywords and isinstance(k.value, ast.Name) and k.value.id == name for k in node.keywords):
            return True
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Name) and first.id == name and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "to") or _callee(ctx, node.func) in functions
        ):
            return True
    return False


def _callee(ctx: Context, func: ast.AST) -> str | None:
    """The qualified callee, also through a local alias picked by a conditional
    (`scope = torch.autocast if amp else nullcontext` ... `scope("cuda")`)."""
    qual = ctx.qualify(func)
    if qual is None and isinstance(func, ast.Name):
        value = ctx.assigned_value(func)
        if isinstance(value, ast.IfExp):
            qual = ctx.qualify(value.body) or ctx.qualify(value.orelse)
        elif isinstance(value, (ast.Name, ast.Attribute)):
            qual = ctx.qualify(value)  # `scope = autocast` ... `scope("cuda")`
    return qual


_OPTION_CALLS = ("add_argument", "option", "argument", "Option", "Argument")


def _device_option(call: ast.AST | None, callee: str, names: tuple[str, ...]) -> bool:
    """A command-line option (argparse/click/typer) whose name or dest names a
    device, or whose choices are devices (`add_argument("backend", choices=["cpu",
    "cuda"])`): whatever its name, it picks where the program runs."""
    if not isinstance(call, ast.Call) or callee not in _OPTION_CALLS:
        return False
    labels = [const_str(a) or "" for a in call.args]
    labels += [const_str(k.value) or "" for k in call.keywords if k.arg in ("dest", "metavar")]
    if any(n in label.lower() for label in labels for n in names):
        return True
    choices = next((k.value for k in call.keywords if k.arg == "choices"), None)
    if not isinstance(choices, (ast.List, ast.Tuple, ast.Set)):
        return False
    offered = {const_str(e) for e in choices.elts}
    return "cpu" in offered and "cuda" in offered


def _default_owner(args: ast.arguments, default: ast.AST) -> str:
    positional = [*args.posonlyargs, *args.args]
    for arg, value in zip(
        positional[len(positional) - len(args.defaults) :], args.defaults, strict=False
    ):
        if value is default:
            return arg.arg
    for arg, value in zip(args.kwonlyargs, args.kw_defaults, strict=False):
        if value is default:
            return arg.arg
    return ""


def _amp_target(ctx: Context, node: ast.AST, rule: Rule) -> tuple[str, dict] | None:
    qual = ctx.qualify(node)
    if qual is None or not qual.startswith("torch.cuda.amp."):
        return None
    name = qual[len("torch.cuda.amp.") :]
    api = rule.options.get("apis", {}).get(name)
    return (qual, api) if api is not None else None


def _amp_use(node: ast.AST, parent: ast.AST | None) -> bool:
    """Called, used as a decorator, subclassed, or bound to another name."""
    if isinstance(parent, ast.Call):
        return parent.func is node
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node in parent.decorator_list
    if isinstance(parent, ast.ClassDef):
        return node in parent.bases
    return isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node


@checker("torch_cuda_amp", ast.Attribute, ast.Name)
def torch_cuda_amp(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """Deprecated `torch.cuda.amp.X` -> `torch.amp.X` with the device named."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return
    found = _amp_target(ctx, node, rule)
    if found is None:
        return
    qual, api = found
    new, device_arg = api["replacement"], api["device_arg"]
    shown = f"{new}({device_arg}, ...)"
    parent = ctx.parent()
    chosen = isinstance(parent, ast.IfExp) and node in (parent.body, parent.orelse)
    # `scope = torch.cuda.amp.autocast if fp16 else nullcontext`: chosen as a value, then bound
    if not (_amp_use(parent, ctx.parent(2)) if chosen else _amp_use(node, parent)):
        return  # `func is torch.cuda.amp.autocast`, tables of known APIs: not a use
    base = torch_base(ctx, node) if isinstance(node, ast.Attribute) else None
    fix = Fix("suggestion", f"Use `{shown}`")
    # the new API exists only from torch `since`: rewriting older code would break it
    applicability = "suggestion" if api.get("since") else "safe"
    if base is not None:
        local_new = base + new[len("torch") :]
        if isinstance(parent, ast.Call) and parent.func is node:
            paren = open_paren_after(ctx, node)
            plain = not parent.args  # positional parameters differ between the two APIs
            if paren is not None and plain:
                sep = ", " if parent.keywords else ""
                line, col, _, _ = ctx.span(node)
                edit = Edit(line, col, paren[0], paren[1], f"{local_new}({device_arg}{sep}")
                fix = Fix(applicability, f"Replace with `{shown}`{_since(api)}", (edit,))
        elif (
            isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node in parent.decorator_list
        ):
            edit = ctx.edit(node, node, f"{local_new}({device_arg})")
            fix = Fix(
                applicability, f"Replace with `{local_new}({device_arg})`{_since(api)}", (edit,)
            )
    ctx.report(rule, node, fix, call=qual, replacement=shown)


def _since(api: dict) -> str:
    return f" (needs torch {api['since']}+)" if api.get("since") else ""


@checker("cuda_backend_knob", ast.Attribute, ast.Call)
def cuda_backend_knob(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """Assignments to / calls of torch.backends.cudnn.* and torch.backends.cuda.* knobs."""
    if isinstance(node, ast.Attribute):
        if not isinstance(node.ctx, ast.Store):
            return
        target = node
    else:
        if ctx.in_test or not (node.args or node.keywords):
            return  # getters such as preferred_linalg_library() change nothing
        target = node.func
        if (last_name(target) or "a")[:1].isupper():
            return  # constructing a class (SDPAParams), not setting a knob
    qual = ctx.qualify(target)
    if qual is None or not qual.startswith(("torch.backends.cudnn.", "torch.backends.cuda.")):
        return
    knobs = rule.options.get("knobs", {})
    if qual not in knobs:
        return  # knobs that do nothing off CUDA and promise nothing are not findings
    if isinstance(node, ast.Attribute) and _assigned_false(node, ctx):
        return  # turning a CUDA-only promise off is harmless everywhere
    replacement = knobs[qual]
    ctx.report(rule, node, Fix("suggestion", replacement), knob=qual, replacement=replacement)


def _assigned_false(target: ast.Attribute, ctx: Context) -> bool:
    """`knob = False`, also as one element of `a, knob = x, False`."""
    parent = ctx.parent()
    value: ast.AST | None = None
    if isinstance(parent, ast.Assign):
        value = parent.value
    elif isinstance(parent, ast.Tuple) and isinstance(ctx.parent(2), ast.Assign):
        values = ctx.parent(2).value  # type: ignore[union-attr]
        if isinstance(values, ast.Tuple) and len(values.elts) == len(parent.elts):
            value = values.elts[parent.elts.index(target)]
    return isinstance(value, ast.Constant) and value.value is False


def _env_key(node: ast.AST, ctx: Context) -> ast.AST | None:
    """The key node of os.environ[...] = / os.environ.setdefault(...) / os.putenv(...)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript) and ctx.qualify(target.value) == "os.environ":
                return target.slice
        return None
    if isinstance(node, ast.Call):
        qual = ctx.qualify(node.func)
        if qual in ("os.environ.setdefault", "os.putenv", "os.environ.__setitem__") and node.args:
            return node.args[0]
        if qual == "os.environ.update":
            for kw in node.keywords:
                if kw.arg is not None:
                    return ast.Constant(kw.arg)
            for arg in node.args:
                if isinstance(arg, ast.Dict):
                    for key in arg.keys:
                        return key
    return None


@checker("env_after_import", ast.Assign, ast.Call)
def env_after_import(node: ast.AST, ctx: Context, rule: Rule) -> None:
    """An environment variable torch reads at import time, set after `import torch`."""
    variables = rule.options.get("variables", [])
    key = _env_key(node, ctx)
    if key is None:
        return
    name = const_str(key)
    if isinstance(node, ast.Call) and name is None and isinstance(key, ast.Constant):
        name = key.value
    if name not in variables:
        return
    imported = ctx.imports.first_line.get(rule.options.get("module", "torch"))
    if imported is None or imported >= node.lineno:
        return
    ctx.report(
        rule,
        node,
        Fix("suggestion", rule.replacement),
        respect_guards=False,
        variable=name,
        line=imported,
    )


def _device_literal(ctx: Context, node: ast.AST | None) -> str | None:
    """ "cuda" / "cpu" given as a string or as torch.device("...")."""
    if isinstance(node, ast.Call) and ctx.qualify(node.func) == "torch.device" and node.args:
        node = node.args[0]
    if _cuda_fstring(node):
        return "cuda"  # f"cuda:{local_rank}"
    value = const_str(node)
    if value is None:
        return None
    return "cuda" if _CUDA_DEVICE.match(value) else value


def _assigned_literal(ctx: Context, body: list[ast.stmt]) -> tuple[str, str | None] | None:
    """(target, device) of the branch's one assignment of a device name
    (`cfg.accelerator = "cuda"`); what else the branch sets beside it
    (`cfg.devices = 1`) or says (`warnings.warn(...)`) changes nothing,
    unless it reads the name just chosen (`src = f"ops_{device}.cu"`): then
    the string names a build variant, not where the program runs."""
    chosen = [
        (stmt, device)
        for stmt in body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and (device := _device_literal(ctx, stmt.value)) in _DEVICE_NAMES
    ]
    if len(chosen) != 1:
        return None
    assignment, device = chosen[0]
    target = ast.unparse(assignment.targets[0])
    for stmt in body:
        if stmt is not assignment and any(
            isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and ast.unparse(node) == target
            for node in ast.walk(stmt)
        ):
            return None
    return ast.dump(assignment.targets[0]), device


_DEVICE_NAMES = frozenset({"cuda", "cpu", "mps", "xpu", "hip"})


def _is_cuda_available(ctx: Context, test: ast.AST) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # `args.backend == "gpu" and torch.cuda.is_available()`: CUDA when both hold
        return any(_is_cuda_available(ctx, value) for value in test.values)
    if ctx.qualify(getattr(test, "func", None) or test) == "torch.cuda.is_available":
        return True
    value = ctx.assigned_value(test) if isinstance(test, ast.Name) else None
    return value is not None and any(
        isinstance(sub, ast.Call) and ctx.qualify(sub.func) == "torch.cuda.is_available"
        for sub in ast.walk(value)
    )


def _gpu_option(ctx: Context, test: ast.AST) -> bool:
    """The test reads a name for the GPU option itself (`opt.gpus`, `n_gpu`,
    `args.cuda`, `use_cuda`): the user picks CUDA or the CPU. A torch API
    (`func is torch.cuda.amp.autocast`) is no user's option."""
    for sub in ast.walk(test):
        name = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name) else None
        if name and guards.names_gpu_option(name) and not (ctx.qualify(sub) or "").startswith("torch."):
            return True
    return False


@checker("cuda_or_cpu_choice", ast.IfExp, ast.If)
def cuda_or_cpu_choice(node: ast.IfExp | ast.If, ctx: Context, rule: Rule) -> None:
    """`"cuda" if torch.cuda.is_available() else "cpu"`: never picks MPS (also
    through a flag: `cuda = torch.cuda.is_available()` ... `if cuda`, or a
    user's GPU option: `if opt.gpus[0] >= 0:`, `if args.use_cuda:`): a choice
    whose two sides are exactly CUDA and the CPU leaves Apple GPUs out. Other
    tests (`if backend == "nccl":`, a feature flag) choose for other reasons."""
    if not (_is_cuda_available(ctx, node.test) or _gpu_option(ctx, node.test)):
        return
    if isinstance(node, ast.IfExp):
        chosen = (_device_literal(ctx, node.body), _device_literal(ctx, node.orelse))
    else:
        then, other = _assigned_literal(ctx, node.body), _assigned_literal(ctx, node.orelse)
        if then is None or other is None or then[0] != other[0]:
            return  # not "one variable gets cuda or cpu"
        chosen = (then[1], other[1])
    if chosen != ("cuda", "cpu"):
        return
    if ctx.text_mentions(*rule.options.get("mps_markers", ("mps",))):
        return  # the module handles Apple GPUs somewhere
    ctx.report(
        rule, node.test if isinstance(node, ast.If) else node, Fix("suggestion", rule.replacement)
    )
