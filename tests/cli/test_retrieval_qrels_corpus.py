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
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": f"alpha {d}"}) + "\n" for d in corpus_ids)
    )
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
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert result.code == 2, result.stderr
    assert (
        "test.tsv, line 3" in result.stderr
        and r'document "ghost\u202e", judged relevant (grade 2) for query "q1"' in result.stderr
    )
    assert "is not in the corpus" in result.stderr and "1 more relevant document is not in it either" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing was run or stored"
    validated = evalkit_cli("validate")
    assert validated.code == 2 and "ghost" in validated.stderr + validated.stdout


def test_a_document_judged_non_relevant_may_lie_outside_the_corpus(evalkit_cli, project, tmp_path) -> None:
    # grade 0 or less changes no metric: real qrels judge documents a distributed corpus left out
    beir_project(project, "q1\td1\t1\nq1\tpooled-elsewhere\t0\nq2\td2\t1\nq2\tspam\t-1\n")
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", "--json", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert result.code == 0, result.stderr


@pytest.mark.parametrize("row", ["q1\td\x001\t1\n", "q\x001\td1\t1\n"], ids=["document", "query"])
def test_an_id_holding_a_nul_is_refused_escaped(evalkit_cli, project, tmp_path, row: str) -> None:
    beir_project(project, row)
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert result.code == 2, result.stderr
    assert "test.tsv, line 2" in result.stderr and "holds a NUL character" in result.stderr and r"\x00" in result.stderr
    assert "\x00" not in result.stderr


def _counting_corpus_reads(monkeypatch) -> list[str]:  # noqa: ANN001
    """The corpus files the qrels check reads, from now on (one entry a read)."""
    from evalkit_plugins import lexical

    read: list[str] = []
    documents = lexical._jsonl_documents

    def counted(path, digest):  # noqa: ANN001, ANN202
        read.append(str(path))
        return documents(path, digest)

    monkeypatch.setattr(lexical, "_jsonl_documents", counted)
    return read


def test_the_corpus_ids_are_read_once_and_again_when_the_corpus_changes(
    evalkit_cli, project, tmp_path, monkeypatch
) -> None:
    # `evalkit list questions` read the whole corpus each time to check the qrels against it: ~8 ms
    # of CPU a MB, seconds for a corpus of several GB. Its ids are cached beside the lexical indexes
    # until the file changes; an edit of the same size is seen by its times.
    import os

    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    read = _counting_corpus_reads(monkeypatch)
    for _ in range(2):
        listed = evalkit_cli("list", "questions", env=env)
        assert listed.code == 0 and "beir.col" in listed.stdout, listed.stdout + listed.stderr
    assert len(read) == 1, read
    corpus = project / "col" / "corpus.jsonl"
    before = corpus.stat()
    corpus.write_text(corpus.read_text().replace('"d1"', '"x1"'))  # same size: d1 is no longer in it
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert corpus.stat().st_size == before.st_size
    refused = evalkit_cli("list", "questions", env=env)
    assert len(read) == 2, read
    assert (
        refused.code == 2
        and 'document "d1", judged relevant (grade 1) for query "q1", is not in the corpus' in refused.stderr
    ), refused.stderr


@pytest.mark.parametrize(
    "hostile",
    [
        "not json",
        "[1, 2]",
        '{"key": 1, "ids": ["d1", "ghost"]}',
        "WRONG-DIGEST",
        "OTHER-FILE",
        "{" * 100_000,
        "x" * 200_000,
    ],
    ids=["garbage", "list", "no-key", "wrong-digest", "other-file", "deep", "too-large"],
)
def test_a_corrupt_or_hostile_ids_cache_is_ignored_and_rebuilt(
    evalkit_cli, project, tmp_path, monkeypatch, hostile: str
) -> None:
    # The cache file is only an optimisation: one that does not hold, whole and checked, the ids of
    # this very file is read as absent (the corpus read again, the check as strict) and rewritten.
    import hashlib

    beir_project(project, "q1\td1\t1\nq1\tghost\t1\nq2\td2\t1\n")
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    assert evalkit_cli("list", "questions", env=env).code == 2
    (cache,) = (tmp_path / "cache" / "lexical").glob("ids-*.json")
    kept = json.loads(cache.read_text())
    if hostile in ("WRONG-DIGEST", "OTHER-FILE"):  # a cache that would let "ghost" through
        ids = [*kept["ids"], "ghost"]
        digest = kept["sha256"] if hostile == "WRONG-DIGEST" else hashlib.sha256(json.dumps(ids).encode()).hexdigest()
        key = kept["key"] if hostile == "WRONG-DIGEST" else {**kept["key"], "mtime_ns": kept["key"]["mtime_ns"] - 1}
        hostile = json.dumps({"key": key, "ids": ids, "sha256": digest})
    cache.write_text(hostile)
    read = _counting_corpus_reads(monkeypatch)
    refused = evalkit_cli("list", "questions", env=env)
    assert refused.code == 2 and 'document "ghost"' in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert len(read) == 1, "the corpus was read again"
    assert json.loads(cache.read_text()) == kept, "and the cache rewritten"


def test_a_cache_folder_that_cannot_be_written_still_checks_the_qrels(evalkit_cli, project, tmp_path) -> None:
    # the cache is left out, said nowhere: the check reads the corpus as it did
    beir_project(project, "q1\td1\t1\nq1\tghost\t1\nq2\td2\t1\n")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    for _ in range(2):
        refused = evalkit_cli("list", "questions", env={"EVALKIT_CACHE_DIR": str(blocked)})
        assert refused.code == 2 and 'document "ghost"' in refused.stderr and "Traceback" not in refused.stderr, (
            refused.stderr
        )
    assert blocked.read_text() == "not a folder"


@pytest.mark.parametrize("cache_dir", [None, "~/evalkit-cache"], ids=["default", "tilde"])
def test_no_home_folder_to_keep_the_cache_in_still_lists_and_checks_the_collection(
    evalkit_cli, project, monkeypatch, cache_dir
) -> None:
    """A container run under a uid the system does not know, without ``HOME``: ``evalkit list
    questions`` and ``evalkit validate`` (read-only commands) lost the collection to
    ``RuntimeError in golden_question_sets(): Could not determine home directory`` (validate exit
    2), for a cache that is only a saving. The ids are now read, nothing kept, the check as strict."""
    import os.path

    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # what it does with no home to be found
    env = {"HOME": None, "XDG_CACHE_HOME": None, "EVALKIT_CACHE_DIR": cache_dir}
    listed = evalkit_cli("list", "questions", env=env)
    assert listed.code == 0 and "beir.col" in listed.stdout and "RuntimeError" not in listed.stderr, listed.stderr
    validated = evalkit_cli("validate", env=env)
    assert validated.code == 0 and "beir.col" in validated.stdout, validated.stdout + validated.stderr
    (project / "col" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tghost\t1\n")
    refused = evalkit_cli("list", "questions", env=env)
    assert refused.code == 2 and 'document "ghost"' in refused.stderr, refused.stderr
    assert not any(path.name.startswith("ids-") for path in project.rglob("*")), "nothing kept"
