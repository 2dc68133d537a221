"""Running a golden prompt set end to end, as a library call; the CLI is a thin layer over this."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from . import components, hooks, runner
from .baselines import NO_ACCEPTANCE, Acceptance, BaselineScope, scope_mismatch, unreadable_baseline
from .catalog import prompt_set_catalog
from .checks import BUILTIN_KINDS, AssertionKind
from .config import DEFAULT_GRADE_TIMEOUT_S, DEFAULT_HOOK_TIMEOUT_S, PRIVACY_LEVELS, Config, load_config
from .errors import RunInterrupted, SetChangedError, StorageError, StoreFailure, UsageError
from .interruptions import mark_interrupted, store_failed
from .leases import WHOLE_RUN, LeaseKeeper, LeaseOwner, shard_part
from .privacy import MIN_SECRET_LENGTH, is_scrubbable
from .prompts import GoldenPrompt, GoldenPromptSet
from .runs import CaseResult, Run, RunStatus
from .storage import (
    AcceptedBaselines,
    CaseTally,
    FirstAcceptance,
    GeneratorScopedResults,
    ResumableRuns,
    RunLeases,
    RunVerdicts,
    StoredVerdict,
    StreamedCases,
    check_database_url,
    close_repository,
    is_in_memory,
    open_repository,
    resolve_database_url,
)
from .tolerance import Tolerances, resolve_tolerances
from .validation import check_label, validate_prompt_set
from .verdict import Comparison, compare, compare_pairs
from .wording import counted

__all__ = [
    "RunOutcome",
    "Verdict",
    "assertion_kinds",
    "automatic_acceptance",
    "check_chosen_baseline",
    "compare_stored",
    "evaluate_set",
    "record_verdict",
    "stored_run_verdict",
    "verdict_for",
]

NO_SCOPED_READS = "not compared: the configured repository has no generator-scoped reads"


@attrs.frozen
class Verdict:
    """Whether a run was compared, and the outcome.

    ``state`` is ``baseline`` (first comparable run), ``compared``, ``not_compared`` (with
    ``reason``), or ``pending`` (a shard finished its slice; the run is not complete yet, so
    there is no verdict to give). ``comparison`` is set when compared.
    """

    state: str
    reason: str | None = None
    comparison: Comparison | None = None
    baseline: Run | None = None
    #: Set when the run became its scope's accepted baseline (first of its scope, or no regression).
    acceptance: Acceptance | None = None

    @property
    def regressed(self) -> bool:
        """True when compared and an aggregate dropped beyond its tolerance."""
        return self.comparison is not None and self.comparison.regressed

    @property
    def new_failures(self) -> tuple[str, ...]:
        """Added or edited cases that fail now (empty when not compared)."""
        return self.comparison.new_failures if self.comparison is not None else ()


@attrs.frozen
class RunOutcome:
    """What a run produced: the stored run (with cases), the verdict and what to tell the user."""

    run: Run
    verdict: Verdict
    notes: tuple[str, ...] = ()
    plugin_failures: tuple[str, ...] = ()
    #: The requests the run kept in flight (``None`` when the run answered nothing itself).
    concurrency: int | None = None

    def exit_code(self, fail_on_regression: bool, fail_on_new_failures: bool = False) -> int:
        """0 fine · 1 gate failed (or its verdict is still pending) · 3 the run could not complete.

        The gate fails under ``fail_on_regression`` on a regression, when the run could not be
        compared or while its verdict is pending (a shard of an unfinished run), and under
        ``fail_on_new_failures`` when an added or edited case fails.
        """
        if self.run.status is RunStatus.RUNNING and not self.run.errored_count:
            # A shard finished its slice; the run completes with the last shard. A gate asked of
            # it has no verdict yet, which must never read as a pass.
            return 1 if fail_on_regression else 0
        if self.run.status is not RunStatus.COMPLETE:
            return 3
        if fail_on_regression and (self.verdict.state == "not_compared" or self.verdict.regressed):
            return 1
        if fail_on_new_failures and self.verdict.new_failures:
            return 1
        return 0


def assertion_kinds(manager: Any) -> dict[str, AssertionKind]:
    """Built-in assertion kinds plus those hook plugins add (built-ins win a name clash)."""
    kinds: dict[str, AssertionKind] = dict(BUILTIN_KINDS)
    for returned in manager.hook.evalkit_assertion_kinds():
        for kind in returned or ():
            if isinstance(kind, AssertionKind) and kind.name not in kinds:
                kinds[kind.name] = kind
    return kinds


def verdict_for(
    run: Run, repository: Any, tolerances: Tolerances, *, baseline_id: str | None = None, tally: CaseTally | None = None
) -> Verdict:
    """Find the right baseline for a finished run and compare (the run itself is never its baseline).

    The baseline is the most recently accepted run of the run's scope (see :mod:`evalkit.baselines`),
    or the stored run ``baseline_id`` when one is chosen; a chosen run of another scope is not
    compared with, and the verdict says why. ``tally``: the store's count of the run's cases when
    the caller already has it (and no other process can have added cases since), so a streamed run
    is not counted again.
    """
    if run.status is not RunStatus.COMPLETE:
        return Verdict("not_compared", f"not compared: the run is {run.status.value} ({counted(run.errored_count, 'errored case')}), so it is never a baseline and is not compared")
    # The yardstick reasons come first (as in the original): they say what is wrong with the measurement.
    if run.grader.endswith(":failed"):
        return Verdict("not_compared", f'not compared: no grading of this run could be made (stored as "{run.grader}")')
    streamed = _streams(run, repository)
    if streamed:
        yardsticks: Iterable[str | None] = (tally if tally is not None else repository.case_tally(run.id)).yardsticks
    else:
        yardsticks = (c.yardstick for c in run.cases if not c.errored)
    if any(y and y != run.grader for y in yardsticks):
        return Verdict(
            "not_compared",
            f'not compared: the gradings of this run do not share one yardstick (stored as "{run.grader}"); '
            "a grading failed for some cases, or the judge model changed during the run",
        )
    scope = BaselineScope.of_run(run)
    if scope is None:
        return Verdict("not_compared", f"not compared: no single verified serving identity — {run.identity_note}")
    if baseline_id is not None:
        chosen = repository.get_run(baseline_id, with_cases=not streamed)
        problem = scope_mismatch(chosen, scope) if chosen is not None else f"run {baseline_id} is no longer in the store"
        if problem is not None:
            return Verdict("not_compared", f"not compared with the chosen baseline: {problem}")
        assert chosen is not None
        return Verdict("compared", comparison=_compare(run, chosen, repository, tolerances, streamed), baseline=chosen)
    if not isinstance(repository, GeneratorScopedResults):
        return Verdict("not_compared", NO_SCOPED_READS)
    if not isinstance(repository, AcceptedBaselines):
        return Verdict("not_compared", NO_ACCEPTANCE)
    if streamed:
        baseline = repository.accepted_baseline(scope, exclude_run_id=run.id, with_cases=False)  # type: ignore[call-arg]
    else:
        baseline = repository.accepted_baseline(scope, exclude_run_id=run.id)
    if baseline is None:
        return Verdict("baseline", "no accepted run for this set, serving identity and grader — recorded as the baseline")
    return Verdict("compared", comparison=_compare(run, baseline, repository, tolerances, streamed), baseline=baseline)


def _streams(run: Run, repository: Any) -> bool:
    """True when ``run`` comes without its cases from a store that streams them: the verdict then
    reads the cases from the store a page at a time instead of from the run."""
    return not run.cases and isinstance(repository, StreamedCases)


def _compare(run: Run, baseline: Run, repository: Any, tolerances: Tolerances, streamed: bool) -> Comparison:
    """:func:`~evalkit.verdict.compare`, with the cases matched and read by the store when ``streamed``."""
    if streamed:
        return compare_pairs(run, baseline, repository.paired_cases(run.id, baseline.id), tolerances)
    return compare(run, baseline, tolerances)


def compare_stored(run: Run, baseline: Run, repository: Any, tolerances: Tolerances) -> Comparison:
    """:func:`~evalkit.verdict.compare` of two stored runs; when both come without their cases from
    a store that streams them (:class:`~evalkit.storage.StreamedCases`), the store matches and
    reads the cases a page at a time, so two 100,000-case runs are never held."""
    streamed = _streams(run, repository) and _streams(baseline, repository)
    return _compare(run, baseline, repository, tolerances, streamed)


def short_secret_warnings(bound: components.BoundGenerator, grading: Any) -> list[str]:
    """A warning for each component whose credentials include a value too short to be a real secret.

    Such a value (a dummy key like ``x`` for a local server) is not scrubbed from stored or printed
    text: masking every ``x`` would mangle answers. The value itself is never shown.
    """
    holders = [(f'provider instance "{bound.instance or bound.adapter}"', bound.secrets())]
    if isinstance(grading, components.SecretHolder):
        holders.append((f'the grader\'s judge "{getattr(grading, "judge_instance", None) or "?"}"', tuple(grading.secret_values())))
    warnings = []
    for who, values in holders:
        short = [v for v in values if isinstance(v, str) and v and not is_scrubbable(v)]
        if short:
            warnings.append(
                f"warning: {who} sends {counted(len(short), 'credential value')} shorter than {MIN_SECRET_LENGTH} characters; "
                "that is not a real secret, so it is not scrubbed from stored or printed text"
            )
    return warnings


def automatic_acceptance(
    verdict: Verdict, repository: Any, at: float | None = None, *, fail_on_new_failures: bool = False
) -> Acceptance | None:
    """The acceptance a run earns by itself: the first of its scope, or compared with an accepted
    run without a regression (and, when ``fail_on_new_failures`` gates, without an added or edited
    case that fails). ``None`` for every other run: regressed, not compared, incomplete, or
    compared with a chosen run that is not itself accepted."""
    when = at if at is not None else time.time()
    if verdict.state == "baseline":
        return Acceptance("first", when, None, "the first run of its scope")
    comparison = verdict.comparison
    if verdict.state != "compared" or comparison is None or comparison.regressed:
        return None
    if fail_on_new_failures and comparison.new_failures:
        return None
    if not isinstance(repository, AcceptedBaselines) or comparison.baseline_id not in repository.acceptances_for([comparison.baseline_id]):
        return None
    return Acceptance("no_regression", when, None, f"no regression against accepted run {comparison.baseline_id}")


def record_verdict(
    run: Run,
    verdict: Verdict,
    repository: Any,
    stored: StoredVerdict,
    *,
    fail_on_new_failures: bool = False,
    recompare: Callable[[], Verdict] | None = None,
) -> Verdict:
    """Keep the verdict with the run and, when it earned one, its acceptance; returns the verdict
    carrying the acceptance that was recorded.

    A run that would be the first of its scope is accepted only if no other run of the scope was
    accepted meanwhile (:class:`~evalkit.storage.FirstAcceptance`): when one was — two first runs
    of a new store finishing at once — the verdict is taken again with ``recompare``, now against
    that run, and kept instead."""
    if isinstance(repository, RunVerdicts):
        repository.record_verdict(run.id, stored)
    acceptance = automatic_acceptance(verdict, repository, fail_on_new_failures=fail_on_new_failures)
    if acceptance is None or not isinstance(repository, AcceptedBaselines):
        return verdict
    scope = BaselineScope.of_run(run) if acceptance.how == "first" and recompare is not None else None
    if scope is not None and isinstance(repository, FirstAcceptance):
        if not repository.accept_if_first(run.id, scope, acceptance):
            again = recompare()  # type: ignore[misc]  # scope is set only when recompare is
            return record_verdict(run, again, repository, stored_verdict(again), fail_on_new_failures=fail_on_new_failures)
    else:
        repository.accept_run(run.id, acceptance)
    return attrs.evolve(verdict, acceptance=acceptance)


def check_chosen_baseline(
    repository: Any, baseline_id: str, set_identifier: str, instance: str | None, alias: str | None, grader: str
) -> None:
    """Refuse, before anything is called or stored, a chosen baseline that cannot be of this run's scope.

    What is known before the run is checked here (the set, a complete prompt run, the provider
    instance, the alias and the grader); the reported model and the exact yardstick are known only
    after the run, and a mismatch there makes the run "not compared" with the reason.
    """
    chosen = repository.get_run(baseline_id, with_cases=False)
    if chosen is None:
        raise UsageError(f'--baseline: there is no run "{baseline_id}" in the store (see `evalkit history SET` for run ids)')
    problems = []
    if chosen.kind.value != "prompts":
        problems.append(f"it is a {chosen.kind.value} run")
    if chosen.set_identifier != set_identifier:
        problems.append(f'it is a run of set "{chosen.set_identifier}", not "{set_identifier}"')
    if chosen.status is not RunStatus.COMPLETE:
        problems.append(f"it is {chosen.status.value}; only a complete run can be a baseline")
    if chosen.identity is None:
        problems.append("it has no verified serving identity, so it belongs to no scope")
    elif (chosen.identity.provider_instance, chosen.identity.model_alias) != (instance, alias):
        problems.append(
            f"it was answered by {chosen.identity.provider_instance}/{chosen.identity.model_alias}, this run asks "
            + (f"{instance}/{alias}" if instance is not None else "an ad-hoc generator (never compared)")
        )
    if chosen.grader != grader and not chosen.grader.startswith(f"{grader}:"):
        problems.append(f'it was graded by "{chosen.grader}", this run by "{grader}"')
    if problems:
        raise UsageError(f"--baseline {chosen.id} is of another scope: {'; '.join(problems)}")


def evaluate_set(
    set_identifier: str | GoldenPromptSet,
    *,
    provider: str | None = None,
    model: str | None = None,
    grader: str = "deterministic",
    strict_grader: bool = False,
    grader_options: Mapping[str, Any] | None = None,
    config: Config | None = None,
    database: str | None = None,
    tolerances: Tolerances | None = None,
    privacy: str | None = None,
    concurrency: int | None = None,
    run_id: str | None = None,
    resume: bool = False,
    shard: runner.Shard | None = None,
    label: str | None = None,
    baseline: str | None = None,
    fail_on_new_failures: bool = False,
    hook_plugins: Sequence[Any] = (),
    on_start: Callable[[Run, int], None] | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
    cwd: Path | None = None,
    bound_generator: components.BoundGenerator | None = None,
    keep_cases: bool = True,
    on_stored: Callable[[list[CaseResult]], None] | None = None,
) -> RunOutcome:
    """Run a golden prompt set, store it, and compare it with its baseline.

    Everything that can be refused (unknown set or grader, an invalid set, bad tolerances, a judge
    that is not ready) is refused before any generator call and before anything is stored.
    As a library call an unknown grader falls back to ``deterministic`` unless ``strict_grader``.
    ``bound_generator`` answers instead of ``provider``/``model`` (``evalkit.testing`` runs a
    generator object that is not installed this way).
    ``baseline`` names a stored run to compare with instead of the scope's accepted baseline; one
    of another set, provider instance, alias or grader is refused before anything is called.
    ``fail_on_new_failures``: the caller's gate also fails when an added or edited case fails, so
    such a run is not accepted as the baseline automatically.
    ``keep_cases=False``: the outcome's run comes without its cases (its aggregates are the
    store's), and with a store that streams cases (:class:`~evalkit.storage.StreamedCases`) no case
    is read back at all: the verdict is counted and compared by the store a page at a time, so
    memory stays flat however large the set. The CLI reads the cases it prints from the store.
    ``on_stored``: for a run this call begins (not one resumed or joined), called after each commit
    with the cases it stored, in stored order and as the store reads them back (privacy level and
    secrets applied), when the store can tell that without reading
    (:class:`~evalkit.storage.StoredCaseForms`): the CLI writes a large run's ``--json`` cases so as
    they come, instead of reading the run back at its end.
    """
    check_label(label)
    config = config if config is not None else load_config(cwd=cwd)
    tolerances = resolve_tolerances(tolerances)
    privacy = privacy or config.privacy
    if privacy not in PRIVACY_LEVELS:
        raise UsageError(f"privacy must be one of {', '.join(PRIVACY_LEVELS)}, got {privacy!r}")
    manager, hook_failures = hooks.plugin_manager(hook_plugins)
    notes: list[str] = []
    if isinstance(set_identifier, GoldenPromptSet):
        golden_set = set_identifier
    else:
        golden_set = prompt_set_catalog(config=config).get(set_identifier).set
    kinds = assertion_kinds(manager)
    # One pass over the prompts checks, counts and fingerprints the set (a stream is never held).
    digest = runner.SetDigest(golden_set)
    order = runner.PromptOrder(golden_set.identifier)

    def visit(prompt: GoldenPrompt) -> None:
        digest.add(prompt)
        order.see(prompt.id)

    case_count = validate_prompt_set(golden_set, kinds, visit=visit)
    grading, grader_name = components.load_grader(grader, strict=strict_grader, **dict(grader_options or {}))
    bound = bound_generator or components.bind_generator(config, provider, model)
    if isinstance(bound.generator, components.SetAware):
        components.bind_set(bound, golden_set)
    if isinstance(grading, components.JudgeGrader):
        grading.bind_judge(config, bound)
    notes.extend(short_secret_warnings(bound, grading))
    if bound.is_reference_self_check:
        notes.append(
            "No provider is configured: the answers are the set's own references "
            "(a self-check of the set, compared only with earlier reference runs)."
        )
    level = runner.default_concurrency(bound, concurrency)
    if isinstance(bound.generator, components.ConcurrencyAware):  # it opens a connection per request in flight
        from .openfiles import make_room_for

        too_few_files = make_room_for(min(level, case_count))
        if too_few_files is not None:
            notes.append(too_few_files)
    url = resolve_database_url(database, config, cwd)
    check_database_url(url)  # a bad store is refused before the judge or the generator is asked anything
    if isinstance(grading, components.ReadinessCheck):
        grading.check_ready()
    if not resume and run_id is None:
        # the generator's one free readiness probe, before the store is even opened
        notes.extend(components.check_generator_ready(bound))
    repository = open_repository(url)
    try:
        if is_in_memory(url):
            notes.append(f"The store is in memory ({url}): this run will not be kept and has no baseline.")
        if baseline is not None:
            check_chosen_baseline(repository, baseline, golden_set.identifier, bound.instance, bound.alias, grader_name)
        return _run(
            golden_set, bound, grading, grader_name, repository, kinds, manager, tolerances, privacy,
            level, run_id, resume, shard, label, on_start, on_case, notes,
            tuple(f.error for f in hook_failures), max_answer_bytes=config.max_answer_bytes, grade_timeout=config.grade_timeout, hook_timeout=config.hook_timeout,
            baseline_id=baseline,
            fail_on_new_failures=fail_on_new_failures, keep_cases=keep_cases,
            case_count=case_count, set_fingerprint=digest.fingerprint(), on_stored=on_stored, prompt_order=order,
        )
    finally:
        close_repository(repository)


def _run(
    golden_set: GoldenPromptSet,
    bound: components.BoundGenerator,
    grading: Any,
    grader_name: str,
    repository: Any,
    kinds: Mapping[str, AssertionKind],
    manager: Any,
    tolerances: Tolerances,
    privacy: str,
    level: int,
    run_id: str | None,
    resume: bool,
    shard: runner.Shard | None,
    label: str | None,
    on_start: Callable[[Run, int], None] | None,
    on_case: Callable[[CaseResult], None] | None,
    notes: list[str],
    plugin_failures: tuple[str, ...],
    *,
    max_answer_bytes: int | None = None,
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S,
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT_S,
    baseline_id: str | None = None,
    fail_on_new_failures: bool = False,
    keep_cases: bool = True,
    case_count: int,
    set_fingerprint: str,
    on_stored: Callable[[list[CaseResult]], None] | None = None,
    prompt_order: runner.PromptOrder | None = None,
) -> RunOutcome:
    started = time.time()
    if run_id is not None and not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 80 else f"{run_id[:77]}..."
        raise UsageError(f'run id "{shown}" must be 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit')
    if resume and run_id is None:
        if not isinstance(repository, ResumableRuns):
            raise UsageError("--resume without a run id needs a store that can find unfinished runs, and this one cannot; pass the id: --resume RUN_ID")
        previous = repository.latest_unfinished_run(golden_set.identifier, bound.instance, bound.alias, grader_name)
        if previous is None:
            raise UsageError(
                f'--resume: no unfinished run of "{golden_set.identifier}" by {bound.instance}/{bound.alias} '
                f'with grader "{grader_name}" to resume'
            )
        run_id = previous.id
    if shard is not None and run_id is None:
        raise UsageError("--shard needs --run-id: every shard joins one run (e.g. --run-id \"$CI_PIPELINE_ID\")")
    header = Run(
        id=run_id or runner.new_run_id(started),
        set_identifier=golden_set.identifier,
        grader=grader_name,
        started_at=started,
        case_count=case_count,
        set_fingerprint=set_fingerprint,
        fingerprints_kept=True,  # each case carries its prompt's fingerprint (the runner sets it)
        provider_instance=bound.instance,
        adapter=bound.adapter,
        model_alias=bound.alias,
        label=label,
        privacy=privacy,
    )
    existing = repository.get_run(header.id, with_cases=False) if run_id is not None else None
    if resume and existing is None:
        raise UsageError(f"--resume: there is no run {header.id} in the store")
    if existing is not None:
        _check_joinable(existing, header, resume)
    if resume or run_id is not None:
        # resuming or joining: the probe waits for the checks that need the store, and still precedes any write
        notes.extend(components.check_generator_ready(bound))
    stored_header = repository.begin_run(header)
    owner = LeaseOwner.this_process()
    part = WHOLE_RUN if shard is None else shard_part(shard.index, shard.count)
    leased = isinstance(repository, RunLeases)
    if leased:
        # Refused here (exit 2, nothing called) while another live process answers this part.
        repository.acquire_lease(header.id, part, owner, shard_count=None if shard is None else shard.count)
    keeper = LeaseKeeper(repository, header.id, part, owner).start() if leased else None
    observers = hooks.Observers(manager, hook_timeout)
    slice_done = False
    try:
        try:
            stored, verdict = _answer_and_finish(
                header, stored_header, existing is not None, golden_set, bound, grading, grader_name, repository,
                kinds, observers, tolerances, privacy, level, shard, resume, on_start, on_case, notes,
                lambda: _release(keeper, repository, header.id, part, owner, done=True),
                max_answer_bytes=max_answer_bytes, grade_timeout=grade_timeout, baseline_id=baseline_id, fail_on_new_failures=fail_on_new_failures,
                keep_cases=keep_cases, on_stored=on_stored if existing is None else None, prompt_order=prompt_order,
            )
            slice_done = True
        except KeyboardInterrupt:
            mark_interrupted(repository, header.id)
            raise RunInterrupted(header.id, golden_set.identifier) from None
        except SetChangedError:
            mark_interrupted(repository, header.id)  # never complete, never compared
            raise
        except StoreFailure as exc:
            raise store_failed(repository, header, exc) from None
    finally:
        if not slice_done:
            _release(keeper, repository, header.id, part, owner, done=False)
    finished = stored
    if not stored.cases and stored.answered_count and manager.hook.evalkit_run_finished.get_hookimpls():
        finished = repository.get_run(header.id) or stored  # the hook's contract: the run with its cases
    observers.notify("evalkit_run_finished", run=finished)
    return RunOutcome(stored, verdict, tuple(notes), plugin_failures + observers.failures, concurrency=level)


def _release(keeper: LeaseKeeper | None, repository: Any, run_id: str, part: str, owner: LeaseOwner, *, done: bool) -> None:
    """Stop the heartbeat and give the lease up (once; a store that fails here changes nothing)."""
    if keeper is None:
        return
    keeper.stop()
    try:
        repository.release_lease(run_id, part, owner, done=done)
    except StoreFailure:
        pass


def _answer_and_finish(
    header: Run,
    stored_header: Run,
    joining: bool,
    golden_set: GoldenPromptSet,
    bound: components.BoundGenerator,
    grading: Any,
    grader_name: str,
    repository: Any,
    kinds: Mapping[str, AssertionKind],
    observers: hooks.Observers,
    tolerances: Tolerances,
    privacy: str,
    level: int,
    shard: runner.Shard | None,
    resume: bool,
    on_start: Callable[[Run, int], None] | None,
    on_case: Callable[[CaseResult], None] | None,
    notes: list[str],
    slice_done: Callable[[], None],
    *,
    max_answer_bytes: int | None = None,
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S,
    baseline_id: str | None = None,
    fail_on_new_failures: bool = False,
    keep_cases: bool = True,
    on_stored: Callable[[list[CaseResult]], None] | None = None,
    prompt_order: runner.PromptOrder | None = None,
) -> tuple[Run, Verdict]:
    """Answer what is missing of the run (or of its shard), then store its status and verdict."""
    if isinstance(repository, ResumableRuns):
        skip = repository.answered_case_ids(header.id)
        if stored_header.status is RunStatus.INTERRUPTED:
            repository.mark_status(header.id, RunStatus.RUNNING.value)
    else:
        joined = repository.get_run(header.id) if joining else None
        skip = {c.case_id for c in joined.cases if not c.errored} if joined is not None else set()
    if resume and skip:
        notes.append(f"Resuming run {header.id}: {counted(len(skip), 'case')} already answered {'is' if len(skip) == 1 else 'are'} kept.")
    todo = runner.select_cases(golden_set.prompts, shard, skip, prompt_order)
    if isinstance(bound.generator, components.ConcurrencyAware):
        bound.generator.use_concurrency(level)
    observers.notify("evalkit_run_started", run=header, total=len(todo))
    if on_start is not None:
        on_start(header, len(todo))

    def case_done(case: CaseResult) -> None:
        observers.notify("evalkit_case_graded", run=header, case=case)
        if on_case is not None:
            on_case(case)

    async def main() -> None:
        try:
            await runner.execute_prompts(
                run=header, prompts=todo, bound=bound, grader=grading, repository=repository,
                kinds=kinds, concurrency=level, privacy=privacy, on_case=case_done, max_answer_bytes=max_answer_bytes,
                grade_timeout=grade_timeout,
                on_stored=on_stored,
            )
        finally:
            await bound.aclose()
            if isinstance(grading, components.AsyncClosing):
                await grading.aclose()

    asyncio.run(main())
    slice_done()
    streamed = not keep_cases and isinstance(repository, StreamedCases)
    if streamed:
        # Counted by the store: no case is read back (a 100,000-case run stays flat in memory).
        tally = repository.case_tally(header.id)
        tallied = attrs.evolve(header, stored_answered_count=tally.answered, stored_errored_count=tally.errored)
        status = runner.final_status(header, tallied)
        identity, note = _tally_identity(tally, bound.configured)
        yardstick = next(iter(tally.yardsticks)) if len(tally.yardsticks) == 1 else grader_name
        metrics = None
        if isinstance(grading, components.RunMetricsSource):
            answered = repository.get_run(header.id)  # a judge's run metrics read every case (judged runs are small)
            metrics = grading.run_metrics(answered.cases)
    else:
        answered = repository.get_run(header.id)
        status = runner.final_status(header, answered)
        identity, note = runner.run_identity(answered.cases, bound.configured)
        yardstick = runner.run_yardstick(answered.cases, grader_name)
        metrics = grading.run_metrics(answered.cases) if isinstance(grading, components.RunMetricsSource) else None
    serving = runner.serving_metrics(bound, identity)
    if serving is not None:
        metrics = {**(metrics or {}), **serving}
    finish_options = {"with_cases": False} if streamed else {}
    stored = repository.finish_run(
        header.id, status.value, time.time(), grader=yardstick, identity=identity, identity_note=note, metrics=metrics,
        **finish_options,
    )
    # The stored status wins: another shard may have closed the run after this one read its cases.
    if stored.status is RunStatus.RUNNING:
        shards = repository.shard_progress(header.id) if isinstance(repository, RunLeases) else None
        where = f" ({shards.describe()})" if shards is not None and shards.count is not None else ""
        notes.append(
            f"Shard done: {stored.answered_count} of {header.case_count} cases of run {header.id} are in{where}; "
            "the run completes when the other shards finish."
        )
        return stored, Verdict(
            "pending",
            f"verdict pending: run {header.id} is not complete yet{where}; its verdict is given when the last shard finishes",
        )
    # Whole runs only: a shard's count may miss what the other shards stored after it.
    counted_cases = tally if streamed and shard is None else None

    def decide() -> Verdict:
        try:
            return verdict_for(stored, repository, tolerances, baseline_id=baseline_id, tally=counted_cases)
        except StoreFailure:
            raise
        except StorageError as exc:  # an earlier run in the store this evalkit cannot read: this one is stored
            return Verdict("not_compared", unreadable_baseline(exc))

    verdict = decide()
    verdict = record_verdict(
        stored, verdict, repository, stored_verdict(verdict), fail_on_new_failures=fail_on_new_failures, recompare=decide
    )
    return stored, verdict


_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def _tally_identity(tally: Any, configured: bool) -> tuple[Any, str | None]:
    """:func:`evalkit.runner.run_identity` from the store's count of the answered cases."""
    if not configured or not tally.answered:
        return runner.run_identity((), configured)
    return runner.identity_from_counts(tally.identities)


def _check_joinable(existing: Run, header: Run, resume: bool) -> None:
    """Refuse to add cases to a stored run they do not belong to (before anything is written)."""
    if existing.set_identifier != header.set_identifier:
        raise UsageError(f'run {existing.id} is a run of set "{existing.set_identifier}", not "{header.set_identifier}"')
    if resume and existing.status is RunStatus.COMPLETE:
        raise UsageError(f"run {existing.id} is already complete; there is nothing to resume")
    if (existing.provider_instance, existing.model_alias) != (header.provider_instance, header.model_alias):
        raise UsageError(
            f"run {existing.id} is answered by {existing.provider_instance}/{existing.model_alias}; this process "
            f"would answer with {header.provider_instance}/{header.model_alias} — use the same --provider and --model"
        )
    if existing.set_fingerprint and existing.set_fingerprint != header.set_fingerprint:
        raise UsageError(
            f'set "{header.set_identifier}" has changed since run {existing.id} started; its stored cases would '
            "mix two versions of the set, so start a new run"
        )
    if existing.status is RunStatus.COMPLETE:
        raise UsageError(f"run {existing.id} is already complete (its cases and verdict are kept); choose a new --run-id")


def stored_verdict(verdict: Verdict) -> StoredVerdict:
    """The verdict as a run keeps it in the store (state, baseline id, one-line note)."""
    comparison = verdict.comparison
    if comparison is not None:
        return StoredVerdict("regressed" if comparison.regressed else "ok", comparison.baseline_id, comparison.summary())
    return StoredVerdict("baseline" if verdict.state == "baseline" else "not_compared", None, verdict.reason)


def stored_run_verdict(run: Run, repository: Any, tolerances: Tolerances) -> Verdict:
    """The verdict of a finished, stored run, as the process that closed it decided it.

    Read back from the store (the baseline it was compared with is compared again under
    ``tolerances``, for the deltas and the case lists); a run stored without a verdict is judged
    now by :func:`verdict_for`. This is how the final job of a sharded CI run learns its verdict.
    """
    verdict = _recorded_verdict(run, repository, tolerances)
    if isinstance(repository, AcceptedBaselines):
        # The process that closed the run accepted it or not; the verdict says which.
        verdict = attrs.evolve(verdict, acceptance=repository.acceptances_for([run.id]).get(run.id))
    return verdict


def _recorded_verdict(run: Run, repository: Any, tolerances: Tolerances) -> Verdict:
    recorded = repository.verdicts_for([run.id]).get(run.id) if isinstance(repository, RunVerdicts) else None
    if recorded is None or run.status is not RunStatus.COMPLETE:
        return verdict_for(run, repository, tolerances)
    if recorded.baseline_id:
        streamed = _streams(run, repository)
        baseline = repository.get_run(recorded.baseline_id, with_cases=not streamed)
        if baseline is not None:
            return Verdict("compared", comparison=_compare(run, baseline, repository, tolerances, streamed), baseline=baseline)
    return Verdict("baseline" if recorded.state == "baseline" else "not_compared", recorded.note)
