"""The generator role: an LLM that writes test cases for a target agent (Yao's ``-i agents:...``).

It gets the target (name or URL, description, tools), how many cases and a focus, and answers
``{cases: [...]}`` in a strict schema: single-turn cases (``input``) or static conversations
(``turns``), with deterministic or ``agent`` assertions. ``validate`` (the Yao case model) checks
each case; problems make the model answer once more, then the call is an ``LLMError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ..json_types import JSONValue
from .client import LLMClient
from .structured import response_schema, strict_object

GENERATOR_TEMPLATE_VERSION = "generator-1"
SCHEMA_NAME = "generated_cases"
TYPES = ["equals", "contains", "not_contains", "regex", "json_path", "type", "tool_called", "agent"]

_ASSERTION = strict_object(
    {
        "type": {"type": "string", "enum": TYPES},
        "value": {
            "type": ["string", "null"],
            "description": "text, pattern, tool name, type name or criteria",
        },
        "path": {"type": ["string", "null"], "description": "JSON path for json_path and type"},
        "negate": {"type": "boolean"},
    }
)
_TURN = strict_object({"input": {"type": "string"}, "assertions": {"type": "array", "items": _ASSERTION}})
_CASE = strict_object(
    {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "input": {"type": ["string", "null"], "description": "the user's message (single-turn cases)"},
        "assertions": {"type": ["array", "null"], "items": _ASSERTION},
        "turns": {
            "type": ["array", "null"],
            "items": _TURN,
            "description": "a static multi-turn conversation",
        },
    }
)
SCHEMA: dict[str, JSONValue] = response_schema(SCHEMA_NAME, {"cases": {"type": "array", "items": _CASE}})

SYSTEM = """You write test cases for an AI agent. Each case is either single-turn ("input" and
"assertions", "turns" null) or a static conversation ("turns", each with "input" and "assertions";
"input" and "assertions" null). Assertions check the agent's reply: contains / not_contains / equals /
regex (value = text or pattern), tool_called (value = tool name), json_path (path + value), type
(value = string|number|boolean|object|array|null), agent (value = criteria an LLM validator judges).
Prefer assertions that hold for any good reply: tool_called for actions, agent for wording.
Give every case a short unique id and a descriptive name. Answer with a JSON object {"cases": [...]}."""


def generator_messages(
    *, target: str, count: int, focus: str | None, description: str | None, tools: Sequence[str]
) -> list[dict[str, str]]:
    request = {
        "target_agent": target,
        "count": count,
        "focus": focus or "a mix of happy paths and edge cases",
        "target_description": description or "",
        "target_tools": list(tools),
    }
    body = json.dumps(request, indent=2, sort_keys=True, ensure_ascii=False)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Write {count} test cases.\n{body}"},
    ]


def clean_case(raw: dict[str, JSONValue]) -> dict[str, JSONValue]:
    """Drop nulls and false ``negate`` (the schema needs every key; a case file does not)."""

    def assertion(a: dict[str, JSONValue]) -> dict[str, JSONValue]:
        out = {k: v for k, v in a.items() if v is not None and not (k == "negate" and v is False)}
        if out.get("type") == "tool_called" and "value" in out:
            out["name"] = out.pop("value")
        return out

    case: dict[str, JSONValue] = {
        k: v for k, v in raw.items() if v is not None and k not in ("assertions", "turns")
    }
    if raw.get("turns"):
        case["turns"] = [
            {
                "input": t["input"],
                **({"assertions": [assertion(a) for a in t["assertions"]]} if t.get("assertions") else {}),
            }
            for t in raw["turns"]
        ]
        case.pop("input", None)
    elif raw.get("assertions"):
        case["assertions"] = [assertion(a) for a in raw["assertions"]]
    return case


def _answer_cases(text: str) -> list[JSONValue]:
    """The answer's non-empty ``cases`` list, as given."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or not data["cases"]:
        raise ValueError("the answer must be an object with a non-empty 'cases' list")
    cases: list[JSONValue] = data["cases"]
    return cases


def parse_cases(
    text: str, validate: Callable[[dict[str, JSONValue]], str | None]
) -> list[dict[str, JSONValue]]:
    """The answer's cases, cleaned, with unique ids; ValueError naming what is wrong."""
    cases: list[dict[str, JSONValue]] = []
    seen: set[str] = set()
    problems: list[str] = []
    for n, raw in enumerate(_answer_cases(text), 1):
        if not isinstance(raw, dict):
            problems.append(f"cases[{n - 1}] is not an object")
            continue
        try:
            case = clean_case(raw)
        except (
            KeyError,
            TypeError,
            AttributeError,
        ) as exc:  # a turn without input, a string where an object goes
            problems.append(f"cases[{n - 1}] is not a case of the schema ({type(exc).__name__}: {exc})")
            continue
        case_id = str(case.get("id") or f"G{n:03d}")
        if case_id in seen:
            case_id = f"{case_id}-{n}"
        seen.add(case_id)
        case["id"] = case_id
        problem = validate(case)
        if problem:
            problems.append(f"case '{case_id}': {problem}")
        cases.append(case)
    if problems:
        raise ValueError("; ".join(problems[:5]))
    return cases


async def generate(
    client: LLMClient,
    *,
    target: str,
    count: int,
    focus: str | None,
    description: str | None = None,
    tools: Sequence[str] = (),
    validate: Callable[[dict[str, JSONValue]], str | None] = lambda case: None,
    model: str | None = None,
) -> list[dict[str, JSONValue]]:
    """``count`` cases (the model may write fewer); raises LLMError."""
    messages = generator_messages(
        target=target, count=count, focus=focus, description=description, tools=tools
    )
    completion = await client.complete(
        "generator",
        messages,
        model=model,
        schema=SCHEMA,
        parse=lambda text: parse_cases(text, validate),
        template=GENERATOR_TEMPLATE_VERSION,
    )
    cases: list[dict[str, JSONValue]] = completion.parsed
    return cases
