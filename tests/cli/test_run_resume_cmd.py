"""`evalkit run --resume/--shard/--run-id`: what is refused before anything runs, and resuming an
incomplete run answers only its errored cases."""

from __future__ import annotations

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
        (("--shard", "1/99999999999999999999", "--run-id", "x", "--database", LOCAL),
         "--shard 1/99999999999999999999: N must be a whole number from 1 to 999,999,999"),
        (("--shard", "1/0", "--run-id", "x", "--database", LOCAL), "--shard 1/0: N must be a whole number from 1 to 999,999,999"),
        # a shard's store is shared by every job of the run: one chosen by default, unnamed, is refused
        (("--shard", "1/3", "--run-id", "x"), "--shard needs a store every job of the run shares"),
        (("--wait-for-shards", "--run-id", "x"), "--wait-for-shards needs a store every job of the run shares"),
        (("--resume", "a", "--run-id", "b"), "--resume a and --run-id b name two different runs"),
        (("--run-id", "../etc"), 'run id "../etc" must be 1 to 64 letters'),
        (("--resume",), 'no unfinished run of "evalkit.smoke" by reference/reference'),
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
    assert other_set.code == 2 and 'run nightly-1 is a run of set "evalkit.smoke", not "arith.basic"' in other_set.stderr
    answer_with(project, {})
    other_generator = evalkit_cli("run", "evalkit.smoke", "--run-id", "nightly-1")
    assert other_generator.code == 2 and "is answered by reference/reference" in other_generator.stderr
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
