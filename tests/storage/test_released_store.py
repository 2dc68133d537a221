"""A store written by the released version (before the store was split by concern and its schema
moved to ``playhouse.migrate``) opens, upgrades in place, reads back exactly as that version read
it, and keeps comparing new runs with the baselines it accepted, on SQLite and PostgreSQL.

The data in tests/data/storage/ was made by that version (see the README there): ``released-store.db``
is a SQLite file as it left it, ``released-store.pg.sql`` a ``pg_dump`` of the same runs written to
PostgreSQL, and ``released-store.expected.json`` what that version read back from each
(:func:`read_back`, run by it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from evalkit.storage import open_repository, schema_status, upgrade_schema

DATA = Path(__file__).resolve().parent.parent / "data" / "storage"
SQLITE_STORE = DATA / "released-store.db"
POSTGRES_DUMP = DATA / "released-store.pg.sql"
EXPECTED = DATA / "released-store.expected.json"
#: The schema version the released store is at (the migrations it logged, with their names).
RELEASED_MIGRATIONS = [
    (1, "create run and case tables"),
    (2, "keep each run's verdict; index history and retention; PostgreSQL: double times, text names"),
    (3, "accepted baselines (who, when, why); retrieval MRR stored as MRR@k"),
    (4, "run leases: who is answering a run or shard, with a heartbeat; which shards are in"),
    (5, "keep each retrieval question's rank measures at every privacy level (resumable retrieval runs)"),
    (6, "each case keeps its fingerprint, moved from the run's map (dropped); runs say if they kept them"),
]


def read_back(url: str) -> dict[str, Any]:
    """Everything the store says about its runs through the repository's public reads: each run
    with its cases, the recorded verdicts and acceptances, the accepted runs of each set and each
    run's shard progress. Written so the released version can run it too (it made the expected file)."""
    from evalkit.convert import unstructure

    repo = open_repository(url)
    try:
        runs = repo.recent_runs(limit=1000)
        ids = sorted(run.id for run in runs)
        sets = sorted({run.set_identifier for run in runs})
        return {
            "runs": {run_id: unstructure(repo.get_run(run_id)) for run_id in ids},
            "verdicts": {run_id: unstructure(v) for run_id, v in sorted(repo.verdicts_for(ids).items())},
            "acceptances": {run_id: unstructure(a) for run_id, a in sorted(repo.acceptances_for(ids).items())},
            "accepted_runs": {set_id: [run.id for run in repo.accepted_runs(set_id)] for set_id in sets},
            "shards": {run_id: unstructure(repo.shard_progress(run_id)) for run_id in ids},
        }
    finally:
        repo.close()


def _load_postgres_dump(url: str) -> None:
    """Load the dump into the empty database ``url`` (psql's meta-commands, such as ``\\restrict``,
    are psql's business: the statements go to the server as they are)."""
    import psycopg2

    statements = "\n".join(line for line in POSTGRES_DUMP.read_text(encoding="utf-8").splitlines() if not line.startswith("\\"))
    connection = psycopg2.connect(url)
    try:
        with connection, connection.cursor() as cursor:
            cursor.execute(statements)
    finally:
        connection.close()


@pytest.fixture
def released_store(database_url: str, engine: str) -> str:
    """``database_url`` holding the released version's store: the SQLite file copied in, or the
    PostgreSQL dump loaded."""
    if engine == "sqlite":
        path = Path(database_url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SQLITE_STORE, path)
    else:
        _load_postgres_dump(database_url)
    return database_url


def _same_as_released(got: Any, expected: Any, where: str = "") -> None:
    """``got`` holds every value the released version read, unchanged (a field added to a run or a
    case since is not in ``expected``, and is not compared)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), where
        assert set(expected) <= set(got), f"{where}: {sorted(set(expected) - set(got))} missing"
        for key, value in expected.items():
            _same_as_released(got[key], value, f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for number, (item, value) in enumerate(zip(got, expected, strict=True)):
            _same_as_released(item, value, f"{where}[{number}]")
    elif where.endswith("/state") and "/verdicts/" in where:
        # The verdict words changed in this release (issue 31: one vocabulary for both kinds of
        # run); a verdict the released version stored reads back in the new words.
        assert got == RENAMED_VERDICT_STATES.get(expected, expected), where
    else:
        assert got == expected, where


#: The released version's stored verdict words and the words they read back as now.
RENAMED_VERDICT_STATES = {"ok": "no_regression", "not_compared": "not_comparable"}


def test_the_released_store_upgrades_in_place_and_reads_back_as_it_was_written(released_store: str, engine: str) -> None:
    before = schema_status(released_store)
    assert [(m.version, m.name) for m in before.applied] == RELEASED_MIGRATIONS

    status, applied = upgrade_schema(released_store)

    assert status.up_to_date
    assert [(m.version, m.name) for m in status.applied][: len(RELEASED_MIGRATIONS)] == RELEASED_MIGRATIONS
    assert applied == [m.version for m in status.applied if m.version > len(RELEASED_MIGRATIONS)]
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))[engine]
    got = json.loads(json.dumps(read_back(released_store)))
    assert sorted(got["runs"]) == sorted(expected["runs"])
    _same_as_released(got, expected)


def test_new_runs_are_compared_with_the_baselines_the_released_store_accepted(
    released_store: str, engine: str, evalkit_cli
) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))[engine]
    upgrade_schema(released_store)

    def verdict(*args: str) -> dict[str, Any]:
        done = evalkit_cli(*args, "--database", released_store, "--json")
        assert done.code == 0, done.stderr
        return done.json()["verdict"]

    # smoke-1 was accepted on purpose after smoke-2 was accepted automatically: it is the baseline.
    smoke = verdict("run", "evalkit.smoke")
    assert (smoke["baseline_id"], smoke["regressed"]) == ("smoke-1", False)
    retrieval = verdict("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    newest_accepted = expected["accepted_runs"]["evalkit_stdlib.docs"][0]
    assert (retrieval["baseline_id"], retrieval["regressed"]) == (newest_accepted, False)
    assert evalkit_cli("init").code == 0
    # faq-2 regressed, so it was never accepted: the first run stays the baseline.
    faq = verdict("run", "starter.faq", "--provider", "recorded")
    assert (faq["baseline_id"], faq["regressed"]) == ("faq-1", False)

    repo = open_repository(released_store)
    try:
        assert len(repo.recent_runs(limit=1000)) == len(expected["runs"]) + 3
    finally:
        repo.close()


def test_the_released_stores_cases_count_toward_a_request_limit_as_they_did_when_stored(released_store: str, engine: str) -> None:
    """Migration 12 keeps the requests each case sent (``requests_sent``); a case stored before has
    none (nor migration 11's replies): upgraded in place, each reads as not stored, and
    ``--max-requests`` counts it as the release that stored it did — one request an answered case."""
    from evalkit.costs import limited_requests
    from evalkit.run.answering.spending import budget_spent
    from evalkit.storage import CaseUsage

    upgrade_schema(released_store)
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))[engine]
    repo = open_repository(released_store)
    try:
        for run_id, run in expected["runs"].items():
            if run["kind"] != "prompts":
                continue
            rows = list(repo.case_usage(run_id))
            assert len(rows) == len(run["cases"]) and all(isinstance(row, CaseUsage) for row in rows), run_id
            assert {(row.requests, row.requests_sent) for row in rows} == {(None, None)}, run_id
            assert [limited_requests(row) for row in rows] == [0 if case["error"] else 1 for case in run["cases"]]
            assert budget_spent(None, rows)[1] == len(run["cases"]), run_id
    finally:
        repo.close()
