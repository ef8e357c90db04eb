"""Which format a file is, decided cheaply (no heavy imports, no full parse) during pytest collection.

Each entry: a format name (also its pytest marker), a detector ``(path) -> bool`` and the
module whose ``make_loader(ctx: CollectContext) -> Callable[[Path], Suite]`` compiles files.
The detectors: ``detect_json`` (SemanticTest), the name (highbar), ``detect_yao``, ``detect_compliance``.

No file of ours is dropped silently: what makes a file look like one of ours never depends on the
keys being well formed. A detector accepts a broken file (truncated JSON, ``"tests": -Infinity``, a
front matter that is ``{}`` or in YAML flow style) and a *near miss* (a file clearly meant as one of
ours but missing a rule: ``transprot:`` in a compliance front matter, a Yao case without ``id``, a
broken first line), so its loader reports what is wrong as a collection error, in a folder run as
when the file is named. Ordinary Markdown and JSON/JSONL data files stay ignored. :func:`why_not_spec` says why a file
named on the command line is not a spec file (instead of pytest's bare "not found").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import registry
from .collect_context import CollectContext
from .detect_json import looks_like_suite, semantictest_json
from .detect_yao import as_object, jsonl_head, yao_jsonl

__all__ = [
    "FORMATS",
    "CollectContext",
    "compliance_markdown",
    "highbar_yaml",
    "looks_like_suite",
    "semantictest_json",
    "spec_format",
    "why_not_spec",
    "yao_jsonl",
]


def highbar_yaml(path: Path, ctx: CollectContext | None = None) -> bool:
    return path.name.endswith(".highbar.yaml")


def compliance_markdown(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.md`` with compliance front matter, or one meant as a compliance file (the rule:
    ``formats.detect_compliance``): its loader then says what is wrong."""
    if path.suffix != ".md":
        return False
    from .detect_compliance import why_compliance

    return why_compliance(path) is not None


def why_not_spec(path: Path) -> str | None:
    """Why ``path`` (named on the command line, collected by nobody) is not a spec file of any format,
    or None when its kind is not one of ours (pytest's own "not found" stands)."""
    if path.name.endswith((".yaml", ".yml")):
        return "not a highbar spec: highbar specs are named *.highbar.yaml"
    explain = _WHY_NOT.get(path.suffix)
    return explain(path) if explain is not None else None


def _not_a_suite(path: Path) -> str:
    return 'not a SemanticTest suite: a suite is a JSON object with a top-level "tests" array' + (
        ' (this file\'s "tests" is nested inside something else)' if b'"tests"' in _bytes(path) else ""
    )


def _not_compliance(path: Path) -> str:
    from .detect_compliance import front_matter, head

    if front_matter(head(path)) is None:
        return (
            "not a compliance file: a compliance file starts with YAML front matter (a line '---', "
            "name, version and transport, then '---')"
        )
    return "not a compliance file: its front matter has no 'transport' key"


def _not_yao(path: Path) -> str:
    lines = jsonl_head(path)
    first = as_object(lines[0]) if lines else None
    why = (
        "it has no JSON line"
        if not lines
        else "its first line is not a JSON object"
        if first is None
        else "its first case has no 'id'"
        if "id" not in first
        else "its first case has none of 'input', 'turns' or 'checkpoints'"
    )
    return f"not a Yao test file: {why}"


_WHY_NOT: dict[str, Callable[[Path], str]] = {
    ".json": _not_a_suite,
    ".md": _not_compliance,
    ".jsonl": _not_yao,
}
"""Why a file of one of our suffixes that no detector took is not a spec of that format."""


def _bytes(path: Path) -> bytes:
    if (
        not path.is_file()
    ):  # a FIFO, a device or a link to one: never opened (a FIFO blocks, /dev/zero is endless)
        return b""
    try:
        return path.read_bytes()
    except OSError:
        return b""


_DETECTORS = {d.__name__: d for d in (semantictest_json, highbar_yaml, yao_jsonl, compliance_markdown)}
FORMATS: list[tuple[str, Callable[[Path, CollectContext | None], bool], str]] = [
    (spec_format.name, _DETECTORS[spec_format.detector], spec_format.collector)
    for spec_format in registry.FORMATS
]
"""``(name, detector, collector)`` of each format, in the order of its record (``registry.FORMATS``)."""


def spec_format(path: Path, context: Callable[[], CollectContext]) -> tuple[str, str] | None:
    """``(format name, module that collects it)`` for the spec file ``path``, or None: the one test
    of what is a spec file (collection, ``semantictest validate``, the xdist controller). ``context``
    is called only for the paths a detector needs it for (``needs_context``): an idle session pays
    nothing."""
    for name, detect, module in FORMATS:
        needs = getattr(detect, "needs_context", None)
        if detect(path, context() if needs is not None and needs(path) else None):
            return name, module
    return None
