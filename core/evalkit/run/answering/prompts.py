"""Answering a golden prompt set: a generator answers each prompt, a grader grades the answer.

:func:`prepare_prompts` turns library or CLI arguments into a :class:`PromptAnswering` — the set
loaded, checked, counted and fingerprinted in one pass, the grader loaded, the generator bound —
refusing everything refusable before anything is called or stored. The lifecycle then asks it for
the run's header, the prompts that remain, to answer them (the async runner,
:mod:`~evalkit.run.answering.prompt_runner`) and what the finish records: the verified serving
identity, the yardstick and the run metrics (:func:`run_identity`, :func:`run_yardstick`,
:func:`serving_metrics`). :class:`PromptRules` is what a prompt run adds to the one decide step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import attrs

from ... import components, registry
from ...answers import ServingIdentity, UsageSetAside, base_prompt_digest
from ...baselines import NO_ACCEPTANCE, not_complete
from ...catalog import SourcedSet, prompt_set_catalog
from ...checks import AssertionKind
from ...config import DEFAULT_GRADE_TIMEOUT_S, Config
from ...costs import CaseUsage, RunSpend, format_amount, spend_cost
from ...errors import PLUGIN_FAILURES, UsageError, carried, carried_async
from ...event_loops import run_to_completion
from ...hooks import assertion_kinds
from ...identity import identity_problems
from ...judge_gate import JudgeGate
from ...privacy import MIN_SECRET_LENGTH, is_scrubbable, read_secrets
from ...prompts import Assertion, GoldenPrompt, GoldenPromptSet
from ...run_lookup import stored_run
from ...runs import CaseResult, Run, RunKind, RunStatus
from ...storage.protocols import Capabilities, ResultRepository, latest_unfinished_run_of
from ...storage.values import BaselineScope
from ...timeouts import callers_call
from ...validation import CheckProgress, validate_prompt_set
from ...verdict import Comparability, Comparison, Verdict
from ...wording import argument, counted, quoted, table_key
from ..decide import Judging, incomplete_reason, streams
from ..limit_stops import limit_stop, reached_words
from ..placement import (
    REPEATS,
    Shard,
    continuing_call,
    continuing_command,
    continuing_words,
    prompt_run_provenance,
    stored_provenance,
    unsaid_grader_options,
    word_options,
)
from . import CaseSink, Finish, Slice, final_status, stored_whole
from .prompt_order import CaseSelection, PromptOrder, SetDigest, select_cases
from .prompt_runner import PromptJob, answer_prompts, default_concurrency, prompt_secrets
from .repeats import repeat_metrics
from .spending import (
    REQUEST_LIMIT_REACHED,
    AnswerExtras,
    SpendingPlan,
    budget_args,
    budget_passed,
    cache_note,
    pacing_notes,
    run_pricing,
    run_spend,
)

#: Why a run's spending can pass its budget, said where it did.
BUDGET_PASSED_WHY = (
    "each request is admitted on its estimate, and the requests in flight (their judge calls included) "
    "cost more than theirs"
)

__all__ = [
    "AD_HOC_NOTE",
    "BUDGET_PASSED_WHY",
    "ECHOED_MODEL_NOTE",
    "NO_SCOPED_READS",
    "PromptAnswering",
    "PromptRules",
    "PromptSource",
    "assertion_kinds",
    "identity_from_counts",
    "prepare_prompts",
    "run_identity",
    "run_yardstick",
    "serving_metrics",
    "short_secret_warnings",
]

NO_SCOPED_READS = "not compared: the configured repository has no generator-scoped reads"
#: The note shown when the reported model is just the alias the request sent.
ECHOED_MODEL_NOTE = "reported model is the alias sent; the server does not report its own"


# -- who answered, under which yardstick ---------------------------------------------------------


def run_yardstick(cases: Iterable[CaseResult], requested: str) -> str:
    """The yardstick a run is stored under: the graders' common one, else the requested grader name
    (see :func:`common_yardstick`)."""
    return common_yardstick({c.yardstick for c in cases if c.yardstick and not c.errored}, requested)


def common_yardstick(yardsticks: Collection[str], requested: str) -> str:
    """The one yardstick of a run's graded cases, else ``requested`` (no single yardstick).

    A yardstick may refine another: ``deterministic:rubric:<judge>:<model>:v1`` is the
    ``deterministic`` grader with a judge deciding rubric checks. A case whose prompt has no rubric
    check is graded ``deterministic`` whichever judge the run has, so when the yardsticks are
    exactly one plain name and one refinement of it, the run's yardstick is the refinement (a
    failed grading's ``…:failed`` refines nothing).
    """
    found = set(yardsticks)
    if len(found) == 1:
        return found.pop()
    if len(found) == 2:
        plain, refined = sorted(found, key=len)
        if refined.startswith(f"{plain}:") and not refined.endswith(":failed"):
            return refined
    return requested


#: Why a run of a generator adapter named on the command line (not a configured provider
#: instance) has no verified serving identity.
AD_HOC_NOTE = "the generator is not a configured provider instance (ad-hoc run); configure [providers.NAME] in evalkit.toml for comparable runs"


def run_identity(cases: Sequence[CaseResult], bound_configured: bool) -> tuple[ServingIdentity | None, str | None]:
    """The run's verified serving identity, or ``None`` and the reason.

    Verified only when the instance is configured, every answered case carries an identity, every
    identity is well formed (:func:`evalkit.identity.identity_problems`) and all of them agree.
    """
    if not bound_configured:
        return None, AD_HOC_NOTE
    if not cases:
        return None, "the run has no answered cases"
    counts: dict[ServingIdentity | None, int] = {}
    for case in cases:
        if case.errored:
            continue
        counts[case.identity] = counts.get(case.identity, 0) + 1
    return identity_from_counts(counts)


def missing_alias_note(instance: str | None) -> str:
    """Why a configured instance that names no ``model`` has no serving identity: its answers
    carry no alias, so no case is evidence of who answered, whatever the endpoint reported."""
    return (
        f"the provider instance {quoted(instance)} names no model, so its answers carry no serving identity; "
        f'add model = "…" (the alias its runs are compared under) to [providers.{table_key(instance)}]'
    )


def identity_from_counts(counts: Mapping[ServingIdentity | None, int]) -> tuple[ServingIdentity | None, str | None]:
    """:func:`run_identity` from the answered cases counted per identity (``None``: the case
    carries none), for a configured instance whose run has cases — what a store's
    :class:`~evalkit.storage.CaseTally` gives without reading the cases back."""
    if not counts:
        return None, "no case was answered"
    malformed = [(i, n) for i, n in counts.items() if i is not None and identity_problems(i)]
    if malformed:
        bad_cases = sum(n for _, n in malformed)
        return None, (
            f"{counted(bad_cases, 'case')} {'carries' if bad_cases == 1 else 'carry'} a serving identity that is not well formed, so it is no evidence of "
            f"who answered: {'; '.join(identity_problems(malformed[0][0]))}"
        )
    if None in counts:
        return None, f"the endpoint reported no model for {counted(counts[None], 'case')}, so who answered is unknown"
    if len(counts) > 1:
        seen = ", ".join(
            f"{i.reported_model} via {i.provider_instance}/{i.model_alias} ({counted(n, 'case')})"
            for i, n in sorted(counts.items(), key=lambda kv: -kv[1])
            if i is not None
        )
        return None, f"the cases disagree on who answered — the endpoint switched models midway: {seen}"
    identity = next(iter(counts))
    return identity, None


def serving_metrics(bound: components.BoundGenerator, identity: ServingIdentity | None) -> dict[str, Any] | None:
    """What is known about who served beyond the identity: whether the reported model merely
    echoes the alias sent (never said of the reference self-check, which serves no model; in the
    generator's own words when it declares ``echoed_model_note``), and the generator's own free
    evidence (:class:`~evalkit.components.ServingEvidence`).

    ``None`` when there is nothing to say. Evidence a generator fails to give is left out.
    """
    serving: dict[str, Any] = {}
    # The reference self-check serves no model: its "reported model" is its name, not an echo.
    if identity is not None and identity.reported_model == identity.model_alias and not bound.is_reference_self_check:
        note = bound.echoed_model_note(ECHOED_MODEL_NOTE)
        if note is not None:
            serving["reported_model_is_alias"] = True
            serving["note"] = note
    if components.offers(bound.generator, components.ServingEvidence):
        try:
            evidence = dict(carried(bound.generator.serving_evidence))
        except PLUGIN_FAILURES:  # evidence is a bonus; a server that does not give it is not an error
            evidence = {}
        if evidence:
            serving["evidence"] = evidence
    return {"serving": serving} if serving else None


# -- the verdict's rules for a prompt run ---------------------------------------------------------


@attrs.frozen
class PromptRules:
    """What a prompt run adds to the one decide step (:class:`~evalkit.run.decide.KindRules`): a
    run is comparable only when it is complete, graded under one yardstick and answered by one
    verified serving identity, and only through a store with generator-scoped reads."""

    unit: str = "case"
    first_run_reason: str = "no accepted run for this set, serving identity and grader — recorded as the baseline"

    def run_problem(self, run: Run, judging: Judging) -> str | None:
        """Incomplete, ungraded, graded under two yardsticks, or answered by no single identity."""
        if run.status is not RunStatus.COMPLETE:
            return incomplete_reason(run, self.unit, judging.stopped_by)
        # The yardstick reasons come first (as in the original): they say what is wrong with the measurement.
        if run.grader.endswith(":failed"):
            return f"not compared: no grading of this run could be made (stored as {quoted(run.grader)})"
        yardsticks: Iterable[str | None]
        if streams(run, judging.store):
            assert judging.store.streamed is not None
            yardsticks = (
                judging.tally if judging.tally is not None else judging.store.streamed.case_tally(run.id)
            ).yardsticks
        else:
            yardsticks = (c.yardstick for c in run.cases if not c.errored)
        found = {y for y in yardsticks if y}
        if found and common_yardstick(found, "") != run.grader:
            return (
                f"not compared: the gradings of this run do not share one yardstick (stored as {quoted(run.grader)}); "
                "a grading failed for some cases, or the judge model changed during the run"
            )
        if BaselineScope.of_run(run) is None:
            return f"not compared: no single verified serving identity — {run.identity_note}"
        return None

    def missing_reads(self, store: Capabilities) -> str | None:
        """A prompt run's baseline is read through generator-scoped reads and accepted baselines."""
        if store.scoped is None:
            return NO_SCOPED_READS
        if store.baselines is None:
            return NO_ACCEPTANCE
        return None

    def comparability(self, run: Run, baseline: Run | None) -> Comparability:
        """A prompt run of the baseline's scope is comparable unless the evidence of the backend
        serving the alias differs (:mod:`evalkit.serving_evidence`): then it was answered by
        another model, and the reason names what differed. Evidence on one side only is a note."""
        if baseline is None:
            return Comparability()
        from ...serving_evidence import compare_evidence

        check = compare_evidence(run.metrics, baseline.metrics, baseline.id)
        if not check.same_backend:
            return Comparability(
                False,
                "not compared: the backend serving the alias is not the baseline's — "
                + "; ".join(check.differences)
                + ". Another model answered under the same alias and reported model; compare the two runs with "
                "`evalkit compare`, and accept this run on purpose (`evalkit baseline accept RUN_ID --reason …`) to "
                "make the new backend the baseline",
                notes=check.notes,
            )
        return Comparability(notes=check.notes)

    def summary(self, comparison: Comparison) -> str:
        """The comparison's sentence in pass-rate words."""
        return comparison.summary()

    def stored_note(self, verdict: Verdict) -> str | None:
        """The reason, as it is."""
        return verdict.reason


# -- the answering --------------------------------------------------------------------------------


@attrs.define
class PromptAnswering:
    """A golden prompt set answered by a bound generator and graded (see the module docstring).

    Built by :func:`prepare_prompts`; ``case_count``, ``set_fingerprint`` and ``order`` come from the
    one checked pass over the prompts, ``concurrency`` is the requests kept in flight.
    """

    golden_set: GoldenPromptSet
    bound: components.BoundGenerator
    grading: Any
    grader_name: str
    kinds: Mapping[str, AssertionKind]
    concurrency: int
    case_count: int
    set_fingerprint: str
    order: PromptOrder | None = None
    max_answer_bytes: int | None = None
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S
    repeats: int = 1
    kind: RunKind = RunKind.PROMPTS
    groups_commits: bool = True
    #: How long the generator's readiness probe may wait for a server that is still starting (s).
    wait_ready: float = 0.0
    #: ``[gate] min_judge_kappa`` (``None``: unset, every judge gates).
    min_judge_kappa: float | None = None
    #: The judges' licences, read from the store's calibration records when the slice is selected.
    judge_gate: JudgeGate | None = None
    #: The prices the run is costed at (:class:`~evalkit.costs.Price` mappings, ``generator`` and ``judge``).
    pricing: Mapping[str, Any] | None = None
    #: Reuse, cache and budget (:class:`SpendingPlan`); ``None``: every answer is asked for.
    spending: SpendingPlan | None = None
    #: The options a resume command repeats after the set: the CLI's as typed (``--provider p
    #: --config c``…), a library call's what answers the run (:func:`~evalkit.run.placement.continuing_options`).
    command_args: tuple[str, ...] = ()
    #: A run done again rather than resumed (a re-grade: ``evalkit run --resume`` would ask the
    #: model): the command that does it again, said in place of a resume command.
    redo_command: str | None = None
    #: The set was given as a :class:`GoldenPromptSet` built in code, not found by the catalog (an
    #: entry point, a set file): no ``evalkit run`` finds it, so its resume line is the library call.
    in_code: bool = False
    #: The generator was bound in code (a library caller's ``bound_generator``) and no installed
    #: provider names it (:func:`_named_by_a_provider`): no ``--provider`` answers the run, so its
    #: resume line is the library call.
    generator_in_code: bool = False
    #: The grader's options as the caller gave them; the judge's are stored with the run, which a
    #: command that continues it repeats (:func:`~evalkit.run.placement.grading_options`).
    grader_options: Mapping[str, Any] = attrs.Factory(dict)
    #: What this process's runner reused and spent, once it ran (:class:`~.spending.AnswerExtras`).
    live: LiveSpending = attrs.Factory(lambda: LiveSpending())
    #: The generator's or the grader's closing that failed once the cases were answered (warnings).
    closing_failures: list[str] = attrs.field(factory=list, init=False)

    @property
    def rules(self) -> PromptRules:
        """The verdict's rules for a prompt run."""
        return _RULES

    @property
    def set_identifier(self) -> str:
        """The set's identifier."""
        return self.golden_set.identifier

    def header(self, run_id: str, started: float, placement: Any) -> Run:
        """A prompt run of this set, generator and grader, with its prices and the run its answers come from."""
        spending = self.spending
        return Run(
            pricing=self.pricing,
            provenance=prompt_run_provenance(
                self.in_code, self.grader_name, self.repeats, spending is not None and spending.cache,
                grader_options=self.grader_options, generator_in_code=self.generator_in_code,
            ),  # fmt: skip
            answers_reused=spending.reuse_kind if spending is not None else None,
            source_run_id=spending.stored.run_id if spending is not None and spending.stored is not None else None,
            id=run_id,
            set_identifier=self.golden_set.identifier,
            grader=self.grader_name,
            started_at=started,
            case_count=self.case_count,
            set_fingerprint=self.set_fingerprint,
            fingerprints_kept=True,  # each case carries its prompt's fingerprint (the runner sets it)
            provider_instance=self.bound.instance,
            adapter=self.bound.adapter,
            model_alias=self.bound.alias,
            label=placement.label,
            privacy=placement.privacy,
        )

    def unfinished_run(self, store: Capabilities) -> str:
        """The newest unfinished run of this set, instance, alias and grader."""
        if store.resumable is None:
            raise UsageError(
                f"{argument('resume')} without a run id needs a store that can find unfinished runs, and this one cannot; "
                f"pass the id: {argument('run_id', 'RUN_ID', option='--resume RUN_ID')}"
            )
        bound = self.bound
        previous = latest_unfinished_run_of(
            store.resumable, self.golden_set.identifier, bound.instance, bound.alias, self.grader_name, bound.adapter
        )
        if previous is not None and not components.same_generator(
            (previous.provider_instance, previous.adapter, previous.model_alias),
            (bound.instance, bound.adapter, bound.alias),
        ):  # a store that does not pass over another adapter's ad-hoc runs: it cannot look past this one
            raise UsageError(
                f"{argument('resume')}: the newest unfinished run of {quoted(self.golden_set.identifier)} the store finds, "
                f"{previous.id}, is answered by {components.answered_by(previous.provider_instance, previous.adapter, previous.model_alias)}, "
                f"not {components.answered_by(bound.instance, bound.adapter, bound.alias)}, and the store cannot look past it; "
                f"pass the id of the run to resume: {argument('run_id', 'RUN_ID', option='--resume RUN_ID')}"
            )
        if previous is None:
            raise UsageError(
                f"{argument('resume')}: no unfinished run of {quoted(self.golden_set.identifier)} by {components.answered_by(self.bound.instance, self.bound.adapter, self.bound.alias)} "
                f"with grader {quoted(self.grader_name)} to resume"
            )
        return previous.id

    def check_joinable(self, existing: Run, header: Run, resume: bool) -> None:
        """Refuse to add cases to a stored run they do not belong to (before anything is written; a run
        of another set was refused by the caller)."""
        if resume and existing.status is RunStatus.COMPLETE:
            raise UsageError(f"run {existing.id} is already complete; there is nothing to resume")
        if not components.same_generator(
            (existing.provider_instance, existing.adapter, existing.model_alias),
            (header.provider_instance, header.adapter, header.model_alias),
        ):
            raise UsageError(
                f"run {existing.id} is answered by {components.answered_by(existing.provider_instance, existing.adapter, existing.model_alias)}; "
                f"this process would answer with {components.answered_by(header.provider_instance, header.adapter, header.model_alias)} "
                f"— use the same {argument('provider')} and {argument('model')}"
            )
        if existing.set_fingerprint and existing.set_fingerprint != header.set_fingerprint:
            raise UsageError(
                f"set {quoted(header.set_identifier)} has changed since run {existing.id} started; its stored cases would "
                "mix two versions of the set, so start a new run"
            )
        if existing.status is RunStatus.COMPLETE:
            raise UsageError(
                f"run {existing.id} is already complete (its cases and verdict are kept); choose a new {argument('run_id')}"
            )

    def continued_repeats(self, store: Capabilities, run_id: str | None) -> int | None:
        """The answers per prompt of the stored run a call continues or joins (``run_id``, else
        the newest unfinished run: :meth:`unfinished_run`), as it keeps them (its provenance's
        :data:`~evalkit.run.placement.REPEATS`, else its stored cases': :func:`_stored_repeats`);
        ``None`` when there is no such run, or nothing says. A caller that gives no repeats answers
        with these: ``[run] repeats`` may have changed since the run began, and a resume line
        pasted then would have answered another number and been refused."""
        if run_id is None:
            try:
                run_id = self.unfinished_run(store)
            except UsageError:
                return None  # said where the run is looked for (see evalkit.run.lifecycle)
        existing = store.repository.get_run(run_id, with_cases=False)
        if existing is None or existing.kind is not RunKind.PROMPTS:
            return None
        kept = stored_provenance(existing).get(REPEATS)
        if isinstance(kept, int) and not isinstance(kept, bool) and kept >= 1:
            return kept
        return _stored_repeats(existing.id, store)

    def check_stored(self, existing: Run, store: Capabilities) -> None:
        """Refuse (usage error, nothing written) to add answers to ``existing`` when its stored cases
        were answered another number of times than this process answers each prompt (``repeats``):
        its cases would mix N and M answers, and a budget measures a stored case's usage as N of
        them. The run row does not keep its ``repeats``; each stored case that did not error does
        (its ``measures["answers"]``, none for a prompt answered once). A run with no such case
        yet is joined."""
        stored = _stored_repeats(existing.id, store)
        if stored is not None and stored != self.repeats:
            raise UsageError(
                f"run {existing.id} answered each prompt with {argument('repeats', stored)}; this process would answer "
                f"with {argument('repeats', self.repeats)} — use {argument('repeats', stored)} to continue it"
            )

    def before_joining(self) -> list[str]:
        """The generator's one free readiness probe (a new run made it before the store was opened)."""
        return components.check_generator_ready(self.bound, self.wait_ready)

    def secrets(self) -> tuple[str, ...]:
        """The generator's and the grader's credential values."""
        return prompt_secrets(self.bound, self.grading)

    def resumed(self, run_id: str, kept: int, asked: int) -> str | None:
        """``Resuming run …: N cases already answered are kept.`` (nothing when none were)."""
        if not kept:
            return None
        return f"Resuming run {run_id}: {counted(kept, 'case')} already answered {'is' if kept == 1 else 'are'} kept."

    def select(self, part: Slice) -> CaseSelection:
        """The set's prompts in this shard that are not stored yet, lazily (see :class:`CaseSelection`).

        The judges' calibration records are read here too, the one step that holds the store before
        anything is answered: a store that keeps none leaves every judge uncalibrated."""
        self.judge_gate = self._judge_gate(part.store)
        self.live.shard = part.shard  # a budget stop's note continues this shard, not the whole run
        if self.spending is not None:
            self.live.extras = self.spending.extras_for(part, self.pricing, self.bound, self.golden_set.prompts)
        return select_cases(self.golden_set.prompts, part.shard, part.skip, self.order)

    def _judge_gate(self, store: Capabilities) -> JudgeGate | None:
        """The gate of a grader with a judge (``None`` for one without). A judge whose
        ``judge_temperature`` cannot be read (a property that raises, no real number) matches no
        calibration record: it is uncalibrated, advisory under ``[gate] min_judge_kappa``."""
        if not components.declares(self.grading, "judge_temperature"):
            return None
        temperature = components.declared(self.grading, "judge_temperature")
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature):
            return JudgeGate.from_records(self.min_judge_kappa, (), 0.0)
        records = store.calibrations.calibrations() if store.calibrations is not None else ()
        return JudgeGate.from_records(self.min_judge_kappa, records, temperature)

    def _grader(self) -> Any:
        """Who the grader's failures name (see :func:`evalkit.components.plugin_called`)."""
        return components.grader_plugin(self.grader_name)

    def answer(self, todo: Collection[Any], sink: CaseSink) -> None:
        """Answer and grade ``todo`` (the async runner), then close the generator and the grader."""
        if components.offers(self.bound.generator, components.ConcurrencyAware):
            components.plugin_called(
                self.bound.plugin, "use_concurrency", self.bound.generator.use_concurrency, self.concurrency
            )
        job = PromptJob(
            todo, self.bound, self.grading, self.kinds, self.concurrency,
            max_answer_bytes=self.max_answer_bytes, grade_timeout=self.grade_timeout, repeats=self.repeats,
            extras=self.live.extras, judge_gate=self.judge_gate, grader_name=self.grader_name, usage_sums=self.live.usage_sums,
            reply_usage=self.live.reply_usage,
        )  # fmt: skip

        async def main() -> None:
            try:
                await answer_prompts(job, sink)
            finally:
                await self._close()

        run_to_completion(main)  # an interrupt of a caller in a running loop reaches its loop

    async def _close(self) -> None:
        """Close the generator, then the grader, on the run's event loop. What either raises is a
        warning naming the plugin and its distribution (:attr:`closing_failures`), as a
        retriever's is: the run's cases are stored by then, and its status, verdict and exit code
        stay what they are (an error of the run that is on its way is not replaced by it)."""
        closers: list[tuple[Any, str, Callable[[], Any]]] = [(self.bound.plugin, "close", self.bound.aclose)]
        if components.promises(
            self.grading, components.AsyncClosing
        ):  # read as it is called: a raising read is its failure
            closers.append((self._grader, "aclose", lambda: self.grading.aclose()))
        for who, method, close in closers:
            try:
                await carried_async(close())
            except PLUGIN_FAILURES as exc:
                self.closing_failures.append(components.plugin_close_failed(who, method, exc))

    def finish(self, header: Run, store: Capabilities, streamed: bool) -> Finish:
        """The status, yardstick, verified identity and run metrics; ``streamed``: counted by the
        store, no case read back (a 100,000-case run stays flat in memory)."""
        repository = store.repository
        tally = None
        answered: Run | None = None
        if streamed:
            assert store.streamed is not None
            tally = store.streamed.case_tally(header.id)
            stored_count, errored_count = tally.answered, tally.errored
            status = final_status(header.case_count, stored_count, errored_count)
            whole = stored_count - errored_count  # stored_whole's count, the store's tally: no case read
            identity, note = _tally_identity(tally, self.bound.configured)
            yardstick = common_yardstick(tally.yardsticks, self.grader_name)
            metrics = None
            cases_read: Iterable[CaseResult] = ()
            if components.offers(self.grading, components.RunMetricsSource):
                answered = repository.get_run(
                    header.id
                )  # a judge's run metrics read every case (judged runs are small)
                metrics = self._run_metrics(answered.cases if answered is not None else ())
        else:
            answered = repository.get_run(header.id)
            cases = answered.cases if answered is not None else ()
            cases_read = cases
            stored_count, errored_count = len(cases), sum(1 for c in cases if c.errored)
            status = final_status(header.case_count, stored_count, errored_count)
            whole = stored_whole(cases)
            identity, note = run_identity(cases, self.bound.configured)
            yardstick = run_yardstick(cases, self.grader_name)
            metrics = self._run_metrics(cases) if components.offers(self.grading, components.RunMetricsSource) else None
        if identity is None and self.bound.configured and not self.bound.alias:
            note = missing_alias_note(self.bound.instance)
        digest = base_prompt_digest(self.bound.base_prompt)
        if identity is not None and digest:
            identity = attrs.evolve(identity, base_prompt=digest)
        if self.judge_gate is not None:
            if answered is None:
                answered = repository.get_run(header.id)  # the judges' κ: judged runs are small, as above
            judged = answered.cases if answered is not None else ()
            metrics = {**(metrics or {}), **(self.judge_gate.metrics(judged) or {})} or None
        serving = serving_metrics(self.bound, identity)
        if serving is not None:
            metrics = {**(metrics or {}), **serving}
        if self.repeats > 1:
            read = store.streamed.iter_cases(header.id) if streamed and store.streamed is not None else cases_read
            summary = repeat_metrics(read)
            if summary is not None:
                metrics = {**(metrics or {}), "repeats": summary}
        if digest:
            metrics = {**(metrics or {}), "base_prompt": base_prompt_summary(self.bound.base_prompt or "")}
        if store.spending is not None:
            spend = run_spend(self.pricing, store.spending.case_usage(header.id))
        else:
            answered = answered if answered is not None else repository.get_run(header.id)
            spend = run_spend(
                self.pricing,
                (
                    CaseUsage(c.usage, c.judge_usage, c.answer_source, c.errored, c.requests, c.requests_sent)
                    for c in (answered.cases if answered else ())
                ),
            )
        notes: list[str] = [
            *pacing_notes(self.bound, self.grading), *self.live.reply_usage.notes(components.generator_named(self.bound)),
            *self.live.usage_sums.sum_notes(),
        ]  # fmt: skip
        status, stop_note = self._stopped(
            header,
            status,
            spend,
            lambda: store.streamed.iter_cases(header.id) if streamed and store.streamed is not None else cases_read,
            whole,
        )
        if stop_note is not None:
            notes.append(stop_note)
        reused = self.spending.reuse_kind if self.spending is not None else None
        answered_count = tally.answered if tally is not None else spend.asked + spend.from_cache + spend.reused
        if spend.from_cache:
            reused = reused or ("cache:all" if spend.from_cache >= answered_count else "cache")
            notes.append(cache_note(spend.from_cache, answered_count))
        if notes and any(n.startswith("concurrency") for n in notes):
            metrics = {**(metrics or {}), "rate_limits": [n for n in notes if n.startswith("concurrency")]}
        stop = self._limit_reached(spend) if stop_note is not None else None
        return Finish(
            status, yardstick, identity, note, metrics, tally, spend.document(), reused, tuple(notes),
            slice_in=stop_note is None, plugin_failures=tuple(self.closing_failures),
            stopped_by=reached_words(stop) if stop is not None else None, limit_stop=stop,
            stored_notes=(lambda stored: self._passed_note(stored, spend)) if stop_note is None else None,
        )  # fmt: skip

    def _passed_note(self, stored: Run, spend: RunSpend) -> tuple[str, ...]:
        """The note of a run whose spending passed its budget though no limit stopped it, from the
        run as the store finished it: the spend ``finish_run`` summed over every case stored by then
        (a case another shard stored after this process read the run's cases included) — the one
        figure ``show`` and ``--json`` give. ``spend``, this process's read, stands in for a store
        that keeps no spend; an unknown cost, for what the guard counted (:meth:`_budget_passed`)."""
        guard = self.live.extras.guard if self.live.extras is not None else None
        if guard is None or guard.budget is None:
            return ()
        cost, currency = spend_cost(stored.spend) if stored.spend is not None else (spend.cost, spend.currency)
        spent = cost if cost is not None else guard.spent
        over = budget_passed(guard.budget, spent)
        if over is None:
            return ()
        currency = currency or spend.currency
        return (
            f"spent {format_amount(spent, currency)}, {format_amount(over, currency)} past the budget of "
            f"{format_amount(guard.budget, currency)}: {BUDGET_PASSED_WHY}",
        )

    def _limit_reached(self, spend: RunSpend) -> dict[str, Any] | None:
        """Which spending limit stopped the run, as data (:func:`~evalkit.run.limit_stops.limit_stop`,
        with the limits that continue it); ``None``: none did."""
        guard = self.live.extras.guard if self.live.extras is not None else None
        if guard is None or guard.stopped is None:
            return None
        if guard.stopped.startswith(REQUEST_LIMIT_REACHED):
            return limit_stop("max_requests", guard.max_requests, None, self.live.resume_limits)
        over = self._budget_passed(spend)
        return limit_stop(
            "budget", guard.budget, spend.currency, self.live.resume_limits, spent=over[0] if over is not None else None
        )

    def _budget_passed(self, spend: RunSpend) -> tuple[Decimal, Decimal] | None:
        """What the run spent and by how much that is past its budget (``None``: no budget, or
        not past it): its stored cost, else (a reply of unknown cost) what its guard counted."""
        guard = self.live.extras.guard if self.live.extras is not None else None
        if guard is None or guard.budget is None:
            return None
        spent = spend.cost if spend.cost is not None else guard.spent
        over = budget_passed(guard.budget, spent)
        return (spent, over) if over is not None else None

    def _run_metrics(self, cases: Iterable[CaseResult]) -> Any:
        """The grader's run metrics (a judge's identity and self-agreement), under the rule of a
        plugin's call (:func:`~evalkit.components.plugin_called`), held to the rule of a mapping a
        plugin gives to be stored (:func:`evalkit.grading.mapping_problem`): one that breaks it —
        an object no JSON writer takes, a NaN, megabytes — is the plugin's, named as one that
        raises is (the run marked interrupted), where it was an internal error or stored whole."""
        from ...grading import mapping_problem

        metrics = components.plugin_called(self._grader, "run_metrics", self.grading.run_metrics, cases)
        if metrics is not None and (problem := mapping_problem(metrics, "the value")) is not None:
            raise components.plugin_gave_unusable(self._grader, "run metrics from run_metrics()", problem)
        return metrics

    def _stopped(
        self,
        header: Run,
        status: RunStatus,
        spend: RunSpend,
        stored: Callable[[], Iterable[CaseResult]],
        whole: int,
    ) -> tuple[RunStatus, str | None]:
        """A run its budget or request limit stopped: ``incomplete``, and the note saying where it
        stopped and the command that resumes it with a higher limit. A shard's note counts its own
        slice (``stored``: the run's cases, read only then) and says that the limits are the run's,
        which its shards share (what is spent is the run's: the limit it is told is sized for the
        whole run, or the shard would be stopped again by what the other shards spend). ``whole``:
        the run's cases stored whole (not errored), which a resume does not ask again; a shard's
        count is its own of them, by the same rule (:func:`~evalkit.run.answering.stored_whole`)."""
        extras = self.live.extras
        guard = extras.guard if extras is not None else None
        # whatever the cases stored make the status: a resume stopped before it asked the stored
        # errored case again (or a repeated case cut short last) leaves every case stored, one
        # errored — ``incomplete``, where the note and its resume line were left out
        if guard is None or guard.stopped is None or status is RunStatus.COMPLETE:
            return status, None
        limit = budget_args(guard, spend, header.case_count, self.repeats, whole)
        self.live.resume_limits = limit
        # the cases stored whole: a stored errored case (asked again on resume) is not one — "after 2
        # of 2 cases" beside "resume it with" said of a run whose second case had errored, "after 1
        # of the 1 case of shard 1/2" of a shard whose one case had
        where, run_part = f"after {whole} of {counted(header.case_count, 'case')}", ""
        budget = f" of a budget of {format_amount(guard.budget, spend.currency)}" if guard.budget is not None else ""
        shard = self.live.shard
        if shard is not None:
            mine = sum(1 for prompt in self.golden_set.prompts if shard.owns(prompt.id))
            done = stored_whole(stored(), shard.owns)
            where = f"after {done} of the {counted(mine, 'case')} of shard {shard.index}/{shard.count}"
            run_part = f"{whole} of the run's {header.case_count}; "
            budget = (
                f" of the run's budget of {format_amount(guard.budget, spend.currency)}, which its shards share"
                if guard.budget is not None else "; the run's request limit is shared by its shards"
            )  # fmt: skip
        over = self._budget_passed(spend)
        if over is not None:
            budget += f", passed by {format_amount(over[1], spend.currency)}: {BUDGET_PASSED_WHY}"
        return RunStatus.INCOMPLETE, (
            f"{guard.stopped} {where} ({run_part}spent {format_amount(spend.cost, spend.currency)}{budget}"
            + f"); resume it with: {self.resume_command(header.id, shard)}"
        )

    def detail(self, run: Run, verdict: Verdict, store: Capabilities) -> None:
        """A prompt outcome carries nothing beyond the run and its verdict."""
        return None

    def resume_command(self, run_id: str, shard: Shard | None = None) -> str:
        """``evalkit run SET OPTIONS… --resume RUN_ID`` (a ``shard``'s: ``--shard I/N --run-id RUN_ID``),
        with the options the caller gave (``--provider``, …, then ``--config``, ``--database``) and,
        after a limit stopped the run, the higher ``--budget`` / ``--max-requests`` last, in place of
        the one given: built by :func:`~evalkit.run.placement.continuing_command`, as the CLI's
        interrupted line and a stored run's are, so the lines differ only by the limit; a re-grade's: its ``redo_command``; a set or a
        generator built in code (:attr:`in_code`, :attr:`generator_in_code`), or grader options no flag
        says (:func:`~evalkit.run.placement.unsaid_grader_options`): ``evaluate_set`` again (:func:`~evalkit.run.placement.continuing_call`).
        Repeats the caller did not give need not be said: a continuing call or command that gives
        none answers with the run's (:meth:`continued_repeats`)."""
        if self.redo_command is not None:
            return self.redo_command
        if self.in_code or self.generator_in_code or unsaid_grader_options(self.grader_options):
            return continuing_call(
                "evaluate_set", self.golden_set.identifier, run_id, shard, self.live.resume_limits, set_in_code=self.in_code
            )
        # the one builder of every continuing line (the CLI's interrupted one, a stored run's): the
        # same words in the same order, a stopped run's higher limits replacing the ones it was given
        return continuing_command(
            ("run", self.golden_set.identifier),
            word_options(self.command_args),
            (),
            continuing_words(run_id, shard),
            self.live.resume_limits,
        )

    def wanted_scope(self) -> BaselineScope:
        """The scope this run asks for, as far as it is known before it runs (no reported model yet)."""
        return BaselineScope(
            RunKind.PROMPTS,
            self.golden_set.identifier,
            self.bound.instance,
            self.bound.alias,
            None,
            self.grader_name,
            base_prompt=base_prompt_digest(self.bound.base_prompt),
        )


_RULES = PromptRules()

#: How many words of a base system prompt a run keeps (for ``evalkit show``), after scrubbing.
BASE_PROMPT_WORDS = 12


def base_prompt_summary(text: str) -> dict[str, str]:
    """What a run keeps of its instance's base system prompt, at every privacy level: its digest
    and its first words, secrets scrubbed (it is configuration, not an answer, but may quote one)."""
    from ...privacy import scrub

    words = text.split()
    opening = " ".join(words[:BASE_PROMPT_WORDS]) + (" …" if len(words) > BASE_PROMPT_WORDS else "")
    return {"digest": base_prompt_digest(text), "opening": scrub(opening)}


def _base_prompt_words(digest: str) -> str:
    return f"the base system prompt {digest}" if digest else "no base system prompt"


@attrs.define
class LiveSpending:
    """What one answering of a prompt run learns as it runs: the runner's extras (reuse, cache,
    budget) once bound to the store, and the limits a resume command repeats after a budget stop."""

    extras: AnswerExtras | None = None
    resume_limits: tuple[str, ...] = ()
    #: The usages summed over a case's requests that were set aside, for the run's notes.
    usage_sums: UsageSetAside = attrs.Factory(UsageSetAside)
    #: The slice this answering answers (``None``: the whole run).
    shard: Shard | None = None
    #: The generator plugin's replies whose usage was impossible in itself, set aside, for the notes.
    reply_usage: UsageSetAside = attrs.Factory(UsageSetAside)


def _tally_identity(tally: Any, configured: bool) -> tuple[ServingIdentity | None, str | None]:
    """:func:`run_identity` from the store's count of the answered cases."""
    if not configured or not tally.answered:
        return run_identity((), configured)
    return identity_from_counts(tally.identities)


# -- from arguments to an answering ---------------------------------------------------------------


def short_secret_warnings(bound: components.BoundGenerator, grading: Any) -> list[str]:
    """A warning for each component whose credentials include a value too short to be a real secret.

    Such a value (a dummy key like ``x`` for a local server) is not scrubbed from stored or printed
    text: masking every ``x`` would mangle answers. The value itself is never shown.
    """
    holders = [(f"provider instance {quoted(bound.instance or bound.adapter)}", bound.secrets())]
    if components.offers(grading, components.SecretHolder):
        holders.append(
            (f"the grader's judge {quoted(components.judge_instance(grading) or '?')}", read_secrets(grading)[0])
        )
    warnings = []
    for who, values in holders:
        short = [v for v in values if isinstance(v, str) and v and not is_scrubbable(v)]
        if short:
            warnings.append(
                f"warning: {who} sends {counted(len(short), 'credential value')} shorter than {MIN_SECRET_LENGTH} characters; "
                "that is not a real secret, so it is not scrubbed from stored or printed text"
            )
    return warnings


@attrs.frozen
class PromptSource:
    """What answers a prompt run, as the caller named it: the set (an identifier or the set
    itself), the generator (a configured ``provider`` instance or adapter with an optional
    ``model`` alias, or an already ``bound`` generator), the grader (with its options; an unknown
    one falls back to ``deterministic`` unless ``strict``), the requests in flight and how many
    times each prompt is answered (``repeats``). ``answered`` is false for a caller that never asks
    the generator (an estimate): a :class:`~evalkit.components.SetAware` generator is then not
    shown the set (the reference generator's ``bind_set`` reads every prompt once more)."""

    golden_set: str | GoldenPromptSet | SourcedSet
    provider: str | None = None
    model: str | None = None
    grader: str = "deterministic"
    strict_grader: bool = False
    grader_options: Mapping[str, Any] = attrs.Factory(dict)
    bound: components.BoundGenerator | None = None
    concurrency: int | None = None
    wait_ready: float = 0.0
    repeats: int = 1
    answered: bool = True


def prepare_prompts(
    source: PromptSource, config: Config, manager: Any, on_check: Callable[[CheckProgress], None] | None = None
) -> tuple[PromptAnswering, list[str]]:
    """The answering of a prompt run, and the notes its preparation has for the user.

    Refused before anything is called or stored, in this order: an unknown set, an invalid set
    (every problem, from one pass over the prompts that also counts and fingerprints them), an
    unknown grader (when ``strict``), a generator that cannot be bound, a judge that cannot be bound.
    ``on_check`` hears how far that pass has come (:func:`~evalkit.validation.survey_prompt_set`'s
    ``progress``): a set of a million streamed prompts takes a while.
    """
    notes: list[str] = []
    golden_set = source.golden_set
    in_code = isinstance(golden_set, GoldenPromptSet)  # built in code: not a set the CLI finds
    if isinstance(golden_set, SourcedSet):
        golden_set = golden_set.set
        if not isinstance(golden_set, GoldenPromptSet):
            raise UsageError(
                f"the catalog entry given as the set holds a {type(golden_set).__name__}, not a GoldenPromptSet"
            )
    elif not in_code:
        golden_set = prompt_set_catalog(config=config).get(golden_set).set
    kinds = assertion_kinds(manager)
    # One pass over the prompts checks, counts and fingerprints the set (a stream is never held).
    digest = SetDigest(golden_set)
    order = PromptOrder(golden_set.identifier)
    conversations: list[str] = []  # the first prompt that only a chat-capable generator can answer
    with_tools: list[str] = []  # the first prompt that offers tools
    forced_choice: list[str] = []  # the first prompt whose tool_choice is not the default

    rubric_prompts: list[str] = []

    def visit(prompt: GoldenPrompt) -> None:
        digest.add(prompt)
        order.see(prompt.id)
        if prompt.is_chat and not conversations:
            conversations.append(prompt.id)
        if prompt.tools and not with_tools:
            with_tools.append(prompt.id)
        if prompt.tool_choice not in (None, "auto") and not forced_choice:
            forced_choice.append(prompt.id)
        if any(isinstance(a, Assertion) and a.judged for a in prompt.assertions):
            rubric_prompts.append(prompt.id)

    # The caller's own callback: a SIGALRM it sets while the check's limits hold it is refused aloud.
    progress = None if on_check is None else functools.partial(callers_call, "on_check", on_check)
    case_count = validate_prompt_set(golden_set, kinds, visit=visit, progress=progress)
    grading, grader_name = components.load_grader(
        source.grader, strict=source.strict_grader, config=config, **dict(source.grader_options)
    )
    bound = source.bound or components.bind_generator(config, source.provider, source.model)
    if conversations and not bound.can_chat:
        raise UsageError(
            f"set {quoted(golden_set.identifier)} holds conversations or tools (prompt {quoted(conversations[0][:80])}), and the "
            f"generator of {quoted(bound.instance or bound.adapter)} ({quoted(bound.adapter)}) cannot send them: it has no chat() "
            "(see evalkit.components.ChatGenerator); the openai, llm, replay and reference adapters have one"
        )
    # a chat generator may say that its model takes no tools (the llm adapter's supports_tools)
    if with_tools and components.declared(bound.generator, "supports_tools", True) is False:
        why = _tools_refusal(bound.generator)
        raise UsageError(
            f"set {quoted(golden_set.identifier)} offers tools (prompt {quoted(with_tools[0][:80])}), and the generator of "
            f"{quoted(bound.instance or bound.adapter)} ({quoted(bound.adapter)}) cannot send them: {why}"
        )
    # and that it cannot be told which tool to call (the llm library has no tool_choice)
    if forced_choice and components.declared(bound.generator, "supports_tool_choice", True) is False:
        raise UsageError(
            f"set {quoted(golden_set.identifier)} sets tool_choice (prompt {quoted(forced_choice[0][:80])}), and the generator of "
            f"{quoted(bound.instance or bound.adapter)} ({quoted(bound.adapter)}) cannot send it: only tool_choice auto (the model decides) works there"
        )
    if source.answered and components.offers(bound.generator, components.SetAware):
        components.bind_set(bound, golden_set)
    # the grader's calls before the run, under the one rule for a plugin's calls outside a case
    grader = components.grader_plugin(grader_name)
    if components.promises(grading, components.JudgeGrader):  # a raising read of it is its failure (plugin_method)
        components.plugin_method(grader, grading, "bind_judge", config, bound)
    if rubric_prompts and components.promises(grading, components.RubricJudging):
        grading = components.plugin_method(grader, grading, "with_rubric_judge", config, bound, tuple(rubric_prompts))
    notes.extend(short_secret_warnings(bound, grading))
    if bound.is_reference_self_check:
        notes.append(
            "No provider is configured: the answers are the set's own references "
            "(a self-check of the set, compared only with earlier reference runs)."
        )
    level = default_concurrency(bound, source.concurrency)
    bound.echoed_model_note(ECHOED_MODEL_NOTE)  # a note the run could not show is refused now, not after answering
    if components.offers(bound.generator, components.ConcurrencyAware):  # it opens a connection per request in flight
        from ...openfiles import make_room_for

        too_few_files = make_room_for(min(level, case_count))
        if too_few_files is not None:
            notes.append(too_few_files)
    answering = PromptAnswering(
        golden_set, bound, grading, grader_name, kinds, level, case_count, digest.fingerprint(), order,
        max_answer_bytes=config.max_answer_bytes, grade_timeout=config.grade_timeout, wait_ready=source.wait_ready,
        min_judge_kappa=config.min_judge_kappa,
        repeats=source.repeats, pricing=run_pricing(config, bound, grading),
        in_code=in_code, grader_options=dict(source.grader_options),
        generator_in_code=source.bound is not None and not _named_by_a_provider(source.bound, config),
    )  # fmt: skip
    return answering, notes


def _named_by_a_provider(bound: components.BoundGenerator, config: Config) -> bool:
    """True when ``--provider`` names generator ``bound`` (bound in code by a library caller): the
    built-in reference instance, a configured instance of its adapter, or (ad hoc) an installed
    adapter. Else a command that continues its run would answer with another generator, or be
    refused: the library call continues it (:attr:`PromptAnswering.generator_in_code`)."""
    if bound.is_reference_self_check:
        return True
    if bound.instance is not None:
        instance = config.providers.get(bound.instance)
        return instance is not None and instance.adapter == bound.adapter
    return bool(bound.adapter) and any(record.name == bound.adapter for record in registry.records("evalkit.generators"))


def _tools_refusal(generator: Any) -> str:
    """Why a chat generator's model takes no tools: what its ``tools_refusal()`` says, read as
    any optional declaration of a plugin is (:func:`evalkit.components.declared`) — when it has
    none, or it raises or says no text, ``its model does not support tools``."""
    said: Any = None
    refusal = components.declared(generator, "tools_refusal")
    if callable(refusal):
        try:
            said = carried(refusal)
        except PLUGIN_FAILURES:  # the refusal stands; only its reason is unknown
            said = None
    return said if isinstance(said, str) and said.strip() else "its model does not support tools"


def check_ready(answering: PromptAnswering, probe_generator: bool) -> list[str]:
    """The judge's readiness check, then (``probe_generator``: a new run) the generator's one free
    readiness probe — both before the store is even opened; returns the probe's notes."""
    if components.promises(answering.grading, components.ReadinessCheck):  # what it (or reading it) raises names it
        components.plugin_method(answering._grader, answering.grading, "check_ready")
    return components.check_generator_ready(answering.bound, answering.wait_ready) if probe_generator else []


def check_chosen_baseline(repository: ResultRepository, baseline_id: str, wanted: BaselineScope) -> None:
    """Refuse, before anything is called or stored, a chosen baseline that cannot be of this run's scope.

    What is known before the run is checked here (``wanted``: the set, a complete prompt run, the
    provider instance, the alias and the grader — the reported model is known only after the
    run); a mismatch in the reported model or the exact yardstick makes the run "not compared"
    with the reason.
    """
    chosen = stored_run(repository, baseline_id, with_cases=False, option=argument("baseline"))
    problems = _scope_problems(chosen, wanted, argument("baseline", chosen.id))
    if problems:
        raise UsageError(f"{argument('baseline', chosen.id)} is of another scope: {'; '.join(problems)}")


def check_baseline_file(baseline: Run, named: str, wanted: BaselineScope) -> None:
    """Refuse, before anything is called or stored, a baseline file (``named``: ``baseline file
    PATH``) that cannot be of this run's scope (what is known before the run: see
    :func:`check_chosen_baseline`)."""
    problems = _scope_problems(baseline, wanted, f"{named} holds run {baseline.id}, which")
    if problems:
        raise UsageError(f"{named} holds run {baseline.id} of another scope: {'; '.join(problems)}")


#: Why a run with no verified serving identity is no baseline: it belongs to no scope.
_NO_SCOPE = "it has no verified serving identity, so it belongs to no scope"


def _scope_problems(chosen: Run, wanted: BaselineScope, named: str) -> list[str]:
    """Why ``chosen`` (``named``, as the refusal says it) cannot be the baseline of a prompt run of
    ``wanted``, as far as it is known before the run. A run of this scope but for being unfinished
    (and so, maybe, with no verified identity yet) is refused as what it is, not as a run "of
    another scope" (:func:`evalkit.baselines.not_complete`): that is raised here."""
    instance, alias, grader = wanted.provider_instance, wanted.model_alias, wanted.grader or ""
    problems = []
    if chosen.kind.value != "prompts":
        problems.append(f"it is a {chosen.kind.value} run")
    if chosen.set_identifier != wanted.set_identifier:
        problems.append(f"it is a run of set {quoted(chosen.set_identifier)}, not {quoted(wanted.set_identifier)}")
    if chosen.identity is None:
        problems.append(_NO_SCOPE)
    elif (chosen.identity.provider_instance, chosen.identity.model_alias) != (instance, alias):
        problems.append(
            f"it was answered by {components.answered_by(chosen.identity.provider_instance, None, chosen.identity.model_alias)}, "
            + f"this run asks {components.answered_by(instance, None, alias) if instance is not None else 'an ad-hoc generator (never compared)'}"
        )
    if chosen.identity is not None and chosen.identity.base_prompt != wanted.base_prompt:
        problems.append(
            f"it was answered with {_base_prompt_words(chosen.identity.base_prompt)}, this run with {_base_prompt_words(wanted.base_prompt)}"
        )
    if chosen.grader != grader and not chosen.grader.startswith(f"{grader}:"):
        problems.append(f"it was graded by {quoted(chosen.grader)}, this run by {quoted(grader)}")
    incomplete = not_complete(chosen, named)
    if incomplete is not None and set(problems) <= {_NO_SCOPE}:
        raise UsageError(incomplete)
    if incomplete is not None:
        problems.append(f"it is {chosen.status.value}; only a complete run can be a baseline")
    return problems


def _stored_repeats(run_id: str, store: Capabilities) -> int | None:
    """How many answers each prompt of stored run ``run_id`` had: its first case that did not
    error says (``None``: no such case is stored yet). Read a page at a time where the store can."""
    if store.streamed is not None:
        cases: Iterable[CaseResult] = store.streamed.iter_cases(run_id)
    else:
        run = store.repository.get_run(run_id)
        cases = run.cases if run is not None else ()
    return next((case.answers for case in cases if not case.errored), None)
