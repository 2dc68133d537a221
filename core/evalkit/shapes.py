"""Values a plugin hands over, checked before anything walks them, and shown short in messages.

A set's assertion value or a grader's ``detail`` is fingerprinted, stored as JSON and printed;
each of those walks it recursively. A list that contains itself, nesting deeper than the stack,
or a few objects referenced so often that walking them never ends would fail the run far from
the plugin that made them. :func:`value_shape_problem` says so up front, without recursion.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sized
from itertools import islice
from typing import Any

from .errors import PLUGIN_FAILURES, SetTooLarge

__all__ = [
    "MAX_MESSAGE_LINE",
    "MAX_NAME_CHARS",
    "MAX_PROBLEM_CHARS",
    "MAX_REASON_CHARS",
    "MAX_VALUE_CONTAINERS",
    "MAX_VALUE_NESTING",
    "bounded_problem",
    "bounded_reason",
    "bounded_text",
    "clipped",
    "clipped_lines",
    "exception_message",
    "exception_name",
    "exception_text",
    "finite_number",
    "short_repr",
    "too_long",
    "value_shape_problem",
    "whole_number",
]

#: How deep a value may nest lists and mappings (as set files: docs/sets.md).
MAX_VALUE_NESTING = 64
#: How many lists and mappings a value may hold, each counted as often as it is referenced: a
#: list holding nine references to a list of nine ... is 43 million at 8 levels.
MAX_VALUE_CONTAINERS = 100_000


def value_shape_problem(value: object) -> str | None:
    """What makes ``value`` impossible to fingerprint, store or print, if anything: a list or
    mapping that contains itself, nesting deeper than :data:`MAX_VALUE_NESTING`, more than
    :data:`MAX_VALUE_CONTAINERS` lists and mappings counted as often as they are referenced, or a
    mapping key that is not text (JSON's keys are; ``{1: …, "a": …}`` cannot even be sorted)."""
    if not isinstance(value, (dict, list, tuple)):
        return None
    stack: list[tuple[Any, int, tuple[int, ...]]] = [(value, 0, ())]
    visited = 0
    while stack:
        current, depth, holders = stack.pop()
        visited += 1
        if visited > MAX_VALUE_CONTAINERS:
            return f"holds more than {MAX_VALUE_CONTAINERS:,} lists and mappings, counting each as often as it is referenced"
        if id(current) in holders:
            return "contains itself, so it would never end"
        if depth > MAX_VALUE_NESTING:
            return f"is nested more than {MAX_VALUE_NESTING} lists and mappings deep"
        if isinstance(current, dict):
            for key in current:
                if not isinstance(key, str):
                    return f"has a key that is not text ({type(key).__name__} {short_repr(key, 40)}); the keys of JSON objects are text"
        children = current.values() if isinstance(current, dict) else current
        inside = (*holders, id(current))
        stack.extend((child, depth + 1, inside) for child in children if isinstance(child, (dict, list, tuple)))
    return None


def finite_number(value: object) -> bool:
    """True for an ``int`` or ``float`` (or a subclass, as numpy's) that is finite and not a
    ``bool``; an ``int`` past what a float holds (``10**400``) is not one."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def read_up_to(items: Iterable[Any], limit: int) -> tuple[Any, ...]:
    """``items`` as a tuple: a list or tuple whole, any other iterable up to ``limit + 1`` items and
    never asked for more, so that a generator that never ends stops one item past the limit (the
    caller tells a longer one by its length)."""
    return tuple(items) if isinstance(items, Sized) else tuple(islice(items, limit + 1))


def set_limit_passed(subject: str, limit: int, noun: str) -> str:
    """The problem of a set past its limit: ``"{subject} more than 1,000,000 prompts, the most
    evalkit takes in one set"``."""
    return f"{subject} more than {limit:,} {noun}, the most evalkit takes in one set"


def members_up_to(items: Iterable[Any], limit: int, noun: str, hint: str = "") -> tuple[Any, ...]:
    """A set's members handed over as an iterator (a provider's generator), as a tuple: read up to
    ``limit`` and refused one past it with :class:`~evalkit.errors.SetTooLarge` (``hint`` follows
    the problem), so a generator that never ends is never followed for ever."""
    taken = read_up_to(items, limit)
    if len(taken) > limit:
        raise SetTooLarge(set_limit_passed(f"the {noun} given (an iterator) hold", limit, noun) + hint)
    return taken


#: The longest set identifier, set name or member id, in characters: they are names people read
#: in tables and reports, and keys the store indexes, not payloads.
MAX_NAME_CHARS = 1_000

#: How much of a set's identifier a message's label shows (``set "…"``): every problem of a set
#: starts with it, so an identifier of millions of characters repeated in a thousand problems
#: made gigabytes of text; past its own bound it is a problem itself, named once.
SHOWN_IDENTIFIER_CHARS = 200


def set_label(identifier: object, kind: str = "set") -> str:
    """``set "package.set"``: how a message names a set, the identifier cut by :func:`clipped` to
    :data:`SHOWN_IDENTIFIER_CHARS` (a stray value by its short repr)."""
    shown = identifier if isinstance(identifier, str) else short_repr(identifier)
    return f'{kind} "{clipped(shown, SHOWN_IDENTIFIER_CHARS)}"'


def too_long(text: str, limit: int) -> str | None:
    """``"is 1,001 characters long, more than the 1,000 allowed"`` when ``text`` is over ``limit``."""
    return f"is {len(text):,} characters long, more than the {limit:,} allowed" if len(text) > limit else None


def clipped(text: str, limit: int = 200) -> str:
    """``text`` as a message shows it: whole up to ``limit`` characters, else its first ``limit``
    and how long it is (``"xxx… (100,000 characters)"``), so a hostile value never floods a terminal."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


#: The longest text a reason keeps (why a case errored, why a check failed, a grader's or a
#: generator's exception message): past it the text keeps its start and its length (:func:`clipped`).
#: A reason explains a verdict; a plugin's 50-million-character message stored whole took a
#: minute and most of a gigabyte per case.
MAX_REASON_CHARS = 10_000

def bounded_reason(value: object) -> object:
    """``value`` as a reason keeps it: text cut to :data:`MAX_REASON_CHARS` by :func:`clipped`,
    anything else as it is (the rules that refuse a reason that is not text see it unchanged). The
    converter of every reason field: ``CaseResult.error``, ``Check.error`` and ``Check.detail``,
    ``Grading.error`` — a reason is bounded however it was made, by a plugin or read from a store.
    A text already cut keeps its mark (``… (50,000,000 characters)``) when it is made again: a
    text is cut only when it is longer than the limit and room for that mark."""
    return bounded_text(value) if isinstance(value, str) else value


def bounded_text(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` cut to ``limit`` characters by :func:`clipped`, unless it is within ``limit`` and
    room for the mark (so a text already cut to ``limit`` is left as it is)."""
    return clipped(text, limit) if len(text) > limit + _CUT_MARK_ROOM else text


#: Room for :func:`clipped`'s mark after a text it cut (a count of up to 40 digits).
_CUT_MARK_ROOM = 64

#: The longest problem or failure a plugin's text ends up in (a set's problem, a provider or plugin
#: that failed to load, a refusal): the reason it quotes (cut at :data:`MAX_REASON_CHARS` where it
#: was made: :func:`exception_text`) plus room for where it happened (the set's identifier, up to
#: 1,000 characters, the prompt, the field), so a reason cut once is not cut again and keeps its mark.
MAX_PROBLEM_CHARS = MAX_REASON_CHARS + 2_000


def bounded_problem(value: object) -> object:
    """``value`` as a problem or failure keeps it: text cut to :data:`MAX_PROBLEM_CHARS`, anything
    else as it is. What every type holding such texts applies to each one
    (:class:`~evalkit.errors.SetValidationError`, :class:`~evalkit.errors.PluginError`,
    :class:`~evalkit.registry.PluginFailure`, ``evalkit validate``'s ``SetProblem``): a text a plugin
    handed over without raising (an assertion validator's issue, a provider's own
    ``SetValidationError``) is bounded there, however it was made."""
    return bounded_text(value, MAX_PROBLEM_CHARS) if isinstance(value, str) else value


#: The longest exception class name a message shows (a class can be made with any ``__name__``).
MAX_EXCEPTION_NAME_CHARS = 200


def exception_name(exc: BaseException) -> str:
    """The name of ``exc``'s class, cut to :data:`MAX_EXCEPTION_NAME_CHARS` by :func:`clipped`."""
    try:
        name = type(exc).__name__
    except PLUGIN_FAILURES:  # a metaclass's __name__ that raises
        name = "(unnamed exception)"
    return clipped(name if isinstance(name, str) else "(unnamed exception)", MAX_EXCEPTION_NAME_CHARS)


def exception_message(exc: BaseException) -> str:
    """``str(exc)`` as a message quotes a plugin's exception: cut to :data:`MAX_REASON_CHARS` by
    :func:`clipped`; an ``__str__`` that raises (or returns no text) is named instead of failing
    the message."""
    try:
        message = str(exc)
    except PLUGIN_FAILURES as failure:
        return f"(its message could not be read: str() raised {exception_name(failure)})"
    return bounded_text(message)


def exception_text(exc: BaseException) -> str:
    """``"RuntimeError: the message"``: the one text made of an exception a plugin raised (a set
    provider's listing, a stream's producer, an import, a validator, a generator), for a problem,
    a failure or a case's reason. The class name is cut by :func:`exception_name`, the message by
    :func:`exception_message` (its mark gives the message's own length); an ``__str__`` that
    raises is named."""
    return f"{exception_name(exc)}: {exception_message(exc)}"


#: The longest line of a message shown whole (:func:`clipped_lines`).
MAX_MESSAGE_LINE = 2_000


def clipped_lines(text: str, limit: int = MAX_MESSAGE_LINE) -> str:
    """``text`` with each line over ``limit`` characters cut in its middle (``"… 98,000 characters
    cut …"``): a message's start and its end, usually the reason, stay."""
    half = limit // 2
    return "\n".join(
        line if len(line) <= limit else f"{line[:half]} … {len(line) - 2 * half:,} characters cut … {line[-half:]}"
        for line in text.split("\n")
    )


def whole_number(text: str, *, max_digits: int = 4300, signed: bool = False) -> int | None:
    """``text`` as a whole number written in ASCII digits (with one ``+`` or ``-`` first when
    ``signed``), at most ``max_digits`` of them; ``None`` for anything else. The one reader of a
    count from text (an environment variable, a command-line word, a qrels grade):
    ``str.isdigit()`` also takes ``²``, which ``int()`` refuses (a crash), and ``٣``, which it reads
    as 3; ``int()`` alone also takes spaces, underscores and ``+-`` in ways no count is written."""
    digits = text[1:] if signed and text[:1] in ("+", "-") else text
    if not digits or len(digits) > max_digits or not (digits.isascii() and digits.isdigit()):
        return None
    return int(text)


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters with ``...``; a repr that raises (a plugin's
    ``__repr__``, an int past Python's digit limit) is named instead of failing the message."""
    try:
        shown = repr(value)
    except PLUGIN_FAILURES as exc:
        return f"(not shown: repr() raised {exception_name(exc)})"
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
