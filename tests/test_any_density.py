"""How loose the package's doors are: uses of ``Any`` per thousand lines, printed and bounded.

``Any`` counts as a name in the syntax tree (``Any``, ``typing.Any``), wherever it appears:
annotations, casts, aliases. Arbitrary JSON is typed with ``json_types.JSONValue``, whose one
definition is the one ``Any`` it needs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "pytest_semantictest"
MAX_PER_KLOC = 15.0


def any_uses(source: str) -> int:
    """How many times ``source`` names ``Any``."""
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    )


def test_any_uses_are_counted() -> None:
    assert any_uses("from typing import Any\nx: Any = 1\ny: typing.Any\n# Any\n'Any'") == 2


def test_any_density() -> None:
    uses = lines = json_uses = 0
    worst: list[tuple[int, str]] = []
    for path in sorted(ROOT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        n = any_uses(source)
        uses += n
        json_uses += len(re.findall(r"\bJSON(?:Value|Object)\b", source))
        lines += len(source.splitlines())
        worst.append((n, str(path.relative_to(ROOT))))
    density = uses * 1000 / lines
    print(
        f"Any: {uses} uses in {lines} lines = {density:.1f} per 1000 lines (at most {MAX_PER_KLOC}); "
        f"arbitrary JSON (JSONValue, JSONObject): {json_uses} uses"
    )
    top = ", ".join(f"{name} {n}" for n, name in sorted(worst, reverse=True)[:5])
    assert density <= MAX_PER_KLOC, f"{density:.1f} uses of Any per 1000 lines; most in: {top}"
