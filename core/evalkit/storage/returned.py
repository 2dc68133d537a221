"""What a third-party store gives back, checked against the types the kernel declares for it.

A store an ``evalkit.repositories`` plugin made hands back :class:`~evalkit.runs.Run`,
:class:`~evalkit.runs.CaseResult` and :class:`~evalkit.storage.values.CasePair` values the kernel
then reads field by field: a ``recent_runs`` that returned ``[{}]``, or a ``Run`` whose
``started_at`` is text, ended ``evalkit history`` in an internal error (an evalkit bug).
:func:`value_problem` reads such a value against the attrs class it must be, field by field and
into the values it holds (a run's cases, their checks), by the class's own annotations, and says
the first field that is not what it declares; :class:`~evalkit.storage.plugin_store.PluginStore`
refuses it as the store's failure. Stands below the adapter, imports nothing of it.
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

from ..shapes import short_repr
from .stored_checks import LATEST_TIME

__all__ = ["value_problem"]

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
