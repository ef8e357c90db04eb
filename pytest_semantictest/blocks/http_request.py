"""HttpRequest: one HTTP request over the session's keep-alive pool."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

from .base import Block, BlockError

_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}


@contextlib.contextmanager
def request_errors(url: str, timeout_ms: Any) -> Iterator[None]:
    """httpx's exceptions as the block errors a test reads (timeout, bad URL, connection failure)."""
    import httpx

    try:
        yield
    except httpx.TimeoutException:
        raise BlockError(f"Request timed out after {timeout_ms} ms") from None
    except httpx.InvalidURL as exc:
        raise BlockError(f"Invalid URL {url!r}: {exc}") from None
    except (httpx.HTTPError, OSError, ValueError) as exc:
        raise BlockError(f"Request failed: {type(exc).__name__}: {exc}".rstrip(": ")) from None


class HttpRequest(Block):
    name = "HttpRequest"
    inputs = ("url", "method", "headers", "body", "query", "timeout")
    outputs = ("status", "headers", "body", "duration", "url")
    config_keys = frozenset({"url", "method", "headers", "body", "query", "timeout"})

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        params = {**self.config, **inputs}
        request, timeout_ms = self.build(params, ctx)
        start = time.perf_counter()
        with request_errors(params["url"], timeout_ms):
            response = await ctx.http.send(request, follow_redirects=True)
        duration = round((time.perf_counter() - start) * 1000, 1)
        return {
            "status": response.status_code,
            "headers": {k.lower(): v for k, v in response.headers.items()},
            "body": response.text,
            "duration": duration,
            "url": str(response.request.url),
        }

    def build(self, params: dict[str, Any], ctx: Any) -> tuple[Any, Any]:
        """The httpx request ``params`` (config and inputs) describe, and its timeout in ms."""
        import httpx

        url = params.get("url")
        if not isinstance(url, str) or not url:
            raise BlockError(f"{self.name} needs input 'url' (a string); got {url!r}")
        method = str(params.get("method") or "GET").upper()
        if method not in _METHODS:
            raise BlockError(f"unsupported HTTP method {method!r}; use one of {', '.join(sorted(_METHODS))}")
        headers = {str(k): str(v) for k, v in (params.get("headers") or {}).items()}
        body = params.get("body")
        content: bytes | None = None
        if body is not None:
            if isinstance(body, (dict, list, int, float, bool)):
                content = json.dumps(body).encode()
                if not any(k.lower() == "content-type" for k in headers):
                    headers["Content-Type"] = "application/json"
            else:
                content = str(body).encode()
        query = params.get("query")
        timeout_ms = params.get("timeout") or ctx.settings.http_timeout_ms
        with request_errors(url, timeout_ms):
            request = ctx.http.build_request(
                method,
                url,
                headers=headers,
                content=content,
                params={str(k): str(v) for k, v in query.items()} if isinstance(query, dict) else None,
                timeout=httpx.Timeout(timeout_ms / 1000),
            )
        return request, timeout_ms

    def error_output(self, inputs: dict[str, Any], message: str) -> dict[str, Any]:
        return {"error": message, "status": 0, "duration": 0, "url": inputs.get("url", self.config.get("url"))}
