"""``evalkit.qrels``: a collection's qrels as calibration sets of the relevance judge — judged pairs
with their human grade, a seeded sample of unjudged pairs as 0, binary or graded labels.

Built on small collections made here, then on the real ones (Cranfield's original graded
``cranqrel``, SciFact's binary BEIR qrels), read from outside the repository and skipped when absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from evalkit.calibration import calibration_set_problems
from evalkit.catalog import calibration_set_catalog
from evalkit.config import load_config
from evalkit.errors import ConfigError

from tests.support.datasets import dataset


def beir_folder(root: Path, qrels: dict[str, dict[str, int]], documents: int = 12) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": f"T{i}", "text": f"text {i}"}) + "\n" for i in range(documents)))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": f"query {q}"}) + "\n" for q in qrels))
    rows = [f"{q}\t{d}\t{g}" for q, judged in qrels.items() for d, g in judged.items()]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    return root


def calibration_sets(project: Path, tables: str, allow: Path | None = None) -> dict:
    outside = f'[sets]\nallow_outside = ["{allow}"]\n\n' if allow is not None else ""
    (project / "evalkit.toml").write_text(outside + tables)
    catalog = calibration_set_catalog(config=load_config(project / "evalkit.toml"))
    for failure in catalog.failures:
        raise ConfigError(failure.error)
    return {i: catalog.get(i).set for i in catalog.identifiers()}


def test_binary_qrels_give_binary_labels_every_judged_pair_and_a_seeded_unjudged_sample(project: Path) -> None:
    beir_folder(project / "col", {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}})
    sets = calibration_sets(project, '[calibration_sets."beir.col"]\npath = "col"\nunjudged = 4\nseed = 3\n')
    calibration = sets["beir.col"]
    assert calibration.grader == "relevance" and calibration.labels == (0, 1)
    assert calibration_set_problems(calibration) == []
    judged = {i.id: i.label for i in calibration.items[:3]}
    assert judged == {"q1/d1": 1, "q1/d2": 1, "q2/d3": 1}
    unjudged = calibration.items[3:]
    assert len(unjudged) == 4 and all(i.label == 0 for i in unjudged)
    assert not {i.id for i in unjudged} & {"q1/d1", "q1/d2", "q2/d3"}
    first = calibration.items[0]
    assert first.query == "query q1" and first.document == "T1\n\ntext 1"
    assert "3 judged pairs and 4 unjudged pairs labelled 0 (seed 3)" in calibration.description
    again = calibration_sets(project, '[calibration_sets."beir.col"]\npath = "col"\nunjudged = 4\nseed = 3\n')["beir.col"]
    assert again.items == calibration.items
    other = calibration_sets(project, '[calibration_sets."beir.col"]\npath = "col"\nunjudged = 4\nseed = 4\n')["beir.col"]
    assert other.items[3:] != calibration.items[3:]


def test_graded_qrels_give_the_judges_scale_and_a_mapping_orders_them(project: Path) -> None:
    beir_folder(project / "col", {"q1": {"d1": 1, "d2": 4, "d3": -1}, "q2": {"d4": 2, "d5": 3}})
    tables = (
        '[calibration_sets."beir.col"]\npath = "col"\nunjudged = 0\n'
        'grades = { "1" = 3, "2" = 2, "3" = 1, "4" = 1 }\nexclude_grades = [-1]\n'
    )
    calibration = calibration_sets(project, tables)["beir.col"]
    assert calibration.labels == (0, 1, 2, 3)
    assert {i.id: i.label for i in calibration.items} == {"q1/d1": 3, "q1/d2": 1, "q2/d4": 2, "q2/d5": 1}


def test_a_grade_without_a_label_is_named(project: Path) -> None:
    beir_folder(project / "col", {"q1": {"d1": 1, "d3": -1}})
    with pytest.raises(ConfigError, match=r"qrels grade -1 has no label: map it with grades = \{ \"-1\" = <0..3> \} or leave its pairs out with exclude_grades = \[-1\]"):
        calibration_sets(project, '[calibration_sets."beir.col"]\npath = "col"\n')


def test_max_items_keeps_a_seeded_sample(project: Path) -> None:
    beir_folder(project / "col", {f"q{n}": {f"d{n}": 1} for n in range(10)})
    calibration = calibration_sets(project, '[calibration_sets."beir.col"]\npath = "col"\nmax_items = 7\n')["beir.col"]
    assert len(calibration.items) == 7
    assert sum(i.label == 1 for i in calibration.items) + sum(i.label == 0 for i in calibration.items) == 7


def test_a_missing_qrels_file_is_named(project: Path) -> None:
    beir_folder(project / "col", {"q1": {"d1": 1}})
    with pytest.raises(ConfigError, match=r"qrels/dev\.tsv does not exist"):
        calibration_sets(project, '[calibration_sets."beir.col"]\npath = "col"\nsplit = "dev"\n')


def test_trec_files_are_read_too(project: Path) -> None:
    folder = beir_folder(project / "col", {"q1": {"d1": 1}})
    (project / "topics.txt").write_text("q1\tflutter of wings\n")
    (project / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 0\n")
    tables = f'[calibration_sets."trec.col"]\nformat = "trec"\ntopics = "topics.txt"\nqrels = "qrels.txt"\ncorpus = "{folder / "corpus.jsonl"}"\nunjudged = 1\n'
    calibration = calibration_sets(project, tables)["trec.col"]
    assert calibration.labels == (0, 1, 2, 3)
    assert [(i.id, i.label) for i in calibration.items[:2]] == [("q1/d1", 2), ("q1/d2", 0)]
    assert calibration.items[0].query == "flutter of wings"


CRANFIELD_GRADES = '{ "1" = 3, "2" = 2, "3" = 1, "4" = 1 }'


def test_cranfield_original_codes_run_the_other_way_and_are_mapped_on_zero_to_three(project: Path) -> None:
    cranfield = dataset("cranfield", "beir/corpus.jsonl", "original/cranqrel")
    tables = (
        f'[calibration_sets."beir.cranfield"]\npath = "{cranfield / "beir"}"\nqrels = "{cranfield / "original" / "cranqrel"}"\n'
        f"grades = {CRANFIELD_GRADES}\nexclude_grades = [-1]\nunjudged = 225\n"
    )
    calibration = calibration_sets(project, tables, allow=cranfield)["beir.cranfield"]
    assert calibration.labels == (0, 1, 2, 3) and calibration_set_problems(calibration) == []
    labels = Counter(i.label for i in calibration.items)
    # cranqrel: code 1 (a complete answer) x128, 2 x387, 3 x734, 4 (minimum interest) x363; -1 x225 left out;
    # one judged document is empty in the corpus and left out.
    assert labels[3] == 128 and labels[2] == 387 and labels[1] + 1 == 734 + 363 and labels[0] == 225
    assert "1 judged document the corpus lacks or holds empty left out" in calibration.description
    # Query 1's source paper (doc 486, code -1) is neither judged nor sampled.
    assert "1/486" not in {i.id for i in calibration.items}
    complete = next(i for i in calibration.items if i.label == 3)
    assert complete.query and complete.document


def test_scifact_is_binary(project: Path) -> None:
    scifact = dataset("scifact", "corpus.jsonl", "qrels/test.tsv")
    calibration = calibration_sets(project, f'[calibration_sets."beir.scifact"]\npath = "{scifact}"\n', allow=scifact)["beir.scifact"]
    assert calibration.labels == (0, 1) and calibration_set_problems(calibration) == []
    labels = Counter(i.label for i in calibration.items)
    assert labels == {1: 339, 0: 300}  # 339 judged pairs; one unjudged pair per query (300 queries)
