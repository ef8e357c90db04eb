"""The share of the package's functions whose cyclomatic complexity is 11 or more (McCabe's count, as
ruff's C901 and the ``mccabe`` package count it: 1, plus 1 for each ``if``/``elif``, loop, ``except``,
``case``, comprehension ``for`` and ``if``, conditional expression and each extra operand of
``and``/``or``; a nested function counts in its own right). Target: under 6%. Usage::

    python bench/bench_complexity.py [--list N]   # the share, and the N most complex functions
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_semantictest"
THRESHOLD = 11
TARGET = 0.06

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def complexity(function: ast.AST) -> int:
    """McCabe's number of ``function``, not counting the functions defined inside it."""
    count = 1
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, _FUNCTIONS):
            continue
        if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.IfExp, ast.ExceptHandler)):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        elif isinstance(node, ast.match_case):
            count += 1
        todo.extend(ast.iter_child_nodes(node))
    return count


def functions(root: Path = PACKAGE) -> list[tuple[str, int]]:
    """``(module:line name, complexity)`` of every function and method under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"
                found.append((where, complexity(node)))
    return found


def main(argv: list[str]) -> int:
    found = functions()
    complex_ones = sorted((f for f in found if f[1] >= THRESHOLD), key=lambda f: -f[1])
    share = len(complex_ones) / len(found)
    print(
        f"{len(complex_ones)} of {len(found)} functions have cyclomatic complexity >= {THRESHOLD}: "
        f"{share:.1%} (target: under {TARGET:.0%})"
    )
    if argv[:1] == ["--list"]:
        for where, number in complex_ones[: int(argv[1]) if len(argv) > 1 else 20]:
            print(f"  {number:3d}  {where}")
    return 0 if share < TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
