"""Prompt runs as a library call — kept for the names older code imports.

The run lifecycle lives in :mod:`evalkit.run` (one implementation for prompt and retrieval runs):
:func:`evaluate_set` is :func:`evalkit.run.library.evaluate_set`, its outcome an
:class:`evalkit.run.outcome.Outcome` (``RunOutcome``), its verdict an :class:`evalkit.verdict.Verdict`;
the verdict is decided in :mod:`evalkit.run.decide`. The helpers below are those modules' functions
with a prompt run's rules filled in.
"""

from __future__ import annotations

from collections.abc import Callable

from .run.answering.prompts import NO_SCOPED_READS, PromptRules, assertion_kinds, short_secret_warnings
from .run.answering.prompts import check_chosen_baseline as _check_chosen_baseline
from .run.decide import Judging, accept, compare_runs, decide, recorded_verdict
from .run.decide import automatic_acceptance as _automatic_acceptance
from .run.decide import stored_verdict as _stored_verdict
from .run.library import evaluate_set
from .run.outcome import Outcome
from .runs import Run, RunKind
from .storage.protocols import ResultRepository, capabilities
from .storage.values import Acceptance, BaselineScope, CaseTally, StoredVerdict
from .tolerance import Tolerances
from .verdict import Comparison, Verdict

__all__ = [
    "NO_SCOPED_READS",
    "RunOutcome",
    "Verdict",
    "assertion_kinds",
    "automatic_acceptance",
    "check_chosen_baseline",
    "compare_stored",
    "evaluate_set",
    "record_verdict",
    "short_secret_warnings",
    "stored_run_verdict",
    "stored_verdict",
    "verdict_for",
]

#: The outcome of a run (one type for prompt and retrieval runs).
RunOutcome = Outcome
_RULES = PromptRules()


def verdict_for(
    run: Run, repository: ResultRepository, tolerances: Tolerances, *, baseline_id: str | None = None, tally: CaseTally | None = None
) -> Verdict:
    """:func:`evalkit.run.decide.decide` for a prompt run."""
    return decide(run, Judging(capabilities(repository), _RULES, tolerances, baseline_id, tally))


def automatic_acceptance(
    verdict: Verdict, repository: ResultRepository, at: float | None = None, *, fail_on_new_failures: bool = False
) -> Acceptance | None:
    """:func:`evalkit.run.decide.automatic_acceptance`."""
    return _automatic_acceptance(verdict, capabilities(repository), at, fail_on_new_failures=fail_on_new_failures)


def record_verdict(
    run: Run,
    verdict: Verdict,
    repository: ResultRepository,
    stored: StoredVerdict,
    *,
    fail_on_new_failures: bool = False,
    recompare: Callable[[], Verdict] | None = None,
) -> Verdict:
    """Keep ``stored`` with the run, then record the acceptance ``verdict`` earned
    (:func:`evalkit.run.decide.accept`); returns the verdict carrying it."""
    store = capabilities(repository)
    if store.baselines is not None:
        store.baselines.record_verdict(run.id, stored)
    return accept(run, verdict, Judging(store, _RULES, fail_on_new_failures=fail_on_new_failures), recompare)


def stored_verdict(verdict: Verdict) -> StoredVerdict:
    """The verdict of a prompt run as the store keeps it."""
    return _stored_verdict(verdict, _RULES)


def stored_run_verdict(run: Run, repository: ResultRepository, tolerances: Tolerances) -> Verdict:
    """:func:`evalkit.run.decide.recorded_verdict` for a prompt run."""
    return recorded_verdict(run, Judging(capabilities(repository), _RULES, tolerances))


def compare_stored(run: Run, baseline: Run, repository: ResultRepository, tolerances: Tolerances) -> Comparison:
    """:func:`evalkit.run.decide.compare_runs`."""
    return compare_runs(run, baseline, capabilities(repository), tolerances)


def check_chosen_baseline(
    repository: ResultRepository, baseline_id: str, set_identifier: str, instance: str | None, alias: str | None, grader: str
) -> None:
    """:func:`evalkit.run.answering.prompts.check_chosen_baseline`."""
    _check_chosen_baseline(repository, baseline_id, BaselineScope(RunKind.PROMPTS, set_identifier, instance, alias, None, grader))
