"""`evalkit retrieval --resume`: what is refused before anything runs, and resuming an incomplete run
asks only its errored questions (metrics kept at metadata privacy for the others)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = "evalkit-retrieval-fixtures"


def write_config(project: Path, fail_on: str) -> None:
    (project / "evalkit.toml").write_text(
        '[deployments.flaky]\nretriever = "fixtures.raising"\n'
        f'[deployments.flaky.retrievers."fixtures.raising"]\nfail_on = {json.dumps(fail_on)}\n'
    )


def test_resume_refusals_exit_2_naming_the_reason(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists(FIXTURES)}
    write_config(project, fail_on="nothing-matches-this")
    no_store = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--resume", env=env)
    assert no_store.code == 2 and "--resume: there is no store at " in no_store.stderr
    assert not (project / ".evalkit" / "results.db").exists()
    done = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--json", env=env)
    assert done.code == 0
    run_id = done.json()["run_id"]
    nothing = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--resume", env=env)
    assert nothing.code == 2
    assert 'no unfinished retrieval run of set "retrievalkit.tiny", retriever "fixtures.raising", deployment flaky' in nothing.stderr
    missing = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--resume", "r-404", env=env)
    assert missing.code == 2 and 'there is no run "r-404" in the store' in missing.stderr
    complete = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--resume", run_id, env=env)
    assert complete.code == 2 and f"run {run_id} is already complete" in complete.stderr
    other_k = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--k", "5", "--resume", run_id, env=env)
    assert other_k.code == 2 and "is already complete" in other_k.stderr
    # a complete run of another set is named as such (as `evalkit run` words it), not "already complete"
    smoke = evalkit_cli("run", "evalkit.smoke", "--run-id", "smoke-1", env=env)
    assert smoke.code == 0, smoke.stderr
    other_set = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--resume", "smoke-1", env=env)
    assert other_set.code == 2 and 'run smoke-1 is a run of set "evalkit.smoke", not "retrievalkit.tiny"' in other_set.stderr


def test_resuming_an_incomplete_run_asks_only_its_errored_questions(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists(FIXTURES)}
    write_config(project, fail_on="JSON")  # the "json" question fails
    broken = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--json", env=env)
    assert broken.code == 3 and broken.json()["status"] == "incomplete"
    run_id = broken.json()["run_id"]
    other = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--k", "5", "--resume", run_id, env=env)
    assert other.code == 2 and "measured something else (benchmark, k differ)" in other.stderr
    # one thing that differs is worded in the singular ("deployment differ" was not English)
    with (project / "evalkit.toml").open("a") as config:
        config.write('[deployments.twin]\nretriever = "fixtures.raising"\n[deployments.twin.retrievers."fixtures.raising"]\nfail_on = "JSON"\n')
    one = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "twin", "--resume", run_id, env=env)
    assert one.code == 2 and "measured something else (deployment differs)" in one.stderr, one.stderr
    write_config(project, fail_on="comma")  # now only "csv" would fail, and it is not asked again
    resumed = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", "--resume", "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    document = resumed.json()
    assert document["run_id"] == run_id and document["status"] == "complete"
    assert document["resumed"] == f"Resumed run {run_id}: 3 questions answered before were kept, 1 asked now."
    # every question answers doc-json: a top-1 hit for "json" only, and "nothing" misses
    metrics = document["metrics"]
    assert metrics["question_count"] == 4 and metrics["top1_hits"] == 1 and metrics["mrr_at_k"] == 0.25
    text = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "flaky", env=env)
    assert text.code == 3  # a new run: "csv" fails now
