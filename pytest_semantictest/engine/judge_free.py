"""When an LLM role failed (judge unreachable, refused, replay miss): the checks that do not depend on
it still run, and a failure among them decides the verdict (highbar's rule: failed > error > passed).

A check depends on the LLM when it reads a slot written by the failed step or by a step the failure
kept from running, or when it is itself judged (it has no ``evaluate_sync``); those are not evaluated.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..databus import DataBus
from ..model import Check, Failure, Step, StepTrace
from .inputs import output_slots


def judge_free_failures(
    steps: Sequence[Step],
    trace: Sequence[StepTrace],
    failed: Collection[int],
    checks: Sequence[Check],
    bus: DataBus,
) -> list[Failure]:
    """Failures of the deterministic ``checks`` that read nothing the failed steps (indexes ``failed``
    into ``steps``) or the steps after them produced."""
    ran = {id(t.step) for t in trace}
    tainted: set[str] = set()
    for index, step in enumerate(steps):
        if index in failed or id(step) not in ran:
            tainted.update(output_slots(step.output, step.id))
    failures: list[Failure] = []
    for check in checks:
        evaluate_sync = getattr(check, "evaluate_sync", None)
        if evaluate_sync is None or check.reads & tainted:
            continue
        failures.extend(evaluate_sync(bus).failures)
    return failures
