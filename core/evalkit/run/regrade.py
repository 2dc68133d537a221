"""Re-grading a stored run: its answers graded again with the set's current checks (or another
grader), stored as a new run linked to its source, without asking the model anything.

The new run has the source's answers and serving identity and a new yardstick; it is compared like
any run, but it is not an independent sample of the model, so it is never accepted as a baseline
automatically. Only an answer to an unchanged prompt is reused (the digest of prompt and system
prompt, :func:`evalkit.set_versions.prompt_digest`): an edited prompt's case is stored errored,
saying so. A run whose answers were not stored in full (``metadata``: not kept; ``redacted``:
scrubbed and cut) is refused, naming its privacy level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .. import hooks
from ..answers import Answer, GenerationRequest
from ..components import BoundGenerator
from ..config import Config, load_config
from ..errors import GenerationError, UsageError
from ..run_lookup import stored_run
from ..runs import CaseResult, Run
from ..storage import check_database_url, resolve_database_url
from ..tolerance import Tolerances
from ..validation import CheckProgress
from .lifecycle import execute
from .outcome import Outcome
from .placement import grader_plugin_of, regrade_command
from .plan import Gate, Observing, Placement, RunPlan

__all__ = ["StoredAnswersOnly", "regrade_run"]


class StoredAnswersOnly:
    """The generator of a re-grade: it is never asked (every answer is the source run's); asking
    it is a bug, and says so instead of reaching an endpoint."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def generate(self, request: GenerationRequest) -> Answer:
        """Refuse: a re-grade never asks the model."""
        raise GenerationError(f"a re-grade of run {self.run_id} never asks the model")


def regrade_run(
    run_id: str,
    *,
    grader: str | None = None,
    grader_options: Mapping[str, Any] | None = None,
    config: Config | None = None,
    database: str | None = None,
    tolerances: Tolerances | None = None,
    gate: Any = None,
    cwd: Path | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
    on_check: Callable[[CheckProgress], None] | None = None,
    on_start: Callable[[Run, int], None] | None = None,
    command_args: Sequence[str] | None = None,
    resumed_options: Sequence[Sequence[str]] | None = None,
) -> Outcome:
    """Grade the stored answers of run ``run_id`` again and store the result as a new run.

    ``grader`` (default: the source run's) grades the answers with the set's current checks;
    ``grader_options`` are its options (a judge grader's ``judge`` …: the judge is asked, and
    paid for). ``tolerances`` and ``gate`` decide the comparison as for :func:`evaluate_set`.
    Refused (a usage error, nothing stored) when the run is not in the store (a SQLite store that
    is not there yet is not made), is not a
    prompt run, or its answers were not stored in full; and when its set is no longer installed,
    or the grader's readiness check (``check_ready()``: a judge whose endpoint is down) fails, as
    :func:`evalkit.evaluate_set` refuses it.
    ``on_start(run, total)`` hears the new run begin, with the cases it grades; ``on_case`` each
    graded case; ``on_check`` how far the check of the set has come — as :func:`evalkit.evaluate_set`'s
    do (the CLI draws its progress from them). A re-grade that stops is not resumed (``evalkit run
    --resume`` would ask the model): its "continue it with" line is ``evalkit regrade RUN_ID`` again
    with ``command_args`` (the CLI's options: ``--grader``, ``--judge``, ``--config``, ``--database``;
    default: ``--grader GRADER`` when given), which stores a new run. ``resumed_options``: those
    options but the store's, each as its words, which the new run keeps so that the line printed
    later from the store (:func:`~evalkit.run.placement.regrade_again`) is that line (``None``, a
    library call: it says ``--grader GRADER``). An argument of the wrong kind
    (``database=""``, ``command_args="--grader"``, ``on_case=5``) is refused by name first, as
    :func:`evalkit.evaluate_set` refuses it.
    """
    from ..arguments import OPTIONAL_TEXT, TEXT, WORDS, check_arguments
    from . import library
    from .answering import prompts as prompt_answering
    from .answering import spending
    from .settings import prompt_run_kinds

    kinds = prompt_run_kinds(
        "grader_options", "config", "database", "cwd", "on_case", "on_check", "on_start", "resumed_options",
        run_id=TEXT, grader=OPTIONAL_TEXT, command_args=(f"{WORDS[0]} or None", lambda value: value is None or WORDS[1](value)),
    )  # fmt: skip
    check_arguments("regrade_run", locals(), kinds)
    cwd = Path(cwd) if cwd is not None else None
    config = config if config is not None else load_config(cwd=cwd)
    tolerances, gate = library._gating(config, tolerances, gate, "prompts")
    url = resolve_database_url(database, config, cwd)
    check_database_url(url)
    with library.opened(url, needs_a_run="run_id") as repository:  # a store that is not there is not made
        source = stored_run(repository, run_id, with_cases=False)
        if source.kind.value != "prompts":
            raise UsageError(f"run {run_id} is a {source.kind.value} run; only a prompt run's answers can be re-graded")
        manager, hook_failures = hooks.plugin_manager(())
        # The source's serving identity, so the new run joins its scope; a generator that is never asked.
        # A configured instance's run without a verified identity (no model reported, a malformed
        # one) is configured all the same: its identity is worked out again from the same answers,
        # and says the same thing; only an ad-hoc run's is "ad-hoc".
        configured = source.identity is not None or (source.identity_note not in (None, prompt_answering.AD_HOC_NOTE))
        bound = BoundGenerator(
            StoredAnswersOnly(run_id), source.adapter or "stored", source.provider_instance, source.model_alias,
            configured=configured,
        )  # fmt: skip
        chosen = grader or grader_plugin_of(source)
        prepared = prompt_answering.PromptSource(source.set_identifier, None, None, chosen, True, dict(grader_options or {}), bound)
        answering, notes = prompt_answering.prepare_prompts(prepared, config, manager, on_check)
        stored = spending.stored_answers(repository, run_id, answering, only=True)
        # the judge's readiness check, as a run makes it once all else is agreed (the generator is never asked: no probe)
        prompt_answering.check_ready(answering, probe_generator=False)
        plan_of_spending = spending.SpendingPlan(stored=stored, reuse_kind="regrade")
        given = tuple(command_args) if command_args is not None else (("--grader", grader) if grader else ())
        again = regrade_command(run_id, given)
        answering = attrs.evolve(answering, spending=plan_of_spending, redo_command=again)
        notes.append(
            f"Re-grading the stored answers of run {run_id} with grader {chosen}: the model is not asked, so this run "
            "measures the grading, not the model (it is never accepted as a baseline automatically)."
        )
        plan = RunPlan(
            answering,
            Placement(None, False, None, None, source.privacy, library._option_words(resumed_options)),
            Gate(tolerances, None, False, settings=gate),
            Observing(manager, config.hook_timeout, tuple(f.error for f in hook_failures), on_start, on_case, None, True),
            tuple(notes),
            answers_reused=True,
        )
        return execute(plan, repository)
