"""CI variables: the shard a parallel job answers and the run id a pipeline's jobs agree on."""

from __future__ import annotations

import pytest
from evalkit.ci import parse_auto, pipeline_run_id, shard_from_environment
from evalkit.errors import UsageError
from evalkit.runner import Shard
from evalkit.waiting import parse_duration


@pytest.mark.parametrize(
    ("environ", "shard"),
    [
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"}, Shard(1, 3)),  # GitLab counts from 1
        ({"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "3"}, Shard(3, 3)),
        ({"CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "4"}, Shard(1, 4)),  # CircleCI from 0
        ({"CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "4"}, Shard(4, 4)),
        ({"BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, Shard(2, 2)),  # Buildkite from 0
        ({"CI_NODE_INDEX": "", "CI_NODE_TOTAL": "", "CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "2"}, Shard(2, 2)),
    ],
)
def test_the_shard_comes_from_the_ci_variables(environ, shard) -> None:
    assert shard_from_environment(environ) == shard


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, "--shard auto: no CI parallel-job or job-array variables are set (looked for CI_NODE_INDEX/CI_NODE_TOTAL "
             "(GitLab CI), CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL (CircleCI), BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT "
             "(Buildkite), SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT (Slurm job array), JOB_COMPLETION_INDEX/"
             "EVALKIT_SHARD_COUNT (Kubernetes Indexed Job), AWS_BATCH_JOB_ARRAY_INDEX/EVALKIT_SHARD_COUNT (AWS Batch array job))"),
        ({"CI_NODE_INDEX": "2"}, "no CI parallel-job or job-array variables are set"),
        ({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"}, "GitLab CI says job '0' of '3' (CI_NODE_INDEX, CI_NODE_TOTAL)"),
        ({"CIRCLE_NODE_INDEX": "4", "CIRCLE_NODE_TOTAL": "4"}, "CircleCI says job '4' of '4'"),
        ({"BUILDKITE_PARALLEL_JOB": "x", "BUILDKITE_PARALLEL_JOB_COUNT": "2"}, "Buildkite sets BUILDKITE_PARALLEL_JOB='x'"),
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "-1"}, "CI_NODE_TOTAL='-1', which is not a whole number"),
    ],
)
def test_auto_shards_are_refused_clearly_without_usable_variables(environ, message) -> None:
    with pytest.raises(UsageError) as refused:
        shard_from_environment(environ)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("environ", "count", "shard"),
    [
        # Kubernetes Indexed Job: JOB_COMPLETION_INDEX from 0, N from --shard auto/N or EVALKIT_SHARD_COUNT
        ({"JOB_COMPLETION_INDEX": "0"}, 4, Shard(1, 4)),
        ({"JOB_COMPLETION_INDEX": "3", "EVALKIT_SHARD_COUNT": "4"}, None, Shard(4, 4)),
        ({"JOB_COMPLETION_INDEX": "2", "EVALKIT_SHARD_COUNT": "3"}, 3, Shard(3, 3)),  # both, agreeing
        # Slurm: the task id offset by the array's first id (and its step), the count Slurm's own
        ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, None, Shard(1, 4)),
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "4"}, None, Shard(1, 4)),
        ({"SLURM_ARRAY_TASK_ID": "13", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "4"}, None, Shard(4, 4)),
        (
            {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"},
            None,
            Shard(3, 4),
        ),
        # AWS Batch: AWS_BATCH_JOB_ARRAY_INDEX from 0, N as for Kubernetes
        ({"AWS_BATCH_JOB_ARRAY_INDEX": "9", "EVALKIT_SHARD_COUNT": "10"}, None, Shard(10, 10)),
        ({"AWS_BATCH_JOB_ARRAY_INDEX": "0"}, 2, Shard(1, 2)),
        # a CI system's pair wins over a job array's variable set around it
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2", "JOB_COMPLETION_INDEX": "0"}, None, Shard(2, 2)),
    ],
)
def test_the_shard_comes_from_a_job_array(environ, count, shard) -> None:
    assert shard_from_environment(environ, count) == shard


@pytest.mark.parametrize(
    ("environ", "count", "message"),
    [
        ({"JOB_COMPLETION_INDEX": "1"}, None, "a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX but not how many jobs there are; "
         "give --shard auto/N or set EVALKIT_SHARD_COUNT=N"),
        ({"JOB_COMPLETION_INDEX": "4"}, 4, "Kubernetes Indexed Job says job '4' of '4' (JOB_COMPLETION_INDEX, --shard auto/4)"),
        ({"AWS_BATCH_JOB_ARRAY_INDEX": "1", "EVALKIT_SHARD_COUNT": "3"}, 4,
         "the number of shards disagrees (--shard auto/4 says 4, EVALKIT_SHARD_COUNT says 3)"),
        ({"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"}, 4, "(CI_NODE_TOTAL says 3, --shard auto/4 says 4)"),
        ({"AWS_BATCH_JOB_ARRAY_INDEX": "1", "EVALKIT_SHARD_COUNT": "many"}, None, "EVALKIT_SHARD_COUNT='many', which is not a whole number"),
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, None, "Slurm job array sets no SLURM_ARRAY_TASK_MIN"),
        ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"},
         None, "task 4 is not one of an array of tasks from 1 in steps of 2"),
        ({"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, None,
         "Slurm job array says job '9' of '4' (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT), which is not a shard"),
        ({"JOB_COMPLETION_INDEX": "1" * 40}, 2, "which is not a whole number from 0 to 999,999,999"),
        # str.isdigit() takes a superscript two, which int() refused: an internal error
        ({"JOB_COMPLETION_INDEX": "0", "EVALKIT_SHARD_COUNT": "²"}, None, "EVALKIT_SHARD_COUNT='²', which is not a whole number"),
        ({"JOB_COMPLETION_INDEX": "٣", "EVALKIT_SHARD_COUNT": "4"}, None, "JOB_COMPLETION_INDEX='٣', which is not a whole number"),
    ],
)  # fmt: skip
def test_job_array_shards_are_refused_clearly(environ, count, message) -> None:
    with pytest.raises(UsageError) as refused:
        shard_from_environment(environ, count)
    assert message in str(refused.value)


@pytest.mark.parametrize(("text", "count"), [("auto", None), ("auto/4", 4), ("auto/1", 1)])
def test_shard_auto_may_carry_the_count(text, count) -> None:
    assert parse_auto(text) == count


@pytest.mark.parametrize("text", ["auto/", "auto/0", "auto/x", "automatic", "auto/-1", "auto/4/4", "auto/" + "9" * 12, "auto/²", "auto/٤", "auto/1_0"])
def test_a_malformed_shard_auto_is_a_usage_error(text) -> None:
    with pytest.raises(UsageError, match="auto or auto/N"):
        parse_auto(text)


def test_the_pipeline_run_id_is_shared_by_a_matrix_cell_and_differs_between_cells() -> None:
    scope = ("arith.basic", "my-app", None, "deterministic")
    gitlab = pipeline_run_id({"CI_PIPELINE_ID": "4242"}, scope)
    assert gitlab is not None and gitlab.startswith("gitlab-4242-") and len(gitlab) == len("gitlab-4242-") + 8
    assert pipeline_run_id({"CI_PIPELINE_ID": "4242", "CI_NODE_INDEX": "2"}, scope) == gitlab
    assert pipeline_run_id({"CI_PIPELINE_ID": "4242"}, ("arith.basic", "other", None, "deterministic")) != gitlab
    assert pipeline_run_id({"CI_PIPELINE_ID": "4243"}, scope) != gitlab
    github = pipeline_run_id({"GITHUB_RUN_ID": "987", "GITHUB_RUN_ATTEMPT": "2"}, scope)
    assert github is not None and github.startswith("github-987-") and len(github) == len("github-987-") + 8
    # "Re-run failed jobs" is a new attempt of the same run: its jobs join the run the first attempt began
    assert pipeline_run_id({"GITHUB_RUN_ID": "987", "GITHUB_RUN_ATTEMPT": "1"}, scope) == github
    circle = pipeline_run_id({"CIRCLE_WORKFLOW_ID": "5b3c/../x y"}, scope)
    assert circle is not None and circle.startswith("circleci-5b3c_.._x_y-")
    assert pipeline_run_id({"BUILDKITE_BUILD_ID": "0190-ab"}, scope).startswith("buildkite-0190-ab-")
    assert pipeline_run_id({}, scope) is None


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("30m", 1800), ("1.5h", 5400), ("0.2s", 0.2)])
def test_durations(text, seconds) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "0", "-5m", "8d", "9" * 40, "nan", "inf"])
def test_bad_durations_are_usage_errors(text) -> None:
    with pytest.raises(UsageError):
        parse_duration(text)


def test_the_shards_a_run_waits_for_are_named_as_shards_never_as_a_count() -> None:
    from evalkit.storage.values import ShardProgress

    assert ShardProgress(4, frozenset({3})).describe() == "shard 3 of 4 is in; waiting for shards 1, 2, 4"
    assert ShardProgress(2, frozenset({1})).describe() == "shard 1 of 2 is in; waiting for shard 2"
    assert ShardProgress(4, frozenset({1, 3})).describe() == "shards 1, 3 of 4 are in; waiting for shards 2, 4"
    assert ShardProgress(3).describe() == "no shard of 3 is in yet; waiting for shards 1, 2, 3"
    assert ShardProgress(2, frozenset({1, 2})).describe() == "shards 1, 2 of 2 are in"


def test_a_shard_is_refused_outside_1_to_n_and_past_the_most_slices_however_it_is_made() -> None:
    """The bounds hold for a library caller's Shard as for --shard I/N and --shard auto (named as
    the library caller gave it: ``shard=``)."""
    from evalkit.run.placement import MAX_SHARDS

    assert Shard(MAX_SHARDS, MAX_SHARDS).count == 999_999_999
    for index, count, message in ((1, MAX_SHARDS + 1, "N must be a whole number from 1 to 999,999,999"),
                                  (0, 3, "I must be between 1 and N"), (4, 3, "I must be between 1 and N")):  # fmt: skip
        with pytest.raises(UsageError, match=f"^shard={index}/{count}: {message}"):
            Shard(index, count)
