"""A retrieval run goes through the same lifecycle as a prompt run: shards, leases, the verdict job
and the one verdict object.

The shard and lease tests are about processes, so they start real ``python -m evalkit`` processes
(two shards answering one run in parallel, a verdict job waiting for them, a resume killed with
SIGKILL and taken over, a second live resume refused), on SQLite and on PostgreSQL. The last test
checks the ``--json`` verdict object of both kinds through the ordinary ``evalkit_cli`` fixture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from evalkit.storage import open_repository

from tests.storage.conftest import fresh_postgres_database

FIXTURES = "evalkit-retrieval-fixtures"
SET = "retrievalkit.tiny"
QUESTIONS = {
    "json": "deserialize a JSON document",
    "csv": "read rows of a comma separated values file",
    "nap": "make the program wait a little",
    "nothing": "quantum chromodynamics lattice",
}
PERFECT = {QUESTIONS["json"]: ["doc-json"], QUESTIONS["csv"]: ["doc-csv"], QUESTIONS["nap"]: ["doc-sleep", "doc-json"]}
#: json loses its top-1 hit (and its top-3 hit): a regression of 25 pp on both rates.
WORSE = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@contextmanager
def store(engine: str, folder: Path) -> Iterator[str]:
    """A fresh store of ``engine``: a SQLite file, or a new PostgreSQL database."""
    if engine == "sqlite":
        yield f"sqlite:///{folder / 'shared' / 'results.db'}"
        return
    with fresh_postgres_database() as url:
        yield url


def environment(plugins: str, database: str) -> dict[str, str]:
    """A clean environment for one process: the fixture plugins and the shared store, no CI variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CI_", "GITHUB_", "CIRCLE_", "BUILDKITE", "EVALKIT_"))}
    env.update({"NO_COLOR": "1", "COLUMNS": "200", "PYTHONPATH": plugins, "EVALKIT_DATABASE_URL": database})
    return env


def start(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalkit", *args], cwd=project, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def finish(process: subprocess.Popen[str], timeout: float = 180) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def configure(project: Path, deployment: str, retriever: str, options: dict[str, object]) -> None:
    lines = [f'[deployments.{deployment}.retrievers."{retriever}"]']
    lines.extend(f"{key} = {json.dumps(value)}" for key, value in options.items())
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def answers(project: Path, table: dict[str, list[str]]) -> str:
    path = project / "answers.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    return str(path)


def measured(document: dict) -> dict:
    """A retrieval document's figures that do not depend on timing."""
    return {k: v for k, v in document["metrics"].items() if not k.startswith("latency")}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_retrieval_run_sharded_over_two_processes_gets_the_verdict_of_one_process(project, plugin_dists, engine, tmp_path) -> None:
    args = ("retrieval", SET, "fixtures.declaring", "--deployment", "x", "--fail-on-regression", "--json")
    with store(engine, tmp_path) as database:
        env = environment(plugin_dists(FIXTURES), database)
        configure(project, "x", "fixtures.declaring", {"answers": answers(project, PERFECT)})
        code, out, err = finish(start(project, env, *args))
        assert code == 0, err
        baseline_id = json.loads(out)["run_id"]

        configure(project, "x", "fixtures.declaring", {"answers": answers(project, WORSE)})
        code, out, err = finish(start(project, env, *args))
        assert code == 1, err
        single = json.loads(out)
        assert single["verdict"]["state"] == "regressed" and single["verdict"]["baseline_id"] == baseline_id

        # The same measurement in two shards of one run: the verdict job starts first and waits.
        # a shard's store is named with --database (one machine's SQLite file is refused otherwise)
        named = ("--database", database)
        waiting = start(project, env, *args, *named, "--wait-for-shards", "--run-id", "split-1", "--timeout", "3m", "--poll", "0.2s")
        shards = [start(project, env, *args, *named, "--shard", f"{i}/2", "--run-id", "split-1") for i in (1, 2)]
        documents = []
        for shard in shards:
            code, out, err = finish(shard)
            document = json.loads(out)
            assert document["run_id"] == "split-1"
            assert code == 1, err  # the gate: regressed (the shard that closed the run), or pending
            documents.append(document)
        closing = [d for d in documents if d["status"] == "complete"]
        assert closing, "the shard that stores the run's last question completes it"
        # each shard's own figures beside the run's (which the closing one's metrics are)
        assert sorted((d["shard"]["index"], d["shard"]["count"]) for d in documents) == [(1, 2), (2, 2)]
        assert sum(d["shard"]["answered_here"] for d in documents) == 4 and single["shard"] is None
        for document in documents:
            if document["status"] == "running":
                assert document["verdict"]["state"] == "pending" and "verdict pending" in document["verdict"]["reason"]
                assert document["baseline_state"] is None, "the shard that completes the run decides it"
        for document in closing:
            assert document["verdict"] == single["verdict"]
            assert document["hit_rate_changes"] == single["hit_rate_changes"]
            assert measured(document) == measured(single) and document["answered"] == 4
            assert document["baseline_state"] == single["baseline_state"] == "comparable"

        code, out, err = finish(waiting)
        assert code == 1, err
        job = json.loads(out)
        assert job["run_id"] == "split-1" and job["status"] == "complete" and job["shard"] is None
        assert job["verdict"] == single["verdict"] and job["baseline_state"] == "comparable"
        assert measured(job) == measured(single) and job["notes"] == ["Every shard of run split-1 is in."]
        assert {q["id"]: q["hit_at_1"] for q in job["questions"]} == {q["id"]: q["hit_at_1"] for q in single["questions"]}

        late = subprocess.run(
            [sys.executable, "-m", "evalkit", "report", "split-1", "--wait", "--timeout", "1m", "--fail-on-regression", "-o", "late.html"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert late.returncode == 1, late.stderr
        assert late.stdout.startswith(f"REGRESSED: {SET} run split-1")
        assert "Regression: top-1 hit rate dropped 25.0 pp" in late.stdout


def _asked(log: Path) -> dict[str, int]:
    asked: dict[str, int] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        asked[line] = asked.get(line, 0) + 1
    return asked


def _wait_for_questions(database: str, run_id: str, at_least: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        repository = open_repository(database)
        try:
            run = repository.get_run(run_id, with_cases=False)
            if run is not None and len(repository.answered_case_ids(run_id)) >= at_least:
                return
        finally:
            repository.close()
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not store {at_least} questions within {timeout} s")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_second_live_resume_of_a_retrieval_run_is_refused_and_a_killed_one_is_taken_over(project, plugin_dists, engine, tmp_path) -> None:
    log = project / "asked.log"
    base = ("retrieval", SET, "fixtures.slow", "--deployment", "slow")
    with store(engine, tmp_path) as database:
        env = environment(plugin_dists(FIXTURES), database)
        hold = project / "hold"
        configure(project, "slow", "fixtures.slow", {"answers": answers(project, PERFECT), "log": str(log), "delay": 4.0, "hold": str(hold)})
        first = start(project, env, *base, "--run-id", "leased")
        try:
            _wait_for_questions(database, "leased", 1)
        finally:
            first.kill()  # SIGKILL: no lease released, the run stays "running"
            first.wait(timeout=30)

        hold.touch()  # the resumed run stops in its second question until the refusals are done
        asked_before = len(log.read_text().splitlines())
        resumed = start(project, env, *base, "--resume", "leased", "--json")
        try:
            while len(log.read_text().splitlines()) <= asked_before:  # it has the lease and asks a question
                assert resumed.poll() is None, resumed.communicate()
                time.sleep(0.1)
            for again in (("--resume", "leased"), ("--resume",), ("--run-id", "leased")):
                assert resumed.poll() is None, "the resumed run is still answering (and holds the lease)"
                refused = subprocess.run(
                    [sys.executable, "-m", "evalkit", *base, *again], cwd=project, env=env, capture_output=True, text=True, timeout=120,
                )  # fmt: skip
                assert refused.returncode == 2, (again, refused.stderr)
                assert "run leased is being answered by another process" in refused.stderr
                assert f"pid {resumed.pid}" in refused.stderr
            hold.unlink()
            code, out, err = finish(resumed)
        finally:
            if resumed.poll() is None:
                resumed.kill()
        assert code == 0, err
        document = json.loads(out)
        assert document["run_id"] == "leased" and document["status"] == "complete" and document["answered"] == 4
        assert document["resumed"].startswith("Resumed run leased: ")
        asked = _asked(log)
        assert set(asked) == set(QUESTIONS.values())
        assert sum(1 for n in asked.values() if n > 1) <= 1, "only the question in flight at the kill is asked twice"

        done = subprocess.run(
            [sys.executable, "-m", "evalkit", *base, "--resume", "leased"], cwd=project, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 2 and "run leased is already complete" in done.stderr


VERDICT_KEYS = {"state", "baseline_id", "reason", "regressed", "metrics", "acceptance_note"}
METRIC_KEYS = {"baseline", "value", "delta", "ci95", "p_value", "minimum_detectable_drop", "tolerance"}


def test_prompt_and_retrieval_runs_write_the_same_verdict_object(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists(FIXTURES)}
    configure(project, "x", "fixtures.declaring", {"answers": answers(project, PERFECT)})
    retrieval = ("retrieval", SET, "fixtures.declaring", "--deployment", "x", "--json")
    prompts = ("run", "evalkit.smoke", "--json")
    first_prompts, first_questions = (evalkit_cli(*prompts, env=env), evalkit_cli(*retrieval, env=env))
    assert first_prompts.code == first_questions.code == 0, (first_prompts.stderr, first_questions.stderr)
    for document in (first_prompts.json(), first_questions.json()):
        assert document["verdict"]["state"] == "baseline" and set(document["verdict"]) == VERDICT_KEYS

    second_prompts, second_questions = (evalkit_cli(*prompts, env=env), evalkit_cli(*retrieval, env=env))
    compared = [second_prompts.json()["verdict"], second_questions.json()["verdict"]]
    assert [v["state"] for v in compared] == ["no_regression", "no_regression"]
    assert set(compared[0]) == set(compared[1]) > VERDICT_KEYS
    # One shape of metric for both kinds: fractions, the delta with its interval, p, MDD, tolerance.
    assert set(compared[0]["metrics"]) == {"pass_rate", "mean_score"}
    assert set(compared[1]["metrics"]) == {"hit_at_1", "hit_at_3", "mrr_at_k", "recall_at_k", "ndcg_at_k"}
    for verdict in compared:
        for metric in verdict["metrics"].values():
            assert set(metric) >= METRIC_KEYS and len(metric["ci95"]) == 2 and metric["delta"] == 0
    assert compared[1]["metrics"]["ndcg_at_k"]["tolerance"] is None  # reported, not gated by default
    assert compared[0]["baseline_id"] == first_prompts.json()["run_id"]
    assert compared[1]["baseline_id"] == first_questions.json()["run_id"]
    assert second_questions.json()["baseline_state"] == "comparable" and "baseline_state" not in second_prompts.json()

    configure(project, "x", "fixtures.declaring", {"answers": answers(project, PERFECT), "corpus_revision": "corpus-v2"})
    mismatch = evalkit_cli(*retrieval, "--fail-on-regression", env=env)
    assert mismatch.code == 1, mismatch.stderr
    verdict = mismatch.json()["verdict"]
    assert verdict["state"] == "not_comparable" and set(verdict) == VERDICT_KEYS
    # the second run was as good as the first, not better: the first stays the baseline
    assert mismatch.json()["baseline_state"] == "mismatch" and verdict["baseline_id"] == first_questions.json()["run_id"]
