"""What a retriever returns, read into a ranking: plain ids, (id, score) pairs or ScoredDocument results."""

from __future__ import annotations

import re

import pytest
from evalkit.errors import RetrievalError
from evalkit.retrieval.contracts import ScoredDocument
from evalkit.retrieval.ranking import Ranking, read_ranking


def test_plain_ids_keep_working_and_carry_no_scores() -> None:
    ranking, over = read_ranking(["a", "", "b", "a", "c"], 12)
    assert ranking == Ranking(("a", "b", "c"), None) and over == 0
    assert ranking.pairs() == [["a", None], ["b", None], ["c", None]]


def test_pairs_and_results_keep_the_first_occurrence_and_its_score() -> None:
    pairs, _ = read_ranking([("a", 3.5), ("", 3.0), ("b", 2), ("a", 1.0)], 12)
    assert pairs == Ranking(("a", "b"), (3.5, 2.0))
    results, _ = read_ranking(iter([ScoredDocument("x", 0.5), ScoredDocument("y", 0.25)]), 12)
    assert results == Ranking(("x", "y"), (0.5, 0.25))
    assert read_ranking([], 12) == (Ranking(()), 0)


def test_results_beyond_the_limit_are_counted_and_dropped_before_anything_else() -> None:
    ranking, over = read_ranking([("a", 3.0), ("b", 2.0), ("c", 1.0)], 2)
    assert ranking.ids == ("a", "b") and over == 3


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "not a list of document ids"),
        ({"a": 1.0}, "not a list of document ids"),
        ([("a", 1.0), "b"], "a ranking is all ids, all (id, score) pairs or all ScoredDocument results"),
        ([("a", float("nan"))], "score must be a finite number"),
        ([("a", True)], "score must be a finite number"),
        ([(1, 2.0)], "document id that is not a string"),
        (["a", 3], "document id that is not a string"),
    ],
)
def test_what_is_not_a_ranking_is_refused(raw, message) -> None:
    with pytest.raises(RetrievalError, match=re.escape(message)):
        read_ranking(raw, 12)
