"""What a compliance Markdown file says, as typed objects (nothing here runs anything).

``FrontMatter`` is validated strictly (unknown keys are errors with a did-you-mean); the
rest is read from Markdown by :mod:`.parse` and kept with the line each part starts on.
``Setup`` is also what the ``pytest_semantictest_compliance_setup`` hook receives.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...blocks.transports.tool_calls import ToolCallShapes
from ...errors import Problem, clip
from ...json_types import JSONObject, JSONValue
from ..source import nearest_line

DEFAULT_BASE_URL = "http://localhost:8765"
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 86400.0
"""A day: a longer (or infinite) per-case timeout is a mistake, not a wish."""
TRANSPORTS = ("completions", "realtime", "a2a", "mcp")


def _as_list(value: object) -> object:
    """``tags: core`` means ``tags: [core]``."""
    return [value] if isinstance(value, str) else value


class FrontMatter(BaseModel):
    """The YAML between the ``---`` lines at the top of the file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    version: str
    transport: Literal["completions", "realtime", "a2a", "mcp"]
    dialect: Literal["jsonrpc", "rest", "webagents"] | None = None
    """A2A only: which A2A the agent speaks (else detected from the request or the agent card)."""
    a2a_version: Literal["0.3", "1.0"] | None = None
    """A2A JSON-RPC only: the protocol version to speak (else the newest the agent card offers)."""
    tool_calls: ToolCallShapes | None = None
    """a2a only: the agent's own tool-call shape in its data parts (else the documented defaults)."""
    server: str | list[str] | None = None
    """MCP only: the server under test, a command started over stdio or an ``http(s)://`` URL."""
    protocol: Literal["auto", "handshake", "2026-07-28"] | None = None
    """MCP only: the protocol version (default ``auto``: negotiated)."""
    type: Literal["single-agent", "multi-agent"] = "single-agent"
    tags: list[str] = Field(default_factory=list)
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    depends_on: list[str] = Field(default_factory=list)
    skip_reason: str | None = None
    description: str | None = None

    @model_validator(mode="after")
    def _dialect_is_a2a(self) -> FrontMatter:
        if self.dialect is not None and self.transport != "a2a":
            raise ValueError(
                f"dialect is for transport: a2a (jsonrpc, rest or webagents); remove it from this "
                f"'{self.transport}' file"
            )
        for key in ("server", "protocol"):
            if getattr(self, key) is not None and self.transport != "mcp":
                raise ValueError(f"{key} is for transport: mcp; remove it from this '{self.transport}' file")
        return self

    @model_validator(mode="after")
    def _a2a_only(self) -> FrontMatter:
        for key in ("a2a_version", "tool_calls"):
            if getattr(self, key) is not None and self.transport != "a2a":
                raise ValueError(f"{key} is for transport: a2a; remove it from this '{self.transport}' file")
        if self.a2a_version is not None and self.dialect in ("webagents", "rest"):
            raise ValueError(
                "a2a_version is for dialect: jsonrpc (rest is A2A 1.0's HTTP+JSON; webagents has no versions)"
            )
        return self

    @field_validator("version", "a2a_version", mode="before")
    @classmethod
    def _version(cls, value: object) -> object:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("tags", "depends_on", mode="before")
    @classmethod
    def _lists(cls, value: object) -> object:
        return _as_list(value)

    @field_validator("tags")
    @classmethod
    def _markers(cls, tags: list[str]) -> list[str]:
        """Tags become pytest markers: pytest refuses a name starting with ``_``, and an empty one."""
        for tag in tags:
            if tag.startswith("_"):
                raise ValueError(
                    f"tag {clip(repr(tag))} cannot be a pytest marker (a marker name must not start with '_'): "
                    "rename it"
                )
            if not re.search(r"[^\W_]", tag):
                raise ValueError(
                    f"tag {clip(repr(tag))} has no letter or digit, so it cannot be a pytest marker: "
                    "remove it or write a word"
                )
        return tags


class Agent(BaseModel):
    """One agent of ``## Setup`` (or added or changed by a case's own ``**Setup:**``)."""

    id: str
    name: str
    instructions: str | None = None
    tools: list[str] = Field(default_factory=list)
    handoffs: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    extra: JSONObject = Field(default_factory=dict)
    """Other bullets (``Auth Config`` with its nested bullets), keys in snake_case."""
    line: int | None = None

    def config(self) -> JSONObject:
        """The agent as plain data (what a conftest sends to a server to create it)."""
        return self.model_dump(exclude={"line"})


class EnvVar(BaseModel):
    """A ``### Environment`` bullet: ``- `BASE_URL`: SDK server URL (default: http://...)``."""

    name: str
    description: str = ""
    default: str | None = None
    line: int | None = None


class Setup(BaseModel):
    """A file's ``## Setup``: agents, tool definitions, environment; plus where to send requests."""

    document: str = ""
    """The file's front matter ``name``."""
    path: str = ""
    text: str = ""
    agents: list[Agent] = Field(default_factory=list)
    tool_definitions: list[JSONObject] = Field(default_factory=list)
    environment: dict[str, EnvVar] = Field(default_factory=dict)
    base_url: str = DEFAULT_BASE_URL
    line: int | None = None

    def agent(self, name: str) -> Agent | None:
        """The agent called ``name`` (or with that id), compared case-insensitively."""
        wanted = name.strip().strip("`").lower()
        return next((a for a in self.agents if wanted in (a.name.lower(), a.id.lower())), None)

    def tool_names(self) -> list[str]:
        return [tool_name(t) for t in self.tool_definitions]


def tool_name(definition: JSONObject) -> str:
    function = definition.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if isinstance(name, str):
        return name
    return str(definition.get("name", ""))


class CaseSetup(BaseModel):
    """A case's own ``**Setup:**``: prose, agents it adds or changes, agents it takes offline."""

    text: str
    agents: list[Agent] = Field(default_factory=list)
    unavailable: list[str] = Field(default_factory=list)
    line: int | None = None


class Request(BaseModel):
    """``**Request:**``: method, path, headers and the body exactly as written."""

    method: str
    path: str
    streaming: bool = False
    invalid_json: bool = False
    headers: list[tuple[str, str, int]] = Field(default_factory=list)
    """(name, value, line) in the order written; values may hold placeholders."""
    body: str | None = None
    body_language: str = ""
    body_line: int | None = None
    notes: list[str] = Field(default_factory=list)
    """Prose lines inside the request (``No Authorization header.``)."""
    line: int | None = None

    @property
    def no_auth(self) -> bool:
        return any("no authorization header" in note.lower() for note in self.notes)


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class ChatInput(BaseModel):
    """``**Input:**`` prose as a chat request: the agent it goes to and the messages."""

    agent: str
    messages: list[Message]
    line: int | None = None


class Bullet(BaseModel):
    text: str
    line: int


class Variable(BaseModel):
    """``- `name`: One of [...]`` / ``From setup`` / a literal."""

    name: str
    kind: Literal["one_of", "from_setup", "literal"]
    choices: list[JSONValue] = Field(default_factory=list)
    line: int


class Strict(BaseModel):
    """The ``**Strict:**`` YAML: its data and the file line of every key."""

    data: JSONObject
    lines: dict[tuple[str | int, ...], int] = Field(default_factory=dict)
    line: int

    def line_of(self, path: tuple[str | int, ...]) -> int:
        return nearest_line(self.lines, path, self.line)


class TestCase(BaseModel):
    """One ``### N. Title`` under ``## Test Cases``."""

    __test__ = False  # not a pytest test class

    number: int | None = None
    title: str
    line: int
    description: str = ""
    request: Request | None = None
    input: ChatInput | None = None
    flow: list[Bullet] = Field(default_factory=list)
    assertions: list[Bullet] = Field(default_factory=list)
    strict: Strict | None = None
    expected: Literal["success", "failure"] | None = None
    condition: Bullet | None = None
    variables: list[Variable] = Field(default_factory=list)
    setup: CaseSetup | None = None
    behavior: str | None = None
    problems: list[Problem] = Field(default_factory=list, exclude=True)
    """What is wrong in this case's own text (an unknown label, a request line that cannot be read):
    confined to it, so it makes this case ERROR and the file's other cases still run."""

    @property
    def label(self) -> str:
        return f"{self.number}. {self.title}" if self.number is not None else self.title


class Document(BaseModel):
    """A whole compliance file."""

    path: str
    front: FrontMatter
    front_lines: dict[tuple[str | int, ...], int] = Field(default_factory=dict)
    title: str = ""
    description: str = ""
    setup: Setup
    cases: list[TestCase] = Field(default_factory=list)
