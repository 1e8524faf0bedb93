"""Import-alias resolution: local names -> fully qualified dotted names.

`import torch as t`, `from torch import cuda`, `from torch.cuda import amp`
and `import pynvml as nv` all bind a local name; `qualify(t.cuda.synchronize)`
then gives "torch.cuda.synchronize". The map is module-wide (imports inside
functions included), which matches how GPU code binds these names in practice.
"""

from __future__ import annotations

import ast


class ImportMap:
    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # local name -> qualified name
        self.first_line: dict[str, int] = {}  # top-level package -> first import line
        self.nodes: list[ast.Import | ast.ImportFrom] = []

    def add(self, node: ast.Import | ast.ImportFrom, *, fallback: bool = False) -> None:
        """`fallback`: an import in `except ImportError:`, the old-version
        alternative; it does not rebind a name the `try:` body bound."""
        self.nodes.append(node)
        bind = self.names.setdefault if fallback else self.names.__setitem__
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bind(alias.asname, alias.name)
                else:
                    top = alias.name.partition(".")[0]
                    bind(top, top)
                self._seen(alias.name, node.lineno)
        else:
            if node.level or not node.module:
                return  # relative imports name the project's own modules
            self._seen(node.module, node.lineno)
            for alias in node.names:
                if alias.name == "*":
                    continue
                bind(alias.asname or alias.name, f"{node.module}.{alias.name}")

    def _seen(self, module: str, line: int) -> None:
        top = module.partition(".")[0]
        if top not in self.first_line or line < self.first_line[top]:
            self.first_line[top] = line

    def qualify(self, node: ast.AST) -> str | None:
        """Qualified name of a Name/Attribute chain rooted at an imported name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.names.get(node.id)
        if base is None:
            return None
        if not parts:
            return base
        parts.append(base)
        return ".".join(reversed(parts))
