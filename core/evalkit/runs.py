"""Runs and their cases, as the runner produces them and the repository stores them."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import attrs

from .answers import ServingIdentity, Usage
from .conversations import Message, messages_of
from .grading import AGREEMENT_CHECK, Check, Grading
from .shapes import bounded_reason

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
    error: str | None = attrs.field(default=None, converter=bounded_reason)
    identity: ServingIdentity | None = None
    adapter: str | None = None
    yardstick: str | None = None
    answer_text: str | None = None
    usage: Usage | None = None
    detail: Mapping[str, Any] | None = None
    finished_at: float = 0.0
    #: Numbers a case is scored by, kept at every privacy level: a retrieval question's
    #: (reciprocal rank, recall@k, nDCG@k); a prompt answered several times, its ``pass_fraction``,
    #: ``answers`` and ``passes`` (see :mod:`evalkit.run.answering.repeats`).
    measures: Mapping[str, float] | None = None
    #: The fingerprint of the case's content in the set version the run answered (a prompt's or
    #: question's, see :mod:`evalkit.set_versions`); ``None`` for a case stored before fingerprints
    #: were kept. A comparison tells an edited case (same id, other fingerprint) by it.
    fingerprint: str | None = None
    #: The token counts of each judge call its grading made, in order (empty: none, or not known).
    judge_usage: tuple[Usage, ...] = attrs.field(default=(), converter=tuple)
    #: Where the answer came from when the model was not asked for it: ``"cache"`` (the answer
    #: cache) or ``"run:<id>"`` (a stored run's answer, re-graded); ``None``: asked now.
    answer_source: str | None = None
    #: The digest of what the model was asked — prompt and system prompt, not the checks
    #: (:func:`evalkit.set_versions.prompt_digest`); a re-grade reuses an answer only to the same question.
    prompt_digest: str | None = None
    #: A conversation's turns after its fixed history: the model's (with their tool calls), the
    #: canned tools' results, a scripted conversation's user turns (see :attr:`evalkit.Answer.transcript`);
    #: kept as the run's privacy level allows (:mod:`evalkit.privacy`). Empty for a plain prompt.
    transcript: tuple[Message, ...] = attrs.field(default=(), converter=messages_of)
    #: The generator requests that answered this case: one an answer, one a model turn of a
    #: conversation, summed over ``--repeats``; 0 when no request got an answer or the answer was
    #: reused; ``None``: not known (a case stored before the count was kept, or built by a caller).
    requests: int | None = None
    #: The generator requests this case sent: one an answer asked of the model, a reply or not (one
    #: that failed on every attempt went out; a transport retry is not counted), one a model turn of a
    #: conversation asked (a turn that failed midway included), summed over ``--repeats``; 0 for a
    #: reused answer; ``None``: not known (stored before the count was kept, or built by a caller).
    #: ``--max-requests`` counts these (:func:`evalkit.costs.limited_requests`).
    requests_sent: int | None = None

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
            judge_usage=tuple(u for u in grading.usage if isinstance(u, Usage)),
            **fields,
        )

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        """The checks that did not hold."""
        return tuple(c for c in self.checks if not c.passed)

    @property
    def needs_a_look(self) -> bool:
        """True when the case failed, errored, is unstable, flaky or failed an advisory check (a
        judge's verdict that does not gate, :mod:`evalkit.judge_gate`): what a run's table lists by default."""
        return not self.passed or self.unstable or self.flaky or any(c.advisory and not c.passed for c in self.checks)

    @property
    def answers(self) -> int:
        """How many answers the case's result stands for (``--repeats``; 1 when answered once)."""
        value = (self.measures or {}).get("answers")
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1 else 1

    @property
    def passes(self) -> int:
        """How many of its answers passed."""
        value = (self.measures or {}).get("passes")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and self.answers > 1:
            return int(value)
        return 1 if self.passed else 0

    @property
    def pass_fraction(self) -> float:
        """The share of its answers that passed (with a judge asked several times, the share of its
        verdicts); 1.0 or 0.0 for a case answered once by a judge that agreed with itself."""
        value = (self.measures or {}).get("pass_fraction")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value)
        return 1.0 if self.passed else 0.0

    @property
    def flaky(self) -> bool:
        """True when the case's answers disagreed: some of its repeats passed, others failed."""
        return 0 < self.passes < self.answers

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
    #: The prices the run was costed at (see :mod:`evalkit.costs`): ``{"generator": {...}, "judge":
    #: {...}}``, a part ``None`` when unpriced; ``None`` for a run stored before prices were kept.
    pricing: Mapping[str, Any] | None = None
    #: What the run spent, tokens and cost (see :func:`evalkit.costs.spend_document`), set when it
    #: finishes; ``None`` for a run stored before usage was summed (it reads as unknown).
    spend: Mapping[str, Any] | None = None
    #: Set when answers were reused instead of asked: ``"cache"`` (some came from the answer
    #: cache), ``"regrade"`` (a re-grade of run ``source_run_id``), ``"answers-from"`` (a run that
    #: took what it could from ``source_run_id``). Such a run is never accepted automatically.
    answers_reused: str | None = None
    source_run_id: str | None = None
    # Aggregates as stored; derived from ``cases`` when the run carries them.
    stored_passed_count: int | None = None
    stored_errored_count: int | None = None
    stored_answered_count: int | None = None
    stored_mean_score: float | None = None

    @property
    def independent_sample(self) -> bool:
        """False for a run whose answers were reused (from the answer cache, a re-grade, another
        run's): it measures the grading, not the model, so it is neither accepted as a baseline
        automatically nor counted in a case's flip history (:func:`evalkit.stats.flip_history`)."""
        return self.answers_reused is None

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
    def scored_count(self) -> int:
        """Cases graded: answered and not errored. The pass rate and the mean score are over them;
        an errored case measured nothing, so it is counted apart (:attr:`errored_count`), as the
        verdict counts it (an incomplete run is not compared), never as a failure."""
        return max(0, self.answered_count - self.errored_count)

    @property
    def pass_rate(self) -> Fraction:
        """Passed cases over scored cases (:attr:`scored_count`), exactly; 0 when none was scored
        (:func:`evalkit.run_figures.rate_text` says so rather than showing the 0). The one
        definition every command, report and ``--json`` document shows."""
        total = self.scored_count
        return Fraction(min(self.passed_count, total), total) if total else Fraction(0)

    @property
    def mean_score(self) -> float:
        """Arithmetic mean of the scored cases' scores (0.0 when none was scored); an errored
        case's score is no measurement and is left out, as from the pass rate."""
        if self.cases or self.stored_mean_score is None:
            scores = [c.score for c in self.cases if not c.errored]
            return sum(scores) / len(scores) if scores else 0.0
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

    @property
    def never_ended(self) -> bool:
        """True for a run marked running or interrupted: the counts of its row are written when a
        run ends, so they are still those of its start, whatever cases the store holds."""
        return self.status is RunStatus.RUNNING or self.status is RunStatus.INTERRUPTED

    def counted_by(self, tally: Any) -> Run:
        """A copy whose aggregates are ``tally``'s (a :class:`~evalkit.storage.values.CaseTally`,
        the store's count of the cases it holds): how a run that :attr:`never_ended` is shown."""
        return attrs.evolve(
            self,
            stored_answered_count=tally.answered,
            stored_passed_count=tally.passed,
            stored_errored_count=tally.errored,
            stored_mean_score=tally.score_sum / scored if (scored := tally.answered - tally.errored) > 0 else 0.0,
        )
