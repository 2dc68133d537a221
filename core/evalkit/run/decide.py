"""Deciding a finished run's verdict, once for prompt and retrieval runs: which baseline, comparable
or not, compared, accepted.

::

    settle(run, judging)
      decide    the kind's own problems with the run (a prompt run's grader failed, its yardsticks
                differ, it has no verified identity …) → not_comparable
                the baseline: the chosen --baseline run (of the same scope), else the accepted
                baseline of the run's scope (:mod:`evalkit.baselines`); a store that keeps none →
                not_comparable, with the reason
                incomplete → not_comparable
                the kind's comparability check (retrieval: the benchmark provenance — baseline,
                comparable, mismatch, unknown) → not_comparable when it fails
                no baseline → baseline
                compare (:mod:`evalkit.verdict`): the store pairs the cases a page at a time when
                it streams them; each metric's uncertainty (:mod:`evalkit.comparison_statistics`)
                → no_regression or regressed, or — under the paired gate — inconclusive
      keep      the verdict is stored with the run (state, baseline id, one-line note)
      accept    the first run of its scope, or one significantly better than the accepted run it
                was compared with and worse on no gated metric, becomes the scope's baseline; the
                bar never moves down by itself (a run that passes but is worse is stored, not
                accepted), a lucky run does not move it up, and answers reused from a cache or a
                re-grade never move it; two first runs finishing at once: the loser is decided
                again, against the winner

Where a newcomer finds "compare a run with its baseline": :func:`decide` (and
:func:`evalkit.verdict.compare` for the comparison itself).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import attrs

from ..baselines import scope_mismatch, unreadable_baseline
from ..comparison_statistics import significantly_better
from ..errors import StorageError, StoreFailure
from ..gate_settings import GateSettings
from ..runs import Run, RunStatus
from ..storage.protocols import Capabilities
from ..storage.values import (
    BASELINE,
    NO_REGRESSION,
    NOT_COMPARABLE,
    Acceptance,
    BaselineScope,
    CaseTally,
    StoredVerdict,
)
from ..tolerance import Tolerances
from ..verdict import Comparability, Comparison, Verdict, compare, compare_pairs, verdict_of
from ..wording import argument, counted

__all__ = [
    "Judging",
    "KindRules",
    "acceptance_of",
    "automatic_acceptance",
    "compare_runs",
    "decide",
    "incomplete_reason",
    "keep",
    "recorded_verdict",
    "settle",
    "stored_verdict",
    "streams",
]


class KindRules(Protocol):
    """What one kind of run adds to the one decide step."""

    #: What a case of this kind is called in messages ("case", "question").
    unit: str
    #: The reason a run is recorded as the first baseline of its scope.
    first_run_reason: str

    def run_problem(self, run: Run, judging: Judging) -> str | None:
        """Why the finished ``run`` cannot be compared at all, before any baseline is read."""
        ...

    def missing_reads(self, store: Capabilities) -> str | None:
        """Why this store cannot give this kind of run its baseline (``None``: it can)."""
        ...

    def comparability(self, run: Run, baseline: Run | None) -> Comparability:
        """The kind's own check of the run against the baseline found (``None``: no baseline yet)."""
        ...

    def summary(self, comparison: Comparison) -> str:
        """The comparison's one sentence, in this kind's words."""
        ...

    def stored_note(self, verdict: Verdict) -> str | None:
        """The one-line note a not-compared verdict is stored with."""
        ...


@attrs.frozen
class Judging:
    """What deciding a run needs beside the run: the store, the kind's rules, the tolerances, a
    chosen baseline, the store's count of the run's cases when the caller already has it (a whole
    streamed run: it is not counted again), the caller's gate on new failures, the gate's method
    and settings (:class:`~evalkit.gate_settings.GateSettings`), and whether the run's answers
    were reused (from a cache or a re-grade: such a run is never accepted automatically)."""

    store: Capabilities
    rules: KindRules
    tolerances: Tolerances = attrs.Factory(Tolerances)
    baseline_id: str | None = None
    tally: CaseTally | None = None
    fail_on_new_failures: bool = False
    #: A baseline that is not in the store (``--baseline-file``): compared with instead of any other.
    baseline_run: Run | None = None
    gate: GateSettings = attrs.Factory(GateSettings)
    answers_reused: bool = False
    #: The spending limit that stopped the run before all its cases were asked ("the limit of 2
    #: requests reached"), said in its verdict; ``None``: none did.
    stopped_by: str | None = None


def incomplete_reason(run: Run, unit: str, stopped_by: str | None = None) -> str:
    """Why an unfinished run is not compared: its errored cases, or the spending limit that stopped
    it (``stopped_by``, with its errored cases when it has any)."""
    if stopped_by is None:
        why = counted(run.errored_count, "errored " + unit)
    else:
        why = f"a spending limit stopped it: {stopped_by}"
        if run.errored_count:
            why += f"; {counted(run.errored_count, 'errored ' + unit)}"
    return f"not compared: the run is {run.status.value} ({why}), so it is never a baseline and is not compared"


def streams(run: Run, store: Capabilities) -> bool:
    """True when ``run`` comes without its cases from a store that streams them: the verdict then
    reads the cases from the store a page at a time instead of from the run."""
    return not run.cases and store.streamed is not None


def compare_runs(
    run: Run, baseline: Run, store: Capabilities, tolerances: Tolerances, gate: GateSettings | None = None
) -> Comparison:
    """:func:`~evalkit.verdict.compare` of two stored runs; when both come without their cases from
    a store that streams them, the store matches and reads the cases a page at a time, so two
    100,000-case runs are never held."""
    if store.streamed is not None and not run.cases and not baseline.cases:
        return compare_pairs(run, baseline, store.streamed.paired_cases(run.id, baseline.id), tolerances, gate)
    if baseline.cases and not run.cases:
        # A baseline with its cases (a file, or a store that cannot pair cases) is compared
        # with the run's cases, read again: a run read without them may count none answered.
        run = store.repository.get_run(run.id) or run
    return compare(run, baseline, tolerances, gate)


def decide(run: Run, judging: Judging) -> Verdict:
    """The verdict of the finished, stored ``run`` (it is never its own baseline); see the module
    docstring for the order of the rules."""
    rules = judging.rules
    problem = rules.run_problem(run, judging)
    if problem is not None:
        return Verdict(NOT_COMPARABLE, problem)
    try:
        found = _baseline(run, judging)
        if isinstance(found, str):
            return Verdict(NOT_COMPARABLE, found)
        check = rules.comparability(run, found)
        if run.status is not RunStatus.COMPLETE:
            return Verdict(NOT_COMPARABLE, incomplete_reason(run, rules.unit, judging.stopped_by), baseline=found, comparability=check)
        if not check.comparable:
            return Verdict(NOT_COMPARABLE, check.reason, baseline=found, comparability=check)
        if found is None:
            return Verdict(BASELINE, rules.first_run_reason, comparability=check)
        return verdict_of(compare_runs(run, found, judging.store, judging.tolerances, judging.gate), found, check)
    except StoreFailure:
        raise
    except StorageError as exc:  # an earlier run in the store this evalkit cannot read: this one is stored
        return Verdict(NOT_COMPARABLE, unreadable_baseline(exc))


def _baseline(run: Run, judging: Judging) -> Run | None | str:
    """The run to compare with (``None``: none yet — the first of its scope), or why there is none
    to be had."""
    store = judging.store
    streamed = streams(run, store)
    scope = BaselineScope.of_run(run)
    if judging.baseline_run is not None:
        problem = scope_mismatch(judging.baseline_run, scope) if scope is not None else "this run belongs to no scope"
        return f"not compared with the baseline file: {problem}" if problem is not None else judging.baseline_run
    if judging.baseline_id is not None:
        chosen = store.repository.get_run(judging.baseline_id, with_cases=not streamed)
        if chosen is None:
            problem: str | None = f"run {judging.baseline_id} is no longer in the store"
        else:
            problem = scope_mismatch(chosen, scope) if scope is not None else "this run belongs to no scope"
        return f"not compared with the chosen baseline: {problem}" if problem is not None else chosen
    missing = judging.rules.missing_reads(store)
    if missing is not None:
        return missing
    assert store.baselines is not None and scope is not None  # missing_reads says why otherwise
    if streamed:
        return store.baselines.accepted_baseline(scope, exclude_run_id=run.id, with_cases=False)
    return store.baselines.accepted_baseline(scope, exclude_run_id=run.id)


def stored_verdict(verdict: Verdict, rules: KindRules) -> StoredVerdict:
    """The verdict as a run keeps it in the store (state, baseline id, one-line note)."""
    comparison = verdict.comparison
    if comparison is not None:
        return StoredVerdict(comparison.state, comparison.baseline_id, rules.summary(comparison))
    if verdict.state == BASELINE:
        return StoredVerdict(BASELINE, None, verdict.reason)
    return StoredVerdict(NOT_COMPARABLE, None, rules.stored_note(verdict))


def automatic_acceptance(
    verdict: Verdict,
    store: Capabilities,
    at: float | None = None,
    *,
    fail_on_new_failures: bool = False,
    answers_reused: bool = False,
) -> Acceptance | None:
    """The acceptance a run earns by itself (see :func:`acceptance_of`), or ``None``."""
    return acceptance_of(verdict, store, at, fail_on_new_failures=fail_on_new_failures, answers_reused=answers_reused)[0]


def acceptance_of(
    verdict: Verdict,
    store: Capabilities,
    at: float | None = None,
    *,
    fail_on_new_failures: bool = False,
    answers_reused: bool = False,
) -> tuple[Acceptance | None, str | None]:
    """The acceptance a run earns by itself, or ``None`` and why not (``None`` too when nothing
    needs saying: a run that could not be compared says why already).

    The bar never moves down by itself, and luck never moves it up. A run is accepted only when
    it is the first of its scope, or when it was compared with an accepted run (not a chosen run
    that is not itself accepted), did not regress and was not inconclusive, is **significantly
    better** on a gated metric (the paired one-sided test of a rise at the gate's ``alpha``,
    Holm-corrected across the gated metrics) and worse on none — under either gate method — and,
    when ``fail_on_new_failures`` gates, has no added or edited case that fails. A run whose
    answers were reused (``answers_reused``: a cache, a re-grade) is never accepted by itself.
    Every other change of the baseline is ``evalkit baseline accept RUN_ID --reason …``.
    """
    when = at if at is not None else time.time()
    if answers_reused and verdict.state in (BASELINE, NO_REGRESSION):
        return None, "its answers were reused (a cache or a re-grade), and such a run is never accepted automatically"
    if verdict.state == BASELINE:
        return Acceptance("first", when, None, "the first run of its scope"), None
    comparison = verdict.comparison
    if comparison is None or verdict.state != NO_REGRESSION:
        return None, None
    if fail_on_new_failures and comparison.new_failures:
        return None, f"an added or edited case fails ({argument('fail_on_new_failures')})"
    if store.baselines is None or comparison.baseline_id not in store.baselines.acceptances_for([comparison.baseline_id]):
        return None, f"the run it was compared with ({comparison.baseline_id}) is not an accepted baseline"
    better, why = significantly_better(comparison.statistics, comparison.metrics, comparison.alpha)
    if not better:
        return None, why
    return Acceptance("no_regression", when, None, f"{why}, against accepted run {comparison.baseline_id}"), None


def keep(run: Run, verdict: Verdict, judging: Judging) -> None:
    """Store the verdict with the run (when the store keeps verdicts)."""
    if judging.store.baselines is not None:
        judging.store.baselines.record_verdict(run.id, stored_verdict(verdict, judging.rules))


def accept(run: Run, verdict: Verdict, judging: Judging, recompare: Callable[[], Verdict] | None = None) -> Verdict:
    """Record the acceptance ``verdict`` earned, if any; returns the verdict carrying it.

    A run that would be the first of its scope is accepted only if no other run of the scope was
    accepted meanwhile (``accept_if_first``): when one was — two first runs of a new store
    finishing at once — the verdict is taken again with ``recompare``, now against that run, and
    kept instead."""
    baselines = judging.store.baselines
    acceptance, note = acceptance_of(
        verdict, judging.store, fail_on_new_failures=judging.fail_on_new_failures, answers_reused=judging.answers_reused
    )
    if acceptance is None or baselines is None:
        return attrs.evolve(verdict, acceptance_note=note) if note is not None else verdict
    scope = BaselineScope.of_run(run) if acceptance.how == "first" and recompare is not None else None
    if scope is not None and recompare is not None:
        if not baselines.accept_if_first(run.id, scope, acceptance):
            again = recompare()
            keep(run, again, judging)
            return accept(run, again, judging)
    else:
        baselines.accept_run(run.id, acceptance)
    return attrs.evolve(verdict, acceptance=acceptance)


def settle(run: Run, judging: Judging) -> Verdict:
    """Decide the finished ``run``'s verdict, keep it with the run and record the acceptance it
    earned (see the module docstring)."""
    verdict = decide(run, judging)
    keep(run, verdict, judging)
    return accept(run, verdict, judging, recompare=lambda: decide(run, judging))


def recorded_verdict(run: Run, judging: Judging) -> Verdict:
    """The verdict of a finished, stored run, as the process that closed it decided it.

    Read back from the store (the baseline it was compared with is compared again under the
    judging's tolerances, for the deltas and the case lists); a run stored without a verdict is
    decided now. This is how the final job of a sharded CI run learns its verdict.

    A complete run of a store that keeps verdicts, stored without one — the store failed while the
    process that closed it recorded its verdict — is settled now (:func:`settle`: kept, and the
    acceptance it earns recorded), as that process would have: deciding it without recording it
    said "recorded as the baseline" of a run that was not.
    """
    store = judging.store
    recorded = store.baselines.verdicts_for([run.id]).get(run.id) if store.baselines is not None else None
    # A baseline the caller chose (--baseline, --baseline-file) is compared with here, whatever was recorded.
    chosen = judging.baseline_id is not None or judging.baseline_run is not None
    if recorded is None and store.baselines is not None and run.status is RunStatus.COMPLETE and not chosen:
        return settle(run, attrs.evolve(judging, answers_reused=judging.answers_reused or run.answers_reused is not None))
    if recorded is None or run.status is not RunStatus.COMPLETE or chosen:
        verdict = decide(run, judging)
    else:
        verdict = _from_record(run, recorded, judging)
    if store.baselines is not None:
        # The process that closed the run accepted it or not; the verdict says which — and, when
        # not, why not, as that process said it (a single process's report says it too).
        acceptance = store.baselines.acceptances_for([run.id]).get(run.id)
        verdict = attrs.evolve(verdict, acceptance=acceptance)
        if acceptance is None and verdict.acceptance_note is None:
            reused = judging.answers_reused or run.answers_reused is not None
            note = acceptance_of(verdict, store, fail_on_new_failures=judging.fail_on_new_failures, answers_reused=reused)[1]
            verdict = attrs.evolve(verdict, acceptance_note=note)
    return verdict


def _from_record(run: Run, recorded: StoredVerdict, judging: Judging) -> Verdict:
    if recorded.baseline_id:
        streamed = streams(run, judging.store)
        baseline = judging.store.repository.get_run(recorded.baseline_id, with_cases=not streamed)
        if baseline is not None:
            check = judging.rules.comparability(run, baseline)
            return verdict_of(compare_runs(run, baseline, judging.store, judging.tolerances, judging.gate), baseline, check)
    if recorded.state == BASELINE:
        return Verdict(BASELINE, recorded.note, comparability=judging.rules.comparability(run, None))
    return Verdict(NOT_COMPARABLE, recorded.note)
