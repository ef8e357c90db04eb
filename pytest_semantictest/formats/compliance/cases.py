"""One test case: its bold labels (``**Request:**``, ``**Strict:**``, ...) read into a TestCase."""

from __future__ import annotations

import re
from collections.abc import Callable

from ...errors import Problem, clip, did_you_mean
from ..yamlsource import YamlError, YamlSource, load_yaml
from .agent_bullets import agent_from_items, agent_groups
from .markdown import (
    Fence,
    Line,
    bullet,
    bullet_tree,
    label,
    text_of,
    unquote,
)
from .models import Bullet, CaseSetup, ChatInput, Message, Request, Strict, TestCase, Variable

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "MCP")
"""``MCP`` is the request line of a ``transport: mcp`` case: MCP `tools/call`."""
LABELS = (
    "Request",
    "Input",
    "Flow",
    "Assertions",
    "Strict",
    "Expected",
    "Condition",
    "Variables",
    "Setup",
    "Behavior",
    "Notes",
)
_REQUEST_LINE = re.compile(r"^([A-Za-z]+)\s+(`[^`]+`|\S+)\s*(.*)$")
_HEADER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*:\s*(.*)$")
_SENDS = re.compile(r"^user\s+sends\s+[\"\u201c](.*)[\"\u201d]\s+to\s+`?([\w.-]+)`?\s*\.?\s*$", re.I)
_SAYS = re.compile(r"^(.+?)\s*:\s*[\"\u201c](.*)[\"\u201d]\s*\.?$")
_USER_TO = re.compile(r"^user(?:\s+to\s+`?([\w.-]+)`?)?$", re.I)
_VARIABLE = re.compile(r"^`?([A-Za-z_]\w*)`?\s*:\s*(.+)$")
_ONE_OF = re.compile(r"^one\s+of\s*(\[.*\])\s*\.?$", re.I)
_UNAVAILABLE = re.compile(
    r"`?([\w.-]+)`?\s+is\s+(?:unavailable|offline|not running|down|not available)\b", re.I
)


class _Case:
    def __init__(self, number: int | None, title: str, line: int, problems: list[Problem]) -> None:
        self.case = TestCase(number=number, title=title, line=line)
        self.problems = problems
        self.where = f"case {number}" if number is not None else f"case '{clip(title, 40)}'"

    def problem(self, message: str, line: int | None) -> None:
        self.problems.append(Problem(self.where, message, line))


def parse_case(
    number: int | None, title: str, line: int, tokens: list[Line], problems: list[Problem]
) -> TestCase | None:
    """Read a case's labels; problems go to ``problems`` (None when the case is unusable)."""
    state = _Case(number, title, line, problems)
    parts, description = _split_labels(state, tokens)
    state.case.description = text_of(description)
    for name, rest, at, body in parts:
        reader = _READERS.get(name)
        if reader is not None:
            reader(state, rest, at, body)
    return state.case


def _split_labels(
    state: _Case, tokens: list[Line]
) -> tuple[list[tuple[str, str, int, list[Line]]], list[Line]]:
    """The case's labels as ``(label, text after it, line, lines under it)`` (an unknown or repeated
    label is a problem; an unknown one is kept unnamed), and the description before the first label."""
    parts: list[tuple[str, str, int, list[Line]]] = []
    description: list[Line] = []
    for token in tokens:
        found = label(token)
        if found is None:
            (parts[-1][3] if parts else description).append(token)
            continue
        name, rest = found
        known = _known_label(name)
        if known is None:
            state.problem(
                f"unknown label '**{clip(name)}:**'{did_you_mean(name.title(), LABELS)} "
                f"(a case has {', '.join(LABELS)})",
                token.no,
            )
            parts.append(("", rest, token.no, []))
            continue
        earlier = next((p for p in parts if p[0] == known), None)
        if earlier is not None:
            state.problem(f"a second '**{known}:**' (the first is at line {earlier[2]})", token.no)
        parts.append((known, rest, token.no, []))
    return parts, description


def _known_label(name: str) -> str | None:
    """The label ``name`` spells in any case (``Behaviour`` too), or None."""
    low = name.lower()
    return next((k for k in LABELS if k.lower() == low or (k == "Behavior" and low == "behaviour")), None)


# --- readers, one per label -------------------------------------------------------------------


def _lines(rest: str, at: int, body: list[Line]) -> list[Line]:
    """The label's inline text (as a line of its own) and the lines under it."""
    return ([Line(at, rest)] if rest else []) + body


def _request(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    tokens = _lines(rest, at, body)
    first = next((t for t in tokens if not t.blank), None)
    if first is None or first.fence is not None:
        state.problem(
            "'**Request:**' must start with a method and a path, like: POST `/chat/completions`", at
        )
        return
    request = _request_line(state, first)
    if request is None:
        return
    _request_parts(state, request, tokens[tokens.index(first) + 1 :])
    state.case.request = request


def _request_line(state: _Case, first: Line) -> Request | None:
    """The request's method, path and options from its first line (None, a problem, when unreadable)."""
    match = _REQUEST_LINE.match(first.text.strip())
    method = match.group(1) if match else ""
    if match is None or method.upper() not in METHODS:
        hint = did_you_mean(method.upper(), METHODS) if match else ""
        state.problem(
            f"cannot read the request line {clip(first.text.strip())!r}: write a method and a path, like "
            f"POST `/chat/completions`{hint}",
            first.no,
        )
        return None
    request = Request(method=method.upper(), path=match.group(2).strip("`"), line=first.no)
    _request_options(state, request, match.group(3), first.no)
    return request


def _request_parts(state: _Case, request: Request, tokens: list[Line]) -> None:
    """The lines after the request line: headers (right under it, or a ``Headers:`` list), the body
    (a code block) and notes (anything else)."""
    headers_list = False
    right_after = True
    for token in tokens:
        if token.blank:
            right_after = False
            continue
        if token.fence is not None:
            if _take_body(state, request, token):
                right_after = headers_list = False
            continue
        text = token.text.strip()
        low = text.lower().rstrip(":")
        if low in ("headers", "body"):
            headers_list = low == "headers"
            continue
        item = bullet(token.text)
        if headers_list and item is not None:
            _header(state, request, unquote(item[1]), token.no)
        elif right_after and _looks_like_header(text):
            _header(state, request, text, token.no)
        else:
            request.notes.append(text)
            headers_list = False


def _looks_like_header(text: str) -> bool:
    """``Name: value`` with no space in the name (prose with a colon is a note)."""
    return _HEADER.match(text) is not None and " " not in text.split(":", 1)[0]


def _take_body(state: _Case, request: Request, token: Line) -> bool:
    """Whether the code block ``token`` became the request's body (a request has one: another is a problem)."""
    assert token.fence is not None
    if request.body is not None:
        state.problem(
            f"a request has one body; another code block starts here (the body is at line {request.body_line})",
            token.no,
        )
        return False
    request.body, request.body_language, request.body_line = (
        token.fence.content,
        token.fence.language,
        token.fence.first,
    )
    return True


def _request_options(state: _Case, request: Request, rest: str, line: int) -> None:
    text = rest.strip()
    if re.search(r"\(streaming\)", text, re.I):
        request.streaming = True
        text = re.sub(r"\(streaming\)", "", text, flags=re.I).strip()
    if re.search(r"\bwith\s+invalid\s+json\b", text, re.I):
        request.invalid_json = True
        text = re.sub(r"\bwith\s+invalid\s+json\b", "", text, flags=re.I).strip()
    if text:
        state.problem(
            f"unexpected {clip(text)!r} after the path: only '(streaming)' or 'with invalid JSON' may "
            "follow it",
            line,
        )


def _header(state: _Case, request: Request, text: str, line: int) -> None:
    match = _HEADER.match(text.strip())
    if match is None:
        state.problem(f"cannot read the header {clip(text)!r}: write it as 'Name: value'", line)
        return
    request.headers.append((match.group(1), match.group(2).strip(), line))


def _input(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    lines = [t for t in _lines(rest, at, body) if not t.blank and t.fence is None]
    if not lines:
        state.problem("'**Input:**' is empty: write User sends \"message\" to `agent`", at)
        return
    sends = user_sends(lines[0].text)
    if sends:
        state.case.input = ChatInput(
            agent=sends[1], messages=[Message(role="user", content=sends[0])], line=lines[0].no
        )
        return
    if lines[0].text.strip().lower().rstrip(":") == "conversation":
        conversation = _conversation(state, lines[1:], lines[0].no)
        if conversation is not None:
            state.case.input = conversation
        return
    state.problem(
        f'cannot read the input {clip(lines[0].text.strip())!r}: write User sends "message" to `agent`, '
        'or "Conversation:" then numbered lines like 1. User to router: "Hi"',
        lines[0].no,
    )


def user_sends(text: str) -> tuple[str, str] | None:
    """``User sends "text" to `agent``` -> (text, agent)."""
    match = _SENDS.match(text.strip())
    return (match.group(1), match.group(2)) if match else None


def _conversation(state: _Case, lines: list[Line], at: int) -> ChatInput | None:
    messages: list[Message] = []
    agent: str | None = None
    for token in lines:
        item = bullet(token.text)
        said = _SAYS.match(item[1] if item else token.text.strip())
        if said is None:
            state.problem(
                f"cannot read the conversation line {clip(token.text.strip())!r}: write "
                '1. User to router: "text" or 2. Router: "text"',
                token.no,
            )
            return None
        speaker, text = said.group(1).strip(), said.group(2)
        user = _USER_TO.match(speaker)
        if user:
            agent = user.group(1) or agent
            messages.append(Message(role="user", content=text))
        elif speaker.lower() == "system":
            messages.append(Message(role="system", content=text))
        else:
            messages.append(Message(role="assistant", content=text))
    if agent is None or not messages:
        state.problem('a conversation needs a line naming the agent: 1. User to router: "text"', at)
        return None
    return ChatInput(agent=agent, messages=messages, line=at)


def _bullets(state: _Case, what: str, rest: str, at: int, body: list[Line]) -> list[Bullet]:
    items, other = bullet_tree(_lines(rest, at, body))
    for token in other:
        if token.fence is None:
            state.problem(
                f"{what} are written as a list ('- ...' or '1. ...'); cannot read {clip(token.text.strip())!r}",
                token.no,
            )
    return [Bullet(text=item.text, line=item.line) for item in items]


def _flow(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    state.case.flow = _bullets(state, "flow steps", rest, at, body)


def _assertions(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    state.case.assertions = _bullets(state, "assertions", rest, at, body)


def _strict(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    fences = [t.fence for t in body if t.fence is not None]
    if rest or not fences:
        state.problem("'**Strict:**' needs a ```yaml block under it (status, headers, body, chunks, ...)", at)
        return
    fence = fences[0]
    if fence.language not in ("yaml", "yml", ""):
        state.problem(f"the strict block must be YAML (```yaml), not {fence.language!r}", fence.line)
        return
    source = _strict_yaml(state, fence)
    if source is None:
        return
    if not isinstance(source.data, dict) or not source.data:
        state.problem("the strict block must be a YAML mapping (status: 200, body: ...)", fence.line)
        return
    lines = {path: fence.first + line - 1 for path, line in source.lines.items()}
    state.case.strict = Strict(data=source.data, lines=lines, line=fence.line)


def _strict_yaml(state: _Case, fence: Fence) -> YamlSource | None:
    """The strict block's YAML, its problems placed at their lines in the Markdown file (None when it
    cannot be read)."""
    try:
        source = load_yaml(fence.content)
    except YamlError as exc:
        message = re.sub(r"at line (\d+)", lambda m: f"at line {fence.first + int(m.group(1)) - 1}", str(exc))
        state.problem(f"strict block: {message}", fence.first + (exc.line or 1) - 1)
        return None
    for problem in source.problems:
        state.problem(f"strict block: {problem.message}", fence.first + (problem.line or 1) - 1)
    return source


def _expected(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    text = (rest or next((t.text for t in body if not t.blank and t.fence is None), "")).strip()
    word = re.sub(r"[^a-z]", "", text.split()[0].lower()) if text.split() else ""
    if word in ("success", "failure"):
        state.case.expected = "success" if word == "success" else "failure"
        return
    state.problem(
        f"'**Expected:**' is success or failure, not {clip(text)!r}{did_you_mean(word, ['success', 'failure'])}",
        at,
    )


def _condition(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    text = " ".join([rest] + [t.text.strip() for t in body if not t.blank and t.fence is None]).strip()
    if not text:
        state.problem("'**Condition:**' is empty: write the condition, like 'Agent has tools configured'", at)
        return
    state.case.condition = Bullet(text=text, line=at)


def _variables(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    for token in _lines(rest, at, body):
        if token.blank or token.fence is not None:
            continue
        item = bullet(token.text)
        text = item[1] if item else token.text.strip()
        match = _VARIABLE.match(text)
        if match is None:
            state.problem(
                f'cannot read the variable {clip(text)!r}: write - `name`: One of ["a", "b"] '
                "(or: From setup)",
                token.no,
            )
            continue
        variable = _variable(state, match.group(1), match.group(2).strip(), token.no)
        if variable is not None:
            state.case.variables.append(variable)


def _variable(state: _Case, name: str, spec: str, line: int) -> Variable | None:
    one_of = _ONE_OF.match(spec)
    if one_of:
        try:
            choices = load_yaml(one_of.group(1)).data
        except YamlError as exc:
            state.problem(f"variable '{name}': cannot read the list {clip(one_of.group(1))!r}: {exc}", line)
            return None
        if not isinstance(choices, list) or not choices:
            state.problem(
                f'variable \'{name}\': One of needs a non-empty list, like One of ["Hello", "Hi"]', line
            )
            return None
        return Variable(name=name, kind="one_of", choices=choices, line=line)
    if spec.lower().rstrip(".") == "from setup":
        return Variable(name=name, kind="from_setup", line=line)
    if len(spec) >= 2 and spec[0] == spec[-1] and spec[0] in "\"'":
        return Variable(name=name, kind="literal", choices=[spec[1:-1]], line=line)
    state.problem(
        f"variable '{name}': {clip(spec)!r} is not a value source: write One of [...], From setup, or a "
        "quoted value",
        line,
    )
    return None


def _setup(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    tokens = _lines(rest, at, body)
    setup = CaseSetup(text=text_of(tokens), line=at)
    for token in tokens:
        for match in _UNAVAILABLE.finditer(token.text):
            setup.unavailable.append(match.group(1))
    for owner, group, line in agent_groups(tokens, at):
        agent = agent_from_items(group, owner, line, state.problems) if group else None
        if agent is not None:
            setup.agents.append(agent)
    state.case.setup = setup


def _behavior(state: _Case, rest: str, at: int, body: list[Line]) -> None:
    state.case.behavior = text_of(_lines(rest, at, body))


_READERS: dict[str, Callable[[_Case, str, int, list[Line]], None]] = {
    "Request": _request,
    "Input": _input,
    "Flow": _flow,
    "Assertions": _assertions,
    "Strict": _strict,
    "Expected": _expected,
    "Condition": _condition,
    "Variables": _variables,
    "Setup": _setup,
    "Behavior": _behavior,
}
