"""A retrieval run as trec_eval's two files: the run (``qid Q0 docid rank score tag``) and the qrels.

``trec_eval -l THRESHOLD -m ... qrels run`` (or pytrec_eval on the same files) then recomputes
every metric evalkit printed. trec_eval ignores the rank column and orders each question's
documents by score, best first, breaking ties by document id; so the score column carries the
retriever's own scores only when they strictly decrease down the ranking, and otherwise
``n, n-1, ..., 1`` (n the ranking's length), which keeps evalkit's order. The qrels carry every
judged document with its grade (1 for an ungraded expected id). A question with no expected id
("nothing answers this") has no qrels line: trec_eval cannot express it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from evalkit.errors import UsageError, write_failed
from evalkit.questions import GoldenQuestion
from evalkit.textfiles import write_text_file

from .ranking import Ranking

__all__ = ["check_exportable", "export_scores", "write_qrels", "write_run"]

_FIELD = re.compile(r"\S+")


def _field(value: str, what: str) -> str:
    if not _FIELD.fullmatch(value):
        raise UsageError(f"cannot write {what} {value!r} to a TREC file: it is empty or contains whitespace")
    return value


def check_exportable(questions: Iterable[GoldenQuestion], *, run: str | None, qrels: str | None) -> None:
    """Refuse, before anything is asked or stored, a set the exports asked for cannot hold: a
    question id (both files), or a judged document id (the qrels), that is empty or holds
    whitespace. ``run`` and ``qrels`` are the ``--export-run``/``--export-qrels`` paths (``None``:
    not asked for). A document id a retriever returns can only be checked once it has answered."""
    for question in questions:
        fields = [("question id", question.id)] if run or qrels else []
        if qrels and isinstance(question.expected_document_ids, (list, tuple)):
            fields += [("judged document id", doc_id) for doc_id in question.expected_document_ids]
        for what, value in fields:
            if isinstance(value, str) and not _FIELD.fullmatch(value):  # not text: the set's validation says so
                option = "--export-qrels" if qrels and (what != "question id" or not run) else "--export-run"
                raise UsageError(
                    f"{option}: {what} {value!r} cannot be written to a TREC file (it is empty or contains whitespace); "
                    "nothing was asked or stored"
                )


def export_scores(ranking: Ranking) -> tuple[float, ...]:
    """The score column for ``ranking``: its own scores when strictly decreasing, else ``n .. 1``."""
    scores = ranking.scores
    if scores is not None and all(a > b for a, b in zip(scores, scores[1:], strict=False)):
        return scores
    n = len(ranking.ids)
    return tuple(float(n - rank) for rank in range(n))


def _write(path: str | os.PathLike[str], lines: Iterable[str]) -> Path:
    """Write ``lines`` to ``path`` whole; a write that fails ends as every file a command writes
    does (:func:`~evalkit.errors.write_failed`): :class:`~evalkit.errors.OutputFailed` for the
    environment's fault (a full disk, an I/O error), else :class:`~evalkit.errors.UsageError` (the
    path is a folder, read-only, under a file)."""
    target = Path(path)
    try:
        write_text_file(target, lines)
    except OSError as exc:
        from ..wording import path_named

        raise write_failed(f"cannot write {path_named(target)}: {exc.strerror or exc}", exc) from None
    return target


def write_run(path: str | os.PathLike[str], rankings: Mapping[str, Ranking], tag: str) -> Path:
    """Write ``{question id: ranking}`` as a TREC run file tagged ``tag``; the path written."""
    tag = _field(tag, "run tag")

    def lines() -> Iterable[str]:
        for question_id, ranking in rankings.items():
            qid = _field(question_id, "question id")
            for rank, (doc_id, score) in enumerate(zip(ranking.ids, export_scores(ranking), strict=True), start=1):
                yield f"{qid} Q0 {_field(doc_id, 'document id')} {rank} {score!r} {tag}\n"

    return _write(path, lines())


def write_qrels(path: str | os.PathLike[str], questions: Iterable[GoldenQuestion]) -> Path:
    """Write every question's judged documents as TREC qrels (``qid 0 docid grade``); the path written."""

    def lines() -> Iterable[str]:
        for question in questions:
            qid = _field(question.id, "question id")
            for doc_id, grade in question.judgements().items():
                yield f"{qid} 0 {_field(doc_id, 'document id')} {grade}\n"

    return _write(path, lines())
