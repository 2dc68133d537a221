"""CI variables: the shard a parallel job answers and the run id a pipeline's jobs agree on."""

from __future__ import annotations

import pytest
from evalkit.ci import pipeline_run_id, shard_from_environment
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
        ({}, "--shard auto: no CI parallel-job variables are set (looked for CI_NODE_INDEX/CI_NODE_TOTAL (GitLab CI), "
             "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL (CircleCI), BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT (Buildkite))"),
        ({"CI_NODE_INDEX": "2"}, "no CI parallel-job variables are set"),
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


def test_the_pipeline_run_id_is_shared_by_a_matrix_cell_and_differs_between_cells() -> None:
    scope = ("arith.basic", "my-app", None, "deterministic")
    gitlab = pipeline_run_id({"CI_PIPELINE_ID": "4242"}, scope)
    assert gitlab is not None and gitlab.startswith("gitlab-4242-") and len(gitlab) == len("gitlab-4242-") + 8
    assert pipeline_run_id({"CI_PIPELINE_ID": "4242", "CI_NODE_INDEX": "2"}, scope) == gitlab
    assert pipeline_run_id({"CI_PIPELINE_ID": "4242"}, ("arith.basic", "other", None, "deterministic")) != gitlab
    assert pipeline_run_id({"CI_PIPELINE_ID": "4243"}, scope) != gitlab
    github = pipeline_run_id({"GITHUB_RUN_ID": "987", "GITHUB_RUN_ATTEMPT": "2"}, scope)
    assert github is not None and github.startswith("github-987-2-")
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
