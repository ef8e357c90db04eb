"""Malformed compliance files: each problem is one clean line naming the line and the fix.

A problem of the file (front matter, sections, setup) is a collection error; a problem inside one case
(its labels, request, strict block, variables) is that case's ERROR and the other cases still run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_semantictest.errors import SpecError
from pytest_semantictest.formats.compliance.compile import Settings, compile_document
from pytest_semantictest.formats.compliance.parse import parse_file, parse_text
from pytest_semantictest.formats.detect import compliance_markdown
from tests.compliance.conftest import chat_case, doc, front, reported
from tests.helpers import fuzz_examples

pytest_plugins = ["pytester"]

TOOLS = """Create an agent with:
- Name: `tool-agent`
- Tools: [get_weather]

### Tool Definitions

```json
[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
```
"""


def body_case(body: str, request: str = "POST `/chat/completions`", language: str = "json") -> str:
    return f"### 1. Case\n\n**Request:**\n{request}\n```{language}\n{body}\n```\n\n**Strict:**\n```yaml\nstatus: 200\n```\n"


# (file id, text, the text of the line the error must name, a fragment of the message)
MALFORMED: list[tuple[str, str, str, str]] = [
    ("no-front-matter", "# Title\ntransport: completions\n", "# Title", "starts with YAML front matter"),
    ("front-matter-unclosed", "---\nname: t\ntransport: completions\n# Title\n", "---", "never closed"),
    (
        "front-matter-yaml",
        "---\nname: [t\ntransport: completions\n---\n",
        "transport: completions",
        "invalid YAML",
    ),
    (
        "front-matter-no-name",
        "---\nversion: 1.0\ntransport: completions\n---\n" + "## Test Cases\n\n" + chat_case(),
        "version: 1.0",
        "'name' is required",
    ),
    (
        "front-matter-transport",
        doc(chat_case(), transport="websocket"),
        "transport: websocket",
        "'completions', 'realtime', 'a2a' or 'mcp'",
    ),
    (
        "front-matter-typo",
        doc(chat_case(), tag="[core]"),
        "tag: [core]",
        "unknown key 'tag' — did you mean 'tags'?",
    ),
    ("front-matter-timeout", doc(chat_case(), timeout=0), "timeout: 0", "must be > 0"),
    (
        "front-matter-duplicate",
        "---\nname: a\nname: b\nversion: 1\ntransport: completions\n---\n## Test Cases\n\n" + chat_case(),
        "name: b",
        "duplicate key 'name'",
    ),
    (
        "front-matter-tag-empty",
        doc(chat_case(), tags='[core, ""]'),
        'tags: [core, ""]',
        "tag '' has no letter or digit, so it cannot be a pytest marker",
    ),
    (
        "front-matter-tag-underscore",
        doc(chat_case(), tags='["_x"]'),
        'tags: ["_x"]',
        "tag '_x' cannot be a pytest marker (a marker name must not start with '_')",
    ),
    ("front-matter-timeout-inf", doc(chat_case(), timeout=".inf"), "timeout: .inf", "finite number"),
    ("front-matter-timeout-huge", doc(chat_case(), timeout="1e400"), "timeout: 1e400", "finite number"),
    ("front-matter-timeout-days", doc(chat_case(), timeout="864000"), "timeout: 864000", "must be <= 86400"),
    ("no-test-cases", front() + "\n# Title\n\n## Setup\n\nNothing.\n", "", "no '## Test Cases' section"),
    (
        "test-cases-typo",
        front() + "\n# Title\n\n## Test Case\n\n" + chat_case(),
        "",
        "did you mean 'Test Cases'?",
    ),
    ("test-cases-empty", front() + "\n## Test Cases\n\nNone yet.\n", "## Test Cases", "has no test cases"),
    ("heading-without-title", doc("### 1.\n\n**Request:**\nGET `/x`\n"), "### 1.", "needs a title"),
    (
        "label-typo",
        doc(chat_case(extra="**Assertion:**\n- It works\n")),
        "**Assertion:**",
        "unknown label '**Assertion:**' — did you mean 'Assertions'?",
    ),
    (
        "label-twice",
        doc("### 1. Twice\n\n**Request:**\nGET `/a`\n\n**Request:** GET `/b`\n"),
        "**Request:** GET `/b`",
        "a second '**Request:**'",
    ),
    (
        "request-no-method",
        doc(body_case("{}", request="`/chat/completions`")),
        "`/chat/completions`",
        "write a method and a path",
    ),
    (
        "request-method-typo",
        doc(body_case("{}", request="PSOT `/chat/completions`")),
        "PSOT `/chat/completions`",
        "did you mean 'POST'?",
    ),
    (
        "request-trailing-text",
        doc(body_case("{}", request="POST `/chat/completions` (stream)")),
        "POST `/chat/completions` (stream)",
        "only '(streaming)' or 'with invalid JSON'",
    ),
    (
        "request-bad-json",
        doc(body_case('{"model": "x",\n  "messages": [}')),
        '  "messages": [}',
        "the request body is not valid JSON",
    ),
    (
        "request-deep-json",
        doc(body_case('{"x": ' + "[" * 500 + "]" * 500 + "}")),
        '{"x": ' + "[" * 500 + "]" * 500 + "}",
        "nested too deeply (more than 100 levels)",
    ),
    (
        "request-two-bodies",
        doc("### 1. Two\n\n**Request:**\nPOST `/x`\n```json\n{}\n```\n```text\n{}\n```\n"),
        "```text",
        "a request has one body",
    ),
    (
        "fence-unclosed",
        doc("### 1. Open\n\n**Request:**\nPOST `/x`\n```json\n{}\n"),
        "```json",
        "never closed",
    ),
    (
        "strict-no-yaml",
        doc("### 1. S\n\n**Request:**\nGET `/x`\n\n**Strict:**\nstatus: 200\n"),
        "**Strict:**",
        "needs a ```yaml block",
    ),
    (
        "strict-yaml-syntax",
        doc(chat_case(strict="status: 200\n  bad: indent")),
        "  bad: indent",
        "invalid YAML: mapping values are not allowed",
    ),
    ("strict-not-mapping", doc(chat_case(strict="- status: 200")), "```yaml", "must be a YAML mapping"),
    ("strict-unknown-key", doc(chat_case(strict="stauts: 200")), "stauts: 200", "did you mean 'status'?"),
    (
        "strict-unknown-operator",
        doc(chat_case(strict="body:\n  choices: lenght(1)")),
        "  choices: lenght(1)",
        "did you mean 'length'?",
    ),
    (
        "strict-duplicate-key",
        doc(chat_case(strict="status: 200\nstatus: 201")),
        "status: 201",
        "duplicate key 'status'",
    ),
    (
        "expected-typo",
        doc(chat_case(extra="**Expected:** failed\n")),
        "**Expected:** failed",
        "did you mean 'failure'?",
    ),
    (
        "variable-source",
        doc(chat_case(extra="**Variables:**\n- `greeting`: random words\n")),
        "- `greeting`: random words",
        "is not a value source",
    ),
    (
        "variable-unknown",
        doc(chat_case(content="{{greting}}", extra="**Variables:**\n- `greeting`: One of [Hi]\n")),
        '{"model": "echo-agent", "messages": [{"role": "user", "content": "{{greting}}"}]}',
        "{{greting}} names no variable",
    ),
    (
        "tool-placeholder-unknown",
        doc(body_case('{"tools": [/* get_wether tool */]}'), setup=TOOLS),
        '{"tools": [/* get_wether tool */]}',
        "did you mean 'get_weather'?",
    ),
    (
        "tool-placeholder-no-definitions",
        doc(body_case('{"tools": [/* get_weather tool */]}')),
        '{"tools": [/* get_weather tool */]}',
        "needs a '### Tool Definitions' block",
    ),
    (
        "json-comment",
        doc(body_case('{"model": "x" /* note */}'), setup=TOOLS),
        '{"model": "x" /* note */}',
        "only understood as a tool placeholder",
    ),
    (
        "tool-definitions-json",
        doc(chat_case(), setup='### Tool Definitions\n\n```json\n[{"type": }]\n```\n'),
        '[{"type": }]',
        "Tool Definitions: not valid JSON",
    ),
    (
        "input-unreadable",
        doc("### 1. I\n\n**Input:**\nAsk the router about the weather\n"),
        "Ask the router about the weather",
        "write User sends",
    ),
    (
        "setup-field-typo",
        doc(chat_case(), setup="- Name: `a`\n- Handoff: [b]\n"),
        "- Handoff: [b]",
        "unknown agent field 'Handoff' — did you mean 'handoffs'?",
    ),
]


CASE_LEVEL = {
    "label-typo",
    "label-twice",
    "request-no-method",
    "request-method-typo",
    "request-trailing-text",
    "request-bad-json",
    "request-deep-json",
    "request-two-bodies",
    "strict-no-yaml",
    "strict-yaml-syntax",
    "strict-not-mapping",
    "strict-unknown-key",
    "strict-unknown-operator",
    "strict-duplicate-key",
    "expected-typo",
    "variable-source",
    "variable-unknown",
    "tool-placeholder-unknown",
    "tool-placeholder-no-definitions",
    "json-comment",
    "input-unreadable",
}
"""The MALFORMED entries whose problem is confined to their one case."""


def expected_line(text: str, marker: str) -> int | None:
    if not marker:
        return None
    return next(n for n, line in enumerate(text.split("\n"), 1) if line == marker)


@pytest.mark.parametrize(("name", "text", "marker", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_names_the_line_and_the_fix(
    tmp_path: Path, name: str, text: str, marker: str, message: str
) -> None:
    path = tmp_path / f"{name}.md"
    where, rendered = reported(text, str(path))
    assert where == ("case" if name in CASE_LEVEL else "file"), rendered
    assert message in rendered, rendered
    line = expected_line(text, marker)
    if line is not None:
        assert f"{path}:{line}:" in rendered, rendered
    else:
        assert re.search(rf"{re.escape(str(path))}:\d+:", rendered), rendered
    if where == "case":
        assert "\n" not in rendered, rendered


def test_a_bad_case_does_not_take_the_others_down() -> None:
    bad = chat_case(title="2. Bad", strict="stauts: 200")
    where, rendered = reported(doc(chat_case() + bad + chat_case(title="3. Fine")), "t.md")
    assert (
        where == "case" and rendered.startswith("t.md:") and "case 2: unknown strict key 'stauts'" in rendered
    )
    suite = compile_document(
        parse_text(doc(chat_case() + bad + chat_case(title="3. Fine")), "t.md"), Settings()
    )
    assert [c.error is None for c in suite.cases] == [True, False, True]


def test_a_mistake_in_a_skipped_case_is_still_reported() -> None:
    where, rendered = reported(doc(chat_case(strict="stauts: 200"), skip_reason="later"))
    assert where == "case" and "did you mean 'status'?" in rendered


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes(b"---\nname: t\nversion: 1\ntransport: completions\n---\n\n# Caf\xe9\n")
    with pytest.raises(SpecError, match=r"latin1.md:7: not UTF-8 text"):
        parse_file(path)


def test_every_malformed_file_is_a_clean_error(pytester: pytest.Pytester) -> None:
    """A collection error for a problem of the file, the case's ERROR (nothing sent) for a case's own."""
    for name, text, *_ in MALFORMED:
        (pytester.path / f"{name}.md").write_text(text)
    detected = [name for name, text, *_ in MALFORMED if compliance_markdown(pytester.path / f"{name}.md")]
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--continue-on-collection-errors")
    output = result.stdout.str()
    assert "Traceback" not in output and "pytest_semantictest/" not in output
    for name in detected:
        if name in CASE_LEVEL:
            assert f"ERROR {name}.md::" in output, name
        else:
            assert f"ERROR collecting {name}.md" in output, name
        assert any(line.startswith(f"{name}.md:") for line in result.stdout.lines), name  # relative
    assert len(detected) >= 20 and len(CASE_LEVEL & set(detected)) == len(CASE_LEVEL)
    result.stdout.fnmatch_lines([f"*{len(detected)} errors*"])


def test_deeply_nested_json_body() -> None:
    where, rendered = reported(doc(body_case("[" * 100000 + "]" * 100000)), "deep.md")
    assert where == "case"
    assert re.match(
        r"deep.md:\d+: case 1: the request body is not valid JSON: nested too deeply", rendered
    ), rendered


_PIECES = [
    "---\n",
    "name: x\n",
    "version: 1\n",
    "transport: completions\n",
    "## Test Cases\n",
    "## Setup\n",
    "### 1. T\n",
    "### Agent: a\n",
    "### Tool Definitions\n",
    "**Request:**\n",
    "**Strict:**\n",
    "**Input:**\n",
    "**Variables:**\n",
    "**Condition:**\n",
    "**Expected:** failure\n",
    "**Setup:**\n",
    "**Flow:**\n",
    "**Assertions:**\n",
    "```json\n",
    "```yaml\n",
    "```\n",
    "POST `/chat/completions`\n",
    "GET `/{x}`\n",
    "Authorization: Bearer {tok}\n",
    '{"tools": [/* t tool */], "m": "{{v}}"}\n',
    "status: [200, x]\n",
    "body:\n  a[*].b: length(2)\n",
    "chunks:\n  - x: exists\n",
    "events: {h: 1}\n",
    "- Name: `a`\n",
    "- Handoffs: [b]\n",
    '- `v`: One of ["a"]\n',
    '1. User sends "hi" to `a`\n',
    "Conversation:\n",
    '2. A: "x"\n',
    "  - nested: 1\n",
    "\t\n",
    "\n",
    ": :\n",
    "[/* */]\n",
    "\ufeff",
]


def test_the_parser_never_crashes_on_shuffled_pieces() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_semantictest.formats.compliance.parse import parse_text

    @settings(max_examples=fuzz_examples(150), deadline=None)
    @given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=20), max_size=40))
    def check(pieces: list[str]) -> None:
        text = "---\nname: x\nversion: 1\ntransport: completions\n---\n" + "".join(pieces)
        try:
            compile_document(parse_text(text, "fuzz.md"), Settings(env={"TOK": "t"}))
        except SpecError as exc:
            assert all(p.message for p in exc.problems)

    check()


def test_two_cases_with_one_title_run_under_two_names_with_a_warning() -> None:
    from pytest_semantictest.formats.compliance.compile import ComplianceWarning

    text = doc(chat_case(title="1. Simple") + chat_case(title="1. Simple", content="Again"))
    with pytest.warns(ComplianceWarning) as caught:
        suite = compile_document(parse_text(text, "t.md"), Settings())
    assert [c.id for c in suite.cases] == ["1. Simple", "1. Simple [2]"]
    first, second = (c.line for c in suite.cases)
    assert [(w.filename, w.lineno, str(w.message)) for w in caught] == [
        (
            "t.md",
            second,
            f"case '1. Simple' has the title of the case at line {first}: it runs as '1. Simple [2]' "
            "(each test needs a name of its own); give each case a title of its own",
        )
    ]
