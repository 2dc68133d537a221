"""Graded relevance: nDCG's gain is the grade, the binary metrics count grades from a threshold; both equal trec_eval's.

pytrec_eval is given the same graded qrels (negative and zero grades included) and the distinct
ranking with strictly decreasing scores; ``relevance_level`` is trec_eval's ``-l``, the threshold.
"""

from __future__ import annotations

import math
import random

import pytest
from evalkit.errors import UsageError
from evalkit.questions import GoldenQuestion, GoldenQuestionSet, QuestionForm
from evalkit.retrieval.provenance import benchmark_fingerprint, labels_fingerprint
from evalkit.retrieval.scoring import aggregate, rank_distinct, score_question
from evalkit.retrieval.validation import question_set_problems

pytrec_eval = pytest.importorskip("pytrec_eval")


def graded_cases(seed: int, count: int) -> list[tuple[GoldenQuestion, list[str]]]:
    """Questions judging 1-8 documents with grades -1..4, and raw rankings of 1-40 ids with repeats."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(80)]
    cases = []
    for i in range(count):
        judged = {d: rng.choice([-1, 0, 1, 1, 2, 3, 4]) for d in rng.sample(pool, rng.randint(1, 8))}
        ranking = []
        for _ in range(rng.randint(1, 40)):
            ranking.append(rng.choice(list(judged)) if rng.random() < 0.3 else rng.choice(pool))
        cases.append((GoldenQuestion.graded(f"q{i}", "question", judged, form="unspecified"), ranking))
    return cases


def trec(cases, k: int, threshold: int) -> dict[str, dict[str, float]]:
    qrels = {q.id: q.judgements() for q, _ in cases}
    run = {}
    for question, ranking in cases:
        distinct = rank_distinct(ranking)
        run[question.id] = {d: float(len(distinct) - r) for r, d in enumerate(distinct)}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"recall.{k}", f"ndcg_cut.{k}", "success.1,3"}, relevance_level=threshold
    )
    measured = evaluator.evaluate(run)
    # MRR@k is trec_eval's recip_rank on the ranking cut at k.
    cut = {qid: dict(sorted(docs.items(), key=lambda item: -item[1])[:k]) for qid, docs in run.items()}
    reciprocal = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=threshold).evaluate(cut)
    for qid, values in measured.items():
        values["recip_rank"] = reciprocal.get(qid, {}).get("recip_rank", 0.0)
    return measured


@pytest.mark.parametrize("threshold", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_graded_metrics_equal_trec_eval_per_question_and_on_average(k: int, threshold: int) -> None:
    cases = graded_cases(seed=k * 10 + threshold, count=400)
    expected = trec(cases, k, threshold)
    scores = [score_question(q, r, k, 0.0, threshold) for q, r in cases]
    for score in scores:
        theirs = expected[score.question_id]
        assert score.ndcg_at_k == pytest.approx(theirs[f"ndcg_cut_{k}"], abs=1e-15)
        assert score.recall_at_k == pytest.approx(theirs[f"recall_{k}"], abs=1e-15)
        assert score.reciprocal_rank_at_k == pytest.approx(theirs["recip_rank"], abs=1e-15)
        assert score.hit_at_1 == bool(theirs["success_1"]) and score.hit_at_3 == bool(theirs["success_3"])
    metrics = aggregate(scores, k)
    mean = math.fsum(r[f"ndcg_cut_{k}"] for r in expected.values()) / len(expected)
    assert abs(metrics.ndcg_at_k - mean) <= 1e-12


def test_the_gain_is_the_grade_and_negative_grades_count_as_zero() -> None:
    question = GoldenQuestion.graded("q", "question", {"a": 2, "b": -1, "c": 1, "d": 0, "e": 3})
    score = score_question(question, ["b", "a", "d", "c", "x"], 10, 0.0)
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    ideal = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert score.ndcg_at_k == pytest.approx(dcg / ideal, abs=1e-15)
    assert score.reciprocal_rank_at_k == 0.5 and not score.hit_at_1 and score.hit_at_3
    assert score.recall_at_k == pytest.approx(2 / 3)
    strict = score_question(question, ["b", "a", "d", "c", "x"], 10, 0.0, threshold=3)
    assert strict.ndcg_at_k == score.ndcg_at_k  # the threshold plays no part in nDCG
    assert strict.reciprocal_rank_at_k == 0.0 and strict.recall_at_k == 0.0


def test_a_question_judging_only_non_relevant_documents_scores_zero_not_as_nothing_answers_this() -> None:
    question = GoldenQuestion.graded("q", "question", {"a": 0, "b": -1})
    for ranking in ([], ["x"], ["a"]):
        score = score_question(question, ranking, 10, 0.0)
        assert (score.hit_at_1, score.reciprocal_rank_at_k, score.recall_at_k, score.ndcg_at_k) == (False, 0.0, 0.0, 0.0)


def test_grades_of_one_score_exactly_like_an_ungraded_question() -> None:
    plain = GoldenQuestion("q", "question", expected_document_ids=["a", "b", "c"])
    graded = GoldenQuestion.graded("q", "question", {"a": 1, "b": 1, "c": 1})
    for ranking in (["x", "b", "y", "a"], ["c"], [f"z{i}" for i in range(20)] + ["a"]):
        assert score_question(plain, ranking, 10, 0.0) == score_question(graded, ranking, 10, 0.0)


def test_a_threshold_must_be_a_positive_integer() -> None:
    question = GoldenQuestion.graded("q", "question", {"a": 2})
    with pytest.raises(UsageError, match="relevance threshold"):
        score_question(question, ["a"], 10, 0.0, threshold=0)


def test_fingerprints_include_grades_but_not_when_every_grade_is_one() -> None:
    plain = GoldenQuestionSet("c.s", "S", questions=[GoldenQuestion("q", "t", expected_document_ids=["a", "b"])])
    ones = GoldenQuestionSet("c.s", "S", questions=[GoldenQuestion.graded("q", "t", {"b": 1, "a": 1})])
    twos = GoldenQuestionSet("c.s", "S", questions=[GoldenQuestion.graded("q", "t", {"a": 2, "b": 1})])
    swapped = GoldenQuestionSet("c.s", "S", questions=[GoldenQuestion.graded("q", "t", {"a": 1, "b": 2})])
    assert labels_fingerprint(plain) == labels_fingerprint(ones)
    assert len({labels_fingerprint(plain), labels_fingerprint(twos), labels_fingerprint(swapped)}) == 3
    labels = labels_fingerprint(twos)
    assert benchmark_fingerprint("c1", labels, 10) == benchmark_fingerprint("c1", labels, 10, threshold=1)
    assert benchmark_fingerprint("c1", labels, 10) != benchmark_fingerprint("c1", labels, 10, threshold=2)


def test_grades_are_validated_against_the_expected_ids() -> None:
    bad = GoldenQuestionSet(
        "c.s", "S",
        questions=[
            GoldenQuestion("q1", "t", expected_document_ids=["a", "b"], grades=[1]),
            GoldenQuestion("q2", "t", expected_document_ids=["a"], grades=[True]),
            GoldenQuestion("q3", "t", expected_document_ids=["a"], grades=["2"]),
            GoldenQuestion("q4", "t", expected_document_ids=["a", "b"], grades=[10**400, -(2**31)]),
        ],
    )  # fmt: skip
    problems = "\n".join(question_set_problems(bad))
    assert 'question "q1"' in problems and "field grades has 1 grade for 2 expected ids" in problems
    assert "grades[1] must be an integer (got True)" in problems and "grades[1] must be an integer (got '2')" in problems
    # a grade is nDCG's gain: one past what a float holds failed the run mid-way with OverflowError
    assert 'question "q4": field grades[1] must be from -2,147,483,648 to 2,147,483,647 (got 1000000' in problems
    assert "grades[2]" not in problems


def test_unspecified_questions_count_in_the_run_but_not_in_the_by_form_table() -> None:
    questions = [
        GoldenQuestion("m", "t", form="match", expected_document_ids=["a"]),
        GoldenQuestion("u1", "t", form=QuestionForm.UNSPECIFIED, expected_document_ids=["a"]),
        GoldenQuestion("u2", "t", form="unspecified", expected_document_ids=["b"]),
    ]
    metrics = aggregate([score_question(q, ["a"], 10, 0.0) for q in questions], 10)
    assert metrics.question_count == 3 and metrics.top1_hits == 2
    assert list(metrics.by_form) == ["match"]
    only_unlabelled = aggregate([score_question(q, ["a"], 10, 0.0) for q in questions[1:]], 10)
    assert only_unlabelled.by_form == {} and only_unlabelled.question_count == 2
