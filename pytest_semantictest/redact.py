"""The plugin's one redactor: which values are secrets, and masking them wherever they are printed.

A value is a secret when it is declared one (``docs/secrets.md``): an environment variable whose
name says so (:func:`secret_name`, or ``--semantictest-secret-env``), the value of a request header
we send whose name says so (:func:`secret_header`, or ``--semantictest-secret-header``), an LLM API
key or header, a compliance API key or secret placeholder value, a highbar or Yao agent's secret.
Never a value guessed from what came back (a response header) or from a mapping key's name.

The session has one :class:`Redactor`, built from the declared secrets; every format registers the
secrets it sends with it (``add``, ``learn``). It finds a secret by its value, through any encoding,
by decoding the printed text (``decode.py``) rather than by encoding the secret.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import threading
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from .json_types import JSONValue

MASK = "***"
MIN_SECRET_LENGTH = 6
"""Shorter values (a port, a flag) are rarely secret, and masking them would garble output."""

_SECRET_ENV = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|CREDENTIALS?|AUTH|PAT)$|(^|_)(SECRETS?|TOKEN|API_?KEY)(_|$)|PASSWORD|PASSWD",
    re.IGNORECASE,
)
_SECRET_HEADER = re.compile(
    r"^(.*[-_])?authorization$|^(set-)?cookie$|^(.*[-_])?api[-_]?key$|^(.*[-_])?auth([-_].*)?$"
    r"|^(.*[-_])?(key|token|secret|password|passwd|credentials?)$",
    re.IGNORECASE,
)
_SCHEMES = frozenset(
    {
        "bearer",
        "basic",
        "token",
        "digest",
        "apikey",
        "key",
        "hmac",
        "negotiate",
        "ntlm",
        "dpop",
        "mac",
        "sso-key",
        "aws4-hmac-sha256",
    }
)
"""Authorization schemes: ``Bearer <token>`` masks as ``Bearer ***``; any other value is masked whole."""


def secret_name(name: str, declared: Iterable[str] = ()) -> bool:
    """Whether an environment variable's (or placeholder's) name says it holds a secret: a name ending
    in ``_KEY``, ``_API_KEY``, ``_TOKEN``, ``_SECRET``, ``_CREDENTIAL(S)``, ``_AUTH`` or ``_PAT``, with
    a part ``SECRET(S)``, ``TOKEN`` or ``API_KEY`` between underscores, or containing ``PASSWORD`` or
    ``PASSWD`` (any case); or one of ``declared`` (names or globs such as ``MY_*``)."""
    return bool(_SECRET_ENV.search(name)) or any(fnmatchcase(name, pattern) for pattern in declared)


def secret_header(name: str, declared: Iterable[str] = ()) -> bool:
    """Whether a header we send says its value is a secret: ``Authorization``, ``Proxy-Authorization``,
    ``Cookie``, ``*-Api-Key``, ``*-Auth*``, ``*-Key``, ``*-Token``, ``*-Secret``, ``*-Password``, or one
    of ``declared`` (names or globs, any case). Only for headers we send, never for a response's."""
    name = name.strip()
    return bool(_SECRET_HEADER.match(name)) or any(fnmatchcase(name.lower(), p.lower()) for p in declared)


def header_secrets(name: str, value: JSONValue, declared: Iterable[str] = ()) -> list[str]:
    """The secrets a header we send carries: for a secret header, the credential after a known scheme
    (``Bearer <token>``: the token; ``Basic``: also the decoded ``user:password`` and the password),
    else the whole value (``X-Custom-Auth: Sp2abc defg``: all of it)."""
    if not isinstance(name, str) or not isinstance(value, str) or not secret_header(name, declared):
        return []
    value = value.strip()
    scheme, _, credential = value.partition(" ")
    credential = credential.strip()
    if not credential or scheme.lower() not in _SCHEMES:
        return [value] if len(value) >= MIN_SECRET_LENGTH else []
    return [v for v in _credential_secrets(scheme, credential) if len(v) >= MIN_SECRET_LENGTH]


def _credential_secrets(scheme: str, credential: str) -> list[str]:
    """The secrets of a credential after a known scheme: the credential; for ``Basic`` also the
    decoded ``user:password`` and the password."""
    found = [credential]
    if scheme.lower() == "basic":
        decoded = _decode(credential)
        if decoded:
            found += [decoded, decoded.partition(":")[2]]
    return found


def used_secrets(names: Mapping[str, str], headers: JSONValue = None) -> list[str]:
    """Of the values a file took from variables (``names``: value -> variable name), those that are
    secrets: by the variable's name, or because they reached a secret header; with the secrets the
    ``headers`` themselves carry (a literal ``Authorization: Bearer ...`` too)."""
    carried = [
        v
        for name, value in (headers.items() if isinstance(headers, Mapping) else ())
        for v in header_secrets(name, value)
    ]
    found = [v for v, name in names.items() if secret_name(name) or any(v in c for c in carried)]
    return [v for v in dict.fromkeys([*found, *carried]) if len(v) >= MIN_SECRET_LENGTH]


def _decode(token: str) -> str | None:
    try:
        altchars = b"-_" if "-" in token or "_" in token else None
        return base64.b64decode(token + "=" * (-len(token) % 4), altchars=altchars, validate=True).decode(
            "utf-8"
        )
    except (binascii.Error, ValueError):
        return None


def secret_values(
    env: Mapping[str, str] | None = None, extra: Iterable[str] = (), declared: Iterable[str] = ()
) -> list[str]:
    """The declared secrets: the values of environment variables :func:`secret_name` names (with the
    ``declared`` names and globs), and ``extra``."""
    env = os.environ if env is None else env
    declared = list(declared)
    found = [v for k, v in env.items() if secret_name(k, declared)] + list(extra)
    return [v for v in dict.fromkeys(found) if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_LENGTH]


_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")


def _forms(value: str) -> set[str]:
    """The forms a secret is looked for in: as given, trimmed, and with its own ``%XX`` escapes decoded.
    A URL keeps a valid escape as written and encodes the characters around it (``a b%41`` is sent as
    ``a%20b%41``), so no single decoding of the printed URL gives the secret back; decoding every
    escape gives its decoded form."""
    found = {value, value.strip()}
    if _ESCAPE.search(value):
        from urllib.parse import unquote

        found |= {unquote(form, errors="replace") for form in list(found)}
    return found


def _canonical(text: str) -> str:
    """``+`` read as a space (a query string's encoding of it): the same length, so offsets hold."""
    return text.replace("+", " ")


class Redactor:
    """Masks known secret values wherever and however they are printed.

    ``names`` (value -> variable name) shows a secret as ``${NAME}``; any other as ``***``.
    ``headers``: more header names (or globs) whose sent values are secrets (``learn``)."""

    def __init__(
        self, secrets: Iterable[str] = (), names: Mapping[str, str] | None = None, headers: Iterable[str] = ()
    ) -> None:
        self.headers = list(headers)
        self._labels: dict[str, str] = {}
        self._lock = threading.Lock()
        self._matcher: tuple[re.Pattern[str], dict[str, str]] | None = None
        """The secrets' pattern and each match's label, replaced as one (reports render while steps
        running on the event loop's thread add secrets)."""
        self.add(secrets)
        for value, name in (names or {}).items():
            self.add([value], name)

    @property
    def secrets(self) -> list[str]:
        """The secret values masked, longest first."""
        return sorted(self._labels, key=len, reverse=True)

    def add(self, values: Iterable[str], name: str | None = None) -> None:
        """Mask these values too (those at least :data:`MIN_SECRET_LENGTH` long), as ``${name}`` if given."""
        label = f"${{{name}}}" if name else MASK
        with self._lock:
            if self._label_forms(values, label, bool(name)):
                self._matcher = self._new_matcher()

    def _label_forms(self, values: Iterable[str], label: str, named: bool) -> bool:
        """Give every printed form of each value at least :data:`MIN_SECRET_LENGTH` long its label (a
        name replaces a form's ``***``, never the reverse); whether any label was given. Under the lock."""
        added = False
        for value in values:
            if not isinstance(value, str):
                continue
            for form in _forms(value):
                if len(form) >= MIN_SECRET_LENGTH and (form not in self._labels or named):
                    self._labels[form] = label
                    added = True
        return added

    def _new_matcher(self) -> tuple[re.Pattern[str], dict[str, str]]:
        """One pattern of every labelled form, longest first, and each match's label (a named label
        wins over ``***``: written last). Under the lock."""
        labels = {_canonical(v): lab for v, lab in sorted(self._labels.items(), key=lambda i: i[1] != MASK)}
        pattern = re.compile("|".join(re.escape(v) for v in sorted(labels, key=len, reverse=True)))
        return pattern, labels

    def learn(self, value: JSONValue) -> None:
        """Register the secrets of the request headers in ``value`` (every mapping under a ``headers``
        key): call it with what is sent, never with what came back."""
        found: list[str] = []
        _walk_headers(value, found, 0, self.headers)
        if found:
            self.add(found)

    def text(self, value: str) -> str:
        """``value`` with every secret masked, in whatever encodings (and their compositions) it was printed."""
        matcher = self._matcher
        if matcher is None or not value:
            return value
        from .decode import views  # (its decoders are needed once there is a secret to look for)

        pattern, labels = matcher
        spans: list[tuple[int, int, str]] = []
        for view in views(value):
            for match in pattern.finditer(_canonical(view.text)):
                start, end = view.source(*match.span())
                spans.append((start, end, labels[match.group(0)]))
        if not spans:
            return value
        out: list[str] = []
        position = 0
        for start, end, label in sorted(spans):
            if end <= position:
                continue
            if start >= position:
                out.append(value[position:start])
                out.append(label)
            position = max(position, end)
        out.append(value[position:])
        return "".join(out)

    def data(self, value: JSONValue) -> JSONValue:
        """A copy of ``value`` (mappings, lists) with secret values masked in every string, keys too."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.data(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


def mask_headers(headers: JSONValue, declared: Iterable[str] = ()) -> JSONValue:
    """Request headers as shown to someone else (an LLM judge's prompt): secret ones as ``***``."""
    if not isinstance(headers, Mapping):
        return headers
    return {k: (MASK if isinstance(k, str) and secret_header(k, declared) else v) for k, v in headers.items()}


def _walk_headers(value: JSONValue, found: list[str], depth: int, declared: list[str]) -> None:
    if depth > 200:  # a pathological nesting is masked by value anyway
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str) and k.lower() == "headers" and isinstance(v, Mapping):
                for name, header in v.items():
                    found += header_secrets(name, header, declared)
            _walk_headers(v, found, depth + 1, declared)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _walk_headers(v, found, depth + 1, declared)
