"""Whether a ``*.md`` is a compliance file (``formats.detect``), read from the file's head without
parsing its YAML: what a front matter's keys are is sniffed, so a broken or odd front matter (flow
style ``{name: x, transport: a2a}``, ``{}``, ``tags: null``, a YAML error, a list) is still told apart
from other Markdown, and its loader says what is wrong.

The rule (docs/compliance.md, "Which files are collected"): a Markdown file is a compliance file when

1. its front matter names ``transport`` as a key, in any YAML style (block, flow, quoted), or a key
   close to it (``transprot``, ``Transport``); or its front matter lost its opening ``---`` line but
   the lines above the first ``---`` line name ``transport``;
2. or its body has a ``## Test Cases`` heading and a case label (``**Request:**``, ...) outside code
   fences, and its front matter is not another tool's: it is a YAML list, or it has at least two
   compliance keys, or no key foreign to compliance at all (none, as ``{}``, an empty or unreadable
   front matter).

Markdown without front matter (a README), front matter of other tools (``title:``, ``layout:``) and
documents that show a compliance file inside a code fence are not compliance files.
"""

from __future__ import annotations

import re
from pathlib import Path

FRONT_KEYS = frozenset(
    {
        "name",
        "version",
        "transport",
        "dialect",
        "type",
        "tags",
        "timeout",
        "depends_on",
        "skip_reason",
        "description",
    }
)
"""Every key a compliance front matter may have (``x-`` keys are free)."""
_KEY = r"""("[^"\n]*"|'[^'\n]*'|[A-Za-z_$][^:,{}\[\]\n]*?)"""
_BLOCK_KEY = re.compile(r"^(-[ \t]+)?" + _KEY + r"[ \t]*:(?=\s|$)", re.M)
"""A key of a block mapping at the top (column 0), or of a list item there (``- name: x``)."""
_FLOW_KEY = re.compile(r"[{,]\s*" + _KEY + r"\s*:")
"""A key of a flow mapping (``{name: x, transport: a2a}``), at any depth."""
_LABEL = re.compile(r"^\*\*(Request|Input|Strict|Assertions|Expected|Flow):\*\*", re.M)
_CASES = re.compile(r"^##\s+Test Cases\s*$", re.M | re.I)
_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.M | re.S)


def head(path: Path, size: int = 8192) -> str:
    """The first ``size`` characters of ``path`` (without a BOM); "" when it cannot be read (or is not
    a regular file: a FIFO would block, a device never end)."""
    if not path.is_file():
        return ""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return fh.read(size).lstrip("\ufeff")
    except OSError:
        return ""


def front_matter(text: str) -> str | None:
    """The text between the opening ``---`` and the closing one (or the end of ``text``)."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    return text[3 : end if end != -1 else len(text)]


def front_keys(front: str) -> tuple[list[str], bool]:
    """The keys a front matter names (sniffed: block style, flow style, quoted) and whether it is a
    YAML list (every key an item of one)."""
    stripped = front.lstrip()
    if stripped.startswith(("{", "[")):  # flow style: keys follow '{' or ','
        return [_unquoted(m.group(1)) for m in _FLOW_KEY.finditer(stripped)], stripped.startswith("[")
    found = [(bool(m.group(1)), _unquoted(m.group(2))) for m in _BLOCK_KEY.finditer(front)]
    return [key for _, key in found], bool(found) and all(item for item, _ in found)


def _unquoted(key: str) -> str:
    key = key.strip()
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'" else key


def _close_to_transport(key: str) -> bool:
    import difflib

    return key.lower() == "transport" or bool(
        difflib.get_close_matches(key.lower(), ["transport"], n=1, cutoff=0.8)
    )


def _body_has_cases(path: Path) -> bool:
    """``## Test Cases`` and a case label outside code fences (the first MB of the file)."""
    if not path.is_file():
        return False
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            body = _FENCE.sub("", fh.read(1 << 20))
    except OSError:
        return False
    return bool(_CASES.search(body)) and bool(_LABEL.search(body))


def why_compliance(path: Path) -> str | None:
    """Why ``path`` (a ``*.md``) is a compliance file, or None when it is not one (the module doc's
    rule): "transport", or what is wrong with the front matter of one that is meant as one."""
    text = head(path)
    front = front_matter(text)
    if front is None:
        return _opening_lost(text)
    keys, listed = front_keys(front)
    if "transport" in keys:
        return "transport"
    close = next((key for key in keys if _close_to_transport(key)), None)
    if close is not None:
        return f"its front matter has '{close}' but no 'transport' key"
    if not _front_keys_ours(keys, listed):
        return None  # another tool's front matter (title:, layout:)
    if not _body_has_cases(path):
        return None
    if listed:
        return "its front matter is a YAML list"
    return "its front matter has no 'transport' key"


def _opening_lost(text: str) -> str | None:
    """A file with no front matter whose lines above the first ``---`` line name ``transport``: its
    opening ``---`` was lost."""
    end = text.find("\n---")
    keys = front_keys(text[:end])[0] if end != -1 else []
    return "its front matter has no opening '---' line" if "transport" in keys else None


def _front_keys_ours(keys: list[str], listed: bool) -> bool:
    """Whether front matter without ``transport`` is still meant as ours: a YAML list, two of our keys,
    or only our keys (and ``x-`` ones)."""
    own = [key for key in keys if key in FRONT_KEYS or key.startswith("x-")]
    return listed or len(set(own) & FRONT_KEYS) >= 2 or len(own) == len(keys)
