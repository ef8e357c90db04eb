"""The trace agent (``trace_agent.py``, imported unchanged) with a fixed delay per chat reply.

    python slow_agent.py --port 8731 [--delay 0.2] [--tcp-nodelay] [--backlog 128] [trace_agent.py options]

``--delay S``: every ``POST /chat`` sleeps S seconds before answering (default 0.2); requests
are served concurrently (one thread each), so N parallel requests still take about S.
``--tcp-nodelay``: set TCP_NODELAY on accepted connections. ``http.server`` writes the headers
and the body of a reply in two ``send`` calls; without it Nagle's algorithm holds the body back
until the client's delayed ACK (about 40 ms on Linux), which a real agent server (uvicorn,
aiohttp, node) does not do. The benchmark uses it so the agent's own time per reply is ~1 ms.
``--backlog N``: the listen backlog (default 128; ``socketserver``'s own is 5, so a burst of more
than about 5 new connections on a busy machine overflows it and a dropped SYN is retried after 1 s).
Everything else (tools, trace records, routes, other flags) is the trace agent's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_agent


def main() -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--tcp-nodelay", action="store_true")
    parser.add_argument("--backlog", type=int, default=128)
    own, rest = parser.parse_known_args()
    answer = trace_agent.chat

    def slow_chat(message: str, test: str | None) -> str:
        if own.delay > 0:
            time.sleep(own.delay)
        return answer(message, test)

    trace_agent.chat = slow_chat  # Handler.do_POST looks the name up in the module at call time
    if own.tcp_nodelay:
        trace_agent.Handler.disable_nagle_algorithm = True
    trace_agent.ThreadingHTTPServer.request_queue_size = own.backlog  # read by listen() in server_activate
    sys.argv = [sys.argv[0], *rest]
    trace_agent.main()


if __name__ == "__main__":
    main()
