"""`evalkit show RUN_ID`: one run with its cases and named checks."""

from __future__ import annotations

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with, run_json


def test_show_prints_the_run_its_verdict_and_every_check(evalkit_cli, project) -> None:
    answer_with(project, ARITH_GOOD)
    run_json(evalkit_cli, "arith.basic")
    answer_with(project, {**ARITH_GOOD, "add-7-5": "13 or so"})
    run = run_json(evalkit_cli, "arith.basic", "--privacy", "full")

    shown = evalkit_cli("show", run["run_id"])
    assert shown.code == 0, shown.stderr
    out = shown.stdout
    assert f"Run {run['run_id']}" in out and "Model:      my-app-2025-01 (my-app/my-app)" in out
    assert "Status:     complete, 6 of 6 cases answered" in out
    assert "Verdict:    REGRESSED vs" in out
    add_7_5 = next(line for line in out.splitlines() if line.startswith("add-7-5"))
    assert "FAIL" in add_7_5 and "✗ regex" in add_7_5 and "✗ max_words" in add_7_5
    assert "add-7-5: 13 or so" in out, "privacy full keeps the answer text"

    document = evalkit_cli("show", run["run_id"], "--json").json()
    assert document["run_id"] == run["run_id"] and document["verdict"]["state"] == "regressed"
    assert [c["id"] for c in document["cases"]] == list(ARITH_GOOD)
    checks = {c["name"]: c["passed"] for c in document["cases"][1]["checks"]}
    assert checks == {"matches_pattern": False, "within_length": False}


def test_show_lists_the_cases_that_need_a_look_unless_asked_for_all(evalkit_cli, project) -> None:
    answer_with(project, {**ARITH_GOOD, "add-7-5": "13 or so"})
    run = run_json(evalkit_cli, "arith.basic", "--privacy", "full")
    listed = evalkit_cli("show", run["run_id"]).stdout
    case_lines = [line.split()[0] for line in listed.splitlines() if line.split() and line.split()[0] in ARITH_GOOD]
    assert case_lines == ["add-7-5"]
    assert "5 passing cases are not listed (--show-all lists every case)." in listed
    assert "add-7-5: 13 or so" in listed and f"{next(iter(ARITH_GOOD))}:" not in listed  # answers of the listed cases
    every = evalkit_cli("show", run["run_id"], "--show-all").stdout
    assert [line.split()[0] for line in every.splitlines() if line.split() and line.split()[0] in ARITH_GOOD] == list(
        ARITH_GOOD
    )
    assert "not listed" not in every


def test_metadata_privacy_shows_no_answer_text(evalkit_cli) -> None:
    run = evalkit_cli("run", "evalkit.smoke", "--json").json()
    shown = evalkit_cli("show", run["run_id"])
    assert "Answers" not in shown.stdout
    assert all(c["answer"] is None for c in evalkit_cli("show", run["run_id"], "--json").json()["cases"])


def test_an_unknown_run_id_exits_2(evalkit_cli) -> None:
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    result = evalkit_cli("show", "20990101T000000-abcdef")
    assert result.code == 2 and 'there is no run "20990101T000000-abcdef"' in result.stderr


def test_a_long_answer_is_shown_cut_with_how_to_see_it_whole(evalkit_cli, project) -> None:
    answer_with(project, {**ARITH_GOOD, "add-7-5": "13 " + "\x1b[31m" * 10_000})
    run = run_json(evalkit_cli, "arith.basic", "--privacy", "full")
    shown = evalkit_cli("show", run["run_id"]).stdout
    (line,) = [line for line in shown.splitlines() if line.startswith("  add-7-5: ")]
    assert line == "  add-7-5: 13 " + "\\x1b[31m" * 399 + "\\x1b["  # 2,000 characters, escaped
    assert f"  … 48,003 more characters (`evalkit show {run['run_id']} --json` prints the whole answer)" in shown
    whole = evalkit_cli("show", run["run_id"], "--json").json()
    assert next(c["answer"] for c in whole["cases"] if c["id"] == "add-7-5") == "13 " + "\x1b[31m" * 10_000


def test_show_counts_an_errored_case_apart_from_the_answered_ones(evalkit_cli, project) -> None:
    # It said "incomplete (1 errored), 6 of 6 cases answered": an errored case is stored, and was
    # counted among the answered ones.
    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})  # one case cannot be answered
    done = evalkit_cli("run", "arith.basic", "--json")
    assert done.code == 3, done.stderr
    out = evalkit_cli("show", done.json()["run_id"]).stdout
    assert "Status:     incomplete, 5 of 6 cases answered, 1 errored" in out, out


def test_show_names_a_retrieval_runs_retriever_and_deployment_and_its_measures(evalkit_cli, project, tmp_path) -> None:
    # It printed "Model:      unverified (evalkit.lexical)": no deployment, though it scopes the
    # run's baseline, and of the stored metrics only the hit rates (as pass rate and mean score).
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    ran = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "demo", "--json", env=env).json()
    shown = evalkit_cli("show", ran["run_id"])
    assert shown.code == 0, shown.stderr
    assert 'Retriever:  evalkit.lexical in deployment "demo"\n' in shown.stdout
    assert "Model:" not in shown.stdout and "unverified" not in shown.stdout
    assert "Measures:   MRR@10 0.421, recall@10 0.566, nDCG@10 0.440\n" in shown.stdout
