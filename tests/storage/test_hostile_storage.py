"""Issue 11, storage classes, as a catalogue: one section per class, each through the real CLI, on
SQLite and PostgreSQL (``database_url``) unless the fault only exists on one engine.

4  NUL and undecodable text stored exactly       7  leases: one live process per run (or shard)
5  a store failing mid-run: exit 3, resumable    8  shards: one N, pending until all are in
6  bad stores refused before anything is called  10 a retriever that never returns
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from evalkit.leases import LeaseOwner
from evalkit.runs import RunStatus
from evalkit.storage import open_repository

from tests.support.crashes import configure_slow_endpoint

HOSTILE_IDS = ("plain", "nul\x00inside", "bytes-\udcff-undecodable", "nonchar-\uffff0-escape")
HOSTILE_TEXT = "ok \x00 NUL, \ud800 lone surrogate, \uffff0 noncharacter"
HOSTILE_MODEL = "model\x00-\udcff-v1"


@pytest.fixture
def hostile_plugins(plugin_dists) -> str:  # noqa: ANN001 - the session fixture from tests/conftest.py
    """PYTHONPATH with the storage sets and the hostile-storage fixtures installed."""
    return plugin_dists("evalkit-storage-sets", "evalkit-hostile-storage")


def cli_env(plugins: str, database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE_URL"}
    env.update(PYTHONPATH=plugins, EVALKIT_DATABASE_URL=database_url, EVALKIT_TEST_KEY="k", NO_COLOR="1", COLUMNS="200")
    env.update(extra)
    return env


def start_run(evalkit_process, env: dict[str, str], *args: str) -> subprocess.Popen[str]:  # noqa: ANN001
    """``evalkit run ARGS`` started in a process of its own, for the tests that act on the store or
    the process while the run is under way (a lock taken, a connection cut, a SIGKILL)."""
    return evalkit_process.start("run", *args, env=env)


def wait_for_cases(database_url: str, run_id: str | None, set_id: str, at_least: int, timeout: float = 60.0) -> str:
    """Poll the store until the run (else the newest run of ``set_id``) has ``at_least`` answered cases."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        repo = open_repository(database_url)
        try:
            found = run_id or next((r.id for r in repo.recent_runs(set_id, limit=1)), None)
            if found and len(repo.answered_case_ids(found)) >= at_least:
                return found
        finally:
            repo.close()
        time.sleep(0.05)
    raise AssertionError(f"no run of {set_id} reached {at_least} stored cases within {timeout} s")


def answers_asked(server) -> int:  # noqa: ANN001 - a ChatServer
    """Chat completions asked of the server (the free GET /models probe is not an answer)."""
    return sum(1 for request in server.requests if request.method == "POST")


def stored(database_url: str, run_id: str):  # noqa: ANN201 - a Run
    repo = open_repository(database_url)
    try:
        return repo.get_run(run_id)
    finally:
        repo.close()


# -- 4. NUL and undecodable text --------------------------------------------------------------


def write_replay(project: Path, lines: list[dict]) -> None:
    (project / "answers.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (project / "evalkit.toml").write_text(
        '[providers.replayed]\nadapter = "replay"\npath = "answers.jsonl"\nmodel = "alias-1"\n'
    )


@pytest.mark.parametrize("privacy", ["metadata", "redacted", "full"])
def test_4_nul_and_undecodable_text_is_stored_exactly_and_resumes(
    database_url, hostile_plugins, project, evalkit_cli, privacy
) -> None:
    env = cli_env(hostile_plugins, database_url)
    # The answer for one case is missing at first: that case errs, with its id (NUL and all) in the error.
    write_replay(
        project, [{"id": case_id, "text": HOSTILE_TEXT, "model": HOSTILE_MODEL} for case_id in HOSTILE_IDS[:-1]]
    )
    first = evalkit_cli("run", "hostilestore.ids", "--run-id", "hostile-1", "--privacy", privacy, "--json", env=env)
    assert first.code == 3, first.stderr
    assert "Traceback" not in first.stderr
    run = stored(database_url, "hostile-1")
    assert run.status is RunStatus.INCOMPLETE
    assert [c.case_id for c in run.cases] == list(HOSTILE_IDS)
    kept_before = {c.case_id: c.finished_at for c in run.cases if not c.errored}
    assert set(kept_before) == set(HOSTILE_IDS[:-1])
    assert {c.identity.reported_model for c in run.cases if not c.errored} == {HOSTILE_MODEL}
    if privacy == "full":
        assert {c.answer_text for c in run.cases if not c.errored} == {HOSTILE_TEXT}
    elif privacy == "metadata":
        assert {c.answer_text for c in run.cases} == {None}

    write_replay(project, [{"id": case_id, "text": HOSTILE_TEXT, "model": HOSTILE_MODEL} for case_id in HOSTILE_IDS])
    resumed = evalkit_cli("run", "hostilestore.ids", "--resume", "hostile-1", "--privacy", privacy, "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    document = resumed.json()
    assert document["status"] == "complete"
    assert [c["id"] for c in document["cases"]] == list(HOSTILE_IDS), "the JSON output reads back every id exactly"
    run = stored(database_url, "hostile-1")
    assert run.status is RunStatus.COMPLETE
    assert {c.identity.reported_model for c in run.cases} == {HOSTILE_MODEL}, "kept exactly, though it is no evidence"
    assert not run.verified and "not well formed" in run.identity_note
    assert {c.case_id: c.finished_at for c in run.cases if c.case_id in kept_before} == kept_before, (
        "a resume does not answer a stored case again, whatever its id holds"
    )

    # With a well-formed model the runs are verified: the next one is compared case by case with
    # the one before, matching the hostile case ids exactly.
    write_replay(project, [{"id": case_id, "text": HOSTILE_TEXT, "model": "gpt-ok"} for case_id in HOSTILE_IDS])
    base = evalkit_cli("run", "hostilestore.ids", "--privacy", privacy, "--json", env=env)
    assert base.code == 0 and base.json()["verdict"]["state"] == "baseline", base.stderr
    again = evalkit_cli("run", "hostilestore.ids", "--privacy", privacy, "--json", env=env)
    assert again.code == 0, again.stderr
    verdict = again.json()["verdict"]
    assert verdict["state"] == "no_regression" and again.json()["baseline_id"] == base.json()["run_id"]
    assert verdict["regressed_cases"] == [] and verdict["added_cases"] == [] and verdict["removed_cases"] == []
    shown = evalkit_cli("show", "hostile-1", "--json", env=env)
    assert shown.code == 0 and [c["id"] for c in shown.json()["cases"]] == list(HOSTILE_IDS)
    # The table is for people: how it shows an undecodable byte is the output's business (bytes here).
    human = evalkit_cli("show", "hostile-1", env=env, timeout=60)
    assert human.code == 0 and b"Traceback" not in human.stderr_bytes


def test_4_an_error_body_with_nul_is_stored_as_sent(
    database_url, hostile_plugins, project, chat_server, evalkit_cli
) -> None:
    from tests.support.chat_server import Fault

    configure_slow_endpoint(project, chat_server.base_url, concurrency=1)
    chat_server.fail_at(
        2, Fault.http_error(400, body=b"upstream said: bad \x00 request")
    )  # request 1 is the readiness probe
    result = evalkit_cli(
        "run",
        "hostilestore.ids",
        "--provider",
        "slow",
        "--privacy",
        "full",
        "--json",
        env=cli_env(hostile_plugins, database_url),
    )
    assert result.code == 3, result.stderr
    errors = [c.error for c in stored(database_url, result.json()["run_id"]).cases if c.errored]
    assert len(errors) == 1 and "upstream said: bad \x00 request" in errors[0]


def test_4_undecodable_question_and_document_ids_are_stored_exactly(
    database_url, hostile_plugins, project, evalkit_cli
) -> None:
    result = evalkit_cli(
        "retrieval",
        "hostilestore.questions",
        "hostile.echo",
        "--privacy",
        "full",
        "--json",
        env=cli_env(hostile_plugins, database_url),
    )
    assert result.code == 0, result.stderr
    run = stored(database_url, result.json()["run_id"])
    assert [c.case_id for c in run.cases] == list(HOSTILE_IDS)
    assert all(c.passed for c in run.cases)
    assert [c.detail["ranked_ids"] for c in run.cases] == [[f"doc-{i}", "extra-\x00-\udc80"] for i in HOSTILE_IDS]


# -- 5. a store failing mid-run ---------------------------------------------------------------


@pytest.fixture
def tiny_filesystem(tmp_path: Path):  # noqa: ANN201 - yields the mount point
    """A 384 KiB tmpfs (needs root and mount; skipped where either is missing)."""
    from tests.support.tmpfs import mounted_tmpfs

    with mounted_tmpfs(tmp_path / "tiny", "size=384k") as mount:
        yield mount


def assert_store_fault(result_code: int, stderr: str, cause: str, run_id: str, marked: bool | None) -> bool:
    """The one-line report of a store fault; returns whether it says the run was marked interrupted
    (``marked`` is what the test knows it must say, ``None`` when the fault decides)."""
    assert result_code == 3, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"one line, got: {stderr!r}"
    assert cause in lines[0]
    assert f"--resume {run_id}`" in lines[0]
    said = "the run is marked interrupted" in lines[0]
    assert said or "the run could not be marked interrupted (the store does not answer)" in lines[0]
    assert marked is None or said is marked
    return said


def test_5_a_full_disk_ends_the_run_with_exit_3_and_it_resumes(
    hostile_plugins, project, chat_server, evalkit_cli, tiny_filesystem
) -> None:
    database_url = f"sqlite:///{tiny_filesystem / 'results.db'}"
    chat_server.responder = lambda body: body["messages"][-1]["content"] + " " + "x" * 6000
    configure_slow_endpoint(project, chat_server.base_url)
    env = cli_env(hostile_plugins, database_url)
    result = evalkit_cli("run", "storagekit.wide", "--privacy", "full", "--run-id", "full-disk", env=env)
    # Whether the one-row status update still fits on a disk that is full is up to the disk; the
    # message says which, truthfully.
    marked = assert_store_fault(result.code, result.stderr, "database or disk is full", "full-disk", marked=None)
    run = stored(database_url, "full-disk")
    assert run.status is (RunStatus.INTERRUPTED if marked else RunStatus.RUNNING)
    assert 0 < len(run.cases) < 240, "the cases committed before the fault are kept"
    kept = {c.case_id for c in run.cases}

    # Room again: the resume answers only what is missing.
    subprocess.run(["mount", "-o", "remount,size=64m", str(tiny_filesystem)], check=True, capture_output=True)
    before = answers_asked(chat_server)
    resumed = evalkit_cli("run", "storagekit.wide", "--resume", "full-disk", "--privacy", "full", "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["status"] == "complete"
    assert answers_asked(chat_server) - before == 240 - len(kept)


def _fill(mount: Path) -> None:
    """Write into ``mount`` until its file system refuses another byte (a real ENOSPC)."""
    try:
        with open(mount / "filler", "ab", buffering=0) as filler:  # noqa: PTH123
            while True:
                filler.write(b"\0" * 65536)
    except OSError:
        pass


@pytest.mark.parametrize(
    "words",
    [("run", "hostilestore.ids", "--provider", "reference"), ("retrieval", "hostilestore.questions", "hostile.echo")],
    ids=["prompts", "retrieval"],
)
def test_5_a_disk_that_fills_after_the_run_is_stored_complete_does_not_offer_a_resume(
    hostile_plugins, project, evalkit_cli, tiny_filesystem, monkeypatch, words
) -> None:
    """The disk filled while the verdict was recorded, after the run was stored complete: it said
    "the run is marked interrupted; continue it with `… --resume ID`" — the run stayed complete
    (a complete run keeps its status) and that resume refused, "already complete"."""
    from evalkit.storage.sql import SqlRepository

    finish_run = SqlRepository.finish_run

    def finish_then_fill(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        finished = finish_run(self, *args, **kwargs)
        _fill(tiny_filesystem)
        return finished

    monkeypatch.setattr(SqlRepository, "finish_run", finish_then_fill)
    database = f"sqlite:///{tiny_filesystem / 'results.db'}"
    result = evalkit_cli(*words, "--run-id", "filled-1", "--database", database, env={"PYTHONPATH": hostile_plugins})
    assert result.code == 3, result.stderr
    assert result.stderr == (
        "evalkit: error: the results store failed after run filled-1 was stored complete: database or disk is full — "
        "its cases are kept; its verdict may not be recorded (`evalkit show filled-1` says)\n"
    )
    monkeypatch.undo()
    (tiny_filesystem / "filler").unlink()
    assert stored(database, "filled-1").status is RunStatus.COMPLETE


def test_5_a_third_party_store_whose_disk_fills_mid_run_is_a_store_failure_not_an_evalkit_bug(
    plugin_dists, project, chat_server, evalkit_cli, tiny_filesystem
) -> None:
    """A store plugin (evalkit-minimal-repo, one JSON file) raising its own OSError on a full disk:
    the run ended in "internal error (an evalkit bug)" and a traceback; it is the store's failure,
    named, exit 3, the committed cases kept and the resume command given."""
    chat_server.responder = lambda body: body["messages"][-1]["content"] + " " + "x" * 6000
    configure_slow_endpoint(project, chat_server.base_url)
    store = f"minimal://{tiny_filesystem / 'store.json'}"
    env = cli_env(plugin_dists("evalkit-storage-sets", "evalkit-minimal-repo"), store)
    result = evalkit_cli("run", "storagekit.wide", "--privacy", "full", "--run-id", "full-3p", env=env)
    assert result.code == 3, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "evalkit: error: the results store failed during run full-3p: evalkit_minimal_repo.MinimalRepository raised "
        "OSError: [Errno 28] No space left on device — "
    ), line
    # the store keeps no run status it could be asked to change (no ResumableRuns): not "does not answer"
    assert (
        ", the run could not be marked interrupted (the store cannot record that status); continue it with" in line
    ), line
    assert line.endswith("--resume full-3p`"), line


def test_5_an_existing_store_on_a_full_disk_is_an_environment_fault_exit_3(
    project, evalkit_cli, tiny_filesystem
) -> None:
    """A store made before its disk filled could not be opened ("disk I/O error" from SQLite's
    shared-memory file) and the command exited 2, bad usage; it is the environment's fault, exit 3,
    as it is for a new store the disk cannot take and for a disk that fills mid-run."""
    database = f"sqlite:///{tiny_filesystem / 'results.db'}"
    assert evalkit_cli("run", "evalkit.smoke", "--database", database).code == 0
    _fill(tiny_filesystem)
    for words in (("run", "evalkit.smoke"), ("history", "evalkit.smoke")):
        result = evalkit_cli(*words, "--database", database)
        assert result.code == 3, result.stderr
        assert (
            result.stderr.startswith("evalkit: error: cannot ")
            and f" database {database}: disk I/O error" in result.stderr
        ), result.stderr
    (tiny_filesystem / "filler").unlink()
    assert len(evalkit_cli("history", "evalkit.smoke", "--database", database, "--json").json()["runs"]) == 1



def test_a_postgresql_server_that_refuses_the_connection_is_an_environment_fault_exit_3(project, evalkit_cli) -> None:
    """The shared results database down (restarting, out of connection slots, unreachable): every
    shard job and the verdict job exited 2, "bad usage or invalid input", so a CI that retries jobs
    on exit 3 (the environment's fault) treated a blip as a broken configuration. A refused
    connection is now exit 3, as a PostgreSQL connection lost mid-run is; a wrong password or
    database name stays exit 2 (the command's fault)."""
    import socket

    from evalkit.storage.engine import environment_fault

    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    database = f"postgresql://evalkit@127.0.0.1:{port}/results"
    for words in (("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("run", "evalkit.smoke", "--wait-for-shards", "--run-id", "ci-1")):
        result = evalkit_cli(*words, "--database", database)
        assert result.code == 3, (words, result.stderr)
        assert f"cannot open database {database}: " in result.stderr and "Connection refused" in result.stderr, result.stderr
    for text in ('FATAL: password authentication failed for user "evalkit"', 'FATAL: database "resluts" does not exist'):
        assert not environment_fault(Exception(text), is_sqlite=False), text
    for text in ("FATAL: the database system is starting up", "FATAL: sorry, too many clients already"):
        assert environment_fault(Exception(text), is_sqlite=False), text


def hold_lock(database_url: str, engine: str, run_id: str):  # noqa: ANN201 - a DB-API connection
    """Another session holding what the run must write: SQLite's write lock, or the run's row on PostgreSQL."""
    if engine == "sqlite":
        holder = sqlite3.connect(database_url[len("sqlite:///") :], isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        return holder
    import psycopg2

    holder = psycopg2.connect(database_url)
    holder.cursor().execute("SELECT id FROM evalkit_run WHERE id = %s FOR UPDATE", (run_id,))
    return holder


def _file_size_limit(limit: int):  # noqa: ANN202 - a preexec_fn
    import resource

    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_files


def test_5_a_store_the_disk_cannot_take_when_it_is_made_is_exit_3_and_leaves_no_empty_file(
    tmp_path, project, evalkit_process
) -> None:
    # A real child: the fault is a resource limit on the process (RLIMIT_FSIZE, `ulimit -f`), which
    # makes the first write of the new store fail (EFBIG: SQLite's "disk I/O error") as a full disk
    # would. It was exit 2, "bad usage", and left an empty results.db behind.
    store = tmp_path / "new" / "results.db"
    result = evalkit_process.run(
        "run",
        "evalkit.smoke",
        "--database",
        f"sqlite:///{store}",
        preexec_fn=_file_size_limit(1024),
        text=False,
        timeout=60,
        # not measured by coverage (tox -e py measures children): the limit would stop it saving its
        # data at exit too, and its own traceback would land in this child's stderr
        env={"COVERAGE_PROCESS_CONFIG": None},
    )
    stderr = result.stderr.decode()
    assert result.returncode == 3, stderr
    assert f"cannot use database sqlite:///{store}: disk I/O error" in stderr and "Traceback" not in stderr, stderr
    assert not store.parent.exists(), "nothing half-made is left, nor the folder made for it"
    assert evalkit_process("run", "evalkit.smoke", "--database", f"sqlite:///{store}").code == 0


def test_5_a_new_store_on_a_full_disk_is_exit_3_and_leaves_no_empty_file_or_folder(project, evalkit_cli) -> None:
    # A disk with no room at all fails the new store as SQLite switches it to WAL, before its
    # first page: exit 3 was said, but an empty results.db (and the folders made for it) stayed.
    from tests.support.tmpfs import full_disk

    with full_disk(project / "disk") as disk:
        store = disk / "stores" / "results.db"
        result = evalkit_cli("run", "evalkit.smoke", "--database", f"sqlite:///{store}")
        assert result.code == 3, result.stderr
        assert result.stderr == f"evalkit: error: cannot open database sqlite:///{store}: database or disk is full\n"
        assert sorted(p.name for p in disk.iterdir()) == ["filler"], "nothing half-made is left"


def test_5_a_lock_held_past_the_busy_timeout_ends_the_run_with_exit_3(
    database_url, engine, hostile_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    chat_server.delay = 0.05
    configure_slow_endpoint(project, chat_server.base_url)
    env = cli_env(hostile_plugins, database_url, EVALKIT_BUSY_TIMEOUT="1")
    process = start_run(evalkit_process, env, "storagekit.wide", "--run-id", "locked-out")
    wait_for_cases(database_url, "locked-out", "storagekit.wide", at_least=5)
    holder = hold_lock(database_url, engine, "locked-out")
    try:
        _, stderr = process.communicate(timeout=60)
    finally:
        holder.rollback()
        holder.close()
    # While the lock is held the store does not answer, so the run cannot be marked either.
    assert_store_fault(process.returncode, stderr, "database is locked after 1 s", "locked-out", marked=False)
    run = stored(database_url, "locked-out")
    assert run.status is RunStatus.RUNNING and 5 <= len(run.cases) < 240
    chat_server.delay = 0.0  # the slow endpoint kept the run under way while the lock was taken; no longer needed
    resumed = evalkit_cli("run", "storagekit.wide", "--resume", "locked-out", "--json", env=env)
    assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


@pytest.mark.postgres
def test_5_a_lost_postgresql_connection_ends_the_run_with_exit_3(
    hostile_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    import psycopg2

    from tests.storage.conftest import fresh_postgres_database

    with fresh_postgres_database() as database_url:
        chat_server.delay = 0.05
        configure_slow_endpoint(project, chat_server.base_url)
        env = cli_env(hostile_plugins, database_url)
        process = start_run(evalkit_process, env, "storagekit.wide", "--run-id", "pg-gone")
        wait_for_cases(database_url, "pg-gone", "storagekit.wide", at_least=5)
        admin = psycopg2.connect(os.environ["EVALKIT_TEST_POSTGRES_URL"])
        admin.autocommit = True
        try:
            with admin.cursor() as cursor:
                name = database_url.rsplit("/", 1)[-1]
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
                assert cursor.fetchall(), "the run's connection was terminated"
        finally:
            admin.close()
        _, stderr = process.communicate(timeout=60)
        assert_store_fault(process.returncode, stderr, "connection to PostgreSQL lost", "pg-gone", marked=True)
        run = stored(database_url, "pg-gone")
        assert run.status is RunStatus.INTERRUPTED and 5 <= len(run.cases) < 240
        chat_server.delay = 0.0  # the slow endpoint kept the run under way while its connection was cut; no longer needed
        resumed = evalkit_cli("run", "storagekit.wide", "--resume", "pg-gone", "--json", env=env)
        assert resumed.code == 0 and resumed.json()["status"] == "complete", resumed.stderr


@pytest.mark.postgres
def test_5_a_run_whose_postgresql_went_away_is_not_later_said_to_have_been_killed(
    hostile_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    """The server gone for good mid-run (here: the run's database refusing every connection once its
    connection is cut): exit 3, the run could not be marked interrupted. Once the server is back,
    `show` said its process "stopped without ending it (killed, or its machine lost)", though that
    process saw the store fail and said so: a reader cannot tell the two apart, and says both."""
    import psycopg2

    from tests.storage.conftest import fresh_postgres_database

    with fresh_postgres_database() as database_url:
        name = database_url.rsplit("/", 1)[-1]
        chat_server.delay = 0.05
        configure_slow_endpoint(project, chat_server.base_url)
        env = cli_env(hostile_plugins, database_url)
        process = start_run(evalkit_process, env, "storagekit.wide", "--run-id", "pg-down")
        wait_for_cases(database_url, "pg-down", "storagekit.wide", at_least=5)
        admin = psycopg2.connect(os.environ["EVALKIT_TEST_POSTGRES_URL"])
        admin.autocommit = True
        try:
            with admin.cursor() as cursor:
                cursor.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
            _, stderr = process.communicate(timeout=60)
            assert_store_fault(process.returncode, stderr, "connection to PostgreSQL lost", "pg-down", marked=False)
        finally:
            with admin.cursor() as cursor:
                cursor.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            admin.close()
        shown = evalkit_cli("show", "pg-down", env=env)
        assert shown.code == 0, shown.stderr
        said = " ".join(shown.stdout.split())
        assert "stopped without ending it (killed, its machine lost, or its results store out of reach as it stopped)" in said, said
        assert "(killed, or its machine lost)" not in said and "process was killed" not in said, said


# -- 6. bad stores, refused before anything is called -----------------------------------------


def _bad_stores(tmp_path: Path) -> dict[str, str]:
    not_sqlite = tmp_path / "notes.db"
    not_sqlite.write_text("these are notes, not a database\n" * 10)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    return {
        "sqlite:///": "names no file",
        "sqlite://": "names no file",
        "sqlite:": "names no file",
        "sqlite:////dev/null": "/dev/null is not a regular file",
        f"sqlite:///{not_sqlite}": "is not an SQLite database",
        f"sqlite:///{folder}": "is a folder",
        "postgresql://ci:s3cret@[::1/evalkit": "is malformed",
        "postgresql://ci@db:port/evalkit": "is malformed",
    }


def test_6_bad_stores_are_refused_before_anything_is_called(
    tmp_path, project, chat_server, evalkit_cli, sqlite_url
) -> None:
    configure_slow_endpoint(project, chat_server.base_url)
    for url, message in _bad_stores(tmp_path).items():
        for command in (
            ("run", "evalkit.smoke", "--provider", "slow"),
            ("history", "evalkit.smoke"),
            ("db", "upgrade"),
        ):
            result = evalkit_cli(*command, "--database", url, env={"EVALKIT_TEST_KEY": "k"})
            assert result.code == 2, (url, command, result.stderr)
            assert message in result.stderr and "Traceback" not in result.stderr, (url, result.stderr)
            assert "s3cret" not in result.stderr
    assert chat_server.request_count == 0
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize(
    "command",
    [("history", "evalkit.smoke"), ("show", "r1"), ("db", "status"), ("run", "evalkit.smoke")],
    ids=lambda c: c[0],
)
def test_6_a_damaged_schema_sqlite_cannot_name_in_text_is_refused_not_an_evalkit_bug(
    tmp_path, project, evalkit_cli, command
) -> None:
    # SQLite's "malformed database schema (NAME)" quotes the damaged bytes, which Python cannot
    # decode: every command ended in "internal error (an evalkit bug): UnicodeDecodeError"
    store = tmp_path / "damaged.db"
    url = f"sqlite:///{store}"
    assert evalkit_cli("run", "evalkit.smoke", "--database", url, "--run-id", "r1").code == 0
    with sqlite3.connect(store) as connection:
        connection.execute("PRAGMA writable_schema=ON")
        connection.execute(
            "UPDATE sqlite_master SET name = CAST(X'6576616C6B69745F95' AS TEXT), sql = 'CREATE TABLE' "
            "WHERE name = 'evalkit_judge_calibration'"
        )
    result = evalkit_cli(*command, "--database", url)
    assert result.code == 2, result.stderr
    assert f"{store} is damaged (its schema cannot be read: database disk image is malformed)" in result.stderr, (
        result.stderr
    )
    assert "internal error" not in result.stderr


def _damage_the_case_pages(store: Path) -> None:
    """Grow the store's case table over many pages, then overwrite the b-tree header of every
    eighth page of its second half: the schema and the run rows (its first pages) stay readable,
    reading the cases meets SQLite's "database disk image is malformed"."""
    with sqlite3.connect(store) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(evalkit_case)") if row[1] != "id"]
        copied = ", ".join(
            "case_id || '-' || n.value" if c == "case_id" else "printf('%.300c', 'x')" if c == "answer_text" else c
            for c in columns
        )
        connection.execute(
            f"INSERT INTO evalkit_case ({', '.join(columns)}) SELECT {copied} FROM evalkit_case, "
            "(WITH RECURSIVE k(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM k WHERE value < 300) SELECT value FROM k) AS n"
        )
        connection.commit()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
    data = bytearray(store.read_bytes())
    for page in range(pages // 2, pages, 8):
        data[page * page_size : page * page_size + 8] = b"\xff" * 8
    store.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "command", [("show", "r1", "--show-all"), ("report", "r1", "-o", "r1.html"), ("compare", "r0", "r1"), ("flaky", "evalkit.smoke")], ids=lambda c: c[0]
)  # fmt: skip
def test_6_damaged_case_pages_are_named_as_the_stores_fault_not_an_evalkit_bug(
    tmp_path, project, evalkit_cli, command
) -> None:
    # the driver's error met while rows are fetched is not one peewee wraps: it went past the
    # store's guard as "internal error (an evalkit bug): DatabaseError", with a traceback
    store = tmp_path / "damaged.db"
    url = f"sqlite:///{store}"
    for run_id in ("r0", "r1"):  # two: `compare r1 r1` is refused before the store is read
        assert evalkit_cli("run", "evalkit.smoke", "--database", url, "--privacy", "full", "--run-id", run_id).code == 0
    _damage_the_case_pages(store)
    result = evalkit_cli(*command, "--database", url)
    assert result.code == 2, result.stderr
    assert f"database {url}: database disk image is malformed" in result.stderr, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_6_a_truncated_database_is_refused(tmp_path, project, evalkit_cli) -> None:
    whole = tmp_path / "whole.db"
    url = f"sqlite:///{whole}"
    for _ in range(3):
        assert evalkit_cli("run", "evalkit.smoke", "--database", url, "--privacy", "full").code == 0
    with sqlite3.connect(whole) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    result = evalkit_cli("run", "evalkit.smoke", "--database", f"sqlite:///{truncated}")
    assert result.code == 2 and "is truncated" in result.stderr, result.stderr


def test_6_a_read_only_database_is_refused(tmp_path, project, evalkit_cli) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    url = f"sqlite:///{folder / 'results.db'}"
    assert evalkit_cli("run", "evalkit.smoke", "--database", url).code == 0
    if os.geteuid() == 0:  # root writes through file modes: make the folder a read-only mount instead
        bound = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
        if bound.returncode != 0:
            pytest.skip("root, and no read-only bind mount possible here")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True, capture_output=True)
    else:
        (folder / "results.db").chmod(0o444)
    try:
        result = evalkit_cli("run", "evalkit.smoke", "--database", url)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
    assert result.code == 2 and "read-only" in result.stderr, result.stderr


@pytest.mark.parametrize(
    "command", [("history", "evalkit.smoke"), ("show", "r1"), ("db", "status"), ("report", "r1")], ids=lambda c: c[0]
)
def test_6_a_store_in_a_read_only_folder_is_refused_by_a_reading_command_saying_why(
    tmp_path, project, evalkit_cli, command
) -> None:
    # a store in WAL mode is read through a -shm file SQLite creates beside it: each reading
    # command said only "cannot use database …: unable to open database file"
    folder = tmp_path / "kept"
    folder.mkdir()
    url = f"sqlite:///{folder / 'results.db'}"
    assert evalkit_cli("run", "evalkit.smoke", "--database", url, "--run-id", "r1").code == 0
    assert not (folder / "results.db-shm").exists()
    if os.geteuid() == 0:  # root writes through file modes: make the folder a read-only mount instead
        bound = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
        if bound.returncode != 0:
            pytest.skip("root, and no read-only bind mount possible here")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True, capture_output=True)
    else:
        folder.chmod(0o555)
    try:
        result = evalkit_cli(*command, "--database", url)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        else:
            folder.chmod(0o755)
    assert result.code == 2, result.stderr
    assert f"the folder {folder} is read-only and the store is in WAL mode" in result.stderr, result.stderr
    assert "unable to open database file" not in result.stderr


def test_6_an_in_memory_store_is_allowed_only_by_name_and_says_so(project, evalkit_cli) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--database", "sqlite:///:memory:")
    assert result.code == 0, result.stderr
    assert "The store is in memory (sqlite:///:memory:): this run will not be kept" in result.stdout
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize("age", ["99999999999999999999d", "1" + "0" * 5000 + "d", "60000w", "-5d", "90"])
def test_6_prune_refuses_an_absurd_age(project, evalkit_cli, age) -> None:
    result = evalkit_cli("db", "prune", "--older-than", age)
    assert result.code == 2 and "--older-than" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not (project / ".evalkit").exists()


# -- 7. leases ----------------------------------------------------------------------------------


def test_7_a_run_another_live_process_answers_is_refused_and_taken_over_once_it_is_gone(
    database_url, hostile_plugins, project, chat_server, evalkit_cli, evalkit_process
) -> None:
    chat_server.delay = 0.2
    configure_slow_endpoint(project, chat_server.base_url, concurrency=1)
    env = cli_env(hostile_plugins, database_url)
    first = start_run(evalkit_process, env, "storagekit.wide", "--run-id", "leased")
    try:
        wait_for_cases(database_url, "leased", "storagekit.wide", at_least=2)
        for args in (("--resume", "leased"), ("--resume",), ("--run-id", "leased")):
            refused = evalkit_cli("run", "storagekit.wide", *args, env=env)
            assert refused.code == 2, (args, refused.stderr)
            assert "run leased is being answered by another process" in refused.stderr
            assert f"pid {first.pid}" in refused.stderr
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    chat_server.delay = 0.0
    taken = evalkit_cli("run", "storagekit.wide", "--resume", "leased", "--json", env=env)
    assert taken.code == 0, taken.stderr
    assert taken.json()["status"] == "complete"
    counts: dict[str, int] = {}
    for request in chat_server.requests:
        if request.method != "POST":  # free GETs (/models) are not answers
            continue
        token = request.body["messages"][-1]["content"].rsplit(" ", 1)[-1]
        counts[token] = counts.get(token, 0) + 1
    assert sum(1 for n in counts.values() if n > 1) <= 1, "only the case in flight at the kill is asked twice"

    done = evalkit_cli("run", "storagekit.wide", "--run-id", "leased", env=env)
    assert done.code == 2 and "run leased is already complete" in done.stderr


def test_7_a_lease_with_a_stale_heartbeat_is_taken_over(database_url, hostile_plugins, project, evalkit_cli) -> None:
    from evalkit.leases import STALE_AFTER_S

    env = cli_env(hostile_plugins, database_url)
    write_replay(project, [{"id": case_id, "text": "ok", "model": "m"} for case_id in HOSTILE_IDS[:2]])
    assert evalkit_cli("run", "hostilestore.ids", "--run-id", "elsewhere", env=env).code == 3
    repo = open_repository(database_url)
    try:
        repo.acquire_lease("elsewhere", "*", LeaseOwner("another-host", 4242, "their-token"))
    finally:
        repo.close()
    write_replay(project, [{"id": case_id, "text": "ok", "model": "m"} for case_id in HOSTILE_IDS])
    refused = evalkit_cli("run", "hostilestore.ids", "--resume", "elsewhere", env=env)
    assert refused.code == 2 and "pid 4242 on host another-host" in refused.stderr, refused.stderr
    assert stored(database_url, "elsewhere").status is RunStatus.INCOMPLETE, "nothing was stored"

    repo = open_repository(database_url)
    try:
        repo.Lease.update({repo.Lease.heartbeat_at: time.time() - STALE_AFTER_S - 5}).execute()
    finally:
        repo.close()
    taken = evalkit_cli("run", "hostilestore.ids", "--resume", "elsewhere", "--json", env=env)
    assert taken.code == 0 and taken.json()["status"] == "complete", taken.stderr


def _database_now(repo) -> float:  # noqa: ANN001
    """The store's clock, asked of the database itself."""
    sql = (
        "SELECT (julianday('now') - 2440587.5) * 86400.0"
        if "sqlite" in repo.url
        else "SELECT EXTRACT(EPOCH FROM now())"
    )
    return float(repo.db.execute_sql(sql).fetchone()[0])


def test_7_issue34_09_lease_times_are_the_stores_clock_not_the_processs(database_url, monkeypatch) -> None:
    """A shard host whose clock runs a day ahead writes heartbeats by the store's clock."""
    from evalkit.runs import Run

    repo = open_repository(database_url)
    try:
        repo.begin_run(
            Run(id="clocked", set_identifier="s", provider_instance="p", model_alias="a", grader="g", case_count=1)
        )
        ahead = time.time() + 86400
        monkeypatch.setattr(time, "time", lambda: ahead)
        repo.acquire_lease("clocked", "*", LeaseOwner("fast-host", 4242, "token"))
        assert repo.renew_lease("clocked", "*", LeaseOwner("fast-host", 4242, "token"))
        monkeypatch.undo()
        (row,) = repo.Lease.select()
        assert abs(row.heartbeat_at - _database_now(repo)) < 600 and abs(row.acquired_at - _database_now(repo)) < 600
    finally:
        repo.close()


def test_7_issue34_09_a_heartbeat_in_the_future_is_suspect_not_0_s_ago(
    database_url, hostile_plugins, project, evalkit_cli
) -> None:
    import socket

    env = cli_env(hostile_plugins, database_url)
    write_replay(project, [{"id": case_id, "text": "ok", "model": "m"} for case_id in HOSTILE_IDS[:2]])
    assert evalkit_cli("run", "hostilestore.ids", "--run-id", "ahead", env=env).code == 3
    write_replay(project, [{"id": case_id, "text": "ok", "model": "m"} for case_id in HOSTILE_IDS])
    repo = open_repository(database_url)
    try:
        # a live process on this host (the test's own) whose row says it beat an hour from now
        repo.acquire_lease("ahead", "*", LeaseOwner(socket.gethostname(), os.getpid(), "their-token"))
        repo.Lease.update({repo.Lease.heartbeat_at: _database_now(repo) + 3600}).execute()
    finally:
        repo.close()
    refused = evalkit_cli("run", "hostilestore.ids", "--resume", "ahead", env=env)
    assert refused.code == 2 and f"pid {os.getpid()}" in refused.stderr, refused.stderr
    assert (
        "(heartbeat 3600 s in the future by the store's clock: suspect" in refused.stderr
        and "0 s ago" not in refused.stderr
    )

    repo = open_repository(database_url)
    try:  # on another host nothing can vouch for it: a future heartbeat does not hold the run for ever
        repo.Lease.update({repo.Lease.owner_host: "another-host", repo.Lease.owner_pid: 4242}).execute()
    finally:
        repo.close()
    taken = evalkit_cli("run", "hostilestore.ids", "--resume", "ahead", "--json", env=env)
    assert taken.code == 0 and taken.json()["status"] == "complete", taken.stderr


# -- 8. shards ----------------------------------------------------------------------------------


def test_8_shards_give_one_n_and_the_verdict_is_pending_until_all_are_in(
    database_url, hostile_plugins, project, chat_server, evalkit_cli
) -> None:
    from tests.support.chat_server import Fault

    configure_slow_endpoint(project, chat_server.base_url)
    env = cli_env(hostile_plugins, database_url)
    chat_server.fail_at(2, Fault.http_error(400))  # request 1 is the readiness probe
    first = evalkit_cli(
        "run", "storagekit.echo", "--shard", "1/2", "--run-id", "split", "--database", database_url, "--json", env=env
    )
    assert first.code == 3, "this shard's slice has an errored case"
    assert stored(database_url, "split").status is RunStatus.RUNNING, "the run stays running until every shard is in"

    asked = answers_asked(chat_server)
    for args in (("--shard", "2/3"), ("--shard", "1/1")):
        refused = evalkit_cli("run", "storagekit.echo", *args, "--run-id", "split", "--database", database_url, env=env)
        assert refused.code == 2 and "every shard of a run must give the same N" in refused.stderr, refused.stderr
    assert answers_asked(chat_server) == asked

    again = evalkit_cli(
        "run",
        "storagekit.echo",
        "--shard",
        "1/2",
        "--run-id",
        "split",
        "--database",
        database_url,
        "--fail-on-regression",
        "--json",
        env=env,
    )
    assert again.code == 1, again.stderr
    document = again.json()
    assert document["status"] == "running" and document["verdict"]["state"] == "pending"
    assert "verdict pending" in document["verdict"]["reason"] and "waiting for shard 2" in document["verdict"]["reason"]
    repo = open_repository(database_url)
    try:
        progress = repo.shard_progress("split")
        assert (progress.count, progress.done, progress.missing) == (2, frozenset({1}), (2,))
    finally:
        repo.close()

    last = evalkit_cli(
        "run",
        "storagekit.echo",
        "--shard",
        "2/2",
        "--run-id",
        "split",
        "--database",
        database_url,
        "--fail-on-regression",
        "--json",
        env=env,
    )
    assert last.code == 0, last.stderr
    assert last.json()["status"] == "complete" and last.json()["verdict"]["state"] == "baseline"
    repo = open_repository(database_url)
    try:
        assert repo.shard_progress("split").all_in
    finally:
        repo.close()


# -- 10. a retriever that never returns ---------------------------------------------------------


def test_10_a_retriever_that_never_returns_errs_its_question_not_the_run(
    database_url, hostile_plugins, project, evalkit_cli
) -> None:
    (project / "evalkit.toml").write_text(
        '[deployments.ci.retrievers."hostile.sleeper"]\nhang_on = "never returns"\ntimeout = 0.5\n'
    )
    env = cli_env(hostile_plugins, database_url)
    for concurrency in ("1", "2"):
        result = evalkit_cli(
            "retrieval",
            "hostilestore.hang",
            "hostile.sleeper",
            "--deployment",
            "ci",
            "--concurrency",
            concurrency,
            "--json",
            env=env,
            timeout=60,
        )
        assert result.code == 3, result.stderr
        run = stored(database_url, result.json()["run_id"])
        assert run.status is RunStatus.INCOMPLETE
        by_id = {c.case_id: c for c in run.cases}
        assert [c.case_id for c in run.cases] == ["first", "stuck", "last"]
        assert by_id["first"].passed and by_id["last"].passed
        assert by_id["stuck"].errored and "no answer within 0.5 s" in by_id["stuck"].error

    (project / "evalkit.toml").write_text('[deployments.ci.retrievers."hostile.sleeper"]\ntimeout = -1\n')
    refused = evalkit_cli("retrieval", "hostilestore.hang", "hostile.sleeper", "--deployment", "ci", env=env)
    assert refused.code == 2 and "timeout must be a duration from 1 ms to 1 day" in refused.stderr


def test_10_a_retriever_whose_provenance_never_returns_is_of_unknown_provenance_not_a_hung_run(
    database_url, hostile_plugins, project, evalkit_cli
) -> None:
    """``provenance()`` is asked before the first question; one that never returned hung the run
    before anything was stored. It is bounded by the deployment's timeout, as each question is."""
    (project / "evalkit.toml").write_text(
        '[deployments.ci.retrievers."hostile.sleeper"]\nhang_on = "provenance()"\ntimeout = 0.5\n'
    )
    env = cli_env(hostile_plugins, database_url)
    result = evalkit_cli("retrieval", "hostilestore.hang", "hostile.sleeper", "--deployment", "ci", env=env, timeout=60)
    assert result.code == 0, result.stderr
    assert (
        'retriever "hostile.sleeper": provenance() did not return within 0.5 s (the deployment\'s timeout); '
        "the call was abandoned" in result.stdout
    )
    assert "Baseline state: unknown" in result.stdout


def test_10_a_retriever_whose_close_never_returns_leaves_the_stored_run_and_exits(
    database_url, hostile_plugins, project, evalkit_cli
) -> None:
    """``close()`` is called once the run is stored; one that never returned kept the process
    from ever exiting. It is bounded by the deployment's timeout and abandoned, with a warning."""
    (project / "evalkit.toml").write_text(
        '[deployments.ci.retrievers."hostile.sleeper"]\nhang_on = "close()"\ntimeout = 0.5\n'
    )
    env = cli_env(hostile_plugins, database_url)
    result = evalkit_cli(
        "retrieval", "hostilestore.hang", "hostile.sleeper", "--deployment", "ci", "--json", env=env, timeout=60
    )
    assert result.code == 0, result.stderr
    said = "did not return from close() within 0.5 s (the deployment's timeout); the call was abandoned; the run is kept as it is"
    assert said in result.stdout
    assert stored(database_url, result.json()["run_id"]).status is RunStatus.COMPLETE


def test_10_a_retriever_whose_factory_never_returns_is_a_failed_plugin_not_a_hung_command(
    database_url, hostile_plugins, project, evalkit_cli
) -> None:
    """The entry point's factory builds the retriever from the deployment's options before anything
    is asked of it; one that never returned (a connection to a server that never answers) hung
    ``evalkit retrieval`` for ever. It is bounded by the deployment's timeout and abandoned: a
    plugin failure naming the plugin and the limit (exit 2, as a factory that raises)."""
    (project / "evalkit.toml").write_text(
        '[deployments.ci.retrievers."hostile.sleeper"]\nhang_on = "factory"\ntimeout = 0.5\n'
    )
    env = cli_env(hostile_plugins, database_url)
    result = evalkit_cli("retrieval", "hostilestore.hang", "hostile.sleeper", "--deployment", "ci", env=env, timeout=60)
    assert result.code == 2, result.stderr
    assert 'retriever "hostile.sleeper" (evalkit-hostile-storage ' in result.stderr, result.stderr
    assert "its factory did not return within 0.5 s (the deployment's timeout); the call was abandoned" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("where", ["factory", "provenance()"])
def test_10_a_retrievers_own_time_out_is_its_failure_not_a_call_evalkit_abandoned(
    database_url, hostile_plugins, project, evalkit_cli, where
) -> None:
    """A ``TimeoutError`` the plugin raised itself at once (its client's) was one exception with the
    bounded wait's: it was said as "did not return within 60 s … the call was abandoned". It is the
    plugin's own failure, named with what it raised."""
    (project / "evalkit.toml").write_text(
        f'[deployments.ci.retrievers."hostile.sleeper"]\nhang_on = "-none-"\ntimes_out_in = "{where}"\n'
    )
    env = cli_env(hostile_plugins, database_url)
    result = evalkit_cli("retrieval", "hostilestore.hang", "hostile.sleeper", "--deployment", "ci", env=env, timeout=60)
    said = result.stdout + result.stderr
    assert "TimeoutError" in said and "the index server did not answer within 2 s" in said, said
    assert "did not return within" not in said and "abandoned" not in said, said
    assert "Traceback" not in said


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (
            "update evalkit_run set status = 'archived' where id = :run",
            "in the store has status 'archived', which this evalkit does not know",
        ),
        (
            "update evalkit_run set kind = 'images' where id = :run",
            "in the store has kind 'images', which this evalkit does not know",
        ),
        (
            "update evalkit_case set score = 'high' where run_id = :run",
            "case 'capital-of-france' in the store has score 'high', not a number",
        ),
        (
            "update evalkit_run set started_at = 'noon' where id = :run",
            "in the store has started_at 'noon', not a number",
        ),
        (
            "update evalkit_run set finished_at = 'late' where id = :run",
            "in the store has finished_at 'late', not a number",
        ),
        # numbers no date or figure holds: time.gmtime(1e300) ended history and show in an internal error
        (
            "update evalkit_run set started_at = 1e300 where id = :run",
            "in the store has started_at 1e+300, not a time from 1970 to the year 9999",
        ),
        (
            "update evalkit_run set finished_at = -1 where id = :run",
            "in the store has finished_at -1.0, not a time from 1970 to the year 9999",
        ),
        (
            "update evalkit_case set score = 9e999 where run_id = :run",
            "case 'capital-of-france' in the store has score inf, not a finite number",
        ),
        (
            "update evalkit_case set latency_s = -9e999 where run_id = :run",
            "in the store has latency_s -inf, not a finite number",
        ),
        # other columns of the wrong kind: internal errors in show --json, history, compare, report
        (
            "update evalkit_run set case_count = 'many' where id = :run",
            "in the store has case_count 'many', not a whole number of zero or more",
        ),
        ("update evalkit_run set mean_score = 'x' where id = :run", "in the store has mean_score 'x', not a number"),
        (
            "update evalkit_case set checks = '[1, 2]' where run_id = :run",
            "a case in the store has checks '[1, 2]', not a list of [name, passed, error, detail] entries",
        ),
        (
            "update evalkit_run set accepted_at = 9e999, acceptance = 'manual' where id = :run",
            "a run in the store has accepted_at inf, not a finite number",
        ),
        # peewee's int() of an infinity in an INTEGER column raised OverflowError
        (
            "update evalkit_run set passed_count = 9e999 where id = :run",
            "in the store has passed_count inf, not a whole number of zero or more",
        ),
    ],
    ids=[
        "status",
        "kind",
        "score",
        "started",
        "finished",
        "started-1e300",
        "finished-before-1970",
        "score-inf",
        "latency-inf",
        "case-count-text",
        "mean-score-text",
        "checks-not-checks",
        "accepted-at-inf",
        "passed-count-inf",
    ],
)
def test_a_store_written_by_something_else_is_named_not_an_internal_error(
    evalkit_cli, project, tamper, message
) -> None:
    """A newer evalkit (or a hand, or another program) may leave values this one does not know:
    SQLite keeps text in a REAL column. Every read command crashed with ValueError or TypeError."""
    first = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    second = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.execute(tamper, {"run": second})
    readers = [
        ("compare", first, second),
        ("report", second, "--format", "json"),
        ("show", second, "--json"),
        ("show", second),
    ]
    if (
        "latency_s" in tamper or "checks" in tamper
    ):  # compare pairs the cases' marks (pass, score); show lists only failed cases
        readers = readers[1:3]
    if "evalkit_run" in tamper:
        readers.append(("history", "evalkit.smoke"))
    if "accepted_at" in tamper:
        readers += [
            ("baseline", "show", "evalkit.smoke"),
            ("baseline", "export", "evalkit.smoke", "--output", "exported.json"),
        ]
    for args in readers:
        result = evalkit_cli(*args)
        assert result.code == 2, (args, result.stderr)
        assert message in result.stderr and "internal error" not in result.stderr, (args, result.stderr)


def test_text_another_program_stored_as_a_blob_or_a_number_is_read_as_text(evalkit_cli, project) -> None:
    """SQLite keeps a BLOB or a number in a TEXT column: decoding it as evalkit's text failed every
    command that read the row (TypeError). It reads as text now: UTF-8, a byte that is none as U+FFFD."""
    run_id = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.execute("update evalkit_run set label = x'4c4142ff', identity_note = 42 where id = :run", {"run": run_id})
        conn.execute("update evalkit_case set error = x'ff' where run_id = :run", {"run": run_id})
    shown = evalkit_cli("show", run_id, "--json")
    assert shown.code == 0, shown.stderr
    assert shown.json()["label"] == "LAB\ufffd" and shown.json()["identity_note"] == "42"
    for args in (("show", run_id), ("history", "evalkit.smoke"), ("report", run_id, "--format", "html")):
        result = evalkit_cli(*args)
        assert result.code == 0 and "internal error" not in result.stderr, (args, result.stderr)


def test_stored_json_that_is_no_object_reads_as_none(evalkit_cli, project) -> None:
    """A run's metrics or a case's measures stored as ``-1`` (JSON, but no object) made every
    reader's ``.get()`` fail: report and show ended in internal errors."""
    run_id = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.execute("update evalkit_run set metrics = '-1', spend = '[]' where id = :run", {"run": run_id})
        conn.execute("update evalkit_case set measures = '-1' where run_id = :run", {"run": run_id})
    for args in (
        ("show", run_id, "--json"),
        ("report", run_id, "--format", "html"),
        ("report", run_id, "--format", "json"),
    ):
        result = evalkit_cli(*args)
        assert result.code == 0 and "internal error" not in result.stderr, (args, result.stderr)
    shown = evalkit_cli("show", run_id, "--json").json()
    assert shown.get("metrics") is None and all(case.get("measures") is None for case in shown["cases"])


def test_nan_and_infinity_in_stored_json_print_as_null_and_every_json_output_parses(evalkit_cli, project) -> None:
    """Python's json writes and reads NaN and Infinity, which are not JSON: a run's metrics read
    back from a store written by something else made ``show --json`` and the json report print
    text no JSON parser reads (``jq``, ``JSON.parse``, a strict ``json.loads``)."""
    run_id = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.execute(
            """update evalkit_run set metrics = '{"serving": {"odd": NaN, "big": Infinity, "small": -Infinity}}' where id = :run""",
            {"run": run_id},
        )

    def strict(text: str) -> object:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the JSON output"))

    shown = evalkit_cli("show", run_id, "--json")
    assert shown.code == 0, shown.stderr
    assert strict(shown.stdout)["metrics"]["serving"] == {"odd": None, "big": None, "small": None}
    report = evalkit_cli("report", run_id, "--format", "json")
    assert report.code == 0 and "NaN" not in report.stdout and "Infinity" not in report.stdout, report.stdout[-400:]
    strict(report.stdout)
    strict(evalkit_cli("history", "evalkit.smoke", "--json").stdout)


@pytest.mark.parametrize(
    "command",
    [("run", "evalkit.smoke"), ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")],
    ids=["run", "retrieval"],
)
def test_a_baseline_this_evalkit_cannot_read_leaves_the_new_run_stored_and_not_compared(
    evalkit_cli, project, command
) -> None:
    """The new run is stored before its baseline is read: an unreadable baseline made it exit 2
    ("bad input, nothing stored") with the run stored and no verdict. Now it is a run that could
    not be compared, for the reason named: exit 0, or 1 under --fail-on-regression."""
    first = evalkit_cli(*command, "--json")
    assert first.code == 0, first.stderr[-500:]
    with sqlite3.connect(project / ".evalkit" / "results.db") as conn:
        conn.execute("update evalkit_run set started_at = 'noon' where id = :run", {"run": first.json()["run_id"]})
    reason = "not compared: the baseline could not be read from the store — "
    second = evalkit_cli(*command, "--json")
    assert second.code == 0 and "internal error" not in second.stderr, second.stderr[-500:]
    document = second.json()
    assert document["status"] == "complete" and reason in json.dumps(document, ensure_ascii=False)
    gated = evalkit_cli(*command, "--fail-on-regression")
    assert gated.code == 1 and reason in gated.stdout + gated.stderr, gated.stderr[-500:]
    assert "started_at 'noon', not a number" in gated.stdout + gated.stderr
