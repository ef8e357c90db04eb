"""HttpRequest: one HTTP request over the session's keep-alive pool."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ..agents.exchange import send_within
from ..deadline import Deadline, DeadlineExceeded, timeout_ms, timeout_problem
from ..evidence import HttpExchange
from ..json_types import JSONObject, JSONValue
from ..model import StepTrace
from .base import Block, BlockError

if TYPE_CHECKING:
    import httpx

    from ..evidence import Evidence
    from ..step import StepContext


def http_exchange(trace: StepTrace) -> list[Evidence]:
    """An HTTP step's exchange, read from its trace (also a failed request: status 0 and the error)."""
    out, sent = trace.output, trace.input
    if not (isinstance(out, Mapping) and "status" in out and ("body" in out or "error" in out)):
        return []
    request = sent if isinstance(sent, Mapping) and "url" in sent else out.get("request")
    if isinstance(request, Mapping) and not request.get("method"):  # the method it was sent with
        request = {**request, "method": default_method(request.get("body"))}
    return [HttpExchange(request, out)] if isinstance(request, Mapping) else []


_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}


async def _read_all(response: httpx.Response) -> bytes:
    data: bytes = await response.aread()
    return data


@contextlib.contextmanager
def request_errors(url: str, deadline: Deadline) -> Iterator[None]:
    """httpx's exceptions as the block errors a test reads (timeout, bad URL, connection failure)."""
    import httpx

    try:
        yield
    except DeadlineExceeded as exc:
        raise BlockError(str(exc)) from None
    except httpx.TimeoutException:
        raise BlockError(deadline.message()) from None
    except httpx.InvalidURL as exc:
        raise BlockError(f"Invalid URL {url!r}: {exc}") from None
    except (httpx.HTTPError, OSError, ValueError) as exc:
        raise BlockError(f"Request failed: {type(exc).__name__}: {exc}".rstrip(": ")) from None


def default_method(body: JSONValue) -> str:
    """The method of a request written without one: GET, or POST when it has a body (documented in
    docs/migrating.md; a warning at collection names the assumption)."""
    return "GET" if body is None else "POST"


def _usable_timeout(value: JSONValue) -> JSONValue:
    """A ``timeout`` that is not a usable number of milliseconds is a collection error (none or 0:
    the run's default)."""
    if value is None or (value == 0 and not isinstance(value, bool)):
        return value
    problem = timeout_problem(value)
    if problem:
        raise ValueError(problem)
    return value


class HttpRequestConfig(BaseModel):
    """An HttpRequest step's config (or object input); any value may be a ``${}`` reference."""

    model_config = ConfigDict(extra="allow", frozen=True)

    url: JSONValue = None
    method: JSONValue = None
    headers: JSONValue = None
    body: JSONValue = None
    query: JSONValue = None
    timeout: Annotated[JSONValue, BeforeValidator(_usable_timeout)] = None


class HttpRequest(Block):
    name = "HttpRequest"
    concurrency_safe = True
    inputs = ("url", "method", "headers", "body", "query", "timeout")
    input_keys = frozenset(inputs)
    outputs = ("status", "headers", "body", "duration", "url")
    config_model = HttpRequestConfig
    config_keys = frozenset(HttpRequestConfig.model_fields)

    @classmethod
    def validate_input(cls, value: Mapping[str, JSONValue]) -> list[tuple[str, str]]:
        """The same keys are accepted as input: a literal ``timeout`` there is checked the same way."""
        return cls.validate_config(value)

    @classmethod
    def assumptions(cls, config: Mapping[str, JSONValue], value: JSONValue) -> list[tuple[str, str]]:
        """A step without ``method`` that sends a body is sent as POST (:func:`default_method`): say so."""
        written = {**config, **(value if isinstance(value, Mapping) else {})}
        if written.get("method") is None and written.get("body") is not None:
            return [
                (
                    "method",
                    "no 'method' and a 'body': sent as POST (a body is never sent with GET); "
                    'write "method" to say which (the SemanticTest runner requires it)',
                )
            ]
        return []

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        params = {**self.config, **inputs}
        request, deadline = self.build(params, ctx)
        start = time.perf_counter()
        with request_errors(params["url"], deadline):
            response, _ = await send_within(deadline, ctx.http, request, _read_all, follow_redirects=True)
        duration = round((time.perf_counter() - start) * 1000, 1)
        return {
            "status": response.status_code,
            "headers": {k.lower(): v for k, v in response.headers.items()},
            "body": response.text,
            "duration": duration,
            "url": str(response.request.url),
        }

    def build(self, params: JSONObject, ctx: StepContext) -> tuple[JSONValue, Deadline]:
        """The httpx request ``params`` (config and inputs) describe, and the deadline bounding it."""
        import httpx

        url = params.get("url")
        if not isinstance(url, str) or not url:
            raise BlockError(f"{self.name} needs input 'url' (a string); got {url!r}")
        method = str(params.get("method") or default_method(params.get("body"))).upper()
        if method not in _METHODS:
            raise BlockError(f"unsupported HTTP method {method!r}; use one of {', '.join(sorted(_METHODS))}")
        headers = self._headers(params.get("headers"))
        redactor = ctx.run_context.redactor
        if redactor is not None:  # a value sent in a secret-looking header is a secret
            redactor.learn({"headers": headers})
        content = self._content(params.get("body"), headers)
        query = params.get("query")
        try:
            ms = timeout_ms(params.get("timeout"), ctx.settings.http_timeout_ms)
        except ValueError as exc:
            raise BlockError(f"{self.name} {exc}") from None
        deadline = Deadline(ms, f"{method} {url}")
        with request_errors(url, deadline):
            request = ctx.http.build_request(
                method,
                url,
                headers=headers,
                content=content,
                params={str(k): str(v) for k, v in query.items()} if isinstance(query, dict) else None,
                timeout=httpx.Timeout(ms / 1000),
            )
        return request, deadline

    def _headers(self, given: JSONValue) -> dict[str, str]:
        """The headers as text; one that is not ASCII is the step's error (httpx would raise a bare
        UnicodeEncodeError)."""
        headers = {str(k): str(v) for k, v in (given or {}).items()}
        for name, text in headers.items():
            if not (name + text).isascii():
                part = "name" if not name.isascii() else "value"
                raise BlockError(
                    f"{self.name} header {ascii(name)[1:-1]!r}: its {part} holds a character that is not "
                    "ASCII, which HTTP headers cannot carry; percent-encode or base64 it"
                )
        return headers

    def _content(self, body: JSONValue, headers: dict[str, str]) -> bytes | None:
        """The bytes sent: JSON for an object, list, number or boolean (and its Content-Type unless
        one is written), else the text."""
        if body is None:
            return None
        if not isinstance(body, (dict, list, int, float, bool)):
            return str(body).encode()
        try:
            content = json.dumps(body).encode()
        except (TypeError, ValueError) as exc:  # e.g. a value with no JSON form
            raise BlockError(f"{self.name} body cannot be sent as JSON: {exc}") from None
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"
        return content

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The exchange: what was sent (the resolved input, else the output's ``request``) and the response."""
        return http_exchange(trace)

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        return {
            "error": message,
            "status": 0,
            "duration": 0,
            "url": inputs.get("url", self.config.get("url")),
        }
