"""LLM roles (judge, simulator, paraphraser, validator, generator) over one OpenAI-compatible client.

``config`` resolves model, endpoint and sampling per role; ``client`` makes the calls (retries,
bounded concurrency, usage counters) through ``cache`` (the replay cache); ``judge`` implements
LLMJudge on top, with ``prompts`` and ``verdict``. Nothing here imports ``openai`` until a request
actually has to go over the network.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..redact import Redactor
    from .client import LLMClient
    from .config import LLMConfig
    from .judge import Judge


def build(config: LLMConfig, redactor: Redactor | None = None) -> tuple[LLMClient, Judge | None]:
    """The session's client, and a judge when one is configured (else ``None``); ``redactor`` (the
    session's) masks secrets in errors and in replay cache entries before they are written."""
    from .client import LLMClient

    client = LLMClient(config, redactor=redactor)  # its cache entries pass through the same redactor
    judge: Judge | None = None
    if config.configured("judge"):
        from .judge import Judge

        judge = Judge(client)
    return client, judge
