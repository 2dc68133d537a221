"""Retrieval runs as a library call — kept for the names older code imports.

A retrieval run goes through the one run lifecycle of :mod:`evalkit.run`: :func:`evaluate_retrieval`
is :func:`evalkit.run.library.evaluate_retrieval`, its outcome an :class:`evalkit.run.outcome.Outcome`
(``RetrievalOutcome``) whose ``detail`` is a
:class:`~evalkit.run.answering.questions.QuestionsDetail`; asking and scoring the questions is
:mod:`evalkit.run.answering.questions`, what a run keeps in the store :mod:`evalkit.retrieval.stored`.
"""

from __future__ import annotations

from ..run.answering.questions import comparison_summary
from ..run.library import evaluate_retrieval
from ..run.outcome import Outcome
from .deployments import DEPLOYMENT_ENV, Deployment, resolve_deployment
from .stored import (
    CASE_BATCH,
    GRADER,
    HIT_AT_1,
    HIT_AT_3,
    MIN_LIMIT,
    case_from_score,
    metrics_document,
    provenance_document,
    retrieval_limit,
    stored_benchmark,
)

__all__ = [
    "CASE_BATCH",
    "DEPLOYMENT_ENV",
    "GRADER",
    "HIT_AT_1",
    "HIT_AT_3",
    "MIN_LIMIT",
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

#: The outcome of a run (one type for prompt and retrieval runs).
RetrievalOutcome = Outcome
