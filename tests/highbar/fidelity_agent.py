"""The trace agent (``tests/agents/trace_agent.py``, imported unchanged) with the tagging faults highbar's
verdicts depend on, for the side-by-side fidelity specs under ``fidelity/``.

    python fidelity_agent.py --port 8731 [--tag own|previous|none] [--no-declare] [--slow-s S]
                             [--late-s S] [--late-on-slow] [--spans FILE] [trace_agent.py options]

``--tag own`` (default): records carry this request's ``X-Highbar-Test``; ``previous``: the id of the
request before (the first request's records carry none); ``none``: no test id at all (an agent
without tagging middleware). A ``conversation_id`` in the request body is added to every record's
context (correlation by session). ``--no-declare``: the ``hello`` lists no tools. Messages, on top of
the trace agent's rules:

- ``... later ...``: replies at once, records a tagged ``get_order`` call ``LATE_S`` seconds later
  (``--late-s``; with ``untagged`` in the message, one without any context; with ``garbled``, a line
  that is not JSON); with ``--late-on-slow``, not before a ``slowly`` message has come, which then
  waits for it instead of ``SLOW_S`` (a late call that lands while a later test runs, whatever the
  machine's load);
- ``... slowly ...``: answers like the trace agent, after ``SLOW_S`` seconds (``--slow-s``); with
  ``--spans FILE`` each such answer appends its ``start end`` times to FILE (overlap shows in them);
  ``... for a moment ...``: after three quarters of that;
- ``... thread ... order 1042``: the trace agent's answer, but ``get_order`` is recorded from a thread
  that lost the request's context (no test id) next to the tagged ``turn`` record.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))

import trace_agent

LATE_S = 0.6
SLOW_S = 1.2
SPANS: str | None = None
LATE_ON_SLOW = False
EVENT_S = 60.0
"""How long ``--late-on-slow``'s late call and slow answer wait for each other at most."""
_slow_came = threading.Event()
_late_written = threading.Event()
MODE = "own"
DECLARE = True
_local = threading.local()
_previous: list[str | None] = [None]
_lock = threading.Lock()
_write = trace_agent.write


def write(record: dict[str, Any]) -> None:
    """Every record written by a request's thread gets that request's context."""
    context = getattr(_local, "context", None)
    if record.get("type") == "hello" and not DECLARE:
        record = {key: value for key, value in record.items() if key != "tools"}
    if context is not None and "context" in record:
        record = {**record, "context": context}
    _write(record)


def _context(header: str | None, body: dict[str, Any]) -> dict[str, Any]:
    with _lock:
        previous, _previous[0] = _previous[0], header
    test = {"own": header, "previous": previous, "none": None}[MODE]
    context: dict[str, Any] = {"test": test} if test else {}
    if body.get("conversation_id") is not None:
        context["conversation_id"] = body["conversation_id"]
    return context


class FidelityHandler(trace_agent.Handler):
    def do_POST(self) -> None:  # noqa: N802
        if self.path.partition("?")[0] != "/chat":
            super().do_POST()
            return
        try:
            body = json.loads(self.body())
            message = str(body["message"])
        except (ValueError, KeyError, TypeError):
            self.send_json({"error": 'body must be {"message": ...}'}, 400)
            return
        context = _context(self.headers.get("X-Highbar-Test"), body)
        _local.context = context
        try:
            self.send_json({"response": self.answer(message, context)})
        finally:
            _local.context = None

    def answer(self, message: str, context: dict[str, Any]) -> str:
        lowered = message.lower()
        if "slowly" in lowered:
            start = time.time()
            if LATE_ON_SLOW:
                _slow_came.set()
                _late_written.wait(EVENT_S)
            else:
                time.sleep(SLOW_S)
            if SPANS:
                with _lock, open(SPANS, "a", encoding="utf-8") as spans:
                    spans.write(f"{start} {time.time()}\n")
        elif "for a moment" in lowered:
            time.sleep(SLOW_S * 0.75)
        if "garbled" in lowered:  # a line no reader can parse, LATE_S later
            threading.Timer(LATE_S, _garble).start()
        if "later" in lowered:
            late = {} if "untagged" in lowered else {**context}  # a timer thread that lost (or kept) the tag
            threading.Thread(target=_late_call, args=(late,), daemon=True).start()
            reply = "I will look into it later."
            write({"type": "turn", "message": message, "response": reply, "context": context})
            return reply
        if "thread" in lowered:
            worker = threading.Thread(
                target=trace_agent.tool, args=("get_order", {"order_id": "1042"}, {"status": "shipped"}, None)
            )
            worker.start()
            worker.join()
            reply = "Order 1042 has shipped."
            write({"type": "turn", "message": message, "response": reply, "context": context})
            return reply
        return trace_agent.chat(message, context.get("test"))


def _late_call(context: dict[str, Any]) -> None:
    """The tagged (or untagged) ``get_order`` of a ``later`` message, when its time comes."""
    time.sleep(LATE_S)
    if LATE_ON_SLOW:
        _slow_came.wait(EVENT_S)
    _write(
        {
            "type": "tool",
            "fn": "get_order",
            "args": {"order_id": "late"},
            "result": {"status": "late"},
            "error": None,
            "context": context,
        }
    )
    _late_written.set()


def _garble() -> None:
    with open(str(trace_agent.TRACES), "a", encoding="utf-8") as traces:
        traces.write("{not json\n")


def main() -> None:
    global MODE, DECLARE, SLOW_S, SPANS, LATE_ON_SLOW, LATE_S
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tag", choices=["own", "previous", "none"], default="own")
    parser.add_argument("--no-declare", action="store_true")
    parser.add_argument("--slow-s", type=float, default=SLOW_S)
    parser.add_argument("--late-s", type=float, default=LATE_S)
    parser.add_argument("--late-on-slow", action="store_true")
    parser.add_argument("--spans")
    known, rest = parser.parse_known_args()
    MODE, DECLARE, SLOW_S, SPANS = known.tag, not known.no_declare, known.slow_s, known.spans
    LATE_ON_SLOW, LATE_S = known.late_on_slow, known.late_s
    sys.argv = [sys.argv[0], *rest]
    trace_agent.write = write  # tool() and chat() look the name up in the module at call time
    trace_agent.Handler = FidelityHandler
    trace_agent.main()


if __name__ == "__main__":
    main()
