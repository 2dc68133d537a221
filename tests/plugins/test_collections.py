"""The built-in ``evalkit.collections`` provider: BEIR folders and TREC files declared in configuration."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from evalkit.config import load_config
from evalkit.errors import ConfigError
from evalkit.options import provider_table
from evalkit.questions import QuestionForm
from evalkit.registry import PluginRecord
from evalkit_plugins.collections import CollectionSets, read_qrels, read_queries


def beir_folder(root: Path, qrels: str, split: str = "test") -> Path:
    (root / "qrels").mkdir(parents=True)
    docs = [{"_id": "d1", "title": "Zebra", "text": "stripes"}, {"_id": "d2", "title": "", "text": "lions roar"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": "q2", "text": "why do lions roar"}, {"_id": "q1", "text": "zebra stripes"}, {"_id": "q9", "text": "unjudged"}]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (root / "qrels" / f"{split}.tsv").write_text(qrels)
    return root


def provider(tmp_path: Path, toml: str) -> CollectionSets:
    """The provider as evalkit builds it from the configuration in ``tmp_path``."""
    (tmp_path / "evalkit.toml").write_text(toml)
    config = load_config(cwd=tmp_path)
    record = PluginRecord("evalkit.question_sets", "evalkit.collections", "evalkit_plugins.collections:CollectionSets", "evalkit-golden", "0")
    _, options = provider_table(record, CollectionSets, config)
    sets = CollectionSets(**options)
    sets.bind_config(config)
    return sets


def test_unconfigured_it_ships_nothing() -> None:
    assert CollectionSets().golden_question_sets() == []


def test_a_beir_folder_becomes_a_set_of_its_judged_queries_in_file_order(tmp_path) -> None:
    beir_folder(tmp_path / "col", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\nq2\td1\t0\n")
    sets = provider(tmp_path, '[question_sets."beir.col"]\npath = "col"\n').golden_question_sets()
    [question_set] = sets
    assert question_set.identifier == "beir.col" and question_set.name == "beir.col"
    assert [q.id for q in question_set.questions] == ["q2", "q1"]  # queries.jsonl order; q9 has no judgement
    q2, q1 = question_set.questions
    assert q2.judgements() == {"d2": 2, "d1": 0} and q2.grades == (2, 0)
    assert q1.expected_document_ids == ("d1",) and q1.grades is None  # all grades 1: stored ungraded
    assert {q.form for q in question_set.questions} == {QuestionForm.UNSPECIFIED}


def test_trec_topics_and_qrels(tmp_path) -> None:
    (tmp_path / "topics.txt").write_text(
        "<top>\n<num> Number: 301\n<title> Topic: international organized crime\n<desc> Description:\nlong\n</top>\n"
        "<top>\n<num> Number: 302\n<title> poliomyelitis and post-polio\n\n<desc>\nx\n</top>\n"
    )
    (tmp_path / "qrels.txt").write_text("301 0 FBIS-1 1\n301 0 FBIS-2 -1\n302 0 LA-9 3\n")
    (tmp_path / "corpus.jsonl").write_text("")
    toml = '[question_sets."trec.robust"]\nformat = "trec"\ntopics = "topics.txt"\nqrels = "qrels.txt"\ncorpus = "corpus.jsonl"\nname = "Robust"\n'
    [question_set] = provider(tmp_path, toml).golden_question_sets()
    assert question_set.name == "Robust"
    assert [(q.id, q.question, q.judgements()) for q in question_set.questions] == [
        ("301", "international organized crime", {"FBIS-1": 1, "FBIS-2": -1}),
        ("302", "poliomyelitis and post-polio", {"LA-9": 3}),
    ]


def test_a_query_line_nested_too_deeply_is_not_json_naming_its_line(tmp_path) -> None:
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "ok"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match=r"queries.jsonl, line 2: not JSON \(nested too deeply\)"):
        read_queries(tmp_path / "queries.jsonl")


def test_tab_separated_topics(tmp_path) -> None:
    (tmp_path / "topics.tsv").write_text("1\tfirst question\n2\tsecond one\n")
    assert read_queries(tmp_path / "topics.tsv") == {"1": "first question", "2": "second one"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("queries.jsonl", '{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "b"}\n{"_id": "q1", "text": "c"}\n', "queries.jsonl, line 3: query 'q1' is given twice"),
        ("topics.tsv", "1\tfirst\n1\tagain\n", "topics.tsv, line 2: query '1' is given twice"),
        ("topics.txt", "<top><num> Number: 7 <title> one </top>\n<top><num> Number: 7 <title> two </top>\n", "topics.txt: query '7' is given twice"),
    ],
)
def test_a_query_id_given_twice_is_refused_in_every_format(tmp_path, name, text, message) -> None:
    # the second text replaced the first, and nothing said so
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        read_queries(tmp_path / name)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ("q1 d1\n", "line 1: expected 'query doc grade'"),
        ("q1 0 d1 1\nq1 0 d1 2\n", 'line 2: document "d1" is judged twice for query "q1"'),
        ("q1 0 d1 1\nq1 0 d2 high\n", "line 2: the grade must be an integer"),
        # str.isdigit() takes these; int() refused the first (a ValueError naming no file) and the second
        ("q1 0 d1 1\nq1 0 d2 ²\n", "line 2: the grade must be an integer, got '²'"),
        ("q1 0 d1 1\nq1 0 d2 +-3\n", "line 2: the grade must be an integer, got '\\+-3'"),
    ],
)
def test_bad_qrels_name_the_file_and_line(tmp_path, qrels, message) -> None:
    (tmp_path / "qrels.txt").write_text(qrels)
    with pytest.raises(ConfigError, match=message):
        read_qrels(tmp_path / "qrels.txt")


def test_bad_configuration_says_what_is_wrong(tmp_path) -> None:
    beir_folder(tmp_path / "col", "q1\td1\t1\nq7\td1\t1\n")
    cases = {
        '[question_sets."a.b"]\nsplit = "test"\n': 'path = "…" (a path) is required',
        '[question_sets."a.b"]\npath = "nowhere"\n': "does not exist",
        '[question_sets."a.b"]\npath = "col"\nsplit = "dev"\n': "dev.tsv does not exist",
        '[question_sets."a.b"]\npath = "col"\nformat = "csv"\n': 'format must be "beir" or "trec"',
        '[question_sets."a.b"]\npath = "col"\nsplitt = "test"\n': 'no option "splitt"',
        '[question_sets."a.b"]\npath = "col"\ntopics = "col/queries.jsonl"\n': 'key topics not read for format = "beir"',
        '[question_sets."a.b"]\npath = "col"\nsplit = "../x"\n': "split must name a file of the folder's qrels/",
        '[question_sets."a.b"]\npath = "col"\n': "judges 1 quer(y/ies)",
    }
    for toml, message in cases.items():
        # an invalid option is refused as the table is read, a bad file as the set is: either fails that set only
        try:
            built = provider(tmp_path, toml)
        except ConfigError as exc:
            problems = [str(exc)]
        else:
            assert built.golden_question_sets() == []
            problems = built.refused_sets()
        assert len(problems) == 1 and message in problems[0] and '[question_sets."a.b"]' in problems[0], (toml, problems)


def test_the_files_a_beir_folder_lacks_or_disagrees_on_are_named_as_every_path_is(tmp_path) -> None:
    """The missing qrels file and the two files that disagree were printed raw: a folder ``my
    col`` read as two words, a line break in its name as a line of its own. They are named by
    ``wording.path_named``, as every other path of this provider's messages is."""
    folder = beir_folder(tmp_path / "my col", "q1\td1\t1\nq7\td1\t1\n")
    missing = provider(tmp_path, '[question_sets."a.b"]\npath = "my col"\nsplit = "dev"\n')
    assert missing.golden_question_sets() == []
    (problem,) = missing.refused_sets()
    assert f'"{folder}/qrels/dev.tsv" does not exist' in problem, problem
    disagreeing = provider(tmp_path, '[question_sets."a.b"]\npath = "my col"\n')
    assert disagreeing.golden_question_sets() == []
    (problem,) = disagreeing.refused_sets()
    assert f'"{folder}/qrels/test.tsv" judges 1 quer(y/ies) "{folder}/queries.jsonl" does not have' in problem, problem


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ("queries.jsonl", "queries.jsonl, line 2: query 'q1' is given twice"),
        ("qrels", "test.tsv, line 2: the grade must be an integer, got 'x'"),
    ],
)
def test_a_bad_queries_or_qrels_line_names_the_configuration_table_and_the_file(
    evalkit_cli, project, broken, problem
) -> None:
    # a reader of the table's files named the file alone: with several tables in one
    # configuration, nothing said which set (or which configuration) it was
    col = beir_folder(project / "col", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    if broken == "qrels":
        (col / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tx\n")
    else:
        (col / "queries.jsonl").write_text('{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n')
    (project / "evalkit.toml").write_text('[question_sets."beir.col"]\npath = "col"\n')
    result = evalkit_cli("validate", "beir.col")
    assert result.code == 2, result.stderr
    where = f'{project / "evalkit.toml"} [question_sets."beir.col"]: {col}'
    assert where in result.stderr and problem in result.stderr, result.stderr
