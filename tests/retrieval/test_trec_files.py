"""TREC run and qrels files written from a run: trec_eval reads back evalkit's order and grades."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit.errors import OutputFailed, UsageError
from evalkit.questions import GoldenQuestion
from evalkit.retrieval.ranking import Ranking
from evalkit.retrieval.trec import export_scores, write_qrels, write_run


def test_strictly_decreasing_scores_are_written_as_given_otherwise_rank_based_ones() -> None:
    assert export_scores(Ranking(("a", "b"), (2.5, -1.0))) == (2.5, -1.0)
    # a tie: trec_eval would re-order the tied documents by id, so the scores carry the order instead
    assert export_scores(Ranking(("b", "a", "c"), (2.0, 2.0, 1.0))) == (3.0, 2.0, 1.0)
    assert export_scores(Ranking(("b", "a"), None)) == (2.0, 1.0)


def test_run_and_qrels_lines(tmp_path) -> None:
    run = write_run(tmp_path / "run.txt", {"q1": Ranking(("d2", "d1"), (1.5, 0.25)), "q2": Ranking(())}, "tag-1")
    assert run.read_text() == "q1 Q0 d2 1 1.5 tag-1\nq1 Q0 d1 2 0.25 tag-1\n"
    questions = [
        GoldenQuestion("q1", "t", expected_document_ids=["d1"]),
        GoldenQuestion.graded("q2", "t", {"d3": 2, "d4": -1}),
        GoldenQuestion("q3", "t"),  # nothing answers this: trec_eval has no way to say so
    ]
    qrels = write_qrels(tmp_path / "qrels.txt", questions)
    assert qrels.read_text() == "q1 0 d1 1\nq2 0 d3 2\nq2 0 d4 -1\n"


def test_ids_with_whitespace_cannot_be_written(tmp_path) -> None:
    with pytest.raises(UsageError, match="contains whitespace"):
        write_run(tmp_path / "run.txt", {"q 1": Ranking(("d",))}, "tag")
    assert not (tmp_path / "run.txt").exists()


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs /dev/full")
def test_a_write_failure_is_the_paths_fault_or_the_environments_by_the_one_rule(tmp_path) -> None:
    """Every write error of a TREC file was OutputFailed (exit 3), a folder or a path under a file
    too: the one rule of every file a command writes (``errors.write_failed``) says the path's
    fault is exit 2 and only the environment's (a full disk) is exit 3."""
    (tmp_path / "a-file").write_text("not a folder")
    (tmp_path / "a-folder").mkdir()
    rankings = {"q1": Ranking(("d1",))}
    for path in (tmp_path / "a-file" / "run.txt", tmp_path / "a-folder"):
        with pytest.raises(UsageError, match="cannot write ") as caught:
            write_run(path, rankings, "tag")
        assert not isinstance(caught.value, OutputFailed) and caught.value.exit_code == 2
    with pytest.raises(OutputFailed, match="cannot write /dev/full: No space left on device") as full:
        write_qrels("/dev/full", [GoldenQuestion("q1", "t", expected_document_ids=["d1"])])
    assert full.value.exit_code == 3
