"""LLMJudge: semantic evaluation by an LLM; without a configured judge the test is skipped."""

from __future__ import annotations

from typing import Any

from .base import Block

DEFAULT_CRITERIA = {"accuracy": 0.4, "completeness": 0.3, "relevance": 0.3}


class LLMJudge(Block):
    name = "LLMJudge"
    primary_input = "text"
    config_keys = frozenset({"model", "criteria", "threshold", "continueConversation", "maxTurns"})

    @classmethod
    def validate_config(cls, config: dict[str, Any]) -> list[tuple[str, str]]:
        problems = []
        criteria = config.get("criteria")
        if criteria is not None:
            if not isinstance(criteria, dict) or not criteria or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in criteria.values()
            ):
                problems.append(("criteria", "must map criterion names to weights >= 0"))
            elif abs(sum(criteria.values()) - 1.0) > 1e-6:
                problems.append(("criteria", f"weights must sum to 1, they sum to {sum(criteria.values()):g}"))
        threshold = config.get("threshold")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1
        ):
            problems.append(("threshold", f"must be a number between 0 and 1, got {threshold!r}"))
        return problems

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        from ..engine.runner import JudgeUnavailable

        judge = getattr(ctx, "judge", None)
        if judge is None:
            raise JudgeUnavailable("LLM judge not configured")
        return await judge.evaluate(inputs, self.config)
