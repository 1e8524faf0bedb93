#!/usr/bin/env python3
"""Cross-file checks of GitHub workflows that a JSON schema cannot make.

check-jsonschema proves each file has the shape GitHub accepts; this proves the
files agree with each other and with portagpu:

- YAML without duplicate keys (GitHub rejects them; PyYAML keeps the last one);
- every `inputs.NAME` a reusable workflow uses is declared under workflow_call;
- a local call (`uses: ./.github/workflows/X.yml`) names a workflow beside the
  caller here (ci/github/X.yml), passes only inputs it declares, every input it
  requires, and literal booleans/numbers where it expects them;
- `needs:` names existing jobs, `steps.ID` names a step of the same job, and the
  default of an input read through `fromJSON(inputs.NAME)` is valid JSON;
- every `portagpu ...` command in a `run:` script parses with portagpu's own
  argument parser, so a renamed flag fails here, not in a user's CI.

- and the `portagpu` entries of a pre-commit hook manifest (--hooks FILE) parse
  the same way.

Usage: check_workflows.py [--hooks .pre-commit-hooks.yaml] WORKFLOW.yml...
Exit 1 if any problem, one line each.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
INPUT_REF = re.compile(r"\binputs\.([A-Za-z_][\w-]*)")
STEP_REF = re.compile(r"\bsteps\.([A-Za-z_][\w-]*)")
FROM_JSON_INPUT = re.compile(r"fromJSON\(\s*inputs\.([A-Za-z_][\w-]*)\s*\)")
LOCAL_CALL = re.compile(r"^\./\.github/workflows/([^/]+\.ya?ml)$")
SHELL_VAR = re.compile(r"\$(?:\{\w+\}|\w+)")


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load(path: Path) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506
    if not isinstance(data, dict):
        raise ValueError("not a mapping at the top level")
    if True in data and "on" not in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def triggers(workflow: dict[str, Any]) -> dict[str, Any]:
    on = workflow.get("on") or {}
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return on


def declared_inputs(workflow: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """workflow_call inputs, or None if the workflow is not reusable."""
    on = triggers(workflow)
    if "workflow_call" not in on:
        return None
    return dict((on["workflow_call"] or {}).get("inputs") or {})


def expressions(node: Any) -> Iterator[str]:
    """The expressions in `node`: every ${{ ... }}, and `if:` values, which GitHub
    evaluates as expressions without the braces."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "if" and isinstance(value, str) and "${{" not in value:
                yield value
            else:
                yield from expressions(value)
    elif isinstance(node, list):
        for value in node:
            yield from expressions(value)
    elif isinstance(node, str):
        yield from EXPRESSION.findall(node)


def check_workflow(path: Path, workflow: dict[str, Any]) -> Iterator[str]:
    inputs = declared_inputs(workflow)
    if inputs is not None:
        for name in sorted({m for e in expressions(workflow) for m in INPUT_REF.findall(e)}):
            if name not in inputs:
                yield f"{path}: uses inputs.{name}, which workflow_call does not declare"
        for name in sorted({m for e in expressions(workflow) for m in FROM_JSON_INPUT.findall(e)}):
            default = (inputs.get(name) or {}).get("default")
            if isinstance(default, str):
                try:
                    json.loads(default)
                except ValueError as exc:
                    yield f"{path}: inputs.{name} is read with fromJSON but its default is not JSON: {exc}"
    jobs = workflow.get("jobs") or {}
    for job_id, job in jobs.items():
        where = f"{path}: job {job_id}"
        needs = job.get("needs") or []
        for need in [needs] if isinstance(needs, str) else needs:
            if need not in jobs:
                yield f"{where}: needs unknown job {need!r}"
        step_ids = {step.get("id") for step in job.get("steps") or [] if step.get("id")}
        for name in sorted({m for e in expressions(job) for m in STEP_REF.findall(e)}):
            if name not in step_ids:
                yield f"{where}: refers to steps.{name}, but no step has that id"
        uses = job.get("uses")
        if isinstance(uses, str) and (match := LOCAL_CALL.match(uses)):
            yield from check_call(path, job_id, path.parent / match.group(1), job.get("with") or {})
        for step in job.get("steps") or []:
            if isinstance(step.get("run"), str):
                for problem in check_portagpu_commands(step["run"]):
                    yield f"{where}: step {step.get('name') or step.get('id') or '?'!r}: {problem}"


def check_call(path: Path, job_id: str, target: Path, given: dict[str, Any]) -> Iterator[str]:
    where = f"{path}: job {job_id}"
    if not target.is_file():
        yield f"{where}: calls {target.name}, which is not beside it in {path.parent}"
        return
    inputs = declared_inputs(load(target))
    if inputs is None:
        yield f"{where}: calls {target.name}, which has no workflow_call trigger"
        return
    for name, value in given.items():
        spec = inputs.get(name)
        if spec is None:
            yield f"{where}: passes {name!r}, which {target.name} does not declare"
            continue
        literal = not (isinstance(value, str) and "${{" in value)
        kind = spec.get("type")
        if literal and kind == "boolean" and not isinstance(value, bool):
            yield f"{where}: {name!r} is a boolean input, got {value!r}"
        if literal and kind == "number" and (isinstance(value, bool)
                                             or not isinstance(value, int | float)):
            yield f"{where}: {name!r} is a number input, got {value!r}"
    for name, spec in inputs.items():
        if spec.get("required") and "default" not in spec and name not in given:
            yield f"{where}: does not pass {name!r}, which {target.name} requires"


def portagpu_commands(script: str) -> Iterator[list[str]]:
    """`portagpu ...` commands of a shell script, shell variables as placeholders."""
    for line in script.replace("\\\n", " ").splitlines():
        # $LINT_PATHS, "$LINT_TARGETS": one word that argparse takes as a value
        lexer = shlex.shlex(SHELL_VAR.sub("placeholder", line), posix=True,
                            punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # not plain shell (a heredoc, say): nothing to check here
            continue
        command: list[str] = []
        for token in [*tokens, ";"]:
            if token and set(token) <= set("|&;<>()"):  # an operator ends the command
                if command[:1] == ["portagpu"]:
                    yield command
                command = []
                # after a redirection the next word is its file, not an argument
                command = ["<redirect>"] if token in (">", ">>", "<") else command
            elif command == ["<redirect>"]:
                command = ["<skip>"]
            else:
                command.append(token)


def check_portagpu_commands(script: str) -> Iterator[str]:
    try:
        from portagpu.cli import build_parser
    except ImportError:  # validating without portagpu installed: schema checks only
        return
    parser = build_parser()
    for argv in portagpu_commands(script):
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(argv[1:])
        except SystemExit as exc:
            if exc.code:
                message = stderr.getvalue().strip().splitlines()
                yield f"`{shlex.join(argv)}` does not parse: {message[-1] if message else exc}"


def check_hooks(path: Path) -> Iterator[str]:
    hooks = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506
    for hook in hooks if isinstance(hooks, list) else []:
        entry = hook.get("entry", "") if isinstance(hook, dict) else ""
        if entry.split()[:1] == ["portagpu"]:
            # pre-commit appends args, then the file names
            script = shlex.join([*shlex.split(entry), *map(str, hook.get("args") or []),
                                 "example.py"])
            for problem in check_portagpu_commands(script):
                yield f"{path}: hook {hook.get('id')!r}: {problem}"


def main(argv: list[str]) -> int:
    problems: list[str] = []
    if argv[:1] == ["--hooks"] and len(argv) > 1:
        try:
            problems.extend(check_hooks(Path(argv[1])))
        except (OSError, yaml.YAMLError) as exc:
            problems.append(f"{argv[1]}: {str(exc).splitlines()[0]}")
        argv = argv[2:]
    for name in argv:
        path = Path(name)
        try:
            workflow = load(path)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            problems.append(f"{path}: {str(exc).splitlines()[0] if str(exc) else exc!r}")
            continue
        problems.extend(check_workflow(path, workflow))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
