"""How a comparison is gated: the method, its significance level, the tolerances, the cap on
regressed cases and the cases kept out of the gate — from ``[gate]`` in the configuration, with
the command line's options of the same names overriding it.

::

    [gate]
    method = "paired"              # "tolerance" (today's rule; the default) or "paired"
    alpha = 0.05                   # the paired test's one-sided level (1e-9 <= alpha < 0.5)
    max_pass_rate_drop = 0.1       # prompt runs
    max_mean_score_drop = 0.1
    max_regressed_cases = 0        # unset: no cap; 0: any case that passed and fails now fails the gate
    quarantine = ["flaky-case"]    # kept out of the gate, never out of the report
    max_top1_drop = 0.1            # retrieval runs: hit@1, hit@3 (gated by default) …
    max_top3_drop = 0.1
    max_mrr_drop = 0.05            # … and MRR@k, recall@k, nDCG@k (gated only when set)
    max_recall_drop = 0.05
    max_ndcg_drop = 0.05

* ``tolerance`` — nr_llm's rule: regressed when a gated figure dropped by more than its tolerance
  (a drop equal to it passes: exact fractions).
* ``paired`` — the statistics decide (:mod:`evalkit.stats.gate`): **regressed** when the drop is
  significant at ``alpha`` and larger than the tolerance, **no regression** when the interval
  shows it within the tolerance, otherwise **inconclusive**.

Under both methods a run is accepted as the new baseline automatically only when it is the first
of its scope or significantly better (see :mod:`evalkit.run.decide`).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import attrs

from .errors import ConfigError, UsageError
from .printable import not_nfc
from .shapes import decimal_text, short_repr, whole_number
from .tolerance import Tolerances, parse_tolerance
from .wording import did_you_mean

__all__ = [
    "DEFAULT_ALPHA",
    "GATE_KEYS",
    "GATE_METHODS",
    "PROMPT_TOLERANCE_KEYS",
    "RETRIEVAL_TOLERANCE_KEYS",
    "MAX_REGRESSED_CASES",
    "GateSettings",
    "check_alpha",
    "check_method",
    "check_quarantine",
    "check_regressed_cases",
    "gate_from",
]

#: The gate methods, the first the default of a configuration that does not name one.
GATE_METHODS = ("tolerance", "paired")
DEFAULT_ALPHA = 0.05
#: The most case ids ``quarantine`` takes (a gate that leaves out more is no gate).
MAX_QUARANTINE = 10_000

#: Tolerance keys of prompt runs, with the :class:`Tolerances` field each one sets.
PROMPT_TOLERANCE_KEYS = {"max_pass_rate_drop": "max_pass_rate_drop", "max_mean_score_drop": "max_mean_score_drop"}
#: Tolerance keys of retrieval runs (hit@1 and hit@3 are a retrieval run's pass rate and mean score).
RETRIEVAL_TOLERANCE_KEYS = {
    "max_top1_drop": "max_pass_rate_drop",
    "max_top3_drop": "max_mean_score_drop",
    "max_mrr_drop": "max_mrr_drop",
    "max_recall_drop": "max_recall_drop",
    "max_ndcg_drop": "max_ndcg_drop",
}

#: The smallest one-sided level a gate takes. Below it, ``1 - alpha`` rounds to 1 in a float and the
#: normal quantile the power figures need does not exist: ``alpha = 1e-20``, a number above 0,
#: crashed every paired comparison and ``evalkit plan`` with StatisticsError.
SMALLEST_ALPHA_TEXT = "1e-9"
SMALLEST_ALPHA = float(SMALLEST_ALPHA_TEXT)

#: The most regressed cases a gate may allow: nine digits, more cases than a set holds. The
#: command line always read at most nine digits; ``[gate]`` took any TOML integer.
MAX_REGRESSED_CASES = 999_999_999

#: Every key ``[gate]`` takes, with its one-line help (the schema of the table).
GATE_KEYS: Mapping[str, str] = {
    "method": 'how a comparison is decided: "tolerance" (a drop beyond the tolerance) or "paired" (the statistics)',
    "alpha": f"the paired test's one-sided significance level, from {SMALLEST_ALPHA_TEXT} and below 0.5 (default 0.05)",
    "max_pass_rate_drop": "largest accepted drop of a prompt run's pass rate, 0..1 (default 0.1)",
    "max_mean_score_drop": "largest accepted drop of a prompt run's mean score, 0..1 (default 0.1)",
    "max_regressed_cases": "the most cases that may pass in the baseline and fail now, 0 to 999,999,999 (unset: no cap)",
    "quarantine": "case ids kept out of the gate (still reported)",
    "min_judge_kappa": "a judge's checks gate only once its newest calibration κ reaches this, -1..1 (unset: every judge gates)",
    "max_top1_drop": "largest accepted drop of a retrieval run's hit@1, 0..1 (default 0.1)",
    "max_top3_drop": "largest accepted drop of a retrieval run's hit@3, 0..1 (default 0.1)",
    "max_mrr_drop": "largest accepted drop of MRR@k, 0..1 (unset: reported, not gated)",
    "max_recall_drop": "largest accepted drop of recall@k, 0..1 (unset: reported, not gated)",
    "max_ndcg_drop": "largest accepted drop of nDCG@k, 0..1 (unset: reported, not gated)",
}


def check_method(value: object, where: str) -> str:
    """``value`` as a gate method, or a :class:`UsageError` naming ``where`` it came from."""
    if value not in GATE_METHODS:
        raise UsageError(f'{where} must be "tolerance" or "paired", got {value!r}.{did_you_mean(str(value), GATE_METHODS)}')
    return str(value)


def _text_refused(value: object, where: str, rule: str, text: bool) -> None:
    """Refuse ``value`` when it is text and only a number may be given (``text`` false: a TOML
    value, a library caller's): ``alpha = "0.05"`` was read as the number it spells."""
    if isinstance(value, str) and not text:
        raise UsageError(f"{where} must be {rule}, got {short_repr(value)}, which is text (quoted), not a number")


def check_alpha(value: object, where: str, *, text: bool = True) -> float:
    """``value`` as a significance level: a number from :data:`SMALLEST_ALPHA`, below 0.5 (text that
    spells one only when ``text``: the command line's)."""
    _text_refused(value, where, f"a number from {SMALLEST_ALPHA_TEXT} and below 0.5 (the one-sided level)", text)
    number = value
    if isinstance(value, str):
        try:
            number = float(value) if len(value) <= 32 and decimal_text(value) else None
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not SMALLEST_ALPHA <= number < 0.5:
        raise UsageError(f"{where} must be a number from {SMALLEST_ALPHA_TEXT} and below 0.5 (the one-sided level), got {short_repr(value)}")
    return float(number)


def check_regressed_cases(value: object, where: str, *, text: bool = True) -> int:
    """``value`` as a count of regressed cases: a whole number from 0 to :data:`MAX_REGRESSED_CASES`,
    from the command line (text, when ``text``) or ``[gate]`` (a TOML integer)."""
    _text_refused(value, where, f"a whole number from 0 to {MAX_REGRESSED_CASES:,}", text)
    number = value
    if isinstance(value, str):
        number = whole_number(value, max_digits=9)
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= MAX_REGRESSED_CASES:
        raise UsageError(f"{where} must be a whole number from 0 to {MAX_REGRESSED_CASES:,}, got {short_repr(value)}")
    return number


def check_quarantine(value: object, where: str) -> tuple[str, ...]:
    """``value`` as case ids: a list of non-empty strings, each in Unicode normal form NFC as every
    case id is (:func:`evalkit.printable.not_nfc`), order kept, repeats dropped."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f'{where} must be a list of case ids, like ["case-1", "case-2"], got {value!r}')
    if len(value) > MAX_QUARANTINE:
        raise UsageError(f"{where} names {len(value)} cases; at most {MAX_QUARANTINE:,}")
    # a case id is NFC (the id rule): one written otherwise prints as the case and never matches it
    if (unnormalised := next(filter(None, map(not_nfc, value)), None)) is not None:
        raise UsageError(f"{where}: the case id {unnormalised}")
    return tuple(dict.fromkeys(value))


@attrs.frozen
class GateSettings:
    """How a comparison is decided beside its tolerances (:class:`~evalkit.tolerance.Tolerances`):
    the ``method`` (``tolerance`` or ``paired``), the paired test's one-sided ``alpha``, the most
    regressed cases allowed (``None``: no cap; ``0``: any case that passed in the baseline and
    fails now fails the gate), and the ``quarantine``d case ids (out of the gate, in the report)."""

    method: str = attrs.field(default="tolerance")
    alpha: float = DEFAULT_ALPHA
    max_regressed_cases: int | None = None
    quarantine: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    @method.validator
    def _method(self, _: Any, value: str) -> None:
        check_method(value, "the gate method")

    def __attrs_post_init__(self) -> None:
        check_alpha(self.alpha, "alpha", text=False)
        if self.max_regressed_cases is not None:
            check_regressed_cases(self.max_regressed_cases, "max_regressed_cases", text=False)
        check_quarantine(list(self.quarantine), "quarantine")

    @property
    def paired(self) -> bool:
        """True when the statistics decide (three states)."""
        return self.method == "paired"


def _tolerance(raw: object, key: str, where: str) -> Fraction:
    """A tolerance as written in the file: a TOML float is read as the decimal it was written as
    (``0.05`` is 1/20 exactly, so a drop equal to it passes), through its shortest repr."""
    if isinstance(raw, str):  # "0.05" was read as the number it spells, where [run] repeats = "3" is refused
        raise ConfigError(f"{where}: [gate] {key} must be a finite number in 0..1, got {raw!r}, which is text (quoted), not a number")
    written = repr(raw) if isinstance(raw, float) else raw
    try:
        return parse_tolerance(written, key.replace("_", "-"))
    except UsageError:
        raise ConfigError(f"{where}: [gate] {key} must be a finite number in 0..1, got {raw!r}") from None


def gate_from(
    table: Mapping[str, Any] | None,
    overrides: Mapping[str, object] | None = None,
    *,
    kind: str = "prompts",
    where: str = "evalkit.toml",
) -> tuple[Tolerances, GateSettings]:
    """The tolerances and gate settings of a run of ``kind`` (``prompts`` or ``retrieval``):
    ``overrides`` (the command line's values by key, ``None`` where not given) over ``[gate]``
    (``table``, already checked for unknown keys) over the defaults.

    A bad value in the table is a :class:`ConfigError` naming ``where``; a bad override the
    command line's own :class:`UsageError` (the same message ``--max-pass-rate-drop 2`` gives).
    """
    table = table or {}
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    keys = PROMPT_TOLERANCE_KEYS if kind == "prompts" else RETRIEVAL_TOLERANCE_KEYS
    values: dict[str, Fraction | None] = {}
    for key, field in keys.items():
        if key in given:
            values[field] = parse_tolerance(given[key], key.replace("_", "-"))
        elif key in table:
            values[field] = _tolerance(table[key], key, where)
    tolerances = Tolerances(**values)

    def chosen(key: str, check: Any, default: Any) -> Any:
        if key in given:
            return check(given[key], f"--{key.replace('_', '-')}" if key != "method" else "--gate")
        if key in table:
            try:
                if key in ("alpha", "max_regressed_cases"):  # a TOML number, never text that spells one
                    return check(table[key], f"[gate] {key}", text=False)
                return check(table[key], f"[gate] {key}")
            except UsageError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        return default

    settings = GateSettings(
        method=chosen("method", check_method, GATE_METHODS[0]),
        alpha=chosen("alpha", check_alpha, DEFAULT_ALPHA),
        max_regressed_cases=chosen("max_regressed_cases", check_regressed_cases, None),
        quarantine=chosen("quarantine", check_quarantine, ()),
    )
    return tolerances, settings


