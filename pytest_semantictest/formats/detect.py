"""Which format a file is, decided cheaply (no heavy imports, no full parse) during pytest collection.

Each entry: a format name (also its pytest marker), a detector ``(path) -> bool`` and the
module whose ``make_loader(ctx: CollectContext) -> Callable[[Path], Suite]`` compiles files.

No file of ours is dropped silently: a detector also accepts a *near miss* (a file that is clearly
meant as one of ours but misses a rule: ``transprot:`` in a compliance front matter, a Yao case
without ``id``, a broken first line), so its loader reports what is wrong as a collection error.
Ordinary Markdown and JSON/JSONL data files stay ignored. :func:`why_not_spec` says why a file
named on the command line is not a spec file (instead of pytest's bare "not found").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..json_types import JSONObject
from . import registry

_SUITE_HINT = re.compile(rb'"tests"\s*:\s*\[')
_JSON_STRING = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'{}[]"\0')
_ARRAY_OF_OBJECTS_KEY = re.compile(rb'"([^"\\]{1,20})"\s*:\s*\[\s*\{')
_FRONT_TRANSPORT = re.compile(r"^transport\s*:", re.M)


@dataclass(frozen=True)
class CollectContext:
    """What loaders may know about the session: folders, environment, option values."""

    rootdir: Path
    invocation_dir: Path
    env: Mapping[str, str]
    option: Callable[[str], object]
    """An option's value by its name without ``--semantictest-`` (option, else ini key, else default);
    read it with :meth:`text`, :meth:`texts`, :meth:`number` or :meth:`flag`."""
    args: tuple[str, ...] = ()

    def text(self, name: str) -> str | None:
        """A string option: its value, None when it is unset or empty."""
        value = self.option(name)
        return None if value is None or value == "" else str(value)

    def texts(self, name: str) -> list[str]:
        """A repeatable option (or ini list): its values, in order."""
        value = self.option(name)
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def number(self, name: str) -> int | None:
        """A whole-number option: its value, None when it is unset."""
        value = self.option(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def flag(self, name: str) -> bool:
        """A yes/no option."""
        return bool(self.option(name))


def semantictest_json(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.json`` whose top level has a ``tests`` array (or that only looks like one but is broken)."""
    if path.suffix != ".json":
        return False
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    return looks_like_suite(raw)


def looks_like_suite(raw: bytes) -> bool:
    """Sniffed, not parsed: ``"tests": [`` at depth 1 is a suite for the loader to read.

    One pass at C speed (:func:`_structure`): the bracket depth before each hint is counted with
    strings skipped. A file whose every hint is nested (a report, a fixture) is not a suite when its
    brackets balance; when they do not, or a string is left open, it is parsed to decide, and broken
    JSON with a hint is a suite (the loader reports the syntax error rather than the file vanishing).
    A near miss (``"test": [{...``, a key close to ``tests`` at the top, in a file with ``"pipeline"``
    steps) is a suite too, so the loader says "did you mean 'tests'?".
    """
    if b'"tests"' not in raw:
        return _near_miss_suite(raw)
    marked, hints = _SUITE_HINT.subn(b"\0[", raw)
    if not hints:  # a suite's array is always written "tests": [ (whitespace aside)
        return _near_miss_suite(raw)
    if hints != marked.count(b"\0"):  # a NUL byte of its own: not JSON text anyway
        return _parsed_suite(raw)
    structure = _structure(marked)
    if structure is None:  # a string left open: broken
        return _parsed_suite(raw)
    depth = 0
    for segment in structure.split(b"\0")[:-1]:
        depth += _depth(segment)
        if depth == 1:
            return True
        if depth < 1:
            return _parsed_suite(raw)
    if structure.count(b"{") == structure.count(b"}") and structure.count(b"[") == structure.count(b"]"):
        return False  # every hint nested in a file whose brackets balance: a fixture, not a suite
    return _parsed_suite(raw)


def _structure(raw: bytes) -> bytes | None:
    """Only the brackets (and NUL markers) of JSON text outside strings; None when a string is left open."""
    if b"\\" in raw:  # an escaped quote is not a quote, an escaped backslash escapes nothing
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(None, _NOT_STRUCTURE)
    kept = _JSON_STRING.sub(b"", kept.replace(b'""', b""))  # removing "" keeps every quote's parity
    return None if b'"' in kept else kept


def _depth(structure: bytes) -> int:
    return structure.count(b"{") + structure.count(b"[") - structure.count(b"}") - structure.count(b"]")


def _near_miss_suite(raw: bytes) -> bool:
    """A top-level array of objects under a key close to ``tests`` (``"test": [{``) in a file with steps.
    One pass over the file's structure, as for real suites (not one scan per candidate key)."""
    if b'"pipeline"' not in raw or b"\0" in raw:  # cheap: no step anywhere, no suite meant
        return False
    import difflib

    close: dict[bytes, bool] = {}
    starts = []
    for match in _ARRAY_OF_OBJECTS_KEY.finditer(raw):
        key = match.group(1)
        if key not in close:
            close[key] = bool(
                difflib.get_close_matches(key.decode("utf-8", "replace").lower(), ["tests"], n=1, cutoff=0.8)
            )
        if close[key]:
            starts.append(match.start())
    if not starts:
        return False
    marked = b"\0".join(raw[a:b] for a, b in zip([0, *starts], [*starts, len(raw)]))
    structure = _structure(marked)
    if structure is None:  # a string left open somewhere: only the keys before it can be told
        structure = _structure(raw[: starts[0]])
        return structure is not None and _depth(structure) == 1
    depth = 0
    for segment in structure.split(b"\0")[:-1]:
        depth += _depth(segment)
        if depth == 1:
            return True
    return False


def _parsed_suite(raw: bytes) -> bool:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return True  # broken, and it has a "tests": [ : the loader says what is wrong
    return isinstance(data, dict) and isinstance(data.get("tests"), list)


def highbar_yaml(path: Path, ctx: CollectContext | None = None) -> bool:
    return path.name.endswith(".highbar.yaml")


def compliance_markdown(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.md`` starting with YAML front matter that has a ``transport`` key, or a near miss of one
    (see :func:`compliance_near_miss`): its loader then says what is wrong."""
    if path.suffix != ".md":
        return False
    front = _front_matter(_head(path))
    if front is None:
        return False
    return bool(_FRONT_TRANSPORT.search(front)) or compliance_near_miss(path, front) is not None


def _head(path: Path, size: int = 8192) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return fh.read(size).lstrip("\ufeff")
    except OSError:
        return ""


def _front_matter(head: str) -> str | None:
    """The text between the opening ``---`` and the closing one (or the end of ``head``)."""
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    return head[3 : end if end != -1 else len(head)]


_FRONT_KEY = re.compile(r"^(-\s+)?([A-Za-z_][\w-]*)\s*:", re.M)
_COMPLIANCE_FRONT_KEYS = frozenset(
    {"name", "version", "type", "tags", "timeout", "depends_on", "skip_reason"}
)
_COMPLIANCE_LABEL = re.compile(r"^\*\*(Request|Input|Strict|Assertions|Expected|Flow):\*\*", re.M)
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)


def compliance_near_miss(path: Path, front: str) -> str | None:
    """Why a Markdown file with front matter but no ``transport:`` key still looks like a compliance
    file, or None: a key close to ``transport`` (``transprot``), or compliance front-matter keys (or a
    YAML list) over a body with ``## Test Cases`` and case labels (``**Request:**``) outside fences."""
    import difflib

    keys = [(bool(m.group(1)), m.group(2)) for m in _FRONT_KEY.finditer(front)]
    for _, key in keys:
        if key.lower() == "transport" or difflib.get_close_matches(
            key.lower(), ["transport"], n=1, cutoff=0.8
        ):
            return f"its front matter has '{key}' but no 'transport' key"
    listed = bool(keys) and all(item for item, _ in keys)
    if not listed and len({k for _, k in keys} & _COMPLIANCE_FRONT_KEYS) < 2:
        return None
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            body = _FENCE.sub("", fh.read(1 << 20))
    except OSError:
        return None
    if not re.search(r"^##\s+Test Cases\s*$", body, re.M | re.I) or not _COMPLIANCE_LABEL.search(body):
        return None
    return "its front matter is a YAML list" if listed else "its front matter has no 'transport' key"


_YAO_KEYS = ("input", "turns", "checkpoints")
_YAO_CASE_KEYS = frozenset(
    {
        "id",
        "name",
        "description",
        "mode",
        "input",
        "assertions",
        "assert",
        "expected",
        "options",
        "attachments",
        "turns",
        "simulator",
        "checkpoints",
        "max_turns",
        "timeout",
        "skip",
        "interactive",
        "before",
        "after",
        "user",
        "team",
        "metadata",
    }
)
"""Every key a Yao case may have: a first line made only of these is a case, whatever else is wrong."""
_YAO_ONLY = frozenset({"assertions", "assert", "expected", "turns", "checkpoints", "simulator"})


def _jsonl_head(path: Path, lines: int = 5, limit: int = 1 << 20) -> list[str]:
    """The first few content lines of a ``.jsonl`` (blank and ``//`` lines skipped), read cheaply."""
    out: list[str] = []
    try:
        with path.open("r", encoding="utf-8-sig", errors="replace") as fh:
            for line in fh:
                limit -= len(line)
                if limit < 0 or len(out) >= lines:
                    break
                text = line.strip()
                if text and not text.startswith("//"):
                    out.append(text)
    except OSError:
        return []
    return out


def _as_object(text: str) -> JSONObject | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _yao_case(data: JSONObject | None) -> bool:
    return data is not None and "id" in data and any(k in data for k in _YAO_KEYS)


def yao_near_miss(lines: list[str]) -> str | None:
    """Why a ``.jsonl`` (already matching the name rule) whose first case is not a Yao case still looks
    like Yao cases, or None: a first line that is broken JSON but names ``id`` and ``input`` (or later
    lines are cases), a first case without ``id``, one with ``id`` that misspells ``input``, or one in
    the design's draft shape (``messages`` where cases now have ``input``)."""
    import difflib

    if not lines:
        return None
    first = _as_object(lines[0])
    later = any(_yao_case(_as_object(line)) for line in lines[1:])
    if first is None:
        mentions = '"id"' in lines[0] and any(
            f'"{k}"' in lines[0] for k in (*_YAO_KEYS, "assert", "assertions")
        )
        return "its first line is not a JSON object" if mentions or later else None
    unknown = [k for k in first if k not in _YAO_CASE_KEYS]
    if "id" not in first and any(k in first for k in _YAO_KEYS):
        if len(unknown) <= 1 and (
            later or _YAO_ONLY & first.keys() or any(k.lower() == "id" for k in unknown)
        ):
            return "its first case has no 'id'"
        return None
    if "id" in first and "messages" in first and not any(k in first for k in _YAO_KEYS):
        return "its first case has 'messages' (the draft shape of Yao's test design) instead of 'input'"
    if "id" in first and len(unknown) == 1 and not any(k in first for k in _YAO_KEYS):
        close = difflib.get_close_matches(unknown[0].lower(), _YAO_KEYS, n=1, cutoff=0.8)
        if close:
            return f"its first case has '{unknown[0]}' but no '{close[0]}'"
    return None


def _named(path: Path, ctx: CollectContext) -> bool:
    """Named on the command line, matched by a ``semantictest_yao_globs`` pattern, or the generator's output."""
    import fnmatch

    target = path.resolve()
    named = [arg.split("::", 1)[0] for arg in ctx.args if not arg.startswith("-")]
    generated = ctx.text("generate-out")
    if generated:
        named.append(str(generated))
    if any((ctx.invocation_dir / arg).resolve() == target for arg in named if arg):
        return True
    try:
        relative = target.relative_to(ctx.rootdir.resolve()).as_posix()
    except ValueError:
        relative = target.as_posix()
    return any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(path.name, g) for g in ctx.texts("yao-globs"))


def yao_jsonl(path: Path, ctx: CollectContext | None = None) -> bool:
    """A ``*.jsonl`` whose name contains ``test`` or that was named on the command line (or matches an
    ini glob), and whose first case has ``id`` and one of input/turns/checkpoints, or is a near miss of
    that (see :func:`yao_near_miss`): its loader then says what is wrong."""
    if path.suffix != ".jsonl":
        return False
    if "test" not in path.name.lower() and not (ctx is not None and _named(path, ctx)):
        return False
    lines = _jsonl_head(path)
    return bool(lines) and (_yao_case(_as_object(lines[0])) or yao_near_miss(lines) is not None)


yao_jsonl.needs_context = lambda path: path.suffix == ".jsonl"  # type: ignore[attr-defined]
"""Detectors with ``needs_context(path)`` get the CollectContext for the paths it accepts (others get None)."""


def why_not_spec(path: Path) -> str | None:
    """Why ``path`` (named on the command line, collected by nobody) is not a spec file of any format,
    or None when its kind is not one of ours (pytest's own "not found" stands)."""
    name = path.name
    if name.endswith((".yaml", ".yml")):
        return "not a highbar spec: highbar specs are named *.highbar.yaml"
    if path.suffix == ".json":
        return 'not a SemanticTest suite: a suite is a JSON object with a top-level "tests" array' + (
            ' (this file\'s "tests" is nested inside something else)' if b'"tests"' in _bytes(path) else ""
        )
    if path.suffix == ".md":
        front = _front_matter(_head(path))
        if front is None:
            return (
                "not a compliance file: a compliance file starts with YAML front matter (a line '---', "
                "name, version and transport, then '---')"
            )
        return "not a compliance file: its front matter has no 'transport' key"
    if path.suffix == ".jsonl":
        lines = _jsonl_head(path)
        first = _as_object(lines[0]) if lines else None
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
    return None


def _bytes(path: Path) -> bytes:
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
