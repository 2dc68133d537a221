"""`evalkit run --resume/--shard/--run-id`: what is refused before anything runs, and resuming an
incomplete run answers only its errored cases."""

from __future__ import annotations

import json
import os
import socket
import sqlite3

import pytest

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with


def stored_run_count(project) -> int:  # noqa: ANN001
    db = project / ".evalkit" / "results.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT COUNT(*) FROM evalkit_run").fetchone()[0]


#: The project's own SQLite store, named: a shard's store must be (see the last two cases below).
LOCAL = "sqlite:///.evalkit/results.db"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--shard", "1/3", "--database", LOCAL), "--shard needs --run-id"),
        (("--shard", "0/3", "--run-id", "x", "--database", LOCAL), "--shard 0/3: I must be between 1 and N"),
        (("--shard", "two", "--run-id", "x", "--database", LOCAL), "--shard must look like I/N"),
        # more slices than the store keeps as an integer: it failed with OverflowError after the checks
        (
            ("--shard", "1/99999999999999999999", "--run-id", "x", "--database", LOCAL),
            "--shard 1/99999999999999999999: N must be a whole number from 1 to 999,999,999",
        ),
        (
            ("--shard", "1/0", "--run-id", "x", "--database", LOCAL),
            "--shard 1/0: N must be a whole number from 1 to 999,999,999",
        ),
        # a shard's store is shared by every job of the run: one chosen by default, unnamed, is refused
        (("--shard", "1/3", "--run-id", "x"), "--shard needs a store every job of the run shares"),
        (("--wait-for-shards", "--run-id", "x"), "--wait-for-shards needs a store every job of the run shares"),
        (("--resume", "a", "--run-id", "b"), '--resume "a" and --run-id "b" name two different runs'),
        (("--run-id", "../etc"), 'run id "../etc" must be 1 to 64 letters'),
        (("--resume",), "--resume: there is no store at "),
    ],
)
def test_bad_resume_and_shard_options_exit_2_with_nothing_stored(evalkit_cli, project, args, message) -> None:
    result = evalkit_cli("run", "evalkit.smoke", *args)
    assert result.code == 2 and message in result.stderr
    assert stored_run_count(project) == 0


def test_a_complete_run_is_not_resumed_and_another_set_or_generator_cannot_join(evalkit_cli, project) -> None:
    done = evalkit_cli("run", "evalkit.smoke", "--run-id", "nightly-1")
    assert done.code == 0
    again = evalkit_cli("run", "evalkit.smoke", "--resume", "nightly-1")
    assert again.code == 2 and "run nightly-1 is already complete; there is nothing to resume" in again.stderr
    other_set = evalkit_cli("run", "arith.basic", "--run-id", "nightly-1")
    assert (
        other_set.code == 2 and 'run nightly-1 is a run of set "evalkit.smoke", not "arith.basic"' in other_set.stderr
    )
    answer_with(project, {})
    other_generator = evalkit_cli("run", "evalkit.smoke", "--run-id", "nightly-1")
    assert other_generator.code == 2 and 'is answered by "reference/reference"' in other_generator.stderr
    assert stored_run_count(project) == 1


def test_a_shard_of_a_complete_run_with_another_n_is_refused_naming_the_stored_count(evalkit_cli, project) -> None:
    # `--shard 1/3` on a run its two shards completed was given the run's verdict, answering
    # nothing (a changed job matrix went unseen); while the run is open it was already refused
    shard = ("run", "evalkit.smoke", "--run-id", "ci-9", "--database", LOCAL, "--shard")
    assert evalkit_cli(*shard, "1/2").code == 0 and evalkit_cli(*shard, "2/2").code == 0
    other = evalkit_cli(*shard, "1/3", "--json")
    assert other.code == 2, other.stdout + other.stderr
    assert "--shard 1/3: run ci-9 is split into 2 shards by the shards already stored" in other.stderr
    assert "already complete" not in other.stdout + other.stderr
    again = evalkit_cli(*shard, "2/2")  # a later attempt of the same matrix still finds the verdict
    assert again.code == 0 and "Run ci-9 is already complete" in again.stdout + again.stderr
    assert stored_run_count(project) == 1


def test_resuming_an_incomplete_run_answers_only_its_errored_cases(evalkit_cli, project) -> None:
    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    broken = evalkit_cli("run", "arith.basic", "--json")
    assert broken.code == 3 and broken.json()["status"] == "incomplete"
    answer_with(project, {"json-sum": '{"sum": 7}'})  # every other line is gone: only json-sum can be answered
    resumed = evalkit_cli("run", "arith.basic", "--resume", "--json")
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    document = resumed.json()
    assert document["run_id"] == broken.json()["run_id"]
    assert document["status"] == "complete" and document["passed"] == 6 and document["verified"]
    assert "Resuming run" in " ".join(document["notes"]) and document["verdict"]["state"] == "baseline"
    assert stored_run_count(project) == 1


def test_an_internal_error_after_the_run_is_stored_says_it_is_interrupted_and_resumable(
    evalkit_cli, project, monkeypatch
) -> None:
    """An evalkit bug raising after the run row exists exited 2, whose meaning is "nothing called,
    nothing stored", while the run was stored with its answers and marked interrupted."""
    from evalkit.run.answering.prompts import PromptAnswering

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in finishing the run")

    answer_with(project, ARITH_GOOD)
    monkeypatch.setattr(PromptAnswering, "finish", broken)
    crashed = evalkit_cli("run", "arith.basic", "--run-id", "crash-1", "--json")
    assert crashed.code == 3, crashed.stderr
    assert (
        "evalkit: error: internal error (an evalkit bug) during run crash-1: RuntimeError: a bug in finishing the run"
        in crashed.stderr
    )
    assert "6 cases committed before it are kept, the run is marked interrupted" in crashed.stderr
    resume = "`evalkit run arith.basic --resume crash-1`"
    assert f"continue it with {resume}" in crashed.stderr, crashed.stderr
    assert "Traceback" in crashed.stderr and "in broken" in crashed.stderr, "a bug report needs the traceback"
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT status FROM evalkit_run WHERE id = 'crash-1'").fetchone() == ("interrupted",)

    monkeypatch.undo()
    resumed = evalkit_cli(*resume.strip("`").split()[1:], "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


def test_an_internal_error_during_a_run_gives_the_resume_command_as_it_was_given(
    evalkit_cli, project, monkeypatch
) -> None:
    """The bug's resume line was the lifecycle's own: a retrieval run's left out --database, and
    pasted it looked in the default store ("there is no run"). It is the command as given, as a
    Ctrl-C's or a failing store's is, and the traceback under it is still the bug's."""
    from evalkit.run.answering.questions import QuestionAnswering

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in finishing the run")

    monkeypatch.setattr(QuestionAnswering, "finish", broken)
    database = f"sqlite:///{project / 'elsewhere.db'}"
    words = ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    crashed = evalkit_cli(*words, "--run-id", "crash-3", "--database", database)
    assert crashed.code == 3, crashed.stderr
    resume = f"evalkit retrieval evalkit_stdlib.docs evalkit.lexical --deployment demo --database {database} --resume crash-3"
    assert f"the run is marked interrupted; continue it with `{resume}`" in crashed.stderr, crashed.stderr
    assert "in broken" in crashed.stderr, "a bug report needs the traceback"
    monkeypatch.undo()
    resumed = evalkit_cli(*resume.split()[1:], "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


def test_an_internal_error_after_the_run_is_finished_says_it_is_stored_complete(
    evalkit_cli, project, monkeypatch
) -> None:
    """The bug came after the run was finished: it keeps its status, and nothing offers to resume it."""
    from evalkit.run import lifecycle

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in deciding the verdict")

    answer_with(project, ARITH_GOOD)
    monkeypatch.setattr(lifecycle, "settle", broken)
    crashed = evalkit_cli("run", "arith.basic", "--run-id", "crash-2")
    assert crashed.code == 3, crashed.stderr
    assert (
        "evalkit: error: internal error (an evalkit bug) after run crash-2 was stored complete: RuntimeError: a bug in "
        "deciding the verdict — its cases are kept; its verdict may not be recorded (`evalkit show crash-2` says)"
    ) in crashed.stderr
    assert "--resume" not in crashed.stderr.split("Traceback")[0]
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT status FROM evalkit_run WHERE id = 'crash-2'").fetchone() == ("complete",)


def test_an_internal_error_taking_the_lease_marks_the_stored_run_interrupted(evalkit_cli, project, monkeypatch) -> None:
    """The lease is taken after the run is stored as running: a bug there exited 2 ("nothing
    called, nothing stored") and left the run running for ever, with no lease to say it was gone."""
    from evalkit.run import lifecycle

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in taking the lease")

    answer_with(project, ARITH_GOOD)
    monkeypatch.setattr(lifecycle.RunLease, "take", broken)
    crashed = evalkit_cli("run", "arith.basic", "--run-id", "lease-1")
    assert crashed.code == 3, crashed.stderr
    assert (
        "internal error (an evalkit bug) during run lease-1: RuntimeError: a bug in taking the lease" in crashed.stderr
    )
    assert (
        "the run is marked interrupted; continue it with `evalkit run arith.basic --resume lease-1`" in crashed.stderr
    )
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT status FROM evalkit_run WHERE id = 'lease-1'").fetchone() == ("interrupted",)
    monkeypatch.undo()
    resumed = evalkit_cli("run", "arith.basic", "--resume", "lease-1", "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


@pytest.mark.parametrize(
    ("words", "module", "name"),
    [
        (("run", "arith.basic"), "evalkit.cli.run_cmd", "_print_outcome"),
        (("run", "arith.basic", "--json"), "evalkit.cli.run_cmd", "_print_outcome"),
        (
            ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo"),
            "evalkit.cli.retrieval_cmd",
            "render_outcome",
        ),
        (("regrade", "first-1"), "evalkit.cli.render", "render_outcome"),
    ],
)
def test_an_internal_error_after_the_run_is_stored_names_the_kept_run(
    evalkit_cli, project, monkeypatch, words, module, name
) -> None:
    """A bug outside the run's lifecycle — printing its outcome — exited 2, "nothing called, nothing
    stored", while the run was stored, complete and with its verdict: every command that stores a
    run says so at the one place errors end a command (exit 3, the run id, how to see it)."""
    import importlib

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in printing the outcome")

    answer_with(project, ARITH_GOOD)
    if words[0] == "regrade":
        assert evalkit_cli("run", "arith.basic", "--run-id", "first-1", "--privacy", "full").code == 0
    monkeypatch.setattr(importlib.import_module(module), name, broken)
    crashed = evalkit_cli(*words)
    assert crashed.code == 3, crashed.stdout + crashed.stderr
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        (run_id,) = connection.execute("SELECT id FROM evalkit_run ORDER BY started_at DESC LIMIT 1").fetchone()
    assert (
        f"evalkit: error: internal error (an evalkit bug) after run {run_id} was stored: RuntimeError: a bug in printing "
        f"the outcome — the run and its results are kept (see `evalkit show {run_id}`)"
    ) in crashed.stderr
    assert "Traceback" in crashed.stderr and "in broken" in crashed.stderr, "a bug report needs the traceback"
    monkeypatch.undo()
    assert evalkit_cli("show", run_id).code == 0


def test_a_store_that_fails_while_the_stored_run_is_printed_does_not_say_nothing_was_stored(
    evalkit_cli, project, monkeypatch
) -> None:
    """A store error is exit 2 ("nothing called, nothing stored") before a run: after the run was
    stored (its cases read back to print them, a PostgreSQL connection lost) it exited 2 all the
    same, not a word about the run; it is exit 3, naming the kept run."""
    import contextlib

    from evalkit.cli import run_cmd
    from evalkit.errors import StoreFailure

    @contextlib.contextmanager
    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise StoreFailure("connection to PostgreSQL lost", connection_lost=True)
        yield

    answer_with(project, ARITH_GOOD)
    monkeypatch.setattr(run_cmd, "stored_cases", broken)
    failed = evalkit_cli("run", "arith.basic", "--run-id", "read-1")
    assert failed.code == 3, failed.stderr
    assert failed.stderr.splitlines() == [
        "evalkit: error: connection to PostgreSQL lost",
        "evalkit: run read-1 was stored before this error: the run and its results are kept (see `evalkit show read-1`)",
    ]


def test_a_refused_lease_leaves_the_run_another_process_answers_as_it_is(evalkit_cli, project) -> None:
    """An error of exit 2 after the lease marks the run interrupted; the lease's own refusal (another
    live process answers the run) comes before this process holds it, and must not touch that run."""
    from evalkit.storage import close_repository, open_repository
    from evalkit.storage.values import LeaseOwner

    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})
    assert evalkit_cli("run", "arith.basic", "--run-id", "held-1").code == 3
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        # a live process answers it now (another one: a lease of this very pid is another call in this process)
        repository.acquire_lease("held-1", "*", LeaseOwner(socket.gethostname(), os.getppid(), "another"))
    finally:
        close_repository(repository)
    refused = evalkit_cli("run", "arith.basic", "--resume", "held-1")
    assert refused.code == 2 and "run held-1 is being answered by another process" in refused.stderr, refused.stderr
    with sqlite3.connect(project / ".evalkit" / "results.db") as connection:
        assert connection.execute("SELECT status FROM evalkit_run WHERE id = 'held-1'").fetchone() == ("incomplete",)


def test_an_internal_error_before_the_run_is_stored_says_no_run_was_stored(evalkit_cli, project, monkeypatch) -> None:
    """The message says no run was stored; the exit code is 3, an internal error's, stored runs or not."""
    from evalkit.run import lifecycle

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in beginning the run")

    answer_with(project, ARITH_GOOD)
    monkeypatch.setattr(lifecycle._Lifecycle, "_begin", broken)
    crashed = evalkit_cli("run", "arith.basic", "--run-id", "never-1")
    assert crashed.code == 3, crashed.stderr
    assert (
        "evalkit: internal error (an evalkit bug): RuntimeError: a bug in beginning the run — no run was stored"
        in crashed.stderr
    )
    assert stored_run_count(project) == 0


@pytest.mark.parametrize(
    ("words", "option"),
    [
        (("run", "arith.basic", "--resume"), "--resume"),
        (("run", "arith.basic", "--resume", "r-1"), "--resume"),
        (("run", "arith.basic", "--baseline", "r-1"), "--baseline"),
        (("run", "arith.basic", "--answers-from", "r-1"), "--answers-from"),
        (("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", "--resume"), "--resume"),
        (
            ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", "--baseline", "r-1"),
            "--baseline",
        ),
    ],
)
def test_an_option_that_needs_a_stored_run_leaves_no_store_behind_when_there_is_none(
    evalkit_cli, project, words, option
) -> None:
    # The refusal came after the store was made: a fresh project was left with an empty store.
    answer_with(project, ARITH_GOOD)
    refused = evalkit_cli(*words)
    assert refused.code == 2
    assert f"{option}: there is no store at " in refused.stderr and "yet, so there is no run to find" in refused.stderr
    assert not (project / ".evalkit" / "results.db").exists()


def test_a_rerun_shard_of_a_run_whose_verdict_the_store_failed_to_record_says_one_true_thing(
    evalkit_cli, project, monkeypatch
) -> None:
    """The store failed while the last shard recorded the verdict (the run stored complete): a CI
    re-run of that shard decided the verdict again and printed "… — recorded as the baseline." then
    "Not accepted as the baseline: the run could not be compared." (exit 0). Neither was true: the
    verdict is now recorded and the run accepted, as the failed job would have done."""
    from evalkit.errors import StoreFailure
    from evalkit.storage.sql import SqlRepository

    shard = ("run", "evalkit.smoke", "--shard", "2/2", "--run-id", "ci-7", "--database", LOCAL)
    assert evalkit_cli("run", "evalkit.smoke", "--shard", "1/2", "--run-id", "ci-7", "--database", LOCAL).code == 0

    def full(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise StoreFailure("database or disk is full")

    monkeypatch.setattr(SqlRepository, "record_verdict", full)
    failed = evalkit_cli(*shard)
    assert failed.code == 3 and "after run ci-7 was stored complete: database or disk is full" in failed.stderr, (
        failed.stderr
    )
    monkeypatch.undo()
    again = evalkit_cli(*shard)
    assert again.code == 0, again.stderr
    said = again.stdout + again.stderr
    assert "its verdict, which the store failed to record when its last shard finished, is recorded now" in said, said
    assert (
        "recorded as the baseline." in said
        and "Accepted as the baseline of its scope (automatically: the first run" in said
    ), said
    assert "Not accepted" not in said and "could not be compared" not in said, said
    shown = evalkit_cli("baseline", "show", "evalkit.smoke", "--json", "--database", LOCAL)
    assert "ci-7" in shown.stdout, shown.stdout + shown.stderr


@pytest.mark.parametrize(
    ("words", "answering"),
    [
        (("run", "evalkit.smoke"), "evalkit.run.answering.prompts.PromptAnswering"),
        (
            ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo"),
            "evalkit.run.answering.questions.QuestionAnswering",
        ),
    ],
    ids=["prompts", "retrieval"],
)
def test_a_failed_shard_says_to_run_the_shard_again_not_to_resume_the_whole_run(
    evalkit_cli, project, monkeypatch, words, answering
) -> None:
    """A shard the store failed under said "continue it with `… --resume ID`": a resume answers the
    whole run, and is refused while another shard answers it. The line re-runs the shard itself,
    with the options as they were typed."""
    import importlib

    from evalkit.errors import StoreFailure

    module, _, name = answering.rpartition(".")
    kind = getattr(importlib.import_module(module), name)

    def full(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise StoreFailure("database or disk is full")

    monkeypatch.setattr(kind, "finish", full)
    failed = evalkit_cli(*words, "--shard", "1/2", "--run-id", "sh-1", "--database", LOCAL)
    assert failed.code == 3, failed.stderr
    again = f"evalkit {' '.join(words)} --database {LOCAL} --shard 1/2 --run-id sh-1"
    assert failed.stderr.rstrip().endswith(f"continue it with `{again}`"), failed.stderr
    monkeypatch.undo()
    rerun = evalkit_cli(*again.split()[1:])
    assert rerun.code == 0 and "Shard done" in rerun.stdout + rerun.stderr, rerun.stderr


def test_a_shard_its_request_limit_stopped_prints_the_shards_own_command(evalkit_cli, project) -> None:
    """The note of a shard stopped by --max-requests said `--resume RUN_ID`: a resume answers the
    whole run (refused while another shard answers it); the printed command now runs the shard
    again, and pasted as printed it finishes the shard's slice."""
    from tests.cli.test_costs import resume_words

    answer_with(project, ARITH_GOOD)
    stopped = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--shard", "1/2", "--run-id", "cap-1", "--database", LOCAL,
                          "--max-requests", "1")  # fmt: skip
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    words = resume_words(stopped.stdout)
    assert words[:3] == ["run", "arith.basic", "--provider"] and words[-6:-2] == ["--shard", "1/2", "--run-id", "cap-1"], words
    assert stored_limit_stops(project, "cap-1") == {
        "1/2": {
            "limit": "max_requests",
            "value": "1",
            "currency": None,
            "resume_limits": words[words.index("--max-requests") :][:2],
        }
    }
    again = evalkit_cli(*words)
    assert again.code == 0 and "Shard done: " in again.stdout, again.stdout + again.stderr
    assert stored_limit_stops(project, "cap-1") == {}  # the shard finished its slice: no limit stops it now


def killed_while_answering(evalkit_cli, monkeypatch, *args: str) -> None:  # noqa: ANN001
    """``evalkit ARGS`` stopped as a ``kill -9`` stops it once it answers: the run is not finished,
    its lease not given up, nothing marked interrupted."""
    from evalkit.run import lifecycle
    from evalkit.storage.sql.repository import SqlRepository

    def dies(*_args, **_kwargs):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt

    with monkeypatch.context() as killed:
        killed.setattr(SqlRepository, "finish_run", dies)
        killed.setattr(lifecycle.RunLease, "give_up", lambda self, done: None)
        killed.setattr(lifecycle, "mark_interrupted", lambda store, run_id: False)
        evalkit_cli(*args)


def left_long_ago(project, run_id: str, part: str) -> None:  # noqa: ANN001
    """The lease on ``part`` of ``run_id`` as a process on another machine left it, heard from long ago."""
    from evalkit.leases import STALE_AFTER_S
    from evalkit.storage import close_repository, open_repository

    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        then = repo._store_now() - STALE_AFTER_S - 5
        owner = {repo.Lease.owner_host: "ci-7", repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}
        repo.Lease.update(owner).where((repo.Lease.run == run_id) & (repo.Lease.part == part)).execute()
    finally:
        close_repository(repo)


def stored_status(project, run_id: str) -> str:  # noqa: ANN001
    """The status ``run_id`` has in the project's store."""
    from evalkit.storage import close_repository, open_repository

    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        return repo.get_run(run_id, with_cases=False).status.value
    finally:
        close_repository(repo)


def stored_limit_stops(project, run_id: str) -> dict:  # noqa: ANN001
    """The limit stops run ``run_id`` keeps as data (:mod:`evalkit.run.limit_stops`)."""
    from evalkit.run.limit_stops import stops_of
    from evalkit.storage import close_repository, open_repository

    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        return stops_of(repository.get_run(run_id, with_cases=False))
    finally:
        close_repository(repository)


@pytest.mark.parametrize(
    "words",
    [("report", "ci-1/feature/x", "--wait"), ("run", "arith.basic", "--wait-for-shards", "--run-id", "ci-1/feature/x")],
    ids=["report --wait", "run --wait-for-shards"],
)
def test_the_verdict_job_does_not_wait_for_a_run_id_no_shard_can_store(evalkit_cli, project, words) -> None:
    """Every shard refuses `--run-id ci-1/feature/x` (exit 2, nothing stored); the verdict job waited
    for that run until its --timeout (30 minutes by default), then asked "did any shard start?"."""
    import time

    answer_with(project, ARITH_GOOD)
    shard = evalkit_cli("run", "arith.basic", "--shard", "1/2", "--run-id", "ci-1/feature/x", "--database", LOCAL)
    assert shard.code == 2 and 'run id "ci-1/feature/x" must be 1 to 64 letters' in shard.stderr
    # the shard is refused as its command line is read, before the store is made: another run makes it
    assert evalkit_cli("run", "arith.basic", "--database", LOCAL).code == 0
    started = time.monotonic()
    waited = evalkit_cli(*words, "--database", LOCAL, "--timeout", "20s", "--poll", "1s")
    assert waited.code == 2 and 'run id "ci-1/feature/x" must be 1 to 64 letters' in waited.stderr, waited.stderr
    assert time.monotonic() - started < 10 and "Waiting" not in waited.stderr


def test_a_shard_its_request_limit_stopped_is_not_counted_in(evalkit_cli, project) -> None:
    """A shard stopped by --max-requests gave its lease up as done: the other shard then said
    "shards 1, 2 of 2 are in" with 3 of 6 cases stored, and the run, left running by every shard,
    was continued with `--resume` instead of the stopped shard's own command."""
    from evalkit.storage import close_repository, open_repository

    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-2", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1").code == 3
    other = evalkit_cli(*base, "--shard", "2/2")
    assert other.code == 0, other.stderr
    assert "(shard 2 of 2 is in; waiting for shard 1)" in other.stdout, other.stdout
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        progress = repository.shard_progress("cap-2")
    finally:
        close_repository(repository)
    assert progress.done == {2}, progress


def test_resuming_an_ad_hoc_run_names_its_generator_never_none(evalkit_cli, project) -> None:
    # `evalkit run evalkit.smoke --resume ID` of an ad-hoc run (`--provider reference`, no configured
    # instance) said "run ID is answered by None/None; this process would answer with "reference/reference"";
    # a bare --resume by it "no unfinished run … by None/None", and --answers-from one "was answered by None/None".
    from evalkit.storage import open_repository

    assert (
        evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--run-id", "adhoc", "--privacy", "full").code
        == 0
    )
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repo.Run.update({repo.Run.status: "interrupted"}).where(repo.Run.id == "adhoc").execute()
    finally:
        repo.close()
    refused = evalkit_cli("run", "evalkit.smoke", "--resume", "adhoc")
    assert refused.code == 2
    assert (
        'run adhoc is answered by the ad-hoc "reference" generator; this process would answer with "reference/reference"'
    ) in refused.stderr
    with_model = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--model", "m\x1b", "--resume", "adhoc")
    assert (
        with_model.code == 2
        and 'would answer with the ad-hoc "reference" generator with model "m\\x1b"' in with_model.stderr
    )
    assert evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--resume", "adhoc").code == 0
    nothing = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--resume")
    assert (
        nothing.code == 2
        and 'no unfinished run of "evalkit.smoke" by the ad-hoc "reference" generator with grader' in nothing.stderr
    )
    other = evalkit_cli("run", "evalkit.smoke", "--answers-from", "adhoc")
    assert (
        other.code == 2
        and 'run adhoc was answered by the ad-hoc "reference" generator; this run asks "reference/reference"'
        in other.stderr
    )
    for result in (refused, with_model, nothing, other):
        assert "None" not in result.stderr


def test_a_stopped_answers_from_run_is_continued_with_its_answers_from(evalkit_cli, project, monkeypatch) -> None:
    # A run of `--answers-from src` that stopped said "continue it with `evalkit run arith.basic
    # --provider my-app --resume af-1`" (killed: in history/show alike): pasted, it asked the model
    # for the cases still missing, where the run reused src's answers. Both lines repeat it.
    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.run.answering.prompts import PromptAnswering
    from evalkit.storage import open_repository

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--privacy", "full", "--run-id", "src").code == 0
    with monkeypatch.context() as patched:
        patched.setattr(
            PromptAnswering, "finish", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a bug in finishing"))
        )
        crashed = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--answers-from", "src", "--run-id", "af-1")
    assert crashed.code == 3, crashed.stderr
    command = "evalkit run arith.basic --provider my-app --answers-from src --resume af-1"
    assert f"continue it with `{command}`" in crashed.stderr, crashed.stderr
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # killed half-way on machine ci-7: three cases in, the run running, a lease no one renews
        repo.Case.delete().where(
            (repo.Case.run == "af-1") & repo.Case.case_id.in_(["add-7-5", "times-table", "json-sum"])
        ).execute()
        repo.mark_status("af-1", "running")
        repo.acquire_lease("af-1", "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).execute()
    finally:
        repo.close()
    assert f"continue it with `{command}`" in " ".join(evalkit_cli("show", "af-1").stdout.split())
    answer_with(project, {})  # the model would now fail every case it is asked
    resumed = evalkit_cli(*command.split()[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    document = resumed.json()
    assert document["status"] == "complete" and document["spend"]["generator"]["requests"] == 0, document["spend"]


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        # the built-in reference instance (no provider configured, no --provider): `--provider reference`
        # named an ad-hoc reference generator, and was refused ("answered by reference/reference")
        ((), "evalkit run evalkit.smoke --resume k-1"),
        (("--model", "self-check"), "evalkit run evalkit.smoke --model self-check --resume k-1"),
        # an ad-hoc run: the hint had no --provider, and pasted was refused the same way
        (("--provider", "reference"), "evalkit run evalkit.smoke --provider reference --resume k-1"),
        (
            ("--provider", "reference", "--model", "m 1"),
            "evalkit run evalkit.smoke --provider reference --model 'm 1' --resume k-1",
        ),
    ],
)
def test_a_killed_run_of_the_reference_or_an_ad_hoc_generator_says_a_command_that_continues_it(
    evalkit_cli, project, given, hint
) -> None:
    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.storage import open_repository

    assert evalkit_cli("run", "evalkit.smoke", *given, "--run-id", "k-1").code == 0
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # killed half-way on machine ci-7
        repo.Case.delete().where((repo.Case.run == "k-1") & (repo.Case.case_id == "echo-token")).execute()
        repo.Run.update({repo.Run.status: "running"}).where(repo.Run.id == "k-1").execute()
        repo.acquire_lease("k-1", "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).execute()
    finally:
        repo.close()
    shown = " ".join(evalkit_cli("show", "k-1").stdout.split())
    assert f"continue it with `{hint}`" in shown, shown
    import shlex

    resumed = evalkit_cli(*shlex.split(hint)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"


def test_an_ad_hoc_run_is_not_continued_or_reused_by_another_adapter(evalkit_cli, project) -> None:
    # An ad-hoc run of `--provider reference --model gpt-4o`, stopped, was resumed by `--provider llm
    # --model gpt-4o`: only the instance (none) and alias were compared, so llm answered its missing
    # case into the reference run; `--answers-from` took the reference answers into an llm run alike.
    from evalkit.storage import open_repository

    adhoc = ("--provider", "reference", "--model", "gpt-4o")
    assert evalkit_cli("run", "evalkit.smoke", *adhoc, "--run-id", "ref-1", "--privacy", "full").code == 0
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repo.Run.update({repo.Run.status: "interrupted"}).where(repo.Run.id == "ref-1").execute()
        repo.Case.delete().where((repo.Case.run == "ref-1") & (repo.Case.case_id == "echo-token")).execute()
    finally:
        repo.close()
    before = evalkit_cli("show", "ref-1", "--json").json()
    other = ("--provider", "llm", "--model", "gpt-4o")
    for joined in (("--resume", "ref-1"), ("--run-id", "ref-1")):
        refused = evalkit_cli("run", "evalkit.smoke", *other, *joined, env={"OPENAI_API_KEY": ""})
        assert refused.code == 2, refused.stderr
        assert (
            'run ref-1 is answered by the ad-hoc "reference" generator with model "gpt-4o"; this process would answer '
            'with the ad-hoc "llm" generator with model "gpt-4o"'
        ) in refused.stderr
    reused = evalkit_cli("run", "evalkit.smoke", *other, "--answers-from", "ref-1", env={"OPENAI_API_KEY": ""})
    assert reused.code == 2 and 'run ref-1 was answered by the ad-hoc "reference" generator' in reused.stderr, (
        reused.stderr
    )
    assert evalkit_cli("show", "ref-1", "--json").json() == before, "nothing answered into the run"
    assert evalkit_cli("run", "evalkit.smoke", *adhoc, "--resume", "ref-1").code == 0


def _kill_half_way(project, run_id: str, case_id: str) -> None:  # noqa: ANN001
    """Leave ``run_id`` as a process killed half-way left it: ``case_id`` not stored, the run interrupted."""
    from evalkit.storage import open_repository

    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repo.Case.delete().where((repo.Case.run == run_id) & (repo.Case.case_id == case_id)).execute()
        repo.Run.update({repo.Run.status: "interrupted"}).where(repo.Run.id == run_id).execute()
    finally:
        repo.close()


def test_a_run_answered_n_times_is_not_resumed_with_another_repeats(evalkit_cli, project) -> None:
    # `--resume` of a run started with `--repeats 3` answered its missing prompts 5 times into it:
    # its cases mixed 3 and 5 answers, and a budget measured a stored case's usage as the resumed
    # run's N answers. The run's stored cases say its N: another given is refused; none given (a bare
    # `--resume`, as every line that continues a run says it) answers with the run's.
    from evalkit.storage import open_repository

    assert evalkit_cli("run", "evalkit.smoke", "--repeats", "3", "--run-id", "r-3").code == 0
    _kill_half_way(project, "r-3", "echo-token")
    for given in ("5", "1"):
        refused = evalkit_cli("run", "evalkit.smoke", "--repeats", given, "--resume", "r-3")
        assert refused.code == 2, refused.stdout + refused.stderr
        said = f"run r-3 answered each prompt with --repeats 3; this process would answer with --repeats {given}"
        assert said in refused.stderr
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # nothing stored: the case is still missing, the run as it was left
        assert not repo.Case.select().where((repo.Case.run == "r-3") & (repo.Case.case_id == "echo-token")).exists()
        assert repo.get_run("r-3", with_cases=False).status.value == "interrupted"
    finally:
        repo.close()
    resumed = evalkit_cli("run", "evalkit.smoke", "--resume", "r-3", "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        assert {case.case_id: case.answers for case in repo.get_run("r-3").cases}["echo-token"] == 3
    finally:
        repo.close()


@pytest.mark.parametrize(
    "words",
    [
        ("report", "cap-3", "--wait", "--format", "markdown"),
        ("run", "arith.basic", "--wait-for-shards", "--run-id", "cap-3"),
    ],
    ids=["report --wait", "run --wait-for-shards"],
)
def test_the_verdict_job_of_a_run_a_limit_stopped_says_the_limit(evalkit_cli, project, words) -> None:
    # The last shard stopped by --max-requests closed the run incomplete, its verdict saying "a
    # spending limit stopped it"; `report --wait` prints that recorded verdict. `run
    # --wait-for-shards` decides the run again and said "(0 errored cases)": the stop was kept only
    # in the verdict's words. The shard now keeps it as data (the run's provenance), read here.
    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-3", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "2/2").code == 0
    assert evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1").code == 3
    waited = evalkit_cli(*words, "--database", LOCAL, "--timeout", "5s", "--poll", "1s")
    assert waited.code == 3, waited.stdout + waited.stderr
    said = " ".join((waited.stdout + waited.stderr).split())
    assert "the run is incomplete (a spending limit stopped it: the limit of 1 request reached)" in said, said
    assert "0 errored" not in said


@pytest.mark.parametrize(
    "words",
    [
        ("report", "cap-6", "--wait", "--format", "markdown"),
        ("run", "arith.basic", "--wait-for-shards", "--run-id", "cap-6"),
    ],
    ids=["report --wait", "run --wait-for-shards"],
)
def test_the_verdict_job_waits_for_the_shards_a_limit_stop_came_before(evalkit_cli, project, words) -> None:
    # Shard 1 of 3 stopped by --max-requests before shards 2 and 3 started closed the run
    # incomplete: the verdict job polling then printed "the run is incomplete" and ended, while the
    # next shard reopened the run. It now waits for the shards that have not ended, until its
    # --timeout, naming them; once they have run it reports the limit stop.
    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-6", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "1/3", "--max-requests", "1").code == 3
    waited = evalkit_cli(*words, "--database", LOCAL, "--timeout", "2s", "--poll", "1s")
    said = " ".join((waited.stdout + waited.stderr).split())
    assert waited.code == 3 and "incomplete" not in said, said
    assert (
        "a spending limit stopped part of it (the limit of 1 request reached) and shards 2, 3 have not ended" in said
    ), said
    for shard in ("2/3", "3/3"):
        assert evalkit_cli(*base, "--shard", shard).code == 0
    ended = evalkit_cli(*words, "--database", LOCAL, "--timeout", "60s", "--poll", "1s")
    shown = " ".join((ended.stdout + ended.stderr).split())
    assert (
        ended.code == 3
        and "shard 1/3 of run cap-6 was stopped by a spending limit (the limit of 1 request reached)" in shown
    ), shown


@pytest.mark.parametrize(
    "words",
    [
        ("show", "cap-5"),
        ("history", "arith.basic"),
        ("report", "cap-5", "--wait", "--format", "markdown", "--timeout", "60s", "--poll", "1s"),
        (
            "run",
            "arith.basic",
            "--wait-for-shards",
            "--run-id",
            "cap-5",
            "--database",
            LOCAL,
            "--timeout",
            "60s",
            "--poll",
            "1s",
        ),
    ],
    ids=["show", "history", "report --wait", "run --wait-for-shards"],
)
def test_a_shard_a_limit_stopped_first_is_not_called_killed_and_is_continued_with_a_higher_limit(
    evalkit_cli, project, words
) -> None:
    # Shard 1 stopped by --max-requests, then shard 2 finished: the run was left running with no
    # live lease, and show/history/report --wait called it killed ("stopped without ending it
    # (killed, or its machine lost)"), their command without a higher limit (pasted, it stopped at
    # once again); the verdict jobs waited 90 s for a lease that never comes back.
    import shlex
    import time

    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-5", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1").code == 3
    assert evalkit_cli(*base, "--shard", "2/2").code == 0
    started = time.monotonic()
    said = evalkit_cli(*words)
    assert time.monotonic() - started < 30, "waited for a lease to go stale"
    shown = " ".join((said.stdout + said.stderr).split())
    assert "(killed, its machine lost, or its results store out of reach as it stopped)" not in shown, shown
    assert "shard 1/2 of run cap-5 was stopped by a spending limit (the limit of 1 request reached)" in shown, shown
    store = f" --database {LOCAL}" if "--database" in words else ""  # repeated as it was given
    hint = f"evalkit run arith.basic --provider my-app{store} --shard 1/2 --run-id cap-5 --max-requests 6"
    assert f"continue it with `{hint}`" in shown, shown
    assert words[0] != "history" or "running (stopped by a spending limit)" in shown, shown
    again = evalkit_cli(*shlex.split(hint)[1:], *([] if store else ["--database", LOCAL]), "--json")
    assert again.code == 0, again.stdout + again.stderr
    assert again.json()["status"] == "complete"


@pytest.mark.parametrize(
    "words",
    [("show", "k-2"), ("history", "arith.basic"), ("report", "k-2", "--wait", "--format", "markdown", "--timeout", "5s"),
     ("compare", "k-3", "k-2"), ("compare", "k-2", "k-3", "--json")],
)  # fmt: skip
def test_a_killed_run_of_a_configured_instance_given_another_model_is_continued_with_it(
    evalkit_cli, project, words
) -> None:
    # `--provider my-app --model my-app-mini`, killed: history and show said "continue it with
    # `evalkit run arith.basic --provider my-app --resume k-2`", which, pasted, was refused: it
    # answers with the configured alias (my-app), not the run's. The line now gives its --model;
    # `compare`'s note on such a run said it without, where history and show had it.
    import shlex

    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.storage import open_repository

    answer_with(project, ARITH_GOOD)
    assert (
        evalkit_cli("run", "arith.basic", "--provider", "my-app", "--model", "my-app-mini", "--run-id", "k-2").code == 0
    )
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--run-id", "k-3").code == 0
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # both killed half-way on machine ci-7
        repo.Case.delete().where(repo.Case.case_id == "json-sum").execute()
        repo.Run.update({repo.Run.status: "running"}).execute()
        for run_id in ("k-2", "k-3"):
            repo.acquire_lease(run_id, "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).execute()
    finally:
        repo.close()
    said = evalkit_cli(*words)
    shown = " ".join((said.stdout + said.stderr).split())
    hint = "evalkit run arith.basic --provider my-app --model my-app-mini --resume k-2"
    assert f"continue it with `{hint}`" in shown, shown
    # the configured alias is not repeated
    assert (
        words[0] not in ("history", "compare")
        or "continue it with `evalkit run arith.basic --provider my-app --resume k-3`" in shown
    ), shown
    resumed = evalkit_cli(*shlex.split(hint)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"


def _killed_half_way_on_ci_7(project, run_id: str) -> None:  # noqa: ANN001
    """What a `kill -9` on machine ci-7 leaves of ``run_id``: ``json-sum`` not stored, the run
    marked running, its lease's heartbeat older than a lease stays live."""
    from evalkit.leases import STALE_AFTER_S, LeaseOwner
    from evalkit.storage import open_repository

    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        repo.Case.delete().where((repo.Case.run == run_id) & (repo.Case.case_id == "json-sum")).execute()
        repo.Run.update({repo.Run.status: "running"}).where(repo.Run.id == run_id).execute()
        repo.acquire_lease(run_id, "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).where(
            repo.Lease.run == run_id
        ).execute()
    finally:
        repo.close()


@pytest.mark.parametrize("words", [("show", "k-4"), ("history", "arith.basic")])
@pytest.mark.parametrize(
    ("given", "repeated"),
    [(("--repeats", "3"), ("--repeats", "3")), (("--cache", "--privacy", "full"), ("--privacy", "full", "--cache"))],
    ids=["repeats", "cache"],
)
def test_a_killed_run_answered_with_repeats_or_the_cache_is_continued_with_them(
    evalkit_cli, project, words, given, repeated
) -> None:
    # `--repeats 3` or `--cache`, killed: history and show said "continue it with `evalkit run
    # arith.basic --provider my-app --resume k-4`", which, pasted, asked the model for the answers
    # the cache holds. The run keeps them; the line repeats them as the command gave them, as the
    # line the command printed itself does (`--repeats 3` too: a resume with the run's own is accepted).
    import shlex

    from evalkit.storage import open_repository

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", *given, "--run-id", "k-4").code == 0
    _killed_half_way_on_ci_7(project, "k-4")
    said = evalkit_cli(*words)
    shown = " ".join((said.stdout + said.stderr).split())
    hint = " ".join(("evalkit run arith.basic --provider my-app", *repeated, "--resume k-4"))
    assert f"continue it with `{hint}`" in shown, shown
    # the model no longer answers json-sum: only the cache does
    answer_with(
        project, ARITH_GOOD if "--repeats" in given else {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"}
    )
    resumed = evalkit_cli(*shlex.split(hint)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # every case answered as often as the run began with
        assert {case.answers for case in repo.get_run("k-4").cases} == {3 if "--repeats" in given else 1}
    finally:
        repo.close()


def test_a_killed_run_of_a_set_built_in_code_answered_with_repeats_says_its_cache_in_its_library_call() -> None:
    # repeats=3 is not said: a call that gives none continues a run with its own
    from evalkit.run.continuing import resume_hint
    from evalkit.run.placement import prompt_run_provenance
    from evalkit.runs import Run

    run = Run(
        id="r-1", set_identifier="mine.inline", grader="deterministic", provider_instance="app",
        provenance=prompt_run_provenance(True, "deterministic", repeats=3, cache=True), privacy="full",
    )  # fmt: skip
    assert resume_hint(run) == (
        '`evalkit.evaluate_set(<the in-code set "mine.inline">, <the same arguments>, run_id="r-1", resume=True, '
        'cache=True, privacy="full")`'
    )


@pytest.mark.parametrize("repeats", [1, 3])
def test_a_resume_line_never_says_the_repeats_a_bare_continuing_command_answers_with(repeats: int) -> None:
    # A continuing command without --repeats answers with the run's own, whatever the configuration
    # says when it is pasted: the line said `--repeats N` whenever the configuration it was printed
    # under was not known (a viewer built without one) or said another number. The shortest line
    # does the same; a shard's too.
    from evalkit.run.continuing import ResumeDefaults, resume_hint
    from evalkit.run.placement import prompt_run_provenance
    from evalkit.runs import Run

    run = Run(id="r-2", set_identifier="arith.basic", grader="deterministic", provider_instance="app",
              provenance=prompt_run_provenance(False, "deterministic", repeats=repeats))  # fmt: skip
    said = "`evalkit run arith.basic --provider app --resume r-2`"
    assert resume_hint(run) == said
    assert resume_hint(run, defaults=ResumeDefaults({})) == said
    assert resume_hint(run, (2,), 2) == "`evalkit run arith.basic --provider app --shard 2/2 --run-id r-2`"


def test_a_bare_resume_of_an_ad_hoc_run_continues_the_newest_run_of_its_own_adapter(evalkit_cli, project) -> None:
    # Two ad-hoc runs of model gpt-4o stopped, `--provider reference`'s then `--provider llm`'s: a
    # bare `--resume` by reference picked the newest (llm's, only the instance and alias were
    # asked for) and was refused "use the same --provider and --model", though reference's own run
    # was there to continue. It is continued; with none of its own left, the resume is refused.
    from evalkit.storage import open_repository

    adhoc = ("--provider", "reference", "--model", "gpt-4o")
    for run_id in ("ref-1", "llm-1"):
        assert evalkit_cli("run", "evalkit.smoke", *adhoc, "--run-id", run_id).code == 0
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # both stopped half-way; llm-1 (the newer) answered by the ad-hoc llm generator
        repo.Run.update({repo.Run.status: "interrupted"}).execute()
        repo.Run.update({repo.Run.adapter: "llm"}).where(repo.Run.id == "llm-1").execute()
        repo.Case.delete().where(repo.Case.case_id == "echo-token").execute()
    finally:
        repo.close()
    resumed = evalkit_cli("run", "evalkit.smoke", *adhoc, "--resume", "--json")
    assert resumed.code == 0, resumed.stderr
    assert (resumed.json()["run_id"], resumed.json()["status"]) == ("ref-1", "complete")
    assert evalkit_cli("show", "llm-1", "--json").json()["status"] == "interrupted", (
        "the other adapter's run is left as it was"
    )
    again = evalkit_cli("run", "evalkit.smoke", *adhoc, "--resume")
    assert again.code == 2, again.stdout + again.stderr
    assert (
        '--resume: no unfinished run of "evalkit.smoke" by the ad-hoc "reference" generator with model "gpt-4o"'
        in again.stderr
    )


def test_the_lines_that_resume_a_run_answered_with_the_cache_repeat_it_and_its_privacy(
    evalkit_cli, project, monkeypatch
) -> None:
    # `--cache --privacy full`, stopped by --max-requests: its line said `… --cache --max-requests 6`,
    # which, pasted, was refused ("--cache keeps full answer text …, and this run's privacy level is
    # "metadata"": a resume takes the privacy level given); the line a Ctrl-C or a failing store
    # prints (the one the process keeps once its run began) lacked --cache altogether.
    import shlex

    from evalkit.cli import ending

    answer_with(project, ARITH_GOOD)
    began: list[str] = []
    run_began = ending.run_began
    monkeypatch.setattr(ending, "run_began", lambda run_id, resume: (began.append(resume), run_began(run_id, resume)))
    stopped = evalkit_cli(
        "run",
        "arith.basic",
        "--provider",
        "my-app",
        "--cache",
        "--privacy",
        "full",
        "--max-requests",
        "1",
        "--run-id",
        "c-1",
    )
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    said = " ".join((stopped.stdout + stopped.stderr).split())
    line = "evalkit run arith.basic --provider my-app --privacy full --cache --resume c-1 --max-requests 6"
    assert f"resume it with: {line} " in said, said
    assert began == ["evalkit run arith.basic --provider my-app --privacy full --max-requests 1 --cache --resume c-1"]
    resumed = evalkit_cli(*shlex.split(line)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"


@pytest.mark.parametrize("words", [("show", "k-5"), ("history", "arith.basic")])
def test_a_killed_run_given_fewer_repeats_than_the_configured_ones_is_continued_with_them(
    evalkit_cli, project, words
) -> None:
    # `[run] repeats = 3` configured, the run started with `--repeats 1`, killed: its line said
    # "continue it with `evalkit run arith.basic --provider my-app --resume k-5`", which, pasted,
    # answered 3 times and was refused ("use --repeats 1"): only repeats above 1 were kept. A bare
    # resume now answers with the run's own; the line says the `--repeats 1` the run was given, as
    # the line its command printed does, and continues it.
    import shlex

    from evalkit.storage import open_repository

    answer_with(project, ARITH_GOOD)
    config = project / "evalkit.toml"
    config.write_text(config.read_text() + "\n[run]\nrepeats = 3\n")
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--repeats", "1", "--run-id", "k-5").code == 0
    _killed_half_way_on_ci_7(project, "k-5")
    said = evalkit_cli(*words)
    shown = " ".join((said.stdout + said.stderr).split())
    hint = "evalkit run arith.basic --provider my-app --repeats 1 --resume k-5"  # as it was given
    assert f"continue it with `{hint}`" in shown, shown
    resumed = evalkit_cli(*shlex.split(hint)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        assert {case.answers for case in repo.get_run("k-5").cases} == {1}
    finally:
        repo.close()


@pytest.mark.parametrize(
    "words",
    [("show", "k-6"), ("history", "arith.basic"), ("report", "k-6", "--format", "markdown"),
     ("report", "k-6", "--wait", "--format", "markdown", "--timeout", "5s"), ("compare", "k-7", "k-6")],
)  # fmt: skip
def test_a_killed_run_answered_with_the_configured_repeats_is_continued_with_them_once_the_configuration_changes(
    evalkit_cli, project, words
) -> None:
    # No `[run] repeats` (a bare command answers once), the run started without --repeats, killed;
    # then `[run] repeats = 3` configured: history, show, compare and report said "continue it with
    # `evalkit run arith.basic --provider my-app --resume k-6`", which, pasted, answered 3 times and
    # was refused ("use --repeats 1"): the run kept its repeats only when they differed from the
    # configuration's when it began. It keeps them always, and a bare resume answers with them: the
    # line needs no `--repeats 1` (it said one until the resume adopted them).
    import shlex

    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--run-id", "k-7").code == 0
    assert evalkit_cli("run", "arith.basic", "--provider", "my-app", "--run-id", "k-6").code == 0
    _killed_half_way_on_ci_7(project, "k-6")
    config = project / "evalkit.toml"
    config.write_text(config.read_text() + "\n[run]\nrepeats = 3\n")
    said = evalkit_cli(*words)
    shown = " ".join((said.stdout + said.stderr).split())
    hint = "evalkit run arith.basic --provider my-app --resume k-6"
    assert f"continue it with `{hint}`" in shown, shown
    resumed = evalkit_cli(*shlex.split(hint)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"


@pytest.mark.parametrize(
    ("before", "after"),
    [("\n[run]\nrepeats = 2\n", ""), ("", "\n[run]\nrepeats = 3\n")],
    ids=["2-then-none", "none-then-3"],
)
@pytest.mark.parametrize("pasted", ["limit", "ctrl-c"])
def test_the_lines_a_stopped_run_prints_continue_it_with_its_repeats_whatever_the_configuration_says(
    evalkit_cli, project, monkeypatch, before, after, pasted
) -> None:
    # The run started without --repeats (`[run] repeats = 2`, or none: answered once) and stopped by
    # --max-requests: its line said `evalkit run arith.basic --resume c-2 --provider my-app
    # --max-requests 6` (a Ctrl-C's the same without the limit), which, pasted once the
    # configuration said otherwise, answered another number of times and was refused ("use
    # --repeats 1"). A continuing command that gives no --repeats answers with the run's own: the
    # lines need not say them, and work whatever the configuration says when they are pasted.
    import shlex

    from evalkit.cli import ending
    from evalkit.run.placement import without_options
    from evalkit.storage import open_repository

    answer_with(project, ARITH_GOOD)
    config = project / "evalkit.toml"
    original = config.read_text()
    config.write_text(original + before)
    began: list[str] = []
    run_began = ending.run_began
    monkeypatch.setattr(ending, "run_began", lambda run_id, resume: (began.append(resume), run_began(run_id, resume)))
    stopped = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--max-requests", "2", "--run-id", "c-2")
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    said = " ".join((stopped.stdout + stopped.stderr).split())
    line = said.split("resume it with: ", 1)[1].split(" All ", 1)[0]
    assert line.startswith("evalkit run arith.basic --provider my-app --resume c-2 --max-requests "), said
    # a killed run's line repeats the limit it was given (the run's, counted over a resume): pasted
    # here, after the limit stopped it, it is pasted with that limit left out (a user raising it)
    assert began == ["evalkit run arith.basic --provider my-app --max-requests 2 --resume c-2"]
    config.write_text(original + after)
    ctrl_c = without_options(shlex.split(began[0]), ["--max-requests"])
    resumed = evalkit_cli(*(shlex.split(line) if pasted == "limit" else ctrl_c)[1:], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:  # every case answered as often as the run began with
        assert {case.answers for case in repo.get_run("c-2").cases} == {2 if before else 1}
    finally:
        repo.close()


def test_a_shard_that_joins_a_run_without_repeats_answers_with_the_runs(evalkit_cli, project) -> None:
    # `[run] repeats = 2` when shard 1/2 ran, none when shard 2/2 did (another job's configuration, or
    # the file changed between them): the second shard answered once and was refused ("use
    # --repeats 2"), though its command was the first's. A shard that gives no --repeats joins the
    # run with its repeats.
    from evalkit.storage import open_repository

    answer_with(project, ARITH_GOOD)
    config = project / "evalkit.toml"
    original = config.read_text()
    config.write_text(original + "\n[run]\nrepeats = 2\n")
    shard = ("run", "arith.basic", "--provider", "my-app", "--database", LOCAL, "--run-id", "sh-2", "--shard")
    assert evalkit_cli(*shard, "1/2").code == 0
    config.write_text(original)
    joined = evalkit_cli(*shard, "2/2")
    assert joined.code == 0, joined.stdout + joined.stderr
    repo = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        run = repo.get_run("sh-2")
        assert run.status.value == "complete" and {case.answers for case in run.cases} == {2}
    finally:
        repo.close()


@pytest.mark.parametrize("words", [("show", "cap-6"), ("history", "arith.basic")])
def test_a_limit_stopped_shard_run_again_and_killed_is_called_killed(evalkit_cli, project, monkeypatch, words) -> None:
    # Shard 1 stopped by --max-requests, shard 2 finished, shard 1 run again with a higher limit
    # and killed before it finished: the first attempt's limit stop was still kept, so show and
    # history said "shard 1/2 … was stopped by a spending limit" of a shard a kill stopped.
    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-6", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1").code == 3
    assert evalkit_cli(*base, "--shard", "2/2").code == 0
    killed_while_answering(evalkit_cli, monkeypatch, *base, "--shard", "1/2", "--max-requests", "6")
    left_long_ago(project, "cap-6", "1/2")
    assert stored_status(project, "cap-6") == "running"
    said = evalkit_cli(*words)
    shown = " ".join((said.stdout + said.stderr).split())
    assert "stopped by a spending limit" not in shown, shown
    assert "(killed, its machine lost, or its results store out of reach as it stopped)" in shown, shown
    assert "evalkit run arith.basic --provider my-app --shard 1/2 --run-id cap-6" in shown, shown


def test_a_shard_answering_while_another_shards_limit_closes_the_run_says_so(evalkit_cli, project, monkeypatch) -> None:
    # Shard 2 still answering when shard 1, stopped by --max-requests, closed the run incomplete:
    # shard 2 then gave a verdict of its own, "the run is incomplete (0 errored cases)", where the
    # verdict job says the limit. It now says what happened: its slice is in, the run closed by
    # shard 1's limit (as --wait-for-shards reads it), and the command that continues shard 1.
    import time

    from evalkit.run.answering.prompts import PromptAnswering
    from evalkit.run.limit_stops import LIMIT_STOPS, limit_stop
    from evalkit.storage import close_repository, open_repository

    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-7", "--database", LOCAL)
    real = PromptAnswering.finish

    def other_shard_stops_first(self, header, store, streamed):  # noqa: ANN001, ANN202
        # shard 2 has answered its slice; shard 1, elsewhere, is stopped by its limit meanwhile
        # and closes the run as its finish stores it
        repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
        try:
            stop = limit_stop("max_requests", 1, None, ("--max-requests", "6"))
            repository.finish_run("cap-7", "incomplete", time.time(), provenance={LIMIT_STOPS: {"1/2": stop}})
        finally:
            close_repository(repository)
        return real(self, header, store, streamed)

    monkeypatch.setattr(PromptAnswering, "finish", other_shard_stops_first)
    second = evalkit_cli(*base, "--shard", "2/2")
    monkeypatch.undo()
    said = " ".join((second.stdout + second.stderr).split())
    assert second.code == 0, said  # its own slice is in: shard 1's job is the one that failed (docs/ci.md)
    assert "the run is incomplete (a spending limit stopped it: the limit of 1 request reached)" in said, said
    assert "0 errored" not in said, said
    assert (
        "Shard 2/2 done: its slice is in; run cap-7 was closed incomplete because a spending limit stopped shard 1/2"
        in said
    ), said
    assert "`evalkit run arith.basic --provider my-app --shard 1/2 --run-id cap-7 --max-requests 6`" in said, said
    job = evalkit_cli(
        "run", "arith.basic", "--wait-for-shards", "--run-id", "cap-7", "--database", LOCAL, "--timeout", "5s"
    )
    read = " ".join((job.stdout + job.stderr).split())
    assert "the run is incomplete (a spending limit stopped it: the limit of 1 request reached)" in read, read


@pytest.mark.parametrize("revisable", [True, False], ids=["revise_provenance", "a store without it"])
def test_two_shards_stopped_by_a_limit_at_once_both_keep_their_stop(
    evalkit_cli, project, monkeypatch, revisable
) -> None:
    # Shard 2 stopped by its limit between shard 1's reading the run's provenance and its writing
    # it through finish_run: shard 1 wrote its own stop over shard 2's, so shard 2 read as killed
    # (its resume line without the higher limit; the verdict job waited 90 s for its lease). The
    # store merges each shard's stop with the run's row locked. A store without revise_provenance
    # (a third party's) still keeps a lone shard's stop, by finish_run, as before.
    from evalkit.run import lifecycle
    from evalkit.run.limit_stops import LIMIT_STOPS, limit_stop
    from evalkit.storage import protocols

    if not revisable:  # the store offers no RevisableProvenance (its isinstance answer is cached per class)
        without = tuple(c for c in protocols._CAPABILITIES if c[0] != "revisable")
        monkeypatch.setattr(protocols, "_CAPABILITIES", without)
    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-8", "--database", LOCAL)
    other = limit_stop("max_requests", 1, None, ("--max-requests", "9"))
    give_up = lifecycle.RunLease.give_up
    committed: list[bool] = []

    def shard_2_stops_meanwhile(self, *, done):  # noqa: ANN001, ANN202
        # between shard 1's keeping its stop and its finish_run, shard 2's stop is committed
        from evalkit.storage import close_repository, open_repository

        if committed:
            return give_up(self, done=done)
        committed.append(True)
        repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
        try:
            provenance = repository.get_run("cap-8", with_cases=False).provenance or {}
            stops = {**provenance.get(LIMIT_STOPS, {}), "2/2": other}
            repository.Run.update({repository.Run.provenance: json.dumps({**provenance, LIMIT_STOPS: stops})}).where(
                repository.Run.id == "cap-8"
            ).execute()
        finally:
            close_repository(repository)
        give_up(self, done=done)

    monkeypatch.setattr(lifecycle.RunLease, "give_up", shard_2_stops_meanwhile)
    stopped = evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1")
    monkeypatch.undo()
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    kept = stored_limit_stops(project, "cap-8")
    # without revise_provenance shard 2's is lost, as documented (docs/architecture.md)
    assert set(kept) == ({"1/2", "2/2"} if revisable else {"1/2"}), kept
    assert kept["1/2"]["resume_limits"] == ["--max-requests", "6"], kept


def test_a_limit_stopped_shard_taken_again_and_killed_keeps_no_stop_of_its_earlier_attempt(
    evalkit_cli, project, monkeypatch
) -> None:
    # Shard 1 stopped by --max-requests 1, run again with --max-requests 6 and killed before it
    # finished: `show --json` still gave the first attempt's stop under limit_stops, and the line
    # continuing shard 1 its "--max-requests 6" (only finish_run wrote the stops). The stop is
    # cleared as the shard is taken again: the shard reads as killed, its line without that limit.
    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-9", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1").code == 3
    assert set(stored_limit_stops(project, "cap-9")) == {"1/2"}
    assert evalkit_cli(*base, "--shard", "2/2").code == 0
    killed_while_answering(evalkit_cli, monkeypatch, *base, "--shard", "1/2", "--max-requests", "6")
    left_long_ago(project, "cap-9", "1/2")
    shown = evalkit_cli("show", "cap-9", "--json")
    assert shown.code == 0 and shown.json()["limit_stops"] == {}, shown.stdout
    said = " ".join(evalkit_cli("show", "cap-9").stdout.split())
    assert "(killed, its machine lost, or its results store out of reach as it stopped)" in said, said
    assert "`evalkit run arith.basic --provider my-app --shard 1/2 --run-id cap-9`" in said, said


def test_a_limit_stopped_shard_taken_again_and_killed_shows_no_verdict_of_its_earlier_close(
    evalkit_cli, project, monkeypatch
) -> None:
    # Shard 1 stopped by --max-requests 1 closed the run incomplete with a verdict saying so; run
    # again with a higher limit and killed, `show` (and history) still gave that verdict, "a spending
    # limit stopped it: the limit of 1 request reached", beside limit_stops {} and the status line of
    # a killed shard. The run reopened is no longer the run that verdict was given: it has none
    # until it closes again.
    answer_with(project, ARITH_GOOD)
    base = ("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-9", "--database", LOCAL)
    assert evalkit_cli(*base, "--shard", "1/2", "--max-requests", "1").code == 3
    assert "a spending limit stopped it" in evalkit_cli("show", "cap-9", "--json").json()["verdict"]["note"]
    assert evalkit_cli(*base, "--shard", "2/2").code == 0
    killed_while_answering(evalkit_cli, monkeypatch, *base, "--shard", "1/2", "--max-requests", "6")
    left_long_ago(project, "cap-9", "1/2")
    shown = evalkit_cli("show", "cap-9", "--json")
    assert shown.code == 0 and shown.json()["limit_stops"] == {}, shown.stdout
    assert shown.json()["verdict"] is None, shown.stdout
    said = " ".join(evalkit_cli("show", "cap-9").stdout.split())
    assert "(killed, its machine lost, or its results store out of reach as it stopped)" in said and "Verdict: —" in said, said
    assert "spending limit" not in said, said
    history = evalkit_cli("history", "arith.basic")
    assert history.code == 0 and "not compared" not in history.stdout, history.stdout


def test_a_resumed_run_killed_shows_no_verdict_of_its_earlier_close(evalkit_cli, project, monkeypatch) -> None:
    # A whole run a limit stopped, resumed with a higher limit and killed: the same stale verdict.
    answer_with(project, ARITH_GOOD)
    assert (
        evalkit_cli("run", "arith.basic", "--provider", "my-app", "--run-id", "cap-8", "--max-requests", "1").code == 3
    )
    assert evalkit_cli("show", "cap-8", "--json").json()["verdict"]["state"] == "not_comparable"
    killed_while_answering(
        evalkit_cli,
        monkeypatch,
        "run",
        "arith.basic",
        "--provider",
        "my-app",
        "--resume",
        "cap-8",
        "--max-requests",
        "60",
    )
    shown = evalkit_cli("show", "cap-8", "--json")
    assert shown.code == 0 and shown.json()["status"] == "running" and shown.json()["verdict"] is None, shown.stdout
    said = " ".join(evalkit_cli("show", "cap-8").stdout.split())
    assert "Verdict: —" in said and "spending limit" not in said, said


@pytest.mark.parametrize("limit", [1, 3, 5])
def test_the_request_limit_a_stop_suggests_finishes_a_run_cut_between_a_cases_repeats(
    evalkit_cli, project, limit
) -> None:
    # `--repeats 2 --max-requests 3`: the third request was the first of the second case's two, which
    # is stored errored, its request counted. The stop said `--max-requests 12` (6 cases times 2),
    # but the resume starts its count at the 3 requests spent and asks that case again whole: it
    # stopped at 12 with one case left, incomplete again. The limit suggested counts the requests
    # spent and the ones the resume asks (every case not stored whole, times the repeats).
    import shlex

    answer_with(project, ARITH_GOOD)
    stopped = evalkit_cli(
        "run", "arith.basic", "--provider", "my-app", "--repeats", "2", "--max-requests", str(limit), "--run-id", "rq-1"
    )
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    said = " ".join((stopped.stdout + stopped.stderr).split())
    line = said.split("resume it with: ", 1)[1].split(" All ", 1)[0].split(" Case ", 1)[0]
    # the 12 the run takes and the one request the cut case spent (its answer asked again whole)
    assert line == "evalkit run arith.basic --provider my-app --repeats 2 --resume rq-1 --max-requests 13", said
    resumed = evalkit_cli(*shlex.split(line)[1:], "--json")
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert resumed.json()["status"] == "complete"


def test_a_shard_whose_own_slice_is_stored_whole_exits_0_when_another_shards_case_errored(evalkit_cli, project) -> None:
    """docs/ci.md: "Shard jobs exit 0 once their slice is stored (3 when a case of theirs errored)".
    A case of shard 3 errored, and shards 1 and 2 — whose every case was answered — exited 3 too, the
    run's errored count read as their own: CI marked three jobs failed, and re-running the two healthy
    ones answered nothing. Now only the shard whose case errored fails; the verdict job still exits 3."""
    answer_with(project, {k: v for k, v in ARITH_GOOD.items() if k != "json-sum"})  # json-sum is in shard 3 of 3
    shard = ("run", "arith.basic", "--run-id", "ci-err", "--database", LOCAL, "--json", "--shard")
    errored = evalkit_cli(*shard, "3/3")
    assert errored.code == 3 and errored.json()["errored"] == 1, errored.stdout + errored.stderr
    pending = evalkit_cli(*shard, "1/3")  # the run is still running, with shard 3's error in it
    assert pending.code == 0 and pending.json()["status"] == "running", pending.stdout + pending.stderr
    closing = evalkit_cli(*shard, "2/3")  # its slice closes the run, incomplete through shard 3's error
    assert closing.code == 0 and closing.json()["status"] == "incomplete", closing.stdout + closing.stderr
    verdict = evalkit_cli("run", "arith.basic", "--run-id", "ci-err", "--database", LOCAL, "--wait-for-shards", "--timeout", "5s")
    assert verdict.code == 3, verdict.stdout + verdict.stderr
    answer_with(project, ARITH_GOOD)
    assert evalkit_cli(*shard, "3/3").code == 0  # the failed job run again answers its case: the run is complete
    assert evalkit_cli(*shard, "3/3", "--fail-on-regression").json()["status"] == "complete"


def test_the_verdict_job_says_why_a_passing_sharded_run_was_not_accepted(evalkit_cli, project) -> None:
    """docs/baselines.md: the run report says why a passing run was not accepted (`--json`:
    `verdict.acceptance_note`). The shard that closed the run said "it is worse than the baseline on
    pass_rate, mean_score"; the verdict job (`--wait-for-shards`), the report CI shows, said only
    "(accept this run on purpose …)" and `acceptance_note` was null."""
    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--run-id", "main-1", "--database", LOCAL).code == 0  # the baseline
    answer_with(project, {**ARITH_GOOD, "add-2-2": "5"})  # one case broken: within the tolerance, but worse
    tolerances = ("--max-pass-rate-drop", "0.5", "--max-mean-score-drop", "0.5")
    shard = ("run", "arith.basic", "--run-id", "pr-1", "--database", LOCAL, *tolerances, "--json", "--shard")
    assert evalkit_cli(*shard, "1/2").code == 0
    closing = evalkit_cli(*shard, "2/2")
    note = closing.json()["verdict"]["acceptance_note"]
    assert closing.code == 0 and "it is worse than the baseline on pass_rate" in note, closing.stdout + closing.stderr
    job = ("run", "arith.basic", "--run-id", "pr-1", "--database", LOCAL, *tolerances, "--wait-for-shards", "--timeout", "5s")
    document = evalkit_cli(*job, "--json")
    assert document.code == 0 and document.json()["verdict"]["acceptance_note"] == note, document.stdout
    said = " ".join(evalkit_cli(*job).stdout.split())
    assert "stays the baseline (it is worse than the baseline on pass_rate" in said, said


def test_the_verdict_job_gives_no_reason_against_a_run_accepted_by_hand(evalkit_cli, project) -> None:
    """A passing run not accepted by itself, then accepted with `baseline accept`: the verdict job
    reports the acceptance, and `acceptance_note` (why it was *not* accepted) is null — not the
    closing shard's reason recomputed beside an acceptance that contradicts it."""
    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic", "--run-id", "main-1", "--database", LOCAL).code == 0  # the baseline
    answer_with(project, {**ARITH_GOOD, "add-2-2": "5"})  # within the tolerance, but worse: not accepted
    tolerances = ("--max-pass-rate-drop", "0.5", "--max-mean-score-drop", "0.5")
    shard = ("run", "arith.basic", "--run-id", "pr-1", "--database", LOCAL, *tolerances, "--shard")
    assert evalkit_cli(*shard, "1/2").code == 0 and evalkit_cli(*shard, "2/2").code == 0
    accepted = evalkit_cli("baseline", "accept", "pr-1", "--reason", "the new rounding is right", "--database", LOCAL)
    assert accepted.code == 0, accepted.stdout + accepted.stderr
    job = ("run", "arith.basic", "--run-id", "pr-1", "--database", LOCAL, *tolerances, "--wait-for-shards", "--timeout", "5s")
    document = evalkit_cli(*job, "--json")
    assert document.code == 0, document.stdout + document.stderr
    assert document.json()["verdict"]["acceptance_note"] is None, document.stdout
    assert document.json()["accepted"]["reason"] == "the new rounding is right", document.stdout
