"""A run of a few thousand cases end to end: the CLI keeps no case list (the store counts the run,
matches it with its baseline a page at a time and streams the cases it prints), and gives exactly
the aggregates, verdict and case lists that whole runs read back from the store give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit.storage import open_repository
from evalkit.tolerance import Tolerances
from evalkit.verdict import compare
from evalkit.wording import arguments_named

from tests.cli.stored_runs_helpers import answer_with
from tests.cli.test_set_versions import cli, sets_file, write_sets  # noqa: F401 - fixtures

SIZE = 2500


def prompts(size: int, *, edited: frozenset[int] = frozenset()) -> list[dict]:
    return [
        {"id": f"p{i:05d}", "prompt": f"Say token-{i}" + (" (edited)" if i in edited else ""), "contains": f"token-{i}"}
        for i in range(size)
    ]


@pytest.mark.slow
def test_a_large_run_gives_the_verdict_of_whole_runs(cli, project: Path, sets_file: Path) -> None:  # noqa: F811
    write_sets(sets_file, prompts(SIZE))
    # 1 in 10 fails in the baseline
    answer_with(project, {f"p{i:05d}": f"token-{i}" if i % 10 else "nope" for i in range(SIZE)})
    first = cli("run", "versioned.prompts", "--json")
    assert first.code == 0, first.stderr
    baseline = first.json()
    assert baseline["passed"] == SIZE - SIZE // 10 and baseline["verdict"]["state"] == "baseline"
    assert len(baseline["cases"]) == SIZE and baseline["accepted"] is not None

    # The set changes (the last 100 removed, 50 added, 20 edited) and 1 in 7 of the kept cases flips to failing.
    edited = frozenset(range(1000, 1020))
    changed = prompts(SIZE - 100, edited=edited) + [{"id": f"n{i}", "prompt": f"Say new-{i}", "contains": f"new-{i}"} for i in range(50)]
    write_sets(sets_file, changed)
    answers = {f"p{i:05d}": "nope" if i % 7 == 0 else f"token-{i}" for i in range(SIZE - 100)}
    answers.update({f"n{i}": f"new-{i}" if i % 2 else "nope" for i in range(50)})
    answer_with(project, answers)
    second = cli("run", "versioned.prompts", "--json", "--max-pass-rate-drop", "0.01")
    assert second.code == 0, second.stderr
    document = second.json()

    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        run = repository.get_run(document["run_id"])
        base = repository.get_run(baseline["run_id"])
    finally:
        repository.close()
    whole = compare(run, base, Tolerances.parse("0.01", "0.1"))
    assert (document["answered"], document["passed"], document["errored"]) == (run.answered_count, run.passed_count, run.errored_count)
    assert document["mean_score"] == pytest.approx(sum(c.score for c in run.cases) / len(run.cases))
    verdict = document["verdict"]
    assert verdict["reason"] == whole.summary()
    assert verdict["regressed"] == whole.regressed
    assert verdict["state"] == ("regressed" if whole.regressed else "no_regression") and verdict["baseline_id"] == base.id
    assert [c["id"] for c in document["cases"]] == [c.case_id for c in run.cases]
    assert len(whole.removed_cases) == 100 and len(whole.added_cases) == 50 and len(whole.edited_cases) == 20
    with arguments_named():  # the command line's document: its noise warnings name --repeats, not repeats=
        expected = _comparison_document(whole, verdict)
    assert json.dumps(verdict, sort_keys=True) == json.dumps(expected, sort_keys=True)

    # The terminal table lists the failed cases only, and counts the passing ones from the aggregates.
    table = cli("run", "versioned.prompts", "--max-pass-rate-drop", "0.01")
    assert table.code == 0, table.stderr
    failing = [c for c in document["cases"] if not c["passed"]]
    listed = [line.split()[0] for line in table.stdout.splitlines() if " FAIL " in f" {line} " and not line.startswith("  - ")]
    assert listed == [c["id"] for c in failing]
    assert f"{len(document['cases']) - len(failing)} passing cases are not listed" in table.stdout

    # `evalkit show` reads the stored run a page at a time: the same document, every case in order,
    # and by default a table of the failed cases only.
    shown = cli("show", document["run_id"], "--json")
    assert shown.code == 0, shown.stderr
    assert "\n" not in shown.stdout.rstrip("\n"), "a large run's document is written compact, case by case"
    shown_document = shown.json()
    assert shown_document["cases"] == document["cases"]
    assert shown_document["verdict"]["state"] == ("regressed" if verdict["regressed"] else "no_regression")
    assert list(shown_document)[-3:] == ["cases", "verdict", "accepted"]
    shown_table = cli("show", document["run_id"])
    assert shown_table.code == 0, shown_table.stderr
    shown_listed = [line.split()[0] for line in shown_table.stdout.splitlines() if " FAIL " in f" {line} "]
    assert shown_listed == [c["id"] for c in failing]
    assert f"{len(document['cases']) - len(failing)} passing cases are not listed (--show-all lists every case)." in shown_table.stdout
    # `evalkit compare` lets the store match the two runs a page at a time: the same lists as whole runs.
    compared = cli("compare", base.id, run.id, "--json", "--max-pass-rate-drop", "0.01")
    assert compared.code == 0, compared.stderr
    lists = compared.json()["cases"]
    assert lists["regressed"] == list(whole.regressed_cases) and lists["fixed"] == list(whole.fixed_cases)
    assert lists["added"] == list(whole.added_cases) and lists["removed"] == list(whole.removed_cases)
    assert lists["edited"] == [e.case_id for e in whole.edited_cases]
    assert compared.json()["regressed"] == whole.regressed and compared.json()["mcnemar_p"] == whole.mcnemar_p

    every = cli("show", document["run_id"], "--show-all")
    assert sum(1 for line in every.stdout.splitlines() if line.startswith(("p0", "n"))) == len(document["cases"])


def _comparison_document(comparison, verdict: dict) -> dict:
    from evalkit.cli.comparison_view import comparison_document

    expected = dict(verdict)
    expected.update(comparison_document(comparison))
    return expected
