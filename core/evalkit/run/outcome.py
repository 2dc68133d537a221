"""What a run produced, for prompt and retrieval runs alike, and the one exit-code rule."""

from __future__ import annotations

from typing import Any

import attrs

from ..runs import Run, RunStatus
from ..storage.values import INCONCLUSIVE, NOT_COMPARABLE, Acceptance
from ..verdict import Comparison, Verdict

__all__ = ["Outcome", "ShardFigures", "exit_code"]


@attrs.frozen
class ShardFigures:
    """What one shard's process did, beside the run's figures (which count every shard's cases
    stored so far): shard ``index`` of ``count``, the cases this process stored (``answered``) and
    of those how many passed and errored. A shard's output says both, each labelled."""

    index: int
    count: int
    answered: int = 0
    passed: int = 0
    errored: int = 0

    def said(self, run_complete: bool) -> str:
        """The line a shard's text output says before the run's figures."""
        whose = "the whole run's (every shard's)" if run_complete else "the run's so far (every shard's that is in)"
        return (
            f"This job answered {self.answered} of shard {self.index}/{self.count}'s cases: {self.passed} passed, "
            f"{self.errored or 'none'} errored. The figures below are {whose}, not this shard's."
        )

    def document(self) -> dict[str, int]:
        """The ``"shard"`` object of a shard's ``--json`` document (its other figures are the run's)."""
        return {"index": self.index, "count": self.count, "answered_here": self.answered, "passed_here": self.passed, "errored_here": self.errored}


@attrs.frozen
class Outcome:
    """What a run produced: the stored run, its verdict, and what to tell the user.

    ``run`` comes with its cases unless the caller asked for none (``keep_cases=False``); its
    aggregates are the store's either way. ``notes`` are said before the run's figures (a resumed
    run, a shard done, an in-memory store…), ``plugin_failures`` the plugins that failed around it
    (a hook that raised). ``concurrency`` is how many requests a prompt run kept in flight
    (``None`` when the run answered nothing itself, and for retrieval runs). ``detail`` holds what
    only one kind of run has: for a retrieval run a
    :class:`~evalkit.run.answering.questions.QuestionsDetail` (the question set, deployment,
    provenance, metrics, each question's score and ranking); ``None`` for a prompt run.
    ``slice_clean`` is true for a shard that stored its whole slice without an errored case: the
    run's errored cases, if any, are another shard's (see :func:`exit_code`). ``shard``: a shard's
    own figures (:class:`ShardFigures`; ``None`` for a run that is not sharded): the run's are
    every shard's.
    """

    run: Run
    verdict: Verdict
    notes: tuple[str, ...] = ()
    plugin_failures: tuple[str, ...] = ()
    concurrency: int | None = None
    detail: Any = None
    slice_clean: bool = False
    shard: ShardFigures | None = None

    @property
    def comparison(self) -> Comparison | None:
        """The verdict's comparison (``None`` when the run was not compared)."""
        return self.verdict.comparison

    @property
    def baseline(self) -> Run | None:
        """The run this one was (or would have been) compared with."""
        return self.verdict.baseline

    @property
    def acceptance(self) -> Acceptance | None:
        """Set when the run became its scope's accepted baseline."""
        return self.verdict.acceptance

    @property
    def regressed(self) -> bool:
        """True when compared and a gated figure dropped beyond its tolerance."""
        return self.verdict.regressed

    @property
    def new_failures(self) -> tuple[str, ...]:
        """Added or edited cases that fail now (empty when not compared)."""
        return self.verdict.new_failures

    def exit_code(self, fail_on_regression: bool, fail_on_new_failures: bool = False, fail_on_inconclusive: bool = False) -> int:
        """The command's exit code for this outcome (see :func:`exit_code`)."""
        return exit_code(
            self.run, self.verdict, fail_on_regression, fail_on_new_failures, fail_on_inconclusive, slice_clean=self.slice_clean
        )


def exit_code(
    run: Run,
    verdict: Verdict,
    fail_on_regression: bool,
    fail_on_new_failures: bool = False,
    fail_on_inconclusive: bool = False,
    *,
    slice_clean: bool = False,
) -> int:
    """0 fine · 1 the gate failed (or its verdict is still pending) · 3 the run could not complete.

    * A shard that finished its slice without an error leaves the run ``running``: its verdict is
      pending, which a gate must never read as a pass — 1 under ``fail_on_regression``, else 0.
    * A shard that stored its own slice without an errored case (``slice_clean``) — 0 without
      ``fail_on_regression``, even when another shard's case errored (the run is running with
      errors, or closed incomplete): that shard's job is the one to run again, not this one.
    * A run that is not complete (an errored case or question, interrupted) — 3.
    * Under ``fail_on_regression``: a regression, or a run that could not be compared
      (``not_comparable``: no verified identity, another benchmark, a store without baselines…) — 1.
    * Under ``fail_on_new_failures``: an added or edited case that fails — 1.
    * Under ``fail_on_inconclusive``: a verdict the paired gate could not decide (``inconclusive``)
      — 1; without it an inconclusive verdict exits 0 (the output names the minimum detectable drop).
    """
    if run.status is RunStatus.RUNNING and not run.errored_count:
        return 1 if fail_on_regression else 0
    if slice_clean and not fail_on_regression and run.status in (RunStatus.RUNNING, RunStatus.INCOMPLETE):
        return 0
    if run.status is not RunStatus.COMPLETE:
        return 3
    if fail_on_regression and (verdict.state == NOT_COMPARABLE or verdict.regressed):
        return 1
    if fail_on_new_failures and verdict.new_failures:
        return 1
    if fail_on_inconclusive and verdict.state == INCONCLUSIVE:
        return 1
    return 0
