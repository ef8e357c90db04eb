"""An A2A agent card of either protocol version: which endpoint and version a case talks to, and
whether the card validates (with ``a2a-sdk``'s own types for the version chosen).

A v0.3 card names its JSON-RPC endpoint in ``url`` (with ``protocolVersion``); a v1.0 card lists
``supportedInterfaces`` (``url``, ``protocolBinding``, ``protocolVersion``), and a server that speaks
both lists one interface a version. The version is the one the case names (front matter
``a2a_version``, else ``--semantictest-a2a-version``), else the newest the card offers over JSON-RPC.
The endpoint's path is taken from the card, on the host the case names: a card often names the
address the agent is published at, not the one under test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ...json_types import JSONObject, JSONValue

if TYPE_CHECKING:
    from pydantic import ValidationError

VERSIONS = ("1.0", "0.3")


@dataclass(frozen=True)
class Endpoint:
    url: str
    version: str
    source: str
    """Where the version came from: ``front matter``, ``option``, ``agent card`` or ``default``."""


def version_name(value: JSONValue) -> str | None:
    """``0.3.0`` -> ``0.3``, ``1`` -> ``1.0``; None for what is no version."""
    parts = str(value or "").strip().split(".")
    if not parts[0].isdigit():
        return None
    minor = parts[1] if len(parts) > 1 and parts[1].isdigit() else "0"
    return f"{int(parts[0])}.{int(minor)}"


def offers(card: JSONValue, binding: str = "JSONRPC") -> list[tuple[str, str]]:
    """(version, url) of every endpoint of the binding (``JSONRPC``, ``HTTP+JSON``) the card names, in
    the card's order: its A2A 1.0 ``supportedInterfaces``, then its A2A 0.3 ``url`` (when its
    ``preferredTransport`` is that binding) and ``additionalInterfaces``."""
    if not isinstance(card, dict):
        return []
    out = [
        (version_name(interface.get("protocolVersion")) or "1.0", interface["url"])
        for interface in _interfaces(card, binding)
    ]
    for found in _v03_urls(card, binding):
        if found not in out:
            out.append(found)
    return out


def _interfaces(card: JSONObject, binding: str) -> list[JSONObject]:
    """The card's ``supportedInterfaces`` entries (A2A 1.0) that have a URL and speak ``binding``."""
    found = []
    for interface in card.get("supportedInterfaces") or []:
        if not isinstance(interface, dict) or not isinstance(interface.get("url"), str):
            continue
        if str(interface.get("protocolBinding") or "JSONRPC").upper() == binding:
            found.append(interface)
    return found


def _v03_urls(card: JSONObject, binding: str) -> list[tuple[str, str]]:
    """(version, url) of the A2A 0.3 card's own ``url`` when its ``preferredTransport`` (JSON-RPC when
    it does not say) is ``binding``, then of its ``additionalInterfaces`` whose ``transport`` is."""
    version = version_name(card.get("protocolVersion")) or "0.3"
    extra = card.get("additionalInterfaces")
    named = [{"url": card.get("url"), "transport": card.get("preferredTransport")}]
    named += extra if isinstance(extra, list) else []
    return [
        (version, entry["url"])
        for entry in named
        if isinstance(entry, dict)
        and isinstance(entry.get("url"), str)
        and str(entry.get("transport") or "JSONRPC").upper() == binding
    ]


def choose(
    card: JSONValue, base: str, wanted: str | None, source: str, binding: str = "JSONRPC"
) -> tuple[Endpoint, str | None]:
    """The endpoint to talk to, and why that is a problem (the card offers no such version), or None."""
    offered = offers(card, binding)
    if not offered:
        return _not_offered(card, base, wanted, source, binding)
    if wanted is not None:
        return _asked(offered, base, wanted, source, binding)
    for version in VERSIONS:
        match = _url_of(offered, version)
        if match is not None:
            return Endpoint(on_host(match, base), version, "agent card"), None
    return Endpoint(base + "/", "0.3", "default"), None


def _asked(
    offered: list[tuple[str, str]], base: str, wanted: str, source: str, binding: str
) -> tuple[Endpoint, str | None]:
    """The endpoint of the version the case asks for; a card that offers others is a problem."""
    match = _url_of(offered, wanted)
    if match is not None:
        return Endpoint(on_host(match, base), wanted, source), None
    listed = ", ".join(f"{v} at {u}" for v, u in offered)
    return Endpoint(base + "/", wanted, source), (
        f"the agent card offers A2A {listed} over {binding}, not {wanted} as the case asks ({source})"
    )


BINDINGS = {"JSONRPC": "jsonrpc", "HTTP+JSON": "rest"}
"""Each binding and the ``dialect`` that speaks it."""


def _not_offered(
    card: JSONValue, base: str, wanted: str | None, source: str, binding: str
) -> tuple[Endpoint, str | None]:
    """The base URL when the card names no endpoint of ``binding``: a problem when it offers the other
    binding (its version then read as the card's), none when it offers neither (no card, or one
    without endpoints: the problem of the card says so)."""
    other = next(name for name in BINDINGS if name != binding)
    elsewhere = offers(card, other)
    if not elsewhere:
        return Endpoint(base + "/", wanted or "0.3", source if wanted else "default"), None
    listed = ", ".join(f"{v} at {u}" for v, u in elsewhere)
    version, source = (wanted, source) if wanted else (elsewhere[0][0], "agent card")
    return Endpoint(base + "/", version, source), (
        f"the agent card offers no {binding} interface, only A2A {listed} over {other}: "
        f"write dialect: {BINDINGS[other]} in the front matter"
    )


def _url_of(offered: list[tuple[str, str]], version: str) -> str | None:
    """The first URL offered for ``version``."""
    return next((url for v, url in offered if v == version), None)


def on_host(url: str, base: str) -> str:
    """The card's endpoint path on the case's host (scheme, host and port of ``base``); a relative URL
    is resolved against ``base``."""
    if url.startswith(base):
        return url
    parts, at = urlsplit(url), urlsplit(base)
    if not parts.netloc:  # relative: against the case's base
        return base.rstrip("/") + "/" + url.lstrip("/")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{at.scheme}://{at.netloc}{path}"


def card_problem(card: JSONValue, version: str, url: str) -> str | None:
    """Why the card does not validate as an A2A ``version`` AgentCard, or None."""
    if version == "1.0":
        from a2a.types import a2a_pb2
        from google.protobuf import json_format

        if not isinstance(card, dict):
            return f"the agent card at {url} is not a JSON object"
        try:
            json_format.ParseDict(card, a2a_pb2.AgentCard(), ignore_unknown_fields=True)
        except json_format.ParseError as exc:
            return f"the agent card at {url} does not validate as an A2A 1.0 AgentCard: {exc}"
        missing = [key for key in ("name", "supportedInterfaces") if not card.get(key)]
        if missing:
            return (
                f"the agent card at {url} has no {' and no '.join(missing)} (an A2A 1.0 AgentCard needs them)"
            )
        return None
    from a2a.compat.v0_3.types import AgentCard
    from pydantic import ValidationError

    try:
        AgentCard.model_validate(card)
    except ValidationError as exc:
        return f"the agent card at {url} does not validate as an A2A 0.3 AgentCard: {_first_errors(exc)}"
    return None


def _first_errors(exc: ValidationError) -> str:
    errors = exc.errors()[:3]
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(card)'}: {e['msg']}" for e in errors)


def streams(card: JSONValue) -> bool:
    """Whether the card says the agent streams (a card that does not say: it is tried)."""
    capabilities = card.get("capabilities") if isinstance(card, dict) else None
    return not isinstance(capabilities, dict) or capabilities.get("streaming") is not False
