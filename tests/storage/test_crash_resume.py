"""Runs that survive crashes: SIGKILL mid-way then --resume, Ctrl-C, and shards joining one run —
on both engines, through real ``evalkit run`` processes against a slow chat-completions server."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import time

import pytest
from evalkit.runs import RunStatus
from evalkit.storage import open_repository

from tests.support.crashes import configure_slow_endpoint, ctrl_c_reaches_child, kept_by_store, sigkill_when

SET = "storagekit.echo"
SIZE = 40


def environment(storage_plugins: str, database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE_URL"}
    env.update(PYTHONPATH=storage_plugins, EVALKIT_TEST_KEY="k", EVALKIT_DATABASE_URL=database_url, NO_COLOR="1", COLUMNS="200")
    return env


def start(evalkit_process, env: dict[str, str], *args: str) -> subprocess.Popen[str]:  # noqa: ANN001
    """``evalkit run SET ARGS`` in a process of its own: these tests kill or interrupt it, or run
    several at once."""
    return evalkit_process.start("run", SET, *args, env=env, preexec_fn=ctrl_c_reaches_child)


def requests_per_case(server) -> collections.Counter[str]:  # noqa: ANN001 - a ChatServer
    counts: collections.Counter[str] = collections.Counter()
    for request in server.requests:
        if request.method != "POST":  # free GETs (/models) are not answers
            continue
        text = request.body["messages"][-1]["content"]
        counts[text.rsplit(" ", 1)[-1]] += 1
    return counts


def wait_for_cases(database_url: str, at_least: int, timeout: float = 30.0) -> tuple[str, set[str]]:
    """Poll the store until the newest run of the set has ``at_least`` answered cases."""
    deadline = time.monotonic() + timeout
    repo = open_repository(database_url)
    try:
        while time.monotonic() < deadline:
            runs = repo.recent_runs(SET, limit=1)
            if runs:
                answered = repo.answered_case_ids(runs[0].id)
                if len(answered) >= at_least:
                    return runs[0].id, answered
            time.sleep(0.02)
    finally:
        repo.close()
    raise AssertionError(f"no run of {SET} reached {at_least} stored cases within {timeout} s")


def test_a_run_killed_with_sigkill_resumes_without_generating_a_finished_case_twice(
    database_url, storage_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    chat_server.delay = 0.1
    configure_slow_endpoint(project, chat_server.base_url)
    env = environment(storage_plugins, database_url)
    victim = start(evalkit_process, env)
    run_id, _ = sigkill_when(victim, lambda: wait_for_cases(database_url, at_least=10))
    killed, stored_before = kept_by_store(database_url, run_id)
    assert killed.status is RunStatus.RUNNING, "a process killed outright leaves its run marked running"
    assert 10 <= len(stored_before) < SIZE

    chat_server.delay = 0.0  # the slow endpoint let the kill land mid-run; the resume need not wait
    resumed = evalkit_cli("run", SET, "--resume", "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    document = resumed.json()
    assert document["run_id"] == run_id and document["status"] == "complete"
    assert f"Resuming run {run_id}: {len(stored_before)} cases already answered are kept." in document["notes"]
    assert document["verified"] and document["identity"]["reported_model"] == "gpt-test"

    counts = requests_per_case(chat_server)
    twice = {case_id for case_id, n in counts.items() if n > 1}
    assert not (twice & stored_before), "a case finished before the kill was generated again"
    # In flight at the kill (concurrency 2), or finished in its last COMMIT_WAIT_S and not yet committed
    # (at 100 ms per answer and 2 in flight, at most 2 finish in 50 ms).
    assert len(twice) <= 4, "only the cases in flight at the kill or in its last group commit may be asked again"
    assert set(counts) == {f"token-{n:03d}" for n in range(SIZE)}

    repo = open_repository(database_url)
    try:
        final = repo.get_run(run_id)
        assert final.status is RunStatus.COMPLETE
        assert sorted(c.case_id for c in final.cases) == sorted(counts)
        assert final.passed_count == SIZE
        assert len(repo.recent_runs(SET)) == 1
    finally:
        repo.close()


def test_a_killed_run_is_shown_with_the_cases_it_stored_not_the_counts_of_its_start(
    database_url, storage_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    # the run row's counts are written when a run ends: `show` and `history` of a run killed (or
    # still going) said "running, 0 of 40 cases answered", "Pass rate: 0.0% (0/0)", and listed the
    # stored cases below that line
    chat_server.delay = 0.1
    configure_slow_endpoint(project, chat_server.base_url)
    env = environment(storage_plugins, database_url)
    run_id, _ = sigkill_when(start(evalkit_process, env), lambda: wait_for_cases(database_url, at_least=5))
    _, stored = kept_by_store(database_url, run_id)
    n = len(stored)
    shown = evalkit_cli("show", run_id, env=env)
    assert shown.code == 0, shown.stderr
    assert f"Status:     running, {n} of {SIZE} cases answered" in shown.stdout, shown.stdout
    assert f"Pass rate:  100.0% ({n}/{n})" in shown.stdout and "Mean score: 1.000" in shown.stdout
    assert "Finished: —\n" in shown.stdout, "no time zone after a dash"
    assert "Cost:       unknown until the run ends" in shown.stdout and "stored before evalkit" not in shown.stdout
    document = evalkit_cli("show", run_id, "--json", env=env).json()
    assert (document["answered"], document["passed"], document["pass_rate"]) == (n, n, 1.0)
    listed = evalkit_cli("history", SET, "--json", env=env).json()["runs"][0]
    assert listed["run_id"] == run_id and (listed["answered"], listed["passed"]) == (n, n), listed


def test_prune_keeps_a_run_a_live_process_is_answering_and_takes_a_killed_one(
    database_url, storage_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    # `db prune --older-than 1s` deleted the run another process was answering: that run then
    # failed with "FOREIGN KEY constraint failed", said "0 cases committed … are kept, the run is
    # marked interrupted" of a run no longer there, and offered a --resume of it
    chat_server.delay = 0.1
    configure_slow_endpoint(project, chat_server.base_url, concurrency=1)
    env = environment(storage_plugins, database_url)
    killed, _ = sigkill_when(start(evalkit_process, env), lambda: wait_for_cases(database_url, at_least=2))
    live = start(evalkit_process, env, "--json")
    try:
        deadline = time.monotonic() + 30
        while len(repo_runs(database_url)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.1)
        pruned = evalkit_cli("db", "prune", "--older-than", "1s", env=env)
        assert pruned.code == 0, pruned.stderr
        assert "Pruned 1 run" in pruned.stdout and "1 run being answered now was kept" in pruned.stdout, pruned.stdout
        chat_server.delay = 0.0  # the live run was kept under way through the prune; it may finish now
        stdout, stderr = live.communicate(timeout=120)
    finally:
        if live.poll() is None:
            live.kill()
    assert live.returncode == 0, stderr
    answered = json.loads(stdout)
    assert answered["status"] == "complete" and answered["answered"] == SIZE
    assert repo_runs(database_url) == [answered["run_id"]] and killed not in repo_runs(database_url)


def repo_runs(database_url: str) -> list[str]:
    repo = open_repository(database_url)
    try:
        return [run.id for run in repo.recent_runs(SET)]
    finally:
        repo.close()


def test_ctrl_c_marks_the_run_interrupted_and_resume_completes_it(
    database_url, storage_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    chat_server.delay = 0.1
    configure_slow_endpoint(project, chat_server.base_url)
    env = environment(storage_plugins, database_url)
    process = start(evalkit_process, env)
    run_id, _ = wait_for_cases(database_url, at_least=6)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 3 and "interrupted" in stderr

    repo = open_repository(database_url)
    interrupted = repo.get_run(run_id)
    kept = repo.answered_case_ids(run_id)
    repo.close()
    assert interrupted.status is RunStatus.INTERRUPTED
    assert len(kept) == len(interrupted.cases), "every case that finished before Ctrl-C was committed"
    # the run row's counts are written when a run ends, and an interrupted run never ended: `show`
    # and `history` said "interrupted, 0 of 40 cases answered" above the cases it had kept
    n = len(kept)
    shown = evalkit_cli("show", run_id, env=env)
    assert f"Status:     interrupted, {n} of {SIZE} cases answered" in shown.stdout, shown.stdout
    listed = evalkit_cli("history", SET, "--json", env=env).json()["runs"][0]
    assert listed["run_id"] == run_id and listed["answered"] == n, listed

    chat_server.delay = 0.0  # the slow endpoint let Ctrl-C land mid-run; the resume need not wait
    resumed = evalkit_cli("run", SET, "--resume", run_id, "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete" and resumed.json()["answered"] == SIZE
    counts = requests_per_case(chat_server)
    assert all(counts[case_id] == 1 for case_id in kept)


def test_shards_answer_one_run_together_and_the_last_one_completes_it(
    database_url, storage_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    chat_server.delay = 0.01
    configure_slow_endpoint(project, chat_server.base_url, concurrency=4)
    env = environment(storage_plugins, database_url)
    shards = [start(evalkit_process, env, "--shard", f"{i}/3", "--run-id", "ci-4711", "--json", "--database", database_url) for i in (1, 2, 3)]
    documents = []
    for shard in shards:
        stdout, stderr = shard.communicate(timeout=120)
        assert shard.returncode == 0, stderr
        documents.append(json.loads(stdout))

    closing = [d for d in documents if d["status"] == "complete"]
    assert closing, "the shard that stored the last case completes the run"
    assert all(d["verdict"]["state"] in ("baseline", "pending") for d in documents)
    assert all(d["run_id"] == "ci-4711" for d in documents)
    counts = requests_per_case(chat_server)
    assert counts == collections.Counter({f"token-{n:03d}": 1 for n in range(SIZE)}), "the slices are disjoint and cover the set"

    repo = open_repository(database_url)
    try:
        run = repo.get_run("ci-4711")
        assert run.status is RunStatus.COMPLETE and run.answered_count == SIZE and run.verified
        assert repo.verdicts_for(["ci-4711"])["ci-4711"].state == "baseline"
        assert [r.id for r in repo.recent_runs(SET)] == ["ci-4711"]
    finally:
        repo.close()

    next_run = evalkit_cli("run", SET, "--json", env=env)
    assert next_run.code == 0, next_run.stderr
    assert next_run.json()["baseline_id"] == "ci-4711"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--resume", "no-such-run"), 'there is no run "no-such-run" in the store'),
        (("--resume",), 'no unfinished run of "storagekit.echo" by "slow/gpt-test"'),
    ],
)
def test_resume_refuses_what_it_cannot_resume_before_calling_anything(
    database_url, storage_plugins, project, chat_server, evalkit_cli, args, message
) -> None:
    from evalkit.storage import close_repository, open_repository

    close_repository(open_repository(database_url))  # a store with no such run (without one, --resume says there is none)
    configure_slow_endpoint(project, chat_server.base_url)
    result = evalkit_cli("run", SET, *args, env=environment(storage_plugins, database_url))
    assert result.code == 2 and message in result.stderr
    assert chat_server.request_count == 0
