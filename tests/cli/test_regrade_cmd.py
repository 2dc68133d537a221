"""`evalkit regrade RUN_ID`: what the re-graded run says of its serving identity."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest


def _starter(evalkit_cli, project: Path, model: str) -> None:  # noqa: ANN001
    """`evalkit init`'s example, answers kept in full, every answer reporting ``model``."""
    assert evalkit_cli("init").code == 0
    config = project / "evalkit.toml"
    config.write_text(config.read_text().replace('privacy = "redacted"', 'privacy = "full"'))
    answers = project / tomllib.loads(config.read_text())["providers"]["recorded"]["path"]  # where init put them
    lines = [{**json.loads(line), "model": model} for line in answers.read_text().splitlines()]
    answers.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_regrade_says_why_its_configured_source_was_not_compared(evalkit_cli, project) -> None:
    # The source is a configured instance's run whose answers report a malformed model; its
    # re-grade said "the generator is not a configured provider instance (ad-hoc run); configure
    # [providers.NAME]", sending the user to configure what is configured.
    _starter(evalkit_cli, project, "app\u202emodel")
    source = evalkit_cli("run", "starter.faq", "--provider", "recorded", "--json").json()
    assert "not well formed" in source["verdict"]["reason"]
    regraded = evalkit_cli("regrade", source["run_id"])
    assert regraded.code == 0, regraded.stderr
    assert "ad-hoc" not in regraded.stdout
    assert 'carry a serving identity that is not well formed, so it is no evidence of who answered: reported model "app\\u202emodel"' in regraded.stdout


def test_a_regrade_of_an_ad_hoc_run_is_still_ad_hoc(evalkit_cli, project) -> None:
    source = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()
    regraded = evalkit_cli("regrade", source["run_id"], "--json")
    assert regraded.code == 0, regraded.stderr
    assert "(ad-hoc run)" in regraded.json()["verdict"]["reason"]


def test_a_regrade_that_stops_says_a_command_that_finishes_it(cli, plugin_dists, project: Path) -> None:
    # A re-grade with a judge grader whose use_assertion_kinds() raised said "continue it with
    # `evalkit run raising.rubric --resume ID`": without --grader, pasted it failed (exit 2, "no judge
    # is configured"), and `evalkit run --resume` would ask the model. It says to re-grade again.
    env = {"PYTHONPATH": plugin_dists("evalkit-raising-plugins")}
    (project / "rubric.yaml").write_text(
        "identifier: raising.rubric\nname: Rubric\nprompts:\n  - id: polite\n    prompt: Say x\n    reference: x\n"
        "    assertions:\n      - rubric: The answer is polite.\n"
    )
    (project / "evalkit.toml").write_text('privacy = "full"\n[sets]\npaths = ["rubric.yaml"]\n')
    source = cli("run", "raising.rubric", "--provider", "reference", "--grader", "raising.judge", "--json", env=env)
    assert source.code == 0, source.stderr[-2000:]
    run_id = source.json()["run_id"]
    given = ("--grader", "raising.judge", "--config", "evalkit.toml")
    failed = cli("regrade", run_id, *given, env={**env, "EVALKIT_RAISE": "RuntimeError", "EVALKIT_RAISE_IN": "kinds"})
    assert failed.code == 3, failed.stderr[-2000:]
    command = failed.stderr.split("continue it with `")[1].split("`")[0]
    assert command == f"evalkit regrade {run_id} --grader raising.judge --config evalkit.toml", failed.stderr[-2000:]
    again = cli(*shlex.split(command)[1:], "--json", env=env)
    assert again.code == 0, again.stderr[-2000:]
    assert again.json()["status"] == "complete" and again.json()["source_run_id"] == run_id


def test_a_regrade_with_an_unreachable_judge_is_refused_as_a_run_is_before_anything_is_stored(evalkit_cli, project) -> None:
    # `evalkit regrade RUN_ID --grader decision` with the judge's endpoint down never asked the
    # judge's check_ready(), as `evalkit run` does: it stored a re-grade run of seven errored
    # gradings ("decision:failed"), exit 0. It is refused as the run is, with the run's words.
    from tests.plugins.judge_support import closed_port_url
    from tests.support.providers import openai_provider_table

    (project / "evalkit.toml").write_text('judge = "judge"\nprivacy = "full"\n' + openai_provider_table("judge", closed_port_url(), "judge-alias"))
    source = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--json")
    assert source.code == 0, source.stderr[-2000:]
    run_id = source.json()["run_id"]
    run = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--grader", "decision")
    regraded = evalkit_cli("regrade", run_id, "--grader", "decision")
    assert run.code == regraded.code == 2, regraded.stdout[-2000:]
    assert 'The "decision" grader cannot run: its judge "judge" is not reachable' in regraded.stderr
    assert regraded.stderr.split(": connection failed")[0] == run.stderr.split(": connection failed")[0]
    assert regraded.stdout == ""
    history = evalkit_cli("history", "evalkit.smoke", "--json").json()
    assert [stored["run_id"] for stored in history["runs"]] == [run_id]


def test_a_regrade_where_there_is_no_store_makes_none(evalkit_cli, project, tmp_path) -> None:
    # `evalkit regrade RUN_ID` in a project with no store made an empty .evalkit/results.db to say
    # the run was not in it (exit 2, a store left behind); `regrade_run(database=a missing file)` too.
    # Refused as `evalkit show` refuses it, nothing made.
    from evalkit.errors import UsageError
    from evalkit.run.regrade import regrade_run

    refused = evalkit_cli("regrade", "20261205T192216-ff845b")
    assert refused.code == 2
    assert refused.stderr.startswith(f"evalkit: error: There is no results store at {project / '.evalkit' / 'results.db'}: nothing has been run here yet")
    assert not (project / ".evalkit").exists()
    missing = tmp_path / "none.db"
    with pytest.raises(UsageError, match=r"^run_id: there is no store at .* yet, so there is no run to find"):
        regrade_run("20261205T192216-ff845b", database=f"sqlite:///{missing}", cwd=project)
    assert not missing.exists() and not (project / ".evalkit").exists()
