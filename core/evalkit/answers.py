"""What goes to the system under test and what comes back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .conversations import Message, Tool, ToolCall, messages_of, replies, tool_calls_of, tools_of
from .shapes import plain_text, short_repr, too_long

__all__ = [
    "Answer", "ChatRequest", "Citation", "GenerationRequest", "MAX_ANSWER_NAME_CHARS", "Passage", "ServingIdentity", "Turn",
    "USAGE_FIELDS", "Usage", "UsageSetAside", "answer_problems", "base_prompt_digest", "reported_usage", "sum_usage",
    "token_count_problem",
]

#: The longest model name or finish reason an answer may report: the reported model is part of
#: the run's serving identity, the key its comparisons are scoped by, and names no model this long.
MAX_ANSWER_NAME_CHARS = 1_000


@attrs.frozen
class GenerationRequest:
    """One prompt as sent to a generator; ``case_id`` is the golden prompt's id, for generators
    that look answers up (replay) rather than produce them.

    ``response_format`` asks for structured output in the OpenAI chat-completions shape
    (``{"type": "json_object"}`` or ``{"type": "json_schema", "json_schema": {...}}``); judge
    graders set it, and an adapter that cannot honour it may ignore it (the judge parses strictly).
    """

    prompt: str
    system_prompt: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    case_id: str | None = None
    response_format: Mapping[str, Any] | None = None


@attrs.frozen
class ChatRequest:
    """The turns of a conversation sent so far, as sent to a chat-capable generator
    (:class:`~evalkit.components.ChatGenerator`), which answers with one :class:`Turn`.

    ``messages`` starts with at most one system turn (the instance's base system prompt and the
    prompt's own, joined); ``tools`` are the functions the model may call; ``step`` counts the model
    turns this case asked for before this one (0 for the first), so a generator that looks answers
    up (replay) can find the right one; ``case_id`` is the golden prompt's id; ``tool_choice`` is
    the prompt's (``None``: the generator's default, ``"auto"``).
    """

    messages: tuple[Message, ...] = attrs.field(converter=messages_of)
    tools: tuple[Tool, ...] = attrs.field(default=(), converter=tools_of)
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    case_id: str | None = None
    step: int = 0
    tool_choice: str | None = None


def _calls(value: Iterable[ToolCall | Mapping[str, Any]] | None) -> tuple[ToolCall, ...]:
    return tuple(ToolCall.coerce(item) for item in value or ())


@attrs.frozen
class Turn:
    """One model turn: its text, the tools it calls (possibly both; a turn without tool calls is a
    reply) and what the endpoint reported beside them."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_calls)
    model: str | None = None
    usage: Usage | None = attrs.field(default=None, converter=lambda value: Usage.coerce(value))
    finish_reason: str | None = None

    def as_message(self) -> Message:
        """The assistant turn this turn adds to the conversation."""
        return Message.assistant(self.text, self.tool_calls)


@attrs.frozen
class Citation:
    """A source an answer cites, as reported by a RAG application: the source id, and the text it
    quotes from that source when the application reports it (``""`` as id: a quote only)."""

    source_id: str = ""
    passage: str | None = None


@attrs.frozen
class Passage:
    """A passage sent with the prompt (retrieved context), with the id of its source when known."""

    text: str
    source_id: str | None = None


@attrs.frozen
class Usage:
    """Token counts an endpoint reported for one request: prompt (``input_tokens``), completion
    (``output_tokens``), their ``total_tokens`` and, where the endpoint reports it, how many of
    the prompt tokens were served from its prompt cache (``cached_input_tokens``). ``None``: not
    reported (never 0)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = None

    @classmethod
    def coerce(cls, value: Usage | Mapping[str, Any] | None) -> Usage | None:
        """Accept a ``Usage``, an OpenAI-style mapping (``prompt_tokens``, ``completion_tokens``,
        ``total_tokens``, ``prompt_tokens_details.cached_tokens``) or ``None``."""
        if value is None or isinstance(value, Usage):
            return value
        if isinstance(value, Mapping):
            details = value.get("prompt_tokens_details", value.get("input_tokens_details"))
            cached = value.get("cached_input_tokens")
            if cached is None and isinstance(details, Mapping):
                cached = details.get("cached_tokens")
            return cls(
                input_tokens=value.get("input_tokens", value.get("prompt_tokens")),
                output_tokens=value.get("output_tokens", value.get("completion_tokens")),
                total_tokens=value.get("total_tokens"),
                cached_input_tokens=cached,
            )
        raise TypeError(f"usage must be a mapping or Usage, not {type(value).__name__}")

    def counts(self) -> tuple[int | None, int | None, int | None, int | None]:
        """The four counts in stored order: prompt, completion, total, cached prompt."""
        return (self.input_tokens, self.output_tokens, self.total_tokens, self.cached_input_tokens)


#: The token counts of a :class:`Usage`, in stored order.
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "cached_input_tokens")


#: The name of each :class:`Usage` count where evalkit shows it (a case's ``--json`` usage).
_SHOWN_NAMES = dict(zip(USAGE_FIELDS, ("prompt_tokens", "completion_tokens", "total_tokens", "cached_prompt_tokens"), strict=True))


def sum_usage(usages: Iterable[Usage | None], aside: UsageSetAside | None = None) -> Usage | None:
    """The token counts of several requests added up — a conversation's model turns, a prompt's
    repeated answers: ``None`` when one of them reported no usage (or had it set aside,
    :func:`reported_usage`), so a request whose tokens are unknown never counts as 0 and the
    sum's cost is unknown, as that request's is; else each count summed, ``None`` where one
    request did not report it. A sum is held to one reply's rule: a count summed to 2**63 or
    more (what the store cannot keep) makes the whole sum ``None``, its problem remembered in
    ``aside`` (:meth:`UsageSetAside.sum_notes`) when given."""
    known = list(usages)
    if not known or any(u is None for u in known):
        return None

    def total(field: str) -> int | None:
        counts = [getattr(u, field) for u in known]
        return None if any(c is None for c in counts) else sum(counts)

    summed = Usage(*map(total, USAGE_FIELDS))
    for field, count in zip(USAGE_FIELDS, summed.counts(), strict=True):
        if count is not None and not _countable(count):
            if aside is not None:
                aside.record(f"{_SHOWN_NAMES[field]} {_count_shown(count)} summed over {len(known)} requests, not a whole number from 0 below 2**63")
            return None
    return None if summed.counts() == (None, None, None, None) else summed


#: A token count the store can keep is below this (a signed 64-bit integer).
_COUNT_LIMIT = 2**63


def _countable(value: object) -> bool:
    """True for a whole number from 0 below 2**63 (never a bool, a float, a string)."""
    return type(value) is int and 0 <= value < _COUNT_LIMIT


#: The longest text a note shows of a count that is text; a longer one is described by its length.
_COUNT_TEXT_SHOWN = 16


def _count_shown(value: object) -> str:
    """A reported count that is not one, as a note shows it: a number as written (one of thousands
    of digits by its size), a short text as ``repr`` writes it, anything else by its kind — never
    the first characters of a long text or an object, which may echo a credential that the
    output's secret removal only finds whole."""
    if type(value) is int:  # str() of an int past 4,300 digits raises; its size says enough
        import math

        return f"of about {'-' if value < 0 else ''}1e{math.floor(math.log10(abs(value)))}" if abs(value) >= 10**40 else str(value)
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= _COUNT_TEXT_SHOWN else f"a text of {len(value):,} characters"
    if isinstance(value, Mapping):
        return "an object"
    return "a list" if isinstance(value, list) else f"a {type(value).__name__}"


def token_count_problem(name: str, value: object) -> str | None:
    """What is wrong with one token count an endpoint reported under ``name`` (``None``: nothing;
    a count not given is fine): ``"prompt_tokens -1, not a whole number from 0 below 2**63"``."""
    if value is None or _countable(value):
        return None
    return f"{name} {_count_shown(value)}, not a whole number from 0 below 2**63"


def reported_usage(usage: object, fields: Mapping[str, str]) -> tuple[Usage | None, str | None]:
    """The one rule for the token counts a generator's endpoint reports: ``usage`` is its report
    (a mapping, or ``None``: none) and ``fields`` maps the endpoint's name of each count — a dotted
    name reaches into a nested object (``prompt_tokens_details.cached_tokens``) — to the
    :class:`Usage` field it fills. The result is the :class:`Usage` (``None`` when no count is
    given) and ``None``, or, when ``usage`` is no mapping or one count in it is not a whole number
    from 0 below 2**63 (``10**400``, ``-1``, ``"5"``, ``12.0``, ``true``, :func:`token_count_problem`)
    or the counts are impossible together (more cached prompt tokens than prompt tokens), ``None``
    and what is wrong: one such count makes the whole usage unreported, so a reply never counts as
    reporting no usage while its other tokens are counted. An adapter keeps the problems in a
    :class:`UsageSetAside`, whose note the run shows."""
    if usage is None:
        return None, None
    if not isinstance(usage, Mapping):
        return None, f"usage {_count_shown(usage)}, not an object"
    counts: dict[str, int] = {}
    names: dict[str, str] = {}
    for name, field in fields.items():
        value: object = usage
        for step in name.split("."):
            value = value.get(step) if isinstance(value, Mapping) else None
        if (problem := token_count_problem(name, value)) is not None:
            return None, problem
        if value is not None:
            counts[field] = value  # type: ignore[assignment]
            names[field] = name
    both = (counts.get("cached_input_tokens"), counts.get("input_tokens"), names.get("cached_input_tokens"), names.get("input_tokens"))
    if (problem := _cached_past_prompt(*both)) is not None:
        return None, problem
    return (Usage(**counts) if counts else None), None


def _cached_past_prompt(cached: object, prompt: object, cached_name: object, prompt_name: object) -> str | None:
    """What is wrong when more prompt tokens were served from cache than the prompt had (counts
    impossible together, named as the reply named them), or ``None``: the one rule for an
    endpoint's reply (:func:`reported_usage`) and a plugin's own answer (:meth:`UsageSetAside.kept`)."""
    if _countable(cached) and _countable(prompt) and cached > prompt:  # type: ignore[operator]
        return f"{cached_name} {cached}, more than its {prompt_name} {prompt}"
    return None


class UsageSetAside:
    """The replies of one generator whose usage :func:`reported_usage` set aside, and what was
    wrong with the first: what the run's notes say of them (:meth:`notes`). Thread-safe: an
    adapter may answer from several worker threads."""

    def __init__(self) -> None:
        import threading

        self.count = 0
        self.first: str | None = None
        self._lock = threading.Lock()

    def record(self, problem: str) -> None:
        """Remember one usage set aside, and ``problem`` when it is the first."""
        with self._lock:
            self.count += 1
            if self.first is None:
                self.first = problem

    def usage(self, usage: object, fields: Mapping[str, str]) -> Usage | None:
        """:func:`reported_usage` of one reply, its problem (if any) remembered for the notes."""
        counts, problem = reported_usage(usage, fields)
        if problem is not None:
            self.record(problem)
        return counts

    def kept(self, usage: object) -> object:
        """``usage`` as a generator plugin's :class:`Answer` or :class:`Turn` reported it, held to
        :func:`reported_usage`'s rule of counts impossible together: more cached prompt tokens than
        prompt tokens is ``None`` (the reply's usage unreported, its problem remembered for
        :meth:`notes`), as an endpoint's reply is; anything else is returned as it is (a count out
        of range is :func:`answer_problems`' to refuse)."""
        if isinstance(usage, Usage):
            problem = _cached_past_prompt(usage.cached_input_tokens, usage.input_tokens, "cached_prompt_tokens", "prompt_tokens")
            if problem is not None:
                self.record(problem)
                return None
        return usage

    def notes(self, source: str) -> list[str]:
        """The run's note on the replies from ``source`` (``http://…``, ``the llm model "x"``) whose
        usage was set aside; none when there were none."""
        if self.first is None:
            return []
        from .wording import counted

        return [
            f"{counted(self.count, 'reply')} from {source} reported a usage evalkit cannot count "
            f"(the first: {self.first}): each such reply's usage is counted as unreported, "
            "its prompt and completion tokens alike, and its cost is unknown"
        ]

    def sum_notes(self) -> list[str]:
        """The run's note on the cases whose usage summed over their requests :func:`sum_usage`
        set aside (kept in this object by ``sum_usage``); none when there were none."""
        if self.first is None:
            return []
        from .wording import counted

        return [
            f"{counted(self.count, 'usage')} summed over a case's requests (a conversation's turns, a prompt's repeated "
            f"answers) {'is' if self.count == 1 else 'are'} past what evalkit can count (the first: {self.first}): "
            "the case's usage is counted as unreported, its prompt and completion tokens alike, and its cost is unknown"
        ]


def _citations(value: Iterable[Citation | str | Mapping[str, Any]] | None) -> tuple[Citation, ...]:
    out = []
    for item in value or ():
        if isinstance(item, Citation):
            out.append(item)
        elif isinstance(item, str):
            out.append(Citation(item))
        elif isinstance(item, Mapping) and isinstance(item.get("source_id", ""), str) and isinstance(item.get("passage"), (str, type(None))):
            out.append(Citation(item.get("source_id", ""), item.get("passage")))
        else:
            raise TypeError(
                'a citation must be a Citation, a source id or a mapping with "source_id" and/or "passage", '
                f"not {item!r}"
            )
    return tuple(out)


def _passages(value: Iterable[Passage | str | Mapping[str, Any]] | str | None) -> tuple[Passage, ...]:
    if value is None:
        return ()
    out = []
    for item in (value,) if isinstance(value, str) else value:
        if isinstance(item, Passage):
            out.append(item)
        elif isinstance(item, str):
            out.append(Passage(item))
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str) and isinstance(item.get("source_id"), (str, type(None))):
            out.append(Passage(item["text"], item.get("source_id")))
        else:
            raise TypeError(f'a passage must be a Passage, a string or a mapping with "text" and "source_id", not {item!r}')
    return tuple(out)


@attrs.frozen
class Answer:
    """A generator's answer to one prompt.

    ``model`` is the model the endpoint reported; ``abstained``, ``citations`` and ``passages``
    come from RAG applications that report them — checks that need them fail with a clear
    reason when they are missing rather than passing. ``passages`` are the passages sent with the
    prompt: plain strings, or :class:`Passage` objects (or ``{"text", "source_id"}`` mappings)
    that name their source, so citations can be resolved by id.

    A conversation's answer (see :mod:`evalkit.conversations`) is its final reply, and
    ``transcript`` holds every turn of the run after the prompt's fixed history: the model's turns
    (with their tool calls), the canned tools' results and, in a scripted conversation, the user
    turns sent; ``usage`` is then the sum of every model turn's. ``finish_reason`` is
    ``"max_steps"`` when the loop stopped at the prompt's ``max_steps`` without a reply.
    """

    text: str = attrs.field(converter=plain_text)
    model: str | None = attrs.field(default=None, converter=plain_text)
    usage: Usage | None = attrs.field(default=None, converter=Usage.coerce)
    abstained: bool | None = None
    citations: tuple[Citation, ...] = attrs.field(default=(), converter=_citations)
    passages: tuple[Passage, ...] = attrs.field(default=(), converter=_passages)
    finish_reason: str | None = attrs.field(default=None, converter=plain_text)
    transcript: tuple[Message, ...] = attrs.field(default=(), converter=messages_of)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call the model made, in order (empty for a plain answer)."""
        return tool_calls_of(self.transcript)

    @property
    def reply_count(self) -> int:
        """How many user turns the model was asked to answer (1 for a plain answer)."""
        return len(replies(self.transcript)) if self.transcript else 1

    def reply(self, number: int) -> Answer | None:
        """The model's ``number``-th reply (1-based) as an answer of its own — its text and the
        turns that led to it —, ``None`` when the model gave no such reply (the conversation
        stopped before, or ran out of steps there). A plain answer is its own reply 1."""
        if not self.transcript:
            return self if number == 1 else None
        found = replies(self.transcript)
        if not 1 <= number <= len(found):
            return None
        text, turns = found[number - 1]
        if text is None:
            return None
        return attrs.evolve(self, text=text, transcript=turns, usage=None)


def answer_problems(answer: Answer) -> list[str]:
    """What in ``answer`` the kernel cannot use, by the types :class:`Answer` declares; empty
    when nothing. The run holds every answer to them (one that breaks them is an errored case,
    never graded): ``text`` a ``str``; ``model`` and ``finish_reason`` text or ``None``;
    ``abstained`` exactly ``True``, ``False`` or ``None`` (``"no"`` would pass a refusal check);
    ``model`` and ``finish_reason`` at most :data:`MAX_ANSWER_NAME_CHARS` characters;
    token counts whole numbers from 0 (below 2**63, what the store can keep) or ``None``.
    """
    problems = []
    if not isinstance(answer.text, str):
        problems.append(f"text is {type(answer.text).__name__}, not str")
    if not isinstance(answer.abstained, (bool, type(None))):
        problems.append(f"abstained must be True, False or None, got {short_repr(answer.abstained)}")
    for field in ("model", "finish_reason"):
        value = getattr(answer, field)
        if not isinstance(value, (str, type(None))):
            problems.append(f"{field} must be text or None, got {short_repr(value)}")
        elif value is not None and (long := too_long(value, MAX_ANSWER_NAME_CHARS)):
            problems.append(f"{field} {long}")
    usage = answer.usage
    for field in USAGE_FIELDS if usage is not None else ():
        count = getattr(usage, field)
        if count is not None and not _countable(count):
            problems.append(f"usage {field} must be a whole number from 0 or None, got {short_repr(count)}")
    return problems


@attrs.frozen
class ServingIdentity:
    """The content-free proof of who answered: configured instance, alias sent, model reported.

    ``base_prompt`` is the digest of the base system prompt the instance put before every request
    (:func:`base_prompt_digest`; ``""``: none): a run's identity carries it, so changing the base
    prompt starts a new comparison scope. A case's identity leaves it empty: the run says it once.
    """

    provider_instance: str
    model_alias: str
    reported_model: str
    version: int = 1
    base_prompt: str = ""

    def as_mapping(self) -> dict[str, Any]:
        """The stored form (version first; the base prompt's digest when there is one)."""
        stored: dict[str, Any] = {
            "version": self.version,
            "provider_instance": self.provider_instance,
            "model_alias": self.model_alias,
            "reported_model": self.reported_model,
        }
        if self.base_prompt:
            stored["base_prompt"] = self.base_prompt
        return stored


def base_prompt_digest(text: str | None) -> str:
    """The digest of a base system prompt as a serving identity keeps it: ``sha256:`` and 16 hex
    digits of its UTF-8 text; ``""`` for none."""
    if not text:
        return ""
    import hashlib

    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
