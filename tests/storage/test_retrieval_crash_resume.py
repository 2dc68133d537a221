"""Retrieval runs survive a SIGKILL: every question is committed as it is scored, and ``--resume``
asks only what the store has no answer for — on both engines, through real ``evalkit retrieval``
processes and a retriever that takes its time (tests/data/evalkit-retrieval-fixtures, ``fixtures.slow``)."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

from evalkit.runs import RunStatus
from evalkit.storage import open_repository

from tests.support.crashes import kept_by_store, sigkill_when

SET = "beir.slow"
SIZE = 30


def build_project(project: Path, delay: float) -> Path:
    """A BEIR folder of SIZE graded questions, scripted answers and a deployment running fixtures.slow."""
    folder = project / "col"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{n:02d}", "text": f"question {n}"}) + "\n" for n in range(SIZE)))
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{n:02d}\td{n}\t{1 + n % 3}\nq{n:02d}\td{n + 1}\t1\n" for n in range(SIZE))
    )
    answers = {f"question {n}": [f"d{(n * 7) % SIZE}", f"d{n + 1}", f"d{n}"] for n in range(SIZE)}
    (project / "answers.json").write_text(json.dumps(answers))
    log = project / "asked.log"
    (project / "evalkit.toml").write_text(
        f'[question_sets."{SET}"]\npath = "col"\n\n'
        '[deployments.slow]\nretriever = "fixtures.slow"\n'
        f'[deployments.slow.retrievers."fixtures.slow"]\nanswers = "answers.json"\nlog = "{log}"\ndelay = {delay}\n'
    )
    return log


def unfinished_run(database_url: str, at_least: int, timeout: float = 60.0) -> tuple[str, set[str]]:
    """Poll the store until the unfinished run of the set has ``at_least`` answered questions."""
    deadline = time.monotonic() + timeout
    repo = open_repository(database_url)
    try:
        while time.monotonic() < deadline:
            run = repo.latest_unfinished_retrieval_run(SET, "fixtures.slow", deployment="slow")
            if run is not None:
                answered = repo.answered_case_ids(run.id)
                if len(answered) >= at_least:
                    return run.id, answered
            time.sleep(0.02)
    finally:
        repo.close()
    raise AssertionError(f"no run of {SET} reached {at_least} stored questions within {timeout} s")


def test_a_retrieval_run_killed_with_sigkill_resumes_asking_only_what_was_not_stored(
    database_url, project, plugin_dists, evalkit_cli, evalkit_process
) -> None:
    log = build_project(project, delay=0.15)
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE_URL"}
    env.update(PYTHONPATH=plugin_dists("evalkit-retrieval-fixtures"), EVALKIT_DATABASE_URL=database_url, NO_COLOR="1")
    # A process of its own: it is killed outright (SIGKILL) mid-run.
    victim = evalkit_process.start("retrieval", SET, "--deployment", "slow", "--privacy", "full", env=env)
    run_id, _ = sigkill_when(victim, lambda: unfinished_run(database_url, at_least=5))
    killed, stored_before = kept_by_store(database_url, run_id)
    assert killed.status is RunStatus.RUNNING, "a process killed outright leaves its run marked running"
    assert 5 <= len(stored_before) < SIZE

    build_project(project, delay=0.0)
    resumed = evalkit_cli("retrieval", SET, "--resume", "--deployment", "slow", "--json", env=env)
    assert resumed.code == 0, resumed.stderr
    document = resumed.json()
    assert document["run_id"] == run_id and document["status"] == "complete"
    assert document["resumed"] == (
        f"Resumed run {run_id}: {len(stored_before)} questions answered before were kept, "
        f"{SIZE - len(stored_before)} asked now."
    )
    assert document["privacy"] == "full"  # the run's own level, not this invocation's default

    asked = Counter(log.read_text().splitlines())
    twice = {q for q, n in asked.items() if n > 1}
    stored_texts = {f"question {int(q[1:])}" for q in stored_before}
    assert not (twice & stored_texts), "a question stored before the kill was asked again"
    assert len(twice) <= 1, "only the question in flight at the kill may be asked again"
    assert set(asked) == {f"question {n}" for n in range(SIZE)}

    # The resumed run's metrics are those of an uninterrupted run over the same answers.
    fresh = evalkit_cli("retrieval", SET, "--deployment", "slow", "--json", env=env)
    assert fresh.code == 0, fresh.stderr
    ignore = ("latency_p50_s", "latency_p95_s")
    ours = {k: v for k, v in document["metrics"].items() if k not in ignore}
    theirs = {k: v for k, v in fresh.json()["metrics"].items() if k not in ignore}
    assert ours == theirs and ours["question_count"] == SIZE
    repo = open_repository(database_url)
    try:
        final = repo.get_run(run_id)
    finally:
        repo.close()
    assert final.status is RunStatus.COMPLETE and len(final.cases) == SIZE
    assert final.metrics["retrieval"]["ndcg_at_k"] == document["metrics"]["ndcg_at_k"]
