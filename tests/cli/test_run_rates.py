"""One run, one pass rate: an incomplete prompt run (some cases errored) shows the same rate, over
its scored cases with the errored ones counted apart, in ``run``, ``show``, ``history``,
``report`` and their ``--json`` documents (:mod:`evalkit.run_figures`)."""

from __future__ import annotations

import json

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with


def _incomplete(evalkit_cli, project, answers: dict[str, str]) -> tuple[str, str, dict]:  # noqa: ANN001
    answer_with(project, answers)
    text = evalkit_cli("run", "arith.basic")
    assert text.code == 3, text.stderr
    document = evalkit_cli("run", "arith.basic", "--json")
    assert document.code == 3, document.stderr
    return text.stdout, document.json()["run_id"], document.json()


def test_an_incomplete_prompt_run_shows_one_pass_rate_in_every_command(evalkit_cli, project) -> None:
    # 6 cases: 2 errored, 1 failed, 3 passed. `run` printed "50.0% (3/6)" and so did `show`,
    # `history` and the reports: the errored cases counted as failures in the denominator, while
    # the verdict counts them apart (the run is incomplete, not compared).
    answers = {k: v for k, v in ARITH_GOOD.items() if k not in ("json-sum", "times-table")}
    answers["add-2-2"] = "5"
    ran, run_id, document = _incomplete(evalkit_cli, project, answers)
    assert "Status:     incomplete, 4 of 6 cases answered, 2 errored" in ran, ran
    assert "Pass rate:  75.0% (3/4)\n" in ran and "Mean score: 0.875\n" in ran, ran
    assert (document["scored"], document["errored"], document["pass_rate"], document["mean_score"]) == (4, 2, 0.75, 0.875)

    shown = evalkit_cli("show", run_id).stdout
    assert "Status:     incomplete, 4 of 6 cases answered, 2 errored" in shown and "Pass rate:  75.0% (3/4)\n" in shown, shown
    assert evalkit_cli("show", run_id, "--json").json()["pass_rate"] == 0.75

    history = evalkit_cli("history", "arith.basic").stdout
    row = next(line for line in history.splitlines() if line.startswith("20") and run_id in line)
    assert "75.0%" in row and "0.875" in row and "50.0%" not in history, history
    series = evalkit_cli("history", "arith.basic", "--json").json()
    assert {r["run_id"]: r["pass_rate"] for r in series["runs"]}[run_id] == 0.75

    markdown = evalkit_cli("report", run_id, "--format", "markdown").stdout
    assert "4 of 6 cases answered, 2 errored" in markdown and "| Pass rate | — | 75.0% | — |" in markdown, markdown
    report = project / "report.json"
    assert evalkit_cli("report", run_id, "--format", f"json:{report}").code == 3
    figures = {f["key"]: f["value"] for f in json.loads(report.read_text())["figures"]}
    assert figures == {"pass_rate": 0.75, "mean_score": 0.875}


def test_a_run_whose_every_case_errored_says_none_answered_and_no_rate(evalkit_cli, project) -> None:
    # The markdown report said "6 of 6 cases answered" and every command "Pass rate: 0.0% (0/6)":
    # a model that failed every case, where none was asked successfully.
    ran, run_id, document = _incomplete(evalkit_cli, project, {"no-such-case": "4"})
    assert "Status:     incomplete, 0 of 6 cases answered, 6 errored" in ran and "Pass rate:  none scored\n" in ran, ran
    assert document["scored"] == 0 and document["errored"] == 6
    shown = evalkit_cli("show", run_id).stdout
    assert "0 of 6 cases answered, 6 errored" in shown and "Pass rate:  none scored\n" in shown, shown
    row = next(line for line in evalkit_cli("history", "arith.basic").stdout.splitlines() if run_id in line)
    assert "0.0%" not in row and "—" in row, row
    markdown = evalkit_cli("report", run_id, "--format", "markdown").stdout
    assert "0 of 6 cases answered, 6 errored" in markdown and "| Pass rate | — | — | — |" in markdown, markdown
    assert evalkit_cli("report", run_id, "--format", "html", "-o", "r.html").code == 3
    assert "incomplete, 0 of 6 cases answered, 6 errored" in (project / "r.html").read_text()
    # the viewer's run page said "6 of 6 answered, 6 errored" too
    from evalkit.view import create_app
    from evalkit.view.urls import run_url
    from starlette.testclient import TestClient

    app = create_app(f"sqlite:///{project / '.evalkit' / 'results.db'}", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        page = client.get(run_url(run_id)).text
    assert 'id="run-status">incomplete, 0 of 6 cases answered, 6 errored</dd>' in page, page
