"""Eight ``evalkit run`` processes writing to one fresh database at once (both engines), while a
ninth process keeps reading the baseline: every run and case lands, nobody sees "database is
locked", and no baseline read ever returns a half-written run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from evalkit.runs import RunStatus
from evalkit.storage import open_repository

SET = "storagekit.wide"
SIZE = 240
WRITERS = 8

READER = """
import json, os, sys
from evalkit import ServingIdentity
from evalkit.storage import open_repository

url, stop, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
identity = ServingIdentity("reference", "reference", "reference")
repo = open_repository(url)
seen, bad = set(), []

def look():
    baseline = repo.baseline_for("storagekit.wide", identity, "deterministic")
    if baseline is None:
        return
    seen.add(baseline.id)
    cases = {c.case_id for c in baseline.cases}
    if baseline.status.value != "complete" or len(cases) != size or baseline.answered_count != size:
        bad.append([baseline.id, baseline.status.value, len(cases)])

reads = 0
while not os.path.exists(stop):
    look()
    reads += 1
look()
print(json.dumps({"reads": reads + 1, "seen": sorted(seen), "bad": bad}))
"""


def test_eight_writers_at_once_lose_nothing_and_no_reader_sees_a_half_written_run(
    database_url: str, storage_plugins: str, project: Path, tmp_path: Path, evalkit_process
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE_URL"}
    env.update(PYTHONPATH=storage_plugins, EVALKIT_DATABASE_URL=database_url, NO_COLOR="1")
    stop = tmp_path / "stop-reading"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, database_url, str(stop), str(SIZE)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # Processes of their own: eight writers at once, as eight CI jobs would be.
    writers = [evalkit_process.start("run", SET, "--json", "--label", f"writer-{number}", env=env) for number in range(WRITERS)]
    try:
        results = [writer.communicate(timeout=180) for writer in writers]
    finally:
        stop.touch()
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
    reader_out, reader_err = reader.communicate(timeout=60)

    for writer, (_, stderr) in zip(writers, results, strict=True):
        assert "locked" not in stderr.lower()
        assert writer.returncode == 0, stderr
    documents = [json.loads(stdout) for stdout, _ in results]
    run_ids = {d["run_id"] for d in documents}
    assert len(run_ids) == WRITERS
    for document in documents:
        assert document["status"] == "complete" and document["answered"] == SIZE
        verdict = document["verdict"]
        assert verdict["state"] in ("baseline", "no_regression", "regressed"), verdict
        if verdict["state"] != "baseline":
            assert verdict["baseline_id"] in run_ids
            assert verdict["added_cases"] == [] and verdict["removed_cases"] == [], "compared with a half-written run"
    # All eight start on an empty store; exactly one is the first of the scope, the others are
    # compared (two first runs finishing at once were both "the first").
    assert [d["verdict"]["state"] for d in documents].count("baseline") == 1

    assert reader.returncode == 0, reader_err
    observed = json.loads(reader_out)
    assert observed["bad"] == []
    assert observed["seen"] and set(observed["seen"]) <= run_ids

    repo = open_repository(database_url)
    try:
        stored = repo.recent_runs(SET, limit=100)
        assert {r.id for r in stored} == run_ids
        for run in stored:
            full = repo.get_run(run.id)
            assert full.status is RunStatus.COMPLETE
            assert len({c.case_id for c in full.cases}) == len(full.cases) == SIZE
        assert set(repo.verdicts_for(sorted(run_ids))) == run_ids
        assert [a.how for a in repo.acceptances_for(sorted(run_ids)).values()].count("first") == 1
    finally:
        repo.close()
