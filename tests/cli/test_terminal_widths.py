"""Terminal output that fits: at 80 and 120 columns, every run id, case id and verdict that
history, show, compare, run and retrieval print appears whole (never truncated, never folded),
and no line is wider than the terminal. Sharded runs with long CI ids make the ids long."""

from __future__ import annotations

import re

import pytest

from tests.support.reports import HOSTILE_IDS, REPORT_PLUGINS, answer_hostile

SET = "reportkit.hostile"
WIDTHS = (80, 120)
LONG_ID = "gitlab-pipeline-123456789-shards-and-a-long-suffix-abcdef12"


@pytest.fixture
def cli(evalkit_cli, plugin_dists):  # noqa: ANN001, ANN201
    """``evalkit`` with the report test distribution installed, at a chosen terminal width."""
    base = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS, "evalkit-retrieval-fixtures")}

    def run(*args: str, columns: int = 200):  # noqa: ANN202
        return evalkit_cli(*args, env={**base, "COLUMNS": str(columns)})

    return run


def assert_fits(text: str, columns: int) -> None:
    from rich.text import Text

    widest = max((Text(line).cell_len for line in text.splitlines()), default=0)
    assert widest <= columns, f"a line is {widest} cells wide at {columns} columns:\n{text}"


def whole(text: str, word: str) -> bool:
    """``word`` appears with no character of it cut off or moved to another line."""
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


@pytest.fixture
def three_runs(cli, project) -> list[str]:  # noqa: ANN001
    """A baseline, an accepted run with a long id, and a regressed run, of the hostile set."""
    answer_hostile(project)
    ids = [cli("run", SET, "--provider", "app", "--json").json()["run_id"]]
    ids.append(cli("run", SET, "--provider", "app", "--run-id", LONG_ID, "--json").json()["run_id"])
    # As good as the first run, so not accepted by itself: accepted on purpose, to be the baseline.
    assert cli("baseline", "accept", LONG_ID, "--reason", "long ids").code == 0
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    ids.append(cli("run", SET, "--provider", "app", "--json").json()["run_id"])
    assert ids[1] == LONG_ID
    return ids


@pytest.mark.parametrize("columns", WIDTHS)
def test_history_keeps_every_run_id_and_verdict_whole(cli, three_runs, columns) -> None:
    result = cli("history", SET, columns=columns)
    assert result.code == 0, result.stderr
    out = result.stdout
    assert_fits(out, columns)
    for run_id in three_runs:
        assert whole(out, run_id), out
    for verdict in ("baseline", "ok", "REGRESSED"):
        assert whole(out, verdict), out
    assert "report-app-1 (app/app)" in out and "deterministic" in out  # identity and grader are not dropped


@pytest.mark.parametrize("columns", WIDTHS)
def test_show_and_compare_keep_case_ids_and_run_ids_whole(cli, three_runs, columns) -> None:
    shown = cli("show", three_runs[2], "--show-all", columns=columns)
    assert shown.code == 0, shown.stderr
    assert_fits(shown.stdout.split("\nAnswers")[0], columns)
    assert whole(shown.stdout, three_runs[2]) and whole(shown.stdout, LONG_ID)
    for case_id in HOSTILE_IDS:
        assert case_id in shown.stdout, shown.stdout
    assert shown.stdout.count("FAIL") == 2
    compared = cli("compare", three_runs[1], three_runs[2], columns=columns)
    assert compared.code == 0, compared.stderr
    for run_id in three_runs[1:]:
        assert whole(compared.stdout, run_id)
    for case_id in HOSTILE_IDS[:2]:
        assert f"  - {case_id}: contains\n" in compared.stdout  # with the check it fails now
    assert "Regression: pass rate dropped 33.3 pp" in compared.stdout


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_run_keeps_its_case_ids_whole(cli, project, columns) -> None:
    answer_hostile(project, failing=HOSTILE_IDS[1:2])
    result = cli("run", SET, "--provider", "app", "--run-id", LONG_ID, "--show-all", columns=columns)
    assert result.code == 0, result.stderr
    table = result.stdout.split("\nModel:")[0]
    assert_fits(table.split("\n", 1)[1], columns)  # the heading may be longer than the terminal; the table is not
    assert whole(result.stdout, LONG_ID)
    for case_id in HOSTILE_IDS:
        assert case_id in table, table
    assert table.count("FAIL") == 1
    assert "recorded as the baseline" in result.stdout


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_retrieval_run_keeps_its_question_ids_and_hits_whole(cli, project, columns) -> None:
    (project / "answers.json").write_text('{"deserialize a JSON document": ["doc-json"]}')
    (project / "evalkit.toml").write_text('[deployments.local.retrievers."fixtures.scripted"]\nanswers = "answers.json"\n')
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.scripted", "--deployment", "local", "--show-all", columns=columns)
    assert result.code == 0, result.stderr
    table = result.stdout.split("\nRetriever:")[0].split("\n", 1)[1]
    assert_fits(table, columns)
    for question in ("json", "csv", "nap", "nothing"):
        assert re.search(rf"^{question}\s", table, re.M), table
    assert len(re.findall(r"\bhit\b", table)) >= 2 and "MISS" in table


@pytest.mark.parametrize("columns", ["abc", "0", "-5", "99999999999999999999", ""])
def test_a_columns_value_that_is_no_width_is_ignored_in_a_pipe_and_on_a_terminal(evalkit_cli, evalkit_process, columns) -> None:
    """``COLUMNS=abc`` crashed the run's output (ValueError in int()), ``0`` and ``-5`` printed
    nothing at all; each is ignored now, in a pipe (the pipe width) and on a terminal (its own)."""
    import os
    import pty

    piped = evalkit_cli("run", "evalkit.smoke", env={"COLUMNS": columns})
    assert piped.code == 0, piped.stderr
    assert "internal error" not in piped.stderr and "All 7 cases passed" in piped.stdout

    leader, follower = pty.openpty()  # a real terminal (of no size: the width falls back to 80)
    # A process of its own: its standard streams are the terminal (the in-process engine captures into files).
    with evalkit_process.start("run", "evalkit.smoke", env={"COLUMNS": columns}, stdout=follower, stderr=follower) as child:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the child
                break
            if not chunk:
                break
            shown += chunk
        assert child.wait(timeout=60) == 0, shown[-2000:]
    os.close(leader)
    assert b"All 7 cases passed" in shown, shown[-2000:]
