"""The built-in ``evalkit.lexical`` retriever: corpus formats, the cached index, ranking, provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit.errors import ConfigError, RetrievalError
from evalkit.retrieval.provenance import validate_provenance
from evalkit_plugins.lexical import LexicalOptions, LexicalRetriever, default_index_dir, query_terms

DOCS = [
    {
        "id": "json.loads",
        "title": "json.loads",
        "text": "Deserialize a str instance containing a JSON document to a Python object.",
    },
    {"id": "json.dumps", "title": "json.dumps", "text": "Serialize a Python object to a JSON formatted str."},
    {
        "id": "csv.reader",
        "title": "csv.reader",
        "text": "Return a reader object which will iterate over lines in the given CSV file.",
    },
    {
        "id": "shutil.copy",
        "title": "shutil.copy",
        "text": "Copy data and mode bits. The destination may be a directory.",
    },
    {"id": "time.sleep", "title": "time.sleep", "text": "Delay execution for a given number of seconds."},
]


def ids(results: list[tuple[str, float]]) -> list[str]:
    """The document ids of a lexical result list, best first (it returns (id, BM25 score) pairs)."""
    return [doc_id for doc_id, _ in results]


def write_jsonl(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", DOCS)


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "indexes"


def test_ranking_sanity_on_a_tiny_corpus(corpus, index_dir):
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    assert ids(r.retrieve("How do I deserialize a JSON document?", 3))[0] == "json.loads"
    assert ids(r.retrieve("copy a file into a directory", 3))[0] == "shutil.copy"
    assert ids(r.retrieve("iterate over the lines of a CSV file", 3))[0] == "csv.reader"
    assert ids(r.retrieve("wait a few seconds", 5)) == ["time.sleep"]
    assert ids(r.retrieve("unrelated zebra question", 5)) == []


def test_porter_stemming_and_diacritics(corpus, index_dir):
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    assert ids(r.retrieve("delaying executions", 1)) == ["time.sleep"]
    assert ids(r.retrieve("SERIALIZE", 5))[0] == "json.dumps"
    assert ids(r.retrieve("délay", 1)) == ["time.sleep"]


def test_limit_is_respected(corpus, index_dir):
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    assert len(ids(r.retrieve("a JSON str object file", 2))) == 2
    assert len(ids(r.retrieve("a JSON str object file", 100))) == 3
    assert ids(r.retrieve("JSON", 0)) == []


@pytest.mark.parametrize("question", ["", " ", "j", "the", "What is it? Is it this or that?"])
def test_questions_without_searchable_terms_return_nothing(corpus, index_dir, question):
    assert ids(LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).retrieve(question, 10)) == []


@pytest.mark.parametrize(
    "question", ['json "dumps', "NEAR(json csv)", "json AND NOT csv", "json*", "^json", "title:json", "json -csv {x}"]
)
def test_fts5_syntax_in_questions_is_plain_text(corpus, index_dir, question):
    assert "json.dumps" in ids(LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).retrieve(question, 10))


def test_query_terms_drop_stopwords_and_repeats():
    assert query_terms("How is THE json, the JSON and json_dumps?") == ["how", "json", "dumps"]


def test_ties_keep_corpus_order(tmp_path, index_dir):
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": f"d{i}", "text": "same words here"} for i in range(5)])
    assert ids(LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).retrieve("same words", 10)) == [
        f"d{i}" for i in range(5)
    ]


def test_title_weight_moves_title_matches(tmp_path, index_dir):
    docs = [
        {"id": "in-title", "title": "zebra", "text": "alpha beta gamma"},
        {"id": "in-body", "title": "delta", "text": "zebra beta gamma"},
    ]
    corpus = write_jsonl(tmp_path / "c.jsonl", docs)
    assert ids(LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir, title_weight=5)).retrieve("zebra", 2)) == [
        "in-title",
        "in-body",
    ]
    assert (
        ids(LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir, title_weight=0)).retrieve("zebra", 2))[0]
        == "in-body"
    )


# --- the cached index ---------------------------------------------------------------------------


def test_index_is_built_once_and_reused(corpus, index_dir):
    first = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).prepare()
    assert first.built and first.documents == len(DOCS)
    again = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).prepare()
    assert not again.built
    assert again.path == first.path and again.corpus_sha256 == first.corpus_sha256
    assert [p.name for p in index_dir.iterdir()] == [first.path.name]


def test_a_changed_corpus_gets_a_new_index_and_the_stale_one_goes(corpus, index_dir):
    before = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    old = before.prepare()
    old_revision = before.provenance().corpus_revision
    write_jsonl(corpus, DOCS + [{"id": "zipfile.ZipFile", "text": "Open a ZIP archive."}])
    after = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    new = after.prepare()
    assert new.built and new.path != old.path and new.documents == len(DOCS) + 1
    assert after.provenance().corpus_revision != old_revision
    assert ids(after.retrieve("open a zip archive", 1)) == ["zipfile.ZipFile"]
    assert not old.path.exists()
    assert [p.name for p in index_dir.iterdir()] == [new.path.name]


def test_a_retriever_keeps_the_index_it_declared(corpus, index_dir):
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    declared = r.provenance()
    ids(r.retrieve("json", 1))
    write_jsonl(corpus, DOCS[:1])
    assert r.provenance() == declared
    assert len(ids(r.retrieve("a JSON str object file", 10))) == 3


def test_corpus_that_changes_while_indexed_is_refused(corpus, index_dir):
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    r._sha256 = "0" * 64  # what the corpus hashed to when provenance was declared
    with pytest.raises(RetrievalError, match="changed while it was being indexed"):
        r.prepare()
    assert list(index_dir.iterdir()) == []


def test_a_corrupt_index_is_rebuilt(corpus, index_dir):
    path = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).prepare().path
    path.write_bytes(b"not a database")
    rebuilt = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    assert rebuilt.prepare().built
    assert ids(rebuilt.retrieve("deserialize json", 1)) == ["json.loads"]


def test_default_index_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    assert default_index_dir() == tmp_path / "cache" / "lexical"
    monkeypatch.delenv("EVALKIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_index_dir() == tmp_path / "xdg" / "evalkit" / "lexical"


# --- corpus formats -----------------------------------------------------------------------------


def test_folder_corpus_ids_are_relative_paths_without_suffix(tmp_path, index_dir):
    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "guides" / "install.md").write_text("# Install\nRun pip install to set up the package.", encoding="utf-8")
    (root / "faq.txt").write_text("Refunds take five working days.", encoding="utf-8")
    (root / "v1.2").mkdir()
    (root / "v1.2" / "notes.txt").write_text("Release notes for the refund feature.", encoding="utf-8")
    (root / ".git" / "HEAD.txt").write_text("refund install", encoding="utf-8")
    (root / "image.png").write_bytes(b"refund install")
    r = LexicalRetriever(LexicalOptions(root, index_dir=index_dir))
    assert r.prepare().documents == 3
    assert ids(r.retrieve("how do I install the package", 5)) == ["guides/install"]
    assert set(ids(r.retrieve("refund", 5))) == {"faq", "v1.2/notes"}
    assert ids(r.retrieve("guides", 5)) == ["guides/install"]  # the path is searchable as the title


def test_folder_corpus_hash_covers_names_and_content(tmp_path, index_dir):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha", encoding="utf-8")
    first = LexicalRetriever(LexicalOptions(root, index_dir=index_dir)).provenance().corpus_revision
    (root / "a.txt").rename(root / "b.txt")
    renamed = LexicalRetriever(LexicalOptions(root, index_dir=index_dir)).provenance().corpus_revision
    (root / "b.txt").write_text("beta", encoding="utf-8")
    edited = LexicalRetriever(LexicalOptions(root, index_dir=index_dir)).provenance().corpus_revision
    assert len({first, renamed, edited}) == 3


def test_beir_layout_with_underscore_id_and_title(tmp_path, index_dir):
    docs = [
        {
            "_id": "4983",
            "title": "Microstructural development of newborn white matter",
            "text": "Diffusion tensor imaging.",
        },
        {"_id": "5836", "title": "Induction of myelodysplasia", "text": "Bone marrow failure in mice."},
    ]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", docs)
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    assert ids(r.retrieve("white matter development in newborns", 2))[0] == "4983"
    assert ids(r.retrieve("myelodysplasia", 2)) == ["5836"]


def test_numeric_ids_become_strings(tmp_path, index_dir):
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": 42, "text": "answer"}])
    assert ids(LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).retrieve("answer", 1)) == ["42"]


@pytest.mark.parametrize(
    "content,message",
    [
        ('{"id": "a", "text": "x"}\nnot json\n', "line 2: not JSON"),
        (
            '{"id": "a", "text": "x"}\n' + "[" * 100_000 + "]" * 100_000 + "\n",
            r"line 2: not JSON \(nested too deeply\)",
        ),
        ('["a", "x"]\n', "line 1: each line must be a JSON object"),
        ('{"text": "x"}\n', 'line 1: "id"'),
        ('{"id": "", "text": "x"}\n', 'line 1: "id"'),
        ('{"id": "a"}\n', 'line 1: "text"'),
        ('{"id": "a", "text": "x", "title": 3}\n', 'line 1: "text"'),
        (
            '{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n{"id": "a", "text": "z"}\n',
            r'line 3: document id "a" occurs twice \(first on line 1\)',
        ),
        (
            '{"id": "a", "text": "x", "id": "b"}\n',
            r'line 1: not JSON \(key "id" appears more than once\)',
        ),  # "b" was indexed, unsaid
        ("\n\n", "no documents"),
    ],
)
def test_malformed_corpora_are_configuration_errors(tmp_path, index_dir, content, message):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).prepare()
    assert not index_dir.exists() or list(index_dir.iterdir()) == []


def test_a_corpus_line_that_is_not_utf8_is_a_configuration_error_naming_it(tmp_path, index_dir):
    # It raised UnicodeDecodeError, which `evalkit retrieval` reported as an environment fault (exit 3).
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b'{"id": "a", "text": "x"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(ConfigError, match=r"c\.jsonl, line 2: not UTF-8 \(invalid continuation byte at byte 24\)"):
        LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).prepare()


def test_two_files_of_one_id_in_a_folder_corpus_are_named(tmp_path, index_dir):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "install.md").write_text("# Install", encoding="utf-8")
    (root / "install.txt").write_text("install", encoding="utf-8")
    with pytest.raises(ConfigError, match='document id "install" occurs twice \\("install.md" and "install.txt"\\)'):
        LexicalRetriever(LexicalOptions(root, index_dir=index_dir)).prepare()


def test_missing_corpus_and_bad_options_fail_at_construction(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        LexicalRetriever(LexicalOptions(tmp_path / "nowhere.jsonl"))
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "x"}\n', encoding="utf-8")
    for bad in (-1, float("nan"), float("inf"), "2", True):
        with pytest.raises(ConfigError, match="title_weight"):
            LexicalRetriever(LexicalOptions(tmp_path / "c.jsonl", title_weight=bad))


def test_nothing_is_read_at_construction(tmp_path, index_dir):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("not json\n", encoding="utf-8")
    LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    assert not index_dir.exists()


# --- provenance ---------------------------------------------------------------------------------


def test_provenance_declares_corpus_hash_and_lexical_pipeline(corpus, index_dir):
    r = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir))
    p = r.provenance()
    assert p.corpus_revision == f"sha256:{r.prepare().corpus_sha256[:16]}"
    assert (p.model_revision, p.chunking_identity, p.pipeline_identity) == (
        "not-applicable",
        "whole-document",
        "evalkit.lexical-fts5-bm25-v1",
    )
    assert p.execution_revision.startswith("sqlite-")
    assert validate_provenance(p) == []


def test_same_content_elsewhere_declares_the_same_corpus(corpus, tmp_path, index_dir):
    copy = write_jsonl(tmp_path / "copy.jsonl", DOCS)
    assert (
        LexicalRetriever(LexicalOptions(copy, index_dir=index_dir)).provenance()
        == LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).provenance()
    )


def test_results_carry_decreasing_bm25_scores(corpus, index_dir) -> None:
    results = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).retrieve("a JSON str object file", 10)
    scores = [score for _, score in results]
    assert len(results) == 3 and all(s > 0 for s in scores) and scores == sorted(scores, reverse=True)


def test_min_score_drops_weak_matches_so_nothing_can_come_back(corpus, index_dir) -> None:
    everything = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir)).retrieve("a JSON str object file", 10)
    middle = everything[1][1]
    floored = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir, min_score=middle)).retrieve(
        "a JSON str object file", 10
    )
    assert floored == everything[:2]
    above_all = LexicalRetriever(LexicalOptions(corpus, index_dir=index_dir, min_score=everything[0][1] + 1)).retrieve(
        "a JSON str object file", 10
    )
    assert above_all == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "3", True])
def test_min_score_must_be_a_finite_number(corpus, bad) -> None:
    with pytest.raises(ConfigError, match="min_score must be a finite number"):
        LexicalRetriever(LexicalOptions(corpus, min_score=bad))


def test_a_beir_folder_is_indexed_through_its_corpus_file(tmp_path, index_dir) -> None:
    folder = tmp_path / "collection"
    (folder / "qrels").mkdir(parents=True)
    write_jsonl(folder / "corpus.jsonl", [{"_id": "7", "title": "Zebra stripes", "text": "Why the animal is striped."}])
    (folder / "notes.txt").write_text("not a document of the collection")
    r = LexicalRetriever(LexicalOptions(folder, index_dir=index_dir))
    assert r.corpus == (folder / "corpus.jsonl").resolve()
    assert ids(r.retrieve("zebra", 5)) == ["7"]  # found through the title
    assert ids(r.retrieve("collection", 5)) == []
