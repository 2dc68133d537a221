"""The result of grading one answer: named checks, a score and the yardstick that produced it."""

from __future__ import annotations

import decimal
import functools
import json
import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .shapes import (
    MAX_REASON_CHARS,
    bounded_reason,
    exception_name,
    finite_number,
    plain_text,
    short_repr,
    too_long,
    value_shape_problem,
    whole_number,
)

__all__ = [
    "AGREEMENT_CHECK",
    "MAX_CHECKS",
    "MAX_CHECK_NAME_CHARS",
    "MAX_CHECK_TEXT_CHARS",
    "MAX_DETAIL_JSON_CHARS",
    "MAX_YARDSTICK_CHARS",
    "Check",
    "Grading",
    "grading_problems",
    "judge_pass_share",
    "mapping_problem",
    "verdict_check_name",
    "yardstick_problem",
]

#: The check a judge grader asked several times per case adds: it holds when every verdict agreed.
#: A case where it does not hold is *unstable*: the ``tolerance`` gate leaves it out of regression
#: comparisons; the ``paired`` gate compares it with the share of the judge's verdicts that passed.
AGREEMENT_CHECK = "judge_agreement"
#: How the check of one of a judge's repeated verdicts is named: ``verdict 2/3 = pass``.
_VERDICT_CHECK = "verdict {index}/{repeats} = {label}"
_VERDICT_PREFIX = "verdict "


def verdict_check_name(index: int, repeats: int, label: str) -> str:
    """The name of the check that records verdict ``index`` of ``repeats`` a judge gave (its
    ``passed`` says whether that verdict passed the answer)."""
    return _VERDICT_CHECK.format(index=index, repeats=repeats, label=label)


def _is_verdict_check(name: str) -> bool:
    if not name.startswith(_VERDICT_PREFIX):
        return False
    counted, _, _ = name[len(_VERDICT_PREFIX) :].partition(" = ")
    index, _, repeats = counted.partition("/")
    return whole_number(index) is not None and whole_number(repeats) is not None


def judge_pass_share(checks: Iterable[Check]) -> float | None:
    """The share of a judge's repeated verdicts that passed the answer (``None`` when the judge was
    asked once, or is no judge): the answer's pass value when the judge disagreed with itself."""
    verdicts = [c.passed for c in checks if _is_verdict_check(c.name)]
    if len(verdicts) < 2:
        return None
    return sum(verdicts) / len(verdicts)
#: The longest yardstick, in characters: it names an instrument in every table, report and scope.
MAX_YARDSTICK_CHARS = 1_000
#: The most checks one grading may hold, and the longest check name: a check is a named property
#: people read in a table; a grader returning 100,000 checks per case, or a name of ten million
#: characters, filled the store (half a gigabyte for seven cases) and the run's table.
MAX_CHECKS = 1_000
MAX_CHECK_NAME_CHARS = 1_000
#: The longest text a check's ``error`` or ``detail``, or a grading's ``error``, keeps: past it the
#: text is cut (:func:`~evalkit.shapes.bounded_reason`, their converter), not refused; it explains
#: a verdict, it is not the verdict. A grader's 50-million-character error took minutes and
#: gigabytes to lay out in the run's table.
MAX_CHECK_TEXT_CHARS = MAX_REASON_CHARS
#: The longest a grading's ``detail`` may be, written as JSON.
MAX_DETAIL_JSON_CHARS = 1_048_576


@attrs.frozen
class Check:
    """One named property of an answer and whether it held.

    ``error`` is set when the check could not be evaluated (a regex that ran out of time, an
    answer without the citations the check needs); such a check never holds.

    ``judged`` says a judge model decided it (a rubric check, a decision or groundedness verdict):
    the grader sets it. ``advisory`` says the check does not gate: the kernel sets it on a judged
    check whose judge has no calibration reaching ``[gate] min_judge_kappa`` (see
    :mod:`evalkit.judge_gate`); it is stored and shown, and left out of the case's pass and score.
    """

    name: str = attrs.field(converter=plain_text)
    passed: bool
    error: str | None = attrs.field(default=None, converter=bounded_reason)
    detail: str | None = attrs.field(default=None, converter=bounded_reason)
    # Left out of the repr, which messages quote (a broken check is named as it always was).
    judged: bool = attrs.field(default=False, repr=False)
    advisory: bool = attrs.field(default=False, repr=False)


def _checks(value: Iterable[Check] | Mapping[str, bool] | None) -> tuple[Check, ...]:
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return tuple(Check(str(name), bool(ok)) for name, ok in value.items())
    return tuple(value)


def _real_score(score: Any) -> Any:
    """A grader's ``score`` that is a real number of another type than ``int`` or ``float`` — a
    ``decimal.Decimal``, a ``fractions.Fraction``, a numpy ``float32`` — as the ``float`` it is
    worth (``Decimal("0.75")``: ``0.75``): each is a real number, and was refused ("score must be
    a finite number in 0..1, got Decimal('0.75')"), failing every case. Any other value (``True``,
    text, a number no float holds) is kept as it came, for :func:`grading_problems` to refuse.
    ``Decimal`` is named beside ``numbers.Real``: the standard library registers it only as a
    ``numbers.Number`` (it does not mix with ``float`` in arithmetic), yet a finite one is a real
    number, worth a float."""
    if isinstance(score, (int, float)) or not isinstance(score, (numbers.Real, decimal.Decimal)):
        return score
    try:
        worth = float(score)
    except (ArithmeticError, ValueError, TypeError):  # 10**400 as a Fraction, a signalling NaN
        return score
    return worth if math.isfinite(worth) else score  # a NaN or past a float's range: refused as given


@attrs.frozen
class Grading:
    """A grader's verdict on one answer.

    ``yardstick`` names the measuring instrument (``deterministic``,
    ``decision:<judge>:<model>:v<n>``…); runs are only compared within one yardstick.
    ``score`` may be given as any real number (``Decimal``, ``Fraction``): it is kept as the
    ``float`` it is worth. ``error`` marks a grading that could not be made; it never passes. ``usage`` holds the token
    counts of each model call the grading made (a judge's), in order; empty for graders that call none.
    """

    score: float = attrs.field(converter=_real_score)
    passed: bool
    checks: tuple[Check, ...] = attrs.field(default=(), converter=_checks)
    yardstick: str = attrs.field(default="deterministic", converter=plain_text)
    error: str | None = attrs.field(default=None, converter=bounded_reason)
    detail: Mapping[str, Any] | None = None
    usage: tuple[Any, ...] = attrs.field(default=(), converter=tuple)

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        """The checks that did not hold, in declaration order."""
        return tuple(c for c in self.checks if not c.passed)

    def check_map(self) -> dict[str, bool]:
        """``{check name: held}``."""
        return {c.name: c.passed for c in self.checks}

    @property
    def unstable(self) -> bool:
        """True when a judge asked several times disagreed with itself (see :data:`AGREEMENT_CHECK`)."""
        return any(c.name == AGREEMENT_CHECK and not c.passed for c in self.checks)


def grading_problems(grading: object) -> list[str]:
    """What is wrong with one grading by the kernel's rules; empty when nothing is.

    A run applies them to every grading a grader returns (one that breaks them is a failed
    grading, like one that raised: ``<grader>:failed``, never a pass) and the contract kit
    (:func:`evalkit.testing.check_grader`) to a grader's gradings. A :class:`Grading`; a finite
    score in 0..1; ``passed`` exactly ``True`` or ``False`` (``"no"`` is not false enough); checks
    with a non-empty name and a bool ``passed`` (``error`` and ``detail`` text or ``None``, ``judged`` a
    bool, ``advisory`` left ``False``: the kernel sets it); a
    non-empty yardstick of at most :data:`MAX_YARDSTICK_CHARS` characters, without control or
    invisible characters and in Unicode NFC (one that prints as another is no yardstick); ``error`` text or
    ``None``; ``detail`` ``None`` or a mapping that can be written as JSON.
    """
    if not isinstance(grading, Grading):
        return [f"{type(grading).__name__} {short_repr(grading)} is not an evalkit.Grading"]
    problems = []
    score = grading.score
    if not finite_number(score) or not 0 <= score <= 1:
        problems.append(f"score must be a finite number in 0..1, got {short_repr(score)}")
    if not isinstance(grading.passed, bool):
        problems.append(f"passed must be True or False, got {short_repr(grading.passed)}")
    checks = grading.checks
    if len(checks) > MAX_CHECKS:
        problems.append(f"checks: {len(checks):,} of them, more than the {MAX_CHECKS:,} allowed")
        checks = ()
    for check in checks:
        if not isinstance(check, Check):
            problems.append(f"a check must be an evalkit.Check, got {short_repr(check)}")
        elif not isinstance(check.name, str) or not check.name:
            problems.append(f"a check has no name: {short_repr(check)}")
        elif long_name := too_long(check.name, MAX_CHECK_NAME_CHARS):
            problems.append(f"check {short_repr(check.name)}: its name {long_name}")
        elif not isinstance(check.passed, bool):
            problems.append(f"check {short_repr(check.name)}: passed must be True or False, got {short_repr(check.passed)}")
        elif not isinstance(check.error, (str, type(None))) or not isinstance(check.detail, (str, type(None))):
            problems.append(f"check {short_repr(check.name)}: error and detail must be text or None")
        elif not isinstance(check.judged, bool) or check.advisory is not False:
            problems.append(f"check {short_repr(check.name)}: judged must be True or False, and advisory is the kernel's to set")
    if (broken := yardstick_problem(grading.yardstick)) is not None:
        problems.append(f"yardstick {broken}")
    if not isinstance(grading.error, (str, type(None))):
        problems.append(f"error must be text or None, got {short_repr(grading.error)}")
    if grading.detail is not None:
        problems.extend(_detail_problems(grading.detail))
    return problems


def yardstick_problem(yardstick: object) -> str | None:
    """Why ``yardstick`` is no yardstick, as words following the word "yardstick" (``None`` when
    it is one): the rule of a grading's yardstick (:func:`grading_problems`), and of the yardstick
    a judge names for its calibration (:mod:`evalkit.judge_replies`)."""
    if not isinstance(yardstick, str) or not yardstick or len(yardstick) > MAX_YARDSTICK_CHARS:
        shown = f"{len(yardstick):,} characters" if isinstance(yardstick, str) and yardstick else short_repr(yardstick)
        return f"must be a non-empty string of at most {MAX_YARDSTICK_CHARS:,} characters, got {shown}"
    if type(yardstick) is str:  # the same few yardsticks in every case of a run: judged once each
        return _str_disguise(yardstick)
    return _disguise(yardstick)  # one that prints as another it never equals


def _disguise(yardstick: str) -> str | None:
    """Why ``yardstick`` would print as another yardstick it never equals (a control or invisible
    character, or a form other than NFC: the rule of a model name and a prompt id); ``None``."""
    from .identity import hidden_problem
    from .printable import not_nfc

    return hidden_problem(yardstick) or not_nfc(yardstick)


@functools.lru_cache(maxsize=64)
def _str_disguise(yardstick: str) -> str | None:
    """:func:`_disguise` of exactly a ``str`` (whose hash and equality are the text's own), kept for
    the last 64 yardsticks: a run's grader returns the same one in every case."""
    return _disguise(yardstick)


def _detail_problems(detail: object) -> list[str]:
    problem = mapping_problem(detail, "detail")
    return [] if problem is None else [problem]


def mapping_problem(value: object, name: str) -> str | None:
    """Why ``value``, a mapping a plugin gives to be stored (a grading's ``detail``, a grader's
    ``run_metrics()``), cannot be (``None`` when it can), in words starting with ``name``: not a
    mapping; a value no store, fingerprint or printer takes (:func:`evalkit.shapes.value_shape_problem`:
    a NaN, a key that is not text, nested past 64, containing itself); not JSON-writable; more than
    :data:`MAX_DETAIL_JSON_CHARS` characters of JSON."""
    from .errors import PLUGIN_FAILURES

    if not isinstance(value, Mapping):
        return f"{name} must be a mapping or None, got {short_repr(value)}"
    try:
        shape = value_shape_problem(dict(value))
    except PLUGIN_FAILURES as exc:  # a plugin's own Mapping whose keys or items raise
        return f"{name} cannot be read as a mapping: {exception_name(exc)}"
    if shape is not None:
        return f"{name} {shape}"
    try:
        written = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return f"{name} cannot be written as JSON: {exc}"
    if len(written) > MAX_DETAIL_JSON_CHARS:
        return f"{name} is {len(written):,} characters of JSON, more than the {MAX_DETAIL_JSON_CHARS:,} allowed"
    return None

