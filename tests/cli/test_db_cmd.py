"""`evalkit db status|upgrade|prune`."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from evalkit.cli.db_cmd import parse_age
from evalkit.errors import UsageError
from evalkit.storage.schema import MIGRATIONS
from evalkit.storage.schema import SCHEMA_VERSION as LATEST

#: Every migration this evalkit knows (tests follow the list as migrations are added).
VERSIONS = [version for version, _, _ in MIGRATIONS]


def test_status_and_upgrade_of_a_new_store(evalkit_cli, project) -> None:
    status = evalkit_cli("db", "status", "--json")
    assert status.code == 2 and status.json()["error"].startswith("There is no results store at "), "--json's error object alone"
    assert f"There is no results store at {project / '.evalkit' / 'results.db'} yet" in status.stderr
    assert "the first `evalkit run` will create it" in status.stderr and "db upgrade" not in status.stderr
    assert not (project / ".evalkit").exists(), "status only reads"
    upgraded = evalkit_cli("db", "upgrade")
    assert upgraded.code == 0 and f"from schema version 0 to {LATEST} (applied {', '.join(map(str, VERSIONS))})" in upgraded.stdout
    again = evalkit_cli("db", "upgrade", "--json").json()
    assert again["applied_now"] == [] and again["version"] == LATEST
    text = evalkit_cli("db", "status").stdout
    assert f"version {LATEST} (up to date)" in text and "create run and case tables" in text


def test_prune_removes_whole_old_runs_and_reports_how_many(evalkit_cli, project) -> None:
    ids = [evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"] for _ in range(4)]
    db = project / ".evalkit" / "results.db"
    old = time.time() - 91 * 86400
    with sqlite3.connect(db) as connection:  # ids[0], the first run, is the scope's baseline: kept
        connection.execute("UPDATE evalkit_run SET started_at = ? WHERE id IN (?, ?, ?)", (old, *ids[:3]))
    pruned = evalkit_cli("db", "prune", "--older-than", "90d")
    assert pruned.code == 0, pruned.stderr
    assert "Pruned 2 runs, with their cases" in pruned.stdout
    with sqlite3.connect(db) as connection:
        assert {row[0] for row in connection.execute("SELECT id FROM evalkit_run")} == {ids[0], ids[3]}
        assert {row[0] for row in connection.execute("SELECT DISTINCT run_id FROM evalkit_case")} == {ids[0], ids[3]}
    assert evalkit_cli("db", "prune", "--older-than", "90d", "--json").json()["pruned_runs"] == 0


def test_prune_keeps_each_scopes_current_baseline_so_the_gate_still_fires(evalkit_cli, project) -> None:
    # `db prune --older-than 90d` deleted a scope's accepted baseline when it was older than the
    # age, so the next run of the scope, regressed or not, was "the first run of its scope" and
    # became the baseline: a retention job turned the gate off for every set that had been stable
    first = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    later = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    db = project / ".evalkit" / "results.db"
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE evalkit_run SET started_at = ? WHERE id IN (?, ?)", (time.time() - 91 * 86400, first, later))
    pruned = evalkit_cli("db", "prune", "--older-than", "90d")
    assert pruned.code == 0, pruned.stderr
    assert "Pruned 1 run, with their cases" in pruned.stdout and "1 current baseline was kept" in pruned.stdout, pruned.stdout
    assert evalkit_cli("db", "prune", "--older-than", "90d", "--json").json()["kept_baselines"] == 1
    shown = evalkit_cli("baseline", "show", "evalkit.smoke", "--json")
    assert shown.code == 0 and first in shown.stdout, shown.stdout
    gated = evalkit_cli("run", "evalkit.smoke", "--fail-on-regression", "--json").json()
    assert gated["verdict"]["state"] != "baseline" and gated["verdict"]["baseline_id"] == first


@pytest.mark.parametrize("age", ["90", "0d", "-3d", "90 days", "0.5s", "d"])
def test_a_bad_age_exits_2_and_deletes_nothing(evalkit_cli, age) -> None:
    evalkit_cli("run", "evalkit.smoke")
    result = evalkit_cli("db", "prune", f"--older-than={age}")
    assert result.code == 2 and "--older-than must be a duration from 1 s to 50 years (a number with a unit" in result.stderr
    assert len(evalkit_cli("history", "evalkit.smoke", "--json").json()["runs"]) == 1


def test_ages() -> None:
    assert [parse_age(a) for a in ("45s", "30m", "12h", "90d", "2w", "1.5d")] == [45, 1800, 43200, 7776000, 1209600, 129600]
    with pytest.raises(UsageError):
        parse_age("0w")


def test_db_without_a_subcommand_shows_help(evalkit_cli) -> None:
    result = evalkit_cli("db")
    assert result.code == 2 and "upgrade" in result.stdout and "prune" in result.stdout


def test_a_migration_log_another_program_wrote_is_named_not_an_internal_error(evalkit_cli, project) -> None:
    """``db status`` read the log as it found it: a time that is text or an infinity, or a name
    stored as a BLOB, ended it (and ``db upgrade``) in an internal error."""
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    database = project / ".evalkit" / "results.db"
    with sqlite3.connect(database) as conn:
        conn.execute("update evalkit_schema_migration set name = x'ff' where version = ?", (LATEST,))
    named = evalkit_cli("db", "status")
    assert named.code == 0 and "\ufffd" in named.stdout, named.stderr
    for tampered, message in (("'x'", "has applied_at 'x', not a number"), ("9e999", "has applied_at inf, not a finite number")):
        with sqlite3.connect(database) as conn:
            conn.execute(f"update evalkit_schema_migration set applied_at = {tampered} where version = ?", (LATEST,))
        for args in (("db", "status"), ("db", "status", "--json"), ("db", "upgrade")):
            result = evalkit_cli(*args)
            assert result.code == 2 and f"migration {LATEST} in the store {message}" in result.stderr, (args, result.stderr)
            assert "internal error" not in result.stderr


def test_prune_counts_what_it_kept_in_the_store_not_in_the_newest_thousand_runs(evalkit_cli, project) -> None:
    """The kept counts came from ``recent_runs(limit=1000)``: with more than 1,000 newer runs, an
    old baseline the purge kept was reported as "0 current baselines kept"."""
    from evalkit import Run
    from evalkit.storage import open_repository

    baseline = evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"]
    db = project / ".evalkit" / "results.db"
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE evalkit_run SET started_at = ? WHERE id = ?", (time.time() - 91 * 86400, baseline))
    repository = open_repository(f"sqlite:///{db}")
    try:
        now = time.time()
        for n in range(1001):  # newer runs, straight into the store: more than the old cap
            run = Run(id=f"newer-{n:04d}", set_identifier="pkg.set", grader="deterministic", started_at=now + n, case_count=1)
            repository.begin_run(run)
    finally:
        repository.close()
    pruned = evalkit_cli("db", "prune", "--older-than", "90d", "--json")
    assert pruned.code == 0, pruned.stderr
    assert pruned.json()["pruned_runs"] == 0 and pruned.json()["kept_baselines"] == 1, pruned.stdout


def test_a_store_without_its_own_count_is_counted_from_every_run_it_lists() -> None:
    """A third-party ``RunHistory`` has no ``runs_started_before``: its runs are listed until it
    gives fewer than asked, never cut at the first 1,000."""
    from types import SimpleNamespace

    from evalkit.runs import RunStatus
    from evalkit.storage import runs_started_before

    runs = [SimpleNamespace(started_at=5000 - n, status=RunStatus.COMPLETE) for n in range(2500)]
    runs.append(SimpleNamespace(started_at=1, status=RunStatus.RUNNING))

    class Listed:
        def recent_runs(self, set_identifier=None, limit=20):  # noqa: ANN001, ANN201
            return runs[:limit]

    assert runs_started_before(Listed(), 3000) == {RunStatus.COMPLETE: 499, RunStatus.RUNNING: 1}


#: A store written by the release before this layout: its schema is older than this evalkit's.
RELEASED_STORE = Path(__file__).parents[1] / "data" / "storage" / "released-store.db"


@contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` and the files in it read-only for the block: file modes, or for root (who writes
    through them) a read-only bind mount."""
    if os.geteuid() == 0:
        if subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode != 0:
            pytest.skip("root, and no read-only bind mount possible here")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True, capture_output=True)
        try:
            yield
        finally:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        return
    for file in folder.iterdir():
        file.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_upgrading_a_read_only_store_says_what_is_wrong_and_what_to_do(evalkit_cli, tmp_path, journal) -> None:
    # it said SQLite's "cannot open database …: attempt to write a readonly database", or (a store
    # in WAL mode) a reader's advice to "copy the file … and read the copy"
    folder = tmp_path / "kept"
    folder.mkdir()
    shutil.copy(RELEASED_STORE, folder / "results.db")
    with sqlite3.connect(folder / "results.db") as connection:
        connection.execute(f"PRAGMA journal_mode = {journal}")
    url = f"sqlite:///{folder / 'results.db'}"
    with _read_only(folder):
        result = evalkit_cli("db", "upgrade", "--database", url)
    assert result.code == 2, result.stderr
    said = f"{folder / 'results.db'} is read-only (or immutable), and this command writes to it; make the file writable"
    assert said in result.stderr and "or use a copy that can be written" in result.stderr, result.stderr
    assert "attempt to write" not in result.stderr and "read the copy" not in result.stderr, result.stderr


def test_status_reads_a_read_only_store(evalkit_cli, tmp_path) -> None:
    # status opened a writing connection, which turns the file to WAL mode: "attempt to write a readonly database"
    folder = tmp_path / "kept"
    folder.mkdir()
    shutil.copy(RELEASED_STORE, folder / "results.db")
    with sqlite3.connect(folder / "results.db") as connection:
        connection.execute("PRAGMA journal_mode = delete")
    with _read_only(folder):
        result = evalkit_cli("db", "status", "--database", f"sqlite:///{folder / 'results.db'}")
    assert result.code == 0, result.stderr
    assert "migrations pending — run `evalkit db upgrade`" in result.stdout, result.stdout
