"""Numbered migrations: a database written by the first release is refused, upgraded, and read back."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from evalkit.errors import SchemaOutOfDateError
from evalkit.runs import RunStatus
from evalkit.storage import open_repository, schema_status, upgrade_schema
from evalkit.storage import schema as schema_module
from evalkit.storage.migrations import m0006_case_fingerprints
from evalkit.storage.migrations.m0001_initial import tables as v1_tables
from evalkit.storage.sql import connect, sqlite_path

#: Every migration this evalkit knows, and the newest (tests follow the list as migrations are added).
VERSIONS = [version for version, _, _ in schema_module.MIGRATIONS]
LATEST = schema_module.SCHEMA_VERSION

KERNEL_V1_DUMP = Path(__file__).resolve().parent.parent / "data" / "storage" / "kernel-v1.sql"
#: The schema version this evalkit ships, and every migration above the first release.
LATEST = schema_module.SCHEMA_VERSION
SINCE_V1 = [v for v, _, _ in schema_module.MIGRATIONS if v > 1]
V1_RUN_IDS = ["20261129T151517-bdb2d3", "20261129T151517-aafc8d", "20261129T151518-1267f0"]
#: The schema this evalkit writes, and every migration it knows (later helpers add to the list).
LATEST = schema_module.SCHEMA_VERSION
ALL_VERSIONS = [version for version, _, _ in schema_module.MIGRATIONS]


def _kernel_rows() -> dict[str, list[dict[str, Any]]]:
    """The rows the first release wrote, read from its dump."""
    memory = sqlite3.connect(":memory:")
    memory.row_factory = sqlite3.Row
    memory.executescript(KERNEL_V1_DUMP.read_text(encoding="utf-8"))
    rows = {
        table: [dict(row) for row in memory.execute(f'SELECT * FROM "{table}" ORDER BY 1')]
        for table in ("evalkit_run", "evalkit_case", "evalkit_schema_migration")
    }
    memory.close()
    return rows


def make_first_release_database(url: str) -> None:
    """A database at schema version 1 holding the first release's rows, on either engine."""
    db = connect(url)
    db.connect()
    try:
        assert schema_module.upgrade(db, target=1) == [1]
        tables = v1_tables(db)
        rows = _kernel_rows()
        with db.atomic():
            tables.Run.insert_many(rows["evalkit_run"]).execute()
            for row in rows["evalkit_case"]:
                row["run"] = row.pop("run_id")
                row.pop("id")
            tables.Case.insert_many(rows["evalkit_case"]).execute()
    finally:
        db.close()


def test_migration_1_creates_exactly_the_tables_the_first_release_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    db = connect(url)
    db.connect()
    schema_module.upgrade(db, target=1)
    db.close()

    def ddl(connection: sqlite3.Connection) -> set[str]:
        return {sql for (sql,) in connection.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")}

    kernel = sqlite3.connect(":memory:")
    kernel.executescript(KERNEL_V1_DUMP.read_text(encoding="utf-8"))
    assert ddl(sqlite3.connect(tmp_path / "fresh.db")) == ddl(kernel)


def test_a_first_release_database_is_refused_until_upgraded_then_every_row_reads_back(database_url: str, engine: str) -> None:
    make_first_release_database(database_url)
    with pytest.raises(SchemaOutOfDateError, match=rf"schema version 1, this evalkit needs {LATEST}: run `evalkit db upgrade`"):
        open_repository(database_url)
    before = schema_status(database_url)
    assert (before.version, before.latest, [v for v, _ in before.pending]) == (1, LATEST, VERSIONS[1:])

    status, applied = upgrade_schema(database_url)
    assert applied == VERSIONS[1:] and status.version == LATEST and status.up_to_date
    assert upgrade_schema(database_url)[1] == []

    rows = _kernel_rows()
    repo = open_repository(database_url)
    try:
        listed = repo.recent_runs("evalkit.smoke")
        assert sorted(r.id for r in listed) == sorted(V1_RUN_IDS)
        # On PostgreSQL the first release kept times as 4-byte floats: these three runs, a second
        # apart, tie on their start time, and the run id decides (values stay as they were stored).
        assert [r.id for r in listed] == [r.id for r in sorted(listed, key=lambda r: (r.started_at, r.id), reverse=True)]
        if engine == "sqlite":
            assert [r.id for r in listed] == list(reversed(V1_RUN_IDS))
        for row in rows["evalkit_run"]:
            run = repo.get_run(row["id"])
            expected_cases = [c["case_id"] for c in rows["evalkit_case"] if c["run_id"] == row["id"]]
            assert [c.case_id for c in run.cases] == expected_cases
            assert (run.status, run.passed_count, run.answered_count, run.label, run.privacy) == (
                RunStatus.COMPLETE, row["passed_count"], row["answered_count"], row["label"], row["privacy"]
            )
            assert run.verified and run.identity.reported_model == row["reported_model"]
        replayed = repo.get_run(V1_RUN_IDS[2])
        assert {c.case_id: c.answer_text for c in replayed.cases}["two-plus-two"] == "four"
        assert repo.verdicts_for(V1_RUN_IDS) == {}, "nothing is assigned to old rows retroactively"
        identity = repo.get_run(V1_RUN_IDS[1]).identity
        reference_runs = [r for r in listed if r.identity == identity]
        newest = max(reference_runs, key=lambda r: (r.finished_at, r.started_at, r.id))
        assert repo.baseline_for("evalkit.smoke", identity, "deterministic").id == newest.id
        if engine == "sqlite":
            assert newest.id == V1_RUN_IDS[1]
    finally:
        repo.close()


def test_after_the_upgrade_times_keep_their_precision_and_long_names_fit(database_url: str) -> None:
    from evalkit import CaseResult, Run, ServingIdentity

    make_first_release_database(database_url)
    upgrade_schema(database_url)
    long_model = "m" * 300
    identity = ServingIdentity("inst", "alias", long_model)
    repo = open_repository(database_url)
    try:
        for run_id, started in (("early", 1_795_965_317.25), ("late", 1_795_965_317.75)):
            repo.begin_run(Run(id=run_id, set_identifier="pkg." + "s" * 250, grader="deterministic", case_count=1,
                               started_at=started, provider_instance="inst", model_alias="alias", label="l" * 400))
            repo.record_cases(run_id, [CaseResult("c" * 300, True, 1 / 3, identity=identity, finished_at=started)], "metadata")
            repo.finish_run(run_id, "complete", started + 0.1, identity=identity)
        late = repo.get_run("late")
        assert late.started_at == 1_795_965_317.75 and late.finished_at == pytest.approx(1_795_965_317.85, abs=1e-6)
        assert late.cases[0].score == 1 / 3 and late.identity.reported_model == long_model
        assert [r.id for r in repo.recent_runs("pkg." + "s" * 250)] == ["late", "early"]
    finally:
        repo.close()


def test_a_newer_schema_is_refused_with_upgrade_evalkit(database_url: str) -> None:
    open_repository(database_url).close()
    db = connect(database_url)
    db.connect()
    v1_tables(db).SchemaMigration.insert(version=99, name="from the future", applied_at=0.0).execute()
    db.close()
    with pytest.raises(SchemaOutOfDateError, match="newer than this evalkit understands"):
        open_repository(database_url)
    with pytest.raises(SchemaOutOfDateError, match="upgrade evalkit"):
        upgrade_schema(database_url)


def test_many_processes_upgrading_at_once_apply_each_migration_exactly_once(database_url: str) -> None:
    applied: list[int] = []
    errors: list[BaseException] = []

    def upgrade() -> None:
        try:
            applied.extend(upgrade_schema(database_url)[1])
        except BaseException as exc:  # reported below, with the others
            errors.append(exc)

    threads = [threading.Thread(target=upgrade) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(applied) == VERSIONS
    assert schema_status(database_url).version == LATEST


def test_status_of_a_missing_sqlite_file_creates_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nowhere' / 'results.db'}"
    status = schema_status(url)
    assert status.version == 0 and [v for v, _ in status.pending] == VERSIONS
    assert not Path(sqlite_path(url)).parent.exists()


def test_status_names_the_database_without_its_password() -> None:
    assert schema_module.redact_url("postgresql://ci:s3cret@db:5432/evalkit") == "postgresql://ci:***@db:5432/evalkit"


def test_the_cli_refuses_to_write_to_an_old_schema_and_upgrades_it(evalkit_cli, tmp_path: Path) -> None:
    db_file = tmp_path / "v1.db"
    connection = sqlite3.connect(db_file)
    connection.executescript(KERNEL_V1_DUMP.read_text(encoding="utf-8"))
    connection.close()
    url = f"sqlite:///{db_file}"

    refused = evalkit_cli("run", "evalkit.smoke", "--database", url)
    assert refused.code == 2
    assert f"schema version 1, this evalkit needs {LATEST}: run `evalkit db upgrade`" in refused.stderr
    with sqlite3.connect(db_file) as check:
        assert check.execute("SELECT COUNT(*) FROM evalkit_run").fetchone() == (3,)

    status = evalkit_cli("db", "status", "--database", url)
    assert status.code == 0 and f"version 1 of {LATEST}; {len(VERSIONS) - 1} migrations pending" in status.stdout
    upgraded = evalkit_cli("db", "upgrade", "--database", url)
    assert upgraded.code == 0, upgraded.stderr
    assert f"from schema version 1 to {LATEST} (applied {', '.join(map(str, VERSIONS[1:]))})" in upgraded.stdout

    history = evalkit_cli("history", "evalkit.smoke", "--database", url, "--json").json()
    assert [r["run_id"] for r in history["runs"]] == list(reversed(V1_RUN_IDS))
    assert [r["verdict"] for r in history["runs"]] == [None, None, None]
    # Complete, verified runs stored before verdicts were kept were baselines then: they count as accepted.
    assert [r["accepted"]["how"] for r in history["runs"]] == ["migrated"] * 3
    shown = evalkit_cli("show", V1_RUN_IDS[0], "--database", url, "--json").json()
    assert len(shown["cases"]) == 7 and shown["status"] == "complete"

    fresh = evalkit_cli("run", "evalkit.smoke", "--database", url, "--json")
    assert fresh.code == 0, fresh.stderr
    assert fresh.json()["verdict"]["state"] == "no_regression"
    assert fresh.json()["baseline_id"] == V1_RUN_IDS[1], "the newest first-release reference run is the baseline"


KERNEL_V5_DUMP = Path(__file__).resolve().parent.parent / "data" / "storage" / "kernel-v5.sql"
#: What version 5 said comparing the dump's runs (current, baseline), computed by that release before
#: the dump was taken: the split of the cases, the regressed ones and whether both kept fingerprints.
V5_VERDICTS = {
    ("v5-now", "v5-base"): (("a", "b", "nul\x00id"), ("edited", "lone-\udcff"), ("new", "not-in-map"), ("c",), ("b",), True),
    ("v5-now", "v5-old"): (("a", "b"), (), ("edited", "nul\x00id", "lone-\udcff", "new", "not-in-map"), ("c",), ("b",), False),
    ("v5-old", "v5-base"): (("a", "b", "c"), (), (), ("edited", "nul\x00id", "lone-\udcff"), ("c",), False),
    ("v5-retrieval-now", "v5-retrieval-base"): (("q1",), ("q2",), (), (), ("q1",), True),
}


def _load_rows(dump: Path) -> dict[str, list[dict[str, Any]]]:
    memory = sqlite3.connect(":memory:")
    memory.row_factory = sqlite3.Row
    memory.executescript(dump.read_text(encoding="utf-8"))
    rows = {table: [dict(r) for r in memory.execute(f'SELECT * FROM "{table}" ORDER BY rowid')] for table in ("evalkit_run", "evalkit_case")}
    memory.close()
    return rows


def make_version_5_database(url: str, engine: str) -> None:
    """The store of ``kernel-v5.sql`` at schema version 5: SQLite loads the dump as it is; PostgreSQL
    gets the schema from migrations 1 to 5 and the dump's rows, as stored (text already encoded)."""
    if engine == "sqlite":
        Path(sqlite_path(url)).parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(sqlite_path(url))
        connection.executescript(KERNEL_V5_DUMP.read_text(encoding="utf-8"))
        connection.close()
        return
    db = connect(url)
    db.connect()
    try:
        assert schema_module.upgrade(db, target=5) == [1, 2, 3, 4, 5]
        with db.atomic():
            for table, rows in _load_rows(KERNEL_V5_DUMP).items():
                booleans = {c.name for c in db.get_columns(table) if c.data_type == "boolean"}
                for row in rows:
                    row.pop("id") if table == "evalkit_case" else None
                    names = list(row)
                    values = [bool(row[n]) if n in booleans and row[n] is not None else row[n] for n in names]
                    db.execute_sql(
                        f'INSERT INTO "{table}" ({", ".join(chr(34) + n + chr(34) for n in names)}) VALUES ({", ".join(db.param for _ in names)})',
                        values,
                    )
    finally:
        db.close()


def _run_columns(url: str) -> set[str]:
    db = connect(url)
    db.connect()
    try:
        return {c.name for c in db.get_columns("evalkit_run")}
    finally:
        db.close()


def test_migration_6_moves_each_runs_fingerprints_onto_its_cases_and_every_verdict_stays(database_url: str, engine: str) -> None:
    from evalkit.tolerance import Tolerances
    from evalkit.verdict import compare, compare_pairs

    make_version_5_database(database_url, engine)
    assert "case_fingerprints" in _run_columns(database_url)
    status, applied = upgrade_schema(database_url)
    assert applied == list(range(6, schema_module.SCHEMA_VERSION + 1)) and status.up_to_date
    assert "case_fingerprints" not in _run_columns(database_url), "one source of truth: the map column is gone"
    repo = open_repository(database_url)
    try:
        now = repo.get_run("v5-now")
        assert now.fingerprints_kept and not repo.get_run("v5-old").fingerprints_kept
        prints = {c.case_id: c.fingerprint for c in now.cases}
        assert prints["edited"] == "sha256:" + "E" * 64 and prints["lone-\udcff"] == "sha256:" + "S" * 64
        assert prints["nul\x00id"] == "sha256:" + "n" * 64 and prints["not-in-map"] is None
        assert all(c.fingerprint is None for c in repo.get_run("v5-old").cases)
        assert {c.case_id: c.fingerprint for c in repo.get_run("v5-retrieval-now").cases} == {"q1": "sha256:" + "1" * 64, "q2": "sha256:" + "X" * 64}
        for (current, baseline), expected in V5_VERDICTS.items():
            whole = compare(repo.get_run(current), repo.get_run(baseline), Tolerances(0, 0))
            streamed = compare_pairs(
                repo.get_run(current, with_cases=False), repo.get_run(baseline, with_cases=False),
                repo.paired_cases(current, baseline), Tolerances(0, 0),
            )  # fmt: skip
            assert streamed == whole
            got = (whole.compared_cases, tuple(e.case_id for e in whole.edited_cases), whole.added_cases,
                   whole.removed_cases, whole.regressed_cases, whole.fingerprints_known)  # fmt: skip
            assert got == expected, (current, baseline)
    finally:
        repo.close()


def _version_5_store_with_maps(url: str) -> dict[str, str | None]:
    """A schema-5 store written row by row: a run of 2,500 cases with its map, runs whose map is
    empty, unreadable or not a map of strings, and a run without one. Returns each run's map text."""
    import json

    from evalkit.storage.textcodec import encode_text

    big = {f"case-{n:05d}": f"sha256:{n:064x}" for n in range(2500)}
    maps: dict[str, str | None] = {
        "big": json.dumps(big), "empty": "{}", "unreadable": "{not json", "list": '["a"]',
        "numbers": '{"a": 1}', "none": None, "other": json.dumps({"case-00000": "sha256:other"}),
    }
    db = connect(url)
    db.connect()
    try:
        schema_module.upgrade(db, target=5)
        tables = v1_tables(db)
        with db.atomic():
            for number, (run_id, text) in enumerate(maps.items()):
                tables.Run.insert(id=run_id, set_identifier="pkg.set", grader="deterministic", status="complete", started_at=float(number)).execute()
                db.execute_sql(f"UPDATE evalkit_run SET case_fingerprints = {db.param} WHERE id = {db.param}", (None if text is None else encode_text(text), run_id))
                ids = list(big) if run_id == "big" else ["case-00000", "a"]
                tables.Case.insert_many([{"run": run_id, "case_id": c, "passed": True, "score": 1.0, "finished_at": 1.0} for c in ids]).execute()
    finally:
        db.close()
    return maps


@pytest.mark.parametrize("can_drop", [True, False], ids=["drop-column", "no-drop-column"])
def test_migration_6_reads_maps_a_few_at_a_time_and_keeps_only_readable_ones(database_url: str, monkeypatch, can_drop: bool) -> None:
    """Paged through the runs, maps read within a small text budget, cases updated in batches; an
    unreadable map means "stored without fingerprints", as version 5 read it. Where the engine cannot
    drop a column (SQLite before 3.35) the map column stays, emptied, and nothing reads it."""
    maps = _version_5_store_with_maps(database_url)
    monkeypatch.setattr(m0006_case_fingerprints, "RUN_PAGE", 2)
    monkeypatch.setattr(m0006_case_fingerprints, "TEXT_BUDGET", 10)
    monkeypatch.setattr(m0006_case_fingerprints, "CASE_BATCH", 700)
    monkeypatch.setattr(m0006_case_fingerprints, "can_drop_column", lambda db: can_drop)
    assert upgrade_schema(database_url)[1] == list(range(6, schema_module.SCHEMA_VERSION + 1))
    assert ("case_fingerprints" in _run_columns(database_url)) is not can_drop
    if not can_drop:
        db = connect(database_url)
        db.connect()
        assert db.execute_sql("SELECT COUNT(*) FROM evalkit_run WHERE case_fingerprints IS NOT NULL").fetchone()[0] == 0
        db.close()
    repo = open_repository(database_url)
    try:
        kept = {run_id: repo.get_run(run_id, with_cases=False).fingerprints_kept for run_id in maps}
        assert kept == {"big": True, "empty": True, "unreadable": False, "list": False, "numbers": False, "none": False, "other": True}
        big = repo.get_run("big").cases
        assert len(big) == 2500 and all(c.fingerprint == f"sha256:{n:064x}" for n, c in enumerate(big))
        assert {c.case_id: c.fingerprint for c in repo.get_run("other").cases} == {"case-00000": "sha256:other", "a": None}
        for run_id in ("empty", "unreadable", "none"):
            assert all(c.fingerprint is None for c in repo.get_run(run_id).cases)
        # The store goes on: a new run keeps its cases' fingerprints.
        from evalkit import CaseResult, Run

        repo.begin_run(Run(id="after", set_identifier="pkg.set", grader="deterministic", fingerprints_kept=True))
        repo.record_cases("after", [CaseResult("a", True, 1.0, fingerprint="sha256:new")], "metadata")
        after = repo.get_run("after")
        assert after.fingerprints_kept and after.cases[0].fingerprint == "sha256:new"
    finally:
        repo.close()


def test_migration_8_keeps_old_runs_readable_with_their_spend_unknown_and_adds_the_answer_cache(database_url: str, engine: str) -> None:
    from evalkit.cli.spend_view import cost_cell, spend_lines
    from evalkit.storage import CachedAnswer, capabilities

    make_version_5_database(database_url, engine)
    status, applied = upgrade_schema(database_url)
    assert 8 in applied and status.up_to_date
    repo = open_repository(database_url)
    try:
        old = repo.get_run("v5-now")
        # Nothing is assigned to an old run retroactively: its prices and spend are unknown, never 0.
        assert old.pricing is None and old.spend is None and old.answers_reused is None
        assert all(case.judge_usage == () and case.answer_source is None for case in old.cases)
        assert cost_cell(old) == "unknown"
        assert any("Cost:       unknown" in line for line in spend_lines(old))
        cache = capabilities(repo).cache
        assert cache is not None and cache.cached_answer("k" * 64) is None
        cache.keep_answer("k" * 64, CachedAnswer(text="four", provider_instance="local", model_alias="m", reported_model="m-1"))
        cache.keep_answer("k" * 64, CachedAnswer(text="other", provider_instance="local"))
        kept = cache.cached_answer("k" * 64)
        assert (kept.text, kept.reported_model) == ("four", "m-1"), "the first answer kept wins"
        assert cache.cache_stats().entries == 1 and cache.clear_cache() == 1 and cache.cache_stats().entries == 0
    finally:
        repo.close()


def test_every_migration_name_fits_the_migration_logs_column() -> None:
    # PostgreSQL enforces varchar(100) on the log's name: a longer name failed `evalkit db upgrade`
    # there ("value too long for type character varying(100)") while SQLite took it.
    import peewee as pw
    from evalkit.storage.models import bind_models

    limit = bind_models(pw.SqliteDatabase(":memory:")).SchemaMigration.name.max_length
    assert limit == 100 and all(len(migration.name) <= limit for migration in schema_module.MIGRATIONS)
