"""Compliance files through real pytest runs (in-process; the secret check in its own interpreter) against the
example server."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.compliance.conftest import chat_case, compliance_server, doc
from tests.helpers import run_pytest

pytest_plugins = ["pytester"]


def run(pytester: pytest.Pytester, url: str, *args: str, own_process: bool = False) -> pytest.RunResult:
    return run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-rs",
        f"--semantictest-compliance-base-url={url}",
        *args,
        own_process=own_process,
    )


def test_passing_failing_and_the_failure_diff(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer
) -> None:
    strict = "status: 200\nbody:\n  choices[0].message.content: Echo Hello\n  choices: length(1)"
    pytester.makefile(
        ".md", basic=doc(chat_case("1. Fine", strict="status: 200") + chat_case("2. Wrong", strict=strict))
    )
    result = run(pytester, server.url)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*compliance: 2. Wrong*",
            "2. Wrong (basic.md:*)",
            'body choices?0?.message.content (line 42): expected "Echo Hello", got "Echo: Hello"',
            "  operator: equals",
            "  expected: 'Echo Hello'",
            "  actual:   'Echo: Hello'",
            "*- Echo Hello",
            "*+ Echo: Hello",
            "*Captured pipeline trace*",
            "?0? request (ChatRequest) line *",
        ]
    )


def test_expected_failure(pytester: pytest.Pytester, server: compliance_server.ComplianceServer) -> None:
    rejected = chat_case("1. Rejected", model="nobody", strict="status: 404", extra="**Expected:** failure\n")
    accepted = chat_case("2. Accepted", extra="**Expected:** failure\n")
    wants_success = chat_case(
        "3. Wants success", model="nobody", strict="body:\n  error: exists", extra="**Expected:** success\n"
    )
    pytester.makefile(".md", expected=doc(rejected + accepted + wants_success))
    result = run(pytester, server.url, "-v")
    result.stdout.fnmatch_lines(["*1. Rejected PASSED*", "*2. Accepted FAILED*", "*3. Wants success FAILED*"])
    result.stdout.fnmatch_lines(
        [
            "expected: failure (line *): the request was accepted (status 200) but the case expects it to be rejected",
            "expected: success (line *): the request was rejected with status 404",
        ]
    )


def test_an_unreachable_server_is_an_error_but_refused_counts_as_rejected(pytester: pytest.Pytester) -> None:
    refused = chat_case("2. Refused", strict="status: 400", extra="**Expected:** failure\n")
    pytester.makefile(".md", down=doc(chat_case("1. Down") + refused))
    result = run(pytester, "http://127.0.0.1:9", "-v")
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(
        ["*no response from http://127.0.0.1:9/chat/completions: Request failed: ConnectError*"]
    )


def test_headers_are_sent_and_the_api_key_is_masked(pytester: pytest.Pytester) -> None:
    secret = "sk-compliance-secret-4242"
    instance, url = compliance_server.start_server(0, api_key=secret)
    try:
        echo = """### 2. Headers

**Request:**
GET `/echo-headers`
Headers:
- `X-Custom-Header: custom value`

**Strict:**
```yaml
body:
  x-custom-header: custom value
  authorization: Bearer sk-compliance-secret-4242
```

### 3. Fails and shows the response, which holds the key

**Request:**
GET `/echo-headers`

**Strict:**
```yaml
status: 201
```
"""
        pytester.makefile(".md", keyed=doc(chat_case("1. Chat") + echo))
        without = run(pytester, url, "-k", "Chat")
        without.assert_outcomes(failed=1)
        without.stdout.fnmatch_lines(["*expected 200, got 401*"])
        result = run(pytester, url, f"--semantictest-compliance-api-key={secret}", "-vv", own_process=True)
        result.assert_outcomes(passed=2, failed=1)
        assert secret not in result.stdout.str()
        result.stdout.fnmatch_lines(['*authorization\\": \\"Bearer ****', '*"Authorization": "***"*'])
    finally:
        instance.shutdown()


def test_depends_on_orders_files_and_skips_dependants_of_a_failed_file(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer
) -> None:
    pytester.makefile(".md", a_second=doc(chat_case("1. Needs base"), name="second", depends_on="[base]"))
    pytester.makefile(".md", b_third=doc(chat_case("1. Needs second"), name="third", depends_on="[second]"))
    pytester.makefile(".md", c_base=doc(chat_case("1. Broken", strict="status: 500"), name="base"))
    pytester.makefile(
        ".md", d_other=doc(chat_case("1. Independent"), name="other", depends_on="[not-collected]")
    )
    result = run(pytester, server.url, "-v")
    result.stdout.fnmatch_lines(
        [
            "*c_base.md::1. Broken FAILED*",
            "*a_second.md::1. Needs base SKIPPED*",
            "*b_third.md::1. Needs second SKIPPED*",
            "*d_other.md::1. Independent PASSED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "SKIPPED ?1? a_second.md:*: depends on 'base', which failed",
            "SKIPPED ?1? b_third.md:*: depends on 'second', which was skipped (depends on 'base', which failed)",
        ]
    )


def test_timeout_per_case(pytester: pytest.Pytester, slow_server: str) -> None:
    pytester.makefile(".md", slow=doc(chat_case("1. Slow"), timeout=0.5))
    result = run(pytester, slow_server)
    result.assert_outcomes(errors=1)
    # the exchange owns the case's timeout, so the ERROR says what it was doing when it ran out
    result.stdout.fnmatch_lines(
        ["*1. Slow*", "*timed out after 500 ms while connecting, sending the request*"]
    )


def test_other_transports_are_not_skipped(pytester: pytest.Pytester) -> None:
    """A case of another transport runs (here: nothing listens, so each is an ERROR naming the address)."""
    case = '### 1. Send a task\n\n**Input:** User sends "Hi" to `agent`\n\n**Assertions:**\n- The task completes\n'
    for transport in ("a2a", "realtime"):
        pytester.makefile(".md", **{transport: doc(case, name=transport, transport=transport)})
    result = run(pytester, "http://127.0.0.1:9")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*cannot connect to http://127.0.0.1:9: ConnectError*"])
    result.stdout.fnmatch_lines(["*ws://127.0.0.1:9/realtime: cannot connect to*"])


def test_skip_reason_and_markers(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer
) -> None:
    pytester.makefile(".md", skipped=doc(chat_case(), name="s", skip_reason="not ready", tags="[slow]"))
    pytester.makefile(".md", tagged=doc(chat_case(), name="t", tags="[core, streaming]"))
    pytester.makefile(".md", README="# Just docs\n\nNot a compliance file.\n")
    result = run(pytester, server.url, "-W", "error::pytest.PytestUnknownMarkWarning", "--strict-markers")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED ?1? skipped.md:*: skip_reason: not ready"])
    selected = run(pytester, server.url, "-m", "streaming", "-v")
    selected.assert_outcomes(passed=1)
    assert "README" not in selected.stdout.str()


def test_the_setup_hook_is_offered_once_per_file(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer
) -> None:
    pytester.makeconftest("""
import json

def pytest_semantictest_compliance_setup(config, setup):
    with open("hook.log", "a") as fh:
        fh.write(json.dumps({"document": setup.document, "base_url": setup.base_url,
                             "agents": [a.config() for a in setup.agents]}) + "\\n")
    if setup.document == "broken":
        raise RuntimeError("cannot create the agents")
""")
    setup = (
        "### Agent: echo-agent\n- Name: `echo-agent`\n- Tools: [search]\n- Auth Config:\n  - Mode: validate\n"
    )
    pytester.makefile(".md", one=doc(chat_case("1. A") + chat_case("2. B"), name="one", setup=setup))
    pytester.makefile(".md", two=doc(chat_case("1. C"), name="broken"))
    pytester.makefile(".md", three=doc(chat_case("1. D"), name="skipped", skip_reason="later"))
    result = run(pytester, server.url)
    result.assert_outcomes(passed=2, errors=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*two.md: pytest_semantictest_compliance_setup failed: RuntimeError: cannot create the agents*"]
    )
    calls = [json.loads(line) for line in (pytester.path / "hook.log").read_text().splitlines()]
    assert [c["document"] for c in calls] == ["one", "broken"]
    assert calls[0]["base_url"] == server.url
    assert calls[0]["agents"] == [
        {
            "id": "echo-agent",
            "name": "echo-agent",
            "instructions": None,
            "tools": ["search"],
            "handoffs": [],
            "skills": [],
            "extra": {"auth_config": {"mode": "validate"}},
        }
    ]


def test_variables_are_reported(
    pytester: pytest.Pytester, server: compliance_server.ComplianceServer
) -> None:
    case = chat_case(
        "1. Greeting",
        content="{{greeting}}",
        strict="status: 201",
        extra='**Variables:**\n- `greeting`: One of ["Hello", "Hi", "Hey"]\n',
    )
    pytester.makefile(".md", variables=doc(case))
    result = run(pytester, server.url, "--junitxml=run.xml")
    result.stdout.fnmatch_lines(["?0? variables (MockData) line *", '  output.greeting: "H*"'])
    tree = ET.parse(pytester.path / "run.xml")
    reported = next(p.get("value") for p in tree.iter("property") if p.get("name") == "variables")
    assert reported is not None and json.loads(reported)["greeting"] in ("Hello", "Hi", "Hey")
    greeting = json.loads(reported)["greeting"]
    assert (
        f'output.greeting: "{greeting}"' in result.stdout.str()
    )  # the same value in the trace and the report
