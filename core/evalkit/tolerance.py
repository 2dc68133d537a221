"""Regression tolerances: parsed exactly, so a drop equal to the tolerance passes."""

from __future__ import annotations

import re
from fractions import Fraction

import attrs

from .errors import ToleranceError

__all__ = ["Tolerances", "parse_tolerance", "DEFAULT_TOLERANCE"]

#: Decimal or scientific notation with an optional sign; no nan, inf, hex or underscores.
_NUMBER = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*")

DEFAULT_TOLERANCE = Fraction(1, 10)


def parse_tolerance(raw: object, option: str) -> Fraction:
    """Parse a tolerance given as text (or a number) into an exact fraction in ``[0, 1]``.

    Accepted: ``0``, ``-0.0``, ``1``, ``0.1``, ``1e-1``, ``.5``. Refused with
    :class:`ToleranceError` naming ``option``: empty, ``nan``, ``inf``, ``1.01``, ``-0.1``,
    ``abc``, ``1e309``.
    """
    if isinstance(raw, bool):
        raise ToleranceError(option, raw)
    if isinstance(raw, Fraction):
        value = raw
    elif isinstance(raw, (int, float)):
        if raw != raw or raw in (float("inf"), float("-inf")):
            raise ToleranceError(option, raw)
        value = Fraction(raw)
    elif isinstance(raw, str) and _NUMBER.fullmatch(raw):
        value = Fraction(raw.strip())
    else:
        raise ToleranceError(option, raw)
    if not 0 <= value <= 1:
        raise ToleranceError(option, raw)
    return value


@attrs.frozen
class Tolerances:
    """How far each aggregate may drop before a run counts as a regression (absolute, 0..1)."""

    max_pass_rate_drop: Fraction = DEFAULT_TOLERANCE
    max_mean_score_drop: Fraction = DEFAULT_TOLERANCE

    @classmethod
    def parse(
        cls,
        pass_rate: object = DEFAULT_TOLERANCE,
        mean_score: object = DEFAULT_TOLERANCE,
        *,
        names: tuple[str, str] = ("max-pass-rate-drop", "max-mean-score-drop"),
    ) -> Tolerances:
        """Validate both tolerances (pass rate first) and build the pair."""
        return cls(parse_tolerance(pass_rate, names[0]), parse_tolerance(mean_score, names[1]))
