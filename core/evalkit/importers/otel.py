"""OpenTelemetry GenAI spans as golden cases: what a model was sent and what it answered.

Supported: the GenAI semantic conventions from v1.37 (where the content attributes took their
present form) through v1.44, now kept in OpenTelemetry's semantic-conventions-genai repository:

* ``gen_ai.input.messages`` — the chat history sent: ``[{"role", "parts": [...]}]``, as a JSON
  string or a structured attribute value; parts of type ``text``, ``tool_call`` (``id``, ``name``,
  ``arguments``) and ``tool_call_response`` (``id``, ``response``) are kept, ``reasoning`` parts
  are left out, and a span with any other part (``blob``, ``uri``, ``file``: images, audio,
  documents) is not imported;
* ``gen_ai.output.messages`` — what the model answered (its first choice): text parts are the
  observed answer, ``tool_call`` parts its tool calls;
* ``gen_ai.system_instructions`` — the system prompt, sent apart from the history;
* ``gen_ai.response.model`` (else ``gen_ai.request.model``) — the model that answered;
  ``gen_ai.provider.name`` (else the deprecated ``gen_ai.system``) — who served it, a tag;
* ``gen_ai.operation.name`` — ``chat``, ``text_completion`` and ``generate_content`` spans are
  model calls and imported; ``execute_tool``, ``invoke_agent``, ``embeddings``, … are not.

The content the older conventions put in span events, or instrumentations put in attributes of
their own (``gen_ai.prompt.0.content``, ``llm.input_messages``), is not read: such a span counts
as one without ``gen_ai.input.messages``.

Every text kept is scrubbed (:func:`evalkit.privacy.scrub`): secret shapes and e-mail addresses,
and the values of the span's and its resource's attributes that hold credentials (an
``Authorization`` header, an ``api_key``), wherever the application echoed them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..jsonparse import parse_json
from ..printable import visible
from ..privacy import is_scrubbable, scrub
from ..validation import has_visible_text
from .otlp import Span, valid_text

__all__ = ["MODEL_OPERATIONS", "SEMCONV_VERSIONS", "ImportedCase", "Turn", "TraceImport", "cases_from_spans"]

#: The GenAI semantic-convention versions whose attributes are read (shown in docs and ``--help``).
SEMCONV_VERSIONS = "v1.37-v1.44"
#: ``gen_ai.operation.name`` values of a model call (a span without one is taken for one).
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
#: How deep a tool call's arguments may nest and still be written as YAML; deeper ones are kept as
#: their JSON text (a set file nests at most 64 levels, and the arguments start at level 7).
MAX_ARGUMENTS_DEPTH = 32
#: Attribute names whose values are credentials, scrubbed wherever they appear in the content.
_SECRET_KEY = re.compile(r"(?i)authorization|api[._-]?key|secret|token|password|passwd|credential|cookie")
_ROLES = ("system", "user", "assistant", "tool")


@attrs.frozen
class Turn:
    """One turn of a conversation, in the set file's ``messages`` shape."""

    role: str
    content: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The turn as a set file writes it (absent fields left out)."""
        written: dict[str, Any] = {"role": self.role}
        if self.content is not None:
            written["content"] = self.content
        if self.tool_calls:
            written["tool_calls"] = [dict(call) for call in self.tool_calls]
        if self.tool_call_id is not None:
            written["tool_call_id"] = self.tool_call_id
        return written


@attrs.frozen
class ImportedCase:
    """A model call recorded by a span, as a case: the turns sent, the answer observed."""

    id: str
    trace_id: str
    turns: tuple[Turn, ...]
    answer: str
    answer_tool_calls: tuple[dict[str, Any], ...] = ()
    model: str | None = None
    #: ``gen_ai.provider.name`` (else the deprecated ``gen_ai.system``): ``openai``, ``aws.bedrock``, …
    provider: str | None = None

    @property
    def single_prompt(self) -> bool:
        """True when the turns are system turns and one user turn: a plain golden prompt."""
        others = [turn for turn in self.turns if turn.role != "system"]
        return len(others) == 1 and others[0].role == "user"

    @property
    def uses_tools(self) -> bool:
        """True when a turn calls a tool or answers a tool call."""
        return any(turn.tool_calls or turn.role == "tool" for turn in self.turns)

    @property
    def kept_skipped(self) -> bool:
        """True when the set file keeps the case but marks it ``skip``: a conversation with tool
        calls, whose trace does not name the tools offered."""
        return not self.single_prompt and self.uses_tools


@attrs.frozen
class TraceImport:
    """The cases found among the spans, and why each other span was not imported."""

    spans: int
    cases: tuple[ImportedCase, ...]
    #: ``{why a span was not imported: how many}``, in the order first met.
    not_imported: Mapping[str, int]


#: Why a span is not imported, as the import reports it.
OTHER_OPERATION = "spans of other operations (not a model call)"
NO_INPUT = "spans without gen_ai.input.messages"
NO_OUTPUT = "spans without gen_ai.output.messages"
#: A messages attribute that is there but holds text that is not JSON (cut short by an attribute
#: length limit, written by hand): counted apart from a missing one, the first such span named.
BROKEN_INPUT = "spans whose gen_ai.input.messages is not valid JSON"
BROKEN_OUTPUT = "spans whose gen_ai.output.messages is not valid JSON"
UNREADABLE = "spans whose messages are not the conventions' shape"
MEDIA = "spans holding images, audio or files, which a golden prompt cannot carry"
TOOL_CALLS_ONLY = "spans answered with tool calls only (the final answer is another span's)"
NO_ANSWER = "spans whose answer holds no text"
NO_USER_TURN = "spans whose messages hold no user turn"
EMPTY_PROMPT = "spans whose one user turn holds no visible text"
ENDS_ON_ANSWER = "spans whose messages end on an assistant or system turn"
REPEATED = "spans met twice (same trace and span id)"


def cases_from_spans(spans: Iterable[Span]) -> TraceImport:
    """Every model call among ``spans`` as an :class:`ImportedCase`, in start order; every other
    span counted by the reason it was left out (a reason with a first span to look at, a
    messages attribute that is not JSON, names it: ``… (first: <span id>: <what is wrong>)``)."""
    skipped: Counter[str] = Counter()
    firsts: dict[str, str] = {}
    cases: list[ImportedCase] = []
    seen: set[tuple[str, str]] = set()
    ids: set[str] = set()
    ordered = sorted(enumerate(spans), key=lambda pair: (pair[1].start, pair[0]))
    for position, span in ordered:
        key = (span.trace_id, span.span_id)
        if span.span_id and key in seen:
            skipped[REPEATED] += 1
            continue
        seen.add(key)
        found = _case(span, position)
        if isinstance(found, tuple):
            why, first = found
            skipped[why] += 1
            firsts.setdefault(why, first)
            continue
        if isinstance(found, str):
            skipped[found] += 1
            continue
        case_id = found.id
        suffix = 2
        while case_id in ids:
            case_id, suffix = f"{found.id}-{suffix}", suffix + 1
        ids.add(case_id)
        cases.append(attrs.evolve(found, id=case_id))
    not_imported = {(f"{why} (first: {firsts[why]})" if why in firsts else why): count for why, count in skipped.items()}
    return TraceImport(len(ordered), tuple(cases), not_imported)


def _case(span: Span, position: int) -> ImportedCase | str | tuple[str, str]:
    """The case ``span`` records, or why it records none (with what to show of the span when
    its messages are not JSON)."""
    attributes = span.attributes
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation not in MODEL_OPERATIONS:
        return OTHER_OPERATION
    messages: list[list[Any]] = []
    for key, missing, broken in (
        ("gen_ai.input.messages", NO_INPUT, BROKEN_INPUT),
        ("gen_ai.output.messages", NO_OUTPUT, BROKEN_OUTPUT),
    ):
        read = _structured(attributes.get(key))
        if read is None:
            return missing
        if isinstance(read, json.JSONDecodeError):
            return broken, f"{span.span_id or f'span-{position + 1}'}: {_json_error(read)}"
        if not isinstance(read, list):
            return UNREADABLE  # there, but not a list of messages
        messages.append(read)
    sent, answered = messages
    secrets = _credentials(span)
    turns = _turns(sent, secrets)
    system = _system_turns(attributes.get("gen_ai.system_instructions"), secrets)
    answer = _answer(answered, secrets)
    for found in (turns, system, answer):
        if isinstance(found, str):
            return found
    assert not isinstance(turns, str) and not isinstance(system, str) and not isinstance(answer, str)
    text, calls = answer
    if not text.strip():
        return TOOL_CALLS_ONLY if calls else NO_ANSWER
    turns = system + turns
    if not any(turn.role == "user" for turn in turns):
        return NO_USER_TURN
    if turns[-1].role in ("assistant", "system"):
        return ENDS_ON_ANSWER
    others = [turn for turn in turns if turn.role != "system"]
    if len(others) == 1 and not has_visible_text(others[0].content or ""):
        return EMPTY_PROMPT  # a golden prompt must say something (evalkit validate refuses it)
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    provider = attributes.get("gen_ai.provider.name") or attributes.get("gen_ai.system")
    return ImportedCase(
        id=span.span_id or f"span-{position + 1}",
        trace_id=span.trace_id,
        turns=tuple(turns),
        answer=text,
        answer_tool_calls=calls,
        model=scrub(model, secrets) if isinstance(model, str) else None,
        provider=scrub(provider, secrets) if isinstance(provider, str) else None,
    )


def _structured(value: Any) -> Any:
    """A messages attribute as data: a JSON string parsed (evalkit's reader: nesting bounded), or
    a structured value as it is; ``None`` when absent, the :class:`json.JSONDecodeError` when
    its text is not JSON."""
    if isinstance(value, str):
        try:
            return parse_json(value)
        except json.JSONDecodeError as exc:
            return exc
    return value


def _json_error(error: json.JSONDecodeError) -> str:
    """What is wrong with an attribute's JSON text, and where: ``Expecting value at line 1, column 3``
    (the message printable: it is shown, and a reader's message may quote the text)."""
    message = error.msg.removesuffix(" at")  # "Unterminated string starting at": where follows
    return visible(f"{message} at line {error.lineno}, column {error.colno}")


def _credentials(span: Span) -> tuple[str, ...]:
    """The values of the span's and its resource's attributes that hold credentials (and the
    token of an ``Authorization: Bearer …`` header), to scrub from the content."""
    found: list[str] = []
    for attributes in (span.attributes, span.resource):
        for key, value in attributes.items():
            if not _SECRET_KEY.search(key):
                continue
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str):
                    found.append(text.strip())
                    found += text.split()[1:]  # "Bearer abc…", "Basic dXNl…"
    return tuple(text for text in found if is_scrubbable(text))


def _clean(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` scrubbed, with lone surrogates (undecodable bytes escaped in JSON) replaced."""
    return scrub(valid_text(text), secrets)


def _clean_value(value: Any, secrets: tuple[str, ...], depth: int = 0) -> Any:
    """Every text in a JSON value scrubbed (keys too)."""
    if isinstance(value, str):
        return _clean(value, secrets)
    if isinstance(value, list):
        return [_clean_value(item, secrets, depth + 1) for item in value]
    if isinstance(value, dict):
        return {_clean(str(key), secrets): _clean_value(item, secrets, depth + 1) for key, item in value.items()}
    return value


def _depth(value: Any) -> int:
    """How deep lists and mappings nest in ``value`` (0 for a scalar), counted without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def _arguments(value: Any, secrets: tuple[str, ...]) -> Any:
    """A tool call's arguments: a JSON object written as text parsed, nested ones kept as text."""
    if isinstance(value, str):
        try:
            parsed = parse_json(value)
        except json.JSONDecodeError:
            return _clean(value, secrets)
        value = parsed if isinstance(parsed, dict) else value
    if _depth(value) > MAX_ARGUMENTS_DEPTH:
        return _clean(json.dumps(value, ensure_ascii=False), secrets)
    return _clean_value(value, secrets)


def _tool_call(part: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any] | None:
    name = part.get("name")
    if not isinstance(name, str) or not name:
        return None
    call: dict[str, Any] = {}
    if isinstance(part.get("id"), str) and part["id"]:
        call["id"] = _clean(part["id"], secrets)
    call["name"] = _clean(name, secrets)
    if "arguments" in part:
        call["arguments"] = _arguments(part["arguments"], secrets)
    return call


def _response_text(value: Any, secrets: tuple[str, ...]) -> str:
    if isinstance(value, str):
        return _clean(value, secrets)
    return _clean(json.dumps(value, ensure_ascii=False) if _depth(value) <= MAX_ARGUMENTS_DEPTH else "", secrets)


def _turns(messages: list[Any], secrets: tuple[str, ...]) -> list[Turn] | str:
    """The input messages as turns (a tool message's responses a turn each), or why they cannot be."""
    turns: list[Turn] = []
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        parts = message.get("parts") if isinstance(message, dict) else None
        if role not in _ROLES or not isinstance(parts, list):
            return UNREADABLE
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        responses: list[Turn] = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("content"), str):
                texts.append(_clean(part["content"], secrets))
            elif kind == "tool_call" and (call := _tool_call(part, secrets)) is not None:
                calls.append(call)
            elif kind == "tool_call_response" and isinstance(part.get("id"), str):
                responses.append(Turn("tool", _response_text(part.get("response"), secrets), tool_call_id=_clean(part["id"], secrets)))
            elif kind == "reasoning":
                continue
            elif kind in ("text", "tool_call", "tool_call_response") or not isinstance(kind, str):
                return UNREADABLE
            else:
                return MEDIA
        if responses:
            turns += responses
        elif role == "tool":
            return UNREADABLE
        if texts or calls or role in ("system", "user"):
            turns.append(Turn(role, "\n".join(texts) if texts or role != "assistant" else None, tuple(calls)))
    return turns


def _system_turns(value: Any, secrets: tuple[str, ...]) -> list[Turn] | str:
    """``gen_ai.system_instructions`` (a list of parts, or plain text) as one system turn."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = parse_json(value)
        except json.JSONDecodeError:
            return [Turn("system", _clean(value, secrets))]
    if isinstance(value, str):
        return [Turn("system", _clean(value, secrets))]
    if not isinstance(value, list):
        return UNREADABLE
    texts = []
    for part in value:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("content"), str):
            texts.append(_clean(part["content"], secrets))
        elif not (isinstance(part, dict) and part.get("type") == "reasoning"):
            return MEDIA if isinstance(part, dict) and isinstance(part.get("type"), str) else UNREADABLE
    return [Turn("system", "\n".join(texts))] if texts else []


def _answer(messages: list[Any], secrets: tuple[str, ...]) -> tuple[str, tuple[dict[str, Any], ...]] | str:
    """The first output message's text and tool calls."""
    if not messages:
        return "", ()
    first = messages[0]
    parts = first.get("parts") if isinstance(first, dict) else None
    if not isinstance(parts, list):
        return UNREADABLE
    texts = []
    calls = []
    for part in parts:
        if not isinstance(part, dict):
            return UNREADABLE
        if part.get("type") == "text" and isinstance(part.get("content"), str):
            texts.append(_clean(part["content"], secrets))
        elif part.get("type") == "tool_call" and (call := _tool_call(part, secrets)) is not None:
            calls.append(call)
    return "\n".join(texts), tuple(calls)
