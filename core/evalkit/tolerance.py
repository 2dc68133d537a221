"""Regression tolerances: parsed exactly, so a drop equal to the tolerance passes.

The rules live here once: :func:`tolerance_value` checks a number, :func:`parse_tolerance` reads
the text of a command-line option and then applies the same check, and :class:`Tolerances`
applies it to every value it is built with — so a library caller gets the very
:class:`~evalkit.errors.ToleranceError` the CLI prints, before anything is called or stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import attrs

from .errors import ToleranceError

__all__ = ["Tolerances", "parse_tolerance", "resolve_tolerances", "tolerance_value", "DEFAULT_TOLERANCE"]

#: Decimal or scientific notation with an optional sign, in ASCII digits (``\d`` and ``Fraction()``
#: also read ``٠.٥`` as 0.5); no nan, inf, hex or underscores.
_NUMBER = re.compile(r"\s*[+-]?(?P<mantissa>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exponent>[+-]?[0-9]+))?\s*")

#: Longer text is refused before it is parsed: no tolerance needs more digits, and parsing a
#: number of millions of digits (or an exponent of ``1e99999999``) would take minutes.
MAX_TOLERANCE_CHARS = 64
#: The largest exponent magnitude parsed exactly; beyond it a non-zero value is out of range
#: (too large) or too small to differ from 0 in any measurable drop, and is refused.
MAX_EXPONENT = 400

DEFAULT_TOLERANCE = Fraction(1, 10)


def tolerance_value(raw: object, option: str) -> Fraction:
    """A tolerance given as a number (``int``, ``float``, ``Fraction``, ``Decimal``) as an exact
    fraction in ``[0, 1]``; anything else — ``True``, text, ``nan``, ``inf``, ``5`` — is refused
    with :class:`ToleranceError` naming ``option``."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, Fraction, Decimal)):
        hint = "; Tolerances takes numbers, Tolerances.parse reads text" if isinstance(raw, str) else ""
        raise ToleranceError(option, raw, hint)
    if isinstance(raw, Decimal) and raw.is_finite() and not raw.is_zero() and abs(raw.adjusted()) > MAX_EXPONENT:
        raise ToleranceError(option, raw, f"; its exponent is beyond ±{MAX_EXPONENT}")  # Fraction() would take minutes
    try:
        value = Fraction(raw)
    except (ValueError, OverflowError):  # nan, inf
        raise ToleranceError(option, raw) from None
    if not 0 <= value <= 1:
        raise ToleranceError(option, raw)
    return value


def parse_tolerance(raw: object, option: str) -> Fraction:
    """Parse a tolerance given as text (or a number) into an exact fraction in ``[0, 1]``.

    Accepted: ``0``, ``-0.0``, ``1``, ``0.1``, ``1e-1``, ``.5``, ``0e99999999``. Refused with
    :class:`ToleranceError` naming ``option``: empty, ``nan``, ``inf``, ``1.01``, ``-0.1``,
    ``abc``, ``1e309``, ``1e99999999`` and ``1e-99999999`` (exponent beyond ±400), text longer
    than 64 characters — every refusal is instant, whatever the text.
    """
    if isinstance(raw, str):
        value = _parse_text(raw, option)
        if not 0 <= value <= 1:
            raise ToleranceError(option, raw)
        return value
    return tolerance_value(raw, option)


def _checked(option: str) -> Callable[[object], Fraction]:
    def convert(raw: object) -> Fraction:
        return tolerance_value(raw, option)

    return convert


def _optional(option: str) -> Callable[[object], Fraction | None]:
    def convert(raw: object) -> Fraction | None:
        return None if raw is None else tolerance_value(raw, option)

    return convert


def _parse_text(raw: str, option: str) -> Fraction:
    if len(raw) > MAX_TOLERANCE_CHARS:
        raise ToleranceError(option, raw[:MAX_TOLERANCE_CHARS] + "…", f"; longer than {MAX_TOLERANCE_CHARS} characters")
    match = _NUMBER.fullmatch(raw)
    if match is None:
        raise ToleranceError(option, raw)
    if not match.group("mantissa").strip(".0"):
        return Fraction(0)  # zero whatever the exponent: 0e99999999 is 0
    exponent = int(match.group("exponent") or 0)
    if abs(exponent) > MAX_EXPONENT:
        raise ToleranceError(option, raw, f"; its exponent is beyond ±{MAX_EXPONENT}")
    return Fraction(raw.strip())


@attrs.frozen
class Tolerances:
    """How far each aggregate may drop before a run counts as a regression (absolute, 0..1).

    Built from numbers; a value that is not a finite number in 0..1 raises the same
    :class:`~evalkit.errors.ToleranceError` (a ``UsageError``) as the command-line options.
    A retrieval run's pass rate and mean score are its hit@1 and hit@3; its MRR@k, recall@k and
    nDCG@k are gated only when their tolerance is set (``None``: reported, not gated).
    """

    max_pass_rate_drop: Fraction = attrs.field(default=DEFAULT_TOLERANCE, converter=_checked("max-pass-rate-drop"))
    max_mean_score_drop: Fraction = attrs.field(default=DEFAULT_TOLERANCE, converter=_checked("max-mean-score-drop"))
    max_mrr_drop: Fraction | None = attrs.field(default=None, converter=_optional("max-mrr-drop"))
    max_recall_drop: Fraction | None = attrs.field(default=None, converter=_optional("max-recall-drop"))
    max_ndcg_drop: Fraction | None = attrs.field(default=None, converter=_optional("max-ndcg-drop"))

    @classmethod
    def parse(
        cls,
        pass_rate: object = DEFAULT_TOLERANCE,
        mean_score: object = DEFAULT_TOLERANCE,
        *,
        names: tuple[str, str] = ("max-pass-rate-drop", "max-mean-score-drop"),
    ) -> Tolerances:
        """Validate both tolerances given as text or numbers (pass rate first) and build the pair."""
        return cls(parse_tolerance(pass_rate, names[0]), parse_tolerance(mean_score, names[1]))


def resolve_tolerances(value: object) -> Tolerances:
    """``value`` as the tolerances of a run: ``None`` means the defaults; anything but a
    :class:`Tolerances` is refused with a :class:`~evalkit.errors.UsageError` (library calls)."""
    if value is None:
        return Tolerances()
    if not isinstance(value, Tolerances):
        from .errors import UsageError

        raise UsageError(f"tolerances must be an evalkit.Tolerances, got {type(value).__name__} {value!r}")
    return value
