"""JSON Schema validation whose regexes are matched by the `regex` module, under a time limit.

jsonschema matches ``pattern`` and ``patternProperties`` (and ``additionalProperties``, which
skips the properties a ``patternProperties`` regex matches) with Python's ``re``, which nothing
can stop off the main thread, and which refuses ``\\p{L}``. The validator classes here are
jsonschema's own, extended the documented way (``jsonschema.validators.extend``, keyword
functions of the documented signature) with those three keywords matched by
:func:`evalkit.pcre.compile_plain`; checking a schema (:func:`check_schema`) reads its regexes
(``format: regex`` in the metaschema) the same way.

Inside :func:`patterns_within` the matches of the validations made in that thread (or task) share
one budget: each may use the time left of it (as processor time, the clock `regex`'s ``timeout=``
counts), and past it a match raises :class:`TimeoutError` through the validation. Outside it each
match has :data:`~evalkit.pcre.MATCH_TIMEOUT_S`.

jsonschema's ``unevaluatedProperties`` finds the properties a ``patternProperties`` regex covers
with ``re`` inside its own helper, which no keyword function reaches: those matches are neither
bounded nor `regex`'s (docs/failure-modes.md).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from functools import cache
from typing import Any

from .pcre import MATCH_TIMEOUT_S, PatternError, compile_plain

__all__ = ["check_schema", "patterns_within", "validator_class"]

#: When the validations in force must have finished matching (``time.monotonic()``: reading the
#: processor-time clock is a system call, which costs as much as the match on some hosts), if any.
_deadline: ContextVar[float | None] = ContextVar("evalkit_schema_pattern_deadline", default=None)


@contextlib.contextmanager
def patterns_within(seconds: float) -> Iterator[None]:
    """The regex matches of the validations inside share ``seconds`` from now: each may use the
    time left, as processor time; once it is spent a match raises :class:`TimeoutError`."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def _search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``text``, within the time left."""
    deadline = _deadline.get()
    left = MATCH_TIMEOUT_S if deadline is None else deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("regex timed out")
    return compile_plain(pattern).search(text, timeout=left) is not None


# The keyword functions below do what jsonschema's own do (same errors, same paths), matching
# with _search where jsonschema calls re.search.


def _pattern(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = {
        key for key in instance if key not in properties and not any(_search(pattern, key) for pattern in patterns)
    }
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            regexes = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            joined = ", ".join(repr(extra) for extra in sorted(extras, key=str))
            yield ValidationError(f"Additional properties are not allowed ({joined} {verb} unexpected)")


_KEYWORDS = {"pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional_properties}


@cache
def validator_class(base: type) -> type:
    """jsonschema's validator class ``base`` (one per draft) with its regexes matched by `regex`."""
    from jsonschema.validators import extend

    return extend(base, validators={k: v for k, v in _KEYWORDS.items() if k in base.VALIDATORS})


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compile_plain(instance)
    return True


@cache
def _format_checker(base: type) -> Any:
    """The format checker ``base`` checks a schema with, reading ``format: regex`` as `regex` does."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    for name, (function, raises) in base.FORMAT_CHECKER.checkers.items():
        checker.checks(name, raises)(function)
    checker.checks("regex", raises=PatternError)(_is_regex)
    return checker


def check_schema(schema: Any) -> None:
    """Raise jsonschema's ``SchemaError`` unless ``schema`` is a valid schema of its dialect
    (``$schema``, default 2020-12) whose regexes `regex` compiles."""
    from jsonschema.validators import validator_for

    base = validator_for(schema)
    base.check_schema(schema, format_checker=_format_checker(validator_for(base.META_SCHEMA, default=base)))
