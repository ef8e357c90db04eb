"""A value that reaches a secret-looking header is a secret everywhere, whatever its variable is called:
a compliance ``{session_value}`` placeholder in ``Authorization`` is masked also where the server
echoes the header back (before, only the request's own header was masked)."""

from __future__ import annotations

import textwrap

import pytest

from tests.reports.scenario import Backend, run

SESSION_VALUE = "sess-5b8d0e6a93f1"

SPEC = """\
---
name: destination
version: 1.0
transport: completions
---

# Destination

## Setup

Create an agent with the following configuration:
- Name: `echo-agent`

## Test Cases

### 1. Echoed session

**Request:**
POST `/chat/completions`
Headers:
- `Authorization: Bearer {session_value}`

Body:
```json
{"model": "echo-agent", "messages": [{"role": "user", "content": "hello"}]}
```

**Strict:**
```yaml
body:
  choices[0].message.content: contains("nothing like this")
```
"""


def test_a_placeholder_sent_as_authorization_is_masked_where_it_is_echoed(
    pytester: pytest.Pytester, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSION_VALUE", SESSION_VALUE)  # a plain name: a secret only by where it goes
    pytester.makefile(".md", destination=textwrap.dedent(SPEC))
    result = run(
        pytester,
        f"--semantictest-compliance-base-url={backend.url}/v1",
        "--junitxml=junit.xml",
        "--semantictest-results=results.jsonl",
        "-vv",  # the whole trace: the reply's body uncut
        own_process=True,
    )
    result.assert_outcomes(failed=1)
    console = result.stdout.str()
    assert '\\"authorization\\": \\"Bearer ***\\"' in console  # the echo, inside the reply's JSON
    outputs = {
        "console": console,
        **{
            name: (pytester.path / name).read_text(encoding="utf-8")
            for name in ("junit.xml", "results.jsonl")
        },
    }
    assert not [where for where, text in outputs.items() if "5b8d0e6a93f1" in text]
