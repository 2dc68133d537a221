"""What a results store offers: a base protocol and optional capabilities checked at runtime."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..answers import ServingIdentity
from ..runs import CaseResult, Run

__all__ = [
    "ResultRepository",
    "GeneratorScopedResults",
    "ProviderModelQualityScores",
    "ProviderModelQualityRuns",
    "RunHistory",
]


@runtime_checkable
class ResultRepository(Protocol):
    """The minimum a store must do: keep runs and their cases, and give them back."""

    def begin_run(self, run: Run) -> Run:
        """Create the run (status running), or return the existing one with that id (a shard joining)."""
        ...

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        """Commit finished cases; a case id already stored for the run is left as it is."""
        ...

    def finish_run(self, run_id: str, status: str, finished_at: float) -> Run:
        """Recompute the aggregates from the stored cases, set the status and return the run with cases."""
        ...

    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run, or ``None``."""
        ...


@runtime_checkable
class GeneratorScopedResults(Protocol):
    """Reads scoped to one serving identity: the baseline and verified quality scores."""

    def baseline_for(
        self, set_identifier: str, identity: ServingIdentity, grader: str, *, exclude_run_id: str | None = None
    ) -> Run | None:
        """The latest complete, verified run of the set under exactly this identity and yardstick."""
        ...

    def mean_quality_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> float | None:
        """Mean of the latest verified run per set for this instance and alias (``None``: no data)."""
        ...


@runtime_checkable
class ProviderModelQualityScores(Protocol):
    """Quality per alias across instances; ``None`` when the alias was measured through several."""

    def mean_quality_for_model(self, model_alias: str, grader: str = "deterministic") -> float | None:
        """Mean of the latest verified run per set for the alias, or ``None`` (no data or ambiguous)."""
        ...


@runtime_checkable
class ProviderModelQualityRuns(Protocol):
    """The evidence behind a provider-model quality score: which runs it was averaged from."""

    def quality_runs_for_provider_model(
        self, provider_instance: str, model_alias: str, grader: str = "deterministic"
    ) -> list[Run]:
        """The latest verified complete run per set for this instance and alias, without cases."""
        ...


@runtime_checkable
class RunHistory(Protocol):
    """Listing and retention."""

    def recent_runs(self, set_identifier: str | None = None, limit: int = 20) -> list[Run]:
        """Runs newest first, without their cases."""
        ...

    def purge_older_than(self, cutoff: float) -> int:
        """Delete whole runs finished (or started) before ``cutoff``; return how many."""
        ...
