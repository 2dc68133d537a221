"""Results store figures: baseline lookup time with 1,000 and with 1,000,000 stored runs, and the
insert rate of cases.

For each engine (SQLite always; PostgreSQL when ``EVALKIT_TEST_POSTGRES_URL`` names a server, e.g.
after ``eval "$(.ci/pg-start)"``) the script builds two stores with the real schema (as evalkit creates
a store): a small one with the first 1,000 runs of a generated history and a large one with
1,000,000 runs of the same history (1,000 sets x 100 serving identities x 2 graders, mixed
statuses, 4 cases per run). Rows go in with bulk inserts — ``executemany`` in one transaction on
SQLite, ``COPY`` on PostgreSQL — not through the repository, so building takes seconds, not hours.

It then times ``baseline_for`` — what every ``evalkit run`` calls — for the same scopes in both
stores (each lookup finds a baseline and loads its cases) and prints the medians and their ratio.
The goal is a ratio under 2: the lookup searches the scope index rather than scanning the runs;
the engine's query plan is printed to show it. Last, it measures how many cases per second the
repository commits, one case per transaction (a slow generator), eight (a turn of the runner at
concurrency 8) and 256 (a fast generator), into the large store.

    python bench/storage.py [--large 1000000] [--small 1000] [--lookups 2000] [--engine sqlite]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from evalkit import CaseResult, Check, Run, ServingIdentity
from evalkit.storage import open_repository

SETS = 1_000
INSTANCES = 10
ALIASES = 5
SNAPSHOTS = 2
GRADERS = ("deterministic", "decision:judge-gpt:gpt-4o:v1")
CASES_PER_RUN = 4
T0 = 1_700_000_000.0

RUN_COLUMNS = (
    "id", "kind", "set_identifier", "set_fingerprint", "grader", "status", "provider_instance", "adapter",
    "model_alias", "reported_model", "verified", "identity_note", "generator_provenance", "retriever", "deployment",
    "benchmark_fingerprint", "variant_fingerprint", "provenance", "metrics", "case_count", "answered_count",
    "passed_count", "errored_count", "pass_rate", "mean_score", "started_at", "finished_at", "label", "privacy",
    "verdict", "baseline_id", "verdict_note",
)
CASE_COLUMNS = (
    "run_id", "case_id", "passed", "score", "errored", "error", "checks", "latency_s", "provider_instance",
    "model_alias", "reported_model", "adapter", "yardstick", "answer_text", "detail", "usage", "finished_at",
)
CHECKS = '[["stated_the_fact",true,null,null],["within_length",true,null,null]]'


def identity_of(number: int) -> tuple[str, str, str]:
    """The serving identity number ``number`` of ``INSTANCES * ALIASES * SNAPSHOTS``."""
    instance, rest = divmod(number, ALIASES * SNAPSHOTS)
    alias, snapshot = divmod(rest, SNAPSHOTS)
    return f"inst-{instance:02d}", f"model-{alias}", f"model-{alias}-2025-0{snapshot + 1}"


def history(count: int, seed: int = 7) -> Iterator[tuple[tuple, list[tuple]]]:
    """A deterministic stream of ``(run row, case rows)``, oldest first; any prefix is itself a history."""
    rng = random.Random(seed)
    for number in range(count):
        run_id = f"b{number:08d}"
        set_id = f"bench.set{rng.randrange(SETS):04d}"
        instance, alias, reported = identity_of(rng.randrange(INSTANCES * ALIASES * SNAPSHOTS))
        grader = GRADERS[0] if rng.random() < 0.8 else GRADERS[1]
        retrieval = rng.random() < 0.05
        roll = rng.random()
        status = "complete" if roll < 0.9 else ("incomplete" if roll < 0.95 else "running")
        verified = status == "complete" and not retrieval and rng.random() < 0.9
        started = T0 + number * 30.0 + rng.random()
        finished = None if status == "running" else started + 5.0 + rng.random()
        passed_flags = [rng.random() < 0.8 for _ in range(CASES_PER_RUN)]
        passed = sum(passed_flags)
        errored = 1 if status == "incomplete" else 0
        run = (
            run_id, "retrieval" if retrieval else "prompts", set_id, "sha256:" + "0" * 32, grader, status, instance,
            "openai", alias, reported if verified else None, verified, None,
            f'{{"version":1,"provider_instance":"{instance}","model_alias":"{alias}","reported_model":"{reported}"}}'
            if verified else None,
            "evalkit.lexical" if retrieval else None, None, "", "", None, None, CASES_PER_RUN, CASES_PER_RUN, passed,
            errored, passed / CASES_PER_RUN, passed / CASES_PER_RUN, started, finished, None, "metadata",
            None, None, None,
        )
        cases = [
            (
                run_id, f"case-{n}", flag, 1.0 if flag else 0.0, False, None, CHECKS, 0.4, instance, alias, reported,
                "openai", grader, None, None, "[120,8]", started + 1.0 + n,
            )
            for n, flag in enumerate(passed_flags)
        ]
        yield run, cases


def probe_scopes(count: int, lookups: int) -> list[tuple[str, ServingIdentity, str]]:
    """Scopes that have an eligible baseline among the first ``count`` runs (so in both stores)."""
    scopes = sorted(
        {
            (run[2], ServingIdentity(run[6], run[8], run[9]), run[4])
            for run, _ in history(count)
            if run[1] == "prompts" and run[5] == "complete" and run[10]
        },
        key=lambda s: (s[0], s[1].provider_instance, s[1].model_alias, s[1].reported_model, s[2]),
    )
    rng = random.Random(11)
    return [rng.choice(scopes) for _ in range(lookups)]


# -- building stores -----------------------------------------------------------------------------


def build_sqlite(path: Path, count: int) -> float:
    """A SQLite store of ``count`` runs; returns the seconds the bulk insert took.

    The schema's indexes are dropped for the load and re-created from their own DDL afterwards
    (faster than maintaining them row by row); the store ends up exactly as evalkit made it.
    """
    open_repository(f"sqlite:///{path}").close()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous = OFF")
    run_sql = f"INSERT INTO evalkit_run ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
    case_sql = f"INSERT INTO evalkit_case ({', '.join(CASE_COLUMNS)}) VALUES ({', '.join('?' * len(CASE_COLUMNS))})"
    indexes = connection.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "AND tbl_name IN ('evalkit_run', 'evalkit_case')"
    ).fetchall()
    started = time.perf_counter()
    connection.execute("BEGIN")
    for name, _ in indexes:
        connection.execute(f'DROP INDEX "{name}"')
    runs: list[tuple] = []
    cases: list[tuple] = []
    for run, run_cases in history(count):
        runs.append(run)
        cases.extend(run_cases)
        if len(runs) >= 50_000:
            connection.executemany(run_sql, runs)
            connection.executemany(case_sql, cases)
            runs, cases = [], []
    connection.executemany(run_sql, runs)
    connection.executemany(case_sql, cases)
    for _, sql in indexes:
        connection.execute(sql)
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return elapsed


def _csv(rows: list[tuple]) -> io.StringIO:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([r"\N" if v is None else ("t" if v is True else "f" if v is False else v) for v in row])
    buffer.seek(0)
    return buffer


def build_postgres(url: str, count: int) -> float:
    """A PostgreSQL store of ``count`` runs, loaded with COPY (indexes re-created after the load,
    from their own definitions); returns the seconds the load took."""
    import psycopg2

    open_repository(url).close()
    connection = psycopg2.connect(url)
    started = time.perf_counter()
    with connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('evalkit_run', 'evalkit_case') "
            "AND indexname NOT IN (SELECT conname FROM pg_constraint)"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        runs: list[tuple] = []
        cases: list[tuple] = []

        def flush() -> None:
            options = "WITH (FORMAT csv, NULL '\\N')"
            cursor.copy_expert(f"COPY evalkit_run ({', '.join(RUN_COLUMNS)}) FROM STDIN {options}", _csv(runs))
            cursor.copy_expert(f"COPY evalkit_case ({', '.join(CASE_COLUMNS)}) FROM STDIN {options}", _csv(cases))

        for run, run_cases in history(count):
            runs.append(run)
            cases.extend(run_cases)
            if len(runs) >= 50_000:
                flush()
                runs, cases = [], []
        flush()
        for _, definition in indexes:
            cursor.execute(definition)
    elapsed = time.perf_counter() - started
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    connection.close()
    return elapsed


@contextmanager
def postgres_database(base_url: str) -> Iterator[str]:
    """A scratch database on the server ``base_url`` names, dropped afterwards."""
    import psycopg2

    name = f"evalkit_bench_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(base_url)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(base_url)._replace(path=f"/{name}"))
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


# -- measuring ----------------------------------------------------------------------------------


def time_lookups(url: str, scopes: list[tuple[str, ServingIdentity, str]]) -> tuple[list[float], list[str]]:
    """Seconds per ``baseline_for`` (after a warm-up), and the query plan of the first scope."""
    repo = open_repository(url)
    try:
        for set_id, identity, grader in scopes[:100]:
            repo.baseline_for(set_id, identity, grader)
        timings = []
        for set_id, identity, grader in scopes:
            started = time.perf_counter()
            baseline = repo.baseline_for(set_id, identity, grader)
            timings.append(time.perf_counter() - started)
            if baseline is None or len(baseline.cases) != CASES_PER_RUN:
                raise SystemExit(f"bench: no full baseline for {set_id} {identity} {grader} in {url}")
        return timings, repo.explain_baseline(*scopes[0])
    finally:
        repo.close()


def insert_rates(url: str) -> list[tuple[int, float]]:
    """Cases per second committed through ``record_cases`` at three transaction sizes."""
    identity = ServingIdentity("inst-00", "model-0", "model-0-2025-01")
    checks = (Check("stated_the_fact", True), Check("within_length", True))
    repo = open_repository(url)
    rates = []
    try:
        for per_commit, total in ((1, 500), (1, 2_000), (8, 8_000), (256, 51_200)):
            run_id = f"insert-{per_commit}-{total}"
            repo.begin_run(Run(id=run_id, set_identifier="bench.insert", grader="deterministic", case_count=total,
                               started_at=time.time(), provider_instance="inst-00", model_alias="model-0"))
            cases = [
                CaseResult(f"case-{n:06d}", True, 1.0, checks=checks, latency_s=0.4, identity=identity,
                           adapter="openai", yardstick="deterministic", finished_at=time.time())
                for n in range(total)
            ]
            started = time.perf_counter()
            for start in range(0, total, per_commit):
                repo.record_cases(run_id, cases[start : start + per_commit], "metadata")
            rates.append((per_commit, total / (time.perf_counter() - started)))
    finally:
        repo.close()
    return rates[1:]  # the first round only warms the caches up


def report(engine: str, small: int, large: int, lookups: int, make: Callable[[int], Iterator[str]], build: Callable[[str, int], float]) -> None:
    """Build both stores for one engine, then print the lookup times, their ratio, plan and insert rates."""
    scopes = probe_scopes(small, lookups)
    medians = {}
    print(f"== {engine} ==")
    for count in (small, large):
        with make(count) as url:
            seconds = build(url, count)
            print(f"built {count:>9,} runs + {count * CASES_PER_RUN:>9,} cases in {seconds:6.1f} s (bulk insert)")
            timings, plan = time_lookups(url, scopes)
            medians[count] = statistics.median(timings)
            p95 = statistics.quantiles(timings, n=20)[-1]
            print(f"baseline lookup, {count:>9,} runs: median {medians[count] * 1000:.3f} ms, p95 {p95 * 1000:.3f} ms ({len(timings)} lookups, each loading its {CASES_PER_RUN} cases)")
            if count == large:
                print("query plan of the baseline read:")
                for line in plan:
                    print(f"    {line}")
                for per_commit, rate in insert_rates(url):
                    print(f"insert rate, {per_commit:>3} case(s) per commit: {rate:>9,.0f} cases/s")
    ratio = medians[large] / medians[small]
    verdict = "indexed" if ratio < 2 else "NOT under the goal of 2"
    print(f"ratio {large:,} / {small:,} runs: {ratio:.2f} (goal < 2: {verdict})")
    print()


def main(argv: list[str] | None = None) -> int:
    """Run the storage bench and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000, help="runs in the small store (default 1,000)")
    parser.add_argument("--large", type=int, default=1_000_000, help="runs in the large store (default 1,000,000)")
    parser.add_argument("--lookups", type=int, default=2_000, help="timed baseline lookups per store (default 2,000)")
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), action="append", help="only this engine (repeatable)")
    args = parser.parse_args(argv)
    engines = args.engine or ["sqlite", "postgresql"]
    postgres_url = os.environ.get("EVALKIT_TEST_POSTGRES_URL")
    print(f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}; history: {SETS:,} sets, "
          f"{INSTANCES * ALIASES * SNAPSHOTS} serving identities, {len(GRADERS)} graders, {CASES_PER_RUN} cases per run\n")

    if "sqlite" in engines:
        with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as folder:

            @contextmanager
            def sqlite_store(count: int) -> Iterator[str]:
                path = Path(folder) / f"runs-{count}.db"
                try:
                    yield f"sqlite:///{path}"
                finally:
                    for suffix in ("", "-wal", "-shm"):
                        Path(f"{path}{suffix}").unlink(missing_ok=True)

            report("SQLite", args.small, args.large, args.lookups, sqlite_store, lambda url, n: build_sqlite(Path(url[len("sqlite:///"):]), n))
    if "postgresql" in engines:
        if not postgres_url:
            print("== PostgreSQL ==\nskipped: EVALKIT_TEST_POSTGRES_URL is not set (eval \"$(.ci/pg-start)\" starts a server)")
        else:
            report("PostgreSQL", args.small, args.large, args.lookups, lambda count: postgres_database(postgres_url), build_postgres)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
