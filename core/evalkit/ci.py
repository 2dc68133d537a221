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

from .environment import variable
from .errors import UsageError
from .run.plan import Shard
from .shapes import whole_number
from .wording import quoted

__all__ = [
    "COUNT_VARIABLE",
    "PIPELINES",
    "SHARD_SOURCES",
    "CiPipeline",
    "ShardSource",
    "parse_auto",
    "pipeline_run_id",
    "shard_from_environment",
]


@attrs.frozen
class ShardSource:
    """A system's variables for "job I of N": the index, where it counts from, and the total.

    ``total`` is ``None`` for a system that tells a job its index only (a Kubernetes Indexed Job,
    an AWS Batch array job): the count then comes from ``--shard auto/N`` or ``EVALKIT_SHARD_COUNT``.
    ``minimum`` names a variable holding the first index (a Slurm array may start anywhere) and
    ``step`` one holding the distance between two indexes (``--array=1-7:2``).
    """

    system: str
    index: str
    total: str | None
    first: int = 0
    minimum: str | None = None
    step: str | None = None

    def describe(self) -> str:
        """``CI_NODE_INDEX/CI_NODE_TOTAL (GitLab CI)``: what a refusal lists as looked for."""
        return f"{self.index}/{self.total or COUNT_VARIABLE} ({self.system})"


#: Where a job array that says only its index takes the count from (beside ``--shard auto/N``).
COUNT_VARIABLE = "EVALKIT_SHARD_COUNT"

#: Checked in this order; the first system whose variables are set wins (CI systems set a pair,
#: so a job is never read as two systems' at once).
SHARD_SOURCES: tuple[ShardSource, ...] = (
    ShardSource("GitLab CI", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ShardSource("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    ShardSource("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
    ShardSource("Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", minimum="SLURM_ARRAY_TASK_MIN", step="SLURM_ARRAY_TASK_STEP"),
    ShardSource("Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", None, 0),
    ShardSource("AWS Batch array job", "AWS_BATCH_JOB_ARRAY_INDEX", None, 0),
)


@attrs.frozen
class CiPipeline:
    """A CI system's pipeline (or workflow, or build) id variables, joined into a run-id prefix."""

    system: str
    prefix: str
    variables: tuple[str, ...]


#: Checked in this order. Each id stays the same when a job of the pipeline is re-run (GitHub's
#: "Re-run failed jobs" gives the same GITHUB_RUN_ID and a new GITHUB_RUN_ATTEMPT, which is left
#: out): a re-run shard completes the same run, and a later attempt of a complete run finds its
#: verdict instead of starting another.
PIPELINES: tuple[CiPipeline, ...] = (
    CiPipeline("GitLab CI", "gitlab", ("CI_PIPELINE_ID",)),
    CiPipeline("GitHub Actions", "github", ("GITHUB_RUN_ID",)),
    CiPipeline("CircleCI", "circleci", ("CIRCLE_WORKFLOW_ID",)),
    CiPipeline("Buildkite", "buildkite", ("BUILDKITE_BUILD_ID",)),
)

_SAFE = re.compile(r"[^A-Za-z0-9._:-]")


def _whole(system: str, name: str, environ: Mapping[str, str]) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        raise UsageError(f"--shard auto: {system} sets no {name}, so the shard cannot be told")
    number = whole_number(raw, max_digits=9)
    if number is None:
        raise UsageError(f"--shard auto: {system} sets {name}={raw!r}, which is not a whole number from 0 to 999,999,999")
    return number


def parse_auto(text: str) -> int | None:
    """The N of ``--shard auto/N`` (``None`` for plain ``auto``); a usage error for anything else."""
    if text == "auto":
        return None
    head, _, count_text = text.partition("/")
    count = whole_number(count_text, max_digits=9)
    if head != "auto" or count is None or count < 1:
        raise UsageError(f'--shard must look like I/N (e.g. 2/4), auto or auto/N, got {quoted(text)}')
    return count


def _count(source: ShardSource, environ: Mapping[str, str], given: int | None) -> tuple[int, str]:
    """The number of shards and what told it: the system's own total, else ``--shard auto/N``,
    else ``EVALKIT_SHARD_COUNT``; two of them that disagree are refused."""
    told: list[tuple[str, int]] = []
    if source.total is not None:
        told.append((source.total, _whole(source.system, source.total, environ)))
    if given is not None:
        told.append((f"--shard auto/{given}", given))
    if variable(COUNT_VARIABLE, "the number of jobs of the array", "take the count from --shard auto/N", environ=environ) is not None:
        told.append((COUNT_VARIABLE, _whole(source.system, COUNT_VARIABLE, environ)))
    if not told:
        raise UsageError(
            f"--shard auto: a {source.system} sets {source.index} but not how many jobs there are; "
            f"give --shard auto/N or set {COUNT_VARIABLE}=N (N: the number of jobs of the array)"
        )
    counts = {count for _, count in told}
    if len(counts) > 1:
        said = ", ".join(f"{name} says {count}" for name, count in told)
        raise UsageError(f"--shard auto: the number of shards disagrees ({said}); give one")
    name, count = told[0]
    return count, name


def _index(source: ShardSource, environ: Mapping[str, str]) -> int:
    """This job's 1-based shard number (a Slurm task id offset by the array's first id and step)."""
    raw = _whole(source.system, source.index, environ)
    if source.minimum is None:
        return raw - source.first + 1
    first = _whole(source.system, source.minimum, environ)
    step = _whole(source.system, source.step, environ) if source.step and environ.get(source.step, "").strip() else 1
    if step < 1 or raw < first or (raw - first) % step:
        raise UsageError(
            f"--shard auto: {source.system} task {raw} is not one of an array of tasks from {first} in steps of {step} "
            f"({source.index}, {source.minimum}); give the shard as --shard I/N"
        )
    return (raw - first) // step + 1


def shard_from_environment(environ: Mapping[str, str], count: int | None = None) -> Shard:
    """The shard this job answers, from the first CI system or job array whose variables are set.

    ``count`` is the N of ``--shard auto/N`` (a job array that says only its index needs it, or
    ``EVALKIT_SHARD_COUNT``). Refused (a usage error naming every variable looked at) when no
    system sets them, or when they are not whole numbers with the index within the total.
    """
    for source in SHARD_SOURCES:
        if not environ.get(source.index, "").strip():
            continue
        if source.total is not None and source.minimum is None and not environ.get(source.total, "").strip():
            continue  # a CI system sets its pair only in a parallel job
        total, told_by = _count(source, environ, count)
        index = _index(source, environ)
        if total < 1 or not 1 <= index <= total:
            raise UsageError(
                f"--shard auto: {source.system} says job {environ[source.index].strip()!r} of {str(total)!r} "
                f"({source.index}, {told_by}), which is not a shard of the run"
            )
        return Shard(index, total)
    looked = ", ".join(source.describe() for source in SHARD_SOURCES)
    raise UsageError(
        f"--shard auto: no CI parallel-job or job-array variables are set (looked for {looked}); "
        "run inside a parallel CI job or a job array, or give the shard as --shard I/N"
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
