"""A retrieval run as the store keeps it: each question's case, the run's metrics and provenance,
and the way back from a stored case to the question's score.

Stored like a prompt run (grader ``retrieval_hit_rate``): a case *passes* on a top-1 hit and
*scores* 1.0 on a top-3 hit, so the stored pass rate is the top-1 hit rate and the mean score
the top-3 hit rate. Every case carries the checks ``hit_at_1`` and ``hit_at_3`` and the measures
(reciprocal rank, recall and nDCG within k), kept at every privacy level; its ``detail`` — form,
hard class, the distinct ranked ids and the same measures — is kept at ``redacted`` and ``full``
privacy only, because document ids can name content (a path, a title), and at ``full`` the
ranking with the retriever's scores. The run's metrics (every rate, mean and breakdown) are stored
with the run at every level.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import attrs

from ..grading import Check
from ..questions import GoldenQuestion, RetrievalProvenance
from ..runs import CaseResult, Run
from ..wording import quoted
from .provenance import SCORING_VERSION, RetrievalIdentity, validate_provenance
from .ranking import Ranking
from .scoring import DEFAULT_RELEVANCE_THRESHOLD, QuestionScore, RetrievalMetrics

__all__ = [
    "CASE_BATCH",
    "GRADER",
    "HIT_AT_1",
    "HIT_AT_3",
    "MIN_LIMIT",
    "benchmark_changes",
    "case_from_score",
    "identity_of_run",
    "metrics_document",
    "provenance_document",
    "retrieval_limit",
    "score_from_case",
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
_MEASURES = ("reciprocal_rank_at_k", "recall_at_k", "ndcg_at_k")


def retrieval_limit(k: int) -> int:
    """The ``limit`` each question is sent with: ``max(k, 12)``."""
    return max(k, MIN_LIMIT)


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


def score_from_case(case: CaseResult, question: GoldenQuestion) -> tuple[QuestionScore, Ranking | None] | None:
    """The score (and, when the case kept it, the ranking) of a question as its stored case says;
    ``None`` for an errored case, or one stored before measures were kept (it is asked again)."""
    if case.errored:
        return None
    measures = case.measures or {}
    hits = {c.name: c.passed for c in case.checks}
    values = [measures.get(m) for m in _MEASURES]
    if HIT_AT_1 not in hits or HIT_AT_3 not in hits or not all(isinstance(v, (int, float)) for v in values):
        return None
    detail = case.detail if isinstance(case.detail, Mapping) else {}
    score = QuestionScore(
        question.id, question.form, question.hard_class, tuple(detail.get("ranked_ids", ())),
        hits[HIT_AT_1], hits[HIT_AT_3], *(float(v) for v in values), case.latency_s,  # type: ignore[arg-type]
    )  # fmt: skip
    pairs = detail.get("ranking")
    ranking = None
    if isinstance(pairs, list):
        ids = tuple(str(p[0]) for p in pairs)
        given = [p[1] for p in pairs]
        ranking = Ranking(ids, tuple(float(v) for v in given) if all(v is not None for v in given) else None)
    return score, ranking


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


def _declared(stored: Mapping[str, Any]) -> RetrievalProvenance | None:
    """The valid declaration a stored provenance document holds, else ``None``."""
    if not all(isinstance(stored.get(f), str) for f in _PROVENANCE_FIELDS):
        return None
    execution = stored.get("execution_revision")
    if execution is not None and not isinstance(execution, str):
        return None
    declared = RetrievalProvenance(*(stored[f] for f in _PROVENANCE_FIELDS), execution_revision=execution)
    return None if validate_provenance(declared) else declared


def benchmark_changes(baseline: Run, identity: RetrievalIdentity) -> list[str]:
    """What of the benchmark differs between the stored ``baseline`` and a run of ``identity``, in
    words (``corpus revision "v1" → "v2"``, ``k 10 → 5``, ``the question set's labels``); empty
    when the stored document says nothing that differs. Revisions are validated labels (bounded
    ASCII), so they are quoted."""
    stored = baseline.provenance if isinstance(baseline.provenance, Mapping) else {}
    changes = []
    before = stored.get("corpus_revision")
    after = identity.provenance.corpus_revision if identity.provenance is not None else None
    if isinstance(before, str) and after is not None and before != after:
        changes.append(f'corpus revision {quoted(before)} → {quoted(after)}')
    if stored.get("scoring_version") not in (None, identity.scoring_version):
        changes.append("the scoring protocol (an older evalkit's)")
    if isinstance(stored.get("k"), int) and stored["k"] != identity.k:
        changes.append(f"k {stored['k']} → {identity.k}")
    threshold = stored.get("relevance_threshold", DEFAULT_RELEVANCE_THRESHOLD)
    if isinstance(threshold, int) and threshold != identity.threshold:
        changes.append(f"relevance threshold {threshold} → {identity.threshold}")
    if baseline.set_fingerprint and baseline.set_fingerprint != identity.labels_fingerprint:
        changes.append("the question set's labels")
    return changes


def stored_benchmark(run: Run) -> str:
    """A stored run's benchmark fingerprint, ``''`` when its stored declaration is missing or invalid."""
    stored = run.provenance
    if not isinstance(stored, Mapping) or not run.benchmark_fingerprint:
        return ""
    return run.benchmark_fingerprint if _declared(stored) is not None else ""


def identity_of_run(run: Run) -> RetrievalIdentity:
    """What a stored retrieval run measured, as its provenance document says (the final job of a
    sharded run reports it without asking the retriever again)."""
    stored = run.provenance if isinstance(run.provenance, Mapping) else {}
    declared = _declared(stored) if run.benchmark_fingerprint else None
    k = stored.get("k")
    threshold = stored.get("relevance_threshold", DEFAULT_RELEVANCE_THRESHOLD)
    problems = stored.get("problems")
    known = declared is not None
    return RetrievalIdentity(
        declared,
        run.set_fingerprint or "",
        (run.benchmark_fingerprint or "") if known else "",
        (run.variant_fingerprint or "") if known else "",
        k if isinstance(k, int) else 0,
        scoring_version=str(stored.get("scoring_version", SCORING_VERSION)),
        problems=tuple(str(p) for p in problems) if isinstance(problems, list) else (),
        threshold=threshold if isinstance(threshold, int) else DEFAULT_RELEVANCE_THRESHOLD,
    )
