"""One OpenAI-compatible client for every LLM role: cache first, then the network.

Retries (429, 5xx, timeouts, connection errors) use our own loop with exponential backoff (the
``openai`` client runs with ``max_retries=0``) so they are counted and testable; a ``Retry-After``
or ``retry-after-ms`` header is honoured (with a run-wide limiter, by every process of the run). A
semaphore bounds requests in flight per process; ``limiter`` (``llm/limits.py``) holds the run's
rate limits and budget across processes. ``openai`` is
imported, and its client created, only on the first cache miss: a fully cached run opens no
connection at all.
"""

from __future__ import annotations

import asyncio
import enum
import gc
import random
import re
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Generic, Literal, TypedDict, cast

from ..json_types import JSONObject, JSONValue
from ..redact import Redactor, secret_values
from ..shown import one_line
from .answers import cannot_connect, read_answer, token_split
from .cache import ReplayCache, cache_key
from .config import Endpoint, LLMConfig
from .errors import LLMError, NotConfigured, ReplayMiss
from .limits import SharedLimiter
from .usage import Usage

if TYPE_CHECKING:
    import openai
    from typing_extensions import TypeVar

    Parsed = TypeVar("Parsed", default=str)
    """What a completion's ``parse`` makes of the answer's text (the text itself when none is given)."""
else:
    from typing import TypeVar

    Parsed = TypeVar("Parsed")


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET: Literal[_Unset.UNSET] = _Unset.UNSET
"""``temperature``/``seed`` not given: the role's configured sampling applies."""
MAX_DELAY_S = 30.0
_STATUS_PREFIX = re.compile(r"^Error code: \d+ - ")


class CompleteOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`LLMClient.complete` besides ``parse`` (the ``llm_client`` fixture's)."""

    model: str | None
    schema: JSONObject | None
    repeat: int
    template: str
    temperature: float | None
    seed: int | None
    sample: int
    samples: int


@dataclass
class Completion(Generic[Parsed]):
    """One answered call: its text, the parsed value, the model that answered, where it came from."""

    content: str
    parsed: Parsed
    model: str
    tokens: int
    cached: bool
    key: str


@dataclass
class _Retry:
    """A try that may be made again: why it failed, and how long its answer asked to wait."""

    why: str
    delay: float | None = None


@dataclass
class _LoopState:
    semaphore: asyncio.Semaphore
    clients: dict[Endpoint, openai.AsyncOpenAI] = field(default_factory=dict)


class LLMClient:
    """Role-aware chat completions with the replay cache, retries, concurrency bound and usage."""

    def __init__(
        self, config: LLMConfig, cache: ReplayCache | None = None, redactor: Redactor | None = None
    ) -> None:
        self.config = config
        # the session's one redactor when given (it holds these keys too), else one of its own
        self.redactor = redactor or Redactor(secret_values(config.env, config.secrets()))
        """Masks the LLM keys (and, the session's, every secret) in prompts, errors and cache entries."""
        self.cache = cache or ReplayCache(
            config.cache_dir,
            config.cache_mode,
            self.redactor.data,  # entries: no secret
            config.cache_signing_key,
        )
        self.usage = Usage()
        self.limiter: SharedLimiter | None = None
        """The run's shared rate limit and budget (``llm.limits``), set by the session when it has one."""
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    def configured(self, role: str) -> bool:
        """Whether ``role`` can answer: an endpoint is set, or every answer comes from the replay cache."""
        return self.config.configured(role)

    async def complete(
        self,
        role: str,
        messages: list[dict[str, JSONValue]],
        *,
        model: str | None = None,
        schema: JSONObject | None = None,
        parse: Callable[[str], Parsed] | None = None,
        repeat: int = 0,
        template: str = "",
        temperature: float | None | _Unset = _UNSET,
        seed: int | None | _Unset = _UNSET,
        sample: int = 0,
        samples: int = 1,
    ) -> Completion[Parsed]:
        """Answer ``messages`` as ``role``; ``schema`` ({name, schema}) asks for structured output.
        ``repeat`` is the run of a repeated test, ``sample`` (of ``samples``) the repeated sample of
        one judged check: each is its own cache entry, never another's answer.

        ``parse`` turns the text into a value and raises ValueError when it is unusable; the model
        is asked once more, then the call is an :class:`LLMError`. Only parsed answers are cached.
        Secrets in ``messages`` are masked before anything else (the model sees ``***``).
        """
        # Parsed is str then
        parser = parse if parse is not None else cast("Callable[[str], Parsed]", _identity)
        # a prompt never carries a secret (to the LLM, or its cache key)
        messages = self.redactor.data(messages)
        model = self.config.model_for(role, model)
        default_temperature, default_seed = self.config.sampling(role)
        temperature = default_temperature if temperature is _UNSET else temperature
        seed = default_seed if seed is _UNSET else seed
        key = cache_key(
            role=role,
            model=model,
            template=template,
            messages=messages,
            temperature=temperature,
            seed=seed,
            repeat=repeat,
            schema=schema,
            sample=sample,
        )
        expect = {
            "role": role,
            "model": model,
            "template": template,
            "temperature": temperature,
            "seed": seed,
            "repeat": repeat,
            "schema": _schema_name(schema),
            "messages": messages,
            **_sample_field(sample),
        }
        hit = self._from_cache(role, key, parser, expect)
        if hit is not None:
            return hit
        if self.cache.replay:
            self.usage.errors += 1
            self.cache.misses += 1
            raise ReplayMiss(self.cache.miss_message(role, key, model, _which_call(repeat, sample, samples)))
        try:
            content, parsed, tokens, served = await self._answer(
                role, model, messages, schema, parser, temperature, seed
            )
        except LLMError as exc:
            self.usage.errors += 1
            raise type(exc)(self.redactor.text(str(exc))) from None
        entry = {
            "key": key,
            "role": role,
            "model": model,
            "served_model": served,
            "template": template,
            "temperature": temperature,
            "seed": seed,
            "repeat": repeat,
            **_sample_field(sample),
            "schema": _schema_name(schema),
            "messages": messages,
            "response": {"content": content, "tokens": tokens},
        }
        self.cache.put(role, key, entry)
        return Completion(content, parsed, served, tokens, False, key)

    def _from_cache(
        self, role: str, key: str, parse: Callable[[str], Parsed], expect: JSONObject
    ) -> Completion[Parsed] | None:
        try:
            entry = self.cache.get(role, key, expect)
            if entry is None:
                return None
            content = entry["response"]["content"]
            try:
                parsed = parse(content)
            except ValueError as exc:
                self.cache.forget(key)
                self.cache.corrupt(self.cache.path(role, key), f"not a usable answer ({_clip(exc)})")
                return None
        except LLMError:
            self.usage.errors += 1
            raise
        self.usage.cache_hits += 1
        served = entry.get("served_model") or entry.get("model") or ""
        return Completion(content, parsed, served, 0, True, key)

    async def _answer(
        self,
        role: str,
        model: str,
        messages: list[dict[str, JSONValue]],
        schema: JSONObject | None,
        parse: Callable[[str], Parsed],
        temperature: float | None,
        seed: int | None,
    ) -> tuple[str, Parsed, int, str]:
        endpoint = self.config.endpoint(role)
        if not endpoint.usable:
            raise NotConfigured(
                f"no LLM endpoint for the {role} role: set OPENAI_API_KEY, or "
                "--semantictest-llm-base-url for an endpoint that needs no key"
            )
        request: JSONObject = {"model": model, "messages": messages}
        if temperature is not None:
            request["temperature"] = temperature
        if seed is not None:
            request["seed"] = seed
        if schema is not None:
            request["response_format"] = {"type": "json_schema", "json_schema": {**schema, "strict": True}}
        content, tokens, served = await self._send(role, endpoint, request)
        try:
            return content, parse(content), tokens, served
        except ValueError as exc:
            problem = _clip(exc)
        retry = {
            **request,
            "messages": [*messages, {"role": "assistant", "content": content}, _reask(problem)],
        }
        content, more, served = await self._send(role, endpoint, retry)
        try:
            return content, parse(content), tokens + more, served
        except ValueError as exc:
            raise LLMError(
                f"the {role} model ({model}) gave unusable output twice (asked again once): {_clip(exc)}"
            ) from None

    async def _send(self, role: str, endpoint: Endpoint, request: JSONObject) -> tuple[str, int, str]:
        """One chat completion with retries; returns (content, total tokens, model that answered)."""
        import_paused("openai")
        state = self._state()
        attempts = self.config.retries + 1
        where = endpoint.base_url or "the OpenAI API"
        last = ""
        bucket = f"{where} {request['model']}"
        for attempt in range(attempts):
            # (the client is made before the limiter's admission: sent right after it)
            tried = await self._attempt(role, where, bucket, self._openai(state, endpoint), state, request)
            if not isinstance(tried, _Retry):
                return tried
            last = tried.why
            if attempt + 1 < attempts:
                self.usage.retries += 1
                await asyncio.sleep(tried.delay if tried.delay is not None else _backoff(attempt))
        raise LLMError(f"{role} LLM at {where} failed after {attempts} attempt(s): {last}")

    async def _attempt(
        self,
        role: str,
        where: str,
        bucket: str,
        client: openai.AsyncOpenAI,
        state: _LoopState,
        request: JSONObject,
    ) -> tuple[str, int, str] | _Retry:
        """One try, admitted by the run's limiter: the answer, or why it may be tried again (an answer
        that trying again cannot mend is an :class:`LLMError`)."""
        import openai

        model = request["model"]
        flight = await self.limiter.acquire(bucket, model) if self.limiter is not None else None
        answered = (0, 0)
        try:
            try:
                async with state.semaphore:
                    self.usage.calls += 1
                    async with asyncio.timeout(self.config.timeout_s):  # the whole answer, not each read
                        response = await client.chat.completions.create(**request)
            except openai.APIStatusError as exc:
                return self._status_retry(role, where, bucket, exc)
            except openai.APITimeoutError:
                return _Retry(self._timed_out())
            except openai.APIConnectionError as exc:
                return _Retry(cannot_connect(exc.__cause__ or exc))
            except (openai.OpenAIError, ValueError) as exc:  # e.g. a body that is not JSON
                problem = f"{type(exc).__name__}: {_clip(exc, 300)}"
                raise LLMError(f"{role} LLM at {where}: unusable response ({problem})") from None
            except Exception as exc:  # a transport error the openai client did not wrap: retry it too  # noqa: BLE001
                return _Retry(self._unwrapped_failure(exc))
            answered = token_split(response)
            self.usage.answered(model, *answered)
            return read_answer(role, response, model)
        finally:
            if flight is not None and self.limiter is not None:
                self.limiter.release(flight, model, *answered)

    def _status_retry(self, role: str, where: str, bucket: str, exc: openai.APIStatusError) -> _Retry:
        """An HTTP error answer: tried again (after its ``Retry-After``, which every process of the run
        waits) when it is 408, 409, 429 or 5xx, else an :class:`LLMError`."""
        status = exc.status_code
        last = f"HTTP {status}: {_clip(_STATUS_PREFIX.sub('', exc.message), 300)}"
        if status not in (408, 409, 429) and status < 500:
            raise LLMError(f"{role} LLM at {where} answered {last}") from None
        delay = _retry_after(exc.response.headers)
        if delay is not None and self.limiter is not None:
            self.limiter.pause(bucket, delay)
        return _Retry(last, delay)

    def _timed_out(self) -> str:
        return f"no answer within {self.config.timeout_s:g} s (timeout)"

    def _unwrapped_failure(self, exc: Exception) -> str:
        """What a transport error the openai client did not wrap says: a timeout, or no connection."""
        return self._timed_out() if "timeout" in type(exc).__name__.lower() else cannot_connect(exc)

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = _LoopState(asyncio.Semaphore(self.config.concurrency))
            self._loops[loop] = state
        return state

    def _openai(self, state: _LoopState, endpoint: Endpoint) -> openai.AsyncOpenAI:
        client = state.clients.get(endpoint)
        if client is None:
            import openai

            from ..http_clients import tls_context

            client = openai.AsyncOpenAI(
                api_key=endpoint.api_key or "not-needed",
                base_url=endpoint.base_url,
                max_retries=0,
                timeout=self.config.timeout_s,
                default_headers=dict(endpoint.headers) or None,
                http_client=openai.DefaultAsyncHttpxClient(
                    verify=tls_context(trust_env=True)
                ),  # as openai's default
            )
            state.clients[endpoint] = client
        return client

    async def aclose(self) -> None:
        """Close the HTTP clients created on the running loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        state = self._loops.pop(loop, None)
        for client in state.clients.values() if state else ():
            await client.close()


def _schema_name(schema: JSONObject | None) -> JSONValue:
    return (schema or {}).get("name")


def _sample_field(sample: int) -> dict[str, JSONValue]:
    """A judged check's repeated sample, in its cache entry (none for the first: entries stay as before)."""
    return {"sample": sample} if sample else {}


def _which_call(repeat: int, sample: int, samples: int) -> str:
    """ " (run 2, sample 1 of 3)": which call of a repeated test or sampled check missed the cache."""
    which = ", ".join(
        ([f"run {repeat + 1}"] if repeat else [])
        + ([f"sample {sample + 1} of {samples}"] if samples > 1 else [])
    )
    return f" ({which})" if which else ""


def import_paused(name: str) -> None:
    """Import ``name`` with the garbage collector paused. openai's first import builds thousands of
    classes (its ``types``: about 0.7 s of CPU) and takes a fifth less so: nothing it makes is garbage
    yet. Collection resumes as it was (also if it was off), whatever the import raised."""
    if name in sys.modules:
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        import_module(name)
    finally:
        if enabled:
            gc.enable()


def _reask(problem: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": f"Your previous answer could not be used: {problem}. "
        "Answer again with only a JSON object that matches the response schema exactly.",
    }


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name) if headers is not None else None
        if raw is None:
            continue
        try:
            return min(max(float(raw) * scale, 0.0), MAX_DELAY_S)
        except ValueError:
            continue
    return None


def _backoff(attempt: int) -> float:
    return min(0.5 * 2.0**attempt, MAX_DELAY_S) * random.uniform(0.75, 1.0)


def _identity(text: str) -> str:
    return text


def _clip(value: object, limit: int = 500) -> str:
    return one_line(value, limit)
