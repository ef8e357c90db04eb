"""The command line of the transport example agents: ``--port`` (0: a free one), ``--mode`` (a broken
copy, for the tests); prints ``LISTENING <url>`` and serves until Ctrl-C."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Sequence
from typing import Any


def serve_main(
    description: str, start_server: Callable[[int, str], tuple[Any, str]], modes: Sequence[str]
) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=modes, default="ok")
    args = parser.parse_args()
    server, url = start_server(args.port, args.mode)
    print(f"LISTENING {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
