"""What a retrieval run measured: provenance checks, fingerprints and the baseline decision.

The *benchmark* (corpus revision, the question set's labels, the scoring protocol and ``k``)
decides whether two runs can be compared at all; the *variant* (model, chunking, pipeline) is the
treatment under test. The execution revision is recorded and never hashed.

Fingerprints are ``"v1:" + sha256`` of a compact JSON array (``,``/``:`` separators, slashes and
non-ASCII characters left unescaped); strings that are labels are hashed as Base64 of their raw
bytes so that no two distinct labels share a digest.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

import attrs

from evalkit.questions import NOT_APPLICABLE, GoldenQuestion, GoldenQuestionSet, RetrievalProvenance

__all__ = [
    "BASELINE",
    "COMPARABLE",
    "MISMATCH",
    "SCORING_VERSION",
    "UNKNOWN",
    "RetrievalIdentity",
    "baseline_state",
    "benchmark_fingerprint",
    "labels_fingerprint",
    "retrieval_identity",
    "validate_provenance",
    "variant_fingerprint",
]

#: The scoring protocol, hashed into the benchmark: distinct documents, hit@1, hit@3, MRR,
#: recall@k and nDCG@k with evalkit's no-result rule (see :mod:`evalkit.retrieval.scoring`).
SCORING_VERSION = "distinct-documents-hit1-hit3-mrr-recall-ndcg-v1"

BASELINE = "baseline"
COMPARABLE = "comparable"
MISMATCH = "mismatch"
UNKNOWN = "unknown"

_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+/-]*")
_MAX_LABEL_BYTES = 190
_FIELDS = ("corpus_revision", "model_revision", "chunking_identity", "pipeline_identity", "execution_revision")
_MUST_APPLY = ("corpus_revision", "pipeline_identity")


def validate_provenance(provenance: object) -> list[str]:
    """Every problem with a retriever's provenance declaration; empty when it is valid.

    Each value (``execution_revision`` may be ``None``) must be a bounded opaque ASCII label: at
    most 190 bytes, ``[A-Za-z0-9][A-Za-z0-9._:+/-]*`` and no ``://``. Corpus revision and pipeline
    identity must also not be ``not-applicable``. Problems never quote the value, which might be a
    URL with credentials.
    """
    if not isinstance(provenance, RetrievalProvenance):
        return [f"retrieval provenance must be a RetrievalProvenance, not {type(provenance).__name__}"]
    problems = []
    for field in _FIELDS:
        value = getattr(provenance, field)
        if value is None and field == "execution_revision":
            continue
        if not _is_label(value):
            problems.append(
                f"retrieval provenance {field}: must be a bounded opaque ASCII revision label without URL scheme "
                f"(1-{_MAX_LABEL_BYTES} characters from A-Z a-z 0-9 . _ : + / -, starting with a letter or digit, "
                "no '://')"
            )
        elif field in _MUST_APPLY and value == NOT_APPLICABLE:
            problems.append(f'retrieval provenance {field}: must declare an applicable revision, not "{NOT_APPLICABLE}"')
    return problems


def _is_label(value: object) -> bool:
    return (
        isinstance(value, str)
        and len(value.encode("utf-8", "surrogatepass")) <= _MAX_LABEL_BYTES
        and "://" not in value
        and _LABEL.fullmatch(value) is not None
    )


def _digest(payload: Any) -> str:
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return "v1:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _raw_bytes(text: str) -> bytes:
    """The bytes a string stands for; undecodable bytes kept by ``surrogateescape`` come back as they were."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "surrogatepass")


def _b64(text: str) -> str:
    return base64.b64encode(_raw_bytes(text)).decode("ascii")


def _question_labels(question: GoldenQuestion) -> tuple[bytes, list[Any]]:
    judged = sorted((_raw_bytes(t), g) for t, g in question.judgements().items())
    row = [
        _b64(question.id),
        _b64(question.question),
        question.form.value,
        None if question.hard_class is None else _b64(question.hard_class),
        [base64.b64encode(t).decode("ascii") for t, _ in judged],
    ]
    if any(g != 1 for _, g in judged):
        # Grades other than 1 change nDCG (and, with a threshold, the binary metrics); a set whose
        # grades are all 1 keeps the fingerprint it had before grades existed.
        row.append([g for _, g in judged])
    return _raw_bytes(question.id), row


def labels_fingerprint(question_set: GoldenQuestionSet | Iterable[GoldenQuestion]) -> str:
    """Digest of everything a question set's scores depend on (``labels-bytes-v1``).

    Covers each question's id, text, form, hard class, expected ids and their grades (when any
    grade is not 1); ignores the answer gist, the set's name and description, and the order of
    questions and of expected ids.
    """
    questions = question_set.questions if isinstance(question_set, GoldenQuestionSet) else question_set
    rows = sorted((_question_labels(q) for q in questions), key=lambda row: row[0])
    return _digest(["labels-bytes-v1", [row for _, row in rows]])


def benchmark_fingerprint(corpus_revision: str | None, labels_fp: str, k: int, threshold: int = 1) -> str:
    """Digest of corpus revision, labels, scoring protocol, cut-off ``k`` and relevance threshold.

    ``''`` when the corpus is unknown; the default threshold (1) is left out of the digest, so
    runs stored before thresholds existed stay comparable.
    """
    if not corpus_revision:
        return ""
    payload: list[Any] = ["benchmark-v1", corpus_revision, labels_fp, SCORING_VERSION, k]
    if threshold != 1:
        payload.append(["relevance-threshold", threshold])
    return _digest(payload)


def variant_fingerprint(provenance: RetrievalProvenance | None) -> str:
    """Digest of model revision, chunking and pipeline identity; ``''`` when provenance is unknown."""
    if provenance is None:
        return ""
    return _digest(
        ["variant-v1", provenance.model_revision, provenance.chunking_identity, provenance.pipeline_identity]
    )


@attrs.frozen
class RetrievalIdentity:
    """What one retrieval run measured and with which treatment.

    ``provenance`` is ``None`` when the retriever declares none or its declaration is invalid
    (``problems`` then says why); benchmark and variant fingerprints are ``''`` in both cases.
    """

    provenance: RetrievalProvenance | None
    labels_fingerprint: str
    benchmark_fingerprint: str
    variant_fingerprint: str
    k: int
    scoring_version: str = SCORING_VERSION
    problems: tuple[str, ...] = ()
    threshold: int = 1


def retrieval_identity(
    question_set: GoldenQuestionSet, provenance: RetrievalProvenance | None, k: int, threshold: int = 1
) -> RetrievalIdentity:
    """The identity of a run of ``question_set`` at cut-off ``k`` (and relevance ``threshold``)
    against a retriever declaring ``provenance``.

    An invalid declaration counts as unknown provenance, with its problems kept.
    """
    labels = labels_fingerprint(question_set)
    problems = tuple(validate_provenance(provenance)) if provenance is not None else ()
    if provenance is None or problems:
        return RetrievalIdentity(None, labels, "", "", k, problems=problems, threshold=threshold)
    return RetrievalIdentity(
        provenance,
        labels,
        benchmark_fingerprint(provenance.corpus_revision, labels, k, threshold),
        variant_fingerprint(provenance),
        k,
        threshold=threshold,
    )


def baseline_state(current_benchmark_fp: str, previous: str | None) -> str:
    """How a run relates to the previous run of the same set and retriever.

    ``previous`` is the previous run's benchmark fingerprint, ``None`` when there is no previous
    run and ``''`` when it was recorded without a known benchmark. Decided in this order: current
    benchmark unknown → ``unknown`` (even for a first run); no previous run → ``baseline``;
    previous benchmark unknown → ``unknown``; benchmarks differ → ``mismatch``; else
    ``comparable``. Only ``baseline`` and ``comparable`` runs are compared numerically.
    """
    if not current_benchmark_fp:
        return UNKNOWN
    if previous is None:
        return BASELINE
    if not previous:
        return UNKNOWN
    return COMPARABLE if previous == current_benchmark_fp else MISMATCH
