"""The structured-output schemas are derived from the pydantic models that parse the answers, and
stay what the recorded answers were asked with (the schema is part of the replay cache's key)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_semantictest.checks.judged import verdict_schema as bullet_schema
from pytest_semantictest.llm import simulator, validator
from pytest_semantictest.llm.structured import model_schema, parse_answer, strict_object
from pytest_semantictest.llm.verdict import JudgeVerdict, verdict_schema

STRING, BOOLEAN = {"type": "string"}, {"type": "boolean"}


def test_the_simulator_and_validator_schemas_are_their_models() -> None:
    assert {
        "name": "simulator_turn",
        "schema": strict_object(
            {
                "message": {"type": "string", "description": "the user's next message to the agent"},
                "goal_achieved": BOOLEAN,
                "reasoning": STRING,
            }
        ),
    } == simulator.SCHEMA
    assert {
        "name": "validator_result",
        "schema": strict_object(
            {
                "passed": BOOLEAN,
                "score": {
                    "type": "number",
                    "description": "how well the response meets the criteria, 0.0 to 1.0",
                },
                "reason": STRING,
                "suggestions": {"type": "array", "items": STRING},
            }
        ),
    } == validator.SCHEMA


@pytest.mark.parametrize("constraints, more", [(0, False), (2, True)])
def test_the_judge_schema_scores_exactly_the_criteria(constraints: int, more: bool) -> None:
    score = {"type": "number", "description": "score from 0.0 to 1.0"}
    properties: dict[str, Any] = {
        "reasoning": STRING,
        "details": strict_object({"accuracy": score, "tone & style": score}),
    }
    if constraints:
        one = strict_object({"met": BOOLEAN, "reason": STRING})
        properties["constraints"] = strict_object({"1": one, "2": one})
    if more:
        properties |= {"shouldContinue": BOOLEAN, "nextPrompt": {"type": ["string", "null"]}}
    assert verdict_schema(["accuracy", "tone & style"], constraints, more) == {
        "name": "judge_verdict",
        "schema": strict_object(properties),
    }


def test_the_compliance_bullet_schema_answers_each_numbered_assertion() -> None:
    one = strict_object({"passed": BOOLEAN, "reason": STRING})
    assert bullet_schema(2)["schema"] == strict_object({"assertions": strict_object({"1": one, "2": one})})


def test_a_derived_schema_has_no_refs_titles_defaults_or_bounds() -> None:
    text = repr(model_schema(JudgeVerdict, "v", keys={"details": ["a"], "constraints": ["1"]}))
    for word in ("$ref", "$defs", "title", "default", "minimum", "maximum", "anyOf"):
        assert word not in text


def test_a_bad_answer_says_what_is_wrong_for_the_re_ask() -> None:
    with pytest.raises(
        ValueError, match=r"^not a valid validator result \(score: Input should be less than or equal to 1"
    ):
        parse_answer(
            validator.ValidatorResult, '{"passed": true, "score": 3, "reason": "r"}', "validator result"
        )
    with pytest.raises(ValueError, match=r"^not a valid simulator answer \(answer: Invalid JSON"):
        simulator.parse_answer("nope")
