"""Runs and their cases, as the runner produces them and the repository stores them."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import attrs

from .answers import ServingIdentity, Usage
from .grading import AGREEMENT_CHECK, Check, Grading

__all__ = ["CaseResult", "Run", "RunKind", "RunStatus"]


class RunStatus(str, enum.Enum):
    """Where a run stands; only ``complete`` runs are ever a baseline."""

    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    INTERRUPTED = "interrupted"


class RunKind(str, enum.Enum):
    """What was measured."""

    PROMPTS = "prompts"
    RETRIEVAL = "retrieval"


@attrs.frozen
class CaseResult:
    """One answered (or failed) case of a run.

    ``identity`` is the serving identity this case's answer carries (instance, alias sent,
    reported model); ``error`` is set when the case could not be answered or graded.
    """

    case_id: str
    passed: bool
    score: float
    checks: tuple[Check, ...] = attrs.field(default=(), converter=tuple)
    latency_s: float = 0.0
    error: str | None = None
    identity: ServingIdentity | None = None
    adapter: str | None = None
    yardstick: str | None = None
    answer_text: str | None = None
    usage: Usage | None = None
    detail: Mapping[str, Any] | None = None
    finished_at: float = 0.0
    #: Numbers a retrieval case is scored by (reciprocal rank, recall@k, nDCG@k), kept at every privacy level.
    measures: Mapping[str, float] | None = None
    #: The fingerprint of the case's content in the set version the run answered (a prompt's or
    #: question's, see :mod:`evalkit.set_versions`); ``None`` for a case stored before fingerprints
    #: were kept. A comparison tells an edited case (same id, other fingerprint) by it.
    fingerprint: str | None = None

    @property
    def errored(self) -> bool:
        """True when the case has no valid grading."""
        return self.error is not None

    @classmethod
    def from_grading(cls, case_id: str, grading: Grading, **fields: Any) -> CaseResult:
        """A case built from a grader's verdict.

        A grading that could not be made (``grading.error``) fails with score 0 and an errored
        ``grading`` check; the case itself was answered, so it does not make the run incomplete.
        """
        checks = grading.checks
        if grading.error is not None:
            checks = (*checks, Check("grading", False, error=grading.error))
        return cls(
            case_id=case_id,
            passed=grading.passed and grading.error is None,
            score=grading.score if grading.error is None else 0.0,
            checks=checks,
            yardstick=grading.yardstick,
            detail=grading.detail,
            **fields,
        )

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        """The checks that did not hold."""
        return tuple(c for c in self.checks if not c.passed)

    @property
    def needs_a_look(self) -> bool:
        """True when the case failed, errored, is unstable or failed an advisory check (a judge's
        verdict that does not gate, :mod:`evalkit.judge_gate`): what a run's table lists by default."""
        return not self.passed or self.unstable or any(c.advisory and not c.passed for c in self.checks)

    @property
    def unstable(self) -> bool:
        """True when the judge, asked several times, disagreed with itself on this case.

        Read from the ``judge_agreement`` check, which is stored at every privacy level; an
        unstable case never moves a regression verdict (see :func:`evalkit.verdict.compare`).
        """
        return any(c.name == AGREEMENT_CHECK and not c.passed for c in self.checks)


@attrs.frozen
class Run:
    """One execution of a set against one generator (or retriever) under one grader.

    ``identity`` is set only for a verified run: every case agreed on instance, alias and reported
    model, and the instance came from configuration. ``identity_note`` says why not otherwise.
    ``grader`` is the yardstick the run is stored under.
    """

    id: str
    set_identifier: str
    grader: str
    kind: RunKind = RunKind.PROMPTS
    status: RunStatus = RunStatus.RUNNING
    started_at: float = 0.0
    finished_at: float | None = None
    case_count: int = 0
    cases: tuple[CaseResult, ...] = attrs.field(default=(), converter=tuple)
    set_fingerprint: str = ""
    identity: ServingIdentity | None = None
    identity_note: str | None = None
    provider_instance: str | None = None
    adapter: str | None = None
    model_alias: str | None = None
    retriever: str | None = None
    deployment: str | None = None
    benchmark_fingerprint: str = ""
    variant_fingerprint: str = ""
    provenance: Mapping[str, Any] | None = None
    metrics: Mapping[str, Any] | None = None
    label: str | None = None
    privacy: str = "metadata"
    #: True when the run keeps the fingerprint of each case it answered (:attr:`CaseResult.fingerprint`,
    #: see :mod:`evalkit.set_versions`); false for a run stored before fingerprints were kept (schema 3):
    #: a comparison with it then says that every case present in both runs counted as unchanged.
    fingerprints_kept: bool = False
    # Aggregates as stored; derived from ``cases`` when the run carries them.
    stored_passed_count: int | None = None
    stored_errored_count: int | None = None
    stored_answered_count: int | None = None
    stored_mean_score: float | None = None

    @property
    def answered_count(self) -> int:
        """Cases with a result (graded or errored)."""
        return len(self.cases) if self.cases or self.stored_answered_count is None else self.stored_answered_count

    @property
    def passed_count(self) -> int:
        """Cases that passed."""
        if self.cases or self.stored_passed_count is None:
            return sum(1 for c in self.cases if c.passed)
        return self.stored_passed_count

    @property
    def errored_count(self) -> int:
        """Cases that could not be answered or graded."""
        if self.cases or self.stored_errored_count is None:
            return sum(1 for c in self.cases if c.errored)
        return self.stored_errored_count

    @property
    def pass_rate(self) -> Fraction:
        """Passed cases over answered cases, exactly (0 for an empty run)."""
        total = self.answered_count
        return Fraction(self.passed_count, total) if total else Fraction(0)

    @property
    def mean_score(self) -> float:
        """Arithmetic mean of the case scores (0.0 for an empty run)."""
        if self.cases or self.stored_mean_score is None:
            return sum(c.score for c in self.cases) / len(self.cases) if self.cases else 0.0
        return self.stored_mean_score

    @property
    def verified(self) -> bool:
        """True when one configured serving identity answered every case."""
        return self.identity is not None

    def case_map(self) -> dict[str, CaseResult]:
        """``{case id: case}``."""
        return {c.case_id: c for c in self.cases}

    def with_cases(self, cases: Iterable[CaseResult]) -> Run:
        """A copy carrying ``cases``."""
        return attrs.evolve(self, cases=tuple(cases))
