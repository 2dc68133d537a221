"""Values a plugin hands over, checked before anything walks them, and shown short in messages.

A set's assertion value or a grader's ``detail`` is fingerprinted, stored as JSON and printed;
each of those walks it recursively. A list that contains itself, nesting deeper than the stack,
or a few objects referenced so often that walking them never ends would fail the run far from
the plugin that made them; a NaN or an infinity in it (YAML's ``.nan``, TOML's ``inf``, a float a
plugin made) would be sent to a model and stored as text no JSON parser reads.
:func:`value_fault` says so up front, without recursion, and where.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sized
from itertools import islice
from typing import Any

import attrs

from .awaitables import AwaitableReturned
from .errors import PLUGIN_FAILURES, PluginRaised, SetTooLarge
from .printable import hidden_escaped
from .problem_texts import (
    MAX_PROBLEM_CHARS,
    MAX_PROBLEMS_KEPT,
    MAX_REASON_CHARS,
    ProblemsNotKept,
    bounded_problem,
    bounded_problems,
    bounded_reason,
    bounded_text,
    clipped,
    counted_problems,
    not_kept,
    problem_total,
    too_long,
)
from .wording import quoted

__all__ = [
    "MAX_MESSAGE_LINE",
    "MAX_NAME_CHARS",
    "MAX_PROBLEMS_KEPT",
    "MAX_PROBLEM_CHARS",
    "MAX_REASON_CHARS",
    "MAX_VALUE_CONTAINERS",
    "MAX_VALUE_NESTING",
    "MIN_SECONDS",
    "SHOWN_IDENTIFIER_CHARS",
    "ValueFault",
    "ProblemsNotKept",
    "ValuePath",
    "bounded_problem",
    "bounded_problems",
    "bounded_reason",
    "bounded_text",
    "clipped",
    "clipped_line",
    "clipped_lines",
    "counted_problems",
    "exception_message",
    "exception_name",
    "exception_text",
    "finite_number",
    "not_kept",
    "problem_total",
    "seconds_between",
    "set_label",
    "short_repr",
    "too_long",
    "value_fault",
    "value_path_text",
    "value_shape_problem",
    "whole_number",
]

#: How deep a value may nest lists and mappings (as set files: docs/sets.md).
MAX_VALUE_NESTING = 64
#: How many lists and mappings a value may hold, each counted as often as it is referenced: a
#: list holding nine references to a list of nine ... is 43 million at 8 levels.
MAX_VALUE_CONTAINERS = 100_000


def value_shape_problem(value: object) -> str | None:
    """What makes ``value`` impossible to fingerprint, store, send or print, if anything, as words
    following "its value" (:meth:`ValueFault.phrase` of :func:`value_fault`)."""
    fault = value_fault(value)
    return None if fault is None else fault.phrase()


#: A place inside a value: its keys and list indexes from the top (``("days", 0, "temp_c")``).
ValuePath = tuple["str | int", ...]


@attrs.frozen
class ValueFault:
    """What makes a free-form value unusable, and where in it (see :func:`value_fault`).

    ``number`` is ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` for a float no JSON text can carry,
    found at ``path`` (``()``: the value is that float); ``reason`` then says so as a sentence
    (``"NaN is not a number JSON can carry"``). Otherwise the fault is the value's as a whole
    (``path`` is ``()``) and ``reason`` follows "its value" (``"contains itself, so it would never end"``).
    """

    reason: str
    path: ValuePath = ()
    number: str | None = None

    def phrase(self) -> str:
        """The fault as words following "its value" or "detail": ``"contains itself, so it would
        never end"``, ``"holds NaN at days[0].temp_c, which is not a number JSON can carry"``."""
        if self.number is None:
            return self.reason
        where = f"holds {self.number} at {value_path_text(self.path)}" if self.path else f"is {self.number}"
        return f"{where}, which is not a number JSON can carry"

    def sentence(self) -> str:
        """The fault as a problem placed at :attr:`path` inside the value says it: ``"NaN is not a
        number JSON can carry"``, or ``"its value contains itself, so it would never end"``."""
        return self.reason if self.number is not None else f"its value {self.reason}"


def value_fault(value: object) -> ValueFault | None:
    """What makes ``value`` impossible to fingerprint, store, send or print, if anything, without
    recursion: a list or mapping that contains itself, nesting deeper than
    :data:`MAX_VALUE_NESTING`, more than :data:`MAX_VALUE_CONTAINERS` lists and mappings counted
    as often as they are referenced, a mapping key that is not text (JSON's keys are; ``{1: …,
    "a": …}`` cannot even be sorted), or a NaN or an infinity anywhere in it (YAML's ``.nan`` and
    TOML's ``inf`` read as floats; JSON has no such number, and Python's ``json`` writes ``NaN``,
    which no JSON parser reads). The one rule every free-form value of a set crosses: an
    assertion's value, a canned tool result, a tool call's arguments."""
    if isinstance(value, float):
        return _non_finite(value, ())
    if not isinstance(value, (dict, list, tuple)):
        return None
    # Depth first in reading order, one frame per container on the way down (never more than
    # MAX_VALUE_NESTING + 1 of them): each frame is an iterator over a container's items, the depth,
    # the ids of the containers holding it (to find one inside itself) and its path.
    frames: list[tuple[Iterator[tuple[Any, Any]], int, tuple[int, ...], ValuePath]] = []
    current: Any = value
    depth, holders, path = 0, (), ()
    visited = 0
    while True:
        visited += 1
        if visited > MAX_VALUE_CONTAINERS:
            return ValueFault(f"holds more than {MAX_VALUE_CONTAINERS:,} lists and mappings, counting each as often as it is referenced")
        if id(current) in holders:
            return ValueFault("contains itself, so it would never end")
        if depth > MAX_VALUE_NESTING:
            return ValueFault(f"is nested more than {MAX_VALUE_NESTING} lists and mappings deep")
        if isinstance(current, dict):
            for key in current:
                if not isinstance(key, str):
                    return ValueFault(f"has a key that is not text ({type(key).__name__} {short_repr(key, 40)}); the keys of JSON objects are text")
        items = iter(current.items()) if isinstance(current, dict) else enumerate(current)
        frames.append((items, depth, (*holders, id(current)), path))
        while frames:  # the next container to enter: the next one below, or after, this one
            items, above, inside, where = frames[-1]
            for place, child in items:
                if isinstance(child, (dict, list, tuple)):
                    current, depth, holders, path = child, above + 1, inside, (*where, place)
                    break
                if isinstance(child, float) and (fault := _non_finite(child, (*where, place))) is not None:
                    return fault
            else:
                frames.pop()
                continue
            break
        else:
            return None


def _non_finite(number: float, path: ValuePath) -> ValueFault | None:
    """The fault of ``number`` at ``path`` when it is a NaN or an infinity (JSON's names for them)."""
    if math.isfinite(number):
        return None
    name = "NaN" if math.isnan(number) else "Infinity" if number > 0 else "-Infinity"
    return ValueFault(f"{name} is not a number JSON can carry", path, name)


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def value_path_text(path: ValuePath) -> str:
    """``days[0].temp_c`` from ``("days", 0, "temp_c")``; a key that is not a plain name is shown
    in brackets by its short repr (``['a b']``), so a hostile key never floods a message."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif isinstance(part, str) and _PLAIN_KEY.fullmatch(part) and len(part) <= 60:
            text += f".{part}" if text else part
        else:
            text += f"[{short_repr(part, 40)}]"
    return text


def finite_number(value: object) -> bool:
    """True for an ``int`` or ``float`` (or a subclass, as numpy's) that is finite and not a
    ``bool``; an ``int`` past what a float holds (``10**400``) is not one."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


#: The shortest time limit or interval evalkit takes, in seconds (1 ms). Shorter is no honest
#: limit: ``answer_timeout = 1e-320`` errored every case ("no answer within 9.99989e-321 s"), and
#: ``--poll 1e-300`` asked the store without a pause for the whole ``--timeout``.
MIN_SECONDS = 0.001


def seconds_between(value: object, most: float) -> bool:
    """True for a finite number (not a ``bool``) of seconds from :data:`MIN_SECONDS` to ``most``:
    the one rule of every time limit and interval evalkit reads (configuration keys, deployment
    ``timeout``, ``EVALKIT_BUSY_TIMEOUT``, ``--timeout``/``--poll``/``--wait-ready``)."""
    return finite_number(value) and MIN_SECONDS <= value <= most  # type: ignore[operator]


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
    return f'{kind} {quoted(clipped(shown, SHOWN_IDENTIFIER_CHARS))}'


#: The longest exception class name a message shows (a class can be made with any ``__name__``).
MAX_EXCEPTION_NAME_CHARS = 200


def plain_text(value: Any) -> Any:
    """``value`` as a plain ``str`` when it is an instance of a ``str`` subclass; anything else as
    it is, for the checks of its field to judge. The converter of every text field of a set, a
    prompt, a question and an answer a plugin hands over: a subclass whose ``==``, ``hash`` or
    ``str()`` raises ended every command that listed, checked or stored it in an internal error."""
    return str.__str__(value) if isinstance(value, str) and type(value) is not str else value


def plain_texts(values: Any) -> Any:
    """:func:`plain_text` of each member of a tuple (what a tuple field's own converter made)."""
    return tuple(plain_text(value) for value in values) if isinstance(values, tuple) else values


def _raised(exc: BaseException) -> BaseException:
    """What the plugin raised: ``exc``, or the exception a :class:`~evalkit.errors.PluginRaised` carries."""
    return exc.raised if isinstance(exc, PluginRaised) else exc


def exception_name(exc: BaseException) -> str:
    """The name of ``exc``'s class, cut to :data:`MAX_EXCEPTION_NAME_CHARS` by :func:`clipped`
    (of what a plugin raised, for a :class:`~evalkit.errors.PluginRaised` carrying it); evalkit's
    refusal of an awaitable a plugin returned is named as the ``TypeError`` it is."""
    exc = _raised(exc)
    if isinstance(exc, AwaitableReturned):
        return "TypeError"
    try:
        name = type(exc).__name__
    except PLUGIN_FAILURES:  # a metaclass's __name__ that raises
        name = "(unnamed exception)"
    return clipped(name if isinstance(name, str) else "(unnamed exception)", MAX_EXCEPTION_NAME_CHARS)


def exception_message(exc: BaseException, *, lines: bool = False) -> str:
    """``str(exc)`` as a message quotes a plugin's exception: cut to :data:`MAX_REASON_CHARS` by
    :func:`clipped`; an ``__str__`` that raises (or returns no text) is named instead of failing
    the message. Its line breaks and other hidden characters are written as escapes
    (:func:`evalkit.printable.hidden_escaped`, as :func:`evalkit.wording.quoted` writes a word): an
    error message keeps its own line breaks, so a plugin's ``"x\\nevalkit: ok"`` raised when it was
    created, or by a set provider, printed a line that read as evalkit's. ``lines``: kept as they
    are, for a text stored as data (a case's error, a grading's), which every place that shows it
    escapes itself."""
    exc = _raised(exc)
    try:
        message = str(exc)
    except PLUGIN_FAILURES as failure:
        return f"(its message could not be read: str() raised {exception_name(failure)})"
    text = bounded_text(message)
    return text if lines else hidden_escaped(text)


def exception_text(exc: BaseException, *, lines: bool = False) -> str:
    """``"RuntimeError: the message"``: the one text made of an exception a plugin raised (a set
    provider's listing, a stream's producer, an import, a validator, a generator), for a problem,
    a failure or a case's reason. The class name is cut by :func:`exception_name`, the message by
    :func:`exception_message` (its mark gives the message's own length; ``lines`` as there); an
    ``__str__`` that raises is named."""
    name = exception_name(exc)
    return f"{name if lines else hidden_escaped(name)}: {exception_message(exc, lines=lines)}"


#: The longest line of a message shown whole (:func:`clipped_lines`).
MAX_MESSAGE_LINE = 2_000


def clipped_line(text: str, limit: int = MAX_MESSAGE_LINE) -> str:
    """``text``, one line however many line breaks it holds, cut in its middle past ``limit``
    characters (``"… 98,000 characters cut …"``): its start and its end, usually the reason, stay.
    How the terminal shows every value put into a line (:mod:`evalkit.cli.console`)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … {len(text) - 2 * half:,} characters cut … {text[-half:]}"


def clipped_lines(text: str, limit: int = MAX_MESSAGE_LINE) -> str:
    """``text`` with each line over ``limit`` characters cut in its middle (:func:`clipped_line`):
    a message's start and its end, usually the reason, stay."""
    return "\n".join(clipped_line(line, limit) for line in text.split("\n"))


#: A decimal number as a person writes one: ASCII digits, an optional sign, point and exponent.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def decimal_text(text: str) -> bool:
    """True when ``text``, spaces around it aside, is a decimal number written in ASCII digits
    (``0.5``, ``.5``, ``-2``, ``5e-2``). The check every reader of a decimal number from text
    (a tolerance, ``--alpha``, a temperature, a duration, an amount, ``EVALKIT_BUSY_TIMEOUT``)
    makes before ``float()``, ``Decimal()`` or ``Fraction()``: each of those also reads digits of
    other scripts (``٠.٥`` as 0.5, as :func:`whole_number` says of ``int()``) and underscores
    (``1_0`` as 10), and ``float()`` reads ``nan`` and ``infinity``."""
    return _DECIMAL.fullmatch(text.strip()) is not None


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


def written_value(value: object, limit: int = 60) -> str:
    """A value read from a configuration file, for a message's ``got …``, in the words the file
    wrote it in: a boolean as TOML writes it, with its kind (``true (a boolean)``: ``repr`` said
    ``True``, which no TOML file holds), anything else as :func:`short_repr` shows it."""
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    return short_repr(value, limit)


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters with ``...``; a repr that raises (a plugin's
    ``__repr__``, an int past Python's digit limit) is named instead of failing the message."""
    try:
        shown = repr(value)
    except PLUGIN_FAILURES as exc:
        return f"(not shown: repr() raised {exception_name(exc)})"
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
