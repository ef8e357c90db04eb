#!/usr/bin/env python3
"""The OTLP receiver under a span flood: does 10,000 spans a second from one agent slow the run?

Target: the run with the flood takes at most 1.1x the run without.

A pytest run (``--semantictest-otel --semantictest-otel-port=PORT``) of a SemanticTest suite of
``--tests`` HTTP tests against a loopback server in its own process, timed twice per repeat: once
quiet, once while a flood process posts OTLP/protobuf exports to the run's receiver at ``--rate``
spans a second (batches of 512 spans with GenAI tool attributes, encoded once, as an SDK's batch
exporter sends them). The two kinds alternate; medians are compared. The flood process prints how
many spans the receiver accepted (HTTP 200) per second of the run, so a receiver that fell behind
shows as a lower accepted rate, not a faster run.

Not covered: spans far larger than these (a few hundred bytes each), gzip-compressed exports, more
than one exporting agent.

Usage::

    python bench/bench_otlp.py [--tests 300] [--rate 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

SERVER = textwrap.dedent(
    """
    import json, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a): pass
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.dumps({"reply": "ok"}).encode()
            self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers()
            self.wfile.write(body)
    s = ThreadingHTTPServer(("127.0.0.1", 0), H); print(s.server_address[1], flush=True); s.serve_forever()
    """
)

FLOOD = textwrap.dedent(
    """
    import os, sys, time, httpx
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    url, rate, batch = sys.argv[1], int(sys.argv[2]), 512
    req = ExportTraceServiceRequest()
    spans = req.resource_spans.add().scope_spans.add()
    for i in range(batch):
        s = spans.spans.add()
        s.trace_id, s.span_id, s.name = os.urandom(16), os.urandom(8), "execute_tool get_weather"
        s.start_time_unix_nano, s.end_time_unix_nano = 1, 2
        for k, v in (("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", "get_weather"),
                     ("gen_ai.tool.call.arguments", '{"city": "Paris", "unit": "celsius"}')):
            s.attributes.append(KeyValue(key=k, value=AnyValue(string_value=v)))
    body = req.SerializeToString()
    sent = accepted = 0
    start = time.monotonic()
    with httpx.Client(headers={"content-type": "application/x-protobuf"}) as client:
        while True:
            due = start + (sent * batch) / rate
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                ok = client.post(url + "/v1/traces", content=body, timeout=5).status_code == 200
            except httpx.HTTPError:
                ok = False
            sent += 1
            accepted += batch if ok else 0
            elapsed = time.monotonic() - start
            sys.stdout.write(f"{accepted} {elapsed:.3f}\\n"); sys.stdout.flush()
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tests", type=int, default=300)
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-otlp-"))
    (folder / "pytest.ini").write_text("[pytest]\n")
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
    tests = [
        {
            "id": f"t{i}",
            "pipeline": [
                {
                    "block": "HttpRequest",
                    "input": {"url": url, "method": "POST", "body": {"n": i}},
                    "output": "r",
                }
            ],
            "assertions": {"r.status": 200},
        }
        for i in range(args.tests)
    ]
    (folder / "suite.json").write_text(json.dumps({"name": "bench", "tests": tests}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    walls: dict[str, list[float]] = {"quiet": [], "flood": []}
    rates: list[float] = []
    try:
        for _ in range(args.repeat):
            for kind in ("quiet", "flood"):
                port = free_port()
                cmd = [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "suite.json",
                    "--semantictest-otel",
                    f"--semantictest-otel-port={port}",
                ]
                run = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE, text=True)
                flood = None
                if kind == "flood":
                    while True:  # the receiver listens once the run has started its services
                        try:
                            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                            break
                        except OSError:
                            if run.poll() is not None:
                                break
                            time.sleep(0.01)
                    flood = subprocess.Popen(
                        [sys.executable, "-c", FLOOD, f"http://127.0.0.1:{port}", str(args.rate)],
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                started = time.perf_counter()
                out, _ = run.communicate()
                wall = time.perf_counter() - started
                if run.returncode != 0 or f"{args.tests} passed" not in out:
                    print(out)
                    return 2
                walls[kind].append(wall)
                if flood is not None:
                    flood.terminate()
                    lines = (flood.communicate()[0] or "").split()
                    if len(lines) >= 2:
                        accepted, elapsed = float(lines[-2]), float(lines[-1])
                        rates.append(accepted / elapsed if elapsed else 0.0)
    finally:
        server.terminate()
    quiet, flooded = statistics.median(walls["quiet"]), statistics.median(walls["flood"])
    ratio = flooded / quiet
    print(
        f"{args.tests} HTTP tests, receiver on; flood {args.rate} spans/s; {args.repeat} runs of each, medians:"
    )
    print(
        f"  quiet {quiet:.2f} s, with the flood {flooded:.2f} s: {ratio:.2f}x (target <= 1.10: {'PASS' if ratio <= 1.1 else 'FAIL'})"
    )
    print(
        f"  spans the receiver accepted per second during the flooded runs: median {statistics.median(rates):.0f}"
    )
    return 0 if ratio <= 1.1 else 1


if __name__ == "__main__":
    sys.exit(main())
