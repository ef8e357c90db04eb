"""A Yao agent (OpenAI protocol) whose reply is not the protocol's JSON (an event stream nobody asked
for, truncated or not, plain text, a JSON list or string) makes that turn an agent ERROR naming what
came back, which fails the test as every agent error during a turn does (docs/conversations.md); its
raw text is never taken as the reply (which would then pass ``contains "Hello"``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.servers.quiet import QuietHandler, in_thread
from tests.yao.conftest import write_cases

pytest_plugins = ["pytester"]

CHUNK = 'data: {"choices": [{"index": 0, "delta": {"content": "Hello"}}]}\n\n'
REPLIES: dict[str, tuple[str, str]] = {  # path -> (content type, body)
    "/sse-truncated": ("text/event-stream", CHUNK + 'data: {"choices": [{"index": 0, "delta": {"cont'),
    "/sse-whole": ("text/event-stream", CHUNK + "data: [DONE]\n\n"),
    "/sse-untyped": ("text/plain", CHUNK),
    "/plain": ("text/plain", "Hello there"),
    "/json-string": ("application/json", '"Hello"'),
    "/json-list": ("application/json", '["Hello"]'),
    "/completion": (
        "application/json",
        json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there"}}]}),
    ),
    # a completion that never said "Hello", next to keys a highbar agent would answer with
    "/response-key": (
        "application/json",
        json.dumps(
            {
                "response": "Hello",
                "text": "Hello",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Goodbye"}}],
            }
        ),
    ),
    "/odd-extras": (
        "application/json",
        json.dumps(
            {
                "response": {"kept": True},
                "message": None,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello there"}}],
            }
        ),
    ),
    "/no-choices": ("application/json", json.dumps({"response": "Hello"})),
}


class Agent(QuietHandler):
    def serve(self, body: bytes) -> None:
        kind, text = REPLIES.get(self.path.split("/v1")[0], ("application/json", "{}"))
        payload = text.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with in_thread(Agent) as url:
        yield url


CASE = {"id": "greets", "input": "hi", "assertions": [{"type": "contains", "value": "Hello"}]}


def run(pytester: pytest.Pytester, base: str, path: str) -> pytest.RunResult:
    write_cases(pytester, "greet_test", CASE)
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-rA", f"--semantictest-agent-endpoint={base}{path}/v1/chat/completions"
    )


@pytest.mark.parametrize(
    ("path", "named"),
    [
        (
            "/sse-truncated",
            "an event stream (text/event-stream) that ends before its [DONE] event (truncated), "
            "which the request did not ask for",
        ),
        ("/sse-whole", "an event stream (text/event-stream), which the request did not ask for"),
        ("/sse-untyped", "an event stream (text/plain) that ends before its [DONE] event (truncated)"),
        ("/plain", "text/plain text"),
        ("/json-string", "a JSON string"),
        ("/json-list", "a JSON list"),
    ],
)
def test_a_reply_that_is_not_the_protocols_json_is_that_turns_error(
    pytester: pytest.Pytester, base: str, path: str, named: str
) -> None:
    result = run(pytester, base, path)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*ERROR: agent error at turn 1: the agent's reply is not an OpenAI chat completion (a JSON object): it is "
            f"{named.replace('[', '[[]')}*"
        ]
    )
    result.stdout.fnmatch_lines(["*Got: *Hello*"])  # what came back, shown


def test_a_chat_completion_still_passes(pytester: pytest.Pytester, base: str) -> None:
    run(pytester, base, "/completion").assert_outcomes(passed=1)


def test_the_text_is_the_completions_own_never_a_response_key_beside_it(
    pytester: pytest.Pytester, base: str
) -> None:
    """Over the OpenAI protocol only ``choices[0].message.content`` is what the agent said: a
    top-level ``response`` saying "Hello" does not make a completion that said "Goodbye" pass."""
    result = run(pytester, base, "/response-key")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Goodbye*"])


def test_keys_beside_a_completion_change_nothing(pytester: pytest.Pytester, base: str) -> None:
    run(pytester, base, "/odd-extras").assert_outcomes(passed=1)


def test_a_json_object_without_choices_is_that_turns_error(pytester: pytest.Pytester, base: str) -> None:
    result = run(pytester, base, "/no-choices")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*agent error at turn 1: the reply is not an OpenAI chat completion: it has no choices[[]0].message*"
        ]
    )
