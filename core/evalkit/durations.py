"""Durations: the one reader of a length of time, wherever evalkit reads one.

A command-line option (``--timeout``, ``--poll``, ``--wait-ready``, ``--older-than``), a
configuration key (``grade_timeout``, ``answer_timeout``, a deployment's ``timeout``) and an
environment variable (``EVALKIT_BUSY_TIMEOUT``) all take the same words: a number of seconds
(``90``; a TOML number is one too), or a number with a unit — ``s``, ``m``, ``h``, ``d`` or
``w`` (``90s``, ``30m``, ``1.5h``, ``8d``, ``2w``). Each reader has its bounds, and a value
outside them, or not a duration at all, is refused with one message that names what gave it and
both bounds: ``--timeout must be a duration from 1 ms to 7 days (a number of seconds, or one with
a unit s, m, h, d or w: 90s, 30m, 2h, 1d), got "8x"``. Each reader used to have words of its own:
``--timeout 8d`` said "must look like 90s, 30m or 2h" while ``--poll 1e9s`` said "at most 7
days", ``--older-than`` alone took days and weeks, and a configuration key took no unit at all.

An age (``--older-than``) is the one reader that needs the unit: a bare ``90`` meant as days would
delete nearly every run as seconds.
"""

from __future__ import annotations

import re

from .errors import UsageError
from .shapes import MIN_SECONDS, clipped, decimal_text, finite_number, seconds_between, written_value
from .wording import quoted

__all__ = ["MAX_WAIT_S", "UNIT_SECONDS", "duration_rule", "read_duration", "spoken_seconds"]

#: The longest wait evalkit is asked for: ``--timeout``, ``--poll``, ``--wait-ready`` (and the
#: library's ``wait_ready``): a week.
MAX_WAIT_S = 7 * 86400

#: The units a duration may carry, in seconds.
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

_WRITTEN = re.compile(r"(?P<number>[^smhdw]*)(?P<unit>[smhdw]?)")


def spoken_seconds(seconds: float) -> str:
    """A bound as people say it: ``1 ms``, ``1 s``, ``1 day``, ``7 days``, ``50 years``."""
    for size, word in ((365 * 86400, "year"), (86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count:,} {word}{'' if count == 1 else 's'}"
    if seconds < 1:
        return f"{seconds * 1000:g} ms"
    return f"{seconds:g} s"


def duration_rule(most: float, *, least: float = MIN_SECONDS, unit_required: bool = False, typed: bool = False) -> str:
    """``must be a duration from 1 ms to 7 days (…)``: the words every refused duration is told."""
    if typed:
        words = 'a number of seconds, or text with a unit s, m, h, d or w: 90, "90s", "30m", "1d"'
    elif unit_required:
        words = "a number with a unit s, m, h, d or w: 45s, 30m, 12h, 90d, 2w"
    else:
        words = "a number of seconds, or one with a unit s, m, h, d or w: 90s, 30m, 2h, 1d"
    return f"must be a duration from {spoken_seconds(least)} to {spoken_seconds(most)} ({words})"


def read_duration(
    value: object,
    named: str,
    *,
    most: float,
    least: float = MIN_SECONDS,
    unit_required: bool = False,
    typed: bool = False,
    error: type[Exception] | None = None,
) -> float:
    """``value`` in seconds: a number (not a ``bool``) of seconds, or text — a decimal number in
    ASCII digits with an optional unit (:data:`UNIT_SECONDS`, any case; required with
    ``unit_required``) — from ``least`` to ``most``. ``typed``: the value comes from a typed file
    (TOML), where a number is the seconds and text must carry its unit — ``"60"`` is a number
    written as text, refused as every key of the configuration refuses one. Anything else raises
    ``error`` (default :class:`~evalkit.errors.UsageError`) saying ``named`` (an option as
    :func:`evalkit.wording.argument` gives it, a configuration key, a variable)
    :func:`duration_rule`, with the value quoted (its start, when long)."""
    seconds: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = None if (unit_required and not typed) or not finite_number(value) else float(value)
    elif isinstance(value, str) and len(value) <= 40:
        written = _WRITTEN.fullmatch(value.strip().lower())
        number = "" if written is None else written["number"]
        if (
            number == number.strip()
            and decimal_text(number)
            and written
            and (written["unit"] or not (unit_required or typed))
        ):
            try:
                seconds = float(number) * UNIT_SECONDS[written["unit"] or "s"]
            except (ValueError, OverflowError):
                seconds = None
    if seconds is not None and seconds_between(seconds, most) and seconds >= least:
        return seconds
    shown = quoted(clipped(value, 40)) if isinstance(value, str) else written_value(value, 40)
    raise (error or UsageError)(
        f"{named} {duration_rule(most, least=least, unit_required=unit_required, typed=typed)}, got {shown}"
    )
