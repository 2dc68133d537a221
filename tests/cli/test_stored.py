"""`evalkit.cli.stored.open_store`: the commands that only read a store read it without its write lock."""

from __future__ import annotations

import sqlite3

import pytest


@pytest.fixture
def two_runs(evalkit_cli, project) -> tuple[str, str]:  # noqa: ANN001 - the suite's fixtures
    """Two stored runs of ``evalkit.smoke`` (the second compared with the first)."""
    return tuple(evalkit_cli("run", "evalkit.smoke", "--json").json()["run_id"] for _ in range(2))  # type: ignore[return-value]


def test_a_command_that_only_reads_does_not_wait_for_a_run_writing_the_store(evalkit_cli, project, two_runs, tmp_path) -> None:
    # Each of them probed the write lock (BEGIN IMMEDIATE) when it opened the store: while a run
    # (or a prune) held it, `evalkit history` waited the whole busy timeout and then failed,
    # exit 3 "database is locked", though a WAL store never makes a reader wait for the writer.
    first, second = two_runs
    readers = [
        ("history", "evalkit.smoke"),
        ("show", second),
        ("compare", first, second),
        ("compare", first, second, "--report", f"junit:{tmp_path / 'compare.xml'}"),
        ("flaky", "evalkit.smoke"),
        ("baseline", "show", "evalkit.smoke"),
        ("report", second, "--format", "markdown"),
        ("cache", "stats"),
        ("judge", "show"),
    ]
    holder = sqlite3.connect(project / ".evalkit" / "results.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, open for longer than the timeout
        for args in readers:
            result = evalkit_cli(*args, env={"EVALKIT_BUSY_TIMEOUT": "1"})
            assert result.code == 0, (args, result.stderr)
            assert "locked" not in result.stderr
        # What changes the store still waits its turn, and says why it could not have it.
        pruned = evalkit_cli("db", "prune", "--older-than", "90d", env={"EVALKIT_BUSY_TIMEOUT": "1"})
        assert pruned.code == 3 and "database is locked after 1 s" in pruned.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()

