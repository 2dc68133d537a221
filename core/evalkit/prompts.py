"""Golden prompt sets: the prompts a model must answer and the properties a good answer has."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from typing import Any

import attrs

from .answers import Answer
from .conversations import (
    CannedResult,
    ConversationMode,
    Message,
    Tool,
    canned_results_of,
    messages_of,
    tools_of,
)
from .errors import SetTooLarge, carried
from .shapes import members_up_to, plain_text, plain_texts, set_limit_passed, short_repr
from .timeouts import TimeLimitExceeded, alarm_bounded, alarms_reach_this_thread

__all__ = [
    "Assertion", "GoldenPrompt", "GoldenPromptSet", "PromptStream", "DEFAULT_CHECK_NAMES", "MAX_PROMPTS", "RUBRIC_KIND",
    "displayed_check_name", "handed_prompt", "prompt_limit_passed",
]

#: The most prompts one set may hold. Every prompt is at least one call to the system under test,
#: and every pass over a :class:`PromptStream` (the check, ``evalkit list``'s count, the run, the
#: viewer's texts) stops at the prompt past it: a producer that never ends, a plugin's bug, used to
#: keep ``evalkit list`` and ``evalkit validate`` busy for ever, the ids seen growing.
MAX_PROMPTS = 1_000_000


def handed_prompt(prompt: GoldenPrompt) -> GoldenPrompt:
    """A copy of ``prompt`` a plugin may do anything to: the one way a prompt is handed to a grader.
    An assertion's expected values (a JSON Schema, a list of phrases), a tool's parameters and a
    canned result are JSON data, mutable, and a grader that changed them in its copy (a shallow
    one, before) changed the case's stored fingerprint and what the next grading of the prompt (a
    repeat) saw, even a set's module-level constants: a prompt holding any such value is copied
    deep. One holding none (text, numbers, tuples and frozen values of them: most prompts) gets a
    shallow copy, its parts shared as they cannot change, at a fraction of a deep copy's cost. A
    value that cannot be deep-copied (an object a library caller put in a prompt, holding a lock)
    is handed as it is, in a shallow copy: the caller's own object."""
    import copy

    if _unchangeable(prompt):
        if type(prompt) is GoldenPrompt:
            return _golden_copy(prompt)
        return copy.copy(prompt)
    try:
        return copy.deepcopy(prompt)
    except Exception:  # noqa: BLE001 - any failure to copy a caller's object: handed as it is
        return copy.copy(prompt)


def _golden_copy(prompt: GoldenPrompt) -> GoldenPrompt:
    """``copy.copy(prompt)`` of exactly a :class:`GoldenPrompt` (a subclass may copy itself its own
    way), without the pickle protocol's round trip: ``copy.copy`` makes the new instance with
    ``object.__new__`` and attrs' ``__setstate__`` sets each field from a dict ``__getstate__``
    built, the same values set here directly (a third of the cost)."""
    copied = object.__new__(GoldenPrompt)
    for name in _frozen_field_names(GoldenPrompt) or ():
        object.__setattr__(copied, name, getattr(prompt, name))
    return copied


_PLAIN_TYPES = frozenset({str, int, float, bool, bytes, type(None)})


def _unchangeable(value: Any) -> bool:
    """Whether nothing inside ``value`` can be changed without ``object.__setattr__``: text,
    numbers, ``None``, an enum member, or a tuple or frozen attrs instance of only such values."""
    kind = type(value)
    try:
        if kind in _PLAIN_TYPES or isinstance(value, enum.Enum):
            return True
    except TypeError:  # a class whose metaclass sets __hash__ = None: a caller's object, copied deep
        return False
    if kind is tuple:
        for item in value:
            if not _unchangeable(item):
                return False
        return True
    names = _frozen_field_names(kind)
    if names is None:
        return False
    for name in names:
        if not _unchangeable(getattr(value, name)):
            return False
    return True


def _frozen_field_names(kind: type) -> tuple[str, ...] | None:
    """The field names of ``kind`` when it is a frozen attrs class, else ``None``; worked out once
    per class (every prompt handed to a grader is walked: asking attrs again for each of its
    values cost more than the walk)."""
    try:
        return _FROZEN_FIELD_NAMES[kind]
    except KeyError:
        names = _FROZEN_FIELD_NAMES[kind] = _field_names_if_frozen(kind)
        return names


#: :func:`_frozen_field_names`' answers, by class.
_FROZEN_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names_if_frozen(kind: type) -> tuple[str, ...] | None:
    if attrs.has(kind) and _is_frozen(kind):
        return tuple(field.name for field in attrs.fields(kind))
    return None


def _is_frozen(kind: type) -> bool:
    """Whether the attrs class ``kind`` is frozen: its ``__setattr__`` is the one attrs gives a
    frozen class (refusing every assignment)."""
    return getattr(kind.__setattr__, "__name__", None) == "_frozen_setattrs"


def prompt_limit_passed(subject: str) -> str:
    """The problem of a set past :data:`MAX_PROMPTS`: ``subject`` ("the set holds") and the limit."""
    return set_limit_passed(subject, MAX_PROMPTS, "prompts")


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        return (value,)
    return tuple(value)


def _nfc_tags(values: Any) -> Any:
    """A prompt's tags with each text in Unicode normal form NFC (anything else as it is, for the
    tag rule to judge): a set file saved on macOS writes ``café`` as ``e`` and a combining accent
    (NFD), which prints as the ``é`` of another file and never equals it — the set's fingerprint
    differed, so its runs read "the set changed". A tag only labels its prompt (nothing is keyed
    or typed back by it), so it is read as the text it prints as, not refused as an id is."""
    if not isinstance(values, tuple) or all(not isinstance(v, str) or v.isascii() for v in values):
        return values
    import unicodedata

    return tuple(unicodedata.normalize("NFC", v) if isinstance(v, str) else v for v in values)


#: The check name each assertion kind reports unless the assertion names its own.
DEFAULT_CHECK_NAMES: Mapping[str, str] = {
    "exact": "exact_match",
    "contains": "contains",
    "regex": "matches_pattern",
    "json_schema": "schema_valid",
    "contains_any": "stated_the_fact",
    "contains_none": "avoided_known_error",
    "max_words": "within_length",
    "refusal": "refused",
    "cites_any": "cited_expected_source",
    "citations_resolve": "citations_resolve",
    "tool_called": "tool_called",
    "tool_not_called": "tool_not_called",
    "tool_args": "tool_args",
    "tool_sequence": "tool_sequence",
    "max_tool_calls": "max_tool_calls",
    "rubric": "rubric",
}

#: The default check names that say more than their assertion did, back to the kind.
_KIND_OF_DEFAULT_NAME = {name: kind for kind, name in DEFAULT_CHECK_NAMES.items() if name != kind}


def displayed_check_name(name: str) -> str:
    """The name to show people for a stored check: an assertion the author did not name is shown
    by its kind (``contains_any``, not the invented ``stated_the_fact``); stored names stay as
    they are, and an author's own name is shown as it is."""
    return _KIND_OF_DEFAULT_NAME.get(name, name)


#: The assertion kind a judge decides: its value is a criterion in words, judged by the run's judge.
RUBRIC_KIND = "rubric"


@attrs.frozen
class Assertion:
    """One property a good answer has; grading turns it into one named check.

    Build assertions with the factories (``Assertion.contains("Paris")``); a plugin that adds
    an assertion kind through the ``evalkit_assertion_kinds`` hook is used as
    ``Assertion(kind="my_kind", value=...)``.

    ``turn`` applies the assertion to the model's ``turn``-th reply of a conversation (1-based;
    ``None``, the default: the final answer); its check is then named ``<name>@turn<N>`` unless
    the assertion names its own (``Assertion.contains("Paris").at_turn(2)``).
    """

    kind: str
    value: Any = None
    name: str | None = None
    turn: int | None = None

    @property
    def check_name(self) -> str:
        """The name of the check this assertion yields."""
        if self.name:
            return self.name
        default = DEFAULT_CHECK_NAMES.get(self.kind, self.kind)
        return default if self.turn is None else f"{default}@turn{self.turn}"

    def at_turn(self, turn: int) -> Assertion:
        """This assertion applied to the model's ``turn``-th reply (1-based)."""
        return attrs.evolve(self, turn=turn)

    @classmethod
    def exact(cls, value: str, *, name: str | None = None) -> Assertion:
        """The trimmed answer equals ``value`` (trimmed)."""
        return cls("exact", value, name)

    @classmethod
    def contains(cls, value: str, *, name: str | None = None) -> Assertion:
        """``value`` is a case-sensitive substring of the answer."""
        return cls("contains", value, name)

    @classmethod
    def regex(cls, pattern: str, *, name: str | None = None) -> Assertion:
        """The answer matches ``pattern`` somewhere.

        ``pattern`` is a PCRE-style delimited pattern with modifiers, as in the original
        (``'/9(:00)?\\s*(am|–|-)/i'``), when it starts with one of ``/ # ~ ! @ % | + , ; :`` and
        that character closes it; anything else (``[0-9]``, ``(a|b)c``) is a plain regex. Both are
        compiled by the ``regex`` module: Python's syntax, plus PCRE's ``\\p{L}``, ``(?>…)``, ``a++``.
        """
        return cls("regex", pattern, name)

    @classmethod
    def json_schema(cls, schema: str | Mapping[str, Any], *, name: str | None = None) -> Assertion:
        """The answer parses as JSON and validates against ``schema`` (a JSON string or a dict)."""
        return cls("json_schema", schema, name)

    @classmethod
    def contains_any(cls, values: Iterable[str], *, name: str | None = None) -> Assertion:
        """At least one of ``values`` occurs in the answer, ignoring case."""
        return cls("contains_any", _tuple(values), name)

    @classmethod
    def contains_none(cls, values: Iterable[str], *, name: str | None = None) -> Assertion:
        """None of ``values`` (known wrong answers) occurs in the answer, ignoring case."""
        return cls("contains_none", _tuple(values), name)

    @classmethod
    def max_words(cls, limit: int, *, name: str | None = None) -> Assertion:
        """The answer has at most ``limit`` whitespace-separated words."""
        return cls("max_words", limit, name)

    @classmethod
    def refusal(cls, *, name: str | None = None) -> Assertion:
        """The answer says it abstained (``Answer.abstained`` is true)."""
        return cls("refusal", None, name)

    @classmethod
    def cites_any(cls, source_ids: Iterable[str], *, name: str | None = None) -> Assertion:
        """One of the answer's citations names one of ``source_ids``."""
        return cls("cites_any", _tuple(source_ids), name)

    @classmethod
    def citations_resolve(cls, *, name: str | None = None) -> Assertion:
        """The answer cites at least one source, and every citation resolves to a passage sent
        with the prompt (``Answer.passages``): by source id, else by the text it quotes from a
        passage that names no source. A failure names the citations that do not resolve."""
        return cls("citations_resolve", None, name)

    @classmethod
    def rubric(cls, criterion: str, *, name: str | None = None) -> Assertion:
        """A judge model decides whether the answer meets ``criterion``, a sentence in plain words
        (``"The answer names the refund window and does not promise cash."``).

        Graded with the prompt's other assertions by the run's judge (``--judge NAME`` or the
        configuration's ``judge``): one check (default name ``rubric``) that passes or fails with
        the judge's one-line reason. A run of a set with rubric checks and no judge is refused.
        """
        return cls(RUBRIC_KIND, criterion, name)

    @property
    def judged(self) -> bool:
        """True for an assertion a judge decides (a rubric check)."""
        return self.kind == RUBRIC_KIND

    @classmethod
    def tool_called(cls, tool: str, *, name: str | None = None) -> Assertion:
        """The model called ``tool`` at least once."""
        return cls("tool_called", tool, name)

    @classmethod
    def tool_not_called(cls, tool: str, *, name: str | None = None) -> Assertion:
        """The model never called ``tool``."""
        return cls("tool_not_called", tool, name)

    @classmethod
    def tool_args(cls, tool: str, json_schema: Mapping[str, Any] | bool, *, name: str | None = None) -> Assertion:
        """The model called ``tool``, and the arguments of every call of it validate against ``json_schema``."""
        return cls("tool_args", {"name": tool, "schema": json_schema}, name)

    @classmethod
    def tool_sequence(cls, tools: Iterable[str], strict: bool = False, *, name: str | None = None) -> Assertion:
        """The model called ``tools`` in this order: as a subsequence of its calls (other calls
        between and around them allowed), or, ``strict``, exactly this sequence and nothing else."""
        return cls("tool_sequence", {"names": _tuple(tools), "strict": strict}, name)

    @classmethod
    def max_tool_calls(cls, limit: int, *, name: str | None = None) -> Assertion:
        """The model made at most ``limit`` tool calls in all."""
        return cls("max_tool_calls", limit, name)


def _mode(value: ConversationMode | str) -> ConversationMode | str:
    if type(value) is ConversationMode:  # what ConversationMode(value) returns for a member, without the enum's lookup
        return value
    try:
        return ConversationMode(value)
    except ValueError:
        return value  # validation names it


@attrs.frozen
class GoldenPrompt:
    """A prompt with the assertions its answer must satisfy and, optionally, an ideal answer.

    ``reference`` is the ideal answer's text, or a whole :class:`~evalkit.Answer` when the ideal
    answer also abstains or cites sources (RAG sets). ``tags`` are kept in Unicode normal form NFC
    (a decomposed ``e`` + U+0301 becomes ``é``), so tags that print alike are alike.

    A conversation holds ``messages`` (:class:`~evalkit.conversations.Message` turns, or mappings
    ``{"role", "content", ...}``) instead of ``prompt``: in ``mode`` ``"fixed"`` the model answers
    the last user turn of the history; in ``"scripted"`` each user turn is sent in order and the
    model's replies are fed back. ``tools`` (OpenAI function objects, or
    :class:`~evalkit.conversations.Tool`) are offered to the model, and each call it makes is
    answered from ``tool_results`` (:class:`~evalkit.conversations.CannedResult`); the loop stops
    at a reply, or after ``max_steps`` model turns for one user turn (default
    :data:`~evalkit.conversations.DEFAULT_MAX_STEPS`). ``tool_choice`` is sent with the tools as
    OpenAI's field: ``"auto"`` (the default: the model decides), ``"required"`` (it must call one),
    ``"none"`` (it must not), or the name of one of ``tools`` (it must call that one, on every step).
    """

    id: str = attrs.field(converter=plain_text)
    prompt: str = attrs.field(default="", converter=plain_text)
    assertions: tuple[Assertion, ...] = attrs.field(default=(), converter=_tuple)
    reference: str | Answer | None = attrs.field(default=None, converter=plain_text)
    system_prompt: str | None = attrs.field(default=None, converter=plain_text)
    tags: tuple[str, ...] = attrs.field(default=(), converter=attrs.converters.pipe(_tuple, plain_texts, _nfc_tags))
    messages: tuple[Message, ...] = attrs.field(default=(), converter=messages_of)
    mode: ConversationMode = attrs.field(default=ConversationMode.FIXED, converter=_mode)
    tools: tuple[Tool, ...] = attrs.field(default=(), converter=tools_of)
    tool_results: tuple[CannedResult, ...] = attrs.field(default=(), converter=canned_results_of)
    max_steps: int | None = None
    tool_choice: str | None = attrs.field(default=None, converter=plain_text)

    @property
    def reference_text(self) -> str | None:
        """The reference answer's text, whatever form it was declared in."""
        if self.reference is None or isinstance(self.reference, str):
            return self.reference
        return self.reference.text

    @property
    def is_chat(self) -> bool:
        """True when the prompt is sent as a conversation (it holds turns or tools), which only a
        chat-capable generator can answer."""
        return bool(self.messages or self.tools)

    @property
    def question(self) -> str:
        """The text the model answers last: ``prompt``, or the last user turn of ``messages``."""
        if self.prompt or not self.messages:
            return self.prompt
        return next((m.content or "" for m in reversed(self.messages) if m.role == "user"), "")

    @property
    def user_turns(self) -> int:
        """How many replies the model gives: the user turns of a scripted conversation, else 1."""
        if self.mode is ConversationMode.SCRIPTED:
            return sum(1 for m in self.messages if m.role == "user")
        return 1


@attrs.define(eq=False, repr=False)
class PromptStream:
    """A set's prompts produced on demand, never held all at once: how a large set ships.

    ``produce`` is called for every pass over the prompts (each ``iter()``) and must yield the same
    :class:`GoldenPrompt` objects, in the same order, every time: evalkit checks and fingerprints the
    set in one pass and answers it in another. ``count`` is how many prompts it yields; given, it
    spares a pass (``evalkit list`` shows it, the run's progress total starts from it) and the check
    before a run refuses a stream that yields another number. Without it, ``len()`` counts the
    prompts by iterating once; any complete pass also remembers the count.

    Pass one as ``GoldenPromptSet(prompts=PromptStream(...))``: the set keeps it as it is, where a
    list or tuple is copied into a tuple. A stream compares equal only to itself.

    A pass ends with :class:`~evalkit.errors.SetTooLarge` where the producer yields a prompt past
    :data:`MAX_PROMPTS`, and a declared ``count`` above it is a problem of the set.

    ``time_limit`` (seconds; set by evalkit from ``set_load_timeout`` for the streams its providers
    ship) bounds ``produce()`` and each prompt it yields, in the main thread: a producer that stalls
    (a database that stopped answering) is interrupted and the pass raises :class:`TimeoutError`
    (evalkit names the prompt it was waiting for), instead of hanging the check or the run.
    """

    produce: Callable[[], Iterable[GoldenPrompt]]
    count: int | None = None
    time_limit: float | None = attrs.field(default=None, init=False)
    _counted: int | None = attrs.field(default=None, init=False)

    def __iter__(self) -> Iterator[GoldenPrompt]:
        # The limit applies where a signal can interrupt the producer: the main thread.
        limit = self.time_limit if alarms_reach_this_thread() else None
        produced = _within(limit, lambda: iter(self.produce()))
        counted = 0
        while (prompt := _within(limit, next, produced, _NOTHING)) is not _NOTHING:
            if counted == MAX_PROMPTS:
                raise SetTooLarge(prompt_limit_passed("the PromptStream yields") + " (a producer that never ends?)")
            counted += 1
            yield prompt
        self._counted = counted  # only a complete pass counts

    def __len__(self) -> int:
        if self._counted is not None:
            return self._counted
        if (declared := self._declared()) is not None:
            return declared
        for _ in self:
            pass
        return self._counted or 0

    def __bool__(self) -> bool:
        if self._counted is not None or self._declared() is not None:
            return len(self) > 0
        return next(iter(self), _NOTHING) is not _NOTHING

    def _declared(self) -> int | None:
        """The declared ``count`` when it is one evalkit takes (see :meth:`count_problem`), else ``None``."""
        return self.count if self.count is not None and self.count_problem() is None else None

    def count_problem(self) -> str | None:
        """What is wrong with the declared ``count`` (``None``: nothing, or none declared): it must
        be a whole number from 0 to :data:`MAX_PROMPTS`. A plugin's ``"10"`` or ``-1`` ended the
        check in an internal error or read as a count; ``True`` read as 1."""
        count = self.count
        if count is None:
            return None
        if type(count) is not int or count < 0:
            return f"the PromptStream's count must be a whole number from 0 or None, got {short_repr(count)}"
        if count > MAX_PROMPTS:
            shown = f"{count:,}" if count < 10**30 else short_repr(count)  # int's str() gives up past 4,300 digits
            return prompt_limit_passed(f"the PromptStream declares {shown} prompts, which is")
        return None

    def __repr__(self) -> str:
        shown = f"{self.count} prompts" if self.count is not None else "prompts not counted"
        return f"PromptStream({getattr(self.produce, '__qualname__', repr(self.produce))}, {shown})"


_NOTHING = object()


class _ProducerStalled(TimeLimitExceeded):
    """A stream's own limit passed: its own class, so that an outer limit (a grading's) is never
    taken for it."""


def _within(limit: float | None, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``, interrupted after ``limit`` seconds (``None``: no limit); what the
    producer raises that no ``except Exception`` takes is carried (:func:`~evalkit.errors.carried`)."""
    if limit is None:
        return carried(function, *args)
    try:
        return alarm_bounded(carried, (function, *args), limit, _ProducerStalled)
    except _ProducerStalled:
        raise TimeoutError(f"no prompt within {limit:g} s (set_load_timeout); the producer was interrupted") from None


def _prompts(value: Iterable[Any] | None) -> tuple[Any, ...] | PromptStream:
    """A set's prompts as kept: a :class:`PromptStream` as it is, anything else as a tuple."""
    if isinstance(value, PromptStream):
        return value
    if value is None or isinstance(value, Sized):
        return _tuple(value)
    return members_up_to(value, MAX_PROMPTS, "prompts", "; stream them in a PromptStream")  # an iterator: never for ever


@attrs.frozen
class GoldenPromptSet:
    """A named, versioned collection of golden prompts shipped by a package.

    The identifier is namespaced (``package.set``) so sets of different packages never collide.
    Construction never raises for content problems; :func:`evalkit.validate_prompt_set` lists
    them all at once, naming the set, the prompt and the field.

    ``prompts`` is a tuple (a list or any iterable is copied into one), or a :class:`PromptStream`
    kept as it is, for a set too large to hold: evalkit only ever iterates over a set's prompts
    and asks ``len()``, never indexes them.
    """

    identifier: str = attrs.field(converter=plain_text)
    name: str = attrs.field(converter=plain_text)
    description: str = attrs.field(default="", converter=plain_text)
    prompts: tuple[GoldenPrompt, ...] | PromptStream = attrs.field(default=(), converter=_prompts)
    version: str | None = attrs.field(default=None, converter=plain_text)
