"""The library entry points: :func:`evaluate_set` and :func:`evaluate_retrieval`.

Each turns its keyword arguments (the CLI's options, a configuration, a test's) into a
:class:`~evalkit.run.plan.RunPlan` — refusing everything refusable before anything is called or
stored, in the order its docstring gives — opens the store and hands the plan to the lifecycle
(:func:`evalkit.run.lifecycle.execute`). Their keywords are the public API (``evalkit.testing``,
the pytest fixtures and users call them with these keywords); they are declared once, as the
fields of :class:`~evalkit.run.settings.PromptRunSettings` and
:class:`~evalkit.run.settings.RetrievalRunSettings`, which check them, and give the functions their
signatures and their lists of keywords (:mod:`evalkit.run.settings`). Every function behind them
takes a few grouped values.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .. import hooks
from ..arguments import OPTIONAL_TEXT, check_arguments
from ..components import read_wait_ready
from ..config import Config, load_config, privacy_refusal
from ..errors import UsageError
from ..event_loops import loop_running, off_the_loop
from ..gate_settings import GateSettings, gate_from
from ..prompts import GoldenPromptSet
from ..storage import (
    check_database_url,
    close_repository,
    is_in_memory,
    open_repository,
    resolve_database_url,
    store_failure_said,
)
from ..storage.protocols import ResultRepository, capabilities
from ..stray_errors import stray_errors_warned_within
from ..timeouts import host_alarms
from ..tolerance import Tolerances, resolve_tolerances
from ..validation import check_label
from ..wording import argument, counted, path_named
from .continuing import resume_defaults
from .lifecycle import execute
from .outcome import Outcome
from .placement import continuing_options, store_options
from .plan import Gate, Observing, Placement, RunPlan
from .settings import (
    PROMPT_SET,
    QUESTION_SET,
    SAID_KEYWORDS,
    PromptRunSettings,
    RetrievalRunSettings,
    documented,
    said_words,
    structured,
)

if TYPE_CHECKING:  # a prompt run imports no question types (tests/cli/test_openai_runs.py)
    from ..catalog import SourcedSet
    from ..questions import GoldenQuestionSet

__all__ = ["SAID_KEYWORDS", "evaluate_retrieval", "evaluate_set"]


@contextmanager
def opened(url: str, *, needs_a_run: str | None = None) -> Iterator[ResultRepository]:
    """The store ``url`` names, open for the block and closed after it. When ``needs_a_run`` names
    the argument that asks for a stored run (``resume``, ``baseline``: named to the caller by
    :func:`evalkit.wording.argument`), a SQLite store that is not there yet (no file, or an empty
    one) is refused before it is made: there is no run in it, and the refusal left a new, empty
    store behind. What a third-party store raises in the block (its disk gone as a chosen baseline
    is read) is said as that store's failure (:func:`~evalkit.storage.store_failure_said`)."""
    if needs_a_run is not None:
        from ..storage import missing_store

        path = missing_store(url)
        if path is not None:
            raise UsageError(
                f"{argument(needs_a_run)}: there is no store at {path_named(path)} yet, so there is no run to find (the first run creates it)"
            )
    repository = open_repository(url)
    try:
        yield repository
    except Exception as exc:
        said = store_failure_said(exc, (repository,))
        if said is exc:
            raise
        raise said from exc
    finally:
        close_repository(repository)


def _privacy(privacy: str | None, config: Config) -> str:
    chosen = privacy or config.privacy
    if (refused := privacy_refusal(chosen)) is not None:
        raise UsageError(refused)
    return chosen


def _gating(
    config: Config, tolerances: Tolerances | None, gate: GateSettings | None, kind: str
) -> tuple[Tolerances, GateSettings]:
    """The run's tolerances and gate settings: those given, else the configuration's ``[gate]``
    (for this ``kind`` of run), else the defaults."""
    if gate is not None and not isinstance(gate, GateSettings):
        raise UsageError(f"gate must be an evalkit.GateSettings, got {type(gate).__name__} {gate!r}")
    where = str(config.path) if config.path is not None else "evalkit.toml"
    configured_tolerances, configured_gate = gate_from(config.gate, kind=kind, where=where)
    chosen = resolve_tolerances(tolerances) if tolerances is not None else configured_tolerances
    return chosen, gate if gate is not None else configured_gate


def chosen_repeats(repeats: int | None, config: Config) -> int:
    """``repeats`` given, else ``[run] repeats``, else 1; refused (a usage error) unless a whole
    number from 1 to :data:`~evalkit.config.MAX_REPEATS`. A run and its estimate both ask here."""
    from ..config import MAX_REPEATS

    chosen = repeats if repeats is not None else (config.repeats or 1)
    if isinstance(chosen, bool) or not isinstance(chosen, int) or not 1 <= chosen <= MAX_REPEATS:
        raise UsageError(f"repeats must be a whole number from 1 to {MAX_REPEATS}, got {chosen!r}")
    return chosen


@host_alarms()
@stray_errors_warned_within
def evaluate_set(set_identifier: str | GoldenPromptSet | SourcedSet, **settings: Any) -> Outcome:
    """Run a golden prompt set, store it, and compare it with its baseline.

    ``settings`` are the keywords :class:`~evalkit.run.settings.PromptRunSettings` declares (listed
    at the end, with their defaults); any other is refused first, naming it
    (:class:`~evalkit.errors.UnknownKeywordError`), then one of the wrong kind.

    ``set_identifier`` names an installed set (an entry point's, a set file's), or is a catalog
    entry (:class:`~evalkit.catalog.SourcedSet`, as the CLI gives it), or a
    :class:`~evalkit.prompts.GoldenPromptSet` built in code: no ``evalkit run`` finds such a set, so
    a stopped run of it says to call ``evaluate_set`` again with ``run_id=…, resume=True`` rather
    than print a CLI command.
    Everything that can be refused (unknown set or grader, an invalid set, bad tolerances, a judge
    that is not ready) is refused before any generator call and before anything is stored.
    As a library call an unknown grader falls back to ``deterministic`` unless ``strict_grader``.
    ``bound_generator`` answers instead of ``provider``/``model`` (``evalkit.testing`` runs a
    generator object that is not installed this way).
    ``run_id`` names the run (an existing run of that id is joined: a shard); ``resume`` continues
    an unfinished run (``run_id``, else the newest unfinished run of the same set, provider
    instance, alias and grader), answering only what is missing; ``shard`` answers one slice of
    the set (it needs ``run_id``). A shard that stops is continued as that shard: its notes and
    errors give ``--shard I/N --run-id ID`` (call again with the same ``shard`` and ``run_id``),
    never ``--resume``, which answers the whole run and is refused while another shard answers it.
    ``baseline`` names a stored run to compare with instead of the scope's accepted baseline; one
    of another set, provider instance, alias or grader is refused before anything is called.
    ``baseline_file`` (:func:`evalkit.baseline_file.read_baseline_file`) is compared with instead of
    any stored run; one of another set, provider instance, alias or grader is refused likewise.
    ``fail_on_new_failures``: the caller's gate also fails when an added or edited case fails, so
    such a run is not accepted as the baseline automatically.
    ``tolerances`` and ``gate`` (the method, ``alpha``, the cap on regressed cases, the
    quarantine: :class:`~evalkit.gate_settings.GateSettings`) decide the comparison; each not
    given comes from the configuration's ``[gate]``, else the defaults. ``repeats``: every prompt
    is answered that many times as independent requests, each answer graded, and a case's result
    is its pass fraction (default: a run ``resume`` or ``run_id`` continues, its own — a line that
    continues a run need not say them, whatever the configuration says when it is pasted —, else
    ``[run] repeats``, else 1; another number than the continued run's is refused).
    ``keep_cases=False``: the outcome's run comes without its cases (its aggregates are the
    store's), and with a store that streams cases (:class:`~evalkit.storage.StreamedCases`) no case
    is read back at all: the verdict is counted and compared by the store a page at a time, so
    memory stays flat however large the set. The CLI reads the cases it prints from the store.
    ``wait_ready``: how long the generator's readiness probe may keep asking a server that is still
    starting, by ``--wait-ready``'s rule (:func:`~evalkit.components.read_wait_ready`): a number of
    seconds or text with a unit (``60``, ``"90s"``), from 1 ms to a week; 0 (the default): it asks once.
    ``on_stored``: for a run this call begins (not one resumed or joined), called after each commit
    with the cases it stored, in stored order and as the store reads them back (privacy level and
    secrets applied), when the store can tell that without reading
    (:class:`~evalkit.storage.StreamedCases`): the CLI writes a large run's ``--json`` cases so as
    they come, instead of reading the run back at its end.
    ``on_check``: hears how far the check of the set has come, before anything is called — a
    :class:`~evalkit.validation.CheckProgress` as it begins, every
    :data:`~evalkit.validation.CHECK_PROGRESS_EVERY` prompts and when it ends (``done``); the CLI
    shows it on a terminal when the check takes a while (a million streamed prompts take seconds).
    ``resumed_options``: the options of the command line that began the run which a line
    continuing it repeats, each as its words (``[["--concurrency", "3"]]``; the CLI's, without the
    store's ``--config``/``--database``), kept with a new run (:data:`~evalkit.run.placement.RESUMED_OPTIONS`)
    so that ``history``, ``show`` and the viewer print the line the command printed; ``None`` (a
    library call): their line is made from the run's columns.

    Spending (see docs/costs.md): ``budget`` (an amount in the generator instance's currency; it
    needs its prices) and ``max_requests`` stop dispatching before either would be passed — the
    run ends ``incomplete``, and its resume command asks for a higher limit (its options after the
    set: ``command_args``, what a command line typed; ``None``, a library call: the ``--provider``
    and the rest that answer the run, as ``evalkit history`` says them); ``cache`` reads and writes the
    answer cache (``None``: the configuration's ``[cache] enabled``; below ``full`` privacy only when that says so);
    ``answers_from`` reuses the answers of a stored run (of this set and instance, kept at ``full``)
    for the unchanged prompts and asks the model for the rest. A run that reused answers is never
    accepted as a baseline automatically.
    """
    s = structured("evaluate_set", PromptRunSettings, settings)
    check_arguments("evaluate_set", {"set_identifier": set_identifier}, {"set_identifier": PROMPT_SET})
    s = attrs.evolve(
        s,
        wait_ready=read_wait_ready(s.wait_ready, "evaluate_set: wait_ready"),  # by --wait-ready's rule
        cwd=Path(s.cwd) if s.cwd is not None else None,
    )
    if loop_running():  # a Jupyter cell, an async handler: asyncio.run() would refuse this thread
        return off_the_loop(lambda: evaluate_set(set_identifier, **settings))
    from .answering import prompts as prompt_answering  # here: a retrieval run does not import it
    from .answering import spending

    check_label(s.label)
    config = s.config if s.config is not None else load_config(cwd=s.cwd)
    store = _store_words(s.config, config, s.cwd, s.database)  # what a continuing line repeats
    tolerances, gate = _gating(config, s.tolerances, s.gate, "prompts")
    repeats = chosen_repeats(s.repeats, config)  # else a continued run's own, then the configuration's
    privacy = _privacy(s.privacy, config)
    manager, hook_failures = hooks.plugin_manager(s.hook_plugins)
    source = prompt_answering.PromptSource(
        set_identifier, s.provider, s.model, s.grader, s.strict_grader, dict(s.grader_options or {}), s.bound_generator,
        s.concurrency, s.wait_ready, repeats,
    )  # fmt: skip
    answering, notes = prompt_answering.prepare_prompts(source, config, manager, s.on_check)
    if s.baseline_file is not None:
        prompt_answering.check_baseline_file(s.baseline_file.run, s.baseline_file.named(), answering.wanted_scope())
    wanted = spending.SpendingRequest(
        _amount(s.budget), _limit(s.max_requests), s.cache, s.answers_from, repeats=repeats
    )
    spending.check_spending(answering, config, privacy, wanted)  # before the store is opened (or made)
    url = resolve_database_url(s.database, config, s.cwd)
    check_database_url(url)  # a bad store is refused before the judge or the generator is asked anything
    # the generator's one free readiness probe, before the store is even opened (a resumed or
    # joined run makes it once the store agreed: see PromptAnswering.before_joining)
    notes.extend(prompt_answering.check_ready(answering, probe_generator=not s.resume and s.run_id is None))
    asked_for = (
        "resume"
        if s.resume
        else "baseline"
        if s.baseline is not None
        else "answers_from"
        if s.answers_from is not None
        else None
    )
    with opened(url, needs_a_run=asked_for) as repository:
        if is_in_memory(url):
            notes.append(f"The store is in memory ({url}): this run will not be kept and has no baseline.")
        if s.baseline is not None:
            prompt_answering.check_chosen_baseline(repository, s.baseline, answering.wanted_scope())
        if s.repeats is None and (s.resume or s.run_id is not None):
            answering, wanted = _continued_repeats(answering, wanted, repository, s.run_id, notes)
        plan_of_spending, spending_notes = spending.prepare_spending(answering, config, privacy, wanted, repository)
        notes.extend(spending_notes)
        answering = attrs.evolve(answering, spending=plan_of_spending)
        placement = Placement(s.run_id, s.resume, s.shard, s.label, privacy, _option_words(s.resumed_options))
        continuing = _continuing_args(answering, placement, config, s.command_args, store, said_words(s))
        answering = attrs.evolve(answering, command_args=continuing)
        plan = RunPlan(
            answering,
            placement,
            _gate(tolerances, s.baseline, s.fail_on_new_failures, s.baseline_file, gate),
            Observing(
                manager,
                config.hook_timeout,
                tuple(f.error for f in hook_failures),
                s.on_start,
                s.on_case,
                s.on_stored,
                s.keep_cases,
            ),
            tuple(notes),
            answers_reused=plan_of_spending is not None and plan_of_spending.stored is not None,
            settings=s,
        )
        return execute(plan, repository)


def _option_words(options: Sequence[Sequence[str]] | None) -> tuple[tuple[str, ...], ...] | None:
    """``resumed_options`` as :attr:`~evalkit.run.placement.Placement.options` keeps them."""
    return None if options is None else tuple(tuple(option) for option in options)


def _gate(
    tolerances: Any, baseline: str | None, fail_on_new_failures: bool, baseline_file: Any, gate: Any
) -> Gate:
    """The :class:`~evalkit.run.plan.Gate` of a prompt or retrieval run: what it is compared with
    (``baseline``, or ``baseline_file``'s run) and by which rules."""
    baseline_run = baseline_file.run if baseline_file is not None else None
    return Gate(tolerances, baseline, fail_on_new_failures, baseline_run=baseline_run, settings=gate)


def _continued_repeats(
    answering: Any, wanted: Any, repository: ResultRepository, run_id: str | None, notes: list[str]
) -> tuple[Any, Any]:
    """``answering`` and the spending request ``wanted`` answering each prompt as often as the
    stored run they continue or join was answered (``run_id``, else the newest unfinished one:
    :meth:`~evalkit.run.answering.prompts.PromptAnswering.continued_repeats`), when the caller gave
    no repeats: a resume line says none, and ``[run] repeats`` may have changed since the run began
    (pasted, it answered another number and was refused). An explicit other number is still
    refused (the run's cases would mix them); a note says when the configuration's were set aside."""
    kept = answering.continued_repeats(capabilities(repository), run_id)
    if kept is None or kept == answering.repeats:
        return answering, wanted
    notes.append(
        f"Each prompt is answered {counted(kept, 'time')}, as the run continued was ({argument('repeats', kept)}), "
        f"not {answering.repeats} as the configuration now says."
    )
    return attrs.evolve(answering, repeats=kept), attrs.evolve(wanted, repeats=kept)


def _continuing_args(
    answering: Any, placement: Placement, config: Config, given: Sequence[str] | None, store: Sequence[str] = (),
    said: Sequence[str] = (),
) -> tuple[str, ...]:
    """The options the line that continues the run repeats after the set: ``given`` (the CLI's, as
    typed: ``--provider``, ``--config``, ``--database``…), else — a library call, whose caller typed
    no command — what answers and grades the run, by the one function that says it for a stored run
    (:func:`~evalkit.run.placement.continuing_options`: ``--provider NAME``, a ``--model`` other than
    the configured one, ``--grader``, the judge's options, ``--cache``, ``--answers-from``), read
    from the run's header, with the caller's ``store`` (:func:`_store_words`): without them the line
    answered with the default generator, graded by the default grader in the default store, and was
    refused; then the keywords a command says by an option (``said``: :func:`~evalkit.run.settings.said_words`)."""
    if given is not None:
        return tuple(given)
    header = answering.header(placement.run_id or "", 0.0, placement)
    return (*continuing_options(header, resume_defaults(config).aliases, store=store), *said)


def _store_words(given: Config | None, config: Config, cwd: Path | None, database: str | None) -> tuple[str, ...]:
    """The :func:`~evalkit.run.placement.store_options` of a library call: the configuration its
    caller gave (``given``), when read from a file, or the one found from the ``cwd`` it gave
    (``config``), and the store it named (without them, pasted, the line read the configuration
    found from where it is pasted, and looked for the run in the default store). A configuration
    found from the process's own folder (no ``cwd``) is found again by a line pasted there: not said."""
    read = given if given is not None else config if cwd is not None else None
    path = read.path if read is not None else None
    return store_options(Path(path).resolve() if given is None and path is not None else path, database)


def _amount(value: Decimal | str | None) -> Decimal | None:
    """A budget given as a :class:`~decimal.Decimal` or text, checked (a usage error otherwise)."""
    if value is None or isinstance(value, Decimal):
        if value is not None and (not value.is_finite() or value < 0):
            raise UsageError(f"budget must be an amount of zero or more, got {value}")
        return value
    from ..costs import parse_amount

    try:
        return parse_amount(str(value))
    except ValueError as exc:
        raise UsageError(f"budget: {exc}") from None


def _limit(value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise UsageError(f"max_requests must be a whole number of at least 1, got {value!r}")
    return value


@host_alarms()
@stray_errors_warned_within
def evaluate_retrieval(
    question_set: str | GoldenQuestionSet | SourcedSet, retriever: str | None = None, **settings: Any
) -> Outcome:
    """Ask every question of a golden question set, store the run and compare it with its baseline.

    ``settings`` are the keywords :class:`~evalkit.run.settings.RetrievalRunSettings` declares
    (listed at the end, with their defaults); any other is refused first, naming it
    (:class:`~evalkit.errors.UnknownKeywordError`), then one of the wrong kind.

    ``question_set`` is an identifier (or the set itself, or a catalog entry whose provider may
    ship default deployments), ``retriever`` an ``evalkit.retrievers`` entry-point name (``None``:
    the one the deployment names), created with the options of ``deployment`` (else
    ``$EVALKIT_DEPLOYMENT``, else none; see :mod:`evalkit.retrieval.deployments`).
    ``relevance_threshold`` is the grade from which a judged document counts for hit@1, hit@3, MRR
    and recall (nDCG uses the grades themselves). Refused before the retriever is created and
    before anything is stored, in this order: an unknown set, an unknown retriever, an invalid set,
    a bad ``k``, ``privacy`` or ``concurrency``, an unknown deployment, a chosen ``baseline`` of
    another scope; then the retriever is created, asked for its provenance once and prepared,
    still before anything is stored.

    Each question is sent with ``limit = max(k, 12)``; ``concurrency`` questions are in flight at
    once (default 1: sequential, so latencies are not inflated by contention and retrievers need
    not be thread-safe). A retriever that raises, or returns something other than a list of string
    ids (or ``(id, score)`` pairs), makes that question an errored case and the run
    ``incomplete``; repeated and empty ids are collapsed (a chunk retriever ranks documents
    through its chunks); ids beyond ``limit`` are dropped with a warning. ``concurrency`` above 1
    is refused for a retriever that does not declare itself thread-safe
    (:class:`~evalkit.retrieval.contracts.ThreadSafeRetriever`).

    Every question's case is committed as soon as it is scored. The run goes through the same
    lifecycle as a prompt run: ``run_id`` names it (an existing run of that id is joined: a
    shard), ``resume`` continues an unfinished run (``run_id``, else the newest unfinished run of
    the same set, retriever and deployment) asking only the questions it has no answer for (a run
    that measured something else — labels, benchmark, ``k``, threshold — is refused, as is a
    complete one), ``shard`` asks one slice of the set; a live process answering the same part of
    the run refuses another. The run's metrics cover every question of the run.

    The baseline is the most recently accepted run of the same set and retriever in the same
    deployment (see :mod:`evalkit.baselines`), or the stored run ``baseline`` when one is chosen.
    The benchmark provenance decides whether they can be compared
    (:func:`~evalkit.retrieval.provenance.baseline_state`, kept as the outcome's
    ``detail.baseline_state``); only a ``comparable`` run is compared (:func:`evalkit.verdict.compare`:
    pass rate = top-1, mean score = top-3 hit rate; MRR@k, recall@k and nDCG@k gated when their
    tolerance is set), under ``gate`` (else ``[gate]``). A complete run is accepted automatically
    when it is the first of its scope or significantly better than the accepted baseline.
    ``keep_cases=False``: as for :func:`evaluate_set` (the detail keeps the errored questions' cases).

    ``judge_unjudged`` names a configured provider instance that, as the ``relevance`` judge,
    grades each question's top-k documents nobody judged; the figures with those holes filled are
    stored and reported beside the human ones, which alone are compared and gated (see
    :mod:`evalkit.retrieval.holes`). Refused before anything is stored when the judge is not
    configured, not reachable, or the retriever cannot show a document's text.

    ``on_prepare``: while the retriever's ``prepare()`` runs (it has no time limit: an index build
    may rightly take long), called with the retriever's id and the seconds it has taken so far,
    after 5 s and then at doubling intervals up to a minute, from another thread (``prepare()``
    itself runs in the calling thread, where Ctrl-C reaches it); the CLI says ``still preparing
    retriever "ID" (12 s)`` on standard error.

    ``resumed_options``: as for :func:`evaluate_set` (``--k``, ``--concurrency``, the gate's options…).
    """
    s = structured("evaluate_retrieval", RetrievalRunSettings, settings)
    check_arguments(
        "evaluate_retrieval", {"question_set": question_set, "retriever": retriever},
        {"question_set": QUESTION_SET, "retriever": OPTIONAL_TEXT},
    )  # fmt: skip
    s = attrs.evolve(s, cwd=Path(s.cwd) if s.cwd is not None else None)
    if loop_running():  # its relevance judge asks on an event loop of its own, as a prompt run does
        return off_the_loop(lambda: evaluate_retrieval(question_set, retriever, **settings))
    from .answering import questions as question_answering  # here: a prompt run does not import retrieval

    check_label(s.label)
    config = s.config if s.config is not None else load_config(cwd=s.cwd)
    store = _store_words(s.config, config, s.cwd, s.database)  # what a continuing line repeats
    tolerances, gate = _gating(config, s.tolerances, s.gate, "retrieval")
    source = question_answering.QuestionSource(
        question_set, retriever, s.deployment, s.k, s.relevance_threshold, s.concurrency, s.privacy
    )
    resolved = question_answering.resolve_questions(source, config)
    url = resolve_database_url(s.database, config, s.cwd)
    if s.baseline_file is not None:
        question_answering.check_baseline_file(s.baseline_file.run, s.baseline_file.named(), resolved)
    if s.baseline is not None:
        with opened(url, needs_a_run="baseline") as repository:
            question_answering.check_chosen_baseline(repository, s.baseline, resolved)
    manager, hook_failures = hooks.plugin_manager(s.hook_plugins)
    check_database_url(url)  # a bad store is refused before the retriever is created
    holes = None
    if s.judge_unjudged is not None:
        from ..retrieval.holes import hole_judging

        holes = hole_judging(
            s.judge_unjudged, config, binary=all(q.grades is None for q in resolved.golden_set.questions)
        )
        holes.check_ready()
    answering = question_answering.start_retriever(resolved, config, s.on_prepare)
    answering.command_args = (*store, *said_words(s))
    answering.retriever_chosen = retriever is None  # the deployment's: a line continuing it names none
    closing: list[str] = []
    try:
        if holes is not None:
            from ..retrieval.holes import check_document_texts

            check_document_texts(answering.retriever, resolved.retriever_id)
            answering.hole_judging = holes
        with opened(url, needs_a_run="resume" if s.resume else None) as repository:
            plan = RunPlan(
                answering,
                Placement(s.run_id, s.resume, s.shard, s.label, resolved.privacy, _option_words(s.resumed_options)),
                _gate(tolerances, s.baseline, s.fail_on_new_failures, s.baseline_file, gate),
                Observing(
                    manager,
                    config.hook_timeout,
                    tuple(f.error for f in hook_failures),
                    s.on_start,
                    s.on_case,
                    keep_cases=s.keep_cases,
                ),
                settings=s,
            )
            outcome = execute(plan, repository)
    finally:
        try:
            closing.append(
                question_answering.close_retriever(answering.retriever, resolved.record, resolved.deployment.timeout)
            )
        finally:
            if holes is not None:
                closing.append(holes.unusable())  # what the judge gave that broke its rule, said with the run
                closing.append(holes.close())
    closed = [failure for failure in closing if failure is not None]
    if closed:  # said with the run, as a hook's failure is
        outcome = attrs.evolve(outcome, plugin_failures=(*outcome.plugin_failures, *closed))
    if is_in_memory(url):
        outcome = attrs.evolve(
            outcome, notes=(*outcome.notes, f"The store is in memory ({url}): this run will not be kept.")
        )
    return outcome


documented(
    evaluate_set,
    [inspect.Parameter("set_identifier", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str | GoldenPromptSet | SourcedSet")],
    PromptRunSettings,
)
documented(
    evaluate_retrieval,
    [
        inspect.Parameter(
            "question_set", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str | GoldenQuestionSet | SourcedSet"
        ),
        inspect.Parameter("retriever", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation="str | None"),
    ],
    RetrievalRunSettings,
)
