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


def test_a_corpus_line_that_is_not_utf8_fails_its_own_set_naming_the_line(evalkit_cli, project, tmp_path) -> None:
    # A byte that is not UTF-8 in corpus.jsonl escaped as a bare UnicodeDecodeError: every
    # [question_sets] table vanished (the provider failed whole, no file named), and the lexical
    # retriever's prepare() made it an environment fault (exit 3) instead of bad input (exit 2).
    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    with (project / "col" / "corpus.jsonl").open("ab") as corpus:
        corpus.write(b'{"_id": "d3", "title": "\xff", "text": "alpha"}\n')
    good = project / "good"
    (good / "qrels").mkdir(parents=True)
    (good / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n')
    (good / "qrels" / "test.tsv").write_text("q1\td1\t1\n")
    with (project / "evalkit.toml").open("a") as config:
        config.write('\n[question_sets."beir.good"]\npath = "good"\n')
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    listed = evalkit_cli("list", "questions", "--json", env=env)
    assert "beir.good" in listed.stdout, "the other collection is still listed"
    assert "corpus.jsonl, line 4: not UTF-8 (invalid start byte at byte 24)" in listed.stdout
    assert "UnicodeDecodeError" not in listed.stdout + listed.stderr
    validated = evalkit_cli("validate", env=env)
    assert validated.code == 2 and "corpus.jsonl, line 4: not UTF-8" in validated.stderr + validated.stdout
    # the retriever reading the same corpus for another set: bad input, exit 2, the line named
    (project / "evalkit.toml").write_text(
        '[question_sets."beir.good"]\npath = "good"\n\n[deployments.prod]\nretriever = "evalkit.lexical"\n\n'
        '[deployments.prod.retrievers."evalkit.lexical"]\ncorpus = "col"\n'
    )
    ran = evalkit_cli("retrieval", "beir.good", "--deployment", "prod", env=env)
    assert ran.code == 2, ran.stderr
    assert "corpus.jsonl, line 4: not UTF-8" in ran.stderr and "UnicodeDecodeError" not in ran.stderr


def test_a_document_id_given_twice_in_the_corpus_is_refused_by_validate_as_by_the_run(
    evalkit_cli, project, tmp_path
) -> None:
    # `evalkit validate` passed a corpus.jsonl holding "d1" twice (the qrels check read its ids
    # into a set), then `evalkit retrieval` refused it when the index was built, without a line.
    beir_project(project, "q1\td1\t1\nq2\td2\t1\n", corpus_ids=("d0", "d1", "d2", "d1"))
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    validated = evalkit_cli("validate", env=env)
    assert validated.code == 2
    assert (
        'corpus.jsonl, line 4: document id "d1" occurs twice (first on line 2)' in validated.stderr + validated.stdout
    )
    ran = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", env=env)
    assert ran.code == 2 and 'line 4: document id "d1" occurs twice (first on line 2)' in ran.stderr
    assert not (project / ".evalkit").exists(), "nothing was run or stored"


def test_the_header_row_of_beir_qrels_after_blank_lines_is_still_a_header(evalkit_cli, project, tmp_path) -> None:
    # Blank lines are skipped everywhere in a qrels file, but the header was taken only on line 1:
    # a file opening with an empty line was refused, "line 2: the grade must be an integer, got 'score'".
    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    qrels = project / "col" / "qrels" / "test.tsv"
    qrels.write_text("\n" + qrels.read_text())
    result = evalkit_cli("validate", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.code == 0, result.stdout + result.stderr
    assert "beir.col (2 questions)" in result.stdout
    # a header-like row after the first judgement is still refused
    qrels.write_text("q1\td1\t1\nquery-id\tcorpus-id\tscore\nq2\td2\t1\n")
    refused = evalkit_cli("validate", env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert (
        refused.code == 2
        and "test.tsv, line 2: the grade must be an integer, got 'score'" in refused.stdout + refused.stderr
    )


def test_no_home_folder_for_the_lexical_index_is_refused_naming_what_to_set(evalkit_cli, project, monkeypatch) -> None:
    """A CI container under a uid the system does not know, without ``HOME``: ``evalkit retrieval``
    ended in ``retriever "evalkit.lexical" … raised RuntimeError when created: Could not determine
    home directory``, naming nothing to set."""
    import os.path

    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # what it does with no home to be found
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", env={"HOME": None, "XDG_CACHE_HOME": None, "EVALKIT_CACHE_DIR": None}
    )
    assert result.code == 2, result.stderr
    assert "evalkit.lexical: no folder to keep its index in: HOME is not set" in result.stderr, result.stderr
    assert "set EVALKIT_CACHE_DIR to a folder that can be written" in result.stderr, result.stderr
    assert 'index_dir = "…" in [deployments.NAME.retrievers."evalkit.lexical"]' in result.stderr, result.stderr
    assert "RuntimeError" not in result.stderr


def test_an_empty_home_is_no_home_folder_for_the_lexical_index(evalkit_cli, project) -> None:
    # "~" with HOME set and empty is "/": the index went to /.cache/evalkit/lexical (or, for a user
    # who cannot write "/", failed naming /.cache and nothing to set)
    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    existed = Path("/.cache").exists()
    try:
        result = evalkit_cli(
            "retrieval", "beir.col", "--deployment", "prod", env={"HOME": "", "XDG_CACHE_HOME": None, "EVALKIT_CACHE_DIR": None}
        )
    finally:
        if not existed and Path("/.cache/evalkit").exists():  # what the old reading made
            import shutil

            shutil.rmtree("/.cache", ignore_errors=True)
    assert result.code == 2, result.stderr
    assert "HOME is set but empty" in result.stderr and "set EVALKIT_CACHE_DIR" in result.stderr, result.stderr


def test_an_index_folder_that_cannot_be_made_says_what_to_set(evalkit_cli, project, tmp_path) -> None:
    # "cannot make its index folder … (from $EVALKIT_CACHE_DIR): Not a directory", and nothing more
    beir_project(project, "q1\td1\t1\nq2\td2\t1\n")
    (tmp_path / "a-file").write_text("")
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", env={"EVALKIT_CACHE_DIR": str(tmp_path / "a-file" / "cache")}
    )
    assert result.code == 2, result.stderr
    assert "cannot make its index folder" in result.stderr and "(from $EVALKIT_CACHE_DIR)" in result.stderr
    assert "set EVALKIT_CACHE_DIR to a folder that can be written" in result.stderr, result.stderr
