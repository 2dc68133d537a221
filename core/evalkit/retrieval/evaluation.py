"""Running a golden question set against a retriever end to end, as a library call.

The CLI (``evalkit retrieval SET RETRIEVER``) is a thin layer over :func:`evaluate_retrieval`.
The path mirrors a prompt run: refuse everything refusable before the retriever is created or
anything is stored, ask every question, store one case per question, then decide the baseline
state and compare.

Stored like a prompt run (grader ``retrieval_hit_rate``): a case *passes* on a top-1 hit and
*scores* 1.0 on a top-3 hit, so the stored pass rate is the top-1 hit rate and the mean score
the top-3 hit rate. Every case carries the checks ``hit_at_1`` and ``hit_at_3`` (kept at every
privacy level); its ``detail`` — form, hard class, the distinct ranked ids and the question's
reciprocal rank within k, recall@k and nDCG@k — is kept at ``redacted`` and ``full`` privacy only, because
document ids can name content (a path, a title). The run's metrics (every rate, mean and
breakdown) are stored with the run at every level.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

import attrs

from evalkit import hooks, registry
from evalkit.baselines import Acceptance, BaselineScope, scope_mismatch, unreadable_baseline
from evalkit.catalog import SourcedSet, question_set_catalog
from evalkit.components import SecretHolder
from evalkit.config import DEFAULT_HOOK_TIMEOUT_S, PRIVACY_LEVELS, Config, load_config
from evalkit.errors import (
    PLUGIN_FAILURES,
    ConfigError,
    EvalkitError,
    PluginError,
    RetrievalError,
    StorageError,
    StoreFailure,
    UsageError,
)
from evalkit.grading import Check
from evalkit.interruptions import mark_interrupted, store_failed
from evalkit.privacy import remove_secrets
from evalkit.questions import GoldenQuestion, GoldenQuestionSet, RetrievalProvenance
from evalkit.runs import CaseResult, Run, RunKind, RunStatus
from evalkit.set_versions import question_fingerprint
from evalkit.storage import (
    AcceptedBaselines,
    FirstAcceptance,
    ResumableRetrievalRuns,
    ResumableRuns,
    RunVerdicts,
    StoredVerdict,
    check_database_url,
    close_repository,
    is_in_memory,
    open_repository,
    resolve_database_url,
)
from evalkit.tolerance import Tolerances, resolve_tolerances
from evalkit.validation import check_label
from evalkit.verdict import Comparison, compare

from ..bounded import BoundedCalls
from ..wording import counted
from .contracts import (
    ClosingRetriever,
    PreparedRetriever,
    RetrievalProvenanceProvider,
    Retriever,
    ThreadSafeRetriever,
)
from .deployments import (
    DEFAULT_TIMEOUT_S,
    DEPLOYMENT_ENV,
    Deployment,
    choose_deployment,
    deployment_options,
    resolve_deployment,
    retriever_of,
)
from .provenance import (
    BASELINE,
    COMPARABLE,
    MISMATCH,
    SCORING_VERSION,
    UNKNOWN,
    RetrievalIdentity,
    baseline_state,
    benchmark_fingerprint,
    retrieval_identity,
    validate_provenance,
)
from .ranking import Ranking, read_ranking
from .scoring import (
    DEFAULT_K,
    DEFAULT_RELEVANCE_THRESHOLD,
    QuestionScore,
    RetrievalMetrics,
    aggregate,
    score_question,
)
from .validation import check_question_set

__all__ = [
    "DEPLOYMENT_ENV",
    "GRADER",
    "HIT_AT_1",
    "HIT_AT_3",
    "MIN_LIMIT",
    "CASE_BATCH",
    "Deployment",
    "RetrievalOutcome",
    "case_from_score",
    "comparison_summary",
    "evaluate_retrieval",
    "metrics_document",
    "provenance_document",
    "resolve_deployment",
    "retrieval_limit",
    "stored_benchmark",
]

#: The yardstick every retrieval run is stored under.
GRADER = "retrieval_hit_rate"
HIT_AT_1 = "hit_at_1"
HIT_AT_3 = "hit_at_3"
#: Every question asks for at least this many ids (the original's 4 x top-3 over-fetch), more when k is larger.
MIN_LIMIT = 12
#: The batch size the storage benchmark commits in; a run commits every question as it is scored.
CASE_BATCH = 256
_PROVENANCE_FIELDS = ("corpus_revision", "model_revision", "chunking_identity", "pipeline_identity")


def retrieval_limit(k: int) -> int:
    """The ``limit`` each question is sent with: ``max(k, 12)``."""
    return max(k, MIN_LIMIT)


# -- the outcome --------------------------------------------------------------------------------


@attrs.frozen
class RetrievalOutcome:
    """What a retrieval run produced.

    ``run`` is the stored run with its cases; ``scores`` the per-question scores of the questions
    the retriever answered (errored questions have a case but no score), keyed by question id in
    set order, and ``rankings`` what the retriever returned for them (distinct ids to the fetch
    depth, with scores when it gave them). ``state`` is the baseline state (``baseline``, ``comparable``, ``mismatch`` or
    ``unknown``); ``comparison`` is set only for a complete ``comparable`` run, and ``reason``
    says why there is no comparison otherwise. ``treatment_changed`` is true when a comparable
    run's variant (model, chunking, pipeline) differs from the baseline's.
    """

    run: Run
    question_set: GoldenQuestionSet
    deployment: Deployment
    identity: RetrievalIdentity
    metrics: RetrievalMetrics
    scores: Mapping[str, QuestionScore]
    state: str
    rankings: Mapping[str, Ranking] = attrs.Factory(dict)
    comparison: Comparison | None = None
    baseline: Run | None = None
    reason: str | None = None
    treatment_changed: bool = False
    #: Set when the run became the accepted baseline of its scope (set, retriever, deployment).
    acceptance: Acceptance | None = None
    prepare_seconds: float | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    plugin_failures: tuple[str, ...] = ()
    #: Set when the run continued an unfinished one: how many questions were kept and asked.
    resume_note: str | None = None

    @property
    def regressed(self) -> bool:
        """True when compared and the top-1 or top-3 hit rate dropped beyond its tolerance."""
        return self.comparison is not None and self.comparison.regressed

    @property
    def new_failures(self) -> tuple[str, ...]:
        """Added or edited questions that miss their top-1 hit now (empty when not compared)."""
        return self.comparison.new_failures if self.comparison is not None else ()

    def exit_code(self, fail_on_regression: bool, fail_on_new_failures: bool = False) -> int:
        """0 fine · 1 the gate failed (regression, or ``mismatch``/``unknown`` when strict; an added
        or edited question that misses under ``fail_on_new_failures``) · 3 incomplete."""
        if self.run.status is not RunStatus.COMPLETE:
            return 3
        if fail_on_regression and (self.regressed or self.state in (MISMATCH, UNKNOWN)):
            return 1
        if fail_on_new_failures and self.new_failures:
            return 1
        return 0


# -- conversions shared with the benchmark -------------------------------------------------------


def case_from_score(
    score: QuestionScore,
    k: int,
    finished_at: float | None = None,
    ranking: Ranking | None = None,
    fingerprint: str | None = None,
) -> CaseResult:
    """The stored case of one scored question (pass = top-1 hit, score = 1.0 on a top-3 hit).

    With ``ranking`` (a run at ``full`` privacy) the detail also keeps every returned id to the
    fetch depth with the retriever's score (``[[id, score or null], ...]``); ``fingerprint`` is the
    question's (:func:`evalkit.set_versions.question_fingerprint`).
    """
    detail: dict[str, Any] = {
        "form": score.form.value,
        "hard_class": score.hard_class,
        "ranked_ids": list(score.ranked_ids),
        "reciprocal_rank_at_k": score.reciprocal_rank_at_k,
        "recall_at_k": score.recall_at_k,
        "ndcg_at_k": score.ndcg_at_k,
        "k": k,
    }
    if ranking is not None:
        detail["ranking"] = ranking.pairs()
    return CaseResult(
        measures={
            "reciprocal_rank_at_k": score.reciprocal_rank_at_k,
            "recall_at_k": score.recall_at_k,
            "ndcg_at_k": score.ndcg_at_k,
        },
        case_id=score.question_id,
        passed=score.hit_at_1,
        score=1.0 if score.hit_at_3 else 0.0,
        checks=(Check(HIT_AT_1, score.hit_at_1), Check(HIT_AT_3, score.hit_at_3)),
        latency_s=score.latency_s,
        yardstick=GRADER,
        detail=detail,
        finished_at=finished_at if finished_at is not None else time.time(),
        fingerprint=fingerprint,
    )


def metrics_document(metrics: RetrievalMetrics, errored: int = 0) -> dict[str, Any]:
    """The run metrics as stored with the run: ``{"retrieval": {...every metric, by_form, by_hard_class}}``."""
    document = attrs.asdict(metrics)
    document["errored_questions"] = errored
    return {"retrieval": document}


def provenance_document(identity: RetrievalIdentity) -> dict[str, Any]:
    """The provenance stored with the run: the declaration (when known), labels fingerprint, scoring version and k."""
    document: dict[str, Any] = {}
    if identity.provenance is not None:
        document.update(attrs.asdict(identity.provenance))
    document.update(
        labels_fingerprint=identity.labels_fingerprint, scoring_version=identity.scoring_version, k=identity.k
    )
    if identity.threshold != DEFAULT_RELEVANCE_THRESHOLD:
        document["relevance_threshold"] = identity.threshold
    if identity.problems:
        document["problems"] = list(identity.problems)
    return document


def stored_benchmark(run: Run) -> str:
    """A stored run's benchmark fingerprint, ``''`` when its stored declaration is missing or invalid."""
    stored = run.provenance
    if not isinstance(stored, Mapping) or not run.benchmark_fingerprint:
        return ""
    if not all(isinstance(stored.get(f), str) for f in _PROVENANCE_FIELDS):
        return ""
    execution = stored.get("execution_revision")
    if execution is not None and not isinstance(execution, str):
        return ""
    declared = RetrievalProvenance(*(stored[f] for f in _PROVENANCE_FIELDS), execution_revision=execution)
    return "" if validate_provenance(declared) else run.benchmark_fingerprint


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
        raw = retriever.retrieve(question.question, limit)
        latency = time.perf_counter() - started
        ranking, over = read_ranking(raw, limit)
    except RetrievalError as exc:
        return _Answer(None, time.perf_counter() - started, f'retriever "{retriever_id}" on question "{question.id}": {exc}')
    except PLUGIN_FAILURES as exc:
        return _Answer(
            None,
            time.perf_counter() - started,
            f'retriever "{retriever_id}" raised {type(exc).__name__} on question "{question.id}": {exc}',
        )
    return _Answer(ranking, latency, over_limit=over)


def _answers(
    retriever: Any,
    retriever_id: str,
    questions: Sequence[GoldenQuestion],
    limit: int,
    concurrency: int,
    time_limit: float = DEFAULT_TIMEOUT_S,
) -> Iterator[tuple[GoldenQuestion, _Answer]]:
    """Each question with its answer, in set order; at most ``concurrency`` questions in flight,
    each given ``time_limit`` seconds (a retriever that does not answer in time errs that question)."""
    calls = BoundedCalls(concurrency)
    try:
        pending: deque[tuple[GoldenQuestion, Future[_Answer], float]] = deque()
        queue = iter(questions)

        def submit(question: GoldenQuestion) -> None:
            pending.append((question, calls.submit(_ask, retriever, retriever_id, question, limit), time.monotonic()))

        for question in queue:
            submit(question)
            if len(pending) >= concurrency:
                break
        while pending:
            question, future, submitted = pending.popleft()
            try:
                answer = future.result(timeout=max(0.0, submitted + time_limit - time.monotonic()))
            except FutureTimeout:
                calls.abandon(future)
                answer = _Answer(
                    None,
                    time.monotonic() - submitted,
                    f'retriever "{retriever_id}" on question "{question.id}": no answer within {time_limit:g} s '
                    "(the deployment's timeout); the call was abandoned",
                )
            following = next(queue, None)
            if following is not None:
                submit(following)
            yield question, answer
    finally:
        calls.close()


# -- the run ------------------------------------------------------------------------------------


def _load_question_set(
    question_set: str | GoldenQuestionSet | SourcedSet, config: Config | None = None
) -> tuple[GoldenQuestionSet, SourcedSet | None]:
    if isinstance(question_set, GoldenQuestionSet):
        return question_set, None
    sourced = question_set if isinstance(question_set, SourcedSet) else question_set_catalog(config=config).get(question_set)
    if not isinstance(sourced.set, GoldenQuestionSet):
        raise PluginError.for_plugin(
            sourced.record,
            f"golden question set provider {sourced.record.describe()} returned {type(sourced.set).__name__} "
            f'for "{getattr(sourced.set, "identifier", "?")}", not a GoldenQuestionSet',
        )
    return sourced.set, sourced


def _create_retriever(record: registry.PluginRecord, factory: Any, deployment: Deployment, config: Config) -> Any:
    try:
        retriever = registry.build(record, factory, deployment.options, deployment.table)
    except (PluginError, ConfigError) as exc:
        if deployment.name is None and config.deployments:
            raise UsageError(
                f"{exc}. No deployment was chosen, so it got no options; choose one with --deployment NAME "
                f"(configured: {', '.join(sorted(config.deployments))})"
            ) from exc
        raise
    if not isinstance(retriever, Retriever):
        raise PluginError.for_plugin(
            record,
            f"retriever {record.describe()}: its factory returned {type(retriever).__name__!r}, "
            "which has no retrieve(question, limit) method",
        )
    return retriever


def _identity(
    golden_set: GoldenQuestionSet, retriever: Any, retriever_id: str, k: int, threshold: int
) -> RetrievalIdentity:
    """The run's identity from the retriever's declaration, taken once; a raising or invalid one is unknown."""
    if not isinstance(retriever, RetrievalProvenanceProvider):
        return retrieval_identity(golden_set, None, k, threshold)
    try:
        declared = retriever.provenance()
    except PLUGIN_FAILURES as exc:
        problem = f'retriever "{retriever_id}": provenance() raised {type(exc).__name__}: {exc}'
        return attrs.evolve(retrieval_identity(golden_set, None, k, threshold), problems=(problem,))
    return retrieval_identity(golden_set, declared, k, threshold)


def _prepare(retriever: Any, retriever_id: str) -> float | None:
    if not isinstance(retriever, PreparedRetriever):
        return None
    started = time.perf_counter()
    try:
        retriever.prepare()
    except EvalkitError:
        raise
    except PLUGIN_FAILURES as exc:
        raise RetrievalError(f'retriever "{retriever_id}" could not prepare: {type(exc).__name__}: {exc}') from exc
    return time.perf_counter() - started


def _close(retriever: Any) -> None:
    if isinstance(retriever, ClosingRetriever):
        retriever.close()


def evaluate_retrieval(
    question_set: str | GoldenQuestionSet | SourcedSet,
    retriever: str | None = None,
    *,
    deployment: str | None = None,
    config: Config | None = None,
    database: str | None = None,
    tolerances: Tolerances | None = None,
    k: int = DEFAULT_K,
    relevance_threshold: int = DEFAULT_RELEVANCE_THRESHOLD,
    privacy: str | None = None,
    label: str | None = None,
    concurrency: int = 1,
    run_id: str | None = None,
    resume: bool = False,
    baseline: str | None = None,
    fail_on_new_failures: bool = False,
    hook_plugins: Sequence[Any] = (),
    on_start: Callable[[Run, int], None] | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
    cwd: Path | None = None,
) -> RetrievalOutcome:
    """Ask every question of a golden question set, store the run and compare it with its predecessor.

    ``question_set`` is an identifier (or the set itself, or a catalog entry whose provider may
    ship default deployments), ``retriever`` an ``evalkit.retrievers``
    entry-point name (``None``: the one the deployment names), created with the options of
    ``deployment`` (else ``$EVALKIT_DEPLOYMENT``, else none; see
    :mod:`evalkit.retrieval.deployments`). ``relevance_threshold`` is the grade from which a
    judged document counts for hit@1, hit@3, MRR and recall (nDCG uses the grades themselves). Refused before the retriever is created and before
    anything is stored, in this order: an unknown set, an unknown retriever, an invalid set, a bad
    ``k``, ``privacy`` or ``concurrency``, an unknown deployment; then the retriever is created,
    asked for its provenance once and prepared, still before anything is stored.

    Each question is sent with ``limit = max(k, 12)``; ``concurrency`` questions are in flight at
    once (default 1: sequential, so latencies are not inflated by contention and retrievers need
    not be thread-safe). A retriever that raises, or returns something other than a list of string
    ids (or ``(id, score)`` pairs), makes that question an errored case and the run
    ``incomplete``; repeated and empty ids are collapsed (a chunk retriever ranks documents
    through its chunks); ids beyond ``limit`` are dropped with a warning. ``concurrency`` above 1
    is refused for a retriever that does not declare itself thread-safe
    (:class:`~evalkit.retrieval.contracts.ThreadSafeRetriever`).

    Every question's case is committed as soon as it is scored. ``resume`` continues an
    unfinished run (``run_id``, else the newest unfinished run of the same set, retriever and
    deployment): only the questions it has no answer for are asked, and the run's metrics cover
    all of them. A run that measured something else (labels, benchmark, ``k``, threshold) is
    refused, as is a complete one.

    The baseline is the most recently accepted run of the same set and retriever in the same
    deployment (see :mod:`evalkit.baselines`), or the stored run ``baseline`` when one is chosen (a
    run of another set, retriever or deployment is refused before the retriever is created). The
    baseline state follows :func:`~evalkit.retrieval.provenance.baseline_state`, and only a
    ``comparable`` run is compared (:func:`evalkit.verdict.compare`: pass rate = top-1, mean
    score = top-3 hit rate). A complete run is accepted automatically when it is the first of its
    scope or compared with an accepted run without a regression.
    """
    check_label(label)
    config = config if config is not None else load_config(cwd=cwd)
    tolerances = resolve_tolerances(tolerances)
    golden_set, sourced = _load_question_set(question_set, config)
    choice = None
    if retriever is None:
        choice = choose_deployment(deployment, config, sourced=sourced)
        retriever = retriever_of(choice, None)
    record = registry.find("evalkit.retrievers", retriever)
    check_question_set(golden_set)
    if type(k) is not int or k < 1:
        raise UsageError(f"k must be a positive integer (got {k!r})")
    if type(relevance_threshold) is not int or relevance_threshold < 1:
        raise UsageError(f"the relevance threshold must be a positive integer (got {relevance_threshold!r})")
    if type(concurrency) is not int or concurrency < 1:
        raise UsageError(f"concurrency must be a positive integer (got {concurrency!r})")
    privacy = privacy or config.privacy
    if privacy not in PRIVACY_LEVELS:
        raise UsageError(f"privacy must be one of {', '.join(PRIVACY_LEVELS)}, got {privacy!r}")
    factory = registry.load(record)
    if choice is None:
        choice = choose_deployment(deployment, config, sourced=sourced)
    chosen = deployment_options(choice, retriever, factory)
    if baseline is not None:
        _check_chosen_baseline(resolve_database_url(database, config, cwd), baseline, golden_set.identifier, retriever, chosen.name)
    manager, hook_failures = hooks.plugin_manager(hook_plugins)
    url = resolve_database_url(database, config, cwd)
    check_database_url(url)  # a bad store is refused before the retriever is created
    instance = _create_retriever(record, factory, chosen, config)
    try:
        if concurrency > 1 and not (isinstance(instance, ThreadSafeRetriever) and instance.thread_safe is True):
            raise UsageError(
                f'--concurrency {concurrency}: retriever "{retriever}" does not declare itself thread-safe '
                "(thread_safe = True), so its questions are asked one at a time; drop --concurrency"
            )
        identity = _identity(golden_set, instance, retriever, k, relevance_threshold)
        prepare_seconds = _prepare(instance, retriever)
        repository = open_repository(url)
        try:
            resumed = _resumed_run(repository, golden_set, retriever, chosen, identity, run_id) if resume else None
            outcome = _run(
                golden_set, retriever, instance, chosen, identity, repository, tolerances, k,
                resumed.privacy if resumed is not None and resumed.privacy else privacy, label,
                concurrency, manager, on_start, on_case, prepare_seconds,
                tuple(f.error for f in hook_failures), resumed, baseline, fail_on_new_failures,
                hook_timeout=config.hook_timeout,
            )
        finally:
            close_repository(repository)
    finally:
        _close(instance)
    if is_in_memory(url):
        outcome = attrs.evolve(
            outcome, notes=(*outcome.notes, f"The store is in memory ({url}): this run will not be kept.")
        )
    return outcome


def _run(
    golden_set: GoldenQuestionSet,
    retriever_id: str,
    retriever: Any,
    deployment: Deployment,
    identity: RetrievalIdentity,
    repository: Any,
    tolerances: Tolerances,
    k: int,
    privacy: str,
    label: str | None,
    concurrency: int,
    manager: Any,
    on_start: Callable[[Run, int], None] | None,
    on_case: Callable[[CaseResult], None] | None,
    prepare_seconds: float | None,
    plugin_failures: tuple[str, ...],
    resumed: Run | None = None,
    baseline_id: str | None = None,
    fail_on_new_failures: bool = False,
    *,
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT_S,
) -> RetrievalOutcome:
    from evalkit.runner import new_run_id

    started = time.time()
    header = Run(
        id=resumed.id if resumed is not None else new_run_id(started),
        set_identifier=golden_set.identifier,
        grader=GRADER,
        kind=RunKind.RETRIEVAL,
        started_at=started,
        case_count=len(golden_set.questions),
        set_fingerprint=identity.labels_fingerprint,
        fingerprints_kept=True,  # each question's case carries its fingerprint
        adapter=retriever_id,
        retriever=retriever_id,
        deployment=deployment.name,
        benchmark_fingerprint=identity.benchmark_fingerprint,
        variant_fingerprint=identity.variant_fingerprint,
        provenance=provenance_document(identity),
        label=label,
        privacy=privacy,
    )
    repository.begin_run(header)
    kept = _answered_before(repository, resumed, golden_set, k) if resumed is not None else {}
    if resumed is not None and isinstance(repository, ResumableRuns):
        repository.mark_status(header.id, RunStatus.RUNNING.value)
    todo = [q for q in golden_set.questions if q.id not in kept]
    observers = hooks.Observers(manager, hook_timeout)
    observers.notify("evalkit_run_started", run=header, total=len(todo))
    if on_start is not None:
        on_start(header, len(todo))
    limit = retrieval_limit(k)
    threshold = identity.threshold
    keep_ranking = privacy == "full"
    scores: dict[str, QuestionScore] = {}
    rankings: dict[str, Ranking] = {}
    for question_id, (score, ranking) in kept.items():
        scores[question_id] = score
        if ranking is not None:
            rankings[question_id] = ranking
    errored = 0
    over_limit: list[int] = []
    pending: list[CaseResult] = []
    # A retriever's own credentials never reach the store (nor, through the CLI's filter, the screen).
    secrets = tuple(retriever.secret_values()) if isinstance(retriever, SecretHolder) else ()

    def flush() -> None:
        nonlocal pending
        if pending:
            batch, pending = pending, []
            repository.record_cases(header.id, batch, privacy)

    def _ask_all() -> None:
        nonlocal errored
        for question, answer in _answers(retriever, retriever_id, todo, limit, concurrency, deployment.timeout):
            if answer.ranking is None:
                errored += 1
                case = CaseResult(
                    case_id=question.id, passed=False, score=0.0, latency_s=answer.latency_s,
                    error=remove_secrets(answer.error, secrets) if answer.error else answer.error, yardstick=GRADER, finished_at=time.time(),
                    fingerprint=question_fingerprint(question),
                )  # fmt: skip
            else:
                if answer.over_limit:
                    over_limit.append(answer.over_limit)
                ranking = answer.ranking
                score = score_question(question, ranking.ids, k, answer.latency_s, threshold)
                scores[question.id] = score
                rankings[question.id] = ranking
                case = case_from_score(score, k, ranking=ranking if keep_ranking else None, fingerprint=question_fingerprint(question))
            pending.append(case)
            flush()  # committed per question: a crash loses at most the questions in flight
            observers.notify("evalkit_case_graded", run=header, case=case)
            if on_case is not None:
                on_case(case)
        flush()

    try:
        _ask_all()
    except KeyboardInterrupt:
        try:
            flush()
        except StoreFailure:
            pass
        mark_interrupted(repository, header.id)
        raise
    except StoreFailure as exc:
        raise store_failed(repository, header, exc, resumable=False) from None
    warnings = []
    if over_limit:
        warnings.append(
            f'retriever "{retriever_id}" returned more than limit={limit} ids for {counted(len(over_limit), "question")} '
            f"(up to {max(over_limit)}); only the first {limit} of each were scored"
        )
    order = {q.id: n for n, q in enumerate(golden_set.questions)}
    scores = dict(sorted(scores.items(), key=lambda item: order[item[0]]))
    rankings = {q: rankings[q] for q in scores if q in rankings}
    metrics = aggregate(list(scores.values()), k)
    status = RunStatus.INCOMPLETE if errored else RunStatus.COMPLETE
    try:
        stored = repository.finish_run(
            header.id, status.value, time.time(), grader=GRADER, metrics=metrics_document(metrics, errored)
        )
        for attempt in ("first", "again"):
            outcome = _decide(
                stored, golden_set, deployment, identity, metrics, scores, repository, tolerances,
                prepare_seconds, tuple(warnings), plugin_failures, baseline_id,
            )  # fmt: skip
            if isinstance(repository, RunVerdicts):
                repository.record_verdict(stored.id, _stored_verdict(outcome))
            acceptance = _automatic_acceptance(outcome, repository, fail_on_new_failures)
            if acceptance is None:
                break
            if acceptance.how == "first" and attempt == "first" and isinstance(repository, FirstAcceptance):
                # Two first runs of a scope finishing at once: one is the first, the other is
                # decided again, against it.
                if not repository.accept_if_first(stored.id, BaselineScope.of_run(stored), acceptance):  # type: ignore[arg-type]
                    continue
            else:
                repository.accept_run(stored.id, acceptance)
            outcome = attrs.evolve(outcome, acceptance=acceptance)
            break
        outcome = attrs.evolve(outcome, rankings=rankings)
        if resumed is not None:
            note = f"Resumed run {header.id}: {counted(len(kept), 'question')} answered before {'was' if len(kept) == 1 else 'were'} kept, {len(todo)} asked now."
            outcome = attrs.evolve(outcome, resume_note=note)
    except StoreFailure as exc:
        raise store_failed(repository, header, exc, resumable=False) from None
    observers.notify("evalkit_run_finished", run=stored)
    return attrs.evolve(outcome, plugin_failures=outcome.plugin_failures + observers.failures)


def _decide(
    run: Run,
    golden_set: GoldenQuestionSet,
    deployment: Deployment,
    identity: RetrievalIdentity,
    metrics: RetrievalMetrics,
    scores: Mapping[str, QuestionScore],
    repository: Any,
    tolerances: Tolerances,
    prepare_seconds: float | None,
    warnings: tuple[str, ...],
    plugin_failures: tuple[str, ...],
    baseline_id: str | None = None,
) -> RetrievalOutcome:
    """The baseline state and, for a complete comparable run, the comparison."""
    outcome = RetrievalOutcome(
        run=run, question_set=golden_set, deployment=deployment, identity=identity, metrics=metrics,
        scores=scores, state=UNKNOWN, prepare_seconds=prepare_seconds, warnings=warnings,
        plugin_failures=plugin_failures,
    )  # fmt: skip
    notes: list[str] = []
    scope = BaselineScope.of_run(run)
    assert scope is not None  # every retrieval run has a scope
    try:
        if baseline_id is not None:
            previous = repository.get_run(baseline_id)
            problem = scope_mismatch(previous, scope) if previous is not None else f"run {baseline_id} is no longer in the store"
            if problem is not None:
                return attrs.evolve(outcome, reason=f"not compared with the chosen baseline: {problem}")
        elif not isinstance(repository, AcceptedBaselines):
            return attrs.evolve(
                outcome, reason="not compared: the configured repository cannot read earlier retrieval runs"
            )
        else:
            previous = repository.accepted_baseline(scope, exclude_run_id=run.id)
    except StoreFailure:
        raise
    except StorageError as exc:  # an earlier run in the store this evalkit cannot read: this one is stored
        return attrs.evolve(outcome, reason=unreadable_baseline(exc))
    state = baseline_state(identity.benchmark_fingerprint, None if previous is None else stored_benchmark(previous))
    if state == MISMATCH and previous is not None and _only_questions_changed(previous, identity):
        state = COMPARABLE
        notes.append(
            "The question set changed since the baseline (same corpus, scoring and k): compared on the unchanged "
            "questions; added, edited and removed questions are reported apart."
        )
    outcome = attrs.evolve(outcome, state=state, baseline=previous)
    if run.status is not RunStatus.COMPLETE:
        return attrs.evolve(
            outcome,
            reason=(
                f"not compared: the run is {run.status.value} ({counted(run.errored_count, 'errored question')}), "
                "so it is never a baseline and is not compared"
            ),
        )
    if state == BASELINE:
        return attrs.evolve(outcome, reason="No accepted run for this set, retriever and deployment — recorded as the baseline.")
    if state != COMPARABLE:
        return attrs.evolve(
            outcome,
            reason=f"Regression comparison skipped: benchmark provenance is {state}. The measurement was recorded.",
        )
    assert previous is not None
    treatment = previous.variant_fingerprint != identity.variant_fingerprint
    if treatment:
        notes.append("Treatment changed: model, chunking or pipeline identity differs; the benchmark remains comparable.")
    return attrs.evolve(
        outcome, comparison=compare(run, previous, tolerances), treatment_changed=treatment, notes=tuple(notes)
    )


def _resumed_run(
    repository: Any,
    golden_set: GoldenQuestionSet,
    retriever_id: str,
    deployment: Deployment,
    identity: RetrievalIdentity,
    run_id: str | None,
) -> Run:
    """The unfinished run a resume continues; :class:`UsageError` when there is none or it measured something else."""
    where = f'set "{golden_set.identifier}", retriever "{retriever_id}", deployment {deployment.name or "(none)"}'
    if not run_id:
        if not isinstance(repository, ResumableRetrievalRuns):
            raise UsageError(
                "--resume without a run id needs a store that can find unfinished retrieval runs, and this one "
                "cannot; pass the id: --resume RUN_ID"
            )
        found = repository.latest_unfinished_retrieval_run(golden_set.identifier, retriever_id, deployment=deployment.name)
        if found is None:
            raise UsageError(f"--resume: no unfinished retrieval run of {where} to resume")
        run_id = found.id
    existing = repository.get_run(run_id, with_cases=False)
    if existing is None:
        raise UsageError(f"--resume: there is no run {run_id} in the store")
    if existing.status is RunStatus.COMPLETE:
        raise UsageError(f"run {run_id} is already complete; there is nothing to resume")
    stored = existing.provenance if isinstance(existing.provenance, Mapping) else {}
    differences = [
        what
        for what, ours, theirs in (
            ("kind", RunKind.RETRIEVAL.value, existing.kind.value),
            ("set", golden_set.identifier, existing.set_identifier),
            ("retriever", retriever_id, existing.retriever),
            ("deployment", deployment.name, existing.deployment),
            ("labels", identity.labels_fingerprint, existing.set_fingerprint),
            ("benchmark", identity.benchmark_fingerprint, existing.benchmark_fingerprint),
            ("k", identity.k, stored.get("k")),
            ("relevance threshold", identity.threshold, stored.get("relevance_threshold", DEFAULT_RELEVANCE_THRESHOLD)),
        )
        if ours != theirs
    ]
    if differences:
        raise UsageError(
            f"--resume: run {run_id} measured something else ({', '.join(differences)} differ); "
            f"it cannot be continued as a run of {where}"
        )
    return existing


def _answered_before(
    repository: Any, resumed: Run, golden_set: GoldenQuestionSet, k: int
) -> dict[str, tuple[QuestionScore, Ranking | None]]:
    """The scores (and, at ``full`` privacy, rankings) of the questions a resumed run already answered."""
    stored = repository.get_run(resumed.id)
    cases = stored.case_map() if stored is not None else {}
    kept: dict[str, tuple[QuestionScore, Ranking | None]] = {}
    for question in golden_set.questions:
        case = cases.get(question.id)
        if case is None or case.errored:
            continue
        measures = case.measures or {}
        hits = {c.name: c.passed for c in case.checks}
        values = [measures.get(m) for m in ("reciprocal_rank_at_k", "recall_at_k", "ndcg_at_k")]
        if HIT_AT_1 not in hits or HIT_AT_3 not in hits or not all(isinstance(v, (int, float)) for v in values):
            continue  # stored before measures were kept: asked again
        detail = case.detail if isinstance(case.detail, Mapping) else {}
        score = QuestionScore(
            question.id, question.form, question.hard_class, tuple(detail.get("ranked_ids", ())),
            hits[HIT_AT_1], hits[HIT_AT_3], *(float(v) for v in values), case.latency_s,
        )  # fmt: skip
        pairs = detail.get("ranking")
        ranking = None
        if isinstance(pairs, list):
            ids = tuple(str(p[0]) for p in pairs)
            given = [p[1] for p in pairs]
            ranking = Ranking(ids, tuple(float(v) for v in given) if all(v is not None for v in given) else None)
        kept[question.id] = (score, ranking)
    return kept


def _only_questions_changed(previous: Run, identity: RetrievalIdentity) -> bool:
    """True when the baseline's benchmark differs from this run's only by its questions: the same
    corpus revision, scoring version and k, so the unchanged questions are measured alike."""
    stored = previous.provenance
    if not isinstance(stored, Mapping) or identity.provenance is None:
        return False
    if stored.get("scoring_version") != SCORING_VERSION or stored.get("k") != identity.k:
        return False
    rebuilt = benchmark_fingerprint(stored.get("corpus_revision"), identity.labels_fingerprint, identity.k, identity.threshold)
    return rebuilt == identity.benchmark_fingerprint


def _check_chosen_baseline(url: str, baseline_id: str, set_identifier: str, retriever: str, deployment: str | None) -> None:
    """Refuse a chosen baseline of another scope before the retriever is created or anything is stored."""
    repository = open_repository(url)
    try:
        chosen = repository.get_run(baseline_id, with_cases=False)
    finally:
        close_repository(repository)
    if chosen is None:
        raise UsageError(f'--baseline: there is no run "{baseline_id}" in the store (see `evalkit history SET` for run ids)')
    scope = BaselineScope(RunKind.RETRIEVAL, set_identifier, retriever=retriever, deployment=deployment)
    if chosen.kind is not RunKind.RETRIEVAL:
        raise UsageError(f"--baseline {chosen.id} is of another scope: it is a {chosen.kind.value} run, not a retrieval run")
    problem = scope_mismatch(chosen, scope)
    if problem is not None:
        raise UsageError(f"--baseline {chosen.id} is of another scope: {problem}")


def _automatic_acceptance(outcome: RetrievalOutcome, repository: Any, fail_on_new_failures: bool) -> Acceptance | None:
    """First of its scope, or compared with an accepted run without a regression (and without a
    new failure when ``fail_on_new_failures`` gates): accepted."""
    if not isinstance(repository, AcceptedBaselines) or outcome.run.status is not RunStatus.COMPLETE:
        return None
    if outcome.state == BASELINE:
        return Acceptance("first", time.time(), None, "the first run of its scope")
    comparison = outcome.comparison
    if comparison is None or comparison.regressed or (fail_on_new_failures and comparison.new_failures):
        return None
    if comparison.baseline_id not in repository.acceptances_for([comparison.baseline_id]):
        return None
    return Acceptance("no_regression", time.time(), None, f"no regression against accepted run {comparison.baseline_id}")


def comparison_summary(comparison: Comparison) -> str:
    """One sentence about a comparison, in hit-rate words."""
    return comparison.summary("top-1 hit rate", "top-3 hit rate", mean_in_points=True, unit="question")


def _stored_verdict(outcome: RetrievalOutcome) -> StoredVerdict:
    comparison = outcome.comparison
    if comparison is not None:
        return StoredVerdict("regressed" if comparison.regressed else "ok", comparison.baseline_id, comparison_summary(comparison))
    if outcome.state == BASELINE and outcome.run.status is RunStatus.COMPLETE:
        return StoredVerdict("baseline", None, outcome.reason)
    return StoredVerdict("not_compared", None, f"baseline state {outcome.state}: {outcome.reason}")

