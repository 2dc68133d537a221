"""A run whose process was killed: `history` and `show` say that no process answers it any more,
and `report --wait` stops waiting for it once its leases are stale instead of at its --timeout.

A kill leaves the run `running` with the lease its process held. The tests make that state in a
real SQLite store — the run stored by `evalkit run`, then its lease taken with the repository's own
``acquire_lease`` for another machine's process and its heartbeat aged by hand — instead of killing
a process and sleeping 90 s (tests/storage/test_hostile_storage.py kills real processes)."""

from __future__ import annotations

import shlex
import time

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

LOCAL = "sqlite:///.evalkit/results.db"


def _store(project, url: str | None = None):  # noqa: ANN001, ANN202 - the built-in repository
    from evalkit.storage import open_repository

    return open_repository(url or f"sqlite:///{project / '.evalkit' / 'results.db'}")


def _killed_elsewhere(
    project, run_id: str, part: str = "*", *, age: float, shard_count: int | None = None, url: str | None = None
) -> None:  # noqa: ANN001
    """What a `kill -9` of the process answering ``part`` of the run on machine ci-7 leaves: the run
    marked running, that process's lease, its last heartbeat ``age`` seconds ago (in the store
    ``url``, the project's default one when not given)."""
    from evalkit.leases import LeaseOwner

    repo = _store(project, url)
    try:
        repo.mark_status(run_id, "running")
        repo.acquire_lease(run_id, part, LeaseOwner("ci-7", 4242, f"token-{part}"), shard_count=shard_count)
        L = repo.Lease
        then = repo._store_now() - age
        L.update({L.heartbeat_at: then, L.acquired_at: then}).where((L.run == run_id) & (L.part == part)).execute()
    finally:
        repo.close()


def _age_leases(project, run_id: str, age: float) -> None:  # noqa: ANN001
    repo = _store(project)
    try:
        L = repo.Lease
        then = repo._store_now() - age
        L.update({L.heartbeat_at: then, L.acquired_at: then}).where(
            (L.run == run_id) & L.heartbeat_at.is_null(False)
        ).execute()
        L.update({L.done_at: then, L.acquired_at: then}).where((L.run == run_id) & L.done_at.is_null(False)).execute()
    finally:
        repo.close()


def test_a_killed_run_is_shown_with_no_live_process_and_report_wait_stops_for_it(evalkit_cli, project) -> None:
    from evalkit.leases import STALE_AFTER_S

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--run-id", "nightly-7").code == 3

    # answered now on another machine: a heartbeat 30 s old is live there
    _killed_elsewhere(project, "nightly-7", age=30)
    listed = evalkit_cli("history", "arith.basic", "--json")
    (document,) = listed.json()["runs"]
    assert document["status"] == "running" and document["live_process"] is True, document
    assert "no live process" not in evalkit_cli("history", "arith.basic").stdout

    # killed: no heartbeat for longer than a lease stays live
    _killed_elsewhere(project, "nightly-7", age=STALE_AFTER_S + 5)
    resume = "`evalkit run arith.basic --provider my-app --resume nightly-7`"
    table = evalkit_cli("history", "arith.basic")
    assert table.code == 0, table.stderr
    assert "running (no live process)" in table.stdout
    assert "Run nightly-7: no live process since " in table.stdout and f"continue it with {resume}" in table.stdout
    (document,) = evalkit_cli("history", "arith.basic", "--json").json()["runs"]
    assert document["status"] == "running", "status keeps its meaning: the run is stored as running"
    assert document["live_process"] is False and time.time() - document["last_seen_at"] > STALE_AFTER_S
    shown = evalkit_cli("show", "nightly-7")
    assert "Status:     running" in shown.stdout and "no live process since " in shown.stdout and resume in shown.stdout
    shown_json = evalkit_cli("show", "nightly-7", "--json").json()
    assert (shown_json["status"], shown_json["live_process"]) == ("running", False)
    reported = evalkit_cli("report", "nightly-7", "-o", "now.html")
    assert reported.code == 3, "a run nothing answers is not complete: it is no pending run"
    assert reported.stdout.startswith("PENDING: arith.basic run nightly-7"), reported.stdout
    assert "The run has no live process since " in reported.stdout and resume in reported.stdout
    # the report file says it too: it is what a CI artifact shows (it said it waits for shards)
    page = (project / "now.html").read_text()
    assert "The run has no live process since " in page and "pending until the run has finished" in page
    evalkit_cli("report", "nightly-7", "--format", "markdown", "-o", "now.md")
    assert "The run has no live process since " in (project / "now.md").read_text()

    started = time.monotonic()
    waited = evalkit_cli("report", "nightly-7", "--wait", "--timeout", "60s", "--poll", "0.2s", "-o", "late.html")
    assert time.monotonic() - started < 30, "it waited for its --timeout"
    assert waited.code == 3, waited.stderr
    assert (
        "run nightly-7: 6 of 6 cases are in and the run is still running, but it has no live process since"
        in waited.stderr
    )
    assert resume in waited.stderr and not (project / "late.html").exists()

    # the command it names continues the run
    answer_with(project, ARITH_GOOD)
    resumed = evalkit_cli(*shlex.split(resume.strip("`"))[1:], "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr
    (document,) = evalkit_cli("history", "arith.basic", "--json").json()["runs"]
    assert (document["status"], document["live_process"], document["last_seen_at"]) == ("complete", None, None)


def test_report_of_a_killed_run_exits_3_saying_why_and_of_a_live_one_stays_pending(evalkit_cli, project) -> None:
    """`evalkit report RUN` of a run whose process was killed (stored `running`, its leases stale)
    rendered it PENDING and exited 0: a CI step gating on it passed a run nothing will finish. It is
    not complete, so exit 3 (under --fail-on-regression too, as an incomplete run), saying no process
    answers it and how to continue it; a run a live process still answers stays pending (0; 1 under
    --fail-on-regression)."""
    from evalkit.leases import STALE_AFTER_S

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--run-id", "nightly-8").code == 3

    _killed_elsewhere(project, "nightly-8", age=30)  # answered now on another machine
    assert evalkit_cli("report", "nightly-8", "-o", "live.html").code == 0
    assert evalkit_cli("report", "nightly-8", "-o", "live.html", "--fail-on-regression").code == 1

    _killed_elsewhere(project, "nightly-8", age=STALE_AFTER_S + 5)
    resume = "`evalkit run arith.basic --provider my-app --resume nightly-8`"
    for extra in ((), ("--fail-on-regression",)):
        reported = evalkit_cli("report", "nightly-8", "-o", "now.html", *extra)
        assert reported.code == 3, (extra, reported.stdout, reported.stderr)
        assert "The run has no live process since " in reported.stdout and resume in reported.stdout, reported.stdout
    # the report on standard output: what is said goes to standard error, with the same code
    piped = evalkit_cli("report", "nightly-8", "--format", "markdown")
    assert piped.code == 3 and "The run has no live process since " in piped.stderr, piped.stderr


def test_compare_says_a_killed_run_has_no_live_process_as_history_and_show_do(evalkit_cli, project) -> None:
    """`evalkit compare BASE RUN` said "RUN nightly-7 is running" of a run no process answers any
    more, where `history` and `show` say `running (no live process)`, since when, and the command
    that continues it: it says the same, by the same rule (`evalkit.leases`)."""
    from evalkit.leases import STALE_AFTER_S

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--run-id", "base-1").code == 0
    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--run-id", "nightly-7").code == 3
    _killed_elsewhere(project, "nightly-7", age=30)  # answered on another machine: live
    lacking = "cases it lacks count as added or removed"
    (note,) = [n for n in evalkit_cli("compare", "base-1", "nightly-7", "--json").json()["notes"] if lacking in n]
    assert note == f"RUN nightly-7 (6 of 6 cases answered) is running: {lacking}."

    _killed_elsewhere(project, "nightly-7", age=STALE_AFTER_S + 5)  # killed
    shown = evalkit_cli("show", "nightly-7").stdout
    (said,) = [line.strip() for line in shown.splitlines() if "no live process since" in line]
    assert "continue it with `evalkit run arith.basic --provider my-app --resume nightly-7`" in said
    for order, which in ((("base-1", "nightly-7"), "RUN"), (("nightly-7", "base-1"), "BASE")):
        (note,) = [n for n in evalkit_cli("compare", *order, "--json").json()["notes"] if lacking in n]
        assert (
            note == f"{which} nightly-7 (6 of 6 cases answered) is running (no live process): {lacking}; it has {said}."
        )
    printed = evalkit_cli("compare", "base-1", "nightly-7")
    assert "is running (no live process)" in printed.stdout and said in " ".join(printed.stdout.split()), printed.stdout


def test_report_wait_gives_a_dead_run_the_stale_limit_before_it_stops(evalkit_cli, project) -> None:
    """A process on this host that is gone is "no live process" at once, but the wait goes on until
    the stale limit has passed since it was last heard from (a re-run of the job may take it over)."""
    import os
    import socket

    from evalkit.leases import LeaseOwner

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--run-id", "here-1").code == 3
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)  # a pid of this host with no process
    repo = _store(project)
    try:
        repo.mark_status("here-1", "running")
        repo.acquire_lease("here-1", "*", LeaseOwner(socket.gethostname(), dead, "gone"))
    finally:
        repo.close()
    assert "running (no live process)" in evalkit_cli("history", "arith.basic").stdout
    waited = evalkit_cli("report", "here-1", "--wait", "--timeout", "1s", "--poll", "0.2s")
    assert waited.code == 3 and "cases are in after 1 s and the run is still running" in waited.stderr, waited.stderr


def test_a_sharded_run_whose_other_shard_has_not_started_is_waited_for(evalkit_cli, project) -> None:
    from evalkit.leases import STALE_AFTER_S

    answer_with(project, ARITH_GOOD)
    shard = evalkit_cli("run", "arith.basic", "--shard", "1/2", "--run-id", "pipe-9", "--database", LOCAL)
    assert shard.code == 0, shard.stderr
    _age_leases(project, "pipe-9", STALE_AFTER_S * 3)  # shard 1 was in long ago; shard 2 never started

    (document,) = evalkit_cli("history", "arith.basic", "--json").json()["runs"]
    assert document["status"] == "running" and document["live_process"] is None
    assert "no live process" not in evalkit_cli("history", "arith.basic").stdout
    waited = evalkit_cli("report", "pipe-9", "--wait", "--timeout", "1s", "--poll", "0.2s", "--database", LOCAL)
    assert waited.code == 3 and "cases are in after 1 s and the run is still running" in waited.stderr, waited.stderr

    # shard 2 started on another machine and was killed there: nothing answers the run any more
    _killed_elsewhere(project, "pipe-9", "2/2", age=STALE_AFTER_S + 5, shard_count=2)
    started = time.monotonic()
    gone = evalkit_cli("report", "pipe-9", "--wait", "--timeout", "60s", "--poll", "0.2s", "--database", LOCAL)
    assert time.monotonic() - started < 30 and gone.code == 3, gone.stderr
    assert "no live process since" in gone.stderr
    # the --database the command was given is repeated: pasted without it, the line used the default store
    assert f"`evalkit run arith.basic --provider my-app --database {LOCAL} --shard 2/2 --run-id pipe-9`" in gone.stderr


def test_the_liveness_rule_over_a_runs_leases() -> None:
    """:meth:`RunLiveness.of`, the one rule the store applies: live while any lease is; gone when
    none is and every shard has taken its lease; a part that is no ``I/N`` names no shard, and a
    time in the future (another clock's, or a hand's) is not "last seen"."""
    from evalkit.leases import STALE_AFTER_S, LeaseHolder, RunLiveness

    now = 10_000.0
    elsewhere = "ci-7"  # not this host: a recent heartbeat is live, whatever the pid

    def held(part: str, beat: float | None, done: float | None = None) -> LeaseHolder:
        return LeaseHolder(part, elsewhere if beat is not None else None, 4242, beat, beat or 100.0, done)

    answered = RunLiveness.of([held("*", now - 5)], now)
    assert answered.live and not answered.gone and not answered.given_up()
    killed = RunLiveness.of([held("*", now - STALE_AFTER_S - 1)], now)
    assert killed.gone and killed.given_up() and killed.last_seen == now - STALE_AFTER_S - 1
    just_killed = RunLiveness.of([held("*", now - STALE_AFTER_S + 30)], now)
    assert just_killed.live and not just_killed.gone, "a heartbeat 60 s old on another host is live"
    waiting = RunLiveness.of([held("1/3", None, done=now - 500), held("3/3", now - 500)], now)
    assert (waiting.shard_count, waiting.missing, waiting.unstarted) == (3, (2, 3), (2,)) and not waiting.gone
    odd = RunLiveness.of([held("1/1", None, done=now - 500), held("../x", now - 500), held("²/3", now - 500)], now)
    assert (odd.shard_count, odd.missing, odd.gone) == (1, (), True)
    ahead = RunLiveness.of([held("*", now + 3600)], now)
    assert ahead.gone and ahead.last_seen is None and ahead.given_up(), "a future heartbeat proves nothing"


def test_a_shard_run_again_is_not_counted_in_while_it_is_answered_again(evalkit_cli, project, monkeypatch) -> None:
    """A shard's lease taken again (a CI's "re-run failed jobs" of a shard whose run closed
    incomplete) kept the earlier attempt's done time: while the shard was answered again the store
    counted it in, and once that process was killed `show`, `history` and `report --wait` named no
    shard to re-run (they said `--resume`) and the wait went on, the run seen recently."""
    from evalkit.leases import STALE_AFTER_S
    from evalkit.run.answering.prompts import PromptAnswering

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    shards = [
        evalkit_cli("run", "arith.basic", "--shard", f"{i}/2", "--run-id", "pipe-4", "--database", LOCAL, "--json")
        for i in (1, 2)
    ]
    assert {s.json()["status"] for s in shards} == {"running", "incomplete"}, [s.stderr for s in shards]
    (errored,) = [i for i, s in zip((1, 2), shards, strict=True) if any(c["errored"] for c in s.json()["cases"])]
    _age_leases(project, "pipe-4", STALE_AFTER_S * 3)  # both shards were in long ago

    # the errored shard is run again on another machine and killed there: that shard is named
    _killed_elsewhere(project, "pipe-4", f"{errored}/2", age=STALE_AFTER_S + 5, shard_count=2)
    rerun = f"`evalkit run arith.basic --provider my-app --database {LOCAL} --shard {errored}/2 --run-id pipe-4`"
    shown = evalkit_cli("show", "pipe-4", "--database", LOCAL)
    assert "no live process since " in shown.stdout and rerun in shown.stdout, shown.stdout
    assert rerun in evalkit_cli("history", "arith.basic", "--database", LOCAL).stdout
    started = time.monotonic()
    gone = evalkit_cli("report", "pipe-4", "--wait", "--timeout", "60s", "--poll", "0.2s", "--database", LOCAL)
    assert time.monotonic() - started < 30 and gone.code == 3 and rerun in gone.stderr, gone.stderr

    # run again here, it answers the errored case: meanwhile its shard is not in, the other one is
    progress = []
    answer = PromptAnswering.answer

    def answered_while_seen(self, todo, sink):  # noqa: ANN001, ANN202
        repo = _store(project)
        try:
            progress.append(repo.shard_progress("pipe-4"))
        finally:
            repo.close()
        return answer(self, todo, sink)

    monkeypatch.setattr(PromptAnswering, "answer", answered_while_seen)
    answer_with(project, ARITH_GOOD)
    again = evalkit_cli("run", "arith.basic", *shlex.split(rerun.strip("`"))[3:], "--json")
    assert again.code == 0 and again.json()["status"] == "complete", again.stderr
    (seen,) = progress
    assert seen.done == {3 - errored} and seen.answering == {errored} and seen.missing == (errored,), seen


def test_a_running_run_shows_no_finish_time_until_its_last_shard_is_in(evalkit_cli, project) -> None:
    """Shard 1/2 in, shard 2/2 answered on another machine whose process was killed (its lease
    left to be taken over): `show` printed "Finished: 2026-12-06 05:12 UTC" (and `--json` a
    `finished_at`) for the run still running, the time its first shard's finish stamped. A running
    run has no finish time; the last shard's finish gives it one."""
    from evalkit.leases import STALE_AFTER_S

    answer_with(project, ARITH_GOOD)
    first = evalkit_cli("run", "arith.basic", "--shard", "1/2", "--run-id", "pipe-5", "--database", LOCAL, "--json")
    assert first.code == 0 and first.json()["status"] == "running", first.stderr
    assert first.json()["finished_at"] is None

    def shown_running_unfinished() -> None:
        shown = evalkit_cli("show", "pipe-5", "--database", LOCAL)
        assert "Status:     running" in shown.stdout and "Finished: —" in shown.stdout, shown.stdout
        document = evalkit_cli("show", "pipe-5", "--database", LOCAL, "--json").json()
        assert (document["status"], document["finished_at"]) == ("running", None)

    shown_running_unfinished()  # shard 2/2 not started
    _killed_elsewhere(project, "pipe-5", "2/2", age=STALE_AFTER_S + 5, shard_count=2)
    shown_running_unfinished()  # shard 2/2 killed on another machine, its lease stale: taken over next
    done = evalkit_cli("run", "arith.basic", "--shard", "2/2", "--run-id", "pipe-5", "--database", LOCAL)
    assert done.code == 0, done.stdout + done.stderr
    document = evalkit_cli("show", "pipe-5", "--database", LOCAL, "--json").json()
    assert document["status"] == "complete" and document["finished_at"] is not None


def test_the_line_that_continues_a_killed_run_names_the_store_the_reading_command_was_given(
    evalkit_cli, project
) -> None:
    """`history`, `show`, `compare` and `report` of a store named by `--database` printed "continue
    it with `evalkit run arith.basic --provider my-app --resume nightly-7`": pasted, it looked in the
    default store and said there was no such run. The line repeats the `--database` (and `--config`)
    the reading command was given, as the run's own interrupted line does."""
    from evalkit.leases import STALE_AFTER_S

    shared = project / "shared" / "team.db"
    shared.parent.mkdir()
    url = f"sqlite:///{shared}"
    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--database", url, "--run-id", "base-1").code == 0
    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--database", url, "--run-id", "nightly-7").code == 3
    _killed_elsewhere(project, "nightly-7", age=STALE_AFTER_S + 5, url=url)

    resume = f"`evalkit run arith.basic --provider my-app --database {shlex.quote(url)} --resume nightly-7`"
    assert resume in evalkit_cli("history", "arith.basic", "--database", url).stdout
    assert resume in evalkit_cli("show", "nightly-7", "--database", url).stdout
    assert resume in " ".join(evalkit_cli("compare", "base-1", "nightly-7", "--database", url).stdout.split())
    assert resume in evalkit_cli("report", "nightly-7", "--database", url, "-o", "now.html").stdout
    answer_with(project, ARITH_GOOD)
    resumed = evalkit_cli(*shlex.split(resume.strip("`"))[1:], "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr
