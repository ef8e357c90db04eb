"""Parse YAML keeping line numbers per path and reporting duplicate and non-string keys.

The YAML counterpart of :mod:`.jsonsource`: :func:`load_yaml` gives a :class:`YamlSource`
whose ``data`` is plain data (dicts with string keys, lists, str, int, float, bool, None)
and whose ``line(path)`` says where a value is written, so a validator can point at it.

PyYAML (libyaml's C parser when available) parses the text into a node graph; the data is
built from the nodes here rather than by PyYAML's constructor, because that is where the
lines are, and because PyYAML silently keeps the last of two equal keys.

- Anchors and aliases are expanded (a copy per use, with the anchor's lines); ``<<`` merge
  keys work as in PyYAML: keys written in the mapping override merged ones, and of several
  merged mappings the first one wins. Merged keys are not duplicates.
- A key written twice in one mapping is a problem naming both lines; the later value is kept.
- A key that is not a string (``1:``, ``on:``/``yes:`` which YAML 1.1 reads as booleans,
  ``[a]:``) is a problem and is left out of the data.
- Timestamps (``2024-05-01``) stay text: JSON has no dates, and a spec compares values with
  JSON sent by an agent. Other tags (``!!binary``, ``!!set``, ``!custom``) are problems.
- Syntax errors raise :class:`YamlError` with line and column; so do alias bombs and
  nesting deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import Problem, clip
from ..json_types import JSONObject, JSONValue
from ..problems import place
from .source import LineMap, Path, SourceError

MAX_DEPTH = 100
"""Deepest nesting a spec may use (aliases included): deeper is an error, never a RecursionError."""

MAX_NODES = 100_000
"""Most values aliases may add to a document by copying (a "billion laughs" stops here)."""

_Loader: type[yaml.SafeLoader | yaml.CSafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG = "tag:yaml.org,2002:"
_MERGE = _TAG + "merge"
_STR = _TAG + "str"
_MAP = _TAG + "map"
_SEQ = _TAG + "seq"
_SCALARS = {_TAG + "null", _TAG + "bool", _TAG + "int", _TAG + "float", _STR}
_TIMESTAMP = _TAG + "timestamp"
_TYPE_NAMES = {type(None): "null", bool: "a boolean", int: "a number", float: "a number"}


class YamlError(SourceError):
    """Text that is not usable YAML."""


@dataclass
class YamlSource(LineMap):
    """A parsed YAML document with the line where each value (or mapping key) is written.

    ``problems`` are things wrong in the document that still leave usable data: duplicate
    keys, non-string keys, unsupported tags, bad merge keys. A loader reports them with its
    own problems, so one run shows everything wrong in a file.
    """

    data: JSONValue
    lines: dict[Path, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def duplicates(self) -> list[Problem]:
        """The duplicate-key problems (``JsonSource`` has the same attribute)."""
        return [p for p in self.problems if p.message.startswith("duplicate key ")]


def load_yaml(text: str) -> YamlSource:
    """Parse ``text``; raises :class:`YamlError` (a ValueError) with line and column on bad YAML."""
    text = text.removeprefix("\ufeff")
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise _syntax_error(exc, text) from None
        except yaml.YAMLError as exc:  # a reader error without a mark (rare)
            raise YamlError(f"invalid YAML: {_one_line(str(exc))}") from None
        except RecursionError:
            raise YamlError(f"invalid YAML: nested too deeply (more than {MAX_DEPTH} levels)") from None
        source = YamlSource(None)
        if node is None:
            return source
        builder = _Builder(loader, source)
        source.data = builder.value(node, (), 0)
        return source
    finally:
        loader.dispose()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _syntax_error(exc: yaml.MarkedYAMLError, text: str) -> YamlError:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    problem = _one_line(exc.problem or "")
    if "cannot start any token" in problem and mark is not None and _char_at(text, mark) == "\t":
        problem += " (a tab: YAML indentation must use spaces)"
    message = f"invalid YAML: {problem}" if problem else "invalid YAML"
    if exc.context:
        message += f" ({_one_line(exc.context)}{_context_place(exc.context_mark, mark)})"
    return YamlError(message, line, column)


def _context_place(context: yaml.Mark | None, mark: yaml.Mark | None) -> str:
    """Where the context of a YAML error is (`` at line L column C``), when that is not the error's own place."""
    if context is None or (mark is not None and (context.line, context.column) == (mark.line, mark.column)):
        return ""
    return f" at line {context.line + 1} column {context.column + 1}"


def _char_at(text: str, mark: yaml.Mark) -> str | None:
    lines = text.split("\n")
    row, column = int(mark.line), int(mark.column)  # a yaml Mark
    if 0 <= row < len(lines) and 0 <= column < len(lines[row]):
        return lines[row][column]
    return None


def _kind(value: object) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


class _Builder:
    def __init__(self, loader: yaml.SafeLoader | yaml.CSafeLoader, source: YamlSource) -> None:
        self.loader = loader
        self.source = source
        self.visited: set[int] = set()  # ids of the nodes built once (the node graph outlives the build)
        self.copies = 0
        self.active: set[int] = set()  # collection nodes being built: an alias to one is a cycle

    def problem(self, path: Path, message: str, line: int) -> None:
        self.source.problems.append(Problem(place(path), message, line))

    def value(self, node: Node, path: Path, depth: int) -> JSONValue:
        if id(node) in self.visited:  # reached again through an alias: a copy
            self.copies += 1
            if self.copies > MAX_NODES:
                raise YamlError(
                    f"aliases expand the document by more than {MAX_NODES} values (aliases of aliases?)",
                    node.start_mark.line + 1,
                    node.start_mark.column + 1,
                    place(path),
                )
        else:
            self.visited.add(id(node))
        self.source.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if depth >= MAX_DEPTH:
            raise YamlError(
                f"nested too deeply (more than {MAX_DEPTH} levels)",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
                place(path[:12]) + ("..." if len(path) > 12 else ""),
            )
        if id(node) in self.active:
            self.problem(
                path,
                "an alias refers to a value that contains it (a recursive anchor)",
                node.start_mark.line + 1,
            )
            return None
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                self.check_tag(node, _SEQ, path)
                return [self.value(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
            assert isinstance(node, MappingNode)
            self.check_tag(node, _MAP, path)
            return self.mapping(node, path, depth)
        finally:
            self.active.discard(id(node))

    def check_tag(self, node: Node, expected: str, path: Path) -> None:
        if node.tag != expected:
            self.problem(
                path,
                f"YAML tag '{clip(_short_tag(node.tag))}' is not supported here",
                node.start_mark.line + 1,
            )

    def scalar(self, node: ScalarNode, path: Path) -> JSONValue:
        tag = node.tag
        if tag == _TIMESTAMP:
            return node.value
        if tag not in _SCALARS:
            self.problem(
                path,
                f"YAML tag '{clip(_short_tag(tag))}' is not supported (a spec holds plain text, numbers, "
                "true/false, null, lists and mappings)",
                node.start_mark.line + 1,
            )
            return node.value
        try:
            return self.loader.yaml_constructors[tag](self.loader, node)
        except (ValueError, yaml.YAMLError) as exc:  # e.g. an integer over Python's digit limit
            self.problem(
                path,
                f"cannot read {clip(node.value)!r}: {clip(_one_line(str(exc)), 100)}",
                node.start_mark.line + 1,
            )
            return node.value

    def mapping(self, node: MappingNode, path: Path, depth: int) -> JSONObject:
        lines = self.source.lines
        # The keys written in the mapping; of a key written twice, the later value.
        written: dict[str, tuple[int, Node]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.key(key_node, path, report=True)
            if key is None:
                continue
            line = key_node.start_mark.line + 1
            if key in written:
                self.problem(path, f"duplicate key '{clip(key)}' (lines {written[key][0]} and {line})", line)
            written[key] = (line, value_node)
        result: JSONObject = {}
        # Merged keys first; a key written in the mapping overrides them, so it is not built here.
        merged: dict[str, tuple[int, Node]] = {}
        for key_node, value_node in self.merged(node, path, depth):
            key = self.key(key_node, path, report=False)
            if key is not None and key not in written:
                merged[key] = (key_node.start_mark.line + 1, value_node)
        for entries in (merged, written):
            for key, (line, value_node) in entries.items():
                lines[path + (key,)] = line
                result[key] = self.value(value_node, path + (key,), depth + 1)
        return result

    def merged(self, node: MappingNode, path: Path, depth: int) -> Iterator[tuple[Node, Node]]:
        """The ``(key, value)`` nodes that ``<<`` brings into ``node``, the winning one last."""
        sources: list[MappingNode] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                continue
            line = key_node.start_mark.line + 1
            items = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for item in items:
                if isinstance(item, MappingNode):
                    sources.append(item)
                else:
                    self.problem(
                        path,
                        "a merge key '<<' takes a mapping or a list of mappings (like <<: *defaults)",
                        line,
                    )
        seen: set[int] = {id(node)}
        entries: list[tuple[Node, Node]] = []
        # Of several merged mappings the first wins: add them last to first, later overriding.
        for source in reversed(sources):
            entries.extend(self.flatten(source, seen, path, depth))
        return iter(entries)

    def flatten(self, node: MappingNode, seen: set[int], path: Path, depth: int) -> list[tuple[Node, Node]]:
        if id(node) in seen or depth >= MAX_DEPTH:
            self.problem(
                path,
                "a merge key '<<' refers to a mapping that merges it back (a recursive anchor)",
                node.start_mark.line + 1,
            )
            return []
        seen = seen | {id(node)}
        inner: list[MappingNode] = []
        own: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                items = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                inner.extend(item for item in items if isinstance(item, MappingNode))
            else:
                own.append((key_node, value_node))
        out: list[tuple[Node, Node]] = []
        for source in reversed(inner):
            out.extend(self.flatten(source, seen, path, depth + 1))
        return out + own

    def key(self, node: Node, path: Path, report: bool) -> str | None:
        line = node.start_mark.line + 1
        if not isinstance(node, ScalarNode):
            if report:
                kind = "a list" if isinstance(node, SequenceNode) else "a mapping"
                self.problem(path, f"a key must be text, got {kind}", line)
            return None
        if node.tag == _STR or node.tag == _TIMESTAMP:
            return str(node.value)
        if node.tag not in _SCALARS:
            if report:
                self.problem(path, f"YAML tag '{clip(_short_tag(node.tag))}' is not supported on a key", line)
            return None
        try:
            value = self.loader.yaml_constructors[node.tag](self.loader, node)
        except (ValueError, yaml.YAMLError):
            value = node.value
        if report:
            self.problem(
                path,
                f"key {clip(node.value)!r} is read by YAML as {_kind(value)}, not text; quote it: '{clip(node.value)}'",
                line,
            )
        return None


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag
