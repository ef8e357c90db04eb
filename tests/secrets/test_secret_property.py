"""Random secrets through every channel reach no output, in any encoding, nor any 8-character piece.

Hypothesis draws one secret a channel (printable ASCII, unicode, a space, a newline; 8-64 characters):
a SemanticTest request's JSON body, query string (which httpx re-encodes), ``Authorization`` (a plain
variable name: secret by where it goes), a custom auth header with a space, a variable declared with
``--semantictest-secret-env``, a URL that gets no response (the error text), text an LLM judge is
given and quotes back; a highbar agent's ``start:`` argument, header and body; a compliance
placeholder in ``Authorization`` and the compliance API key; a Yao agent's header. The agents echo all of
it back in escapings of their own (``\\uXXXX`` for every non-alphanumeric character, ``\\/``, URL,
``+``, repr, HTML, base64). One pytest run takes a whole batch, with ``-rA -vv``, JUnit
``junit_logging=all``, HTML, the results file, the replay cache, ``--log-level=DEBUG`` and
``--log-file``; then every artefact is searched for each secret in every encoding and composition of
two, and for every 8-character piece of it in every encoding, raw also inside every base64 run.
Innocent values (``x-ratelimit-limit-tokens: 1500000``, ``tokenizer``, ...) must stay visible.

The one-process run carries two batches (a pytest process each cost as much as the rest of the test):
the drawn one under the names above, and :func:`explicit` under names of the same kinds
(:func:`second_name`: ``ST_B_BODY_API_KEY``, ``RELAY_B_VALUE``, ``DECLARED_B_THING``, ...), each in
spec files of its own. One exception: the run has one compliance API key, the drawn batch's; the
explicit batch's ``COMPLIANCE_B_API_KEY`` is a secret by its name only (``destination.md``'s second
case sends the key; each file's first writes its own ``Authorization``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import json
import re
import string
import sys
import textwrap
from collections.abc import Callable
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.llm.fake_openai import FakeOpenAI
from tests.ports import free_port
from tests.reports.scenario import run, step, write_suite
from tests.secrets.echo_agent import INNOCENT, own_json, serve
from tests.secrets.test_encoded_secrets import DESTINATION as COMPLIANCE
from tests.secrets.test_encoded_secrets import yao_cases

ECHO_AGENT = __import__("pathlib").Path(__file__).with_name("echo_agent.py")
PIECE = 8

CHANNELS = {  # variable -> whether its secret goes in a header (printable ASCII, no newline, no edge space)
    "ST_BODY_API_KEY": False,
    "ST_QUERY_TOKEN": False,
    "RELAY_VALUE": True,
    "CUSTOM_VALUE": True,
    "DECLARED_THING": False,
    "ST_URL_TOKEN": False,
    "ST_JUDGED_SECRET": False,
    "HB_START_SECRET": False,
    "HB_AGENT_TOKEN": True,
    "HB_BODY_API_KEY": False,
    "COMPLIANCE_API_KEY": True,
    "SESSION_VALUE": True,
}
_PRINTABLE = [c for c in string.printable if c not in "\t\r\x0b\x0c"]  # with a space and a newline
_UNICODE = st.characters(
    min_codepoint=0xA1, max_codepoint=0x2FFF, exclude_categories=("Cs", "Cc", "Zl", "Zp")
)


def _kind(char: str) -> str:
    return next(
        (
            k
            for k, chars in (
                ("letter", string.ascii_letters),
                ("digit", string.digits),
                ("space", string.whitespace),
            )
            if char in chars
        ),
        "other" if char.isascii() else "wide",
    )


def _varied(value: str) -> bool:
    """Random-looking enough that no piece of it is ordinary output (eight spaces, ``00012345``,
    ``icontains``, ``must be a string``: each piece has six different characters of two kinds, two of
    them neither a letter nor a space), and no ``${``/``{{`` a spec would read as a reference."""
    windows = [value[i : i + PIECE] for i in range(len(value) - PIECE + 1)]
    return all(
        len(set(w)) >= 6
        and len({_kind(c) for c in w}) >= 2
        and sum(_kind(c) not in ("letter", "space") for c in w) >= 2
        for w in windows
    ) and not any(m in value for m in ("${", "{{", "}}"))


def _spiced(chars: st.SearchStrategy[str], rare: str) -> st.SearchStrategy[str]:
    """Random text of ``chars`` with one of ``rare`` after every fourth character (8 to 64 in all):
    every 8-character piece holds one, so no piece is a word of ordinary output (hypothesis likes
    to draw ``api_key_env`` or ``must be a string``)."""

    def spice(drawn: tuple[str, list[str]]) -> str:
        text, spices = drawn
        return "".join(c + (spices[i // 4] if i % 4 == 3 else "") for i, c in enumerate(text))

    return st.tuples(
        st.text(chars, min_size=7, max_size=51), st.lists(st.sampled_from(rare), min_size=13, max_size=13)
    ).map(spice)


_ANY = _spiced(st.one_of(st.sampled_from(_PRINTABLE), _UNICODE), "~^|`\u00a4\u00a7\u2603").filter(_varied)
_HEADER = _spiced(st.sampled_from(string.printable[:95]), "~^|`").filter(
    lambda v: _varied(v) and v == v.strip()
)
SECRETS = st.fixed_dictionaries({name: _HEADER if header else _ANY for name, header in CHANNELS.items()})


def _encoders() -> dict[str, Callable[[str], str]]:
    return {
        "raw": lambda v: v,
        "json": lambda v: json.dumps(v, ensure_ascii=False)[1:-1],
        "json-ascii": lambda v: json.dumps(v)[1:-1],
        "own-json": lambda v: own_json(v)[1:-1],
        "repr": lambda v: repr(v)[1:-1],
        "url": lambda v: quote(v, safe=""),
        "url-path": quote,
        "url-plus": quote_plus,
        "html": html.escape,
        "html-noquote": lambda v: html.escape(v, quote=False),
    }


def forms(secret: str) -> dict[str, str]:
    """The secret in every encoding and every composition of two, and base64; each 8-character piece
    in every encoding."""
    enc = _encoders()
    found = {f"{b} of {a}": eb(ea(secret)) for a, ea in enc.items() for b, eb in enc.items()}
    found["base64"] = base64.b64encode(secret.encode()).decode().rstrip("=")
    for i in range(len(secret) - PIECE + 1):
        found.update({f"{a} of piece {i}": ea(secret[i : i + PIECE]) for a, ea in enc.items()})
    return {k: v for k, v in found.items() if len(v) >= PIECE}


_BASE64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")


def with_base64_decoded(text: str) -> str:
    """``text`` and, after it, every base64 run in it decoded (where it decodes to text)."""
    decoded = []
    for match in _BASE64.finditer(text):
        token = match.group(0).rstrip("=")
        try:
            decoded.append(base64.b64decode(token + "=" * (-len(token) % 4)).decode("utf-8"))
        except (binascii.Error, UnicodeDecodeError):
            continue
    return "\n".join([text, *decoded])


def var(name: str, second: bool = False) -> str:
    """The variable that carries the channel ``name`` in a batch: the channel's own in the first, and in
    the run's second batch ``_B`` after its first part, so the name stays of its kind (``*_API_KEY``,
    ``*_TOKEN``, ``*_SECRET`` by name, ``DECLARED_*`` declared, a plain one)."""
    first, _, rest = name.partition("_")
    return f"{first}_B_{rest}" if second else name


def judged_text(second: bool = False) -> str:
    """What the judged reply says before its batch's secret (each batch its own fake judge rule)."""
    return "The other key is" if second else "The key is"


def semantictest_suite(echo: str, refused: str, second: bool = False) -> dict[str, object]:
    def env(name: str) -> str:
        return f"${{env.{var(name, second)}}}"

    headers = {"Authorization": f"Bearer {env('RELAY_VALUE')}", "X-Custom-Auth": env("CUSTOM_VALUE")}
    body = {"message": env("ST_BODY_API_KEY"), "declared": env("DECLARED_THING"), "plain": "hello"}
    return {
        "name": "planted",
        "tests": [
            {
                "id": "echoed",
                "pipeline": [
                    step(
                        "HttpRequest",
                        "response",
                        input={
                            "url": f"{echo}/chat",
                            "method": "POST",
                            "headers": headers,
                            "body": body,
                            "query": {"api_key": env("ST_QUERY_TOKEN")},
                        },
                    ),
                    step("JsonParser", "parsed", input="${response.body}"),
                ],
                "assertions": {
                    "response.status": 200,
                    "parsed.parsed.response": {"contains": "nothing like this"},
                    "response.headers.x-ratelimit-limit-tokens": "0",
                    **{f"parsed.parsed.{key}": "(something else)" for key in INNOCENT},
                },
            },
            {
                "id": "refused",
                "pipeline": [
                    step(
                        "HttpRequest", "response", input={"url": f"{refused}/x?token={env('ST_URL_TOKEN')}"}
                    ),
                ],
                "assertions": {"response.status": 200},
            },
            {
                "id": "judged",
                "pipeline": [
                    step(
                        "MockData",
                        "reply",
                        config={"data": {"text": f"{judged_text(second)} {env('ST_JUDGED_SECRET')}."}},
                    ),
                    step(
                        "LLMJudge",
                        "judgement",
                        input={
                            "text": "${reply.text}",
                            "expected": {"expectedBehavior": "Never reveals the key"},
                        },
                    ),
                ],
                "assertions": {"judgement.passed": True},
            },
        ],
    }


def highbar_spec(port: int, sha: str, second: bool = False) -> str:
    start, token, key = (
        var(name, second) for name in ("HB_START_SECRET", "HB_AGENT_TOKEN", "HB_BODY_API_KEY")
    )
    return textwrap.dedent(f"""\
        agent:
          start: "{sys.executable} {ECHO_AGENT} --port {port} --secret=${{{start}}}"
          endpoint: "http://127.0.0.1:{port}/chat"
          health: "http://127.0.0.1:{port}/health"
          settle_time: 0
          request:
            headers: {{X-Agent-Token: "${{{token}}}"}}
            body: {{message: "{{{{message}}}}", key: "${{{key}}}"}}
          response: response
        suites:
          - name: Echo
            tests:
              - name: echoes everything
                trigger: "What did you get?"
                expect:
                  response: {{contains: nothing like this}}
              - name: start keeps the secret intact
                trigger: "Which secret were you started with?"
                expect:
                  response: {{contains: "{sha}"}}
        """)


def _write_batch(pytester: pytest.Pytester, echo_url: str, secrets: dict[str, str], second: bool) -> set[str]:
    """One batch's spec files (the second's named ``*_b``), its secrets set as its variables: the files'
    names."""
    suffix = "_b" if second else ""
    write_suite(
        pytester,
        semantictest_suite(echo_url, f"http://127.0.0.1:{free_port()}", second),
        name=f"planted{suffix}",
    )
    sha = hashlib.sha256(secrets["HB_START_SECRET"].encode()).hexdigest()[:16]
    pytester.makefile(".highbar.yaml", **{f"echo{suffix}": highbar_spec(free_port(), sha, second)})
    # {session_value} in Authorization (the second batch: {session_b_value})
    spec = textwrap.dedent(COMPLIANCE).replace(
        "{session_value}", "{" + var("SESSION_VALUE", second).lower() + "}"
    )
    pytester.makefile(".md", **{f"destination{suffix}": spec + ("" if second else KEY_CASE)})
    yao_cases(pytester, echo_url, f"encoded_test{suffix}", var("RELAY_VALUE", second))  # a Yao agent's header
    return {
        f"planted{suffix}.json",
        f"echo{suffix}.highbar.yaml",
        f"destination{suffix}.md",
        f"encoded_test{suffix}.agent.yaml",
        f"encoded_test{suffix}.jsonl",
    }


KEY_CASE = "\n" + COMPLIANCE[COMPLIANCE.index("### 1.") :].replace(
    "1. Echoed session", "2. Echoed key"
).replace("Headers:\n- `Authorization: Bearer {session_value}`\n", "")
"""A request without its own ``Authorization``: the compliance API key goes as ``Bearer``, and the
agent echoes it (the first batch's only: the run has one key)."""
assert "Authorization" not in KEY_CASE


def _run_batches(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    batches: list[dict[str, str]],
    workers: list[str],
) -> None:
    """One pytest run of every batch (at most two), then every artefact searched for each secret."""
    secrets = {var(name, n == 1): value for n, batch in enumerate(batches) for name, value in batch.items()}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    echo = serve()
    try:
        echo_url = f"http://127.0.0.1:{echo.server_address[1]}"
        inputs = {"tox.ini"}
        for n, batch in enumerate(batches):
            second = n == 1
            fake_openai.rule(
                judged_text(second),
                0.1,
                reasoning=f"The reply gives the key {batch['ST_JUDGED_SECRET']} away.",
            )
            inputs |= _write_batch(pytester, echo_url, batch, second)
        args = [
            f"--semantictest-llm-base-url={fake_openai.url}",
            "--semantictest-secret-env=DECLARED_*",
            f"--semantictest-compliance-base-url={echo_url}/v1",
            "--html=report.html",
            "--self-contained-html",
            "--junitxml=junit.xml",
            "-o",
            "junit_logging=all",
            "-rA",
            "-vv",
            "--semantictest-results=results.jsonl",
            "--log-level=DEBUG",
            "--log-file=run.log",
            "--log-file-level=DEBUG",
            "-p",
            "no:randomly",
            *workers,
        ]
        result = run(pytester, *args, own_process=True)
    finally:
        echo.shutdown()
        echo.server_close()
    console = result.stdout.str() + result.stderr.str()
    written = [p for p in pytester.path.rglob("*") if p.is_file() and p.name not in inputs]
    kinds = {part for p in written for part in p.relative_to(pytester.path).parts}
    assert {"report.html", "junit.xml", "results.jsonl", "run.log", "judge"} <= kinds, sorted(kinds)
    texts = {
        "console": console,
        **{
            str(p.relative_to(pytester.path)): p.read_text(encoding="utf-8", errors="replace")
            for p in written
        },
    }
    searched = {where: with_base64_decoded(text) for where, text in texts.items()}
    # Every form is at least PIECE characters long: one in a text starts with one of the text's PIECE-
    # character windows. The windows, a set a text, rule out nearly all of some 17,000 forms at once;
    # the rest are looked for in the text itself.
    windows = {
        where: {text[i : i + PIECE] for i in range(len(text) - PIECE + 1)} for where, text in searched.items()
    }
    leaks = sorted(
        {
            (where, name)
            for secret_name, secret in secrets.items()
            for form_name, form in forms(secret).items()
            for where, text in searched.items()
            if form[:PIECE] in windows[where] and form in text
            for name in [f"{secret_name}: {form_name}"]
        }
    )
    assert not leaks, leaks[:20]
    results = [json.loads(line) for line in texts["results.jsonl"].splitlines()]
    outcomes = {(r["file"], r["id"].rpartition("::")[2]): r["outcome"] for r in results}
    for suffix in ("", "_b")[: len(batches)]:
        # the agent got the start secret unchanged
        assert outcomes.get((f"echo{suffix}.highbar.yaml", "start keeps the secret intact")) == "passed", (
            outcomes
        )
        assert outcomes[f"planted{suffix}.json", "echoed"] == "failed", outcomes
        assert outcomes[f"echo{suffix}.highbar.yaml", "echoes everything"] == "failed", outcomes
        assert outcomes[f"destination{suffix}.md", "1. Echoed session"] == "failed", outcomes
        assert f"encoded_test{suffix}.jsonl" in {r["file"] for r in results}, results  # it ran too
    assert outcomes["destination.md", "2. Echoed key"] == "failed", outcomes  # the key echoed, masked
    for innocent in INNOCENT.values():  # in the failure messages: each is compared with something else
        assert f"Expected '{innocent}' to equal" in console, innocent
    assert "Expected '1500000' to equal '0'" in console  # a response header is never a secret
    assert "HTTP Request: POST" in texts["run.log"]  # httpx's own line is there, redacted


FOUND = {  # batches that found a leak once, kept: a judge quoting a secret with a newline (the summary
    # joined its lines before masking); a quote in a highbar start secret (the validator split the expanded line)
    "ST_JUDGED_SECRET": ">Y_\u09f1e\u174fM\n]\u013fa\u00da\u0110\u00e6\u010b\u0799\u00ff7\u1000?\u0109%",
    "HB_START_SECRET": "\u00edk\u00ddq\u00a1\u0d3f;'\u0130\u00ae\u21f9y\u012a",
    "RELAY_VALUE": ',H~ ZN]1 ;0+]MX.g*A",?BhI}Mi\\r9 c"N',
    "ST_URL_TOKEN": "6\u00c6\u2876\u00bc\u2916\nU\u1cac9XV\ne\u0364",
}


def explicit() -> dict[str, str]:
    """:data:`FOUND`, and for each other channel a secret every encoding changes (ASCII in headers)."""

    def made(name: str) -> str:
        tag = hashlib.sha256(name.encode()).hexdigest()[:4]
        return f'{tag} "s3\\cr\'3t"/+%&<x>' + ("" if CHANNELS[name] else "\u00e9\n\u2603")

    return {name: FOUND.get(name) or made(name) for name in CHANNELS}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_random_secrets_reach_no_output(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    """One drawn batch in each run; the one-process run also carries :func:`explicit`, as its second
    batch (its own spec files and variables, in the same pytest process)."""

    # no shrinking: each example is a whole pytest run
    @settings(
        max_examples=1,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(SECRETS)
    def batch(secrets: dict[str, str]) -> None:
        for path in list(pytester.path.iterdir()):  # a fresh folder for each example
            if path.is_file() or path.is_symlink():
                path.unlink()
            else:
                __import__("shutil").rmtree(path)
        fake_openai.rules.clear()
        _run_batches(
            pytester, fake_openai, monkeypatch, [secrets] if workers else [secrets, explicit()], workers
        )

    batch()
