"""``semantictest agreement``'s pytest plugin and its report: the session's LLM judge asked about each
labelled example, and how well it agrees with the labels (Cohen's kappa with its 95% interval, the
confusion counts, each disagreement, the ``--min-kappa`` gate)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import pytest

from .errors import SpecError
from .runtime import runtime

if TYPE_CHECKING:
    from .formats.labels import Labelled
    from .json_types import JSONObject
    from .stats import Agreement


class JudgeAgreement:
    """A pytest plugin that collects nothing: it asks the session's judge about each labelled example
    (with the session's LLM options and replay cache) and keeps the pairs (label, judge)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        self.results: list[tuple[str, bool, bool, float | None]] = []
        """``(name, label, judge passed, score)`` per example."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool:
        session.items = []
        try:
            self._judge_all(session.config)
        except SpecError as exc:  # the labels file: each problem names its line
            self.problem = exc.render()
        except Exception as exc:  # noqa: BLE001  said as one line (secrets masked), never a traceback
            self.problem = runtime(session.config).current_redactor().text(f"{self.path}: {exc}")
        return True

    def _judge_all(self, config: pytest.Config) -> None:
        import asyncio

        from .formats.labels import load_labels
        from .llm.judge_request import JudgeRequest

        def judge_rules(example: Labelled) -> str | None:
            try:
                JudgeRequest.from_inputs(example.inputs, example.config)
            except ValueError as exc:
                return str(exc)
            return None

        examples = load_labels(self.path, judge_rules)
        state = runtime(config)
        judge = state.judge
        if judge is None:
            raise RuntimeError(
                "no LLM judge is configured: set OPENAI_API_KEY, or --semantictest-llm-base-url "
                "(or use --semantictest-llm-cache=replay with a recorded cache)"
            )
        samples = state.context.settings.judge_samples

        async def ask(example: Labelled) -> JSONObject:
            answer: JSONObject = await judge.judge(
                JudgeRequest.from_inputs(example.inputs, example.config), samples=samples
            )
            return answer

        async def ask_all() -> list[JSONObject | BaseException]:
            return await asyncio.gather(*(ask(e) for e in examples), return_exceptions=True)

        answers = state.run(ask_all())
        failed = [(e, a) for e, a in zip(examples, answers) if isinstance(a, BaseException)]
        if failed:
            example, error = failed[0]
            raise RuntimeError(
                state.redactor.text(
                    f"{example.name} (line {example.line}): the judge gave no verdict: "
                    f"{error}" + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
                )
            )
        self.results = [
            (e.name, e.label, bool(a["passed"]), a.get("score"))
            for e, a in zip(examples, answers)
            if not isinstance(a, BaseException)
        ]


def _kappa_line(found: Agreement) -> str:
    """The kappa with its 95% interval, or why agreement beyond chance cannot be measured."""
    if found.kappa is not None and found.low is not None and found.high is not None:
        return f"kappa {found.kappa:.2f} (95% CI {found.low:.2f} to {found.high:.2f})"
    return f"kappa {found.undefined} (agreement beyond chance cannot be measured)"


def _disagreement(name: str, label: bool, judged: bool, score: float | None) -> str:
    """The line of one example the judge decided against its label."""
    shown = f", score {score:g}" if isinstance(score, (int, float)) else ""
    return (
        f"  disagrees: {name} (labelled {'pass' if label else 'fail'}, judge "
        f"{'passed' if judged else 'failed'}{shown})\n"
    )


def _below_min_kappa(found: Agreement, min_kappa: float | None) -> str | None:
    """Why the agreement fails ``--min-kappa`` (an undefined kappa fails it too), or None."""
    if min_kappa is None:
        return None
    if found.low is None:
        return f"--min-kappa {min_kappa:g}: the kappa is {found.undefined}; label both classes"
    if found.low < min_kappa:
        return f"the kappa's lower bound {found.low:.2f} is below --min-kappa {min_kappa:g}"
    return None


def write_agreement(
    out: TextIO, path: str, results: list[tuple[str, bool, bool, float | None]], min_kappa: float | None
) -> int:
    """Print the agreement of ``results`` (``(name, label, judge passed, score)``); 0, or 1 when it
    fails ``min_kappa``."""
    from .stats import cohen_kappa

    found = cohen_kappa([(label, judged) for _, label, judged, _ in results])
    counts = found.counts
    out.write(
        f"judge agreement with {found.total} labelled examples in {path}:\n"
        f"  {_kappa_line(found)}; observed agreement {found.observed:.0%}\n"
        f"  labelled pass: judge passed {counts[True, True]}, judge failed {counts[True, False]}\n"
        f"  labelled fail: judge passed {counts[False, True]}, judge failed {counts[False, False]}\n"
    )
    out.writelines(
        _disagreement(name, label, judged, score) for name, label, judged, score in results if label != judged
    )
    failed = _below_min_kappa(found, min_kappa)
    if failed is not None:
        out.write(f"✗ {failed}\n")
        return 1
    return 0
