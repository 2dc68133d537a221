"""Per-question scoring and run aggregation: the reference oracles plus MRR, recall@k and nDCG@k."""

from __future__ import annotations

import math

import pytest
from evalkit.errors import RetrievalError, UsageError
from evalkit.questions import GoldenQuestion, QuestionForm
from evalkit.retrieval.scoring import (
    QuestionScore,
    aggregate,
    percentile,
    rank_distinct,
    score_question,
)


def q(*expected: str, form: str = "match", hard_class: str | None = None, qid: str = "q") -> GoldenQuestion:
    return GoldenQuestion(qid, "a question", form=form, expected_document_ids=expected, hard_class=hard_class)


def disc(rank: int) -> float:
    """trec_eval's discount for a 1-based rank."""
    return 1.0 / math.log2(rank + 1)


# --- rank_distinct -------------------------------------------------------------------------------


def test_rank_distinct_keeps_first_occurrence_and_skips_empty_ids():
    assert rank_distinct(["a", "", "b", "a", "c", "", "b"]) == ("a", "b", "c")
    assert rank_distinct(iter(["x", "x"])) == ("x",)
    assert rank_distinct([]) == ()
    assert rank_distinct(["", ""]) == ()


@pytest.mark.parametrize("bad", [["a", 3], [None], ["a", b"b"], "abc", None, 42])
def test_rank_distinct_rejects_what_is_not_a_list_of_strings(bad):
    with pytest.raises(RetrievalError):
        rank_distinct(bad)


# --- the reference oracles (top-1 / top-3 over distinct documents) ------------------------------


def test_target_third_is_a_top3_hit_and_a_top1_miss():
    s = score_question(q("c"), ["a", "b", "c"], 10, 0.002)
    assert (s.hit_at_1, s.hit_at_3) == (False, True)
    assert s.reciprocal_rank_at_k == pytest.approx(1 / 3)
    assert s.recall_at_k == 1.0
    assert s.ndcg_at_k == pytest.approx(disc(3))
    assert s.ranked_ids == ("a", "b", "c")
    assert s.latency_s == 0.002


def test_target_at_raw_rank_four_but_distinct_rank_three_is_a_top3_hit():
    s = score_question(q("c"), ["a", "a", "b", "c"], 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (False, True)
    assert s.reciprocal_rank_at_k == pytest.approx(1 / 3)
    assert s.ranked_ids == ("a", "b", "c")


def test_repeats_collapse_onto_their_first_occurrence():
    s = score_question(q("b"), ["a", "a", "a", "b"], 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (False, True)
    assert s.ranked_ids == ("a", "b")
    assert s.reciprocal_rank_at_k == 0.5


def test_empty_ids_are_skipped():
    s = score_question(q("a"), ["", "a"], 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (True, True)
    assert s.ranked_ids == ("a",)
    assert (s.reciprocal_rank_at_k, s.recall_at_k, s.ndcg_at_k) == (1.0, 1.0, 1.0)


def test_ranked_ids_keep_max_k_3_distinct_ids():
    ranking = ["a", "b", "c", "d", "e"]
    assert score_question(q("a"), ranking, 1, 0.0).ranked_ids == ("a", "b", "c")
    assert score_question(q("a"), ranking, 4, 0.0).ranked_ids == ("a", "b", "c", "d")
    assert score_question(q("a"), ranking * 3, 10, 0.0).ranked_ids == tuple(ranking)


def test_empty_ranking_with_targets_misses_everything():
    s = score_question(q("a", "b"), [], 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (False, False)
    assert (s.reciprocal_rank_at_k, s.recall_at_k, s.ndcg_at_k) == (0.0, 0.0, 0.0)
    assert s.ranked_ids == ()


def test_ranking_without_any_target_misses_everything():
    s = score_question(q("z"), [f"d{i}" for i in range(50)], 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3, s.reciprocal_rank_at_k, s.recall_at_k, s.ndcg_at_k) == (False, False, 0.0, 0.0, 0.0)


# --- no-result questions ("nothing in the index answers this") ----------------------------------


@pytest.mark.parametrize("ranking", [[], [""], ["", ""]])
def test_no_result_question_is_a_full_hit_when_nothing_comes_back(ranking):
    s = score_question(q(), ranking, 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (True, True)
    assert (s.reciprocal_rank_at_k, s.recall_at_k, s.ndcg_at_k) == (1.0, 1.0, 1.0)
    assert s.ranked_ids == ()


@pytest.mark.parametrize("ranking", [["a"], ["", "a"], ["a", "a", "b"]])
def test_no_result_question_misses_when_anything_comes_back(ranking):
    s = score_question(q(), ranking, 10, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (False, False)
    assert (s.reciprocal_rank_at_k, s.recall_at_k, s.ndcg_at_k) == (0.0, 0.0, 0.0)


# --- MRR@k, recall@k, nDCG@k ----------------------------------------------------------------------


def test_several_targets_share_recall_and_ndcg():
    s = score_question(q("a", "z", "c"), ["a", "b", "c"], 10, 0.0)
    assert s.recall_at_k == pytest.approx(2 / 3)
    assert s.ndcg_at_k == pytest.approx((disc(1) + disc(3)) / (disc(1) + disc(2) + disc(3)))
    assert s.reciprocal_rank_at_k == 1.0


def test_ideal_dcg_is_cut_at_k():
    ranking = ["a", "b", "x", "y"]
    s = score_question(q("a", "b", "c", "d"), ranking, 2, 0.0)
    assert s.ndcg_at_k == 1.0
    assert s.recall_at_k == 0.5


def test_k_below_three_still_measures_hit_at_3():
    s = score_question(q("a", "b"), ["a", "x", "b"], 2, 0.0)
    assert (s.hit_at_1, s.hit_at_3) == (True, True)
    assert s.recall_at_k == 0.5
    assert s.ndcg_at_k == pytest.approx(1 / (disc(1) + disc(2)))
    late = score_question(q("b"), ["a", "x", "b"], 1, 0.0)
    assert (late.hit_at_1, late.hit_at_3, late.recall_at_k, late.ndcg_at_k) == (False, True, 0.0, 0.0)
    assert late.reciprocal_rank_at_k == 0.0, "rank 3 is past k = 1"
    assert score_question(q("b"), ["a", "x", "b"], 3, 0.0).reciprocal_rank_at_k == pytest.approx(1 / 3)


def test_a_target_past_k_counts_for_nothing():
    ranking = [f"d{i}" for i in range(10)] + ["target"]
    s = score_question(q("target"), ranking, 10, 0.0)
    assert s.reciprocal_rank_at_k == 0.0
    assert (s.recall_at_k, s.ndcg_at_k, s.hit_at_3) == (0.0, 0.0, False)
    assert score_question(q("target"), ranking, 11, 0.0).reciprocal_rank_at_k == pytest.approx(1 / 11)
    s5 = score_question(q("target", "d4"), ranking, 5, 0.0)
    assert s5.reciprocal_rank_at_k == pytest.approx(1 / 5)
    assert s5.recall_at_k == 0.5
    assert s5.ndcg_at_k == pytest.approx(disc(5) / (disc(1) + disc(2)))


def test_deep_target_behind_repeats_gets_its_distinct_rank():
    head = [f"d{i}" for i in range(10)]
    ranking = head + ["d0", "", "x", "d3", "target"]
    s = score_question(q("target"), ranking, 10, 0.0)
    assert s.reciprocal_rank_at_k == 0.0
    assert s.ranked_ids == tuple(head)
    assert score_question(q("target"), ranking, 12, 0.0).reciprocal_rank_at_k == pytest.approx(1 / 12)
    assert score_question(q("target"), ranking, 11, 0.0).reciprocal_rank_at_k == 0.0


def test_repeats_inside_the_head_move_deep_targets_up():
    ranking = ["a", "a", "a"] + [f"d{i}" for i in range(8)] + ["target"]
    s = score_question(q("target"), ranking, 10, 0.0)
    assert s.reciprocal_rank_at_k == pytest.approx(1 / 10)
    assert s.recall_at_k == 1.0
    assert s.ndcg_at_k == pytest.approx(disc(10))


def test_any_sequence_or_iterable_of_ids_is_accepted():
    from_tuple = score_question(q("b"), ("a", "b"), 10, 0.0)
    from_iter = score_question(q("b"), iter(["a", "b"]), 10, 0.0)
    assert from_tuple == from_iter
    assert from_tuple.reciprocal_rank_at_k == 0.5


def test_score_carries_question_identity():
    s = score_question(q("a", form="gap", hard_class="near-duplicate", qid="q7"), ["a"], 10, 0.5)
    assert (s.question_id, s.form, s.hard_class) == ("q7", QuestionForm.GAP, "near-duplicate")


@pytest.mark.parametrize("k", [0, -1, 2.0, True, "10", None])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(UsageError):
        score_question(q("a"), ["a"], k, 0.0)
    with pytest.raises(UsageError):
        aggregate([], k)


# --- aggregation --------------------------------------------------------------------------------


def score(
    hit1: bool,
    hit3: bool,
    *,
    form: QuestionForm = QuestionForm.MATCH,
    hard_class: str | None = None,
    rr: float = 0.0,
    recall: float = 0.0,
    ndcg: float = 0.0,
    latency: float = 0.0,
) -> QuestionScore:
    return QuestionScore("q", form, hard_class, (), hit1, hit3, rr, recall, ndcg, latency)


def test_hit_rates_are_hits_over_questions():
    m = aggregate([score(True, True), score(False, True), score(False, False), score(True, True)], 10)
    assert (m.question_count, m.top1_hits, m.top3_hits) == (4, 2, 3)
    assert (m.top1_hit_rate, m.top3_hit_rate) == (0.5, 0.75)
    assert m.k == 10


def test_means_of_rank_metrics():
    m = aggregate(
        [score(True, True, rr=1.0, recall=1.0, ndcg=1.0), score(False, True, rr=1 / 3, recall=0.5, ndcg=0.25)]
    )
    assert m.mrr_at_k == pytest.approx(2 / 3)
    assert m.recall_at_k == 0.75
    assert m.ndcg_at_k == 0.625


def test_breakdown_by_form_in_order_of_first_occurrence():
    m = aggregate(
        [
            score(False, False, form=QuestionForm.GAP),
            score(True, True, form=QuestionForm.MATCH, rr=1.0),
            score(False, True, form=QuestionForm.MATCH, rr=0.5),
        ]
    )
    assert list(m.by_form) == ["gap", "match"]
    match = m.by_form["match"]
    assert (match.questions, match.top1_hit_rate, match.top3_hit_rate, match.mrr_at_k) == (2, 0.5, 1.0, 0.75)
    gap = m.by_form["gap"]
    assert (gap.questions, gap.top1_hit_rate, gap.top3_hit_rate, gap.mrr_at_k, gap.ndcg_at_k) == (1, 0.0, 0.0, 0.0, 0.0)


def test_breakdown_by_hard_class_skips_unclassified_questions():
    m = aggregate(
        [
            score(True, True, hard_class="near-duplicate", ndcg=1.0),
            score(False, False, hard_class=None),
            score(False, True, hard_class="normal", ndcg=0.5),
            score(False, False, hard_class="near-duplicate"),
        ]
    )
    assert list(m.by_hard_class) == ["near-duplicate", "normal"]
    near = m.by_hard_class["near-duplicate"]
    assert (near.questions, near.top1_hit_rate, near.top3_hit_rate, near.ndcg_at_k) == (2, 0.5, 0.5, 0.5)
    assert m.by_hard_class["normal"].questions == 1
    assert sum(b.questions for b in m.by_form.values()) == 4


def test_no_hard_class_gives_an_empty_breakdown():
    assert aggregate([score(True, True)]).by_hard_class == {}


def test_empty_run_has_zero_rates_and_empty_breakdowns():
    m = aggregate([])
    assert (m.question_count, m.top1_hits, m.top3_hits) == (0, 0, 0)
    assert (m.top1_hit_rate, m.top3_hit_rate, m.mrr_at_k, m.recall_at_k, m.ndcg_at_k) == (0.0,) * 5
    assert (m.latency_p50_s, m.latency_p95_s) == (0.0, 0.0)
    assert (m.by_form, m.by_hard_class) == ({}, {})


def test_latency_percentiles_interpolate_linearly():
    m = aggregate([score(True, True, latency=t) for t in (0.4, 0.1, 0.3, 0.2)])
    assert m.latency_p50_s == pytest.approx(0.25)
    assert m.latency_p95_s == pytest.approx(0.385)
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) == 0.0


def test_aggregate_of_scored_questions_end_to_end():
    questions = [
        (q("c", qid="1", hard_class="normal"), ["a", "b", "c"]),
        (q("a", qid="2", form="gap"), ["a"]),
        (q(qid="3", hard_class="nothing"), []),
        (q("z", qid="4", form="gap", hard_class="normal"), ["a", "b"]),
    ]
    m = aggregate((score_question(x, r, 10, 0.001 * i) for i, (x, r) in enumerate(questions)), 10)
    assert (m.top1_hits, m.top3_hits) == (2, 3)
    assert m.mrr_at_k == pytest.approx((1 / 3 + 1 + 1 + 0) / 4)
    assert m.by_form["gap"].top1_hit_rate == 0.5
    assert m.by_hard_class["normal"].top3_hit_rate == 0.5
    assert m.by_hard_class["nothing"].mrr_at_k == 1.0


def test_the_default_cut_off_is_ten() -> None:
    from evalkit.retrieval.scoring import DEFAULT_K

    assert DEFAULT_K == 10


def test_percentile_sorts_unless_told_the_values_are_sorted() -> None:
    from evalkit.retrieval.scoring import percentile

    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.95, presorted=True) == pytest.approx(3.85)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("doc-1", "a retriever must return a list of document ids, not str"),
        (5, "a retriever must return a list of document ids, not int"),
        (["a", 3], "a retriever returned a document id that is not a string: 3"),
    ],
)
def test_a_bad_ranking_is_refused_word_for_word(raw: object, message: str) -> None:
    from evalkit.retrieval.scoring import rank_distinct

    with pytest.raises(RetrievalError) as caught:
        rank_distinct(raw)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_bad_cut_off_is_refused_word_for_word() -> None:
    from evalkit.retrieval.scoring import aggregate

    with pytest.raises(UsageError) as caught:
        aggregate([], 0)
    assert str(caught.value) == "k must be a positive integer (got 0)"


# --- thresholds, cut-offs and ranks at the edges, by hand ---------------------------------------


def test_a_no_result_question_keeps_its_rule_under_any_threshold() -> None:
    """A question with no expected id scores 1.0 / hit when nothing comes back and 0.0 / miss
    otherwise, whatever the relevance threshold."""
    empty = score_question(q(), [], 10, 0.0, threshold=2)
    assert (empty.hit_at_1, empty.hit_at_3, empty.reciprocal_rank_at_k, empty.recall_at_k, empty.ndcg_at_k) == (
        True, True, 1.0, 1.0, 1.0,
    )  # fmt: skip
    answered = score_question(q(), ["a"], 10, 0.0, threshold=2)
    assert (answered.hit_at_1, answered.hit_at_3, answered.reciprocal_rank_at_k, answered.ndcg_at_k) == (
        False, False, 0.0, 0.0,
    )  # fmt: skip


def test_an_ungraded_question_has_nothing_relevant_above_threshold_one_but_keeps_its_ndcg() -> None:
    """Ungraded expected ids have grade 1: under threshold 2 none is relevant for hit@1, hit@3, MRR
    and recall; nDCG ignores the threshold: (1/log2 2 + 1/log2 4) / (1/log2 2 + 1/log2 3)."""
    s = score_question(q("a", "b"), ["a", "x", "b"], 10, 0.0, threshold=2)
    assert (s.hit_at_1, s.hit_at_3, s.reciprocal_rank_at_k, s.recall_at_k) == (False, False, 0.0, 0.0)
    assert s.ndcg_at_k == pytest.approx((disc(1) + disc(3)) / (disc(1) + disc(2)), abs=1e-15)


def test_an_expected_id_at_distinct_rank_four_is_no_top3_hit() -> None:
    """Rank 4: hit@3 misses, MRR@10 is 1/4 — ungraded and graded alike."""
    plain = score_question(q("d"), ["a", "b", "c", "d"], 10, 0.0)
    graded = score_question(GoldenQuestion.graded("q", "t", {"d": 2}), ["a", "b", "c", "d"], 10, 0.0)
    for s in (plain, graded):
        assert (s.hit_at_1, s.hit_at_3, s.reciprocal_rank_at_k, s.recall_at_k) == (False, False, 0.25, 1.0)


def test_a_graded_relevant_document_just_past_the_cut_off_counts_for_nothing() -> None:
    """k = 3 and the relevant document at distinct rank 4 (after three distinct ids, with an empty
    id and a repeat on the way): no hit, MRR@3 0 and recall@3 0 — even though a rank was found."""
    question = GoldenQuestion.graded("q", "t", {"a": 2, "z": 0})
    for ranking in (["x", "y", "w", "a"], ["x", "y", "w", "", "y", "a"]):
        s = score_question(question, ranking, 3, 0.0)
        assert (s.hit_at_1, s.hit_at_3, s.reciprocal_rank_at_k, s.recall_at_k, s.ndcg_at_k) == (
            False, False, 0.0, 0.0, 0.0,
        )  # fmt: skip
        assert score_question(question, ranking, 4, 0.0).reciprocal_rank_at_k == 0.25


def test_a_cut_off_of_another_type_is_refused_even_when_its_value_was_used_before() -> None:
    """2.0 == 2 and True == 1 as dict keys: a cut-off of k = 2 or 1 computed before must not let
    them through."""
    score_question(q("a"), ["a"], 2, 0.0)
    score_question(q("a"), ["a"], 1, 0.0)
    aggregate([], 2)
    for k in (2.0, True):
        with pytest.raises(UsageError, match="k must be a positive integer"):
            score_question(q("a"), ["a"], k, 0.0)  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="k must be a positive integer"):
            aggregate([], k)  # type: ignore[arg-type]


@pytest.mark.parametrize("threshold", [0, -1, 2.0])
def test_a_bad_relevance_threshold_is_refused_word_for_word(threshold: object) -> None:
    """Refused with the value named, for graded and ungraded questions alike (any threshold but 1
    takes the graded path)."""
    for question in (GoldenQuestion.graded("q", "t", {"a": 2}), q("a")):
        with pytest.raises(UsageError) as caught:
            score_question(question, ["a"], 10, 0.0, threshold=threshold)  # type: ignore[arg-type]
        assert str(caught.value) == f"the relevance threshold must be a positive integer (got {threshold!r})"
