"""The collection entry point for compliance Markdown files (see ``formats/detect.py``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ...errors import Problem, SpecError
from ...model import Suite
from ..detect import CollectContext
from .agent_urls import AGENT_URL_VARIABLE
from .compile import Settings, compile_document
from .parse import parse_file
from .transport import VERSION_VARIABLE


def settings_from(ctx: CollectContext) -> tuple[Settings, list[Problem]]:
    """Options and ini keys first, then the environment (``COMPLIANCE_*``, ``BASE_URL``, ``API_KEY``)."""
    env = ctx.env
    problems: list[Problem] = []
    values = _values(ctx.texts("compliance-value"), problems)
    a2a_version = _a2a_version(ctx.text("compliance-a2a-version"), env, problems)
    settings = Settings(
        a2a_version=a2a_version,
        agent_url=ctx.text("compliance-agent-url") or env.get(AGENT_URL_VARIABLE) or None,
        base_url=ctx.text("compliance-base-url")
        or env.get("COMPLIANCE_BASE_URL")
        or env.get("BASE_URL")
        or None,
        api_key=ctx.text("compliance-api-key") or env.get("COMPLIANCE_API_KEY") or env.get("API_KEY") or None,
        values=values,
        env=env,
        strict_only=ctx.flag("compliance-strict-only"),
        server=ctx.text("compliance-server"),
        cwd=ctx.folder("compliance-server"),
        log_dir=ctx.rootdir / (ctx.text("agent-logs") or ".semantictest/logs"),
    )
    return settings, problems


def _values(given: list[str], problems: list[Problem]) -> dict[str, str]:
    """The placeholder values ``--semantictest-compliance-value name=value`` gives (braces around the
    name are dropped); a problem for each that is not ``name=value``."""
    values: dict[str, str] = {}
    for raw in given:
        name, sep, value = str(raw).partition("=")
        if not sep or not name.strip():
            problems.append(
                Problem(
                    "--semantictest-compliance-value",
                    f"{str(raw)[:40]!r} must look like name=value (valid_jwt_token=eyJ...)",
                )
            )
            continue
        values[name.strip().strip("{}")] = value.strip()
    return values


def _a2a_version(
    option: str | None, env: Mapping[str, str], problems: list[Problem]
) -> tuple[str, str] | None:
    """The A2A version the option or ``COMPLIANCE_A2A_VERSION`` gives, with where; a problem if unusable."""
    given, where = (
        (option, "option") if option else (env.get(VERSION_VARIABLE), f"environment ({VERSION_VARIABLE})")
    )
    if not given or not given.strip():
        return None
    version = given.strip()
    if version not in ("0.3", "1.0"):
        name = "--semantictest-compliance-a2a-version" if option else VERSION_VARIABLE
        problems.append(
            Problem(name, f"{version[:20]!r} is no A2A version this plugin speaks: write 0.3 or 1.0")
        )
        return None
    return version, where


def load_file(path: Path, settings: Settings, problems: list[Problem] | None = None) -> Suite:
    """Parse and compile one compliance file; raises SpecError naming every problem."""
    if problems:
        raise SpecError(str(path), problems)
    return compile_document(parse_file(path), settings)


def make_loader(ctx: CollectContext) -> Callable[[Path], Suite]:
    settings, problems = settings_from(ctx)
    return lambda path: load_file(path, settings, problems)
