"""Qrels that judge a document the collection's own corpus lacks, or an id holding a NUL: refused
when the collection is read (exit 2, the qrels file, line and id named, escaped), never a silent
miss that keeps recall below 1 on every run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def beir_project(project: Path, qrels: str, corpus_ids: tuple[str, ...] = ("d0", "d1", "d2")) -> None:
    """A BEIR folder ``col`` in ``project`` with the given qrels rows, and a lexical deployment over it."""
    folder = project / "col"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": f"alpha {d}"}) + "\n" for d in corpus_ids))
    queries = [{"_id": "q1", "text": "alpha d1"}, {"_id": "q2", "text": "alpha d2"}]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    (project / "evalkit.toml").write_text(
        '[question_sets."beir.col"]\npath = "col"\n\n[deployments.prod]\nretriever = "evalkit.lexical"\n\n'
        '[deployments.prod.retrievers."evalkit.lexical"]\ncorpus = "col"\n'
    )


def test_a_relevant_document_the_corpus_lacks_is_refused_naming_the_line(evalkit_cli, project, tmp_path) -> None:
    # the retriever can never return "ghost": recall was 0.5 at best and nothing said why
    beir_project(project, "q1\td1\t1\nq1\tghost\u202e\t2\nq2\td2\t1\nq2\tgone\t1\n")
    result = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.code == 2, result.stderr
    assert "test.tsv, line 3" in result.stderr and r'document "ghost\u202e", judged relevant (grade 2) for query "q1"' in result.stderr
    assert "is not in the corpus" in result.stderr and "1 more relevant document is not in it either" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing was run or stored"
    validated = evalkit_cli("validate")
    assert validated.code == 2 and "ghost" in validated.stderr + validated.stdout


def test_a_document_judged_non_relevant_may_lie_outside_the_corpus(evalkit_cli, project, tmp_path) -> None:
    # grade 0 or less changes no metric: real qrels judge documents a distributed corpus left out
    beir_project(project, "q1\td1\t1\nq1\tpooled-elsewhere\t0\nq2\td2\t1\nq2\tspam\t-1\n")
    result = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", "--json", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.code == 0, result.stderr


@pytest.mark.parametrize("row", ["q1\td\x001\t1\n", "q\x001\td1\t1\n"], ids=["document", "query"])
def test_an_id_holding_a_nul_is_refused_escaped(evalkit_cli, project, tmp_path, row: str) -> None:
    beir_project(project, row)
    result = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.code == 2, result.stderr
    assert "test.tsv, line 2" in result.stderr and "holds a NUL character" in result.stderr and r"\x00" in result.stderr
    assert "\x00" not in result.stderr
