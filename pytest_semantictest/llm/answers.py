"""What an OpenAI-compatible chat completion says (its text, the model that answered, its tokens), and
how a failed connection reads in an error line."""

from __future__ import annotations

from ..shown import one_line
from .errors import LLMError


def read_answer(role: str, response: object, model: str) -> tuple[str, int, str]:
    """(text, total tokens, the model that answered) of a chat completion; a refusal is an error."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return "", _tokens(response), getattr(response, "model", None) or model
    message = choices[0].message
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise LLMError(f"the {role} model refused to answer: {one_line(refusal, 300)}")
    return message.content or "", _tokens(response), getattr(response, "model", None) or model


def _tokens(response: object) -> int:
    usage = getattr(response, "usage", None)
    return int(getattr(usage, "total_tokens", 0) or 0) if usage else 0


def token_split(response: object) -> tuple[int, int]:
    """(prompt, completion) tokens of an answer; a total without the split counts as prompt tokens."""
    usage = getattr(response, "usage", None)
    if not usage:
        return 0, 0
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    return (prompt, completion) if prompt or completion else (_tokens(response), 0)


def cannot_connect(cause: BaseException) -> str:
    return f"cannot connect ({type(cause).__name__}: {one_line(cause, 500)})"
