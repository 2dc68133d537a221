"""Accepted baselines end to end: a regressed run never becomes the baseline by itself; `evalkit baseline
accept|show`, `evalkit run --baseline RUN_ID` and the acceptance shown by `history` and `show`."""

from __future__ import annotations

import sqlite3

import pytest

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with, run_json

BROKEN = {**ARITH_GOOD, "add-7-5": "13", "times-table": "forty-two"}
ALICE = {"USER": "alice"}


def run_count(project) -> int:  # noqa: ANN001
    db = project / ".evalkit" / "results.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT COUNT(*) FROM evalkit_run").fetchone()[0]


def test_a_regressed_run_never_becomes_the_baseline_until_accepted(evalkit_cli, project) -> None:
    answer_with(project, ARITH_GOOD)
    first = evalkit_cli("run", "arith.basic", "--fail-on-regression", "--json")
    assert first.code == 0, first.stderr
    baseline_id = first.json()["run_id"]
    assert first.json()["accepted"]["how"] == "first"

    answer_with(project, BROKEN)
    regressed = evalkit_cli("run", "arith.basic", "--fail-on-regression")
    assert regressed.code == 1, regressed.stdout + regressed.stderr
    assert f"(baseline run {baseline_id})" in regressed.stdout
    assert f"Not accepted as the baseline: run {baseline_id} stays the baseline" in regressed.stdout

    # The identical CI job again: still compared with the original baseline, still failing.
    again = evalkit_cli("run", "arith.basic", "--fail-on-regression", "--json")
    assert again.code == 1
    document = again.json()
    assert document["verdict"]["baseline_id"] == baseline_id and document["verdict"]["regressed"] is True
    assert document["verdict"]["regressed_cases"] == ["add-7-5", "times-table"]
    assert document["accepted"] is None
    again_text = evalkit_cli("run", "arith.basic", "--fail-on-regression")
    assert again_text.code == 1 and f"(baseline run {baseline_id})" in again_text.stdout

    # The change is intended: accept the regressed run on purpose, and the same job passes.
    accepted = evalkit_cli("baseline", "accept", document["run_id"], "--reason", "new rounding rules", env=ALICE)
    assert accepted.code == 0, accepted.stderr
    assert f"Run {document['run_id']} is now the baseline of set \"arith.basic\"" in accepted.stdout
    assert "Accepted by alice on " in accepted.stdout and "new rounding rules" in accepted.stdout
    passing = evalkit_cli("run", "arith.basic", "--fail-on-regression", "--json")
    assert passing.code == 0, passing.stdout
    assert passing.json()["verdict"]["baseline_id"] == document["run_id"]
    # As good as the accepted run, not significantly better: it passes, and the bar stays where it was put.
    assert passing.json()["accepted"] is None

    shown = evalkit_cli("baseline", "show", "arith.basic", "--json").json()
    assert [b["run_id"] for b in shown["baselines"]] == [document["run_id"]]
    assert shown["baselines"][0]["scope"] == {
        "kind": "prompts", "set": "arith.basic", "provider_instance": "my-app", "model_alias": "my-app",
        "reported_model": "my-app-2025-01", "grader": "deterministic",
    }  # fmt: skip
    assert shown["baselines"][0]["acceptance"]["how"] == "manual"
    assert shown["baselines"][0]["acceptance"]["reason"] == "new rounding rules"


def test_baseline_show_says_who_accepted_when_and_why(evalkit_cli, project) -> None:
    answer_with(project, ARITH_GOOD)
    run_json(evalkit_cli, "arith.basic")
    answer_with(project, BROKEN)
    regressed = run_json(evalkit_cli, "arith.basic")
    accepted = evalkit_cli("baseline", "accept", regressed["run_id"], "--reason", "model retired", "--json", env=ALICE)
    assert accepted.code == 0, accepted.stderr
    assert accepted.json()["acceptance"]["by"] == "alice" and accepted.json()["acceptance"]["how"] == "manual"

    text = evalkit_cli("baseline", "show", "arith.basic", "--provider", "my-app", "--grader", "deterministic")
    assert text.code == 0, text.stderr
    assert f"Baseline:  run {regressed['run_id']}" in text.stdout
    assert "Why:       accepted by alice: model retired" in text.stdout
    assert "my-app-2025-01 (my-app/my-app), grader deterministic" in text.stdout
    assert "No accepted baseline" in evalkit_cli("baseline", "show", "arith.basic", "--provider", "openai").stdout
    assert evalkit_cli("baseline", "show", "arith.basic", "--provider", "other").code == 2  # neither configured nor stored
    assert evalkit_cli("baseline", "show", "arith.basic", "--grader", "decision", "--json").json()["baselines"] == []

    history = evalkit_cli("history", "arith.basic", "--json").json()["runs"]
    assert [r["accepted"]["how"] for r in history] == ["manual", "first"]
    assert history[0]["accepted"]["reason"] == "model retired" and history[0]["current_baseline"]
    table = evalkit_cli("history", "arith.basic").stdout
    assert "* by alice" in table
    show = evalkit_cli("show", regressed["run_id"]).stdout
    assert "Baseline:   accepted by alice: model retired" in show


def test_accept_refuses_what_cannot_be_a_baseline(evalkit_cli, project) -> None:
    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})  # one case cannot be answered
    incomplete = run_json(evalkit_cli, "arith.basic")
    assert "there is no run" in evalkit_cli("baseline", "accept", "nope", "--reason", "x").stderr
    refused = evalkit_cli("baseline", "accept", incomplete["run_id"], "--reason", "x")
    assert refused.code == 2 and "is incomplete: only a complete run can be accepted" in refused.stderr
    ad_hoc = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--json").json()
    refused = evalkit_cli("baseline", "accept", ad_hoc["run_id"], "--reason", "x")
    assert refused.code == 2 and "no verified serving identity" in refused.stderr
    answer_with(project, ARITH_GOOD)
    good = run_json(evalkit_cli, "arith.basic")
    refusals = (  # the command line names its option; accept_run names its keyword (test_baseline_scoping)
        ("   ", "--reason must say why this run is accepted (it is recorded with the acceptance)"),
        ("two\nlines", "--reason must be printable text on one line, got 'two\\nlines'"),
        ("W" * 100_000, "--reason is 100,000 characters long, more than the 1,000 allowed"),
    )
    for reason, message in refusals:
        refused = evalkit_cli("baseline", "accept", good["run_id"], "--reason", reason)
        assert refused.code == 2 and refused.stderr.startswith(f"evalkit: error: {message}"), refused.stderr
    assert evalkit_cli("baseline", "accept", good["run_id"]).code == 2  # --reason is required


def test_run_with_a_chosen_baseline_compares_with_it_and_refuses_another_scope(evalkit_cli, project) -> None:
    answer_with(project, ARITH_GOOD)
    good = run_json(evalkit_cli, "arith.basic")
    answer_with(project, BROKEN)
    broken = run_json(evalkit_cli, "arith.basic")
    answer_with(project, ARITH_GOOD)
    # Compared with the chosen (regressed, not accepted) run: fixed cases, no regression, not accepted.
    chosen = evalkit_cli("run", "arith.basic", "--baseline", broken["run_id"], "--fail-on-regression", "--json")
    assert chosen.code == 0, chosen.stderr
    assert chosen.json()["verdict"]["baseline_id"] == broken["run_id"]
    assert chosen.json()["verdict"]["fixed_cases"] == ["add-7-5", "times-table"]
    assert chosen.json()["accepted"] is None, "compared with a run that is not accepted: it vouches for nothing"
    against_good = evalkit_cli("run", "arith.basic", "--baseline", good["run_id"], "--json")
    assert against_good.json()["verdict"]["state"] == "no_regression"
    assert against_good.json()["accepted"] is None, "as good as the accepted run, not better: the bar does not move"

    smoke = evalkit_cli("run", "evalkit.smoke", "--json").json()
    before = run_count(project)
    for baseline, message in (
        (smoke["run_id"], 'it is a run of set "evalkit.smoke", not "arith.basic"'),
        ("no-such-run", 'there is no run "no-such-run"'),
    ):
        refused = evalkit_cli("run", "arith.basic", "--baseline", baseline, "--fail-on-regression")
        assert refused.code == 2, refused.stdout
        assert message in refused.stderr
    other_provider = evalkit_cli("run", "arith.basic", "--baseline", good["run_id"], "--provider", "reference")
    assert other_provider.code == 2 and "is of another scope" in other_provider.stderr
    assert 'answered by "my-app/my-app", this run asks an ad-hoc generator' in other_provider.stderr
    assert run_count(project) == before, "nothing stored"


def test_the_accepting_user_is_stored_bounded_and_with_control_characters_escaped(evalkit_cli, project) -> None:
    # $USER is whatever the environment says: 100,000 characters were stored whole, an ESC as "?"
    answer_with(project, ARITH_GOOD)
    done = evalkit_cli("run", "arith.basic", "--json")
    assert done.code == 0, done.stderr
    run_id = done.json()["run_id"]
    user = "mallory\x1b[31m" + "x" * 100_000 + "end"
    accepted = evalkit_cli("baseline", "accept", run_id, "--reason", "checked", env={"USER": user})
    assert accepted.code == 0, accepted.stderr
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        (stored,) = connection.execute("SELECT accepted_by FROM evalkit_run WHERE id = ?", (run_id,)).fetchone()
    assert len(stored) < 300 and "\x1b" not in stored and "?" not in stored
    assert stored.startswith("mallory\\x1b[31m") and stored.endswith("xend") and " characters cut … " in stored


@pytest.mark.parametrize(("length", "whole"), [(200, True), (201, False)])
def test_the_accepting_user_is_stored_whole_up_to_200_characters(evalkit_cli, project, length, whole) -> None:
    answer_with(project, ARITH_GOOD)
    run_id = evalkit_cli("run", "arith.basic", "--json").json()["run_id"]
    user = "u" * length
    assert evalkit_cli("baseline", "accept", run_id, "--reason", "checked", env={"USER": user}).code == 0
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        (stored,) = connection.execute("SELECT accepted_by FROM evalkit_run WHERE id = ?", (run_id,)).fetchone()
    assert (stored == user) is whole, stored


def test_a_chosen_baseline_that_is_incomplete_is_refused_as_incomplete_not_of_another_scope(evalkit_cli, project) -> None:
    """``--baseline RUN`` naming a run of this very scope that a request limit stopped said it was
    "of another scope: it is incomplete" — the user looked for a scope difference that is not
    there. It says the run is incomplete, and what to do: continue it, or choose a complete run."""
    from evalkit import evaluate_set
    from evalkit.errors import UsageError

    answer_with(project, ARITH_GOOD)
    stopped = evalkit_cli("run", "arith.basic", "--max-requests", "1", "--run-id", "cut-1", "--json")
    assert stopped.json()["status"] == "incomplete", stopped.stderr
    before = run_count(project)
    refused = evalkit_cli("run", "arith.basic", "--baseline", "cut-1")
    assert refused.code == 2, refused.stdout
    assert "another scope" not in refused.stderr, refused.stderr
    assert (
        "--baseline cut-1 is incomplete, and only a complete run can be a baseline: continue it "
        "(`evalkit show cut-1` prints the command that does), or choose a complete run"
    ) in refused.stderr, refused.stderr
    with pytest.raises(UsageError, match="baseline=cut-1 is incomplete, and only a complete run") as library:
        evaluate_set("arith.basic", provider="my-app", cwd=project, baseline="cut-1")
    assert "another scope" not in str(library.value)
    assert run_count(project) == before, "nothing stored"
