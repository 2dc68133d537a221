"""What a third-party store gives back, checked against the types the kernel declares for it.

A store an ``evalkit.repositories`` plugin made hands back :class:`~evalkit.runs.Run`,
:class:`~evalkit.runs.CaseResult` and :class:`~evalkit.storage.values.CasePair` values the kernel
then reads field by field: a ``recent_runs`` that returned ``[{}]``, or a ``Run`` whose
``started_at`` is text, ended ``evalkit history`` in an internal error (an evalkit bug).
:func:`value_problem` reads such a value against the attrs class it must be, field by field and
into the values it holds (a run's cases, their checks), by the class's own annotations, and says
the first field that is not what it declares; :class:`~evalkit.storage.plugin_store.PluginStore`
refuses it as the store's failure. A ``case_usage`` row (:class:`~evalkit.storage.values.CaseUsage`,
a tuple, so no attrs class to read) is held to its own rule, :func:`usage_row_problem`: a row of
three values, a count that is text or ``-1`` or ``10**30``, a token count that is a NaN ended
``evalkit run`` in an internal error, or was summed into the run's spend. Stands below the
adapter, imports nothing of it.
"""

from __future__ import annotations

import enum
import functools
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..answers import USAGE_FIELDS, Usage, token_count_problem
from ..costs import CaseUsage
from ..shapes import short_repr
from .stored_checks import LATEST_TIME

__all__ = ["usage_row_problem", "value_problem"]

#: A check of one value: ``None`` when it is what it must be, else ``(where, value, wanted)`` —
#: the field path inside it (``""``: the value itself), the value found there, what it must be.
_Problem = tuple[str, Any, str] | None
_Checker = Callable[[Any], _Problem]

#: Fields that hold a time: seconds since 1970 up to the end of year 9999 (what a date printed by
#: ``history`` and ``show`` can show; ``started_at = 1e300`` failed there).
_TIMES = frozenset({"started_at", "finished_at"})


def value_problem(value: Any, cls: type) -> str | None:
    """``None`` when ``value`` is a ``cls`` (an attrs class) each of whose fields holds what the
    class declares (into nested attrs values, tuples and mappings); else what is wrong, as
    ``dict {}, not an evalkit Run`` or ``a Run whose started_at is str 'x', not a time …``."""
    problem = _checker(cls)(value)
    if problem is None:
        return None
    where, found, wanted = problem
    shown = f"{type(found).__name__} {short_repr(found)}"
    if not where:
        return f"{shown}, not {wanted}"
    return f"a {cls.__name__} whose {where.lstrip('.')} is {shown}, not {wanted}"


def _anything(value: Any) -> _Problem:
    return None


def _exactly(kind: type, wanted: str) -> _Checker:
    def check(value: Any) -> _Problem:
        return None if isinstance(value, kind) and not (kind is int and isinstance(value, bool)) else ("", value, wanted)

    return check


def _number(value: Any) -> _Problem:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return None
    return ("", value, "a finite number")


def _time(value: Any) -> _Problem:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= LATEST_TIME:
        return None
    return ("", value, "a time from 1970 to the year 9999")


def _optional(inner: _Checker) -> _Checker:
    def check(value: Any) -> _Problem:
        if value is None:
            return None
        problem = inner(value)
        return None if problem is None else (problem[0], problem[1], problem[2] + (" or None" if not problem[0] else ""))

    return check


def _tuple_of(inner: _Checker) -> _Checker:
    def check(value: Any) -> _Problem:
        if not isinstance(value, tuple):
            return ("", value, "a tuple")
        for index, item in enumerate(value):
            if (problem := inner(item)) is not None:
                return (f"[{index}]{problem[0]}", problem[1], problem[2])
        return None

    return check


def _mapping_of(inner: _Checker) -> _Checker:
    def check(value: Any) -> _Problem:
        if not isinstance(value, Mapping):
            return ("", value, "a mapping")
        for key, item in value.items():
            if not isinstance(key, str):
                return ("", value, "a mapping with text keys")
            if (problem := inner(item)) is not None:
                return (f"[{key!r}]{problem[0]}", problem[1], problem[2])
        return None

    return check


@functools.cache
def _checker(hint: Any, name: str = "") -> _Checker:
    """The check of a value annotated ``hint`` (in a field called ``name``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return _anything
    if origin in (typing.Union, types.UnionType):
        others = [a for a in args if a is not type(None)]
        inner = _checker(others[0], name) if len(others) == 1 else _anything
        return _optional(inner) if len(others) < len(args) else inner
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _tuple_of(_checker(args[0]))
    if origin in (Mapping, dict):
        return _mapping_of(_checker(args[1]) if len(args) == 2 else _anything)
    if hint is float:
        return _time if name in _TIMES else _number
    if hint in (str, bool, int):
        return _exactly(hint, {str: "text", bool: "true or false", int: "a whole number"}[hint])
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _exactly(hint, f"one of {', '.join(repr(m.value) for m in hint)}")
    if isinstance(hint, type) and attrs.has(hint):
        return _record(hint)
    if isinstance(hint, type):
        return _exactly(hint, f"a {hint.__name__}")
    return _anything


def _record(cls: type) -> _Checker:
    """The check of an instance of the attrs class ``cls``, field by field (resolved lazily: a
    class may hold values of its own kind)."""
    fields: list[tuple[str, _Checker]] = []

    def check(value: Any) -> _Problem:
        if not isinstance(value, cls):
            return ("", value, f"an evalkit {cls.__name__}")
        if not fields:
            hints = typing.get_type_hints(cls)
            fields.extend((f.name, _checker(hints[f.name], f.name)) for f in attrs.fields(cls))
        for field, checked in fields:
            if (problem := checked(getattr(value, field))) is not None:
                return (f".{field}{problem[0]}", problem[1], problem[2])
        return None

    return check


#: How many values a ``case_usage`` row given as a plain tuple holds: the first four fields of
#: :class:`~evalkit.storage.values.CaseUsage` at least (a store written before ``requests`` and
#: ``requests_sent`` gives fewer), all six at most.
_USAGE_ROW_SIZES = range(4, 7)


def usage_row_problem(row: Any) -> str | None:
    """``None`` when ``row`` is a ``case_usage`` row evalkit can sum (:class:`~evalkit.storage.values.CaseUsage`,
    or a tuple of its first four to six fields): its ``usage`` ``None`` or a
    :class:`~evalkit.answers.Usage`, its ``judge_usage`` a tuple of them, each token count ``None``
    or a whole number from 0 below 2**63 (what a store keeps, the rule of a count an endpoint
    reports); its ``answer_source`` text or ``None``, ``errored`` true or false, ``requests`` and
    ``requests_sent`` ``None`` or such a whole number. Else what is wrong, the value shown as a
    reported count is (:func:`evalkit.answers.token_count_problem`: a text cut, a huge number by its
    size, escapes written out), as ``requests '3', not a whole number from 0 below 2**63``."""
    if not isinstance(row, tuple) or (not isinstance(row, CaseUsage) and len(row) not in _USAGE_ROW_SIZES):
        shown = f"{type(row).__name__} {short_repr(row)}"
        return f"{shown}, not a CaseUsage or a tuple of {_USAGE_ROW_SIZES[0]} to {_USAGE_ROW_SIZES[-1]} values"
    fields = CaseUsage(*row) if not isinstance(row, CaseUsage) else row

    def usage_problem(name: str, usage: Any) -> str | None:
        if not isinstance(usage, Usage):
            return f"{name} is {type(usage).__name__} {short_repr(usage)}, not an evalkit Usage"
        for field, count in zip(USAGE_FIELDS, usage.counts(), strict=True):
            if (problem := token_count_problem(f"{name}.{field}", count)) is not None:
                return problem
        return None

    if fields.usage is not None and (problem := usage_problem("usage", fields.usage)) is not None:
        return problem
    if not isinstance(fields.judge_usage, tuple):
        return f"judge_usage is {type(fields.judge_usage).__name__} {short_repr(fields.judge_usage)}, not a tuple of evalkit Usages"
    for index, call in enumerate(fields.judge_usage):
        if (problem := usage_problem(f"judge_usage[{index}]", call)) is not None:
            return problem
    if fields.answer_source is not None and not isinstance(fields.answer_source, str):
        return f"answer_source is {type(fields.answer_source).__name__} {short_repr(fields.answer_source)}, not text or None"
    if type(fields.errored) is not bool:
        return f"errored is {type(fields.errored).__name__} {short_repr(fields.errored)}, not true or false"
    for name in ("requests", "requests_sent"):
        if (problem := token_count_problem(name, getattr(fields, name))) is not None:
            return problem
    return None
