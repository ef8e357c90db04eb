"""The public API is what ``pytest_semantictest.__all__`` names: each name resolves, importing the
package loads none of them, the modules defining them are type-checked strictly, and the block
docs import only public names."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TypeVar

import pytest

import pytest_semantictest

ROOT = Path(__file__).resolve().parent.parent


def test_every_public_name_resolves_to_what_its_home_defines() -> None:
    from pytest_semantictest.blocks.base import Block
    from pytest_semantictest.step import StepContext

    for name in pytest_semantictest.__all__:
        assert getattr(pytest_semantictest, name) is not None, name
    assert pytest_semantictest.Block is Block and pytest_semantictest.StepContext is StepContext
    assert set(dir(pytest_semantictest)) >= set(pytest_semantictest.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Runtime'"):
        pytest_semantictest.Runtime  # noqa: B018  internal: not a public name


def test_importing_the_package_loads_no_public_name() -> None:
    """Start-up stays cheap: the names are imported on first use."""
    code = (
        "import sys, pytest_semantictest; "
        "print(sorted(m for m in sys.modules if m.startswith('pytest_semantictest')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['pytest_semantictest']"


def test_the_modules_of_the_public_names_are_type_checked_strictly() -> None:
    """``strict`` for the whole package, and no override of one of its modules loosens it."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy.get("strict") is True and mypy.get("files") == ["pytest_semantictest"]
    ours = [
        o for o in mypy.get("overrides", []) if any(m.startswith("pytest_semantictest") for m in o["module"])
    ]
    assert ours == [], f"an override loosens the strict check of our modules: {ours}"


def test_the_block_docs_import_only_public_names() -> None:
    text = (ROOT / "docs" / "blocks.md").read_text(encoding="utf-8")
    imports = re.findall(r"^\s*from (pytest_semantictest[\w.]*) import (.+)$", text, re.MULTILINE)
    assert imports, "docs/blocks.md shows no import"
    for module, names in imports:
        assert module == "pytest_semantictest", f"docs/blocks.md imports from an internal module: {module}"
        for name in (n.strip() for n in names.split(",")):
            assert name in pytest_semantictest.__all__, f"docs/blocks.md imports {name}, not a public name"


def test_every_warning_of_ours_derives_from_semantictest_warning() -> None:
    """Users filter all our warnings at once (``-W ignore::pytest_semantictest.SemanticTestWarning``)."""
    import ast
    import importlib

    package = Path(pytest_semantictest.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Warning"):
                module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
                found.append(getattr(importlib.import_module(module), node.name))
    assert len(found) >= 5
    assert all(issubclass(cls, pytest_semantictest.SemanticTestWarning) for cls in found), found
    for name in ("pytest.PytestWarning(", "UserWarning("):
        assert not [p for p in package.rglob("*.py") if name in p.read_text(encoding="utf-8")], name


def test_the_api_module_names_what_it_offers() -> None:
    from pytest_semantictest import api

    public = {
        n
        for n, v in vars(api).items()
        if not n.startswith("_")
        and callable(v)
        and getattr(v, "__module__", "") == api.__name__
        and not isinstance(v, TypeVar)
    }
    assert set(api.__all__) == public
