"""pytest-semantictest: declarative tests for AI agents and LLM-backed APIs, run by pytest.

What users may import is named in ``__all__``, from here: custom blocks (``Block``, ``BlockError``,
``register_block``, the ``StepContext`` a block receives, ``JudgeError``/``JudgeUnavailable``),
stream formats (``register_stream_format``), ``run_suite`` and what it returns, the evidence
records a block emits, and the objects the fixtures give. Every other module is internal: its
names may change in any release. Spec file formats are internal too (docs/formats.md).

Importing the package is cheap: each name is imported when it is first used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name is imported on first use (below)
    from .agents.client import AgentClient as AgentClient
    from .api import Runner as Runner
    from .api import SuiteResult as SuiteResult
    from .api import run_suite as run_suite
    from .blocks.base import Block as Block
    from .blocks.base import BlockError as BlockError
    from .blocks.registry import register_block as register_block
    from .blocks.stream.formats import register_format as register_stream_format
    from .databus import DataBus as DataBus
    from .errors import SemanticTestWarning as SemanticTestWarning
    from .evidence import CheckpointTimeline as CheckpointTimeline
    from .evidence import ConversationEnd as ConversationEnd
    from .evidence import ConversationTurn as ConversationTurn
    from .evidence import Evidence as Evidence
    from .evidence import HttpExchange as HttpExchange
    from .evidence import JudgedItem as JudgedItem
    from .evidence import JudgedItems as JudgedItems
    from .evidence import Judgement as Judgement
    from .evidence import Note as Note
    from .evidence import ParsedStream as ParsedStream
    from .evidence import ToolCall as ToolCall
    from .evidence import ToolCalls as ToolCalls
    from .evidence import ValidatorVerdict as ValidatorVerdict
    from .llm.fixtures import ClientFixture as ClientFixture
    from .llm.fixtures import JudgeFixture as JudgeFixture
    from .llm.validator import ValidatorFixture as ValidatorFixture
    from .model import Outcome as Outcome
    from .model import Verdict as Verdict
    from .step import JudgeError as JudgeError
    from .step import JudgeUnavailable as JudgeUnavailable
    from .step import StepContext as StepContext

__version__ = "0.1.0"

_HOME: dict[str, tuple[str, str]] = {
    # custom blocks (docs/blocks.md)
    "Block": ("blocks.base", "Block"),
    "BlockError": ("blocks.base", "BlockError"),
    "register_block": ("blocks.registry", "register_block"),
    "StepContext": ("step", "StepContext"),
    "JudgeError": ("step", "JudgeError"),
    "JudgeUnavailable": ("step", "JudgeUnavailable"),
    "register_stream_format": ("blocks.stream.formats", "register_format"),
    # running a suite from Python (docs/getting-started.md)
    "run_suite": ("api", "run_suite"),
    "SuiteResult": ("api", "SuiteResult"),
    "Verdict": ("model", "Verdict"),
    "Outcome": ("model", "Outcome"),
    # the base of every warning the plugin gives (filter them all at once)
    "SemanticTestWarning": ("errors", "SemanticTestWarning"),
    # evidence records (docs/architecture.md#evidence-how-what-a-test-did-reaches-the-reports)
    **{
        name: ("evidence", name)
        for name in (
            "Evidence",
            "HttpExchange",
            "ParsedStream",
            "ToolCall",
            "ToolCalls",
            "ConversationTurn",
            "CheckpointTimeline",
            "ConversationEnd",
            "Judgement",
            "ValidatorVerdict",
            "JudgedItem",
            "JudgedItems",
            "Note",
        )
    },
    # what the fixtures give (docs/fixtures.md): databus, semantictest_run, agent / agent_factory,
    # llm_judge, llm_validator, llm_client
    "DataBus": ("databus", "DataBus"),
    "Runner": ("api", "Runner"),
    "AgentClient": ("agents.client", "AgentClient"),
    "JudgeFixture": ("llm.fixtures", "JudgeFixture"),
    "ValidatorFixture": ("llm.validator", "ValidatorFixture"),
    "ClientFixture": ("llm.fixtures", "ClientFixture"),
}

__all__ = ["__version__", *_HOME]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = home
    value = getattr(import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # the next use does not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
