"""Judged holes (evalkit.retrieval.holes): the model's grades fill only what people left unjudged,
on the set's own scale, and a filled score is read back from its case's measures."""

from __future__ import annotations

import pytest
from evalkit.errors import UsageError
from evalkit.questions import GoldenQuestion
from evalkit.retrieval.holes import (
    HoleGrades,
    HoleJudging,
    check_document_texts,
    filled_measures,
    filled_question,
    filled_score_from_measures,
)
from evalkit.retrieval.scoring import score_question


def test_a_binary_set_counts_a_grade_from_two_as_relevant_and_keeps_the_human_labels() -> None:
    question = GoldenQuestion("q", "apple harvest", expected_document_ids=("d1",))
    filled = filled_question(question, {"d1": 0, "d2": 1, "d3": 2, "d4": 3}, binary=True)
    assert filled.judgements() == {"d1": 1, "d2": 0, "d3": 1, "d4": 1}


def test_a_graded_set_takes_the_grade_as_it_is() -> None:
    question = GoldenQuestion.graded("q", "apple harvest", {"d1": 2, "d9": 0})
    assert filled_question(question, {"d9": 3, "d2": 1}, binary=False).judgements() == {"d1": 2, "d9": 0, "d2": 1}


def test_filling_a_hole_above_the_human_hit_moves_the_figures() -> None:
    question = GoldenQuestion("q", "apple harvest", expected_document_ids=("d2",))
    human = score_question(question, ["d1", "d2"], 10, 0.0)
    filled = score_question(filled_question(question, {"d1": 3}, binary=True), ["d1", "d2"], 10, 0.0)
    assert (human.hit_at_1, human.reciprocal_rank_at_k) == (False, 0.5)
    assert (filled.hit_at_1, filled.reciprocal_rank_at_k, filled.recall_at_k) == (True, 1.0, 1.0)
    measures = filled_measures(filled, HoleGrades({"d1": 3}, failed=1))
    assert measures["model_judged"] == 1 and measures["model_unjudged"] == 1
    assert filled_score_from_measures(measures, human) == filled
    assert filled_score_from_measures({"reciprocal_rank_at_k": 0.5}, human) is None


def test_the_holes_are_the_unjudged_documents_of_the_top_k() -> None:
    judging = HoleJudging(judge=None, binary=True, instance="judge")
    question = GoldenQuestion("q", "apple", expected_document_ids=("d2",))
    assert judging.holes(question, ["d1", "d2", "d3", "d4"], 3) == ["d1", "d3"]


def test_a_retriever_that_cannot_show_a_document_is_refused() -> None:
    class Blind:
        def retrieve(self, question: str, limit: int) -> list[str]:
            return []

    with pytest.raises(UsageError, match=r'retriever "blind" cannot show a document\'s text'):
        check_document_texts(Blind(), "blind")
