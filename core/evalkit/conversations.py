"""Conversations and tools: the turns a golden prompt may hold, the tools it declares and the canned
results that answer their calls.

These are the frozen values both sides share: a :class:`~evalkit.GoldenPrompt` holds ``messages``,
``tools`` and ``tool_results``; a chat-capable generator receives the turns sent so far and returns
one :class:`~evalkit.answers.Turn`; an :class:`~evalkit.Answer` carries the ``transcript`` of what
the model (and the canned tools) said. How a conversation is driven lives in one place, the kernel's
loop (:mod:`evalkit.run.answering.conversation`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from .jsonparse import parse_json
from .jsontext import compact_text, sent_text

__all__ = [
    "ROLES",
    "CannedResult",
    "ConversationMode",
    "DEFAULT_MAX_STEPS",
    "Message",
    "Tool",
    "ToolCall",
    "replies",
    "tool_calls_of",
    "transcript_data",
    "transcript_lines",
]

#: The roles a turn may have.
ROLES = ("system", "user", "assistant", "tool")
#: The most model turns answering one user turn when a prompt does not say (``max_steps``).
DEFAULT_MAX_STEPS = 10


class ConversationMode(str, enum.Enum):
    """How a conversation is sent: ``fixed`` — the history as written, the model answers its last
    user turn; ``scripted`` — each user turn in order, the model's own replies fed back."""

    FIXED = "fixed"
    SCRIPTED = "scripted"


def _arguments(value: Any) -> Any:
    """A tool call's arguments as JSON data: a JSON text is parsed; text that is not JSON is kept as
    it is (a model may send broken arguments, and a check should see them); ``None`` stays ``None``
    (a stored call whose arguments the privacy level did not keep). Text holding ``NaN`` or an
    infinity is not JSON (:func:`~evalkit.jsonparse.parse_json`): kept as text, so no NaN reaches
    a check, the turn sent back to the model or the store."""
    if isinstance(value, str):
        try:
            return parse_json(value)
        except ValueError:
            return value
    return value


@attrs.frozen
class ToolCall:
    """One call of a tool an assistant turn makes: the tool's name, its arguments (JSON data: an
    object as a model sends it, or the raw text when it was not JSON) and the call's id."""

    name: str
    arguments: Any = attrs.field(factory=dict, converter=_arguments)
    id: str | None = None

    @classmethod
    def coerce(cls, value: ToolCall | Mapping[str, Any]) -> ToolCall:
        """A ``ToolCall``, or one from ``{"id", "name", "arguments"}``."""
        if isinstance(value, ToolCall):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("name"), str):
            return cls(value["name"], value.get("arguments"), value.get("id"))
        raise TypeError(f'a tool call must be a ToolCall or a mapping with "name", not {type(value).__name__}')

    def arguments_text(self) -> str:
        """The arguments as JSON text (raw text as it came), as a transcript keeps and shows them:
        a NaN or an infinity written ``null``, as the store writes one (:func:`~evalkit.jsontext.compact_text`).
        A request sends them with :meth:`sent_arguments`, which refuses one."""
        if isinstance(self.arguments, str):
            return self.arguments
        return compact_text({} if self.arguments is None else self.arguments)

    def sent_arguments(self) -> str:
        """The arguments as the JSON text an OpenAI-style API sends (raw text as it came); raises
        :class:`~evalkit.jsontext.NotJsonNumber` for a NaN or an infinity in them (no JSON carries one)."""
        if isinstance(self.arguments, str):
            return self.arguments
        return sent_text({} if self.arguments is None else self.arguments)


def _tool_calls(value: Iterable[ToolCall | Mapping[str, Any]] | None) -> tuple[ToolCall, ...]:
    return tuple(ToolCall.coerce(item) for item in value or ())


@attrs.frozen
class Message:
    """One turn of a conversation: a ``system``, ``user``, ``assistant`` or ``tool`` turn.

    An assistant turn has ``content``, ``tool_calls`` or both; a tool turn answers the tool call
    whose id is ``tool_call_id`` (``name``: the tool). Build turns with the factories
    (``Message.user("Hello")``) or from the set-file mapping (:meth:`coerce`).
    """

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_tool_calls)
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def system(cls, content: str) -> Message:
        """A system turn."""
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        """A user turn."""
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str | None = None, tool_calls: Iterable[ToolCall | Mapping[str, Any]] = ()) -> Message:
        """An assistant turn: text, tool calls or both."""
        return cls("assistant", content, tool_calls)  # type: ignore[arg-type]

    @classmethod
    def tool(cls, tool_call_id: str | None, content: str, name: str | None = None) -> Message:
        """The result of the tool call ``tool_call_id``."""
        return cls("tool", content, (), tool_call_id, name)

    @classmethod
    def coerce(cls, value: Message | Mapping[str, Any]) -> Message:
        """A ``Message``, or one from ``{"role", "content", "tool_calls", "tool_call_id", "name"}``."""
        if isinstance(value, Message):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("role"), str):
            return cls(value["role"], value.get("content"), value.get("tool_calls") or (), value.get("tool_call_id"), value.get("name"))
        raise TypeError(f'a turn must be a Message or a mapping with "role", not {type(value).__name__}')


def messages_of(value: Iterable[Message | Mapping[str, Any]] | None) -> tuple[Message, ...]:
    """Turns as ``Message`` objects (mappings converted)."""
    if type(value) is tuple and not value:  # a plain prompt's: the same empty tuple, without a generator
        return ()
    return tuple(Message.coerce(item) for item in value or ())


def _schema(value: Any) -> Any:
    return {"type": "object", "properties": {}} if value is None else value


@attrs.frozen
class Tool:
    """A tool the model may call: its name, what it does and the JSON Schema of its arguments, as an
    OpenAI function object declares them (:meth:`coerce` reads ``{"type": "function", "function":
    {...}}`` or the bare function)."""

    name: str
    description: str | None = None
    parameters: Any = attrs.field(factory=lambda: {"type": "object", "properties": {}}, converter=_schema)

    @classmethod
    def coerce(cls, value: Tool | Mapping[str, Any]) -> Tool:
        """A ``Tool``, or one from an OpenAI function object."""
        if isinstance(value, Tool):
            return value
        if isinstance(value, Mapping):
            function = value.get("function") if value.get("type") == "function" else value
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                return cls(function["name"], function.get("description"), function.get("parameters"))
        raise TypeError('a tool must be a Tool or an OpenAI function object {"type": "function", "function": {"name": ...}}')

    def as_openai(self) -> dict[str, Any]:
        """The OpenAI function object a chat-completions request sends."""
        function: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}


def tools_of(value: Iterable[Tool | Mapping[str, Any]] | None) -> tuple[Tool, ...]:
    """Tools as ``Tool`` objects (OpenAI function objects converted)."""
    if type(value) is tuple and not value:  # a plain prompt's: the same empty tuple, without a generator
        return ()
    return tuple(Tool.coerce(item) for item in value or ())


@attrs.frozen
class CannedResult:
    """What a call of tool ``name`` returns when its arguments validate against the JSON Schema
    ``arguments`` (``True``, the default: any arguments). ``result`` is JSON data; text is sent to
    the model as it is, anything else as JSON."""

    name: str
    result: Any
    arguments: Any = True

    @classmethod
    def coerce(cls, value: CannedResult | Mapping[str, Any]) -> CannedResult:
        """A ``CannedResult``, or one from ``{"name", "arguments", "result"}``."""
        if isinstance(value, CannedResult):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("name"), str) and "result" in value:
            return cls(value["name"], value["result"], value.get("arguments", True))
        raise TypeError('a canned result must be a CannedResult or a mapping with "name" and "result"')

    def content(self) -> str:
        """The tool turn's text, sent to the model: ``result`` itself when it is text, else its
        JSON; raises :class:`~evalkit.jsontext.NotJsonNumber` for a NaN or an infinity in it (a
        validated set holds none: :func:`~evalkit.shapes.value_fault`)."""
        if isinstance(self.result, str):
            return self.result
        return sent_text(self.result)


def canned_results_of(value: Iterable[CannedResult | Mapping[str, Any]] | None) -> tuple[CannedResult, ...]:
    """Canned results as ``CannedResult`` objects (mappings converted)."""
    if type(value) is tuple and not value:  # a plain prompt's: the same empty tuple, without a generator
        return ()
    return tuple(CannedResult.coerce(item) for item in value or ())


def transcript_data(transcript: Iterable[Message], text: Callable[[str], str | None] | None = None) -> list[dict[str, Any]]:
    """A transcript as JSON-ready data, one mapping per turn (``role``, and the keys that have a
    value: ``content``, ``tool_calls`` as ``{"id", "name", "arguments"}``, ``tool_call_id``,
    ``name``). ``text`` maps each content and each call's arguments (as JSON text) to what is kept
    of it — ``None``: nothing, the key left out — as a privacy level does; without it, all is kept."""
    turns = []
    for message in transcript:
        turn: dict[str, Any] = {"role": message.role}
        if message.content is not None:
            kept = message.content if text is None else text(message.content)
            if kept is not None:
                turn["content"] = kept
        if message.tool_calls:
            calls = []
            for call in message.tool_calls:
                shown: dict[str, Any] = {"id": call.id, "name": call.name}
                if text is None:
                    shown["arguments"] = call.arguments
                elif call.arguments is not None and (kept := text(call.arguments_text())) is not None:
                    shown["arguments"] = kept
                calls.append(shown)
            turn["tool_calls"] = calls
        if message.tool_call_id is not None:
            turn["tool_call_id"] = message.tool_call_id
        if message.name is not None:
            turn["name"] = message.name
        turns.append(turn)
    return turns


#: How much of each turn's text :func:`transcript_lines` keeps (``evalkit show``, the HTML report).
SHOWN_TURN_CHARS = 2_000


def transcript_lines(transcript: Iterable[Message]) -> list[tuple[str, str]]:
    """A conversation's turns for people, as ``(who, what)`` pairs, one a turn and one more per tool
    call: ``user``, ``assistant``, ``assistant → TOOL`` with the call's arguments, ``tool TOOL`` with
    its result; a text the privacy level did not keep is ``(not kept)``. Each text is cut to
    :data:`SHOWN_TURN_CHARS` characters. Nothing is escaped: the output boundary does that."""

    def cut(text: str | None) -> str:
        if text is None:
            return "(not kept)"
        return text if len(text) <= SHOWN_TURN_CHARS else text[:SHOWN_TURN_CHARS] + f" … ({len(text) - SHOWN_TURN_CHARS:,} more)"

    shown: list[tuple[str, str]] = []
    for turn in transcript_data(transcript):
        role = turn["role"]
        if role == "tool":
            shown.append((f"tool {turn.get('name') or turn.get('tool_call_id') or ''}".rstrip(), cut(turn.get("content"))))
            continue
        if "content" in turn or not turn.get("tool_calls"):
            shown.append((role, cut(turn.get("content"))))
        for call in turn.get("tool_calls", ()):
            arguments = call.get("arguments")
            if arguments is not None and not isinstance(arguments, str):
                arguments = compact_text(arguments)
            shown.append((f"{role} → {call['name']}", cut(arguments)))
    return shown


def _segments(transcript: Iterable[Message]) -> list[list[Message]]:
    """The transcript cut before each user turn: one segment per user turn answered (a transcript
    that starts with the model's turns, as a fixed conversation's does, is one segment)."""
    segments: list[list[Message]] = []
    for message in transcript:
        if message.role == "user" or not segments:
            segments.append([])
        segments[-1].append(message)
    return segments


def replies(transcript: Iterable[Message]) -> list[tuple[str | None, tuple[Message, ...]]]:
    """The model's reply to each user turn of a transcript, in order, with the turns that answered
    it: the text of the last assistant turn of its segment when that turn made no tool call, else
    ``None`` (the model never answered: it ran out of steps)."""
    out = []
    for segment in _segments(transcript):
        last = next((m for m in reversed(segment) if m.role == "assistant"), None)
        text = last.content if last is not None and not last.tool_calls else None
        out.append((text, tuple(segment)))
    return out


def tool_calls_of(transcript: Iterable[Message]) -> tuple[ToolCall, ...]:
    """Every tool call of the transcript's assistant turns, in order."""
    return tuple(call for message in transcript if message.role == "assistant" for call in message.tool_calls)
