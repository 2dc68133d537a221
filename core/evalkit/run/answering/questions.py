"""Answering a golden question set: a retriever is asked each question, its ranking is scored.

:class:`QuestionAnswering` is what the lifecycle asks: the run's header (retriever, deployment,
benchmark and variant fingerprints, provenance), the questions that remain (its shard, minus what
is stored — a stored answer that cannot be read back as a score is asked again), to ask them
(at most ``concurrency`` in flight on daemon threads, each bounded by the deployment's timeout;
see :func:`ask_all`) and what the finish records (the run's metrics, over every question of the
run, those answered by other shards or before a resume included). :class:`QuestionRules` is what
a retrieval run adds to the one decide step: the benchmark provenance check
(:func:`~evalkit.retrieval.provenance.baseline_state`). The outcome carries a
:class:`QuestionsDetail`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import attrs

from ... import registry
from ...baselines import not_complete, scope_mismatch
from ...bounded import BoundedCalls, CallAbandoned, call_within, wait_for
from ...catalog import SourcedSet, question_set_catalog
from ...components import MAX_CONCURRENCY, SecretHolder, declared, offers, plugin_close_failed, plugin_close_stuck
from ...config import privacy_refusal
from ...errors import (
    PLUGIN_FAILURES,
    ConfigError,
    EvalkitError,
    OptionsDeclarationError,
    PluginError,
    RetrievalError,
    UnknownPluginError,
    UsageError,
    carried,
)
from ...options import OptionsError
from ...privacy import remove_secrets, secrets_to_keep_out
from ...questions import GoldenQuestion, GoldenQuestionSet
from ...retrieval.contracts import (
    ClosingRetriever,
    PreparedRetriever,
    RetrievalProvenanceProvider,
    Retriever,
)
from ...retrieval.deployments import (
    DEFAULT_TIMEOUT_S,
    Deployment,
    choose_deployment,
    deployment_options,
    no_deployment,
    retriever_of,
    unquoted_retriever,
)
from ...retrieval.holes import HoleGrades, HoleJudging, filled_measures, filled_question, filled_score_from_measures
from ...retrieval.provenance import (
    BASELINE,
    COMPARABLE,
    MISMATCH,
    SCORING_VERSION,
    UNKNOWN,
    RetrievalIdentity,
    baseline_state,
    benchmark_fingerprint,
    retrieval_identity,
)
from ...retrieval.ranking import Ranking, read_ranking
from ...retrieval.scoring import QuestionScore, RetrievalMetrics, aggregate, score_question
from ...retrieval.stored import (
    GRADER,
    benchmark_changes,
    case_from_score,
    identity_of_run,
    metrics_document,
    provenance_document,
    retrieval_limit,
    score_from_case,
    stored_benchmark,
)
from ...retrieval.validation import check_question_set
from ...run_lookup import stored_run
from ...runs import CaseResult, Run, RunKind, RunStatus
from ...set_versions import question_fingerprint
from ...shapes import exception_message, exception_name, exception_text
from ...storage.protocols import Capabilities, ResultRepository
from ...storage.values import NOT_COMPARABLE, PENDING, STORED_STATE_PREFIX, BaselineScope, split_stored_note
from ...verdict import Comparability, Comparison, Verdict
from ...wording import argument, counted, quoted, shell_line
from ..decide import Judging
from ..placement import Shard, continuing_call, continuing_words, in_code_provenance, retriever_chosen_provenance
from . import CaseSink, Finish, Slice, final_status

__all__ = [
    "NO_RETRIEVAL_READS",
    "HolesDetail",
    "QuestionAnswering",
    "QuestionRules",
    "QuestionsDetail",
    "ask_all",
    "comparison_summary",
]

NO_RETRIEVAL_READS = "not compared: the configured repository cannot read earlier retrieval runs"
_QUESTIONS_CHANGED = (
    "The question set changed since the baseline (same corpus, scoring and k): compared on the unchanged "
    "questions; added, edited and removed questions are reported apart."
)
_TREATMENT_CHANGED = (
    "Treatment changed: model, chunking or pipeline identity differs; the benchmark remains comparable."
)


def comparison_summary(comparison: Comparison) -> str:
    """One sentence about a comparison, in hit-rate words."""
    return comparison.summary("top-1 hit rate", "top-3 hit rate", mean_in_points=True, unit="question")


# -- what the outcome carries -------------------------------------------------------------------


@attrs.frozen
class QuestionsDetail:
    """What a retrieval outcome carries beside the run and its verdict.

    ``scores`` are the per-question scores of the questions the retriever answered (errored
    questions have a case in ``errors`` and no score), keyed by question id in set order;
    ``rankings`` what the retriever returned for them (distinct ids to the fetch depth, with scores
    when it gave them). ``baseline_state`` is the benchmark provenance word (``baseline``,
    ``comparable``, ``mismatch`` or ``unknown``; ``None`` while the verdict is pending: the last
    shard decides it); ``treatment_changed`` is true when a compared
    run's variant (model, chunking, pipeline) differs from the baseline's. ``resume_note`` is set
    when the run continued an unfinished one: how many questions were kept and asked.
    """

    question_set: GoldenQuestionSet
    deployment: Deployment
    identity: RetrievalIdentity
    metrics: RetrievalMetrics
    scores: Mapping[str, QuestionScore]
    rankings: Mapping[str, Ranking] = attrs.Factory(dict)
    errors: Mapping[str, CaseResult] = attrs.Factory(dict)
    baseline_state: str | None = UNKNOWN
    treatment_changed: bool = False
    prepare_seconds: float | None = None
    warnings: tuple[str, ...] = ()
    resume_note: str | None = None
    holes: HolesDetail | None = None


@attrs.frozen
class HolesDetail:
    """``--judge-unjudged``: the figures with the holes a relevance judge graded filled in
    (``metrics``, over the ``scores`` of the questions whose cases hold them), the model's grades
    per question (this process's questions only: the store keeps them at ``redacted``/``full``),
    the judge's identity (``None`` when read back from the store) and the hole counts."""

    metrics: RetrievalMetrics
    scores: Mapping[str, QuestionScore]
    model_grades: Mapping[str, Mapping[str, int]]
    judge: Mapping[str, Any] | None
    judged: int
    unjudged: int


# -- the verdict's rules for a retrieval run -----------------------------------------------------


def _only_questions_changed(previous: Run, identity: RetrievalIdentity) -> bool:
    """True when the baseline's benchmark differs from this run's only by its questions: the same
    corpus revision, scoring version and k, so the unchanged questions are measured alike."""
    stored = previous.provenance
    if not isinstance(stored, Mapping) or identity.provenance is None:
        return False
    if stored.get("scoring_version") != SCORING_VERSION or stored.get("k") != identity.k:
        return False
    rebuilt = benchmark_fingerprint(
        stored.get("corpus_revision"), identity.labels_fingerprint, identity.k, identity.threshold
    )
    return rebuilt == identity.benchmark_fingerprint


@attrs.frozen
class QuestionRules:
    """What a retrieval run adds to the one decide step (:class:`~evalkit.run.decide.KindRules`):
    it is compared only with a baseline of the same benchmark (corpus, labels, scoring protocol, k)
    — or one whose benchmark differs only by the questions, compared on the unchanged ones."""

    identity: RetrievalIdentity
    unit: str = "question"
    first_run_reason: str = "No accepted run for this set, retriever and deployment — recorded as the baseline."

    def run_problem(self, run: Run, judging: Judging) -> str | None:
        """Nothing keeps a retrieval run from its baseline before the baseline is read."""
        return None

    def missing_reads(self, store: Capabilities) -> str | None:
        """A retrieval run's baseline is read through accepted baselines."""
        return NO_RETRIEVAL_READS if store.baselines is None else None

    def comparability(self, run: Run, baseline: Run | None) -> Comparability:
        """The benchmark provenance check (see :func:`~evalkit.retrieval.provenance.baseline_state`)."""
        identity = self.identity
        state = baseline_state(identity.benchmark_fingerprint, None if baseline is None else stored_benchmark(baseline))
        notes = []
        if state == MISMATCH and baseline is not None and _only_questions_changed(baseline, identity):
            state = COMPARABLE
            notes.append(_QUESTIONS_CHANGED)
        if state == BASELINE:
            return Comparability(label=BASELINE)
        if state != COMPARABLE or baseline is None:
            cause = _not_comparable_cause(state, baseline, identity)
            reason = (
                f"Regression comparison skipped: benchmark provenance is {state}{cause}. The measurement was recorded."
            )
            return Comparability(False, reason, state)
        treatment = baseline.variant_fingerprint != identity.variant_fingerprint
        if treatment:
            notes.append(_TREATMENT_CHANGED)
        return Comparability(True, None, COMPARABLE, tuple(notes), treatment)

    def summary(self, comparison: Comparison) -> str:
        """The comparison's sentence in hit-rate words."""
        return comparison_summary(comparison)

    def stored_note(self, verdict: Verdict) -> str | None:
        """``baseline state STATE: REASON``."""
        label = verdict.comparability.label if verdict.comparability is not None else None
        return f"{STORED_STATE_PREFIX}{label or UNKNOWN}: {verdict.reason}"


def _not_comparable_cause(state: str, baseline: Run | None, identity: RetrievalIdentity) -> str:
    """Why a run is ``unknown`` or a ``mismatch``, as `` (…)`` after the state: what changed since
    the baseline, or whose provenance is missing."""
    if state == MISMATCH and baseline is not None:
        changes = benchmark_changes(baseline, identity)
        return f" ({'; '.join(changes)} since baseline run {baseline.id})" if changes else ""
    if identity.provenance is None:
        return " (this run's retriever declares no valid provenance)"
    if baseline is not None:
        return f" (baseline run {baseline.id} was stored without a valid provenance)"
    return ""


def _recorded_state(verdict: Verdict) -> Verdict:
    """A not-compared verdict read back from the store, with its provenance word taken out of the
    stored note (``baseline state STATE: REASON``) again."""
    if verdict.state != NOT_COMPARABLE or verdict.comparability is not None:
        return verdict
    label, rest = split_stored_note(verdict.reason)
    if label is None or rest is None:
        return verdict
    return attrs.evolve(verdict, reason=rest, comparability=Comparability(False, rest, label))


# -- asking the questions -----------------------------------------------------------------------


@attrs.frozen
class _Answer:
    """One question's result: the ranking read from what the retriever returned, or the error."""

    ranking: Ranking | None
    latency_s: float
    error: str | None = None
    over_limit: int = 0


def _ask(retriever: Any, retriever_id: str, question: GoldenQuestion, limit: int) -> _Answer:
    started = time.perf_counter()
    try:
        raw = carried(retriever.retrieve, question.question, limit)
        latency = time.perf_counter() - started
        ranking, over = read_ranking(raw, limit)
    except RetrievalError as exc:
        return _Answer(
            None,
            time.perf_counter() - started,
            f"retriever {quoted(retriever_id)} on question {quoted(question.id)}: {exc}",
        )
    except PLUGIN_FAILURES as exc:
        try:
            message = str(exc)  # whole: the question's error is cut once, saying the length of all of it
        except PLUGIN_FAILURES:
            message = exception_message(exc)  # names the __str__ that raised
        return _Answer(
            None,
            time.perf_counter() - started,
            f"retriever {quoted(retriever_id)} raised {exception_name(exc)} on question {quoted(question.id)}: {message}",
        )
    return _Answer(ranking, latency, over_limit=over)


@attrs.frozen
class Asking:
    """How questions are asked: of which retriever (and its id, for messages), with which ``limit``,
    how many in flight, each within ``time_limit`` seconds."""

    retriever: Any
    retriever_id: str
    limit: int
    concurrency: int = 1
    time_limit: float = DEFAULT_TIMEOUT_S


def ask_all(asking: Asking, questions: Sequence[GoldenQuestion]) -> Iterator[tuple[GoldenQuestion, _Answer]]:
    """Each question with its answer, in set order; at most ``concurrency`` questions in flight,
    each given ``time_limit`` seconds (a retriever that does not answer in time errs that question)."""
    calls = BoundedCalls(asking.concurrency)
    try:
        pending: deque[tuple[GoldenQuestion, Future[_Answer], float]] = deque()
        queue = iter(questions)

        def submit(question: GoldenQuestion) -> None:
            future = calls.submit(_ask, asking.retriever, asking.retriever_id, question, asking.limit)
            pending.append((question, future, time.monotonic()))

        for question in queue:
            submit(question)
            if len(pending) >= asking.concurrency:
                break
        while pending:
            question, future, submitted = pending.popleft()
            try:
                answer = wait_for(future, max(0.0, submitted + asking.time_limit - time.monotonic()))
            except CallAbandoned:
                calls.abandon(future)
                answer = _Answer(
                    None,
                    time.monotonic() - submitted,
                    f"retriever {quoted(asking.retriever_id)} on question {quoted(question.id)}: no answer within {asking.time_limit:g} s "
                    "(the deployment's timeout); the call was abandoned",
                )
            following = next(queue, None)
            if following is not None:
                submit(following)
            yield question, answer
    finally:
        calls.close()


# -- the answering --------------------------------------------------------------------------------


@attrs.define
class QuestionAnswering:
    """A golden question set asked of a retriever (see the module docstring).

    Built by :func:`evalkit.run.library.evaluate_retrieval` once the retriever is created, its
    provenance taken and the retriever prepared. It keeps, while the run goes, the scores, rankings
    and errored cases of the questions this process asked.
    """

    golden_set: GoldenQuestionSet
    retriever_id: str
    retriever: Any
    deployment: Deployment
    identity: RetrievalIdentity
    in_flight: int = 1
    prepare_seconds: float | None = None
    kind: RunKind = RunKind.RETRIEVAL
    concurrency: int | None = None  # not reported for a retrieval run
    groups_commits: bool = False  # every question is committed as it is scored
    scores: dict[str, QuestionScore] = attrs.Factory(dict)
    rankings: dict[str, Ranking] = attrs.Factory(dict)
    errors: dict[str, CaseResult] = attrs.Factory(dict)
    warnings: list[str] = attrs.Factory(list)
    resume_note: str | None = None
    #: ``--judge-unjudged``: the bound relevance judge (``None``: holes are not judged).
    hole_judging: HoleJudging | None = None
    filled: dict[str, QuestionScore] = attrs.Factory(dict)
    model_grades: dict[str, dict[str, int]] = attrs.Factory(dict)
    hole_counts: dict[str, tuple[int, int]] = attrs.Factory(dict)
    #: The set was given as a :class:`GoldenQuestionSet` built in code, not a catalog's: no ``evalkit
    #: retrieval`` finds it, so its resume line is the library call.
    in_code: bool = False
    #: What the line that continues the run repeats after its place: a library caller's ``--config``
    #: and ``--database`` (:func:`evalkit.run.library._store_words`); the CLI prints its own line.
    command_args: tuple[str, ...] = ()
    #: The caller named no retriever: its deployment chose it (``evalkit retrieval SET --deployment
    #: NAME``), stored with the run (:func:`~evalkit.run.placement.retrieval_words`).
    retriever_chosen: bool = False
    _keep_ranking: bool = False
    _kept: int = 0
    _metrics: RetrievalMetrics | None = None

    @property
    def rules(self) -> QuestionRules:
        """The verdict's rules for a retrieval run of this benchmark."""
        return QuestionRules(self.identity)

    @property
    def set_identifier(self) -> str:
        """The set's identifier."""
        return self.golden_set.identifier

    @property
    def k(self) -> int:
        """The cut-off of recall@k and nDCG@k."""
        return self.identity.k

    def header(self, run_id: str, started: float, placement: Any) -> Run:
        """A retrieval run of this set, retriever, deployment and benchmark."""
        identity = self.identity
        return Run(
            id=run_id,
            set_identifier=self.golden_set.identifier,
            grader=GRADER,
            kind=RunKind.RETRIEVAL,
            started_at=started,
            case_count=len(self.golden_set.questions),
            set_fingerprint=identity.labels_fingerprint,
            fingerprints_kept=True,  # each question's case carries its fingerprint
            adapter=self.retriever_id,
            retriever=self.retriever_id,
            deployment=self.deployment.name,
            benchmark_fingerprint=identity.benchmark_fingerprint,
            variant_fingerprint=identity.variant_fingerprint,
            provenance=retriever_chosen_provenance(
                in_code_provenance(provenance_document(identity), self.in_code), self.retriever_chosen
            ),
            label=placement.label,
            privacy=placement.privacy,
        )

    def _where(self) -> str:
        return f"set {quoted(self.golden_set.identifier)}, retriever {quoted(self.retriever_id)}, deployment {self.deployment.name or '(none)'}"

    def unfinished_run(self, store: Capabilities) -> str:
        """The newest unfinished run of this set, retriever and deployment."""
        if store.resumable is None:
            raise UsageError(
                f"{argument('resume')} without a run id needs a store that can find unfinished retrieval runs, and this one "
                f"cannot; pass the id: {argument('run_id', 'RUN_ID', option='--resume RUN_ID')}"
            )
        found = store.resumable.latest_unfinished_retrieval_run(
            self.golden_set.identifier, self.retriever_id, deployment=self.deployment.name
        )
        if found is None:
            raise UsageError(f"{argument('resume')}: no unfinished retrieval run of {self._where()} to resume")
        return found.id

    def check_stored(self, existing: Run, store: Capabilities) -> None:
        """Nothing to check in a retrieval run's stored cases (each question is answered once)."""

    def check_joinable(self, existing: Run, header: Run, resume: bool) -> None:
        """Refuse to continue or join a stored run that measured something else, or is complete (a run
        of another set was refused by the caller)."""
        if resume and existing.status is RunStatus.COMPLETE:
            raise UsageError(f"run {existing.id} is already complete; there is nothing to resume")
        stored = existing.provenance if isinstance(existing.provenance, Mapping) else {}
        identity = self.identity
        differences = [
            what
            for what, ours, theirs in (
                ("kind", RunKind.RETRIEVAL.value, existing.kind.value),
                ("retriever", self.retriever_id, existing.retriever),
                ("deployment", self.deployment.name, existing.deployment),
                ("labels", identity.labels_fingerprint, existing.set_fingerprint),
                ("benchmark", identity.benchmark_fingerprint, existing.benchmark_fingerprint),
                ("k", identity.k, stored.get("k")),
                ("relevance threshold", identity.threshold, stored.get("relevance_threshold", 1)),
            )
            if ours != theirs
        ]
        if differences:
            verb = "differs" if len(differences) == 1 else "differ"
            what = f"run {existing.id} measured something else ({', '.join(differences)} {verb}); it cannot be"
            if resume:
                raise UsageError(f"{argument('resume')}: {what} continued as a run of {self._where()}")
            raise UsageError(f"{what} joined by a run of {self._where()}")
        if existing.status is RunStatus.COMPLETE:
            raise UsageError(
                f"run {existing.id} is already complete (its cases and verdict are kept); choose a new {argument('run_id')}"
            )

    def before_joining(self) -> list[str]:
        """Nothing: the retriever was prepared before the store was opened."""
        return []

    def secrets(self) -> tuple[str, ...]:
        """Nothing to scrub from a whole case: the retriever's credentials are taken out of each
        error as it is made (see :meth:`answer`)."""
        return ()

    def resumed(self, run_id: str, kept: int, asked: int) -> str | None:
        """Keeps ``Resumed run …: N questions answered before were kept, M asked now.`` for the detail."""
        kept = self._kept
        self.resume_note = (
            f"Resumed run {run_id}: {counted(kept, 'question')} answered before {'was' if kept == 1 else 'were'} kept, "
            f"{asked} asked now."
        )
        return None

    def select(self, part: Slice) -> list[GoldenQuestion]:
        """The set's questions in this shard without a stored answer; a stored answer that cannot be
        read back as a score (stored before measures were kept) is asked again."""
        self._keep_ranking = part.privacy == "full"
        skip = set(part.skip)
        if skip:
            by_id = {q.id: q for q in self.golden_set.questions}
            for case in part.stored_cases():
                question = by_id.get(case.case_id)
                if question is not None and case.case_id in skip and score_from_case(case, question) is None:
                    skip.discard(case.case_id)
        shard = part.shard
        self._kept = sum(1 for q in self.golden_set.questions if q.id in skip)
        return [q for q in self.golden_set.questions if q.id not in skip and (shard is None or shard.owns(q.id))]

    def answer(self, todo: Collection[Any], sink: CaseSink) -> None:
        """Ask ``todo``, score each ranking and commit each question's case as it comes."""
        # A retriever's own credentials never reach the store (nor, through the CLI's filter, the screen).
        secrets = (
            secrets_to_keep_out(self.retriever, f"retriever {quoted(self.retriever_id)}")
            if offers(self.retriever, SecretHolder)
            else ()
        )
        asking = Asking(
            self.retriever, self.retriever_id, retrieval_limit(self.k), self.in_flight, self.deployment.timeout
        )
        over_limit: list[int] = []
        try:
            for question, answer in ask_all(asking, list(todo)):
                if answer.ranking is None:
                    error = remove_secrets(answer.error, secrets) if answer.error else answer.error
                    case = CaseResult(
                        case_id=question.id, passed=False, score=0.0, latency_s=answer.latency_s, error=error,
                        yardstick=GRADER, finished_at=time.time(), fingerprint=question_fingerprint(question),
                    )  # fmt: skip
                    self.errors[question.id] = case
                else:
                    if answer.over_limit:
                        over_limit.append(answer.over_limit)
                    score = score_question(
                        question, answer.ranking.ids, self.k, answer.latency_s, self.identity.threshold
                    )
                    self.scores[question.id] = score
                    self.rankings[question.id] = answer.ranking
                    kept = answer.ranking if self._keep_ranking else None
                    case = case_from_score(score, self.k, ranking=kept, fingerprint=question_fingerprint(question))
                    if self.hole_judging is not None:
                        case = self._fill_holes(question, answer, case)
                sink.commit(case)  # committed per question: a crash loses at most the questions in flight
        finally:
            sink.flush()
        if over_limit:
            limit = asking.limit
            self.warnings.append(
                f"retriever {quoted(self.retriever_id)} returned more than limit={limit} ids for {counted(len(over_limit), 'question')} "
                f"(up to {max(over_limit)}); only the first {limit} of each were scored"
            )

    def _fill_holes(self, question: GoldenQuestion, answer: _Answer, case: CaseResult) -> CaseResult:
        """Have the judge grade the question's holes, score it again with them filled, and keep
        both in its case (see :mod:`evalkit.retrieval.holes`)."""
        judging = self.hole_judging
        assert judging is not None and answer.ranking is not None
        human = self.scores[question.id]
        if question.expects_no_result:  # people said nothing answers it: there is no hole to fill
            holes = HoleGrades({})
            filled = human
        else:
            holes = judging.grade(question, human.ranked_ids, self.k, self.retriever)
            filled_labels = filled_question(question, holes.grades, judging.binary)
            filled = score_question(
                filled_labels, answer.ranking.ids, self.k, answer.latency_s, self.identity.threshold
            )
        self.filled[question.id] = filled
        self.model_grades[question.id] = dict(holes.grades)
        self.hole_counts[question.id] = (len(holes.grades), holes.failed)
        detail = {**(case.detail or {}), "model_grades": dict(holes.grades)}
        return attrs.evolve(case, measures={**(case.measures or {}), **filled_measures(filled, holes)}, detail=detail)

    def holes_detail(self) -> HolesDetail | None:
        """The filled figures of the questions whose cases hold them (``None`` when no hole was judged)."""
        if not self.filled and self.hole_judging is None:
            return None
        order = [q.id for q in self.golden_set.questions if q.id in self.filled and q.id in self.scores]
        scores = {q: self.filled[q] for q in order}
        judge = self.hole_judging.identity() if self.hole_judging is not None else None
        judged = sum(self.hole_counts.get(q, (0, 0))[0] for q in order)
        unjudged = sum(self.hole_counts.get(q, (0, 0))[1] for q in order)
        return HolesDetail(
            aggregate(list(scores.values()), self.k), scores, dict(self.model_grades), judge, judged, unjudged
        )

    def finish(self, header: Run, store: Capabilities, streamed: bool) -> Finish:
        """The status and the run's metrics, over every question of the run: those asked here, and
        (a resumed run, a shard joining others) those the store already holds. With judged holes,
        the metrics also hold the filled figures and the judge (``judged_holes``)."""
        self._take_stored(header.id, store, header.privacy)
        metrics = self._metrics = aggregate(list(self.scores.values()), self.k)
        status = final_status(len(self.golden_set.questions), len(self.scores) + len(self.errors), len(self.errors))
        document = metrics_document(metrics, len(self.errors))
        holes = self.holes_detail()
        if holes is not None:
            document["judged_holes"] = {
                "judge": holes.judge, "questions": len(holes.scores), "judged": holes.judged, "unjudged": holes.unjudged,
                "metrics": attrs.asdict(holes.metrics),
            }  # fmt: skip
        return Finish(status, GRADER, metrics=document)

    def _missing(self) -> bool:
        """True while a question of the set is neither scored nor errored in this process's view."""
        return any(q.id not in self.scores and q.id not in self.errors for q in self.golden_set.questions)

    def _take_stored(self, run_id: str, store: Capabilities, privacy: str) -> None:
        """Read back the run's questions this process has not seen (when there are any), and keep
        the scores, rankings and errors in set order."""
        if self._missing():
            self._read_back(Slice(run_id, None, (), store, privacy).stored_cases())
        order = {q.id: n for n, q in enumerate(self.golden_set.questions)}
        self.scores = dict(sorted(self.scores.items(), key=lambda item: order[item[0]]))
        self.rankings = {q: self.rankings[q] for q in self.scores if q in self.rankings}
        self.errors = dict(sorted(self.errors.items(), key=lambda item: order[item[0]]))

    def _read_back(self, cases: Iterable[CaseResult]) -> None:
        """Take the stored questions this process did not ask: their scores, or their errors."""
        by_id = {q.id: q for q in self.golden_set.questions}
        for case in cases:
            question = by_id.get(case.case_id)
            if question is None or case.case_id in self.scores or case.case_id in self.errors:
                continue
            if case.errored:
                self.errors[case.case_id] = case
                continue
            read = score_from_case(case, question)
            if read is not None:
                self.scores[case.case_id], ranking = read
                if ranking is not None:
                    self.rankings[case.case_id] = ranking
                filled = filled_score_from_measures(case.measures, read[0])
                if filled is not None:
                    measures = case.measures or {}
                    self.filled[case.case_id] = filled
                    self.hole_counts[case.case_id] = (
                        int(measures.get("model_judged", 0)),
                        int(measures.get("model_unjudged", 0)),
                    )
                    grades = (case.detail or {}).get("model_grades") if isinstance(case.detail, Mapping) else None
                    if isinstance(grades, Mapping):
                        self.model_grades[case.case_id] = {str(d): g for d, g in grades.items() if type(g) is int}

    def detail(self, run: Run, verdict: Verdict, store: Capabilities) -> QuestionsDetail:
        """The question set, deployment, provenance, metrics and every question's score.

        When another shard closed the run after this one read the store (its finish saw the run
        still running, the store's status won), the questions it had not seen are read now, so the
        outcome of a complete run always covers the whole run."""
        if run.status is not RunStatus.RUNNING and self._missing():
            self._take_stored(run.id, store, run.privacy or "metadata")
            self._metrics = None
        metrics = self._metrics if self._metrics is not None else aggregate(list(self.scores.values()), self.k)
        return _detail(self, metrics, verdict)

    def resume_command(self, run_id: str, shard: Shard | None = None) -> str:
        """``evalkit retrieval SET RETRIEVER [--deployment NAME] --resume RUN_ID`` (a ``shard``'s:
        ``--shard I/N --run-id RUN_ID``), then the caller's :attr:`command_args`, quoted for a shell
        (:func:`~evalkit.wording.shell_line`); a set built in code (:attr:`in_code`):
        ``evaluate_retrieval`` again (:func:`~evalkit.run.placement.continuing_call`)."""
        if self.in_code:
            return continuing_call("evaluate_retrieval", self.golden_set.identifier, run_id, shard)
        where = ["--deployment", self.deployment.name] if self.deployment.name else []
        ending = continuing_words(run_id, shard)
        return shell_line(
            ["evalkit", "retrieval", self.golden_set.identifier, self.retriever_id, *where, *ending, *self.command_args]
        )


def _detail(answering: QuestionAnswering, metrics: RetrievalMetrics, verdict: Verdict) -> QuestionsDetail:
    check = verdict.comparability
    compared = verdict.comparison is not None
    return QuestionsDetail(
        question_set=answering.golden_set,
        deployment=answering.deployment,
        identity=answering.identity,
        metrics=metrics,
        scores=dict(answering.scores),
        rankings=dict(answering.rankings),
        errors=dict(answering.errors),
        baseline_state=None if verdict.state == PENDING else (check.label or UNKNOWN) if check is not None else UNKNOWN,
        treatment_changed=compared and check is not None and check.treatment_changed,
        prepare_seconds=answering.prepare_seconds,
        warnings=tuple(answering.warnings),
        resume_note=answering.resume_note,
        holes=answering.holes_detail(),
    )


def stored_answering(
    run: Run, question_set: GoldenQuestionSet, deployment: Deployment, store: Capabilities
) -> QuestionAnswering:
    """The answering of a stored retrieval run, read back from the store (nothing is asked): what
    the final job of a sharded run reports (see :func:`recorded_detail`)."""
    answering = QuestionAnswering(question_set, run.retriever or "", None, deployment, identity_of_run(run))
    answering._take_stored(run.id, store, run.privacy or "metadata")
    return answering


def recorded_detail(answering: QuestionAnswering, verdict: Verdict) -> tuple[Verdict, QuestionsDetail]:
    """The verdict of a stored retrieval run as recorded (its provenance word recovered from the
    stored note) and the detail of its outcome."""
    verdict = _recorded_state(verdict)
    return verdict, _detail(answering, aggregate(list(answering.scores.values()), answering.k), verdict)


# -- from arguments to an answering ---------------------------------------------------------------


@attrs.frozen
class QuestionSource:
    """What answers a retrieval run, as the caller named it: the question set (an identifier, the
    set itself, or a catalog entry whose provider may ship default deployments), the retriever
    (``None``: the one the deployment names) and the deployment, the cut-off ``k``, the relevance
    threshold and the questions in flight."""

    question_set: str | GoldenQuestionSet | SourcedSet
    retriever: str | None = None
    deployment: str | None = None
    k: int = 10
    relevance_threshold: int = 1
    concurrency: int = 1
    privacy: str | None = None


@attrs.frozen
class ResolvedQuestions:
    """A retrieval run's parts, resolved and checked before the retriever is created: the set, the
    retriever's entry point and factory, the deployment chosen, and the privacy level."""

    golden_set: GoldenQuestionSet
    retriever_id: str
    record: Any
    factory: Any
    deployment: Deployment
    privacy: str
    source: QuestionSource


def _load_question_set(
    question_set: str | GoldenQuestionSet | SourcedSet, config: Any
) -> tuple[GoldenQuestionSet, SourcedSet | None]:
    if isinstance(question_set, GoldenQuestionSet):
        return question_set, None
    sourced = (
        question_set if isinstance(question_set, SourcedSet) else question_set_catalog(config=config).get(question_set)
    )
    if not isinstance(sourced.set, GoldenQuestionSet):
        raise PluginError.for_plugin(
            sourced.record,
            f"golden question set provider {sourced.record.describe()} returned {type(sourced.set).__name__} "
            f"for {quoted(getattr(sourced.set, 'identifier', '?'))}, not a GoldenQuestionSet",
        )
    return sourced.set, sourced


def resolve_questions(source: QuestionSource, config: Any) -> ResolvedQuestions:
    """Resolve and check a retrieval run's parts, refusing, in this order: an unknown set, an
    unknown retriever, an invalid set, a bad ``k``, threshold, ``concurrency`` or privacy level,
    an unknown deployment — before the retriever is created and before anything is stored."""
    golden_set, sourced = _load_question_set(source.question_set, config)
    retriever, choice = source.retriever, None
    if retriever is None:
        choice = choose_deployment(source.deployment, config, sourced=sourced)
        retriever = retriever_of(choice, None)
    try:
        record = registry.find("evalkit.retrievers", retriever)
    except UnknownPluginError:
        installed = (r.name for r in registry.enabled("evalkit.retrievers"))
        if choice is not None and (unquoted := unquoted_retriever(choice, retriever, installed)) is not None:
            raise UsageError(unquoted) from None
        raise
    check_question_set(golden_set)
    for what, value in (
        ("k", source.k),
        ("the relevance threshold", source.relevance_threshold),
        ("concurrency", source.concurrency),
    ):
        # The command line's bound (cli.params.MAX_COUNT) holds for a library caller too: a k of
        # 10**12 asked the retriever for that many ids and grew to tens of gigabytes.
        if type(value) is not int or not 1 <= value <= MAX_CONCURRENCY:
            raise UsageError(f"{what} must be a positive integer up to {MAX_CONCURRENCY:,} (got {value!r})")
    privacy = source.privacy or config.privacy
    if (refused := privacy_refusal(privacy)) is not None:
        raise UsageError(refused)
    factory = registry.load(record)
    if choice is None:
        choice = choose_deployment(source.deployment, config, sourced=sourced)
    deployment = deployment_options(choice, retriever, factory) if choice is not None else no_deployment(retriever, config.deployments)
    return ResolvedQuestions(golden_set, retriever, record, factory, deployment, privacy, source)


def _create_retriever(resolved: ResolvedQuestions, config: Any) -> Any:
    record, deployment = resolved.record, resolved.deployment
    try:
        # bounded as each question is: a factory that never returned (a connection to a server that
        # never answers) hung the command before anything was stored
        within = (deployment.timeout, "the deployment's timeout")
        retriever = registry.build(record, resolved.factory, deployment.options, deployment.table, within=within)
    except (PluginError, ConfigError) as exc:
        # options checked against no deployment already say how to choose one (no_deployment's
        # table): a second "choose one" after them said it twice, joined by "..".
        if deployment.name is None and config.deployments and not isinstance(exc, (OptionsDeclarationError, OptionsError)):
            raise UsageError(
                f"{str(exc).rstrip('.')}. No deployment was chosen, so it got no options; choose one with {argument('deployment', 'NAME')} "
                f"(configured: {', '.join(sorted(config.deployments))})"
            ) from exc
        raise
    return registry.require_offered(record, retriever, (Retriever,), "has no retrieve(question, limit) method")


def _identity(resolved: ResolvedQuestions, retriever: Any) -> RetrievalIdentity:
    """The run's identity from the retriever's declaration, taken once; a raising or invalid one is unknown."""
    golden_set, k, threshold = resolved.golden_set, resolved.source.k, resolved.source.relevance_threshold
    if not offers(retriever, RetrievalProvenanceProvider):
        return retrieval_identity(golden_set, None, k, threshold)
    # bounded as each question is: a provenance() that never returned hung the run before it began
    limit = resolved.deployment.timeout
    try:
        declared = call_within(retriever.provenance, limit, "evalkit-provenance")
    except CallAbandoned:
        problem = (
            f"retriever {quoted(resolved.retriever_id)}: provenance() did not return within {limit:g} s "
            "(the deployment's timeout); the call was abandoned"
        )
        return attrs.evolve(retrieval_identity(golden_set, None, k, threshold), problems=(problem,))
    except PLUGIN_FAILURES as exc:
        problem = f"retriever {quoted(resolved.retriever_id)}: provenance() raised {exception_text(exc)}"
        return attrs.evolve(retrieval_identity(golden_set, None, k, threshold), problems=(problem,))
    return retrieval_identity(golden_set, declared, k, threshold)


#: How long a retriever's ``prepare()`` runs before the caller hears it is still running
#: (``on_prepare``), and the longest wait between two such reports: each wait doubles up to it, so
#: an index build of an hour is told at 5, 15, 35, 75 s and then every minute, not 720 times.
PREPARE_REPORTED_AFTER_S = 5.0
PREPARE_REPORTED_EVERY_S = 60.0


def _report_while_preparing(
    on_prepare: Callable[[str, float], object], retriever_id: str, done: threading.Event
) -> None:
    """``on_prepare(retriever_id, seconds so far)`` now and then until ``done`` (a daemon thread's
    loop: ``prepare()`` runs in the caller's thread, where Ctrl-C reaches it and its own cleanup runs)."""
    started, wait = time.monotonic(), PREPARE_REPORTED_AFTER_S
    while not done.wait(wait):
        try:
            on_prepare(retriever_id, time.monotonic() - started)
        except Exception:  # noqa: BLE001 - a report that cannot be made stops the reports, not the run
            return
        wait = min(wait * 2, PREPARE_REPORTED_EVERY_S)


def _prepare(
    retriever: Any, retriever_id: str, on_prepare: Callable[[str, float], object] | None = None
) -> float | None:
    if not offers(retriever, PreparedRetriever):
        return None
    started = time.perf_counter()
    # Untimed (an index build may rightly take long), but not silent: a long one is reported.
    done = threading.Event()
    if on_prepare is not None:
        threading.Thread(
            target=_report_while_preparing,
            args=(on_prepare, retriever_id, done),
            name="evalkit-prepare-progress",
            daemon=True,
        ).start()
    try:
        carried(retriever.prepare)
    except EvalkitError:
        raise
    except PLUGIN_FAILURES as exc:
        raise RetrievalError(f"retriever {quoted(retriever_id)} could not prepare: {exception_text(exc)}") from exc
    finally:
        done.set()
    return time.perf_counter() - started


def start_retriever(
    resolved: ResolvedQuestions, config: Any, on_prepare: Callable[[str, float], object] | None = None
) -> QuestionAnswering:
    """Create the retriever (with the deployment's options), refuse ``concurrency`` above 1 for one
    that is not thread-safe, take its provenance once and prepare it — still before anything is
    stored. The caller closes it (:func:`close_retriever`), whatever happens next.

    ``prepare()`` has no time limit; while it runs, ``on_prepare(retriever id, seconds so far)``
    is called (from another thread) after :data:`PREPARE_REPORTED_AFTER_S` and then now and then."""
    retriever = _create_retriever(resolved, config)
    concurrency = resolved.source.concurrency
    try:
        # read under the one rule for a plugin's optional attribute: a thread_safe that raises is not declared
        if concurrency > 1 and declared(retriever, "thread_safe") is not True:
            raise UsageError(
                f"{argument('concurrency', concurrency)}: retriever {quoted(resolved.retriever_id)} does not declare itself thread-safe "
                f"(thread_safe = True), so its questions are asked one at a time; drop {argument('concurrency')}"
            )
        identity = _identity(resolved, retriever)
        prepared = _prepare(retriever, resolved.retriever_id, on_prepare)
    except BaseException:
        close_retriever(
            retriever, resolved.record, resolved.deployment.timeout
        )  # what went wrong first is what is said
        raise
    return QuestionAnswering(
        resolved.golden_set, resolved.retriever_id, retriever, resolved.deployment, identity,
        in_flight=concurrency, prepare_seconds=prepared, in_code=isinstance(resolved.source.question_set, GoldenQuestionSet),
    )  # fmt: skip


def close_retriever(retriever: Any, who: Any, limit: float) -> str | None:
    """Close a retriever that holds something open, waiting at most ``limit`` seconds (the
    deployment's timeout: a ``close()`` that never returned kept the process from ever exiting);
    what it raised, or that it was abandoned, as a warning naming it and its distribution
    (``who``: its record, see :func:`~evalkit.components.plugin_close_failed`; ``None``: closed,
    or nothing to close). The run is stored by then: a retriever that fails to close does not
    change it, its verdict or the exit code."""
    if not offers(retriever, ClosingRetriever):
        return None
    try:
        call_within(retriever.close, limit, "evalkit-close")
    except CallAbandoned:
        return plugin_close_stuck(who, "close", limit)
    except PLUGIN_FAILURES as exc:
        return plugin_close_failed(who, "close", exc)
    return None


def check_baseline_file(baseline: Run, named: str, resolved: ResolvedQuestions) -> None:
    """Refuse a baseline file (``named``: ``baseline file PATH``) of another scope before the
    retriever is created or anything is stored."""
    scope = BaselineScope(
        RunKind.RETRIEVAL,
        resolved.golden_set.identifier,
        retriever=resolved.retriever_id,
        deployment=resolved.deployment.name,
    )
    if baseline.kind is not RunKind.RETRIEVAL:
        raise UsageError(
            f"{named} holds run {baseline.id} of another scope: it is a {baseline.kind.value} run, not a retrieval run"
        )
    if (incomplete := not_complete(baseline, f"{named} holds run {baseline.id}, which")) is not None:
        raise UsageError(incomplete)
    problem = scope_mismatch(baseline, scope)
    if problem is not None:
        raise UsageError(f"{named} holds a run of another scope: {problem}")


def check_chosen_baseline(repository: ResultRepository, baseline_id: str, resolved: ResolvedQuestions) -> None:
    """Refuse a chosen baseline of another scope before the retriever is created or anything is stored."""
    chosen = stored_run(repository, baseline_id, with_cases=False, option=argument("baseline"))
    scope = BaselineScope(
        RunKind.RETRIEVAL,
        resolved.golden_set.identifier,
        retriever=resolved.retriever_id,
        deployment=resolved.deployment.name,
    )
    if chosen.kind is not RunKind.RETRIEVAL:
        raise UsageError(
            f"{argument('baseline', chosen.id)} is of another scope: it is a {chosen.kind.value} run, not a retrieval run"
        )
    if (incomplete := not_complete(chosen, argument("baseline", chosen.id))) is not None:
        raise UsageError(incomplete)
    problem = scope_mismatch(chosen, scope)
    if problem is not None:
        # scope_mismatch's sentence begins "run ID is of another scope": said after the same
        # words here, the refusal read "--baseline ID is of another scope: run ID is of another scope"
        theirs = BaselineScope.of_run(chosen)
        which = f"it is of {theirs.describe()}, not {scope.describe()}" if theirs is not None else problem
        raise UsageError(f"{argument('baseline', chosen.id)} is of another scope: {which}")
