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
So does one whose reply breaks the rule of a judge's reply (:func:`evalkit.judge_replies.judge_reply`:
a ``(grade, model)`` pair, the grade on the judge's ``judge_scale()``, the model a well-formed
name), and a yardstick that breaks a yardstick's rule is recorded as none: the run, whose stored
and gated figures are the human labels' alone, goes on, and its warnings name the grader and
what it gave (:meth:`HoleJudging.unusable`). The judge's ``prompt.version`` and scale are read
when it is bound, before anything is asked or stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..components import aclosed, declared, grader_plugin, offers, plugin_close_failed
from ..errors import PLUGIN_FAILURES, PluginError, UsageError, carried
from ..judge_replies import FailedRequest, asked, grade_scale_of, judge_reply, prompt_version_of, yardstick_of
from ..questions import GoldenQuestion
from ..wording import argument, quoted
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
    #: The judge's ``prompt.version`` and the grades it gives (its ``judge_scale()``), read when bound.
    prompt_version: int = 1
    scale: tuple[Any, ...] = ()
    _runner: asyncio.Runner | None = None
    models: set[str] = attrs.Factory(set)
    #: The first value the judge gave that broke its rule, and how many replies did.
    _unusable: str | None = None
    _unusable_replies: int = 0

    def _broke(self, error: PluginError) -> None:
        if self._unusable is None:
            self._unusable = str(error)

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
            if isinstance(answer, FailedRequest):
                failed += 1
                continue
            try:
                grade, model = judge_reply(_relevance_grader, "agrade_document", answer, self.scale, f"one of its grades {list(self.scale)!r}")
            except PluginError as exc:  # as a failed call: the hole stays one, and the warnings say why
                self._broke(exc)
                self._unusable_replies += 1
                failed += 1
                continue
            grades[document] = grade
            if model is not None:
                self.models.add(model)
        return HoleGrades(grades, failed)

    async def _ask(self, query: str, texts: Mapping[str, str]) -> list[Any]:
        async def one(text: str) -> Any:
            return await asked(lambda: self.judge.agrade_document(query, text))

        return list(await asyncio.gather(*(one(text) for text in texts.values())))

    def identity(self) -> dict[str, Any]:
        """The judge as the run's metrics record it: instance, model(s) seen, prompt version, yardstick."""
        models = sorted(self.models)
        yardstick = None
        if len(models) == 1:
            try:
                yardstick = yardstick_of(_relevance_grader, self.judge, models[0])
            except PluginError as exc:  # the cases are stored by now: recorded as none, and said
                self._broke(exc)
        return {
            "grader": "relevance",
            "instance": self.instance,
            "models": models,
            "prompt_version": self.prompt_version,
            "yardstick": yardstick,
            "binary_from": 2 if self.binary else None,
        }

    def unusable(self) -> str | None:
        """The warning naming the grader and the first value its judge gave that broke the rule
        (with how many replies did, which stayed holes); ``None`` when none did."""
        if self._unusable is None:
            return None
        if not self._unusable_replies:
            return f"{self._unusable}; the judge's yardstick is recorded as none"
        return f"{self._unusable}; {self._unusable_replies} of its replies did, and their holes stay unjudged"

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
            self._runner.run(aclosed(self.judge))
        except PLUGIN_FAILURES as exc:
            return plugin_close_failed(_relevance_grader, "aclose", exc)
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
    if not callable(declared(judge, "agrade_document")):  # a property that raises offers none
        raise UsageError(f'{argument("judge_unjudged")}: the installed "relevance" grader cannot grade a document for a query')
    scale = grade_scale_of(_relevance_grader, judge)
    return HoleJudging(judge, binary, name, prompt_version=prompt_version_of(_relevance_grader, judge), scale=scale)


def _relevance_grader() -> Any:
    """Who a failure of the hole judge names: the installed ``relevance`` grader and its distribution."""
    return grader_plugin("relevance")


def check_document_texts(retriever: Any, retriever_id: str) -> None:
    """Refuse (:class:`UsageError`) a retriever that cannot show a document's text: the judge
    would have nothing to read."""
    if not offers(retriever, DocumentTexts):
        raise UsageError(
            f'{argument("judge_unjudged")}: retriever {quoted(retriever_id)} cannot show a document\'s text (it has no document_text(id)), '
            "so a judge cannot grade what it returns; nothing was asked or stored"
        )
