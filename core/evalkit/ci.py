"""What a CI system tells a job about itself: its shard of a parallel job and its pipeline.

``--shard auto`` reads the shard from the CI's own variables (:func:`shard_from_environment`);
a sharded run, and the final job that waits for it, default their run id to one derived from
the pipeline id (:func:`pipeline_run_id`), so every job of a pipeline joins the same run
without passing ids between jobs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

import attrs

from .errors import UsageError
from .run.plan import Shard

__all__ = ["PIPELINES", "SHARD_SOURCES", "CiPipeline", "ShardSource", "pipeline_run_id", "shard_from_environment"]


@attrs.frozen
class ShardSource:
    """A CI system's pair of variables for "job I of N" and whether I counts from 0 or 1."""

    system: str
    index: str
    total: str
    first: int


#: Checked in this order; the first system whose two variables are both set wins.
SHARD_SOURCES: tuple[ShardSource, ...] = (
    ShardSource("GitLab CI", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ShardSource("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    ShardSource("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
)


@attrs.frozen
class CiPipeline:
    """A CI system's pipeline (or workflow, or build) id variables, joined into a run-id prefix."""

    system: str
    prefix: str
    variables: tuple[str, ...]


#: Checked in this order. GitHub's run id is joined with the attempt: re-running a workflow
#: starts a new run rather than joining the finished one.
PIPELINES: tuple[CiPipeline, ...] = (
    CiPipeline("GitLab CI", "gitlab", ("CI_PIPELINE_ID",)),
    CiPipeline("GitHub Actions", "github", ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT")),
    CiPipeline("CircleCI", "circleci", ("CIRCLE_WORKFLOW_ID",)),
    CiPipeline("Buildkite", "buildkite", ("BUILDKITE_BUILD_ID",)),
)

_SAFE = re.compile(r"[^A-Za-z0-9._:-]")


def _whole(source: ShardSource, name: str, environ: Mapping[str, str]) -> int:
    raw = environ[name].strip()
    if not raw.isdigit():
        raise UsageError(f"--shard auto: {source.system} sets {name}={raw!r}, which is not a whole number")
    return int(raw)


def shard_from_environment(environ: Mapping[str, str]) -> Shard:
    """The shard this CI job answers, from the first CI system whose variables are set.

    Refused (a usage error naming every variable looked at) when no CI system sets them, or
    when they are not whole numbers with index within the total.
    """
    for source in SHARD_SOURCES:
        if environ.get(source.index, "").strip() and environ.get(source.total, "").strip():
            index = _whole(source, source.index, environ) - source.first + 1
            total = _whole(source, source.total, environ)
            if total < 1 or not 1 <= index <= total:
                raise UsageError(
                    f"--shard auto: {source.system} says job {environ[source.index]!r} of {environ[source.total]!r} "
                    f"({source.index}, {source.total}), which is not a shard of the run"
                )
            return Shard(index, total)
    looked = ", ".join(f"{s.index}/{s.total} ({s.system})" for s in SHARD_SOURCES)
    raise UsageError(
        f"--shard auto: no CI parallel-job variables are set (looked for {looked}); "
        "run inside a parallel CI job, or give the shard as --shard I/N"
    )


def pipeline_run_id(environ: Mapping[str, str], scope: Sequence[str | None]) -> str | None:
    """A run id for this pipeline and this run's scope, or ``None`` outside a known CI.

    The id is ``<ci>-<pipeline id>-<digest of scope>`` (scope: set, provider, model, grader …),
    so the shards and the final job of one matrix cell agree on it, and two sets or models run
    by one pipeline do not collide.
    """
    for pipeline in PIPELINES:
        values = [environ.get(name, "").strip() for name in pipeline.variables]
        if values and values[0]:
            pipeline_id = "-".join(v for v in values if v)
            digest = hashlib.sha256("\x1f".join(part or "" for part in scope).encode("utf-8")).hexdigest()[:8]
            head = _SAFE.sub("_", f"{pipeline.prefix}-{pipeline_id}")[:50]
            return f"{head}-{digest}"
    return None
