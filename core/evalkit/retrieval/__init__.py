"""Retrieval evaluation: scoring rankings against labelled questions, fingerprints, set rules."""

from __future__ import annotations

from .provenance import (
    BASELINE,
    COMPARABLE,
    MISMATCH,
    SCORING_VERSION,
    UNKNOWN,
    RetrievalIdentity,
    baseline_state,
    benchmark_fingerprint,
    labels_fingerprint,
    retrieval_identity,
    validate_provenance,
    variant_fingerprint,
)
from .scoring import (
    DEFAULT_K,
    Breakdown,
    QuestionScore,
    RetrievalMetrics,
    aggregate,
    percentile,
    rank_distinct,
    score_question,
)
from .validation import check_question_set, question_set_problems, validate_question_set

__all__ = [
    "BASELINE",
    "COMPARABLE",
    "DEFAULT_K",
    "MISMATCH",
    "SCORING_VERSION",
    "UNKNOWN",
    "Breakdown",
    "QuestionScore",
    "RetrievalIdentity",
    "RetrievalMetrics",
    "aggregate",
    "baseline_state",
    "benchmark_fingerprint",
    "check_question_set",
    "labels_fingerprint",
    "percentile",
    "question_set_problems",
    "rank_distinct",
    "retrieval_identity",
    "score_question",
    "validate_provenance",
    "validate_question_set",
    "variant_fingerprint",
]
