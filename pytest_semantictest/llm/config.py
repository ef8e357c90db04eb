"""Who answers each LLM role: endpoint, key, headers, model and sampling, with their precedence.

Precedence, highest first: a test's own setting (LLMJudge ``config.model``), the role's key
(``semantictest_llm_<role>_model`` / ``_base_url`` / ``_api_key_env``), the global option, the
global ini key, the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``), the default. The
``paraphraser`` role (highbar's variations) reads highbar's own variables below ours and above
``OPENAI_*`` (:func:`highbar_paraphraser`).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..redact import MIN_SECRET_LENGTH, header_secrets
from .cache import KEY_ENV
from .roles import CACHE_MODES, ROLES  # noqa: F401  (ROLES re-exported)

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_SEED = 42

# role -> (temperature, seed): deterministic roles pin both; generative ones sample.
SAMPLING: dict[str, tuple[float, int | None]] = {
    "judge": (0.0, DEFAULT_SEED),
    "validator": (0.0, DEFAULT_SEED),
    "simulator": (0.7, None),
    "paraphraser": (0.9, None),
    "generator": (0.7, None),
}


@dataclass(frozen=True)
class Endpoint:
    """Where a role's requests go. ``api_key`` is never printed (see ``__repr__``)."""

    base_url: str | None
    api_key: str | None
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def usable(self) -> bool:
        return bool(self.api_key or self.base_url)

    def __repr__(self) -> str:
        key = "***" if self.api_key else None
        return (
            f"Endpoint(base_url={self.base_url!r}, api_key={key!r}, headers={[h for h, _ in self.headers]})"
        )


@dataclass
class RoleSettings:
    """Per-role overrides (ini keys ``semantictest_llm_<role>_*``)."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    key_required: bool = False
    """The role cannot answer without the key of ``api_key_env`` (highbar's rule for its variables)."""


@dataclass
class LLMConfig:
    """Everything the LLM client needs, resolved once per session."""

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    model: str = DEFAULT_MODEL
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    roles: dict[str, RoleSettings] = field(default_factory=dict)
    cache_mode: str = "read-write"
    cache_dir: Path = Path(".semantictest/cache")
    concurrency: int = 16
    timeout_s: float = 60.0
    retries: int = 3
    env: Mapping[str, str] = field(default_factory=lambda: os.environ, repr=False)
    cache_signing_key: str | None = field(default=None, repr=False)
    """The key of the replay cache's keyed digests; never printed. Unset: ``SEMANTICTEST_CACHE_KEY``
    of ``env`` (so a config built in Python checks keyed digests as the session's does)."""

    def __post_init__(self) -> None:
        if self.cache_signing_key is None:
            self.cache_signing_key = signing_key(self.env)

    def role(self, role: str) -> RoleSettings:
        return self.roles.get(role) or RoleSettings()

    def endpoint(self, role: str) -> Endpoint:
        """The role's base URL, key and headers (role override, else the global ones)."""
        settings = self.role(role)
        key = self.api_key
        if settings.api_key_env:
            key = self.env.get(settings.api_key_env) or None
        return Endpoint(settings.base_url or self.base_url, key, tuple(sorted(self.headers.items())))

    def model_for(self, role: str, override: str | None = None) -> str:
        return override or self.role(role).model or self.model

    def sampling(self, role: str) -> tuple[float, int | None]:
        return SAMPLING.get(role, (0.0, DEFAULT_SEED))

    def configured(self, role: str) -> bool:
        """A role can answer: an endpoint is set, or every answer comes from the replay cache."""
        endpoint = self.endpoint(role)
        if self.role(role).key_required and not endpoint.api_key:
            return self.cache_mode == "replay"
        return self.cache_mode == "replay" or endpoint.usable

    def secrets(self) -> list[str]:
        """Values that must never reach output: API keys and secret-looking header values."""
        values = [self.api_key or "", self.cache_signing_key or ""]
        values += [self.env.get(s.api_key_env or "", "") for s in self.roles.values() if s.api_key_env]
        values += [v for k, v in self.headers.items() for v in header_secrets(k, v)]  # "Bearer sk-...": both
        return [v for v in dict.fromkeys(values) if len(v) >= MIN_SECRET_LENGTH]


def parse_headers(lines: Iterable[str]) -> dict[str, str]:
    """``["Name: value", ...]`` -> dict; raises ValueError naming a malformed line."""
    headers: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            if not sep:  # the whole line may be a secret value: never shown
                raise ValueError(
                    "an LLM header has no ':' (not shown: it may hold a secret): write 'Name: value'"
                )
            raise ValueError("an LLM header has no name before ':': write 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


HIGHBAR_API_KEY, HIGHBAR_BASE_URL, HIGHBAR_MODEL = (
    "HIGHBAR_LLM_API_KEY",
    "HIGHBAR_LLM_BASE_URL",
    "HIGHBAR_LLM_MODEL",
)
HIGHBAR_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def highbar_paraphraser(
    own: RoleSettings | None, given: Collection[str], values: Mapping[str, object], env: Mapping[str, str]
) -> RoleSettings | None:
    """The ``paraphraser`` role (highbar's variations) with highbar's own variables where none of ours is
    given (``given``: the ``llm-*`` options and ini keys set explicitly). Model: the role's key, then
    ``--semantictest-llm-model``, then ``HIGHBAR_LLM_MODEL``. Endpoint: the role's keys or our global
    options as a whole; else ``HIGHBAR_LLM_BASE_URL`` (default highbar's) with ``HIGHBAR_LLM_API_KEY``, as
    a pair and the key required as highbar requires it (an ``OPENAI_*`` value never mixes in); else
    ``OPENAI_*``."""
    own = own or RoleSettings()
    model = _paraphraser_model(own, given, values, env)
    if not _our_endpoint(own, given) and (env.get(HIGHBAR_API_KEY) or env.get(HIGHBAR_BASE_URL)):
        return RoleSettings(
            model or None,
            env.get(HIGHBAR_BASE_URL) or HIGHBAR_DEFAULT_BASE_URL,
            HIGHBAR_API_KEY,
            key_required=True,
        )
    if model == own.model:
        return None if own == RoleSettings() else own
    return RoleSettings(model or None, own.base_url, own.api_key_env, own.key_required)


def _paraphraser_model(
    own: RoleSettings, given: Collection[str], values: Mapping[str, object], env: Mapping[str, str]
) -> str | None:
    """The role's model, then ``--semantictest-llm-model`` (when given), then ``HIGHBAR_LLM_MODEL``."""
    return (
        own.model
        or (_text(values.get("llm-model")) if "llm-model" in given else None)
        or env.get(HIGHBAR_MODEL)
    )


def _our_endpoint(own: RoleSettings, given: Collection[str]) -> bool:
    """Whether the role's keys or our global options name the endpoint (highbar's variables then stay out)."""
    return bool(own.base_url or own.api_key_env or "llm-base-url" in given or "llm-api-key" in given)


def from_values(
    values: Mapping[str, object],
    roles: Mapping[str, RoleSettings],
    env: Mapping[str, str],
    rootdir: Path,
    given: Collection[str] = (),
) -> LLMConfig:
    """Build the config from option/ini values (already option > ini > default) and the environment
    (``given``: the names of the ``llm-*`` values set by an option or ini key, not by default)."""
    mode = _cache_mode(values)
    cache_dir = _cache_dir(values, rootdir)
    model_roles = _model_roles(values, roles, given, env)
    raw_headers = values.get("llm-header") or []
    return LLMConfig(
        base_url=_text(values.get("llm-base-url")) or env.get("OPENAI_BASE_URL") or None,
        api_key=_text(values.get("llm-api-key")) or env.get("OPENAI_API_KEY") or None,
        model=_text(values.get("llm-model")) or DEFAULT_MODEL,
        headers=parse_headers(raw_headers if isinstance(raw_headers, list) else [str(raw_headers)]),
        roles=model_roles,
        cache_mode=mode,
        cache_dir=cache_dir,
        concurrency=max(1, _int(values.get("llm-max-in-flight") or None, 16)),
        timeout_s=float(values.get("llm-timeout") or 60.0),  # type: ignore[arg-type]
        retries=max(0, _int(values.get("llm-retries"), 3)),
        env=env,
    )


def _cache_mode(values: Mapping[str, object]) -> str:
    mode = str(values.get("llm-cache") or "read-write")
    if mode not in CACHE_MODES:
        raise ValueError(f"LLM cache mode {mode!r} is not one of {', '.join(CACHE_MODES)}")
    return mode


def _cache_dir(values: Mapping[str, object], rootdir: Path) -> Path:
    """``llm-cache-dir`` (default ``.semantictest/cache``), relative to the rootdir."""
    cache_dir = Path(str(values.get("llm-cache-dir") or ".semantictest/cache")).expanduser()
    return cache_dir if cache_dir.is_absolute() else rootdir / cache_dir


def _model_roles(
    values: Mapping[str, object],
    roles: Mapping[str, RoleSettings],
    given: Collection[str],
    env: Mapping[str, str],
) -> dict[str, RoleSettings]:
    """The roles' settings with ``llm-judge-model`` for the judge and highbar's for the paraphraser."""
    model_roles = dict(roles)
    judge_model = values.get("llm-judge-model")
    if judge_model:
        judge = model_roles.get("judge") or RoleSettings()
        model_roles["judge"] = RoleSettings(str(judge_model), judge.base_url, judge.api_key_env)
    paraphraser = highbar_paraphraser(model_roles.get("paraphraser"), given, values, env)
    if paraphraser is not None:
        model_roles["paraphraser"] = paraphraser
    return model_roles


MIN_SIGNING_KEY = 16


def signing_key(env: Mapping[str, str]) -> str | None:
    """``SEMANTICTEST_CACHE_KEY``, or None when it is not set; raises ValueError when it is set but
    too short to be a key (empty: a CI secret this job cannot read), never showing it."""
    value = env.get(KEY_ENV)
    if value is None:
        return None
    if len(value.strip()) < MIN_SIGNING_KEY:
        raise ValueError(
            f"{KEY_ENV} is set but {'empty' if not value.strip() else 'shorter than 16 characters'}: "
            "give it the key the replay cache was recorded with (a CI secret), or unset it to check "
            "entries by their sha256 digest alone"
        )
    return value


def _int(value: object, default: int) -> int:
    return default if value is None else int(value)  # type: ignore[call-overload]


def _text(value: object) -> str | None:
    return str(value).strip() or None if value is not None else None
