"""Headless Chromium driven over the DevTools protocol, for tests that click and type in a page.

One browser per :class:`Browser` (its own profile folder, loopback only, no background networking),
one page: ``open`` a ``file://`` URL and wait until the page says it is ready, ``evaluate``
JavaScript in it, ``click`` and ``type`` by CSS selector (real input events), ``screenshot``.
Every console error and uncaught exception the page produced is in ``errors``. The protocol runs
over the ``websockets`` package the plugin already depends on.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.helpers import patience
from tests.reports.dom import chromium


class Browser:
    def __init__(self, folder: Path) -> None:
        profile = folder / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        (profile / "DevToolsActivePort").unlink(missing_ok=True)  # a browser before this one's port
        self.proc = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--no-first-run",
                "--hide-scrollbars",
                "--window-size=1280,900",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HOME": str(folder)},
        )
        self.errors: list[str] = []
        self._stack = contextlib.ExitStack()
        self._ids = itertools.count(1)
        try:
            port = self._port(profile / "DevToolsActivePort")
            pages = json.loads(
                urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read()
            )  # noqa: S310  (loopback)
            page = next(p for p in pages if p.get("type") == "page")
            self.ws: ClientConnection = self._stack.enter_context(
                connect(page["webSocketDebuggerUrl"], max_size=None)
            )
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable")
        except BaseException:
            self.close()
            raise

    def _port(self, active: Path) -> int:
        deadline = time.monotonic() + patience(30)
        while time.monotonic() < deadline:
            if active.exists() and (text := active.read_text().split()):
                return int(text[0])
            if self.proc.poll() is not None:
                raise RuntimeError(f"Chromium exited ({self.proc.returncode}) before it listened")
            time.sleep(0.05)
        raise TimeoutError("Chromium did not open its DevTools port")

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails") or {}
            self.errors.append(
                str((details.get("exception") or {}).get("description") or details.get("text"))
            )
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", []))
            )
        elif method == "Log.entryAdded" and (params.get("entry") or {}).get("level") == "error":
            self.errors.append(str(params["entry"].get("text")))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + patience(60)
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result") or {})
            self._note(message)

    def evaluate(self, expression: str) -> Any:
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression}: {found['exceptionDetails']}")
        return (found.get("result") or {}).get("value")

    def wait_for(self, expression: str, seconds: float = 30) -> Any:
        deadline = time.monotonic() + patience(seconds)
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(f"the page never made {expression!r} true")

    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === '1'") -> float:
        """Load ``url``; the seconds until ``ready`` held (from the navigation's start)."""
        started = time.perf_counter()
        self.call("Page.navigate", url=url)
        self.wait_for(ready)
        return time.perf_counter() - started

    def _center(self, selector: str) -> tuple[float, float]:
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if not box:
            raise LookupError(f"nothing on the page matches {selector!r}")
        return float(box[0]), float(box[1])

    def click(self, selector: str) -> None:
        x, y = self._center(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type(self, selector: str, text: str) -> None:
        self.click(selector)
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self._stack.close()
        self.proc.kill()
        self.proc.wait(timeout=30)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
