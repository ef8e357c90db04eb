"""Deterministic agents (no LLM) for the example compliance server: behaviour follows each agent's
configuration (instructions, tools, handoffs, skills), never the test that calls it.

- instructions asking to repeat/echo: ``Echo: <the user's message>``;
- handoffs: the request goes to the handoff target whose speciality (from its name) the message
  asks about first, with a ``handoff`` event; an unavailable target is a failed handoff;
- tools offered in the request: tool calls chosen by intent (``tool_choice`` honoured); tools
  only configured on the agent run server-side and the answer uses their (fake) results;
- instructions "Call <agent> ...": an agent-to-agent call, with a self-issued token when the
  agent has an AuthSkill (``auth.token_generated`` / ``auth.token_validated`` events);
- otherwise plain text (``Say exactly: X`` says X; verbose agents write several sentences).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

try:
    from . import compliance_auth
    from .chat_rules import ToolCall, message_text
except ImportError:  # imported with examples/agents on sys.path
    import compliance_auth  # type: ignore[no-redef]
    from chat_rules import ToolCall, message_text  # type: ignore[no-redef]

INTENTS: dict[str, tuple[str, ...]] = {
    "weather": ("weather", "forecast", "temperature"),
    "math": ("calculat", "math", "compute"),
    "report": ("report", "summar"),
    "search": ("search", "look up"),
}
_EXPRESSION = re.compile(r"(-?\d+(?:\.\d+)?)\s*([-+*/x\u00d7])\s*(-?\d+(?:\.\d+)?)")
_CITY = re.compile(r"\b(?:in|and|for|city is)\s+((?:[A-Z][\w.'-]*)(?:\s+[A-Z][\w.'-]*)*)")
_CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "clear")


@dataclass
class Agent:
    name: str
    instructions: str = ""
    tools: list[str] = field(default_factory=list)
    handoffs: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    available: bool = True

    @classmethod
    def from_config(cls, name: str, data: dict[str, Any]) -> Agent:
        return cls(
            name,
            str(data.get("instructions") or ""),
            list(data.get("tools") or []),
            list(data.get("handoffs") or []),
            list(data.get("skills") or []),
            dict(data.get("extra") or {}),
            bool(data.get("available", True)),
        )

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "instructions": self.instructions,
            "tools": self.tools,
            "handoffs": self.handoffs,
            "skills": self.skills,
            "extra": self.extra,
            "available": self.available,
        }

    @property
    def auth(self) -> dict[str, Any]:
        auth = self.extra.get("auth_config")
        return auth if "AuthSkill" in self.skills and isinstance(auth, dict) else {}

    def speciality(self) -> set[str]:
        text = self.name.lower() + ("" if self.handoffs else " " + self.instructions.lower())
        return {intent for intent, words in INTENTS.items() if any(w in text for w in words)}


def builtin_agents() -> dict[str, Agent]:
    """The agents the published compliance files name."""
    agents = [
        Agent("echo-agent", "Repeat back exactly what the user says, prefixed with 'Echo: '"),
        Agent("verbose-agent", "Provide detailed, multi-sentence responses to demonstrate streaming."),
        Agent("minimal-agent", "Answer as briefly as possible."),
        Agent(
            "tool-agent",
            "Use the provided tools to help users. Always use tools when appropriate.",
            ["get_weather", "search", "calculate"],
        ),
        Agent(
            "router",
            "Route weather questions to weather-agent, math questions to calculator-agent.",
            handoffs=["weather-agent", "calculator-agent"],
        ),
        Agent("weather-agent", "Provide weather information for requested locations.", ["get_weather"]),
        Agent("calculator-agent", "Solve math problems.", ["calculate"]),
        Agent("report-agent", "Summarize weather data into reports"),
        Agent(
            "protected-agent",
            "Provide sensitive data only to authenticated callers.",
            skills=["AuthSkill"],
            extra={"auth_config": {"mode": "validate", "required_scopes": ["read"]}},
        ),
        Agent(
            "client-agent",
            "Call protected-agent to get data.",
            skills=["AuthSkill"],
            extra={"auth_config": {"mode": "self-issued", "scopes": ["read", "write"]}},
        ),
    ]
    return {a.name: a for a in agents}


@dataclass
class Answer:
    """One turn's outcome: what the final agent says (or the tool calls it asks for), and events."""

    agent: str
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


class BadRequest(Exception):
    pass


# --- helpers -----------------------------------------------------------------------------------


def intents(text: str) -> list[str]:
    """Intents the text asks about, in the order they first appear."""
    low = text.lower()
    found = {intent: [low.find(w) for w in words if w in low] for intent, words in INTENTS.items()}
    expression = _EXPRESSION.search(text)
    if expression:
        found["math"].append(expression.start())
    return [intent for intent, at in sorted(found.items(), key=lambda kv: min(kv[1], default=0)) if at]


def cities(text: str) -> list[str]:
    return [m.group(1).rstrip(".?!,") for m in _CITY.finditer(text)]


def city_from(messages: list[dict[str, Any]]) -> str | None:
    """The latest city a user message names ("there" refers back to it)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            found = cities(message_text(message))
            if found:
                return found[0]
    return None


def weather(city: str) -> dict[str, Any]:
    seed = int(hashlib.sha1(city.lower().encode()).hexdigest(), 16)
    return {
        "location": city,
        "temperature": 10 + seed % 20,
        "unit": "celsius",
        "condition": _CONDITIONS[seed % 5],
    }


def calculate(expression: str) -> str:
    match = _EXPRESSION.search(expression)
    if match is None:
        return "I could not read that expression."
    a, op, b = float(match.group(1)), match.group(2), float(match.group(3))
    value = {
        "+": a + b,
        "-": a - b,
        "*": a * b,
        "x": a * b,
        "\u00d7": a * b,
        "/": a / b if b else float("nan"),
    }[op]
    shown = int(value) if value == int(value) else round(value, 6)
    return f"{match.group(0)} = {shown}"


def last_user(messages: list[dict[str, Any]]) -> str:
    return next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")


# --- the agents ----------------------------------------------------------------------------------


class Runner:
    """Runs one request against the registry (``agents``), following handoffs and A2A calls."""

    def __init__(self, agents: dict[str, Agent], issuer: str, session_id: str) -> None:
        self.agents = agents
        self.issuer = issuer
        self.session_id = session_id

    def run(self, agent: Agent, body: dict[str, Any], depth: int = 0) -> Answer:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        if body.get("tools") is not None:
            return self.client_tools(agent, body, messages)
        text = last_user(messages)
        caller = re.search(r"\bcall\s+`?([\w-]+)`?", agent.instructions, re.I)
        if caller and caller.group(1) in self.agents and depth < 3:
            return self.call_agent(agent, self.agents[caller.group(1)], messages)
        if agent.handoffs and depth < 4:
            handed = self.hand_off(agent, messages, text, depth)
            if handed is not None:
                return handed
        if re.search(r"\b(repeat back|echo)\b", agent.instructions, re.I):
            return Answer(agent.name, f"Echo: {text}")
        if agent.auth.get("mode") == "validate":  # reached only by authenticated callers
            return Answer(agent.name, "Here is the data you asked for: account 42, balance 1234.56 EUR.")
        if any("weather" in tool for tool in agent.tools) and "weather" in intents(text):
            return Answer(agent.name, self.weather_text(messages))
        if any(word in tool for tool in agent.tools for word in ("calc", "math")) and "math" in intents(text):
            return Answer(agent.name, calculate(text))
        if "report" in agent.speciality():
            return Answer(agent.name, self.report(messages))
        return Answer(agent.name, self.chat(agent, text))

    def hand_off(self, agent: Agent, messages: list[dict[str, Any]], text: str, depth: int) -> Answer | None:
        wanted = intents(text)
        own = agent.speciality()
        prefix: list[dict[str, Any]] = []
        if own & set(wanted):  # do our own part first, then pass it on
            done = Answer(
                agent.name, self.weather_text(messages) if "weather" in own else self.chat(agent, text)
            )
            prefix = [{"role": "assistant", "name": agent.name, "content": done.content}]
            wanted = [w for w in wanted if w not in own]
        targets = [self.agents.get(name) or Agent(name, available=False) for name in agent.handoffs]
        for intent in wanted:
            target = next((t for t in targets if intent in t.speciality() or intent in t.name), None)
            if target is None:
                continue
            context = copy.deepcopy(messages) + prefix
            event = {
                "type": "handoff",
                "from": agent.name,
                "to": target.name,
                "status": "completed",
                "context": context,
                "metadata": {"message": text, "timestamp": time.time(), "session_id": self.session_id},
            }
            if not target.available:
                event.update(status="failed", error=f"{target.name} is unavailable")
                return Answer(
                    agent.name,
                    f"Sorry, {target.name} is unavailable right now, so I could not "
                    "complete your request. Please try again later.",
                    events=[event],
                )
            result = self.run(target, {"messages": context}, depth + 1)
            result.events[:0] = [event]
            return result
        if prefix:
            return Answer(agent.name, prefix[0]["content"])
        return None

    def call_agent(self, agent: Agent, target: Agent, messages: list[dict[str, Any]]) -> Answer:
        events: list[dict[str, Any]] = []
        auth = agent.auth
        if auth.get("mode") == "self-issued":
            token = compliance_auth.mint(
                f"{self.issuer}/agents/{agent.name}", agent.name, list(auth.get("scopes") or [])
            )
            events.append(
                {"type": "auth.token_generated", "agent": agent.name, "scopes": auth.get("scopes") or []}
            )
        else:
            token = None
        if target.auth.get("mode") == "validate":
            try:
                claims = compliance_auth.verify(token or "")
            except compliance_auth.TokenError as exc:
                events.append({"type": "auth.token_rejected", "agent": target.name, "reason": exc.code})
                return Answer(agent.name, f"{target.name} refused the call: {exc}", events=events)
            events.append(
                {"type": "auth.token_validated", "agent": target.name, "subject": claims.get("sub")}
            )
        answer = self.run(target, {"messages": messages}, 3)
        events.append({"type": "a2a.response", "agent": target.name, "status": 200})
        return Answer(agent.name, f"{target.name} answered: {answer.content}", events=events + answer.events)

    def weather_text(self, messages: list[dict[str, Any]]) -> str:
        city = city_from(messages)
        if city is None:
            return "Which city would you like the weather for?"
        data = weather(city)
        return f"The weather in {city} is {data['temperature']}\u00b0C and {data['condition']}."

    def report(self, messages: list[dict[str, Any]]) -> str:
        facts = [m.get("content") for m in messages if m.get("role") == "assistant" and m.get("content")]
        body = " ".join(str(f) for f in facts) or "No weather data was provided."
        return f"Weather report\n- Summary: {body}\n- Prepared by report-agent."

    def chat(self, agent: Agent, text: str) -> str:
        exact = re.search(r"say exactly:?\s*['\"\u201c]?(.+?)['\"\u201d]?\s*$", text, re.I)
        if exact:
            return exact.group(1)
        if not text.strip():
            return ""
        if re.search(r"\b(hello|hi|hey)\b", text, re.I):
            return "Hello! I'm doing well, thank you. How can I help you today?"
        if re.search(r"\bbrief|minimal\b", agent.instructions, re.I):
            return "OK."
        if re.search(r"\bdetailed|multi-sentence|verbose\b", agent.instructions, re.I):
            return self.long_text(text)
        return f"You said: {text}"

    @staticmethod
    def long_text(text: str) -> str:
        count = re.search(r"count from (\d+) to (\d+)", text, re.I)
        if count:
            numbers = ", ".join(str(n) for n in range(int(count.group(1)), int(count.group(2)) + 1))
            return f"Sure, here is the count: {numbers}. Counting is a simple way to see a stream at work. Each number arrived as its own piece of text."
        topic = re.sub(r"^(tell me|write|give me)\s+", "", text.strip().rstrip("?.!"), flags=re.I)
        return (
            f"Here is a response about {topic}. It is written in several sentences so that it streams in many "
            f"chunks. Each sentence adds a little more detail to the answer. The story ends here, as all good "
            f"stories must."
        )

    # -- tools the client offers (OpenAI function calling) ------------------------------------------

    def client_tools(self, agent: Agent, body: dict[str, Any], messages: list[dict[str, Any]]) -> Answer:
        tools = {
            (t.get("function") or {}).get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)
        }
        results = _tool_results(messages)
        if results is not None:
            return Answer(
                agent.name, " ".join(_describe_result(name, args, content) for name, args, content in results)
            )
        choice = body.get("tool_choice", "auto")
        text = last_user(messages)
        if choice == "none" or not tools:
            return Answer(agent.name, self.without_tools(text))
        calls: list[tuple[str, dict[str, Any]]] = []
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            if name not in tools:
                raise BadRequest(f"tool_choice names '{name}', which is not among the tools")
            calls = [(name, _arguments(tools[name], text, None))]
        else:
            for name, tool in tools.items():
                kind = _tool_intent(tool)
                if kind == "weather" and "weather" in intents(text):
                    calls += [(name, _arguments(tool, text, city)) for city in (cities(text) or [None])]
                elif kind and kind != "weather" and kind in intents(text):
                    calls.append((name, _arguments(tool, text, None)))
            if not calls and choice == "required":
                name = next(iter(tools))
                calls = [(name, _arguments(tools[name], text, None))]
        if not calls:
            return Answer(agent.name, self.without_tools(text))
        if body.get("parallel_tool_calls") is False:
            calls = calls[:1]
        base = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
        return Answer(
            agent.name,
            None,
            [ToolCall(f"call_{base + n + 1}", name, args) for n, (name, args) in enumerate(calls)],
        )

    def without_tools(self, text: str) -> str:
        if "weather" in intents(text):
            city = (cities(text) or ["your city"])[0]
            return f"I can't look up live weather without a tool, so I cannot tell you the weather in {city} right now."
        return self.chat(Agent("assistant"), text) or "OK."


def _tool_intent(tool: dict[str, Any]) -> str | None:
    function = tool.get("function") or {}
    text = f"{function.get('name', '')} {function.get('description', '')}".lower()
    return next((intent for intent, words in INTENTS.items() if any(w in text for w in words)), None)


def _arguments(tool: dict[str, Any], text: str, city: str | None) -> dict[str, Any]:
    """Arguments for the tool's required parameters, read from the message."""
    schema = (tool.get("function") or {}).get("parameters") or {}
    properties = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or list(properties)[:1]:
        low = name.lower()
        if low in ("location", "city", "place"):
            args[name] = city or (cities(text) or ["unknown"])[0]
        elif low in ("expression", "expr", "formula"):
            match = _EXPRESSION.search(text)
            args[name] = match.group(0) if match else text
        else:
            args[name] = text
    return args


def _tool_results(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]] | None:
    """(tool name, arguments, result) for the tool messages answering the last assistant tool calls."""
    last = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")),
        default=None,
    )
    if last is None:
        return None
    calls = {c.get("id"): c for c in messages[last].get("tool_calls") or [] if isinstance(c, dict)}
    results = []
    for message in messages[last + 1 :]:
        if message.get("role") != "tool":
            continue
        call = calls.get(message.get("tool_call_id"))
        if call is None:
            raise BadRequest(
                f"tool message has tool_call_id '{message.get('tool_call_id')}', which matches no tool "
                f"call of the assistant message (ids: {', '.join(str(k) for k in calls)})"
            )
        function = call.get("function") or {}
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = {}
        results.append(
            (str(function.get("name")), args if isinstance(args, dict) else {}, str(message.get("content")))
        )
    return results or None


def _describe_result(name: str, args: dict[str, Any], content: str) -> str:
    try:
        data = json.loads(content)
    except ValueError:
        data = content
    where = args.get("location") or args.get("city")
    if isinstance(data, dict) and "temperature" in data:
        condition = f" and {data['condition']}" if data.get("condition") else ""
        return f"The weather in {where or 'that place'} is {data['temperature']} degrees{condition}."
    return f"The {name} tool returned: {content}"
