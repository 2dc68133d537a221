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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction

import attrs

from .comparison_statistics import MetricSpec, PairedColumn, decide_gate, measure
from .gate_settings import GateSettings
from .runs import CaseResult, Run, RunKind
from .stats import GateDecision, GateState, MetricComparison, NoiseEstimate, StatisticsSettings, mcnemar_exact_p
from .storage.values import (
    BASELINE,
    INCONCLUSIVE,
    NO_REGRESSION,
    NOT_COMPARABLE,
    PASSES,
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
    "INCONCLUSIVE",
    "NOT_COMPARABLE",
    "NO_REGRESSION",
    "PENDING",
    "REGRESSED",
    "VERDICT_WORDS",
    "Comparability",
    "Comparison",
    "EditedCase",
    "QuarantinedCase",
    "Verdict",
    "different_k",
    "metric_specs",
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
class QuarantinedCase:
    """A case the gate's ``quarantine`` keeps out of the gate, with its result in each run
    (``None`` where the run does not have it): reported, never gated."""

    case_id: str
    baseline_passed: bool | None
    passed: bool | None


def _retrieval_k(run: Run) -> int | None:
    provenance = run.provenance if isinstance(run.provenance, dict) else {}
    k = provenance.get("k")
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def different_k(run: Run, baseline: Run | None) -> tuple[int, int] | None:
    """``(baseline's k, run's k)`` when both are retrieval runs that declare different cut-offs
    (their MRR@k, recall@k and nDCG@k are then different measures), else ``None``."""
    if baseline is None or run.kind is not RunKind.RETRIEVAL or baseline.kind is not RunKind.RETRIEVAL:
        return None
    before, after = _retrieval_k(baseline), _retrieval_k(run)
    return (before, after) if before is not None and after is not None and before != after else None


def different_corpora(run: Run, baseline: Run | None) -> tuple[str, str] | None:
    """``(baseline's corpus revision, run's)`` when both are retrieval runs that declared one and
    the two differ (a document one corpus lacks is a miss in that run only), else ``None``.
    Revisions are validated labels (bounded ASCII), safe to quote."""
    if baseline is None or run.kind is not RunKind.RETRIEVAL or baseline.kind is not RunKind.RETRIEVAL:
        return None
    before, after = (
        r.provenance.get("corpus_revision") if isinstance(r.provenance, Mapping) else None for r in (baseline, run)
    )
    return (before, after) if isinstance(before, str) and isinstance(after, str) and before != after else None


def metric_specs(run: Run, tolerances: Tolerances, baseline: Run | None = None) -> tuple[MetricSpec, ...]:
    """The metrics a comparison of ``run`` measures, with the tolerances that gate them: a prompt
    run's pass rate and mean score; a retrieval run's hit@1, hit@3 (its pass rate and mean score),
    MRR@k, recall@k and nDCG@k (the last three gated only when their tolerance is set). Against a
    ``baseline`` measured at another k (:func:`different_k`) only hit@1 and hit@3 are compared:
    MRR@10 against MRR@5 was reported, and gated, as a drop of MRR@5."""
    if run.kind is RunKind.RETRIEVAL:
        k = _retrieval_k(run)
        at = str(k) if k is not None else "k"
        hits = (
            MetricSpec("hit_at_1", "top-1 hit rate", True, True, tolerances.max_pass_rate_drop),
            MetricSpec("hit_at_3", "top-3 hit rate", True, True, tolerances.max_mean_score_drop),
        )
        if different_k(run, baseline) is not None:
            return hits
        return (
            *hits,
            MetricSpec("mrr_at_k", f"MRR@{at}", False, False, tolerances.max_mrr_drop),
            MetricSpec("recall_at_k", f"recall@{at}", False, False, tolerances.max_recall_drop),
            MetricSpec("ndcg_at_k", f"nDCG@{at}", False, False, tolerances.max_ndcg_drop),
        )
    return (
        MetricSpec("pass_rate", "pass rate", True, True, tolerances.max_pass_rate_drop),
        MetricSpec("mean_score", "mean score", False, False, tolerances.max_mean_score_drop),
    )


#: Where each retrieval metric of a case is read from (hit@1 is its pass, hit@3 its score).
_RETRIEVAL_MEASURES = {"mrr_at_k": "reciprocal_rank_at_k", "recall_at_k": "recall_at_k", "ndcg_at_k": "ndcg_at_k"}


def _value(name: str, mark: CaseMark, fractions: bool) -> float | None:
    """The value of metric ``name`` of one case (``fractions``: a prompt case's pass value is its
    pass fraction); ``None`` when the case does not carry it (stored before measures were kept)."""
    if name == "pass_rate":
        return mark.pass_fraction if fractions else (1.0 if mark.passed else 0.0)
    if name in ("mean_score", "hit_at_3"):
        return mark.score
    if name == "hit_at_1":
        return 1.0 if mark.passed else 0.0
    value = (mark.measures or {}).get(_RETRIEVAL_MEASURES[name])
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None
    return float(value)


@attrs.frozen
class Comparison:
    """The verdict of one run against its baseline, complete enough for any report to render.

    The gate is computed on :attr:`compared_cases`: the cases present in both runs whose content
    did not change (and that the judge did not disagree with itself on).

    * ``pass_rate_delta`` / ``mean_score_delta``: run minus baseline over the compared cases,
      exactly; ``*_regressed`` when the drop exceeds its tolerance (a drop equal to it passes).
      ``baseline_pass_rate``, ``pass_rate``, ``baseline_mean_score`` and ``mean_score`` are the
      four sides of those deltas. When either run answered its cases several times (``--repeats``),
      a pass rate is the mean of the cases' pass fractions.
    * ``regressed_cases``: compared cases that passed in the baseline and fail now (listed first
      in every report); ``fixed_cases``: failed then, pass now; ``still_failing``: fail in both.
    * ``mcnemar_p``: the exact two-sided McNemar p-value of regressed versus fixed cases.
    * ``added_cases`` (with ``added_failing``, those of them that fail), ``edited_cases`` (with
      their old and new result) and ``removed_cases``: the set changed — reported apart, never a
      regression. ``fingerprints_known`` is false when either run was stored before case
      fingerprints were kept: every case present in both then counts as unchanged.
    * ``unstable_cases``: cases the judge disagreed with itself on, in either run: left out of the
      gate under the ``tolerance`` method; under ``paired`` they are compared with the share of
      the judge's verdicts that passed (their uncertainty counts, see :attr:`CaseMark.pass_fraction`).
    * ``quarantined_cases``: cases the gate's ``quarantine`` names, with their results: reported,
      never gated.
    * ``statistics``: every metric's paired figures (:class:`~evalkit.stats.MetricComparison`: the
      delta with its 95 % interval, p-values, minimum detectable drop), in the order of
      ``metrics`` (their labels and tolerances; a metric without a tolerance is not gated).
    * ``method`` (``tolerance`` or ``paired``), ``alpha``, ``decision`` (the paired gate's
      :class:`~evalkit.stats.GateDecision`), ``max_regressed_cases`` and ``repeats`` (how many
      answers each compared case of this run averages; ``baseline_repeats``, of the baseline):
      how :attr:`state` was decided.
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
    quarantined_cases: tuple[QuarantinedCase, ...] = ()
    #: The gate's quarantined ids that name no case of either run (a misspelt id), each with the
    #: case ids close to it (best first; none when none is): they keep nothing out of the gate.
    unmatched_quarantine: tuple[tuple[str, tuple[str, ...]], ...] = ()
    metrics: tuple[MetricSpec, ...] = ()
    statistics: tuple[MetricComparison, ...] = ()
    method: str = "tolerance"
    alpha: float = 0.05
    decision: GateDecision | None = None
    max_regressed_cases: int | None = None
    repeats: int = 1
    #: How many answers each of the baseline's compared cases averages (``repeats`` is this run's).
    baseline_repeats: int = 1
    #: Gated metrics beyond pass rate and mean score that dropped beyond their tolerance (the
    #: ``tolerance`` method; a retrieval run's MRR@k, recall@k, nDCG@k).
    other_regressed: tuple[str, ...] = ()

    @property
    def too_many_regressed_cases(self) -> bool:
        """True when more cases regressed than ``max_regressed_cases`` allows."""
        return self.max_regressed_cases is not None and len(self.regressed_cases) > self.max_regressed_cases

    @property
    def state(self) -> str:
        """``regressed``, ``no_regression`` or — under the paired gate — ``inconclusive``."""
        if self.too_many_regressed_cases:
            return REGRESSED
        if self.method != "paired":
            return (
                REGRESSED
                if self.pass_rate_regressed or self.mean_score_regressed or self.other_regressed
                else NO_REGRESSION
            )
        if self.decision is None:  # nothing compared: the set cannot tell
            return INCONCLUSIVE if not self.compared_cases else NO_REGRESSION
        return {GateState.REGRESSED: REGRESSED, GateState.NO_REGRESSION: NO_REGRESSION}.get(
            self.decision.state, INCONCLUSIVE
        )

    @property
    def regressed(self) -> bool:
        """True when the gate found a regression (a gated figure dropped beyond its tolerance — under
        the paired gate, significantly — or more cases regressed than allowed)."""
        return self.state == REGRESSED

    @property
    def inconclusive(self) -> bool:
        """True when the paired gate cannot tell (see :attr:`state`)."""
        return self.state == INCONCLUSIVE

    def statistic(self, name: str) -> MetricComparison | None:
        """The figures of metric ``name`` (``None`` when it was not measured)."""
        return next((m for m in self.statistics if m.name == name), None)

    def spec(self, name: str) -> MetricSpec | None:
        """The label and tolerance of metric ``name``."""
        return next((m for m in self.metrics if m.name == name), None)

    def noise_warnings(self, unit: str = "case") -> tuple[str, ...]:
        """One sentence per gated metric whose tolerance is below the drop this set can detect: the
        set cannot tell such a drop from noise; and what would (more cases, or ``--repeats``)."""
        from .noise import noise_warning

        warnings = []
        for spec in self.metrics:
            measured = self.statistic(spec.name)
            if spec.gated and measured is not None and measured.tolerance_below_detectable:
                warning = noise_warning(spec, measured, unit, self.repeats)
                if warning is not None:  # None: the baseline's rate cannot drop by the tolerance
                    warnings.append(warning)
        return tuple(warnings)

    def warnings(self, unit: str = "case") -> tuple[str, ...]:
        """Every warning a report of the comparison gives: :meth:`noise_warnings`, then one per
        quarantined id that names no case of either run (it keeps nothing out of the gate)."""
        from .wording import quoted, suggestion

        unmatched = [
            f"warning: [gate] quarantine names {quoted(case_id)}, which is no {unit} of this run or its baseline, "
            f"so it keeps nothing out of the gate.{suggestion(close)}"
            for case_id, close in self.unmatched_quarantine
        ]
        return (*self.noise_warnings(unit), *unmatched)

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
        self,
        pass_name: str = "pass rate",
        mean_name: str = "mean score",
        mean_in_points: bool = False,
        unit: str = "case",
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
        state = self.state
        if not self.compared_cases and state in (NO_REGRESSION, INCONCLUSIVE):
            # no pair to measure: a delta here (+0.0 pp) would be a figure of no case at all
            word = "No regression" if state == NO_REGRESSION else "Inconclusive"
            apart = f"{len(self.added_cases)} added, {len(self.edited_cases)} edited, {len(self.removed_cases)} removed"
            apart += f", {len(self.quarantined_cases)} quarantined" if self.quarantined_cases else ""
            apart += f", {len(self.unstable_cases)} the judge disagreed on" if self.unstable_cases else ""
            return f"{word}: no {unit} was compared with run {self.baseline_id}, so nothing was measured ({apart} are reported apart)."
        if state == NO_REGRESSION:
            return (
                f"No regression: {pass_name} {float(self.pass_rate_delta) * 100:+.1f} pp, "
                f"{mean_name} {mean(self.mean_score_delta, '+')} versus run {self.baseline_id}{scope}."
            )
        if state == INCONCLUSIVE:
            return (
                f"Inconclusive: {pass_name} {float(self.pass_rate_delta) * 100:+.1f} pp, "
                f"{mean_name} {mean(self.mean_score_delta, '+')} versus run {self.baseline_id}{scope}; "
                f"the set cannot tell such a change from noise{self._smallest_detectable()}."
            )
        parts = []
        if self.pass_rate_regressed:
            parts.append(f"{pass_name} dropped {float(-self.pass_rate_delta) * 100:.1f} pp")
        if self.mean_score_regressed:
            parts.append(f"{mean_name} dropped {mean(-self.mean_score_delta, '')}")
        for name in self._other_regressed():
            measured, spec = self.statistic(name), self.spec(name)
            if measured is not None and spec is not None:
                parts.append(f"{spec.label} dropped {-measured.delta:.3f}")
        how = "significantly, " if self.method == "paired" and parts else ""
        if not parts and self.too_many_regressed_cases:
            return (
                f"Regression: {counted(len(self.regressed_cases), unit)} passed in the baseline and fail now, more than "
                f"the {self.max_regressed_cases} max_regressed_cases allows (baseline run {self.baseline_id}){scope}."
            )
        return f"Regression: {' and '.join(parts)} {how}beyond the configured tolerance (baseline run {self.baseline_id}){scope}."

    def _other_regressed(self) -> tuple[str, ...]:
        if self.method != "paired" or self.decision is None:
            return self.other_regressed
        first_two = {m.name for m in self.metrics[:2]}
        return tuple(m.name for m in self.decision.regressed if m.name not in first_two)

    def _smallest_detectable(self) -> str:
        """`` (the smallest drop of pass rate it detects is 33.5 pp)`` — of the first gated metric
        whose tolerance it cannot keep, else of the first gated metric."""
        gated = [(spec, self.statistic(spec.name)) for spec in self.metrics if spec.gated]
        gated = [(spec, m) for spec, m in gated if m is not None]
        if not gated:
            return ""
        spec, measured = next(((s, m) for s, m in gated if m.tolerance_below_detectable), gated[0])
        drop = measured.detectable.drop
        shown = f"{drop * 100:.1f} pp" if spec.percent else f"{drop:.3f}"
        return f" (the smallest drop of {spec.label} it detects is {shown})"


def _exact(value: float) -> Fraction:
    """A pass fraction (``passes / answers``) as the exact fraction it stands for."""
    return Fraction(value).limit_denominator(1_000_000)


def _rate_and_mean(passed: int, scores: Sequence[float]) -> tuple[Fraction, Fraction]:
    if not scores:
        return Fraction(0), Fraction(0)
    return Fraction(passed, len(scores)), exact_score(math.fsum(scores) / len(scores))


def _mark(case: CaseResult, position: int) -> CaseMark:
    return CaseMark(case.passed, case.score, case.unstable, position, case.fingerprint, case.measures)


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
        yield CasePair(
            case_id, _mark(after[case_id], position), None if old is None else _mark(old, positions[case_id])
        )
    for case_id in dict.fromkeys(c.case_id for c in baseline.cases):
        if case_id not in after:
            yield CasePair(case_id, None, _mark(before[case_id], positions[case_id]))


def compare(current: Run, baseline: Run, tolerances: Tolerances, gate: GateSettings | None = None) -> Comparison:
    """Compare ``current`` with ``baseline``; a drop equal to its tolerance is accepted.

    Only the unchanged cases present in both runs carry the gate (see the module docstring). A
    case the judge disagreed with itself on (``CaseResult.unstable``) in either run is left out of
    both runs' aggregates and of the flipped cases under the ``tolerance`` method, so a coin-flip
    verdict cannot flip a gate; the ``paired`` method counts it with its judge's pass share.
    """
    return compare_pairs(current, baseline, case_pairs(current, baseline), tolerances, gate)


def compare_pairs(
    current: Run, baseline: Run, pairs: Iterable[CasePair], tolerances: Tolerances, gate: GateSettings | None = None
) -> Comparison:
    """:func:`compare` over the runs' cases given as matched pairs, read once, in the order
    :func:`case_pairs` gives them (a store streams them: :class:`~evalkit.storage.StreamedCases`).

    ``current`` and ``baseline`` give the run ids and whether each kept its cases' fingerprints
    (:attr:`~evalkit.runs.Run.fingerprints_kept`); the fingerprints themselves come with the pairs
    (:attr:`~evalkit.storage.CaseMark.fingerprint`), and the runs' case lists are not read. A case
    whose fingerprint is missing on either side counts as unchanged. What is kept is what the verdict and its report name (case ids of the flipped, edited,
    added, removed and unstable cases, and of the compared ones) plus one float per metric and run
    for each compared case, from which :mod:`evalkit.comparison_statistics` computes each
    metric's uncertainty and, under ``gate.method = "paired"``, the decision.
    """
    gate = gate or GateSettings()
    paired = gate.paired
    quarantine = frozenset(gate.quarantine)
    specs = metric_specs(current, tolerances, baseline)
    columns = {spec.name: PairedColumn() for spec in specs}
    column_list = [(spec.name, columns[spec.name]) for spec in specs]
    prompts = current.kind is not RunKind.RETRIEVAL
    quarantined: list[QuarantinedCase] = []
    repeats_seen = baseline_repeats = 1
    within = _WithinCaseNoise()
    compared: list[str] = []
    before_scores: array[float] = array("d")
    after_scores: array[float] = array("d")
    before_passed = after_passed = 0
    before_fractions = after_fractions = Fraction(0)  # the pass fractions' sums: a repeated run's pass rate
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
        if case_id in quarantine:
            quarantined.append(
                QuarantinedCase(case_id, None if then is None else then.passed, None if now is None else now.passed)
            )
            continue
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
        if (now.unstable or then.unstable) and not paired:
            continue
        compared.append(case_id)
        repeats_seen = max(repeats_seen, now.repeats)
        baseline_repeats = max(baseline_repeats, then.repeats)
        within.add(now)
        for name, column in column_list:
            before_value, after_value = _value(name, then, prompts), _value(name, now, prompts)
            if before_value is not None and after_value is not None:
                column.add(before_value, after_value)
        before_scores.append(then.score)
        after_scores.append(now.score)
        before_passed += then.passed
        after_passed += now.passed
        if prompts:
            before_fractions += _exact(then.pass_fraction)
            after_fractions += _exact(now.pass_fraction)
        if then.passed and not now.passed:
            regressed.append(case_id)
        elif not then.passed and now.passed:
            fixed.append(case_id)
        elif not then.passed and not now.passed:
            still.append(case_id)
    unstable_before.sort()
    unstable = tuple(dict.fromkeys([*unstable_now, *(case_id for _, case_id in unstable_before)]))
    unmatched = _unmatched_quarantine(
        gate.quarantine, quarantined, (compared, [e.case_id for e in edited], added, removed, unstable)
    )
    baseline_rate, baseline_mean = _rate_and_mean(before_passed, before_scores)
    current_rate, current_mean = _rate_and_mean(after_passed, after_scores)
    if prompts and compared and max(repeats_seen, baseline_repeats) > 1:
        # answered several times: a case's result is its pass fraction, and the pass rate both gates
        # read is their mean (the majority of a case's answers is only its table's pass/FAIL)
        baseline_rate, current_rate = before_fractions / len(compared), after_fractions / len(compared)
    pass_delta = current_rate - baseline_rate
    mean_delta = current_mean - baseline_mean
    # the randomization test is exact where the differences take few sizes (pass/fail scores, pass
    # fractions of a few answers, hit@k), where the t test is not; large sets use the t test
    settings = StatisticsSettings(alpha=gate.alpha, test="sign_flip")
    noise = {specs[0].name: within.estimate()} if prompts else {}
    statistics = tuple(
        m
        for m in (
            measure(spec, columns[spec.name], settings, repeats=repeats_seen, noise=noise.get(spec.name))
            for spec in specs
        )
        if m is not None
    )
    decision = decide_gate(statistics, specs, gate.alpha) if paired else None
    if paired:
        states = {m.name: m.state for m in decision.metrics} if decision is not None else {}
        pass_regressed = states.get(specs[0].name) is GateState.REGRESSED
        mean_regressed = states.get(specs[1].name) is GateState.REGRESSED
        other: tuple[str, ...] = ()
    else:
        pass_regressed = -pass_delta > tolerances.max_pass_rate_drop
        mean_regressed = -mean_delta > tolerances.max_mean_score_drop
        other = _beyond_tolerance(specs[2:], statistics)
    return Comparison(
        baseline_id=baseline.id,
        pass_rate_delta=pass_delta,
        mean_score_delta=mean_delta,
        pass_rate_regressed=pass_regressed,
        mean_score_regressed=mean_regressed,
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
        quarantined_cases=tuple(quarantined),
        unmatched_quarantine=unmatched,
        metrics=specs,
        statistics=statistics,
        method=gate.method,
        alpha=gate.alpha,
        decision=decision,
        max_regressed_cases=gate.max_regressed_cases,
        repeats=repeats_seen,
        baseline_repeats=baseline_repeats,
        other_regressed=other,
    )


class _WithinCaseNoise:
    """The pooled within-case variance of the run's pass/fail answers, from each repeated case's
    passes (``c`` of ``N`` answers: sample variance ``c (N − c) / (N (N − 1))``): the noise repeats
    average away, the best measure of an unchanged model's noise a single run gives
    (:func:`~evalkit.stats.noise_from_repeats`)."""

    def __init__(self) -> None:
        self.squares = 0.0
        self.freedom = 0
        self.reciprocal = 0.0
        self.cases = 0

    def add(self, mark: CaseMark) -> None:
        answers = mark.repeats
        if answers < 2:
            return
        passes = (mark.measures or {}).get(PASSES)
        if not isinstance(passes, (int, float)) or isinstance(passes, bool) or not 0 <= passes <= answers:
            return
        self.squares += passes * (answers - passes) / answers  # the sum of squared deviations
        self.freedom += answers - 1
        self.reciprocal += 1 / answers
        self.cases += 1

    def estimate(self) -> NoiseEstimate | None:
        if not self.cases:
            return None
        return NoiseEstimate(
            2 * self.squares / self.freedom, max(1, round(self.cases / self.reciprocal)), "repeats", self.cases
        )


def _beyond_tolerance(specs: Sequence[MetricSpec], statistics: Sequence[MetricComparison]) -> tuple[str, ...]:
    """The gated metrics (beyond the first two) whose drop exceeds their tolerance, the
    ``tolerance`` method's rule: the two means compared as the small fractions they came from."""
    measured = {m.name: m for m in statistics}
    beyond = []
    for spec in specs:
        m = measured.get(spec.name)
        if (
            spec.tolerance is not None
            and m is not None
            and exact_score(m.baseline) - exact_score(m.value) > spec.tolerance
        ):
            beyond.append(spec.name)
    return tuple(beyond)


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
    (stored, not compared: ``reason`` says why), ``inconclusive`` (compared under the paired gate,
    which cannot tell) or ``pending`` (a shard finished its slice; the run is not complete, so
    there is no verdict yet). ``baseline`` is the run it was (or would have
    been) compared with, ``acceptance`` set when the run became its scope's accepted baseline, and
    ``comparability`` what the kind's own check found (see :class:`Comparability`).
    """

    state: str = attrs.field(validator=attrs.validators.in_(VERDICT_WORDS))
    reason: str | None = None
    comparison: Comparison | None = None
    baseline: Run | None = None
    acceptance: Acceptance | None = None
    comparability: Comparability | None = None
    #: Why a compared run was not accepted as its scope's baseline (``None``: accepted, or not
    #: compared — the reason says why).
    acceptance_note: str | None = None

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
    """The verdict of a run compared with ``baseline``: ``regressed``, ``no_regression`` or
    (under the paired gate) ``inconclusive``."""
    return Verdict(comparison.state, comparison=comparison, baseline=baseline, comparability=comparability)


def _unmatched_quarantine(
    quarantine: Sequence[str], quarantined: Sequence[QuarantinedCase], seen: Iterable[Sequence[str]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The ids of ``quarantine`` that no pair of the comparison had (``quarantined`` holds those it
    had), each with the case ids of ``seen`` close to it."""
    found = {case.case_id for case in quarantined}
    missing = [case_id for case_id in quarantine if case_id not in found]
    if not missing:
        return ()
    from .wording import close_matches

    ids = [case_id for group in seen for case_id in group]
    return tuple((case_id, tuple(close_matches(case_id, ids))) for case_id in missing)
