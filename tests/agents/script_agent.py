"""The trace agent (``trace_agent.py``, imported unchanged) whose chat replies follow a script, for
repeated tests whose runs must not all behave alike.

    python script_agent.py --port 8731 [trace_agent.py options]

A message holding ``[plan A B C ...]`` is answered by the next action of its plan (a counter per
distinct message, wrapping around), so N runs of one trigger get each action a fixed number of
times whatever order they arrive in:

- ``ok``: the trace agent's own answer to the message (``order 1042`` -> a ``get_order`` call);
- ``quiet``: a reply without any tool call ("Hello! How can I help?");
- ``e500``: HTTP 500, no trace record.

Every ``POST /chat`` message is also written (``chat: <message>``, one line) to the agent's log.
Everything else (tools, trace records, routes, flags) is the trace agent's.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_agent

PLAN = re.compile(r"\[plan ([a-z0-9 ]+)\]")
_counts: dict[str, int] = {}
_lock = threading.Lock()


def next_action(message: str) -> str:
    found = PLAN.search(message)
    if found is None:
        return "ok"
    actions = found.group(1).split()
    with _lock:
        n = _counts.get(message, 0)
        _counts[message] = n + 1
    return actions[n % len(actions)]


class ScriptHandler(trace_agent.Handler):
    def do_POST(self) -> None:  # noqa: N802
        if self.path.partition("?")[0] != "/chat":
            super().do_POST()
            return
        raw = self.body()
        try:
            message = str(json.loads(raw)["message"])
        except (ValueError, KeyError, TypeError):
            self.send_json({"error": 'body must be {"message": ...}'}, 400)
            return
        os.write(1, f"chat: {message}\n".encode())  # one write: print() from other threads cannot split it
        action = next_action(message)
        test = self.headers.get("X-Highbar-Test")
        if action == "e500":
            self.send_body(500, "scripted failure", "text/plain")
        elif action == "quiet":
            self.send_json({"response": trace_agent.chat("hello", test)})
        else:
            self.send_json({"response": trace_agent.chat(message, test)})


def main() -> None:
    trace_agent.Handler = ScriptHandler  # main() looks the name up in the module at call time
    trace_agent.main()


if __name__ == "__main__":
    main()
