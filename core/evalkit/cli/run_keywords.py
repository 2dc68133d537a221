"""The keywords ``evalkit run`` and ``evalkit retrieval`` give their library call, read from the
command line by the one declaration of them (:mod:`evalkit.run.settings`).

Each field of :class:`~evalkit.run.settings.PromptRunSettings` and
:class:`~evalkit.run.settings.RetrievalRunSettings` the command line gives names the click
parameter that feeds it (``option``) and the conversion that turns the command's parameters into
its value (``conversion``: a name of :data:`CONVERSIONS`, or :data:`CALLBACK`; none: the option's
value as given). :func:`library_keywords` reads every such field that way, in the declaration's
order: a setting declared with an option reaches the library call with no edit of the command.
:func:`command_problems` says what of a declaration a command cannot give (a parameter it does not
declare, a conversion there is none of); the reading refuses it too, and tests/test_run_settings.py
holds both commands to none.

A conversion that gives several fields (the gate's two, the placement's four) is made once per
run (:class:`Reading`). What a command reads before anything runs, to refuse a bad value in its
order (the configuration, the store, the gate's options, ``--baseline-file``), it hands to the
reading, which gives it as read.
"""

from __future__ import annotations

import functools

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from .app import Arguments

__all__ = ["CALLBACK", "CONVERSIONS", "Reading", "command_problems", "library_keywords", "pipeline_run_id", "placement_options"]

#: The conversion of a callback: the command's own, given to :func:`library_keywords` as it calls
#: the library (its progress display, its output spool).
CALLBACK = "callback"


class Reading:
    """What one run's keywords are read from: the command's name (``command``: ``run``) and
    parameters (``args``); what the command
    read from them before anything ran — the configuration (``config``), the store's URL
    (``database``), the tolerances and the gate's settings (``gating``), the baseline
    ``--baseline-file`` names (``baseline_file``); and ``scope``, what a CI pipeline's run id is
    derived from (:func:`pipeline_run_id`)."""

    def __init__(
        self, command: str, args: Arguments, *, config: Any, database: str, gating: tuple[Any, Any],
        baseline_file: Any, scope: tuple[str | None, ...],
    ) -> None:  # fmt: skip
        self.command = command
        self.args = args
        self.config = config
        self.database = database
        self.gating = gating
        self.baseline_file = baseline_file
        self.scope = scope

    @functools.cached_property
    def placement(self) -> dict[str, Any]:
        """``--resume``, ``--shard`` and ``--run-id`` as the library's keywords (:func:`placement_options`)."""
        return placement_options(self.args, self.scope)

    @functools.cached_property
    def wait_ready(self) -> float:
        """``--wait-ready`` in seconds (0 when not given); read first, it says on stderr that the run
        may wait (a command reads it before its displays start)."""
        if not self.args.wait_ready:
            return 0.0
        from ..components import read_wait_ready
        from .console import console

        seconds = read_wait_ready(self.args.wait_ready, "--wait-ready")
        console(stderr=True).plain(f"Waiting up to {seconds:g} s for the generator to answer its readiness probe.")
        return seconds


def _loaded_config(reading: Reading, name: str) -> Any:
    """The configuration ``--config`` names (else the one found), as the command loaded it."""
    return reading.config


def _database_url(reading: Reading, name: str) -> str:
    """The store's URL: ``--database``, else ``EVALKIT_DATABASE_URL``, the configuration's, the
    default (:func:`evalkit.cli.common.database_url`), as the command chose it."""
    return reading.database


def _gate_of(reading: Reading, name: str) -> Any:
    """``tolerances`` or ``gate``: the tolerance and gate options over ``[gate]`` over the defaults
    (:func:`evalkit.cli.gate_options.gate_of`), as the command read them."""
    tolerances, gate = reading.gating
    return {"tolerances": tolerances, "gate": gate}[name]


def _baseline_file(reading: Reading, name: str) -> Any:
    """The baseline ``--baseline-file`` names, read (:func:`evalkit.cli.run_cmd.read_baseline_option`)."""
    return reading.baseline_file


def _placement(reading: Reading, name: str) -> Any:
    """``run_id``, ``resume``, ``shard`` or ``resumed_options``, from ``--resume``, ``--shard`` and
    ``--run-id`` (:func:`placement_options`)."""
    return reading.placement[name]


def _in_memory_store(reading: Reading, name: str) -> bool:
    """Whether the run's cases are kept in memory: only with a store in memory (the verdict is
    counted by the store and the output reads the cases back)."""
    from ..storage import is_in_memory

    return is_in_memory(reading.database)


def _this_provider(reading: Reading, name: str) -> str | None:
    """The provider of this run: ``--provider``'s one (``None`` without it); each in turn with several."""
    return reading.args.provider


def _strict(reading: Reading, name: str) -> bool:
    """True: the command line refuses an unknown grader (it never falls back to deterministic)."""
    return True


def _judge_flags(reading: Reading, name: str) -> dict[str, Any] | None:
    """``--judge``, ``--judge-repeats``, ``--judge-temperature`` and ``--allow-self-judge`` as the
    grader's options (``None`` when none is given); refused for a grader that asks no judge
    (:mod:`.judge_flags`)."""
    args = reading.args
    options: dict[str, Any] = {}
    if args.judge is not None:
        options["judge"] = args.judge
    if args.judge_repeats is not None:
        options["repeats"] = args.judge_repeats
    if args.allow_self_judge:
        options["allow_self_judge"] = True
    if args.judge_temperature is not None:
        options["temperature"] = args.judge_temperature
    if not options:
        return None
    from .judge_flags import refuse_judge_flags

    refuse_judge_flags(
        args.grader, "--judge, --judge-repeats, --judge-temperature and --allow-self-judge", repeats=args.judge_repeats is not None
    )
    return options


def _wait_ready(reading: Reading, name: str) -> float:
    """``--wait-ready`` in seconds (:attr:`Reading.wait_ready`)."""
    return reading.wait_ready


def _resume_args(reading: Reading, name: str) -> tuple[str, ...]:
    """The options a resume command repeats, as the user gave them (:func:`evalkit.cli.spend_options.resume_args`)."""
    from .spend_options import resume_args

    return resume_args(reading.args)


#: Each conversion a declaration names, by its name: the value of the field ``name`` from the reading.
CONVERSIONS: dict[str, Callable[[Reading, str], Any]] = {
    "loaded_config": _loaded_config,
    "database_url": _database_url,
    "gate_of": _gate_of,
    "baseline_file": _baseline_file,
    "placement": _placement,
    "in_memory_store": _in_memory_store,
    "this_provider": _this_provider,
    "strict": _strict,
    "judge_flags": _judge_flags,
    "wait_ready": _wait_ready,
    "resume_args": _resume_args,
}


def command_problems(declaration: type, command: str, parameters: Iterable[str]) -> list[str]:
    """What of ``declaration`` the command ``command`` (``run``), whose click parameters are named
    ``parameters``, cannot give: a field fed by a parameter it does not declare (an option renamed
    on one side only), or by a conversion there is none of; one line each, naming the field."""
    import attrs

    from ..wording import did_you_mean, quoted

    declared = set(parameters)
    problems = []
    for field in attrs.fields(declaration):
        option, conversion = field.metadata["option"], field.metadata["conversion"]
        named = f"{declaration.__name__}.{field.name}"
        if option is not None and option not in declared:
            problems.append(
                f"{named} is fed by the parameter {quoted(option)}, which `evalkit {command}` does not declare."
                f"{did_you_mean(option, declared)}"
            )
        if conversion is not None and conversion != CALLBACK and conversion not in CONVERSIONS:
            problems.append(f"{named} names the conversion {quoted(conversion)}, which evalkit.cli.run_keywords.CONVERSIONS does not hold.")
    return problems


def library_keywords(declaration: type, reading: Reading, **callbacks: Any) -> dict[str, Any]:
    """The keywords of the library call ``declaration`` declares, from the command line: each field
    the command line gives (not ``library_only``), in the declaration's order, as its ``option``'s
    value or its ``conversion`` of the ``reading``; the ``callbacks`` are the command's own, one for
    each field converted as :data:`CALLBACK`. A field the command cannot give
    (:func:`command_problems`), a callback missing or one no field takes is an evalkit bug
    (:class:`LookupError`), before anything is read."""
    import attrs

    args = reading.args
    problems = command_problems(declaration, reading.command, (param.name for param in args.declared_options))
    wanted = [field.name for field in attrs.fields(declaration) if field.metadata["conversion"] == CALLBACK]
    if set(callbacks) != set(wanted):
        problems.append(f"{declaration.__name__} takes the callbacks {sorted(wanted)}; the command gives {sorted(callbacks)}.")
    if problems:
        raise LookupError(" ".join(problems))
    keywords: dict[str, Any] = {}
    for field in attrs.fields(declaration):
        if field.metadata["library_only"] is not None:
            continue
        option, conversion = field.metadata["option"], field.metadata["conversion"]
        if conversion is None:
            keywords[field.name] = getattr(args, option)
        elif conversion == CALLBACK:
            keywords[field.name] = callbacks[field.name]
        else:
            keywords[field.name] = CONVERSIONS[conversion](reading, field.name)
    return keywords


def placement_options(args: Arguments, scope: tuple[str | None, ...]) -> dict[str, Any]:
    """``--resume``, ``--shard`` and ``--run-id`` as library arguments (``run_id``, ``resume``,
    ``shard``); a shard's run id defaults to the CI pipeline's, for this ``scope``. With the options
    a new run keeps for the line that continues it (``resumed_options``: :func:`~evalkit.cli.resuming.kept_options`)."""
    import os

    from ..errors import UsageError
    from ..run.plan import Shard

    shard = None
    if args.shard and args.shard.startswith("auto"):
        from ..ci import parse_auto, shard_from_environment  # only here: its attrs classes cost a run 3 ms

        shard = shard_from_environment(os.environ, parse_auto(args.shard))
    elif args.shard:
        shard = Shard.parse(args.shard)
    run_id = args.run_id or (pipeline_run_id(scope) if shard is not None and not args.resume else None)
    if args.resume and run_id and args.resume != run_id:
        from ..wording import quoted

        raise UsageError(f"--resume {quoted(args.resume)} and --run-id {quoted(run_id)} name two different runs")
    from .resuming import kept_options

    return {
        "run_id": args.resume or run_id, "resume": args.resume is not None, "shard": shard,
        "resumed_options": kept_options(args),
    }  # fmt: skip


def pipeline_run_id(scope: tuple[str | None, ...]) -> str | None:
    """The run id every job of this CI pipeline derives for this ``scope``."""
    import os

    from ..ci import pipeline_run_id as derived

    return derived(os.environ, scope)
