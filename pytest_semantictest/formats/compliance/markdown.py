"""Just enough Markdown for compliance files: lines, fenced blocks, headings, bullets, labels.

Every token keeps its 1-based line in the file so problems can point at it. A fenced block
(```` ``` ```` or ``~~~``) is one token: headings and labels inside it are its content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import Problem
from ...json_types import JSONObject, JSONValue

_FENCE_OPEN = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LABEL = re.compile(r"^\*\*([^*]+?):\*\*\s*(.*)$|^\*\*([^*]+?)\*\*:\s*(.*)$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_KEY_VALUE = re.compile(r"^([A-Za-z][\w ./-]*?)\s*:\s*(.*)$")


@dataclass
class Fence:
    """A fenced code block: its language (``json``, ``yaml``, or empty) and its text."""

    language: str
    content: str
    line: int
    """The line of the opening fence; the content starts on the next line."""

    @property
    def first(self) -> int:
        return self.line + 1


@dataclass
class Line:
    """One line of the file, or a whole fenced block."""

    no: int
    text: str
    fence: Fence | None = None

    @property
    def blank(self) -> bool:
        return self.fence is None and not self.text.strip()


@dataclass
class Section:
    """A heading and the lines under it (up to the next heading of the same or a higher level)."""

    level: int
    title: str
    line: int
    body: list[Line] = field(default_factory=list)
    children: list[Section] = field(default_factory=list)


def tokenize(lines: list[str], start: int, problems: list[Problem]) -> list[Line]:
    """``lines[start:]`` as tokens; an unclosed fence is a problem (and runs to the end)."""
    out: list[Line] = []
    i = start
    while i < len(lines):
        text = lines[i]
        match = _FENCE_OPEN.match(text)
        if match is None:
            out.append(Line(i + 1, text))
            i += 1
            continue
        marker, language = match.group(1), match.group(2).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not _closes(lines[j], marker):
            body.append(lines[j])
            j += 1
        if j >= len(lines):
            problems.append(
                Problem(
                    "", f"the code block opened here is never closed: add a line {marker} after it", i + 1
                )
            )
        out.append(Line(i + 1, text, Fence(language, "\n".join(body), i + 1)))
        i = j + 1
    return out


def _closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(marker[0] * len(marker)) and set(stripped) == {marker[0]}


def sections(tokens: list[Line]) -> tuple[list[Line], list[Section]]:
    """Lines before the first heading, and the heading tree (``#`` > ``##`` > ``###`` ...)."""
    preamble: list[Line] = []
    roots: list[Section] = []
    stack: list[Section] = []
    for token in tokens:
        match = _HEADING.match(token.text) if token.fence is None else None
        if match is None:
            (stack[-1].body if stack else preamble).append(token)
            continue
        section = Section(len(match.group(1)), match.group(2).strip(), token.no)
        while stack and stack[-1].level >= section.level:
            stack.pop()
        (stack[-1].children if stack else roots).append(section)
        stack.append(section)
    return preamble, roots


def flatten(section: Section) -> list[Line]:
    """A section's own lines and its sub-sections' headings and lines, in file order."""
    out = list(section.body)
    for child in section.children:
        out.append(Line(child.line, "#" * child.level + " " + child.title))
        out.extend(flatten(child))
    return out


def label(token: Line) -> tuple[str, str] | None:
    """``**Request:** rest`` -> ("Request", "rest")."""
    if token.fence is not None:
        return None
    match = _LABEL.match(token.text.strip())
    if match is None:
        return None
    name = match.group(1) if match.group(1) is not None else match.group(3)
    rest = match.group(2) if match.group(1) is not None else match.group(4)
    return name.strip(), rest.strip()


def bullet(text: str) -> tuple[int, str] | None:
    """``  - text`` / ``1. text`` -> (indent, text)."""
    match = _BULLET.match(text)
    return (len(match.group(1).expandtabs(4)), match.group(2).strip()) if match else None


def key_value(text: str) -> tuple[str, str] | None:
    """``Name: `echo-agent``` -> ("Name", "`echo-agent`")."""
    match = _KEY_VALUE.match(text.strip())
    return (match.group(1).strip(), match.group(2).strip()) if match else None


def unquote(text: str) -> str:
    """Strip one pair of backticks or quotes (straight or curly) around ``text``."""
    text = text.strip()
    for left, right in (("`", "`"), ('"', '"'), ("'", "'"), ("\u201c", "\u201d")):
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            return text[1:-1].strip()
    return text


def name_list(text: str) -> list[str]:
    """``[get_weather, `search`]`` or ``a, b`` -> ["get_weather", "search"]."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [unquote(part) for part in text.split(",") if unquote(part)]


def snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


@dataclass
class Item:
    """A bullet with its nested bullets."""

    text: str
    line: int
    indent: int
    children: list[Item] = field(default_factory=list)


def bullet_tree(tokens: list[Line]) -> tuple[list[Item], list[Line]]:
    """Bullets as a tree; lines that are not bullets (prose, fences) are returned apart.

    An indented non-bullet line continues the bullet above it.
    """
    roots: list[Item] = []
    stack: list[Item] = []
    other: list[Line] = []
    for token in tokens:
        if token.blank:
            continue
        found = bullet(token.text) if token.fence is None else None
        if found is None:
            if stack and token.fence is None and token.text.startswith((" ", "\t")):
                stack[-1].text += " " + token.text.strip()
            else:
                other.append(token)
                stack.clear()
            continue
        indent, text = found
        _nest(Item(text, token.no, indent), stack, roots)
    return roots, other


def _nest(item: Item, stack: list[Item], roots: list[Item]) -> None:
    """Put ``item`` under the nearest open bullet indented less than it (a root when none is), and open it."""
    while stack and stack[-1].indent >= item.indent:
        stack.pop()
    (stack[-1].children if stack else roots).append(item)
    stack.append(item)


def item_value(item: Item) -> JSONValue:
    """A key-value bullet's value: nested bullets become a mapping, ``[a, b]`` a list."""
    found = key_value(item.text)
    value = found[1] if found else item.text
    if item.children:
        nested: JSONObject = {}
        for child in item.children:
            pair = key_value(child.text)
            if pair is None:
                nested.setdefault("notes", []).append(child.text)
            else:
                nested[snake(pair[0])] = item_value(child)
        return nested
    if value.startswith("[") and value.endswith("]"):
        return name_list(value)
    return unquote(value)


def text_of(tokens: list[Line]) -> str:
    """The lines as text (fences included as written), trimmed."""
    parts = []
    for token in tokens:
        parts.append(
            token.text if token.fence is None else f"```{token.fence.language}\n{token.fence.content}\n```"
        )
    return "\n".join(parts).strip()
