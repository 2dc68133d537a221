"""The GitHub Actions workflow of docs/ci.md under "Re-run failed jobs", simulated on one machine.

Attempt 1: four shard jobs, one of them killed outright mid-slice (a runner lost), and the verdict
job, which cannot give a verdict. Attempt 2 re-runs the failed jobs: the killed shard (a new
``GITHUB_RUN_ATTEMPT``, the same ``GITHUB_RUN_ID``) completes the same run, answering only what
its slice is missing, and the verdict job of attempt 2 finds the verdict. Attempt 3 ("Re-run all
jobs") answers nothing again: every shard and the verdict job find the complete run's verdict.

The shards are real processes (one is killed with SIGKILL, the rest run at once against one
store); the verdict jobs, run one after another, go through the in-process CLI.
"""

from __future__ import annotations

import json
import os
import time

from evalkit.run.placement import Shard
from evalkit.storage import open_repository

from tests.support.crashes import configure_slow_endpoint, kept_by_store, sigkill_when

SET = "storagekit.echo"
SIZE = 40
SHARDS = 4
RUN_ID = "80001"


def job(storage_plugins: str, attempt: int) -> dict[str, str | None]:
    """The environment of one job of the workflow run: GitHub's run id and this attempt, the shared
    store's credentials, no CI variable of the machine running the tests."""
    env: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith(("CI_", "GITHUB_", "CIRCLE_", "BUILDKITE", "EVALKIT_"))
    }
    env.update(
        PYTHONPATH=storage_plugins, EVALKIT_TEST_KEY="k", NO_COLOR="1", COLUMNS="200",
        GITHUB_ACTIONS="true", GITHUB_RUN_ID=RUN_ID, GITHUB_RUN_ATTEMPT=str(attempt),
    )  # fmt: skip
    return env


def shard_args(database_url: str, index: int) -> tuple[str, ...]:
    return ("run", SET, "--provider", "slow", "--database", database_url, "--shard", f"{index}/{SHARDS}", "--json")


def verdict_args(database_url: str, timeout: str) -> tuple[str, ...]:
    return (
        "run", SET, "--provider", "slow", "--database", database_url, "--wait-for-shards", "--timeout", timeout,
        "--poll", "0.1s", "--fail-on-regression",
    )  # fmt: skip


def asked(server) -> list[str]:  # noqa: ANN001 - a ChatServer
    """The case ids the endpoint was asked to answer, in order (the readiness probe is not one)."""
    return [r.body["messages"][-1]["content"].rsplit(" ", 1)[-1] for r in server.requests if r.method == "POST"]


def stored_of(database_url: str, shard: Shard, at_least: int, timeout: float = 60.0) -> tuple[str, set[str]]:
    """Poll the store until the newest run of the set holds ``at_least`` answered cases of ``shard``."""
    deadline = time.monotonic() + timeout
    repository = open_repository(database_url)
    try:
        while time.monotonic() < deadline:
            runs = repository.recent_runs(SET, limit=1)
            if runs:
                mine = {c for c in repository.answered_case_ids(runs[0].id) if shard.owns(c)}
                if len(mine) >= at_least:
                    return runs[0].id, mine
            time.sleep(0.02)
    finally:
        repository.close()
    raise AssertionError(f"shard {shard.index} stored fewer than {at_least} cases within {timeout} s")


def test_re_run_failed_jobs_completes_the_run_and_a_later_attempt_finds_its_verdict(
    database_url, storage_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    configure_slow_endpoint(project, chat_server.base_url)
    first = job(storage_plugins, attempt=1)

    # -- attempt 1: shards 1-3 answer their slices at once; shard 4 is killed mid-slice ------------
    shards = [evalkit_process.start(*shard_args(database_url, i), env=first) for i in (1, 2, 3)]
    run_ids = set()
    for process in shards:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        run_ids.add(json.loads(out)["run_id"])
    (run_id,) = run_ids
    assert run_id.startswith(f"github-{RUN_ID}-") and len(run_id) == len(f"github-{RUN_ID}-") + 8  # no attempt in it

    chat_server.delay = 0.3  # shard 4's endpoint is slow: it is killed with part of its slice stored
    victim = evalkit_process.start(*shard_args(database_url, 4), env=first)
    sigkill_when(victim, lambda: stored_of(database_url, Shard(4, SHARDS), at_least=2))
    # What shard 4 had stored when it died is read after the kill: more cases may have been
    # committed between the poll that saw two and the SIGKILL (a loaded machine widens that gap).
    run, kept = kept_by_store(database_url, run_id)
    ours = {f"token-{n:03d}" for n in range(SIZE) if Shard(4, SHARDS).owns(f"token-{n:03d}")}
    kept_before = kept & ours
    assert run.status.value == "running" and len(kept_before) >= 2 and kept_before < ours, "the run waits for the rest of shard 4"

    pending = evalkit_cli(*verdict_args(database_url, "1s"), env=first)
    assert pending.code == 3, pending.stderr  # the verdict job of attempt 1 cannot give a verdict
    assert f"run {run_id}:" in pending.stderr and "the verdict is pending" in pending.stderr

    # -- attempt 2 ("Re-run failed jobs"): shard 4 and the verdict job --------------------------------
    chat_server.delay = 0.0
    asked_before = len(asked(chat_server))
    second = job(storage_plugins, attempt=2)
    rerun = evalkit_process.start(*shard_args(database_url, 4), env=second)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    document = json.loads(out)
    assert document["run_id"] == run_id and document["status"] == "complete", "the re-run shard completed the same run"
    again = asked(chat_server)[asked_before:]
    assert set(again) <= ours - kept_before, "only what shard 4's slice was missing is asked again"
    assert set(again) == ours - kept_before

    verdict = evalkit_cli(*verdict_args(database_url, "1m"), env=second)
    assert verdict.code == 0, verdict.stderr
    assert f"Every shard of run {run_id} is in." in verdict.stdout
    assert "Pass rate:  100.0% (40/40)" in verdict.stdout
    assert "recorded as the baseline" in verdict.stdout

    # -- attempt 3 ("Re-run all jobs"): nothing is answered again, the verdict is found ---------------
    asked_before = len(asked(chat_server))
    third = job(storage_plugins, attempt=3)
    for index in range(1, SHARDS + 1):
        shard = evalkit_cli(*shard_args(database_url, index), env=third)
        assert shard.code == 0, shard.stderr
        found = shard.json()
        assert found["run_id"] == run_id and found["status"] == "complete"
        assert any(note.startswith(f"Run {run_id} is already complete") for note in found["notes"]), found["notes"]
    assert asked(chat_server)[asked_before:] == [], "a complete run is not answered again"
    final = evalkit_cli(*verdict_args(database_url, "1m"), env=third)
    assert final.code == 0 and f"Every shard of run {run_id} is in." in final.stdout
    repository = open_repository(database_url)
    try:
        assert [r.id for r in repository.recent_runs(SET)] == [run_id], "three attempts, one run"
    finally:
        repository.close()
