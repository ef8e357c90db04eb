"""The SemanticTest documentation's examples, read from the documentation itself at test time.

The documentation (``tests/shared.py``: ``SEMANTICTEST_DOCS``) is one text of pages, each starting at
a ``Source: https://docs.semantictest.dev/<page>`` line; its examples are fenced code blocks. This
repository keeps no copy of them: each file in ``pages/`` is one page's runnable suite written as
*where* each part comes from, ``{"$doc": "<page>#<n>/<JSON pointer>"}`` (the page's ``n``-th code
block, parsed, then the pointer into it), plus what we adapted (loopback URLs, ids, mock responses
standing in for services). :func:`resolve` turns such a file into the suite it stands for.

``python tests/docs_examples/docs_text.py SUITE.json PAGES_DIR`` writes the recipe of a suite (the
inverse of :func:`resolve`; it checks that resolving gives the suite back).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.shared import SEMANTICTEST_DOCS  # noqa: E402

PAGES = Path(__file__).resolve().parent / "pages"
"""One recipe per docs page (``pages/<name>.json``), resolved into the suite ``<name>.json``."""
_MIN_STRING = 12
"""Strings at least this long that the docs have are references; shorter ones are written out."""


def code_blocks(text: str) -> list[tuple[str, int, int, str]]:
    """``(page, index within the page, first line of the body, body)`` of every fenced code block of the
    documentation."""
    found: list[tuple[str, int, int, str]] = []
    page, start, counts = "", -1, dict[str, int]()
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if start < 0 and line.startswith("Source: https://docs.semantictest.dev/"):
            page = line.split(".dev/", 1)[1].strip()
        if not line.lstrip().startswith("```"):
            continue
        if start < 0:
            start = number
            continue
        index = counts.get(page, 0)
        counts[page] = index + 1
        found.append((page, index, start + 2, "\n".join(lines[start + 1 : number])))
        start = -1
    return found


def _parsed(body: str) -> Any:
    """A block's JSON; a fragment (``"key": value, ...``) inside braces; ``None`` if it is not JSON."""
    for candidate in (body, "{" + body.strip().rstrip(",") + "}"):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


@functools.lru_cache(maxsize=1)
def documented() -> dict[str, Any]:
    """``"<page>#<n>"`` -> the parsed JSON of that code block (blocks that are not JSON left out)."""
    blocks = code_blocks(SEMANTICTEST_DOCS.read_text(encoding="utf-8"))
    return {f"{page}#{n}": data for page, n, _, body in blocks if (data := _parsed(body)) is not None}


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def _at(where: str) -> Any:
    """The value a ``$doc`` reference names."""
    page, _, rest = where.partition("#")
    number, _, pointer = rest.partition("/")
    block = f"{page}#{number}"
    blocks = documented()
    if block not in blocks:
        raise LookupError(
            f"{where}: the documentation ({SEMANTICTEST_DOCS}) has no JSON code block {block!r}"
        )
    node = blocks[block]
    for part in pointer.split("/") if pointer else ():
        node = node[int(part)] if isinstance(node, list) else node[_unescape(part)]
    return node


def resolve(recipe: Any) -> Any:
    """``recipe`` with every ``{"$doc": ...}`` replaced by the documentation's value it names."""
    if isinstance(recipe, dict):
        if set(recipe) == {"$doc"}:
            return json.loads(json.dumps(_at(recipe["$doc"])))  # a copy of its own
        return {key: resolve(value) for key, value in recipe.items()}
    if isinstance(recipe, list):
        return [resolve(value) for value in recipe]
    return recipe


def page_suite(name: str) -> dict[str, Any]:
    """The suite ``name`` (``mock_data.json``) of ``pages/``, resolved from the documentation."""
    suite: dict[str, Any] = resolve(json.loads((PAGES / name).read_text(encoding="utf-8")))
    return suite


def page_names() -> list[str]:
    return sorted(p.name for p in PAGES.glob("*.json"))


def _subtrees(node: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    yield pointer, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _subtrees(value, f"{pointer}/{_escape(key)}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _subtrees(value, f"{pointer}/{i}")


def _worth_a_reference(node: Any) -> bool:
    return bool(node) and isinstance(node, (dict, list)) or isinstance(node, str) and len(node) >= _MIN_STRING


def _index(page: str) -> dict[str, str]:
    """Canonical JSON -> where the docs have it, ``page``'s own blocks first."""
    found: dict[str, str] = {}
    blocks = sorted(documented().items(), key=lambda item: item[0].split("#")[0] != page)
    for block, data in blocks:
        for pointer, node in _subtrees(data):
            if _worth_a_reference(node):
                found.setdefault(json.dumps(node, sort_keys=True), block + pointer)
    return found


def recipe_of(node: Any, index: dict[str, str]) -> Any:
    """``node`` with each largest part the docs have replaced by a reference to it."""
    if _worth_a_reference(node) and (where := index.get(json.dumps(node, sort_keys=True))):
        return {"$doc": where}
    if isinstance(node, dict):
        return {key: recipe_of(value, index) for key, value in node.items()}
    if isinstance(node, list):
        return [recipe_of(value, index) for value in node]
    return node


def _page_of(suite: dict[str, Any]) -> str:
    match = re.search(r"docs\.semantictest\.dev/(\S+?)[\s,]", str(suite.get("description", "")) + " ")
    return match.group(1) if match else ""


def write_recipe(suite_file: Path, pages: Path) -> Path:
    suite = json.loads(suite_file.read_text(encoding="utf-8"))
    index = _index(_page_of(suite))
    recipe = {
        key: value if key in ("name", "description") else recipe_of(value, index)
        for key, value in suite.items()
    }
    if resolve(recipe) != suite:
        raise AssertionError(f"{suite_file}: its recipe does not resolve to it")
    pages.mkdir(exist_ok=True)
    out = pages / suite_file.name
    out.write_text(json.dumps(recipe, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    print(write_recipe(Path(sys.argv[1]), Path(sys.argv[2])))
