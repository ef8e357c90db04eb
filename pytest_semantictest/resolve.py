"""``${...}`` references: environment, context, then DataBus."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import NoReturn

from .databus import DataBus
from .errors import ReferenceError_, clip
from .json_types import JSONObject, JSONValue
from .paths import MISSING, get_path, split_path

REF = re.compile(r"\$\{([^{}]+)\}")
"""A ``${...}`` reference of any kind (its inside is group 1)."""
ENV_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}``, an environment variable by name (group 1): how agent configs (highbar, Yao) and
highbar's validation read one. The one home of that pattern."""


class Resolver:
    """Resolves references for one test: ``${env.X}``, context values, DataBus slots.

    ``secret`` (an environment variable's name -> whether it holds a secret) makes :meth:`shown`
    possible: the same resolution with each secret's ``${env.NAME}`` kept as written, for what is
    recorded (traces, reports); the real value goes only to the block that sends it."""

    __slots__ = ("bus", "context", "env", "secret", "_resolving", "_context_cache")

    def __init__(
        self,
        bus: DataBus,
        context: Mapping[str, JSONValue],
        env: Mapping[str, str],
        secret: Callable[[str], bool] | None = None,
    ) -> None:
        self.bus = bus
        self.context = context
        self.env = env
        self.secret = secret
        self._resolving: set[str] = set()
        self._context_cache: JSONObject = {}

    def shown(self) -> Resolver | None:
        """A resolver that leaves the secrets' ``${env.NAME}`` in place, or None without secret names."""
        if self.secret is None:
            return None
        secret = self.secret
        shown_env = _Placeholders(self.env, secret)
        return Resolver(self.bus, self.context, shown_env)

    def reads_secrets(self, value: JSONValue) -> bool:
        """Whether ``value`` (as written) reads a secret environment variable, also through context."""
        if self.secret is None:
            return False
        seen: set[str] = set()
        todo = [value]
        while todo:
            item = todo.pop()
            if any(self.secret(name) and name in self.env for name in env_names(item)):
                return True
            for head in references(item):
                if head in self.context and head not in seen:
                    seen.add(head)
                    todo.append(self.context[head])
        return False

    def lookup(self, ref: str) -> JSONValue:
        """The value a reference names, or MISSING."""
        parts = split_path(ref)
        if not parts or not isinstance(parts[0], str):
            return MISSING
        head = parts[0]
        if head == "env" and len(parts) >= 2:
            value = self.env.get(str(parts[1]), MISSING)
            return get_path(value, parts[2:]) if len(parts) > 2 and value is not MISSING else value
        if head in self.context:
            return get_path(self._context_value(head), parts[1:])
        value = self.bus.slot(head)
        if value is MISSING:
            return MISSING
        return get_path(value, parts[1:])

    def _context_value(self, key: str) -> JSONValue:
        if key in self._context_cache:
            return self._context_cache[key]
        if key in self._resolving:
            raise ReferenceError_(f"context value '{key}' refers to itself")
        self._resolving.add(key)
        try:
            value = self._resolve(self.context[key], nested=False, inside=True)
        finally:
            self._resolving.discard(key)
        self._context_cache[key] = value
        return value

    def resolve(self, value: JSONValue) -> JSONValue:
        """Resolve references deeply; a lone ``${x}`` keeps the referenced value's type.

        A lone reference that names nothing is MISSING at the top (``value`` itself) and as a
        member of a top-level object (an input left out); deeper inside (a request body, a list)
        it raises ReferenceError_ naming the reference: there is no JSON for "nothing".
        """
        return self._resolve(value, nested=False, inside=False)

    def _resolve(self, value: JSONValue, *, nested: bool, inside: bool) -> JSONValue:
        if isinstance(value, str):
            return self._resolve_str(value, strict=nested) if "${" in value else value
        if isinstance(value, dict):
            return {k: self._resolve(v, nested=inside, inside=True) for k, v in value.items()}
        if isinstance(value, list):
            return [self._resolve(v, nested=True, inside=True) for v in value]
        return value

    def _resolve_str(self, text: str, strict: bool = False) -> JSONValue:
        whole = REF.fullmatch(text)
        if whole:
            ref = whole.group(1).strip()
            value = self.lookup(ref)
            if strict and value is MISSING:
                raise self.missing_error(ref)
            return value

        def substitute(match: re.Match[str]) -> str:
            ref = match.group(1).strip()
            value = self.lookup(ref)
            if value is MISSING:
                raise self.missing_error(ref)
            if isinstance(value, str):
                return value
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_unserializable(ref))

        return REF.sub(substitute, text)

    def missing_error(self, ref: str) -> ReferenceError_:
        """The error for a reference that names nothing; it says when an unset variable is why."""
        head = _head(ref)
        unset = head == "env" or bool(self._unset_behind(head))
        return ReferenceError_(self.missing_message(ref), unset_env=unset)

    def missing_message(self, ref: str) -> str:
        head = _head(ref)
        if head == "env":
            return f"${{{ref}}} names an environment variable that is not set"
        unset = self._unset_behind(head)
        if unset:
            assert isinstance(head, str)  # (only a context key has variables behind it)
            variables = ", ".join(unset)
            return (
                f"${{{ref}}} is context.{head} ({clip(json.dumps(self.context[head]))}), and the environment "
                f"variable{'s' if len(unset) > 1 else ''} {variables} {'are' if len(unset) > 1 else 'is'} not "
                "set: set it (or a .env file) before running"
            )
        known = sorted(set(self.context) | set(self.bus.names()))
        listing = ", ".join(known) if known else "none yet"
        return f"${{{ref}}} names nothing (context and slots available: {listing})"

    def _unset_behind(self, head: str | int) -> list[str]:
        """The unset environment variables the context value ``head`` is made of (none when ``head``
        is no context key)."""
        if not isinstance(head, str) or head not in self.context:
            return []
        return sorted(name for name in env_names(self.context[head]) if name not in self.env)


def _head(ref: str) -> str | int:
    """The first step of a reference's path (the whole reference when it is no path)."""
    parts = split_path(ref)
    return parts[0] if parts else ref


class _Placeholders(Mapping[str, str]):
    """The environment as a record shows it: a secret variable's value is its ``${env.NAME}``."""

    def __init__(self, env: Mapping[str, str], secret: Callable[[str], bool]) -> None:
        self._env, self._secret = env, secret

    def __getitem__(self, name: str) -> str:
        value = self._env[name]
        return f"${{env.{name}}}" if self._secret(name) else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)


def env_names(value: JSONValue) -> set[str]:
    """The environment variables a value reads (``${env.NAME}``), anywhere inside it."""
    if isinstance(value, str):
        return {
            str(parts[1])
            for m in REF.finditer(value)
            if len(parts := split_path(m.group(1).strip())) >= 2 and parts[0] == "env"
        }
    if isinstance(value, dict):
        return set().union(*(env_names(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(env_names(v) for v in value))
    return set()


def _unserializable(ref: str) -> Callable[[object], NoReturn]:
    def fail(value: object) -> NoReturn:
        what = "a value that names nothing" if value is MISSING else f"a {type(value).__name__}"
        raise ReferenceError_(f"${{{ref}}} holds {what}, which has no JSON form")

    return fail


def references(value: JSONValue) -> set[str]:
    """First path segments referenced anywhere in ``value`` (for static checks)."""
    found: set[str] = set()
    if isinstance(value, str):
        for m in REF.finditer(value):
            parts = split_path(m.group(1))
            if parts and isinstance(parts[0], str):
                found.add(parts[0])
    elif isinstance(value, dict):
        for v in value.values():
            found |= references(v)
    elif isinstance(value, list):
        for v in value:
            found |= references(v)
    return found
