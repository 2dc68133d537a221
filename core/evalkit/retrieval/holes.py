"""Judged holes: the documents a retriever returned that people have not judged, graded by a relevance judge.

``evalkit retrieval SET RETRIEVER --judge-unjudged NAME`` binds the ``relevance`` grader's judge
to the configured provider instance ``NAME`` (:func:`hole_judging`); each question's top-k
documents without a human label (a *hole*) are shown to it with the question, and its grade
(0-3) fills the hole. The question is then scored twice: with the human labels only (the figures
the run is stored, compared and gated on, unchanged) and with the holes filled (reported beside
them). Against a set of binary labels a grade counts as relevant (1) from 2, else 0 — TREC Deep
Learning's convention on the same scale; against a graded set the grade is used as it is.

What came from the model is stored with each question's case: the filled figures and the counts
of judged and unjudgeable holes as case measures (every privacy level), the grade of each judged
document as ``detail["model_grades"]`` (kept at ``redacted`` and ``full`` only, like the ranked
ids: a document id can name content), and the judge's identity in the run's metrics.

A hole the judge could not grade (an unusable reply twice, a failed call) or whose text the
retriever cannot give stays a hole: it counts as not relevant in both figures, and is counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..components import grader_plugin, plugin_close_failed
from ..errors import PLUGIN_FAILURES, UsageError, carried, carried_async
from ..questions import GoldenQuestion
from ..wording import quoted
from .contracts import DocumentTexts
from .scoring import QuestionScore

__all__ = [
    "FILLED",
    "HoleGrades",
    "HoleJudging",
    "check_document_texts",
    "filled_measures",
    "filled_question",
    "filled_score_from_measures",
    "hole_judging",
]

#: The prefix of the case measures that hold a question's figures with its holes filled.
FILLED = "filled_"
_MEASURES = ("reciprocal_rank_at_k", "recall_at_k", "ndcg_at_k")


@attrs.frozen
class HoleGrades:
    """What the judge made of one question's holes: ``{document id: grade}`` of those it graded
    (on the judge's 0-3 scale), and how many it could not grade."""

    grades: Mapping[str, int]
    failed: int = 0


def filled_question(question: GoldenQuestion, grades: Mapping[str, int], binary: bool) -> GoldenQuestion:
    """``question`` with the model's grades added to its human judgements (a binary set's as 1
    from grade 2 on, else 0); the human labels are never replaced."""
    judged = dict(question.judgements())
    for document, grade in grades.items():
        if document not in judged:
            judged[document] = int(grade >= 2) if binary else grade
    return GoldenQuestion.graded(question.id, question.question, judged, form=question.form, hard_class=question.hard_class)


def filled_measures(score: QuestionScore, holes: HoleGrades) -> dict[str, float]:
    """The case measures of a question's filled figures and its hole counts."""
    return {
        f"{FILLED}hit_at_1": float(score.hit_at_1),
        f"{FILLED}hit_at_3": float(score.hit_at_3),
        **{f"{FILLED}{name}": float(getattr(score, name)) for name in _MEASURES},
        "model_judged": float(len(holes.grades)),
        "model_unjudged": float(holes.failed),
    }


def filled_score_from_measures(measures: Mapping[str, Any] | None, human: QuestionScore) -> QuestionScore | None:
    """The filled score a stored case's measures hold (``None`` when the case has none)."""
    measures = measures or {}
    names = ("hit_at_1", "hit_at_3", *_MEASURES)
    values = [measures.get(f"{FILLED}{name}") for name in names]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    hit1, hit3, rr, recall, ndcg = values
    return attrs.evolve(human, hit_at_1=bool(hit1), hit_at_3=bool(hit3), reciprocal_rank_at_k=float(rr), recall_at_k=float(recall), ndcg_at_k=float(ndcg))  # type: ignore[arg-type]


@attrs.define
class HoleJudging:
    """The relevance judge bound for a retrieval run, and the event loop its calls share.

    ``judge`` is the bound ``relevance`` grader (:func:`hole_judging`); ``binary`` whether the set's
    labels are binary. :meth:`grade` is called once per question, from the run's answering;
    :meth:`close` closes the judge's connections and the loop.
    """

    judge: Any
    binary: bool
    instance: str
    _runner: asyncio.Runner | None = None
    models: set[str] = attrs.Factory(set)

    def holes(self, question: GoldenQuestion, ranked: Sequence[str], k: int) -> list[str]:
        """The documents of the top ``k`` of ``ranked`` that people have not judged for ``question``."""
        judged = question.judgements()
        return [d for d in ranked[:k] if d not in judged]

    def grade(self, question: GoldenQuestion, ranked: Sequence[str], k: int, retriever: Any) -> HoleGrades:
        """Ask the judge about every hole of one question (in parallel, within the judge's concurrency)."""
        documents = self.holes(question, ranked, k)
        texts: dict[str, str] = {}
        failed = 0
        for document in documents:
            try:
                text = carried(retriever.document_text, document)
            except PLUGIN_FAILURES:
                text = None
            if isinstance(text, str) and text.strip():
                texts[document] = text
            else:
                failed += 1
        if not texts:
            return HoleGrades({}, failed)
        if self._runner is None:
            self._runner = asyncio.Runner()
        answers = self._runner.run(self._ask(question.question, texts))
        grades: dict[str, int] = {}
        for document, answer in zip(texts, answers, strict=True):
            if isinstance(answer, BaseException):
                failed += 1
                continue
            grade, model = answer
            grades[document] = grade
            if model is not None:
                self.models.add(str(model))
        return HoleGrades(grades, failed)

    async def _ask(self, query: str, texts: Mapping[str, str]) -> list[Any]:
        async def one(text: str) -> Any:
            try:
                return await carried_async(self.judge.agrade_document(query, text))
            except PLUGIN_FAILURES as exc:
                return exc

        return list(await asyncio.gather(*(one(text) for text in texts.values())))

    def identity(self) -> dict[str, Any]:
        """The judge as the run's metrics record it: instance, model(s) seen, prompt version, yardstick."""
        models = sorted(self.models)
        return {
            "grader": "relevance",
            "instance": self.instance,
            "models": models,
            "prompt_version": self.judge.prompt.version,
            "yardstick": self.judge.yardstick_for(models[0]) if len(models) == 1 else None,
            "binary_from": 2 if self.binary else None,
        }

    def check_ready(self) -> None:
        """Ask the judge whether it can run, before anything is asked or stored: what it raises
        names the relevance grader and its distribution (:func:`~evalkit.components.plugin_called`)."""
        from ..judge_calibration import check_judge_ready

        check_judge_ready("relevance", self.judge)

    def close(self) -> str | None:
        """Close the judge's connections, then the event loop; what closing raised, as a warning
        naming the grader and its distribution (:func:`~evalkit.components.plugin_close_failed`):
        the run is stored by then, and stays as it is."""
        if self._runner is None:
            return None
        try:
            self._runner.run(carried_async(self.judge.aclose()))
        except PLUGIN_FAILURES as exc:
            return plugin_close_failed(lambda: grader_plugin("relevance"), "aclose", exc)
        finally:
            self._runner.close()
            self._runner = None
        return None


def hole_judging(name: str, config: Any, binary: bool) -> HoleJudging:
    """The relevance judge ``name`` (a configured provider instance) bound for a retrieval run;
    refused (:class:`UsageError`, nothing called or stored) when no installed grader judges
    relevance or ``name`` is not a configured instance."""
    from ..judge_calibration import JudgeSettings, calibration_judge

    judge = calibration_judge("relevance", JudgeSettings(judge=name), config)
    if not callable(getattr(judge, "agrade_document", None)):
        raise UsageError('--judge-unjudged: the installed "relevance" grader cannot grade a document for a query')
    return HoleJudging(judge, binary, name)


def check_document_texts(retriever: Any, retriever_id: str) -> None:
    """Refuse (:class:`UsageError`) a retriever that cannot show a document's text: the judge
    would have nothing to read."""
    if not isinstance(retriever, DocumentTexts):
        raise UsageError(
            f'--judge-unjudged: retriever {quoted(retriever_id)} cannot show a document\'s text (it has no document_text(id)), '
            "so a judge cannot grade what it returns; nothing was asked or stored"
        )
