"""evalkit's per-question metrics equal trec_eval's (through pytrec_eval) wherever trec_eval can express the case.

MRR@k is trec_eval's ``recip_rank`` on the ranking cut at k: trec_eval's own measure has no cut-off.

trec_eval cannot express three things, and evalkit's rules decide them (tested in test_scoring):

* a question with no expected id (trec_eval has no "nothing answers this" qrel);
* a question whose distinct ranking is empty (trec_eval drops queries without results);
* repeated and empty ids (a trec_eval run is a mapping, one score per document): trec_eval is
  given the distinct ranking while evalkit scores the raw one, so the dedup rule is exercised.

trec_eval also breaks score ties by document id, so the run hands it strictly decreasing scores.
"""

from __future__ import annotations

import random

import pytest
from evalkit.questions import GoldenQuestion
from evalkit.retrieval.scoring import aggregate, rank_distinct, score_question

pytrec_eval = pytest.importorskip("pytrec_eval")

K = 10


def measures(k: int) -> set[str]:
    return {"recip_rank", f"recall.{k}", f"ndcg_cut.{k}", "success.1,3"}


def generated(seed: int, count: int) -> list[tuple[GoldenQuestion, list[str]]]:
    """Questions with 0-6 targets and raw rankings of 0-120 ids with repeats and empty ids."""
    rng = random.Random(seed)
    pool = [f"doc-{i}" for i in range(150)]
    cases = []
    for i in range(count):
        targets = rng.sample(pool, rng.randint(0, 6))
        depth = rng.choice([0, 1, 2, 3, 5, 10, 11, 30, 120])
        ranking = []
        for _ in range(depth):
            roll = rng.random()
            if roll < 0.05:
                ranking.append("")
            elif roll < 0.25 and targets:
                ranking.append(rng.choice(targets))
            elif roll < 0.35 and ranking:
                ranking.append(rng.choice(ranking))
            else:
                ranking.append(rng.choice(pool))
        cases.append((GoldenQuestion(f"q{i}", "question", expected_document_ids=targets), ranking))
    return cases


def trec_results(cases, k=K):
    """trec_eval's measures per question; ``recip_rank`` on the ranking cut at ``k`` (MRR@k), the
    others on the whole ranking (success_3 must see rank 3 even when k is 2)."""
    qrels = {}
    run = {}
    for question, ranking in cases:
        distinct = rank_distinct(ranking)
        if not question.expected_document_ids or not distinct:
            continue  # inexpressible in trec_eval, see the module docstring
        qrels[question.id] = {doc: 1 for doc in question.expected_document_ids}
        run[question.id] = {doc: float(len(distinct) - rank) for rank, doc in enumerate(distinct)}
    results = pytrec_eval.RelevanceEvaluator(qrels, measures(k)).evaluate(run)
    cut = {qid: dict(sorted(ranked.items(), key=lambda item: -item[1])[:k]) for qid, ranked in run.items()}
    for qid, measured in pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut).items():
        results[qid]["recip_rank"] = measured["recip_rank"]
    return results


@pytest.mark.parametrize("seed,k", [(1, 10), (2, 10), (3, 2), (5, 25)])
def test_per_question_metrics_equal_trec_eval(seed, k):
    cases = generated(seed, 400)
    trec = trec_results(cases, k)
    compared = 0
    for question, ranking in cases:
        if question.id not in trec:
            continue
        ours = score_question(question, ranking, k, 0.0)
        theirs = trec[question.id]
        assert ours.reciprocal_rank_at_k == pytest.approx(theirs["recip_rank"], abs=1e-12, rel=0)
        assert ours.recall_at_k == pytest.approx(theirs[f"recall_{k}"], abs=1e-12, rel=0)
        assert ours.ndcg_at_k == pytest.approx(theirs[f"ndcg_cut_{k}"], abs=1e-12, rel=0)
        assert float(ours.hit_at_1) == theirs["success_1"]
        assert float(ours.hit_at_3) == theirs["success_3"]
        compared += 1
    # The generator must leave most questions expressible, or this test proves little.
    assert compared > 250
    assert len(trec) == compared


def test_run_means_equal_trec_eval_means_over_the_expressible_questions():
    cases = generated(4, 400)
    trec = trec_results(cases)
    ours = aggregate([score_question(q, r, K, 0.0) for q, r in cases if q.id in trec], K)
    n = len(trec)
    assert ours.question_count == n
    assert ours.mrr_at_k == pytest.approx(sum(t["recip_rank"] for t in trec.values()) / n, abs=1e-12, rel=0)
    assert ours.recall_at_k == pytest.approx(sum(t[f"recall_{K}"] for t in trec.values()) / n, abs=1e-12, rel=0)
    assert ours.ndcg_at_k == pytest.approx(sum(t[f"ndcg_cut_{K}"] for t in trec.values()) / n, abs=1e-12, rel=0)
    assert ours.top1_hit_rate == pytest.approx(sum(t["success_1"] for t in trec.values()) / n, abs=1e-12, rel=0)
    assert ours.top3_hit_rate == pytest.approx(sum(t["success_3"] for t in trec.values()) / n, abs=1e-12, rel=0)


def test_trec_eval_drops_what_evalkit_scores_by_its_own_rules():
    cases = [
        (GoldenQuestion("nothing-back", "q", expected_document_ids=["a"]), ["", ""]),
        (GoldenQuestion("no-answer-quiet", "q", expected_document_ids=[]), []),
        (GoldenQuestion("no-answer-noisy", "q", expected_document_ids=[]), ["a"]),
    ]
    qrels = {"nothing-back": {"a": 1}, "no-answer-noisy": {"a": 0}}
    run = {"no-answer-noisy": {"a": 1.0}}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures(K)).evaluate(run)
    assert "nothing-back" not in trec  # trec_eval leaves the question out of every mean
    ours = {q.id: score_question(q, r, K, 0.0) for q, r in cases}
    assert ours["nothing-back"].reciprocal_rank_at_k == 0.0  # evalkit counts it, as a miss
    assert (ours["no-answer-quiet"].hit_at_1, ours["no-answer-quiet"].ndcg_at_k) == (True, 1.0)
    assert (ours["no-answer-noisy"].hit_at_1, ours["no-answer-noisy"].ndcg_at_k) == (False, 0.0)


def test_tied_scores_are_reordered_by_trec_eval():
    """Why the run above exports strictly decreasing scores rather than one score for all."""
    qrels = {"q": {"a": 1}}
    tied = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({"q": {"a": 1.0, "b": 1.0}})
    ranked = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({"q": {"a": 2.0, "b": 1.0}})
    ours = score_question(GoldenQuestion("q", "q", expected_document_ids=["a"]), ["a", "b"], K, 0.0)
    assert ours.reciprocal_rank_at_k == ranked["q"]["recip_rank"] == 1.0
    assert tied["q"]["recip_rank"] == 0.5  # the tie went to "b", which evalkit ranked second


def test_mrr_at_k_is_recip_rank_of_the_ranking_cut_at_k_not_of_the_whole_ranking():
    """The case that told the two apart: the first relevant id at rank 11 of a 12-deep fetch."""
    question = GoldenQuestion("deep", "q", expected_document_ids=["target"])
    ranking = [f"d{i}" for i in range(10)] + ["target", "d10"]
    run = {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}
    whole = pytrec_eval.RelevanceEvaluator({"deep": {"target": 1}}, {"recip_rank"}).evaluate({"deep": run})
    cut = pytrec_eval.RelevanceEvaluator({"deep": {"target": 1}}, {"recip_rank"}).evaluate(
        {"deep": {doc: score for doc, score in run.items() if doc != "target" and doc != "d10"}}
    )
    assert whole["deep"]["recip_rank"] == pytest.approx(1 / 11)
    assert score_question(question, ranking, 10, 0.0).reciprocal_rank_at_k == cut["deep"]["recip_rank"] == 0.0
    assert score_question(question, ranking, 11, 0.0).reciprocal_rank_at_k == pytest.approx(whole["deep"]["recip_rank"])
