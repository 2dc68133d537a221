"""A process that joins a run (a CI shard, ``--run-id`` of a run that is running) and cannot take
its lease — the store's write lock held past the busy timeout, Ctrl-C while it waits — never held
the run: it must leave the run's status to the process that answers it (it marked it interrupted
while another process was answering it)."""

from __future__ import annotations

import sqlite3

import pytest

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

LOCAL = "sqlite:///.evalkit/results.db"
NOT_HELD = "its status is left as it is: this process never took its lease (another process may be answering it)"


def status_of(project, run_id: str) -> str:  # noqa: ANN001
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        return connection.execute("SELECT status FROM evalkit_run WHERE id = ?", (run_id,)).fetchone()[0]


def answered_by_another_process(evalkit_cli, project) -> None:  # noqa: ANN001
    """Run ci-1 stored as running, its shard 2/2 answered (again) by a live process."""
    from evalkit.storage import close_repository, open_repository
    from evalkit.storage.values import LeaseOwner

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--shard", "2/2", "--run-id", "ci-1", "--database", LOCAL).code == 0
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repository.acquire_lease("ci-1", "2/2", LeaseOwner.this_process(), shard_count=2)
    finally:
        close_repository(repository)
    assert status_of(project, "ci-1") == "running"


def lock_held_while_leasing(project, monkeypatch, then: type[BaseException] | None = None, rival: str | None = None) -> None:  # noqa: ANN001
    """Another process's write transaction holds the store's lock while this one asks for its
    lease, past the busy timeout (``then``: Ctrl-C while it waits, instead), and ends after.
    ``rival``: a part another live process took the moment before (shards started at once)."""
    from evalkit.storage import close_repository, open_repository
    from evalkit.storage.sql import leases
    from evalkit.storage.values import LeaseOwner

    real = leases.Leases.acquire_lease

    def behind_a_held_lock(self, run_id, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if rival is not None:
            repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
            try:
                real(repository, run_id, rival, LeaseOwner.this_process(), shard_count=int(rival.split("/")[1]))
            finally:
                close_repository(repository)
        other = sqlite3.connect(project / ".evalkit" / "results.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            if then is not None:
                raise then
            return real(self, run_id, *args, **kwargs)
        finally:
            other.execute("ROLLBACK")
            other.close()

    monkeypatch.setattr(leases.Leases, "acquire_lease", behind_a_held_lock)
    monkeypatch.setenv("EVALKIT_BUSY_TIMEOUT", "0.2")


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (("--shard", "1/2", "--run-id", "ci-1"), "--shard 1/2 --run-id ci-1"),
        (("--run-id", "ci-1"), "--resume ci-1"),
    ],
)
def test_a_joiner_whose_lease_times_out_on_the_lock_leaves_the_run_as_it_is(evalkit_cli, project, monkeypatch, args, command) -> None:
    answered_by_another_process(evalkit_cli, project)
    lock_held_while_leasing(project, monkeypatch)
    joined = evalkit_cli("run", "arith.basic", *args, "--database", LOCAL, "--json")
    assert joined.code == 3, joined.stderr
    assert joined.stderr == (
        "evalkit: error: the results store failed during run ci-1: database is locked after 0.2 s (another process held "
        f"the write lock that long) — 2 cases committed before the fault are kept, {NOT_HELD}; continue it with "
        f"`evalkit run arith.basic --database sqlite:///.evalkit/results.db {command}`\n"
    )
    assert joined.json()["exit_code"] == 3
    assert status_of(project, "ci-1") == "running"


def test_ctrl_c_while_a_joiner_waits_for_its_lease_leaves_the_run_as_it_is(evalkit_cli, project, monkeypatch) -> None:
    answered_by_another_process(evalkit_cli, project)
    lock_held_while_leasing(project, monkeypatch, then=KeyboardInterrupt)
    joined = evalkit_cli("run", "arith.basic", "--shard", "1/2", "--run-id", "ci-1", "--database", LOCAL)
    assert joined.code == 3 and "interrupted: run ci-1 keeps its finished cases" in joined.stderr, joined.stderr
    assert status_of(project, "ci-1") == "running"


def test_a_run_this_process_began_is_marked_interrupted_when_its_lease_times_out(evalkit_cli, project, monkeypatch) -> None:
    """No other process answers a run this process stored itself: it is marked interrupted, not
    left running for ever with no lease to say it is gone."""
    answer_with(project, ARITH_GOOD)
    lock_held_while_leasing(project, monkeypatch)
    began = evalkit_cli("run", "arith.basic", "--run-id", "mine-1", "--database", LOCAL)
    assert began.code == 3 and "the run is marked interrupted" in began.stderr, began.stderr
    assert status_of(project, "mine-1") == "interrupted"


def test_a_shard_that_began_the_run_another_shard_already_answers_leaves_it_as_it_is(evalkit_cli, project, monkeypatch) -> None:
    """Shards started at once each find no run and store it (one row results): the one whose lease
    times out while the other answers must not mark the run interrupted."""
    answer_with(project, ARITH_GOOD)
    lock_held_while_leasing(project, monkeypatch, rival="2/2")
    began = evalkit_cli("run", "arith.basic", "--shard", "1/2", "--run-id", "ci-2", "--database", LOCAL)
    assert began.code == 3 and NOT_HELD in began.stderr, began.stderr
    assert status_of(project, "ci-2") == "running"


def test_ctrl_c_right_after_the_run_is_stored_marks_it_interrupted_not_running_unleased(evalkit_cli, project, monkeypatch) -> None:
    """A Ctrl-C between begin_run's commit and the lease left the run stored running with no lease
    (and no process answering it) for ever: it is marked interrupted and said resumable."""
    from evalkit.storage.sql import runs

    answer_with(project, ARITH_GOOD)
    real = runs.RunsAndCases.begin_run

    def committed_then_interrupted(self, run):  # noqa: ANN001, ANN202
        real(self, run)
        raise KeyboardInterrupt

    monkeypatch.setattr(runs.RunsAndCases, "begin_run", committed_then_interrupted)
    began = evalkit_cli("run", "arith.basic", "--run-id", "mine-2", "--database", LOCAL)
    assert began.code == 3 and "interrupted: run mine-2" in began.stderr and "--resume mine-2" in began.stderr, began.stderr
    assert status_of(project, "mine-2") == "interrupted"


def test_ctrl_c_before_the_run_is_stored_stores_nothing(evalkit_cli, project, monkeypatch) -> None:
    from evalkit.storage.sql import runs

    answer_with(project, ARITH_GOOD)

    def interrupted(self, run):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(runs.RunsAndCases, "begin_run", interrupted)
    began = evalkit_cli("run", "arith.basic", "--run-id", "mine-3", "--database", LOCAL)
    assert began.code != 0 and "mine-3" not in began.stderr, began.stderr
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT count(*) FROM evalkit_run").fetchone()[0] == 0


def test_ctrl_c_as_the_stored_header_is_returned_marks_the_run_interrupted(evalkit_cli, project, monkeypatch) -> None:
    """A Ctrl-C met after begin_run's guard returned, before the lifecycle's ``try`` that handles a
    stored run's stop, escaped bare: the run was left stored running without a lease (show called
    it killed). begin_run is called inside that ``try`` now: the run is marked interrupted."""
    from evalkit.run import lifecycle

    answer_with(project, ARITH_GOOD)
    real = lifecycle._Lifecycle._store_header

    def returned_then_interrupted(self, header):  # noqa: ANN001, ANN202
        real(self, header)
        raise KeyboardInterrupt

    monkeypatch.setattr(lifecycle._Lifecycle, "_store_header", returned_then_interrupted)
    began = evalkit_cli("run", "arith.basic", "--run-id", "mine-5", "--database", LOCAL)
    assert began.code == 3 and "interrupted: run mine-5" in began.stderr and "--resume mine-5" in began.stderr, (
        began.stderr
    )
    assert status_of(project, "mine-5") == "interrupted"


def test_evalkits_own_bug_in_begin_run_before_it_is_stored_is_raised_as_it_is(
    evalkit_cli, project, monkeypatch
) -> None:
    """Not stored yet: what begin_run's guard raises as it is (evalkit's own bug) is not said to
    be a stored run's ("kept"), now that the guard is inside the run's ``try``; exit 3, as every
    internal error."""
    from evalkit.storage.sql import runs

    answer_with(project, ARITH_GOOD)

    def broken(self, run):  # noqa: ANN001, ANN202
        raise ZeroDivisionError("evalkit's own bug")

    monkeypatch.setattr(runs.RunsAndCases, "begin_run", broken)
    began = evalkit_cli("run", "arith.basic", "--run-id", "mine-6", "--database", LOCAL)
    assert began.code == 3 and "ZeroDivisionError: evalkit's own bug — no run was stored" in began.stderr, began.stderr
    assert "mine-6" not in began.stderr and "interrupted" not in began.stderr, began.stderr
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT count(*) FROM evalkit_run").fetchone()[0] == 0


def test_a_store_failing_in_begin_run_is_exit_3_with_nothing_stored(evalkit_cli, project, monkeypatch) -> None:
    """The disk full as the run is first stored was exit 2, bad usage, as if the store were
    damaged: the environment's fault is exit 3 (as at open and mid-run), and nothing was stored."""
    import peewee
    from evalkit.storage.sql import runs
    from evalkit.storage.sql.store import guarded

    answer_with(project, ARITH_GOOD)

    @guarded
    def full(self, run):  # noqa: ANN001, ANN202
        raise peewee.OperationalError("database or disk is full")

    monkeypatch.setattr(runs.RunsAndCases, "begin_run", full)
    began = evalkit_cli("run", "arith.basic", "--run-id", "mine-4", "--database", LOCAL, "--json")
    assert began.code == 3, began.stderr
    assert (
        f"the results store failed before run mine-4 was stored: database {LOCAL}: database or disk is full — nothing was stored"
        in began.stderr
    ), began.stderr
    assert began.json()["runs_kept"] == []
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT count(*) FROM evalkit_run").fetchone()[0] == 0


def test_a_store_failing_in_begin_run_of_a_stored_run_says_what_was_kept(evalkit_cli, project, monkeypatch) -> None:
    """``--resume`` of a stored run whose begin_run fails: the run is in the store, so the failure
    is that of a stored run (its cases kept, the command that continues it), not "nothing stored".
    No process answers it: it said "this process never took its lease (another process may be
    answering it)", true by the lease rule but no help; it now says to run the resume again."""
    from evalkit.errors import StoreFailure
    from evalkit.storage.sql import runs

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--run-id", "mine-5", "--database", LOCAL).code in (1, 3)
    real = runs.RunsAndCases.begin_run

    def full(self, run):  # noqa: ANN001, ANN202
        if run.id == "mine-5":
            raise StoreFailure("database or disk is full")
        return real(self, run)

    monkeypatch.setattr(runs.RunsAndCases, "begin_run", full)
    resumed = evalkit_cli("run", "arith.basic", "--resume", "mine-5", "--database", LOCAL)
    assert resumed.code == 3, resumed.stderr
    assert "the results store failed during run mine-5: database or disk is full" in resumed.stderr, resumed.stderr
    assert "--resume mine-5" in resumed.stderr and "nothing was stored" not in resumed.stderr
    assert NOT_HELD not in resumed.stderr and "another process" not in resumed.stderr, resumed.stderr
    assert resumed.stderr.rstrip().endswith(
        "its status is left as it is (the store failed before this process took the run up); once the store works, "
        f"run `evalkit run arith.basic --database {LOCAL} --resume mine-5` again"
    ), resumed.stderr
    assert evalkit_cli("show", "mine-5", "--database", LOCAL).stdout.count("Status:     incomplete") == 1
