"""The redactor finds a secret by decoding what is printed: each shape of leak once reproduced,
and the values it used to mask without reason."""

from __future__ import annotations

import base64
import html
import json
import logging
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import httpx
import pytest

from pytest_semantictest.agents.config import AgentConfig
from pytest_semantictest.model import Outcome, Verdict
from pytest_semantictest.redact import MASK, Redactor, header_secrets, secret_name
from pytest_semantictest.report.html import overview
from pytest_semantictest.report.html_values import Render
from pytest_semantictest.report.logs import RedactedRecords

QUOTED = "ab\"cd'ef<gh>ij kl"


@pytest.mark.parametrize(
    "shown",
    [
        repr(json.dumps({"echo": QUOTED})),  # JSON-escaped, then repr-escaped: \\"
        repr(QUOTED),  # repr escapes ' as \'
        json.dumps(QUOTED)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("'", "\\u0027"),  # an agent's own JSON
        json.dumps(QUOTED).replace(" ", "\\u0020"),
        html.escape(repr(json.dumps(json.dumps(QUOTED)))),  # three layers of escaping, then HTML
        json.dumps(quote(QUOTED)),  # URL-quoted, then JSON
        base64.b64encode(json.dumps({"echo": QUOTED}).encode()).decode(),  # base64 of JSON holding it
    ],
    ids=[
        "repr-of-json",
        "repr",
        "own-json",
        "json-u0020",
        "html-repr-json-json",
        "json-of-url",
        "base64-of-json",
    ],
)
def test_a_secret_is_found_through_compositions_of_encodings(shown: str) -> None:
    text = Redactor([QUOTED]).text(f"before {shown} after")
    assert text.startswith("before ") and text.endswith(" after") and MASK in text
    assert "cd" not in text and "ij" not in text


def test_a_secret_with_a_slash_escaped_by_the_agent() -> None:
    secret = "tok/en/9Zq"
    assert Redactor([secret]).text('{"k":"tok\\/en\\/9Zq"}') == '{"k":"***"}'


def test_only_the_secret_is_masked_inside_an_encoded_run() -> None:
    """A percent-encoded run masks the secret's characters only, not its neighbours'."""
    shown = quote('"auth": "s3cr3t!x" next', safe="")
    assert Redactor(["s3cr3t!x"]).text(shown) == "%22auth%22%3A%20%22***%22%20next"


def test_a_query_string_httpx_re_encodes_is_masked() -> None:
    secret = 'q<1 "x"+y&z#'
    url = str(httpx.URL("http://127.0.0.1/x", params={"api_key": secret}))
    assert Redactor([secret]).text(url) == "http://127.0.0.1/x?api_key=***"


def test_a_custom_auth_header_with_a_space_is_a_secret_whole() -> None:
    assert header_secrets("X-Custom-Auth", "Sp2abc defg") == ["Sp2abc defg"]
    redactor = Redactor()
    redactor.learn({"headers": {"X-Custom-Auth": "Sp2abc defg"}})
    assert redactor.text("got Sp2abc defg and Sp2abc%20defg") == "got *** and ***"


def test_a_response_header_never_makes_a_secret() -> None:
    redactor = Redactor(["sk-live-0123456789"])
    trace = {"output": {"headers": {"x-ratelimit-limit-tokens": "1500000", "x-auth-token": "resp-value-1"}}}
    assert redactor.data(trace) == trace
    assert redactor.text("The budget is 1500000 EUR") == "The budget is 1500000 EUR"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "CLIENT_SECRET",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "MY_APIKEY",
        "SEMTEST_PASSWORD",
        "HF_TOKEN_READ",
        "CLIENT_SECRETS_FILE",
        "api_key",
        "session_token",
        "DBPASSWORD",
    ],
)
def test_secret_variable_names(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "MONKEY",
        "EXAMPLE_AGENT_URL",
        "PWD",
        "SORT_KEYS_BY",
        "AUTHOR_NAME",
        "SECRETARY_NAME",
        "OAUTH",
    ],
)
def test_ordinary_variable_names(name: str) -> None:
    assert not secret_name(name)


def test_a_declared_name_or_glob_is_a_secret() -> None:
    assert secret_name("SHOP_CODE", ["SHOP_*"]) and not secret_name("SHOP_CODE")


def test_the_html_overview_masks_an_error_before_taking_its_first_line() -> None:
    secret = "first-half\nsecond-half"
    verdict = Verdict(Outcome.ERROR, error=f"could not reach the agent with {secret}")
    item = SimpleNamespace(
        spec_file=SimpleNamespace(suite=SimpleNamespace(format="semantictest")),
        config=SimpleNamespace(rootpath=Path("/nowhere")),
    )
    shown = overview(Render(Redactor([secret]), 2000), item, verdict)
    assert "first-half" not in shown and "second-half" not in shown and "***" in shown


def test_log_records_of_the_plugin_and_its_libraries_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    secret = "sk-live 'quoted' 0123"
    records = RedactedRecords(lambda: Redactor([secret]))
    records.install()
    try:
        with caplog.at_level(logging.DEBUG):
            logging.getLogger("httpx").info(
                "HTTP Request: GET %s", httpx.URL("http://h/x", params={"k": secret})
            )
            logging.getLogger("httpcore.http11").debug("headers %r", [(b"authorization", secret.encode())])
            logging.getLogger("openai._base_client").debug(
                "Request options: %s", {"json_data": {"q": secret}}
            )
            logging.getLogger("httpx2").info("key=%s", secret)
            try:
                raise ValueError(secret)
            except ValueError:
                logging.getLogger("pytest_semantictest.agents").exception("failed")
            logging.getLogger("someone.else").info("own logger: %s", "sk-live")
    finally:
        records.uninstall()
    assert logging.getLogRecordFactory() is records.previous
    assert len(caplog.records) == 6
    assert "0123" not in caplog.text and "quoted" not in caplog.text, caplog.text
    assert "own logger: sk-live" in caplog.text  # other loggers are left alone


def test_a_start_command_keeps_a_secret_intact_and_shows_its_placeholder() -> None:
    secret = 'it\'s a "pass word"'
    config = AgentConfig.from_highbar(
        {"endpoint": "http://127.0.0.1:9/x", "start": "python agent.py --key=${AGENT_KEY} --port 9"},
        environ={"AGENT_KEY": secret},
    )
    assert config.start_argv == ["python", "agent.py", f"--key={secret}", "--port", "9"]
    assert config.start == "python agent.py --key=${AGENT_KEY} --port 9"
    assert (
        secret in config.secrets
        and config.redactor.text(f"could not run {secret}") == "could not run ${AGENT_KEY}"
    )


def test_an_ordinary_variable_in_a_start_command_is_expanded_before_the_split() -> None:
    """``${AGENT_CMD}`` may be a whole command line (as in highbar); only a secret is kept whole."""
    config = AgentConfig.from_highbar(
        {"endpoint": "http://127.0.0.1:9/x", "start": "${AGENT_CMD} --token ${AGENT_TOKEN}"},
        environ={"AGENT_CMD": "python agent.py", "AGENT_TOKEN": "tok en-0123"},
    )
    assert config.start_argv == ["python", "agent.py", "--token", "tok en-0123"]
    assert config.start == "python agent.py --token ${AGENT_TOKEN}"
    plain = AgentConfig.from_highbar(
        {"endpoint": "http://127.0.0.1:9/x", "start": "${AGENT_CMD} --port 9"},
        environ={"AGENT_CMD": "python agent.py"},
    )
    assert plain.start == "python agent.py --port 9" and plain.start_argv is None


def test_a_judge_reason_is_masked_before_it_is_put_on_one_line() -> None:
    """The summary's judge verdicts join a reason's lines and clip it: a secret with a newline that
    the judge quoted is masked first (before, its pieces were joined by a space and shown)."""
    from pytest_semantictest.evidence import JudgedItem, JudgedItems
    from pytest_semantictest.report.judge import verdict_counts

    secret = "first-half\nsecond-half"
    verdict = Verdict(Outcome.FAILED)
    verdict.evidence.append(JudgedItems("c", [JudgedItem("never tells", False, f"it told {secret}")]))
    _, failed, lines = verdict_counts(verdict, Redactor([secret]).text)
    assert failed == 1 and lines == ["NOT held: never tells: it told ***"]


@pytest.mark.parametrize("secret", ["pässwörd-é1", "Ã©xyz-123"])
def test_a_bytes_repr_and_an_ascii_repr_of_the_same_escapes(secret: str) -> None:
    """``\\xc3\\xa9`` is é in a bytes repr and Ã© in ``ascii()`` of a str: both are read."""
    redactor = Redactor([secret])
    for shown in (repr(secret.encode()), ascii(secret), repr(repr(secret.encode()))):
        assert (
            "***" in redactor.text(shown)
            and "xyz" not in redactor.text(shown)
            and "w" not in redactor.text(shown)
        )


def test_a_log_record_is_withheld_when_there_is_no_redactor(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Redactor:
        raise OSError("the .env file cannot be read")

    records = RedactedRecords(broken)
    records.install()
    try:
        with caplog.at_level(logging.INFO):
            logging.getLogger("httpx").info("HTTP Request: GET %s", "http://h/?key=sk-live-0123")
    finally:
        records.uninstall()
    assert caplog.messages == ["(log record withheld: no redactor: OSError)"]
