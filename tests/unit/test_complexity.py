"""The package stays readable: under 6% of its functions have a cyclomatic complexity of 11 or more
(``bench/bench_complexity.py`` counts them and lists the worst; this test holds the line it prints)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_complexity.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_complexity", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_complexity", module)
    spec.loader.exec_module(module)
    return module


def test_under_six_percent_of_the_functions_are_complex() -> None:
    bench = _bench()
    found = bench.functions()
    complex_ones = sorted((f for f in found if f[1] >= bench.THRESHOLD), key=lambda f: -f[1])
    assert len(found) > 1000  # the whole package was read
    assert len(complex_ones) / len(found) < bench.TARGET, complex_ones[:20]


def test_the_count_sees_branches() -> None:
    """McCabe's number of a function with an ``if``, a loop with a condition and an ``and``: 5."""
    import ast

    function = ast.parse(
        "def f(x):\n    if x and x > 1:\n        return [i for i in x if i]\n    return 0\n"
    ).body[0]
    assert _bench().complexity(function) == 5
