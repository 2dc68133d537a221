"""A run against its baseline: the comparison (aggregate tolerances, per-case flips and their
weight, on the cases both runs measured the same way) and the verdict that carries it.

:func:`compare` and :func:`compare_pairs` are pure: two runs (or their matched cases) in, a
:class:`Comparison` out. The :class:`Verdict` says what became of a run — ``baseline``,
``no_regression``, ``regressed``, ``not_comparable`` (with the reason) or ``pending`` — for
prompt and retrieval runs alike; :mod:`evalkit.run.decide` finds the baseline and decides it.

A comparison splits the two runs' cases by set version (:mod:`evalkit.set_versions`): *unchanged*
cases (in both runs, same fingerprint) carry the gate — the pass-rate and mean-score deltas, the
per-case regressions and the McNemar test; *added*, *edited* and *removed* cases are reported apart
and never count as a regression. ``--fail-on-new-failures`` additionally fails the gate when an
added or edited case fails (:attr:`Comparison.new_failures`).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction

import attrs

from .runs import CaseResult, Run
from .stats import mcnemar_exact_p
from .storage.values import (
    BASELINE,
    NO_REGRESSION,
    NOT_COMPARABLE,
    PENDING,
    REGRESSED,
    VERDICT_WORDS,
    Acceptance,
    CaseMark,
    CasePair,
)
from .tolerance import Tolerances
from .wording import counted

__all__ = [
    "BASELINE",
    "NOT_COMPARABLE",
    "NO_REGRESSION",
    "PENDING",
    "REGRESSED",
    "VERDICT_WORDS",
    "Comparability",
    "Comparison",
    "EditedCase",
    "Verdict",
    "case_pairs",
    "compare",
    "compare_pairs",
    "exact_score",
    "mcnemar_exact_p",
    "verdict_of",
]


def exact_score(value: float) -> Fraction:
    """A stored float score as the small fraction it came from (1/3 stays 1/3, 0.7 stays 7/10)."""
    return Fraction(value).limit_denominator(1_000_000)


@attrs.frozen
class EditedCase:
    """A case whose content (prompt, system prompt, assertions, reference — or a question's text,
    expected ids, form) changed between the runs, with its result in each."""

    case_id: str
    baseline_passed: bool
    passed: bool
    baseline_score: float
    score: float


@attrs.frozen
class Comparison:
    """The verdict of one run against its baseline, complete enough for any report to render.

    The gate is computed on :attr:`compared_cases`: the cases present in both runs whose content
    did not change (and that the judge did not disagree with itself on).

    * ``pass_rate_delta`` / ``mean_score_delta``: run minus baseline over the compared cases,
      exactly; ``*_regressed`` when the drop exceeds its tolerance (a drop equal to it passes).
      ``baseline_pass_rate``, ``pass_rate``, ``baseline_mean_score`` and ``mean_score`` are the
      four sides of those deltas.
    * ``regressed_cases``: compared cases that passed in the baseline and fail now (listed first
      in every report); ``fixed_cases``: failed then, pass now; ``still_failing``: fail in both.
    * ``mcnemar_p``: the exact two-sided McNemar p-value of regressed versus fixed cases.
    * ``added_cases`` (with ``added_failing``, those of them that fail), ``edited_cases`` (with
      their old and new result) and ``removed_cases``: the set changed — reported apart, never a
      regression. ``fingerprints_known`` is false when either run was stored before case
      fingerprints were kept: every case present in both then counts as unchanged.
    * ``unstable_cases``: cases the judge disagreed with itself on, in either run: left out of the gate.
    """

    baseline_id: str
    pass_rate_delta: Fraction
    mean_score_delta: Fraction
    pass_rate_regressed: bool
    mean_score_regressed: bool
    regressed_cases: tuple[str, ...]
    fixed_cases: tuple[str, ...]
    still_failing: tuple[str, ...]
    added_cases: tuple[str, ...]
    removed_cases: tuple[str, ...]
    mcnemar_p: float
    #: Cases the judge disagreed with itself on, in either run: left out of both sides.
    unstable_cases: tuple[str, ...] = ()
    edited_cases: tuple[EditedCase, ...] = ()
    added_failing: tuple[str, ...] = ()
    compared_cases: tuple[str, ...] = ()
    baseline_pass_rate: Fraction = Fraction(0)
    pass_rate: Fraction = Fraction(0)
    baseline_mean_score: Fraction = Fraction(0)
    mean_score: Fraction = Fraction(0)
    fingerprints_known: bool = True

    @property
    def regressed(self) -> bool:
        """True when either aggregate dropped beyond its tolerance."""
        return self.pass_rate_regressed or self.mean_score_regressed

    @property
    def set_changed(self) -> bool:
        """True when a case was added, edited or removed between the runs."""
        return bool(self.added_cases or self.edited_cases or self.removed_cases)

    @property
    def edited_failing(self) -> tuple[str, ...]:
        """Edited cases that fail now."""
        return tuple(e.case_id for e in self.edited_cases if not e.passed)

    @property
    def new_failures(self) -> tuple[str, ...]:
        """Added or edited cases that fail now: what ``--fail-on-new-failures`` gates on."""
        return (*self.added_failing, *self.edited_failing)

    def summary(
        self, pass_name: str = "pass rate", mean_name: str = "mean score", mean_in_points: bool = False, unit: str = "case"
    ) -> str:
        """One sentence, as every report prints it; retrieval names the rates after hits, in points,
        and its cases questions (``unit``).

        When the set changed, the sentence says the gate was computed on the unchanged cases.
        """

        def mean(delta: Fraction, signed: str) -> str:
            return f"{float(delta) * 100:{signed}.1f} pp" if mean_in_points else f"{float(delta):{signed}.3f}"

        scope = ""
        if self.set_changed:
            scope = (
                f" on the {counted(len(self.compared_cases), 'unchanged ' + unit)} "
                f"({len(self.added_cases)} added, {len(self.edited_cases)} edited, {len(self.removed_cases)} removed "
                "are reported apart)"
            )
        if not self.regressed:
            return (
                f"No regression: {pass_name} {float(self.pass_rate_delta) * 100:+.1f} pp, "
                f"{mean_name} {mean(self.mean_score_delta, '+')} versus run {self.baseline_id}{scope}."
            )
        parts = []
        if self.pass_rate_regressed:
            parts.append(f"{pass_name} dropped {float(-self.pass_rate_delta) * 100:.1f} pp")
        if self.mean_score_regressed:
            parts.append(f"{mean_name} dropped {mean(-self.mean_score_delta, '')}")
        return f"Regression: {' and '.join(parts)} beyond the configured tolerance (baseline run {self.baseline_id}){scope}."


def _rate_and_mean(passed: int, scores: Sequence[float]) -> tuple[Fraction, Fraction]:
    if not scores:
        return Fraction(0), Fraction(0)
    return Fraction(passed, len(scores)), exact_score(math.fsum(scores) / len(scores))


def _mark(case: CaseResult, position: int) -> CaseMark:
    return CaseMark(case.passed, case.score, case.unstable, position, case.fingerprint)


def case_pairs(current: Run, baseline: Run) -> Iterator[CasePair]:
    """The two runs' cases matched by id, in the order :meth:`StreamedCases.paired_cases` gives
    (the current run's order, then the baseline's cases it lacks); a repeated id counts once,
    at its first place, with its last result."""
    before = baseline.case_map()
    after = current.case_map()
    positions = {}
    for position, case in enumerate(baseline.cases):
        positions.setdefault(case.case_id, position)
    for position, case_id in enumerate(dict.fromkeys(c.case_id for c in current.cases)):
        old = before.get(case_id)
        yield CasePair(case_id, _mark(after[case_id], position), None if old is None else _mark(old, positions[case_id]))
    for case_id in dict.fromkeys(c.case_id for c in baseline.cases):
        if case_id not in after:
            yield CasePair(case_id, None, _mark(before[case_id], positions[case_id]))


def compare(current: Run, baseline: Run, tolerances: Tolerances) -> Comparison:
    """Compare ``current`` with ``baseline``; a drop equal to its tolerance is accepted.

    Only the unchanged cases present in both runs carry the gate (see the module docstring). A
    case the judge disagreed with itself on (``CaseResult.unstable``) in either run is left out of
    both runs' aggregates and of the flipped cases, so a coin-flip verdict cannot flip a gate.
    """
    return compare_pairs(current, baseline, case_pairs(current, baseline), tolerances)


def compare_pairs(current: Run, baseline: Run, pairs: Iterable[CasePair], tolerances: Tolerances) -> Comparison:
    """:func:`compare` over the runs' cases given as matched pairs, read once, in the order
    :func:`case_pairs` gives them (a store streams them: :class:`~evalkit.storage.StreamedCases`).

    ``current`` and ``baseline`` give the run ids and whether each kept its cases' fingerprints
    (:attr:`~evalkit.runs.Run.fingerprints_kept`); the fingerprints themselves come with the pairs
    (:attr:`~evalkit.storage.CaseMark.fingerprint`), and the runs' case lists are not read. A case
    whose fingerprint is missing on either side counts as unchanged. What is kept is what the verdict and its report name (case ids of the flipped, edited,
    added, removed and unstable cases, and of the compared ones) plus one float per compared case.
    """
    compared: list[str] = []
    before_scores: array[float] = array("d")
    after_scores: array[float] = array("d")
    before_passed = after_passed = 0
    regressed: list[str] = []
    fixed: list[str] = []
    still: list[str] = []
    edited: list[EditedCase] = []
    added: list[str] = []
    added_failing: list[str] = []
    removed: list[str] = []
    unstable_now: list[str] = []
    unstable_before: list[tuple[int, str]] = []
    for pair in pairs:
        case_id, now, then = pair.case_id, pair.current, pair.baseline
        if now is not None and now.unstable:
            unstable_now.append(case_id)
        if then is not None and then.unstable:
            unstable_before.append((then.position, case_id))
        if now is None:
            assert then is not None
            removed.append(case_id)
            continue
        if then is None:
            added.append(case_id)
            if not now.passed:
                added_failing.append(case_id)
            continue
        a, b = then.fingerprint, now.fingerprint
        if a is not None and b is not None and a != b:
            edited.append(EditedCase(case_id, then.passed, now.passed, then.score, now.score))
            continue
        if now.unstable or then.unstable:
            continue
        compared.append(case_id)
        before_scores.append(then.score)
        after_scores.append(now.score)
        before_passed += then.passed
        after_passed += now.passed
        if then.passed and not now.passed:
            regressed.append(case_id)
        elif not then.passed and now.passed:
            fixed.append(case_id)
        elif not then.passed and not now.passed:
            still.append(case_id)
    unstable_before.sort()
    unstable = tuple(dict.fromkeys([*unstable_now, *(case_id for _, case_id in unstable_before)]))
    baseline_rate, baseline_mean = _rate_and_mean(before_passed, before_scores)
    current_rate, current_mean = _rate_and_mean(after_passed, after_scores)
    pass_delta = current_rate - baseline_rate
    mean_delta = current_mean - baseline_mean
    return Comparison(
        baseline_id=baseline.id,
        pass_rate_delta=pass_delta,
        mean_score_delta=mean_delta,
        pass_rate_regressed=-pass_delta > tolerances.max_pass_rate_drop,
        mean_score_regressed=-mean_delta > tolerances.max_mean_score_drop,
        regressed_cases=tuple(regressed),
        fixed_cases=tuple(fixed),
        still_failing=tuple(still),
        added_cases=tuple(added),
        removed_cases=tuple(removed),
        mcnemar_p=mcnemar_exact_p(len(regressed), len(fixed)),
        unstable_cases=unstable,
        edited_cases=tuple(edited),
        added_failing=tuple(added_failing),
        compared_cases=tuple(compared),
        baseline_pass_rate=baseline_rate,
        pass_rate=current_rate,
        baseline_mean_score=baseline_mean,
        mean_score=current_mean,
        fingerprints_known=baseline.fingerprints_kept and current.fingerprints_kept,
    )


@attrs.frozen
class Comparability:
    """What a kind's own check found about comparing a run with the baseline it was given.

    Prompt runs need no check beyond their scope (always comparable). A retrieval run is compared
    only when it measured the same benchmark as its baseline: ``label`` is its provenance word
    (``baseline``, ``comparable``, ``mismatch`` or ``unknown``), ``reason`` why it is not
    comparable, ``notes`` what a comparison must say beside it (the questions changed, the
    treatment changed) and ``treatment_changed`` whether the variant (model, chunking, pipeline)
    differs from the baseline's.
    """

    comparable: bool = True
    reason: str | None = None
    label: str | None = None
    notes: tuple[str, ...] = ()
    treatment_changed: bool = False


@attrs.frozen
class Verdict:
    """What became of a run, for prompt and retrieval runs alike.

    ``state`` is one of :data:`VERDICT_WORDS`: ``baseline`` (the first comparable run of its
    scope), ``no_regression`` or ``regressed`` (compared: ``comparison`` is set), ``not_comparable``
    (stored, not compared: ``reason`` says why) or ``pending`` (a shard finished its slice; the run
    is not complete, so there is no verdict yet). ``baseline`` is the run it was (or would have
    been) compared with, ``acceptance`` set when the run became its scope's accepted baseline, and
    ``comparability`` what the kind's own check found (see :class:`Comparability`).
    """

    state: str = attrs.field(validator=attrs.validators.in_(VERDICT_WORDS))
    reason: str | None = None
    comparison: Comparison | None = None
    baseline: Run | None = None
    acceptance: Acceptance | None = None
    comparability: Comparability | None = None

    @property
    def regressed(self) -> bool:
        """True when compared and an aggregate dropped beyond its tolerance."""
        return self.comparison is not None and self.comparison.regressed

    @property
    def new_failures(self) -> tuple[str, ...]:
        """Added or edited cases that fail now (empty when not compared)."""
        return self.comparison.new_failures if self.comparison is not None else ()

    @property
    def baseline_id(self) -> str | None:
        """The id of the run this one was (or would have been) compared with."""
        return self.baseline.id if self.baseline is not None else None

    @property
    def notes(self) -> tuple[str, ...]:
        """What the comparison must say beside it (see :class:`Comparability`)."""
        return self.comparability.notes if self.comparability is not None else ()


def verdict_of(comparison: Comparison, baseline: Run, comparability: Comparability | None = None) -> Verdict:
    """The verdict of a run compared with ``baseline``: ``regressed`` or ``no_regression``."""
    state = REGRESSED if comparison.regressed else NO_REGRESSION
    return Verdict(state, comparison=comparison, baseline=baseline, comparability=comparability)
