"""The package's import graph, read from its source with ``ast``: rooms as docs/architecture.md draws
them, no circle, no module over 400 lines.

Every ``import`` counts, at module level and inside functions alike (a deferred import is still a
dependency), and so do those under ``if TYPE_CHECKING:`` (a type checker follows them: a loop there
is a loop for it). Relative imports are resolved; ``from x import y`` where ``y`` is a submodule of
``x`` counts as importing ``x.y`` (and not ``x`` itself, unless some imported name is defined there).
Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b`` first, so it is an edge to those
packages too, except to the packages the importing module is itself inside (they are already being
imported). Imports by a name computed at run time (``importlib.import_module``: the plugin's format
loaders, the block registry's built-ins) are not seen.

A **room** is a folder of the package, another top-level module, or the pytest layer (the modules
the table's pytest layer row names, and every module or package called ``pytest_glue``); the table
in docs/architecture.md lists, for each room, the rooms it imports. That table is the one statement
of the rules: the tests below read it.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "pytest_semantictest"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
ARCHITECTURE = ROOT.parent / "docs" / "architecture.md"
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


def graph(typing: bool = True) -> dict[str, set[str]]:
    """Module -> the modules it imports (``typing``: type-only imports too)."""
    known = modules()
    return {name: edges(name, path, known, typing) for name, path in known.items()}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, ..., a]``), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
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
    """Between modules, type-only imports included."""
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_type_only_imports_count() -> None:
    late_calls = f"{PACKAGE}.late_calls"
    assert f"{PACKAGE}.redact" in graph()[late_calls]  # under ``if TYPE_CHECKING:`` only
    assert f"{PACKAGE}.redact" not in graph(typing=False)[late_calls]


LAYER_ROW = "pytest layer"
PACKAGE_ROOM = "__init__.py"
_CODE = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class RoomTable:
    """The rooms table of docs/architecture.md: each room's allowed imports, and the layer's modules."""

    imports: dict[str, frozenset[str]]
    layer_modules: frozenset[str]


def _room_token(token: str) -> str:
    """A room as the table spells it: ``engine/`` (a folder), ``model.py`` (a module), ``__init__.py``."""
    if token == PACKAGE_ROOM:
        return PACKAGE_ROOM
    if token.endswith("/"):
        return token[:-1]
    if token.endswith(".py") and "/" not in token:
        return token[:-3]
    raise AssertionError(
        f"docs/architecture.md, rooms table: `{token}` is not a room (write `name/` for a "
        f"folder, `name.py` for a top-level module)"
    )


@functools.cache
def room_table() -> RoomTable:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## The rooms\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| room ")]
    imports: dict[str, frozenset[str]] = {}
    layer: frozenset[str] = frozenset()
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) == 3, f"docs/architecture.md, rooms table: a row needs 3 cells: {row}"
        first, last = cells[0], cells[-1]
        if first.startswith(LAYER_ROW):
            room = "pytest"
            names = _CODE.findall(first)
            assert "pytest_glue" in first, "the pytest layer row must name the pytest_glue modules"
            layer = frozenset(n[:-3] for n in names if n.endswith(".py") and "/" not in n)
        else:
            names = _CODE.findall(first)
            assert len(names) == 1, (
                f"docs/architecture.md, rooms table: name one room in the first cell: {row}"
            )
            room = _room_token(names[0])
        allowed = {_room_token(t) for t in _CODE.findall(last)}
        if LAYER_ROW in last:
            allowed.add("pytest")
        assert room not in imports, f"docs/architecture.md, rooms table: two rows for {room}"
        imports[room] = frozenset(allowed)
    return RoomTable(imports, layer)


def room_of(module: str, layer: frozenset[str]) -> str:
    """The room of a dotted module name (see the module doc)."""
    parts = module.split(".")[1:]
    if not parts:
        return PACKAGE_ROOM
    if "pytest_glue" in parts or parts[0] in layer:
        return "pytest"
    return parts[0]


def room_edges() -> dict[str, dict[str, set[str]]]:
    """Room -> room it imports -> the module imports that make the edge (``a -> b``)."""
    layer = room_table().layer_modules
    found: dict[str, dict[str, set[str]]] = {}
    for name, targets in graph().items():
        here = room_of(name, layer)
        found.setdefault(here, {})
        for target in targets:
            there = room_of(target, layer)
            if there != here:
                found[here].setdefault(there, set()).add(f"{name} -> {target}")
    return found


def test_the_rooms_table_is_read_from_the_doc() -> None:
    table = room_table()
    assert len(table.imports) > 30
    assert {"plugin", "nodes", "runtime", "cli", "api"} <= table.layer_modules
    assert "pytest" in table.imports[PACKAGE_ROOM] and "pytest" not in table.imports["engine"]
    assert table.imports["errors"] == frozenset({"shown"})
    layer = table.layer_modules
    assert room_of(f"{PACKAGE}.formats.yao.pytest_glue.generation", layer) == "pytest"
    assert room_of(f"{PACKAGE}.mutate.pytest_glue", layer) == "pytest"
    assert room_of(f"{PACKAGE}.mutate.tape", layer) == "mutate"
    assert room_of(f"{PACKAGE}.engine.runner", layer) == "engine"
    assert room_of(PACKAGE, layer) == PACKAGE_ROOM


def test_every_room_has_a_row_and_every_row_is_a_room() -> None:
    rooms = set(room_edges())
    listed = set(room_table().imports)
    assert rooms - listed == set(), f"rooms without a row in docs/architecture.md: {sorted(rooms - listed)}"
    assert listed - rooms == set(), f"rows of docs/architecture.md naming no room: {sorted(listed - rooms)}"
    unknown = {room: sorted(out - listed) for room, out in room_table().imports.items() if out - listed}
    assert not unknown, f"rooms table of docs/architecture.md: imports of rooms without a row: {unknown}"


def test_a_room_imports_only_the_rooms_its_row_lists() -> None:
    """Type-only imports included: add the room to the row only if the layering stays a line."""
    allowed = room_table().imports
    wrong = {
        f"{here} -> {there}": sorted(why)[:5]
        for here, out in room_edges().items()
        for there, why in out.items()
        if there not in allowed.get(here, frozenset())
    }
    assert not wrong, f"imports the rooms table of docs/architecture.md does not allow: {wrong}"


def test_a_row_lists_only_rooms_its_room_imports() -> None:
    """The table says what the code does: an import that went away leaves the row."""
    edges = room_edges()
    stale = {
        here: sorted(rooms - set(edges.get(here, {})))
        for here, rooms in room_table().imports.items()
        if rooms - set(edges.get(here, {}))
    }
    assert not stale, f"rooms table of docs/architecture.md: rooms listed but not imported: {stale}"


def test_no_loop_between_rooms() -> None:
    edges = room_edges()
    cycle = find_cycle({room: set(out) for room, out in edges.items()})
    assert cycle is None, (
        "rooms import each other in a loop: "
        + " -> ".join(cycle or [])
        + "; "
        + "; ".join(sorted(edges[a][b])[0] for a, b in zip(cycle or [], (cycle or [])[1:]))
    )
    table = room_table().imports
    assert find_cycle({room: set(out) & set(table) for room, out in table.items()}) is None


def _reads_own_module(node: ast.AST) -> bool:
    """Whether a statement names one of the package's own modules (``__package__``, ``__name__``,
    or a string with the package's name)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in ("__package__", "__name__"):
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and PACKAGE in sub.value:
            return True
    return False


def test_no_module_looks_up_the_package_in_sys_modules() -> None:
    """``sys.modules.get(f"{__package__}.nodes")`` goes around the rooms' rules: import, or pass it in."""
    found = []
    for name, path in modules().items():
        for stmt in ast.walk(_tree(path)):
            if not isinstance(stmt, ast.stmt) or isinstance(
                stmt,
                (
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.ClassDef,
                    ast.If,
                    ast.For,
                    ast.While,
                    ast.With,
                    ast.Try,
                    ast.AsyncWith,
                    ast.AsyncFor,
                ),
            ):
                continue
            uses = any(
                isinstance(sub, ast.Attribute)
                and sub.attr == "modules"
                and isinstance(sub.value, ast.Name)
                and sub.value.id == "sys"
                for sub in ast.walk(stmt)
            )
            if uses and _reads_own_module(stmt):
                found.append(f"{name}:{stmt.lineno}")
    assert not found, f"sys.modules look-ups of the package's own modules: {found}"


def test_the_sys_modules_rule_sees_a_look_up() -> None:
    stmt = ast.parse('nodes = sys.modules.get(f"{__package__}.nodes")').body[0]
    assert _reads_own_module(stmt)
    (condition,) = ast.parse("if name in sys.modules: pass").body
    assert isinstance(condition, ast.If) and not _reads_own_module(condition.test)


def test_no_module_over_400_lines() -> None:
    long = {
        name: n
        for name, path in modules().items()
        # non-blank lines: what a reader reads, however the formatter spreads a call over lines
        if (n := sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def _spelled(room: str) -> str:
    if room == "pytest":
        return "pytest layer"
    if room == PACKAGE_ROOM:
        return PACKAGE_ROOM
    return f"`{room}/`" if (ROOT / room).is_dir() else f"`{room}.py`"


if __name__ == "__main__":  # ``python tests/test_import_graph.py``: each room's imports, for the table
    for here, out in sorted(room_edges().items()):
        listed = ", ".join(sorted((_spelled(r) for r in out), key=lambda s: (s == "pytest layer", s))) or "—"
        print(f"{_spelled(here)}: {listed}")
