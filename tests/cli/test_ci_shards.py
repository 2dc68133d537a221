"""A run fanned out across CI machines, end to end: shard processes started as a CI's parallel
jobs would start them (``--shard auto`` from GitLab's variables, the run id derived from the
pipeline id), all writing one database — a SQLite file (shards of one machine, or a shared
volume), and PostgreSQL when a server is at hand —, and a final verdict job that waits for them,
reads the verdict the closing shard stored, prints it, writes JUnit, HTML and the Markdown job
summary, and sets the exit code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from tests.storage.conftest import fresh_postgres_database
from tests.support.reports import HOSTILE_IDS, REPORT_PLUGINS, answer_hostile

SET = "reportkit.hostile"
SHARDS = 3


def environment(plugins: str, database: str, **extra: str) -> dict[str, str | None]:
    """The environment of one CI job (as overrides): no CI variables of the machine running the
    tests, the plugins, the shared database, this job's CI variables."""
    env: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith(("CI_", "GITHUB_", "CIRCLE_", "BUILDKITE"))
    }
    env.update({"PYTHONPATH": plugins, "EVALKIT_DATABASE_URL": database, **extra})
    return env


def pipeline(evalkit_process, plugins: str, database: str, pipeline_id: str) -> tuple[int, str, str, list[dict]]:  # noqa: ANN001
    """One pipeline: the verdict job starts first and waits; three shard jobs answer in parallel
    (each CI job a process of its own, all at once: the test is about several processes sharing
    one run)."""
    summary = evalkit_process.default_cwd / f"summary-{pipeline_id}.md"
    verdict_env = environment(plugins, database, CI_PIPELINE_ID=pipeline_id, GITHUB_STEP_SUMMARY=str(summary))
    verdict = evalkit_process.start(
        "run", SET, "--provider", "app", "--wait-for-shards", "--timeout", "5m", "--poll", "0.2s", "--database", database,
        "--fail-on-regression", "--report", f"junit:reports/{pipeline_id}.xml", "--report", f"html:reports/{pipeline_id}.html",
        "--report", "markdown", env=verdict_env,
    )  # fmt: skip
    shards = [
        evalkit_process.start(
            "run",
            SET,
            "--provider",
            "app",
            "--shard",
            "auto",
            "--json",
            "--database",
            database,  # named: a shard's store must be
            env=environment(
                plugins, database, CI_PIPELINE_ID=pipeline_id, CI_NODE_INDEX=str(i), CI_NODE_TOTAL=str(SHARDS)
            ),
        )  # fmt: skip
        for i in range(1, SHARDS + 1)
    ]
    shard_documents = []
    for process in shards:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        shard_documents.append(json.loads(out))
    out, err = verdict.communicate(timeout=330)
    return verdict.returncode, out, err, shard_documents


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def shared_database(request: pytest.FixtureRequest, tmp_path: Path):  # noqa: ANN201
    """The one database every job of the pipeline writes: a SQLite file, then PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared' / 'results.db'}"
        return
    with fresh_postgres_database() as url:
        yield url


def test_shards_on_several_machines_then_the_verdict_job(
    project, plugin_dists, shared_database, evalkit_process, evalkit_cli
) -> None:
    plugins = plugin_dists(REPORT_PLUGINS)
    answer_hostile(project)
    code, out, err, shards = pipeline(evalkit_process, plugins, shared_database, "1001")
    assert code == 0, err
    run_id = shards[0]["run_id"]
    assert run_id.startswith("gitlab-1001-") and {s["run_id"] for s in shards} == {run_id}
    assert {case["id"] for shard in shards for case in shard["cases"]} == set(HOSTILE_IDS)
    assert "Pass rate:  100.0% (6/6)" in out  # every case answered once, the run closed by its last shard
    assert f"Every shard of run {run_id} is in." in out
    assert "No accepted run for this set, serving identity and grader — recorded as the baseline." in out
    assert "Report junit written to reports/1001.xml" in err

    answer_hostile(project, failing=HOSTILE_IDS[:2])
    code, out, err, shards = pipeline(evalkit_process, plugins, shared_database, "1002")
    assert code == 1, err  # the gate failed: the verdict job's exit code
    second = shards[0]["run_id"]
    assert second.startswith("gitlab-1002-") and second != run_id
    assert "Regressed (passed in the baseline, fail now): 2" in out and f"(baseline run {run_id})" in out, out
    assert "Regression: pass rate dropped 33.3 pp" in out

    (suite,) = list(JUnitXml.fromfile(str(project / "reports" / "1002.xml")))
    cases = {case.name: case for case in suite}
    (gate,) = cases["regression-gate"].result
    assert isinstance(gate, Failure) and gate.message.startswith("REGRESSED: Regression: pass rate dropped 33.3 pp")
    assert {p.name: p.value for p in suite.properties()}["run_id"] == second
    page = (project / "reports" / "1002.html").read_text()
    assert (
        '<div id="verdict" class="verdict bad">REGRESSED</div>' in page and f'<code id="run-id">{second}</code>' in page
    )
    summary = (project / "summary-1002.md").read_text()
    assert summary.startswith(f"**❌ REGRESSED** — reportkit\\.hostile, run {second.replace('-', chr(92) + '-')}")

    again = evalkit_cli(
        "report",
        second,
        "--wait",
        "--timeout",
        "1m",
        "--fail-on-regression",
        "-o",
        "late.html",
        env=environment(plugins, shared_database),
    )
    assert again.code == 1 and again.stdout.startswith(f"REGRESSED: reportkit.hostile run {second}")


@pytest.mark.parametrize(
    ("shard", "message"),
    [
        ("x", '--shard must look like I/N (e.g. 2/4), got "x"'),
        ("3/2", "--shard 3/2: I must be between 1 and N"),
        ("auto/two", '--shard must look like I/N (e.g. 2/4), auto or auto/N, got "auto/two"'),
    ],
)
@pytest.mark.parametrize("command", [("run", "evalkit.smoke"), ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical")])
def test_a_malformed_shard_is_named_before_the_store_it_would_need(
    evalkit_cli, project, shard, message, command
) -> None:
    """`--shard x` on the default SQLite store was told the store is no shared one: a user who then
    set up PostgreSQL learned only there that x is no slice. The slice is checked as the option is read."""
    result = evalkit_cli(*command, "--shard", shard)
    assert result.code == 2, result.stderr
    assert message in result.stderr
    assert "needs a store every job of the run shares" not in result.stderr
    assert not (project / ".evalkit").exists()


def test_auto_shards_outside_a_parallel_ci_job_are_refused_before_anything_runs(
    evalkit_cli, plugin_dists, project
) -> None:
    env = {
        "PYTHONPATH": plugin_dists(REPORT_PLUGINS),
        "CI_NODE_INDEX": "",
        "CIRCLE_NODE_INDEX": "",
        "BUILDKITE_PARALLEL_JOB": "",
    }
    answer_hostile(project)
    store = f"sqlite:///{project / '.evalkit' / 'results.db'}"  # named: a shard's store must be (see below)
    result = evalkit_cli("run", SET, "--provider", "app", "--shard", "auto", "--database", store, env=env)
    assert result.code == 2
    assert "--shard auto: no CI parallel-job or job-array variables are set" in result.stderr
    assert not (project / ".evalkit" / "results.db").exists()
    waiting = evalkit_cli(
        "run",
        SET,
        "--provider",
        "app",
        "--wait-for-shards",
        "--database",
        store,
        env={**env, "CI_PIPELINE_ID": "", "GITHUB_RUN_ID": ""},
    )
    assert waiting.code == 2 and "--wait-for-shards needs the run's id: pass --run-id ID" in waiting.stderr


def test_circleci_shards_answer_their_own_slices(evalkit_cli, plugin_dists, project) -> None:
    plugins = plugin_dists(REPORT_PLUGINS)
    answer_hostile(project)
    seen = []
    for index in range(2):
        env = {
            "PYTHONPATH": plugins,
            "CIRCLE_NODE_INDEX": str(index),
            "CIRCLE_NODE_TOTAL": "2",
            "CIRCLE_WORKFLOW_ID": "wf-9",
        }
        result = evalkit_cli(
            "run", SET, "--provider", "app", "--shard", "auto", "--json", "--database", "sqlite:///shared.db", env=env
        )
        assert result.code == 0, result.stderr
        document = result.json()
        seen.append(document)
    assert seen[0]["run_id"] == seen[1]["run_id"] and seen[0]["run_id"].startswith("circleci-wf-9-")
    assert seen[0]["status"] == "running" and seen[1]["status"] == "complete"
    assert sorted(c["id"] for c in seen[1]["cases"]) == sorted(HOSTILE_IDS)


@pytest.mark.parametrize(
    ("name", "jobs"),
    [
        ("kubernetes", [{"JOB_COMPLETION_INDEX": "0"}, {"JOB_COMPLETION_INDEX": "1"}]),
        ("kubernetes-count", [{"JOB_COMPLETION_INDEX": str(i), "EVALKIT_SHARD_COUNT": "2"} for i in (0, 1)]),
        (
            "slurm",
            [
                {"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "2"}
                for i in (5, 6)
            ],
        ),
        ("aws-batch", [{"AWS_BATCH_JOB_ARRAY_INDEX": str(i), "EVALKIT_SHARD_COUNT": "2"} for i in (0, 1)]),
    ],
)
def test_job_array_shards_answer_their_own_slices(evalkit_cli, plugin_dists, project, name, jobs) -> None:
    plugins = plugin_dists(REPORT_PLUGINS)
    answer_hostile(project)
    count = ("--shard", "auto/2") if name == "kubernetes" else ("--shard", "auto")
    seen = []
    for variables in jobs:
        env = environment(plugins, "", **variables)
        env.pop("EVALKIT_DATABASE_URL")
        result = evalkit_cli(
            "run",
            SET,
            "--provider",
            "app",
            *count,
            "--run-id",
            f"array-{name}",
            "--database",
            "sqlite:///array.db",
            "--json",
            env=env,
        )
        assert result.code == 0, result.stderr
        seen.append(result.json())
    assert seen[0]["status"] == "running" and seen[1]["status"] == "complete"
    assert "shard 1 of 2 is in; waiting for shard 2" in seen[0]["verdict"]["reason"]
    first, second = ({case["id"] for case in document["cases"]} for document in seen)
    assert first and first < set(HOSTILE_IDS) and sorted(second) == sorted(HOSTILE_IDS)


def test_a_job_array_index_without_a_count_is_refused_naming_both_ways_to_give_it(
    evalkit_cli, plugin_dists, project
) -> None:
    answer_hostile(project)
    env = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS), "JOB_COMPLETION_INDEX": "1", "EVALKIT_SHARD_COUNT": None}
    result = evalkit_cli(
        "run", SET, "--provider", "app", "--shard", "auto", "--run-id", "k", "--database", "sqlite:///k.db", env=env
    )
    assert result.code == 2 and "give --shard auto/N or set EVALKIT_SHARD_COUNT=N" in result.stderr
    bad = evalkit_cli(
        "run", SET, "--provider", "app", "--shard", "auto/x", "--run-id", "k", "--database", "sqlite:///k.db", env=env
    )
    assert bad.code == 2 and '--shard must look like I/N (e.g. 2/4), auto or auto/N, got "auto/x"' in bad.stderr
    # digits str.isdigit() takes and int() refuses (a superscript two) or reads (Arabic-Indic): an
    # internal error, or a shard nobody wrote in ASCII
    for shard, message in (
        ("auto/²", '--shard must look like I/N (e.g. 2/4), auto or auto/N, got "auto/²"'),
        ("²/4", '--shard must look like I/N (e.g. 2/4), got "²/4"'),
        ("١/٢", '--shard must look like I/N (e.g. 2/4), got "١/٢"'),
    ):
        odd = evalkit_cli(
            "run", SET, "--provider", "app", "--shard", shard, "--run-id", "k", "--database", "sqlite:///k.db", env=env
        )
        assert odd.code == 2 and message in odd.stderr, odd.stderr
    counted = evalkit_cli(
        "run", SET, "--provider", "app", "--shard", "auto", "--run-id", "k", "--database", "sqlite:///k.db",
        env={**env, "EVALKIT_SHARD_COUNT": "²"},
    )  # fmt: skip
    assert (
        counted.code == 2
        and "EVALKIT_SHARD_COUNT='²', which is not a whole number from 0 to 999,999,999" in counted.stderr
    )
    assert not (project / "k.db").exists()


def test_an_option_that_only_says_how_shards_answer_is_refused_by_the_verdict_job(evalkit_cli, project) -> None:
    """``evalkit run SET --wait-for-shards --concurrency 4`` waited as if ``--concurrency`` were
    nothing (docs/ci.md: the verdict job answers nothing): a user who meant the shards to answer 4
    at a time was not told. Each option that only says how a run is answered is refused, exit 2,
    named, before anything is waited for."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    store = ["--database", f"sqlite:///{project / 'shared.db'}"]
    shard = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--shard", "1/2", "--run-id", "w-1", *store)
    assert shard.code == 0, shard.stdout + shard.stderr
    waiting = ["run", "arith.basic", "--provider", "my-app", "--wait-for-shards", "--run-id", "w-1", "--timeout", "1s", *store]
    refused = evalkit_cli(*waiting, "--concurrency", "4", "--max-requests", "3")
    assert refused.code == 2, refused.stdout + refused.stderr
    assert "--wait-for-shards answers nothing itself, so --concurrency, --max-requests would change nothing" in refused.stderr
    waited = evalkit_cli(*waiting)  # without them it waits (and times out: shard 2/2 never came)
    assert waited.code != 2, waited.stdout + waited.stderr


def test_a_shard_says_its_own_figures_beside_the_runs_each_labelled(evalkit_cli, project) -> None:
    """Shard 2/2 of a run printed ``Pass rate: 100.0% (6/6)`` and, in ``--json``, ``"answered": 6``
    and the run's requests: every shard's figures, where a reader of that shard's log expected its
    own (it answered 3). A shard's output now says what it answered itself, labelled, and that the
    figures are the run's; ``--json`` gives them as ``"shard"`` beside the run's."""
    from evalkit.run.plan import Shard

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    mine = [sum(1 for case in ARITH_GOOD if Shard(i, 2).owns(case)) for i in (1, 2)]
    store = ["--database", f"sqlite:///{project / 'shared.db'}"]
    first = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--shard", "1/2", "--run-id", "f-1", *store)
    assert first.code == 0, first.stdout + first.stderr
    said = " ".join(first.stdout.split())
    assert (
        f"This job answered {mine[0]} of shard 1/2's cases: {mine[0]} passed, none errored. "
        "The figures below are the run's so far (every shard's that is in), not this shard's."
    ) in said, said
    second = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--shard", "2/2", "--run-id", "f-1", "--json", *store)
    assert second.code == 0, second.stdout + second.stderr
    document = second.json()
    assert document["shard"] == {"index": 2, "count": 2, "answered_here": mine[1], "passed_here": mine[1], "errored_here": 0}
    assert document["answered"] == len(ARITH_GOOD)  # the run's
    whole = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--json", *store)
    assert whole.json()["shard"] is None
