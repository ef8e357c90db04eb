"""One place every output passes through so secrets never reach a report."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "***"
MIN_SECRET_LENGTH = 6
"""Shorter values (a port, a flag) are rarely secret, and masking them would garble output."""
_SECRET_HEADER = re.compile(r"^(authorization|proxy-authorization|cookie|set-cookie|.*-key|.*token.*|.*secret.*)$", re.IGNORECASE)
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)


def printed_forms(value: str) -> set[str]:
    """How a value may be printed: as is, stripped, URL-quoted (two ways), repr-escaped; each form of
    at least :data:`MIN_SECRET_LENGTH` characters."""
    forms = {value, value.strip(), quote(value, safe=""), quote_plus(value), repr(value)[1:-1]}
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def secret_values(env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> list[str]:
    """Values to mask, in every printed form: secret-looking environment variables, and ``extra``."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if _SECRET_ENV.search(k)} | set(extra)
    forms: set[str] = set()
    for v in values:
        forms |= printed_forms(v)
    return sorted(forms, key=len, reverse=True)


class Redactor:
    """Masks secret header values by name and known secret values anywhere in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = [s for s in secrets if s]

    def add(self, values: Iterable[str]) -> None:
        """Mask these values too (each in every printed form, when at least 6 characters long)."""
        forms = set(secret_values({}, values)) - set(self.secrets)
        if forms:
            self.secrets = sorted({*self.secrets, *forms}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def data(self, value: Any) -> Any:
        """A copy of ``value`` with secret headers and secret values masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                k: (MASK if isinstance(k, str) and _SECRET_HEADER.match(k) and isinstance(v, str) else self.data(v))
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value
