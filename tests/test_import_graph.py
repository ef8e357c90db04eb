"""The package's import graph, read from its source with ``ast``: no circle, no module over 400 lines.

Every ``import`` counts, at module level and inside functions alike (a deferred import is still a
dependency); only imports under ``if TYPE_CHECKING:`` are left out (they never run). Relative
imports are resolved; ``from x import y`` where ``y`` is a submodule of ``x`` counts as importing
``x.y`` (and not ``x`` itself, unless some imported name is defined there). Importing ``a.b.c``
also runs the ``__init__`` of ``a`` and ``a.b`` first, so it is an edge to those packages too,
except to the packages the importing module is itself inside (they are already being imported).
Imports by a name computed at run time (``importlib.import_module``: the plugin's format loaders)
are not seen.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "pytest_semantictest"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
MAX_LINES = 400


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
"""The nodes an import statement can be under (an expression holds none: only its statements are walked)."""


def _imports(node: ast.AST, typing: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``; those under ``if TYPE_CHECKING:`` (not its ``else``)
    only with ``typing``."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _HOLDS_STATEMENTS):
            continue
        if isinstance(child, ast.If) and _is_type_checking(child.test) and not typing:
            for other in child.orelse:
                yield from _imports_in(other, typing)
        else:
            yield from _imports_in(child, typing)


def _imports_in(node: ast.AST, typing: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    yield from _imports(node, typing)


@functools.cache
def _import_nodes(path: Path, typing: bool) -> list[ast.Import | ast.ImportFrom]:
    """A module's import statements, read once for all the tests here."""
    return list(_imports(_tree(path), typing))


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def edges(name: str, path: Path, known: dict[str, Path], typing: bool = False) -> set[str]:
    """The package's modules that module ``name`` imports (``typing``: also for type checkers)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _import_nodes(path, typing):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
            targets = subs
            if len(subs) < len(node.names):  # a name defined in ``base`` itself
                targets = [*subs, base]
        out.update(t for t in targets if t in known)
    own = _packages(name) | {name}
    return {m for t in out for m in (_packages(t) | {t}) if m in known and m not in own}


def _packages(name: str) -> set[str]:
    """The packages ``name`` is inside (``a.b.c``: ``a``, ``a.b``)."""
    parts = name.split(".")
    return {".".join(parts[:n]) for n in range(1, len(parts))}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: edges(name, path, known) for name, path in known.items()}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, ..., a]``), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(g):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_graph_is_read_from_the_source() -> None:
    """The reader sees what it must: deferred imports, relative levels, submodules by ``from``."""
    g = graph()
    assert "pytest_semantictest.engine.runner" in g
    assert "pytest_semantictest.model" in g["pytest_semantictest.engine.runner"]
    assert "pytest_semantictest.plugin" not in g["pytest_semantictest.model"]
    plugin = g["pytest_semantictest.plugin"]
    assert "pytest_semantictest.options" in plugin  # ``from . import options``: the submodule
    assert "pytest_semantictest.hookspecs" in plugin  # imported inside a function
    assert "pytest_semantictest" not in plugin  # the package it is inside
    compile_ = g["pytest_semantictest.formats.highbar.compile"]
    assert "pytest_semantictest.agents.config" in compile_
    assert "pytest_semantictest.agents" in compile_  # its __init__ runs first
    assert "pytest_semantictest.formats.highbar" not in compile_


def test_find_cycle_reports_the_circle() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(g) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


ROOMS = ("engine", "blocks", "checks", "report", "llm", "agents", "formats")
"""The packages below the pytest layer: they get the session's services passed in."""


def test_no_room_below_the_pytest_layer_imports_the_plugin_or_the_runtime() -> None:
    """Not even for type checkers: the report plugins get callables, the engine a context."""
    known = modules()
    above = {f"{PACKAGE}.plugin", f"{PACKAGE}.runtime"}
    found = {
        name: sorted(hits) for name, path in known.items()
        if name.split(".")[1:2] and name.split(".")[1] in ROOMS
        and (hits := edges(name, path, known, typing=True) & above)
    }
    assert len([n for n in known if n.split(".")[1:2] and n.split(".")[1] in ROOMS]) > 50
    assert not found, f"imports of the pytest layer from below it: {found}"


def test_no_module_over_400_lines() -> None:
    long = {
        name: n for name, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"
