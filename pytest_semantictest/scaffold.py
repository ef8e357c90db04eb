"""``semantictest init``: a first passing spec for an agent, named by its URL or start command.

It takes (or, at a terminal, asks for) the agent's URL and the command that starts it, starts it the
way a spec would (the agent service: its own process group, a log, stopped at the end), probes what
it speaks (``agents/probe.py``) and writes a starter spec in the chosen format
(``scaffold_specs.py``) that passes against what it answered. Nothing a user wrote is overwritten
without ``--force``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from .agents.probe import Probe, ProbeError, probe
from .scaffold_specs import FORMATS, Agent, out_paths, run_line, write

KINDS = {
    "chat": "OpenAI chat completions",
    "a2a": "an A2A agent card",
    "realtime": "an OpenAI Realtime socket",
}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(
        prog="semantictest init",
        description="write a first spec that passes against your agent (asks for what is not given)",
    )
    made.add_argument(
        "--url", help="the agent's URL: its chat completions URL, its base URL, or ws://.../realtime"
    )
    made.add_argument("--start", help="command that starts the agent (run in --dir, without a shell)")
    made.add_argument("--health", help="URL that answers 200 once the started agent is ready")
    made.add_argument(
        "--format", choices=FORMATS["chat"], help="the spec's format (default: by what the agent speaks)"
    )
    made.add_argument("--name", default="my_agent", help="the spec's name and file name (default my_agent)")
    made.add_argument(
        "--model", help="the model to send to a chat completions agent (default: its first /models)"
    )
    made.add_argument("--dir", default=".", help="the folder to write to (default: this one)")
    made.add_argument("--force", action="store_true", help="overwrite files that exist")
    return made


def main(argv: Sequence[str], out: TextIO | None = None, ask: Callable[[str], str] | None = None) -> int:
    out = out or sys.stdout
    args = parser().parse_args(argv)
    if ask is None and sys.stdin.isatty():
        ask = input
    try:
        url, start, fmt = _complete(args, ask)
    except ValueError as exc:
        out.write(f"semantictest init: {exc}\n")
        return 2
    folder = Path(args.dir)
    if not NAME.match(args.name):
        out.write(
            f"semantictest init: --name {args.name!r}: use letters, digits, '_' and '-' (a file name)\n"
        )
        return 2
    found = _probe_agent(url, start, args.health, args.model, folder, args.name, out)
    if found is None:
        return 2
    fmt = fmt or FORMATS[found.kind][0]
    if fmt not in FORMATS[found.kind]:
        out.write(
            f"semantictest init: an agent that speaks {KINDS[found.kind]} can be tested in "
            f"{' or '.join(FORMATS[found.kind])} here, not {fmt}\n"
        )
        return 2
    return _write(fmt, args.name, Agent(found, start, args.health), folder, args.force, out)


def _complete(
    args: argparse.Namespace, ask: Callable[[str], str] | None
) -> tuple[str, str | None, str | None]:
    url, start, fmt = args.url, args.start, args.format
    if not url and ask is not None:
        start = start or ask("Command that starts the agent (empty: it runs already): ").strip() or None
        url = ask("The agent's URL (chat completions, A2A base URL or ws://.../realtime): ").strip()
    _check_url(url)
    if fmt is None and ask is not None:
        fmt = _ask_format(ask)
    return url, start, fmt


def _check_url(url: str | None) -> None:
    """Raises ValueError saying how to give the agent's URL when there is none, or it is no URL."""
    if not url:
        raise ValueError(
            "give the agent's URL with --url (and --start COMMAND when the plugin should start it), "
            "or run it at a terminal to be asked"
        )
    if not _is_url(url):
        raise ValueError(
            f"{url!r} is not a URL: give one such as http://127.0.0.1:8000/v1/chat/completions, "
            "http://127.0.0.1:9999 (an A2A agent) or ws://127.0.0.1:8770/realtime"
        )


def _ask_format(ask: Callable[[str], str]) -> str | None:
    """The format the user answers (None: chosen by what the agent speaks); raises ValueError for an
    unknown one."""
    fmt = ask(f"Format ({', '.join(FORMATS['chat'])}; empty: by what the agent speaks): ").strip() or None
    if fmt is not None and fmt not in FORMATS["chat"]:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS['chat'])}")
    return fmt


def _is_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
        return parts.scheme in ("http", "https", "ws", "wss") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is not a number, a bad IPv6 address
        return False


def _probe_agent(
    url: str, start: str | None, health: str | None, model: str | None, folder: Path, name: str, out: TextIO
) -> Probe | None:
    from .agents.config import AgentConfig
    from .agents.errors import AgentError
    from .agents.process import AgentProcess

    process = None
    try:
        if start:
            config = AgentConfig(
                endpoint=url,
                start=start,
                health=health,
                cwd=folder.resolve(),
                log_dir=folder.resolve() / ".semantictest" / "logs",
                name=f"init-{name}",
                startup_timeout_ms=30000,
            )
            process = AgentProcess(config)
            process.start()
        found = probe(url, model=model)
    except (AgentError, ProbeError) as exc:
        out.write(f"semantictest init: {exc}\n")
        return None
    finally:
        if process is not None:
            process.stop()
    said = f'; it answered "{found.text[:80]}"' if found.text else ""
    what = f"model {found.model}" if found.kind == "chat" else found.dialect or found.kind
    if found.name:
        what += f", agent {found.name}"
    out.write(f"{found.url} speaks {KINDS[found.kind]} ({what}){said}\n")
    return found


def _write(fmt: str, name: str, agent: Agent, folder: Path, force: bool, out: TextIO) -> int:
    texts = write(fmt, name, agent)
    paths = out_paths(folder, fmt, name)
    there = [str(p) for p in paths if p.exists()]
    if there and not force:
        out.write(
            f"semantictest init: {', '.join(there)} exists already: choose another --name, or --force\n"
        )
        return 2
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path in paths:
            path.write_text(texts[path.name], encoding="utf-8")
    except OSError as exc:
        out.write(f"semantictest init: cannot write {exc.filename}: {exc.strerror}\n")
        return 2
    out.write(f"wrote {', '.join(str(p) for p in paths)} ({fmt})\n")
    where = "" if folder.resolve() == Path.cwd().resolve() else f"cd {folder} && "
    out.write(f"run it: {where}{run_line(fmt, name, agent)}\n")
    return 0
