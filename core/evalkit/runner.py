"""The prompt run pipeline's pieces — kept for the names older code imports.

They live in :mod:`evalkit.run` now: the async runner in
:mod:`evalkit.run.answering.prompt_runner`, the passes over a set (digest, order, the slice a
process answers) in :mod:`evalkit.run.answering.prompt_order`, who answered and under which
yardstick in :mod:`evalkit.run.answering.prompts`, shards and run ids in :mod:`evalkit.run.plan`,
and storing a case (group commit) in :mod:`evalkit.run.lifecycle`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .checks import AssertionKind
from .components import BoundGenerator
from .config import DEFAULT_GRADE_TIMEOUT_S
from .prompts import GoldenPrompt
from .run.answering import final_status as _final_status
from .run.answering.prompt_order import CaseSelection, PromptOrder, SetDigest, select_cases, set_fingerprint
from .run.answering.prompt_runner import (
    PromptJob,
    answer_prompts,
    concurrency_from_environment,
    default_concurrency,
    prompt_secrets,
    stored_answer,
)
from .run.answering.prompts import ECHOED_MODEL_NOTE, identity_from_counts, run_identity, run_yardstick, serving_metrics
from .run.lifecycle import COMMIT_BATCH, COMMIT_WAIT_S, CaseRecorder, Commits, redact_secrets
from .run.plan import Shard, new_run_id
from .runs import CaseResult, Run, RunStatus
from .storage.protocols import capabilities

__all__ = [
    "COMMIT_BATCH",
    "COMMIT_WAIT_S",
    "ECHOED_MODEL_NOTE",
    "CaseSelection",
    "PromptOrder",
    "SetDigest",
    "Shard",
    "concurrency_from_environment",
    "default_concurrency",
    "execute_prompts",
    "final_status",
    "identity_from_counts",
    "new_run_id",
    "redact_secrets",
    "run_identity",
    "run_yardstick",
    "select_cases",
    "serving_metrics",
    "set_fingerprint",
    "stored_answer",
]


async def execute_prompts(
    *,
    run: Run,
    prompts: Iterable[GoldenPrompt],
    bound: BoundGenerator,
    grader: Any,
    repository: Any,
    kinds: Mapping[str, AssertionKind],
    concurrency: int,
    privacy: str,
    request_options: Mapping[str, Any] | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
    max_answer_bytes: int | None = None,
    on_stored: Callable[[list[CaseResult]], None] | None = None,
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S,
) -> int:
    """:func:`evalkit.run.answering.prompt_runner.answer_prompts`, its cases committed to
    ``repository`` by a :class:`~evalkit.run.lifecycle.CaseRecorder` (group commit) and each told
    to ``on_case``; ``on_stored`` as the lifecycle gives it (a store that streams its cases)."""
    if on_stored is not None and capabilities(repository).streamed is None:
        on_stored = None
    recorder = CaseRecorder(repository, run.id, privacy, prompt_secrets(bound, grader), on_stored)
    sink = Commits(recorder, on_case if on_case is not None else _ignore)
    job = PromptJob(prompts, bound, grader, kinds, concurrency, dict(request_options or {}), max_answer_bytes, grade_timeout)
    return await answer_prompts(job, sink)


def _ignore(case: CaseResult) -> None:
    """Tell nobody."""


def final_status(run: Run, stored: Run) -> RunStatus:
    """Complete when every case of the set is answered without error; still running while cases
    are missing (shards not all in), even when some stored case errored; incomplete otherwise."""
    return _final_status(run.case_count, stored.answered_count, stored.errored_count)
