"""Input checks shared by the statistics functions: every refusal names the argument and, for a
sequence, the position of the first bad value."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

from ..errors import UsageError


class StatisticsInputError(UsageError):
    """A statistics function was given values it cannot use (the message names the argument)."""


def outcomes(values: Sequence[object], name: str) -> list[bool]:
    """``values`` as pass/fail outcomes: ``bool``, or the numbers 0 and 1 (a hit@k per question is
    the float 0.0 or 1.0), nothing else."""
    result = [value == 1 for value in values]
    if not all(value is True or value is False or (type(value) in _NUMBERS and value in (0, 1)) for value in values):
        index, value = next(
            (i, v) for i, v in enumerate(values) if not (v is True or v is False or (type(v) in _NUMBERS and v in (0, 1)))
        )
        raise StatisticsInputError(f"{name}[{index}] is {value!r}, not a pass/fail outcome (a bool, or 0 or 1)")
    return result


_NUMBERS = (int, float)


def fractions(values: Sequence[object], name: str, *, low: float = 0.0) -> list[float]:
    """``values`` as finite numbers in ``[low, 1]`` (floats; ``bool`` counts as 0 or 1): fractions,
    or with ``low = -1`` differences of fractions."""
    kind = "a number in [0, 1]" if low == 0 else f"a difference in [{low:g}, 1]"
    result = [
        float(value) if type(value) is float or type(value) is int else _real(value, name, index, kind)
        for index, value in enumerate(values)
    ]
    if not all(low <= number <= 1.0 for number in result):  # also refuses nan
        index = next(i for i, number in enumerate(result) if not low <= number <= 1.0)
        raise StatisticsInputError(f"{name}[{index}] is {values[index]!r}, not {kind}")
    return result


def _real(value: object, name: str, index: int, kind: str) -> float:
    """A value that is not a plain float or int: any real number (Fraction, Decimal, bool, numpy)."""
    if not isinstance(value, Real):
        raise StatisticsInputError(f"{name}[{index}] is {value!r}, not {kind}")
    return float(value)


def same_length(baseline: Sequence[object], current: Sequence[object]) -> int:
    """The common length of two paired sequences; refused when they differ or are empty."""
    if len(baseline) != len(current):
        raise StatisticsInputError(
            f"baseline and current must pair case by case: {len(baseline)} baseline values, {len(current)} current values"
        )
    if not baseline:
        raise StatisticsInputError("no paired cases: baseline and current are empty")
    return len(baseline)


def probability(value: object, name: str, *, low: float = 0.0, high: float = 1.0) -> float:
    """``value`` as a number strictly between ``low`` and ``high``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not low < float(value) < high:
        raise StatisticsInputError(f"{name} is {value!r}, not a number strictly between {low:g} and {high:g}")
    return float(value)


def alpha_level(value: object) -> float:
    """A significance level: strictly between 0 and 0.5 (a one-sided test at ``alpha`` pairs with a
    two-sided ``1 - 2 alpha`` interval, which needs ``alpha < 0.5``)."""
    return probability(value, "alpha", high=0.5)


def tolerance(value: object) -> float:
    """A tolerance: a finite number in ``[0, 1]``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 <= value <= 1:
        raise StatisticsInputError(f"tolerance is {value!r}, not a number in [0, 1]")
    return value  # type: ignore[return-value]  # kept exact (a Fraction stays a Fraction)


def count(value: object, name: str, *, minimum: int = 0) -> int:
    """``value`` as an integer at least ``minimum`` (``bool`` refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise StatisticsInputError(f"{name} is {value!r}, not an integer of at least {minimum}")
    return value


def seed(value: object) -> int:
    """A random seed: any integer (recorded in the result so the figure can be reproduced)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise StatisticsInputError(f"seed is {value!r}, not an integer")
    return value


def finite(value: float, name: str) -> float:
    """``value`` when finite; refused otherwise."""
    if not math.isfinite(value):
        raise StatisticsInputError(f"{name} is {value!r}, not a finite number")
    return value
