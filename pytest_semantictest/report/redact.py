"""One place every output passes through so secrets never reach a report.

A value is a secret by its name (an environment variable called ``*KEY*``, ``*TOKEN*``, ...) or by
where it goes (the value of a header called ``Authorization``, ``*-Key``, ``*token*``,
``X-*-Auth``, ...), never merely because it came from the environment. The session has one
:class:`Redactor`; every format registers its secrets with it (``add``, ``learn``), so a secret
found by one format is masked in every other format's output too.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"
MIN_SECRET_LENGTH = 6
"""Shorter values (a port, a flag) are rarely secret, and masking them would garble output."""
_SECRET_HEADER = re.compile(
    r"^(.*authorization|(.*[-_])?auth([-_].*)?|cookie|set-cookie|.*-key|.*api[-_]?key|.*token.*|.*secret.*"
    r"|.*password.*|.*passwd.*|.*credential.*)$",
    re.IGNORECASE,
)
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
_BASIC = re.compile(r"(?i)(basic\s+)([A-Za-z0-9+/_-]{4,}={0,2})")


def secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret (``API_KEY``, ``db_password``, ...)."""
    return bool(_SECRET_ENV.search(name))


def secret_header(name: str) -> bool:
    """Whether a header's name says its value is a secret (``Authorization``, ``X-Api-Key``, ...)."""
    return bool(_SECRET_HEADER.match(name.strip()))


JSON_DEPTH = 4
"""JSON-escaped forms are made this many levels deep: a body echoed in a reply inside a JSON response
(as an agent's "you sent ..." in a chat completion) is escaped three times before a report shows it."""


def _json_forms(value: str) -> set[str]:
    forms: set[str] = set()
    level = {value}
    for _ in range(JSON_DEPTH):
        level = {json.dumps(v, ensure_ascii=a)[1:-1] for v in level for a in (False, True)}
        forms |= level
    return forms


def _base64_forms(value: str) -> set[str]:
    raw = value.encode("utf-8")
    return {encode(raw).decode("ascii").rstrip("=") for encode in (base64.b64encode, base64.urlsafe_b64encode)}


def printed_forms(value: str) -> set[str]:
    """How a value may be printed: as is, stripped, URL-quoted (three ways), repr- and ascii-escaped,
    JSON-escaped (ASCII or not, once or twice), HTML-escaped and base64-encoded; each form of at least
    :data:`MIN_SECRET_LENGTH` characters. (``user:secret`` in a Basic ``Authorization`` is found by
    :meth:`Redactor.text`, which decodes such headers.)"""
    forms = {value, value.strip(), quote(value, safe=""), quote(value), quote_plus(value), repr(value)[1:-1],
             ascii(value)[1:-1], html.escape(value), html.escape(value, quote=False)}
    forms |= _json_forms(value) | _base64_forms(value)
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def header_secrets(name: str, value: Any) -> list[str]:
    """The secrets a header carries: for a secret-looking name its value, the credential after the
    scheme (``Bearer <token>``: the token) and, for ``Basic``, the decoded ``user:password`` and the password."""
    if not isinstance(name, str) or not isinstance(value, str) or not secret_header(name):
        return []
    value = value.strip()
    scheme, _, credential = value.partition(" ")
    credential = credential.strip()
    found = [credential or value]  # "Bearer <token>": the token (the output keeps saying "Bearer ***")
    if credential:
        if scheme.lower() == "basic":
            decoded = _decode(credential)
            if decoded:
                found += [decoded, decoded.partition(":")[2]]
    return [v for v in found if len(v) >= MIN_SECRET_LENGTH]


def used_secrets(names: Mapping[str, str], headers: Any = None) -> list[str]:
    """Of the values a file took from variables (``names``: value -> variable name), those that are
    secrets: by the variable's name, or because they reached a secret-looking header; with the
    secrets the ``headers`` themselves carry (a literal ``Authorization: Bearer ...`` too)."""
    carried = [v for name, value in (headers.items() if isinstance(headers, Mapping) else ())
               for v in header_secrets(name, value)]
    found = [v for v, name in names.items() if secret_name(name) or any(v in c for c in carried)]
    return [v for v in dict.fromkeys([*found, *carried]) if len(v) >= MIN_SECRET_LENGTH]


def _decode(token: str) -> str | None:
    try:
        altchars = b"-_" if "-" in token or "_" in token else None
        return base64.b64decode(token + "=" * (-len(token) % 4), altchars=altchars, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """Values to mask, in every printed form: secret-looking environment variables, and ``extra``."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if secret_name(k)} | set(extra)
    forms: set[str] = set()
    for v in values:
        forms |= printed_forms(v)
    return sorted(forms, key=len, reverse=True)


class Redactor:
    """Masks secret header values by name and known secret values (in every printed form) anywhere."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._raw: set[str] = {s for s in self.secrets if len(s) >= MIN_SECRET_LENGTH}

    def add(self, values: Iterable[str]) -> None:
        """Mask these values too (each in every printed form, when at least 6 characters long)."""
        values = [v for v in values if isinstance(v, str) and v]
        self._raw.update(v for v in values if len(v) >= MIN_SECRET_LENGTH)
        forms = set(secret_values({}, values)) - set(self.secrets)
        if forms:
            self.secrets = sorted({*self.secrets, *forms}, key=len, reverse=True)

    def learn(self, value: Any) -> None:
        """Register the values of secret-looking headers found anywhere in ``value`` (every mapping
        under a ``headers`` key): a value that reached such a header is a secret everywhere."""
        found: list[str] = []
        _walk_headers(value, found, 0)
        if found:
            self.add(found)

    def text(self, value: str) -> str:
        if self._raw:  # first: a form of the secret may sit inside the credentials and break them up
            value = _BASIC.sub(self._basic, value)
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def _basic(self, match: re.Match[str]) -> str:
        decoded = _decode(match.group(2))
        if decoded and any(secret in decoded for secret in self._raw):
            return match.group(1) + MASK
        return match.group(0)

    def data(self, value: Any) -> Any:
        """A copy of ``value`` with secret headers and secret values masked (headers in it learnt first)."""
        self.learn(value)
        return self._mask(value)

    def _mask(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                k: (MASK if isinstance(k, str) and secret_header(k) and isinstance(v, str) else self._mask(v))
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self._mask(v) for v in value]
        return value


def _walk_headers(value: Any, found: list[str], depth: int) -> None:
    if depth > 200:  # a pathological nesting is masked by value anyway
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str) and k.lower() == "headers" and isinstance(v, Mapping):
                for name, header in v.items():
                    found += header_secrets(name, header)
            _walk_headers(v, found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _walk_headers(v, found, depth + 1)
