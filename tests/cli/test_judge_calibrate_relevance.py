"""``evalkit judge calibrate`` of the relevance judge on calibration sets made from qrels
(``[calibration_sets."beir.NAME"]``), end to end: the judge an ``openai`` instance pointed at the
local chat-completions server, scripted grades; a small collection made here, then Cranfield
(graded) and SciFact (binary), read from outside the repository and skipped when absent."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from evalkit.catalog import calibration_set_catalog
from evalkit.config import load_config
from sklearn.metrics import cohen_kappa_score

from tests.plugins.judge_support import JUDGE_MODEL, user_message
from tests.plugins.test_qrels_calibration import beir_folder
from tests.support.chat_server import ChatServer
from tests.support.datasets import dataset
from tests.support.providers import openai_provider_table


def write_project(project: Path, judge_url: str, tables: str, allow: Path | None = None) -> None:
    outside = f'[sets]\nallow_outside = ["{allow}"]\n\n' if allow is not None else ""
    (project / "evalkit.toml").write_text(
        'judge = "judge"\n\n' + outside + tables + f"""
{openai_provider_table('judge', judge_url, 'judge-alias')}""",
        encoding="utf-8",
    )


def pair_of(body: Mapping[str, Any]) -> tuple[str, str]:
    message = user_message(body)
    query = message.split("QUERY\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    document = message.split("DOCUMENT\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    return query, document


def grading(grades: Mapping[tuple[str, str], int]) -> Callable[[Mapping[str, Any]], str]:
    """Reply with the grade ``grades`` gives the (query, document) in the request."""
    return lambda body: json.dumps({"reason": "Scripted.", "grade": grades[pair_of(body)]})


def items_of(project: Path, identifier: str) -> list[Any]:
    return list(calibration_set_catalog(config=load_config(project / "evalkit.toml")).get(identifier).set.items)


def calibrate(evalkit_cli: Callable[..., Any], identifier: str, *args: str) -> Any:
    return evalkit_cli("judge", "calibrate", "--set", identifier, *args)


def test_a_binary_set_is_met_from_grade_two_and_the_record_is_stored(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    chat_server.model = JUDGE_MODEL
    beir_folder(project / "col", {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}})
    write_project(project, chat_server.base_url, '[calibration_sets."beir.col"]\npath = "col"\nunjudged = 3\n')
    items = items_of(project, "beir.col")
    # A relevant pair graded 2 or 3 and an unjudged one 0 or 1: the judge agrees with people.
    chat_server.responder = grading({(i.query, i.document): (2 + n % 2) if i.label else n % 2 for n, i in enumerate(items)})
    result = calibrate(evalkit_cli, "beir.col", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["grader"] == "relevance" and document["labels"] == [0, 1]
    assert (document["n"], document["kappa"]) == (6, 1.0)
    assert document["judge"]["yardstick"] == f"relevance:judge:{JUDGE_MODEL}:v1"
    shown = evalkit_cli("judge", "show", "--json")
    assert shown.code == 0, shown.stderr
    assert "beir.col" in shown.stdout and f"relevance:judge:{JUDGE_MODEL}:v1" in shown.stdout


def test_cranfield_graded_kappa_is_quadratic_weighted(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    cranfield = dataset("cranfield", "beir/corpus.jsonl", "original/cranqrel")
    chat_server.model = JUDGE_MODEL
    tables = (
        f'[calibration_sets."beir.cranfield"]\npath = "{cranfield / "beir"}"\nqrels = "{cranfield / "original" / "cranqrel"}"\n'
        'grades = { "1" = 3, "2" = 2, "3" = 1, "4" = 1 }\nexclude_grades = [-1]\nmax_items = 40\nseed = 5\n'
    )
    write_project(project, chat_server.base_url, tables, allow=cranfield)
    items = items_of(project, "beir.cranfield")
    assert len(items) == 40
    # The judge is one grade off on every third item.
    judged = {(i.query, i.document): (i.label if n % 3 else min(3, i.label + 1)) for n, i in enumerate(items)}
    chat_server.responder = grading(judged)
    result = calibrate(evalkit_cli, "beir.cranfield", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["labels"] == [0, 1, 2, 3] and document["kappa_weights"] == "quadratic"
    people = [i.label for i in items]
    assert document["kappa"] == pytest.approx(cohen_kappa_score(people, [judged[(i.query, i.document)] for i in items], weights="quadratic"))
    table = calibrate(evalkit_cli, "beir.cranfield")
    assert table.code == 0 and "Kappa:" in table.stdout


def test_scifact_binary_kappa_is_unweighted(chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]) -> None:
    scifact = dataset("scifact", "corpus.jsonl", "qrels/test.tsv")
    chat_server.model = JUDGE_MODEL
    write_project(project, chat_server.base_url, f'[calibration_sets."beir.scifact"]\npath = "{scifact}"\nmax_items = 30\n', allow=scifact)
    items = items_of(project, "beir.scifact")
    chat_server.responder = grading({(i.query, i.document): 3 for i in items})  # a judge that finds everything relevant
    document = calibrate(evalkit_cli, "beir.scifact", "--json").json()
    assert document["labels"] == [0, 1] and document["kappa"] == 0.0 and document["judge_positive_rate"] == 1.0
