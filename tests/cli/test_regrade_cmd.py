"""`evalkit regrade RUN_ID`: what the re-graded run says of its serving identity."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import attrs
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


def _stopped_regrade(evalkit_cli, project: Path) -> tuple[str, str]:  # noqa: ANN001
    """A configured instance's run ``src`` and a re-grade of it that stopped one case short,
    marked interrupted (as a stopped re-grade is left); their ids."""
    from evalkit.storage import open_repository

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--privacy", "full", "--run-id", "src").code == 0
    regraded = evalkit_cli("regrade", "src", "--json")
    assert regraded.code == 0, regraded.stderr
    run_id = regraded.json()["run_id"]
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repo.Run.update({repo.Run.status: "interrupted"}).where(repo.Run.id == run_id).execute()
        repo.Case.delete().where((repo.Case.run == run_id) & (repo.Case.case_id == "json-sum")).execute()
    finally:
        repo.close()
    return "src", run_id


def test_run_resume_of_a_regrade_run_is_refused_naming_the_regrade_that_continues_it(evalkit_cli, project) -> None:
    # `evalkit run arith.basic --provider my-app --resume REGRADE_ID` continued the re-grade run by
    # asking the model for its missing case: a re-grade run with one case answered now, the rest
    # re-graded. It is a usage error naming the run and the command that continues it.
    source, run_id = _stopped_regrade(evalkit_cli, project)
    before = evalkit_cli("show", run_id, "--json").json()
    refused = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--resume", run_id)
    assert refused.code == 2, refused.stderr
    again = f"evalkit regrade {source}"  # as the re-grade was typed (`--json` is not repeated)
    assert f"run {run_id} is a re-grade run (the stored answers of run {source} graded again)" in refused.stderr
    assert f"continue it with `{again}`" in refused.stderr
    assert evalkit_cli("show", run_id, "--json").json() == before, "nothing stored or changed"
    for joined in (("--run-id", run_id), ("--resume",)):
        assert evalkit_cli("run", "arith.basic", "--provider", "my-app", *joined).code == 2
    done = evalkit_cli(*shlex.split(again)[1:], "--json")
    assert done.code == 0 and done.json()["status"] == "complete" and done.json()["source_run_id"] == source, done.stderr


def test_a_killed_regrade_run_says_the_regrade_that_continues_it(evalkit_cli, project) -> None:
    # `history` and `show` said a killed re-grade run is continued with `evalkit run arith.basic
    # --provider my-app --resume ID`, which would ask the model (and is refused): it is re-graded again.
    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.storage import open_repository

    source, run_id = _stopped_regrade(evalkit_cli, project)
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # what a `kill -9` on machine ci-7 leaves: the run running, a lease no one renews
        repo.mark_status(run_id, "running")
        repo.acquire_lease(run_id, "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).where(repo.Lease.run == run_id).execute()
    finally:
        repo.close()
    again = f"continue it with `evalkit regrade {source}`"  # the line the re-grade printed
    assert again in evalkit_cli("show", run_id).stdout
    assert again in evalkit_cli("history", "arith.basic").stdout
    assert "--resume" not in evalkit_cli("show", run_id).stdout


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


def test_a_bare_resume_continues_the_users_own_run_not_a_stopped_regrade_of_it(evalkit_cli, project) -> None:
    # `evalkit run arith.basic --provider my-app --resume` (no id) chose the newest unfinished run of
    # the set, instance, alias and grader: a stopped re-grade run, which it then refused ("is a
    # re-grade run … continue it with `evalkit regrade …`"), hiding the user's own stopped run. A
    # re-grade is never resumed, so a bare --resume passes over it.
    from evalkit.storage import open_repository

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--run-id", "mine").code == 0
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # the user's own run, stopped one case short (older than the re-grade below)
        repo.Run.update({repo.Run.status: "interrupted"}).where(repo.Run.id == "mine").execute()
        repo.Case.delete().where((repo.Case.run == "mine") & (repo.Case.case_id == "json-sum")).execute()
    finally:
        repo.close()
    _, regrade_id = _stopped_regrade(evalkit_cli, project)
    resumed = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--resume", "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["run_id"] == "mine" and resumed.json()["status"] == "complete"
    assert evalkit_cli("show", regrade_id, "--json").json()["status"] == "interrupted", "the re-grade is left as it was"


def test_a_judge_for_a_grader_that_asks_none_is_refused_as_run_refuses_it(evalkit_cli, project, plugin_dists) -> None:
    # `evalkit regrade RUN --judge X` on a grader that asks no judge said `has no option "judge"
    # (in [graders."keyword_coverage"] …)`, where `evalkit run --judge X` says the flag applies to
    # judge graders: one rule (cli/judge_flags.py) refuses it for both, before anything is stored.
    env = {"PYTHONPATH": plugin_dists("evalkit-example-grader")}
    (project / "evalkit.toml").write_text('privacy = "full"\n[providers.judge]\nadapter = "reference"\n')
    source = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--grader", "keyword_coverage", "--json", env=env).json()
    regraded = evalkit_cli("regrade", source["run_id"], "--grader", "keyword_coverage", "--judge", "judge", env=env)
    ran = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--grader", "keyword_coverage", "--judge", "judge", env=env)
    assert ran.code == 2 and '"keyword_coverage" asks no judge' in ran.stderr, ran.stderr
    assert regraded.code == 2, regraded.stderr
    assert '"keyword_coverage" asks no judge' in regraded.stderr and "has no option" not in regraded.stderr, regraded.stderr
    assert len(evalkit_cli("history", "evalkit.smoke", "--json", env=env).json()["runs"]) == 1  # nothing stored


def test_a_regrade_says_its_concurrency_is_gradings_not_requests(evalkit_cli, project) -> None:
    # `evalkit regrade` said "Concurrency: 8 requests in flight", though it sends the model nothing.
    source = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()
    regraded = evalkit_cli("regrade", source["run_id"])
    assert regraded.code == 0, regraded.stderr
    assert "requests in flight" not in regraded.stdout and "request in flight" not in regraded.stdout
    assert "Concurrency: " in regraded.stdout and "in flight" in regraded.stdout.split("Concurrency: ", 1)[1].splitlines()[0]
    assert "grading" in regraded.stdout.split("Concurrency: ", 1)[1].splitlines()[0]


def test_a_plugin_graders_run_is_re_graded_by_its_grader_without_naming_it(evalkit_cli, project, plugin_dists) -> None:
    # A finished run keeps its yardstick in its grader column ("keyword-coverage:v1:0.6"), which a
    # plugin's need not start with its entry point's name: `evalkit regrade RUN_ID` looked that up
    # as a grader and said `Unknown grader "keyword-coverage:v1:0.6"`, exit 2. The run records the
    # grader plugin it was graded by, and the re-grade (and a killed re-grade's resume line) use it.
    env = {"PYTHONPATH": plugin_dists("evalkit-example-grader")}
    (project / "evalkit.toml").write_text('privacy = "full"\n')
    source = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--grader", "keyword_coverage", "--json", env=env)
    assert source.code == 0, source.stderr[-2000:]
    regraded = evalkit_cli("regrade", source.json()["run_id"], "--json", env=env)
    assert regraded.code == 0, regraded.stderr[-2000:]
    assert regraded.json()["status"] == "complete" and regraded.json()["source_run_id"] == source.json()["run_id"]
    assert "Unknown grader" not in regraded.stderr
    from evalkit.run.placement import grader_plugin_of, regrade_again
    from evalkit.storage import open_repository

    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        stored = repo.get_run(regraded.json()["run_id"], with_cases=False)
    finally:
        repo.close()
    assert stored.grader.startswith("keyword-coverage:") and grader_plugin_of(stored) == "keyword_coverage"
    assert regrade_again(stored) == f"evalkit regrade {source.json()['run_id']}"  # as it was typed
    # a re-grade that kept no options (a library call's) names its grader plugin, not its yardstick
    unkept = attrs.evolve(stored, provenance={k: v for k, v in stored.provenance.items() if k != "resumed_options"})
    assert regrade_again(unkept) == f"evalkit regrade {source.json()['run_id']} --grader keyword_coverage"
