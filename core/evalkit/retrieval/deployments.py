"""Deployments: which retriever runs, and with which options, per environment.

A deployment is ``[deployments.NAME]`` in the project configuration — ``retriever = "ID"`` names
the retriever it runs, ``[deployments.NAME.retrievers."ID"]`` tables hold each retriever's
options — or one a question-set provider ships
(:class:`~evalkit.retrieval.contracts.DeploymentDefaults`). It is chosen by ``--deployment`` or
``$EVALKIT_DEPLOYMENT``; the same question set then measures staging and production without
code changes, and switching what production runs is a one-line change.

A deployment's retriever is its ``retriever`` key, else the only retriever it has options for.
An explicit RETRIEVER argument wins, and must be one the deployment has options for or one
that takes no options.

A project deployment that shares its name with a provider's is **merged per retriever**: the
project's options for a retriever replace the provider's options for that retriever (whole
tables, not key by key), the provider's other retrievers stay, and the project's ``retriever``
key (if any) decides what runs. Nothing the provider ships is silently lost.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from evalkit import registry
from evalkit.catalog import SourcedSet
from evalkit.components import resolve_paths
from evalkit.config import Config
from evalkit.durations import read_duration
from evalkit.environment import variable
from evalkit.errors import PLUGIN_FAILURES, PluginError, UsageError, carried
from evalkit.options import declared_options
from evalkit.project_files import ProjectBoundary
from evalkit.wording import argument

from ..components import offers
from ..identity import hidden_problem
from ..printable import hidden_escaped, not_nfc
from ..wording import path_named, quoted, table_key
from .contracts import DeploymentDefaults

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DEPLOYMENT_ENV",
    "RETRIEVERS",
    "TIMEOUT_OPTION",
    "Deployment",
    "DeploymentChoice",
    "choose_deployment",
    "deployment_name_problem",
    "deployment_problems",
    "known_deployments",
    "no_deployment",
    "resolve_deployment",
    "unusable_deployment",
]

#: Names the deployment when ``--deployment`` is not given.
DEPLOYMENT_ENV = "EVALKIT_DEPLOYMENT"
#: How long one ``retrieve`` call may take before its question is errored (seconds).
DEFAULT_TIMEOUT_S = 60.0
#: The option of a deployment's retriever table that evalkit keeps for itself: the per-question
#: time limit in seconds (not passed to the retriever's factory).
TIMEOUT_OPTION = "timeout"


#: How :attr:`Deployment.source` and :attr:`DeploymentChoice.source` join the places that defined a
#: deployment, for people; the places themselves are kept apart (``sources``).
SOURCES_JOINED_BY = " + "


def _sources(value: str | Iterable[str]) -> tuple[str, ...]:
    """The places that defined a deployment, as kept: a tuple. One string is one place (as an
    earlier version's caller, or a document it wrote, gave it): never split at `` + ``, which a
    provider's entry-point name or a configuration's path may hold."""
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen
class Deployment:
    """The options one retriever is created with, and where they came from.

    ``name`` is ``None`` when no deployment was chosen (the retriever gets no options);
    ``sources`` (given as ``source``, a place or a sequence of them) holds ``configuration
    <path>``, ``provider <plugin>``, both when a project deployment was merged with a provider's,
    or ``none``. ``timeout`` is how long one question may take (the table's ``timeout`` option,
    else :data:`DEFAULT_TIMEOUT_S`).
    """

    name: str | None
    options: Mapping[str, Any]
    sources: tuple[str, ...] = attrs.field(converter=_sources, alias="source")
    timeout: float = DEFAULT_TIMEOUT_S
    #: Where the options were written, for messages about a missing or unknown option.
    table: str = "no deployment (none chosen: the retriever gets no options)"

    @property
    def source(self) -> str:
        """Where the options came from, for people: :attr:`sources` joined by `` + ``."""
        return SOURCES_JOINED_BY.join(self.sources)


def _time_limit(options: dict[str, Any], deployment: str, retriever_id: str) -> float:
    """Take ``timeout`` out of the options: a duration from 1 ms to a day (a number of seconds, or
    one with a unit: :mod:`evalkit.durations`' one rule)."""
    raw = options.pop(TIMEOUT_OPTION, DEFAULT_TIMEOUT_S)
    return read_duration(
        raw,
        f"deployment {quoted(deployment)}, retriever {quoted(retriever_id)}: {TIMEOUT_OPTION}",
        most=86400,
        typed=True,
    )


@attrs.frozen
class _Options:
    """One retriever's options in a deployment and where they were defined (root: for relative
    paths; boundary: the project their files must lie in, when a configuration file wrote them)."""

    options: Mapping[str, Any]
    source: str
    root: Path | None
    boundary: ProjectBoundary | None = None


@attrs.frozen
class DeploymentChoice:
    """A deployment as defined (project configuration, provider defaults, or both merged).

    ``retriever`` is the retriever it runs (``None`` when it names none and has options for
    several); ``retrievers`` each retriever's options and their origin.
    """

    name: str
    retriever: str | None
    retrievers: Mapping[str, _Options]
    #: Every place that defined part of this deployment (given as ``source``: one or a sequence).
    sources: tuple[str, ...] = attrs.field(converter=_sources, alias="source")

    @property
    def source(self) -> str:
        """Every place that defined part of this deployment, for people: joined by `` + ``."""
        return SOURCES_JOINED_BY.join(self.sources)


def _provider_deployments(sourced: SourcedSet | None) -> tuple[Mapping[str, Any], str]:
    if sourced is None or not offers(sourced.provider, DeploymentDefaults):
        return {}, ""
    where = f"provider {sourced.record.describe()}"
    try:
        found = carried(sourced.provider.default_deployments)
    except PLUGIN_FAILURES as exc:
        raise PluginError.for_plugin(
            sourced.record,
            f"{sourced.record.label} raised {type(exc).__name__} in default_deployments(): {exc}",
        ) from exc
    if not isinstance(found, Mapping) or not all(
        isinstance(d, Mapping) and all(isinstance(o, Mapping) for o in d.values()) for d in found.values()
    ):
        raise PluginError.for_plugin(
            sourced.record,
            f"{sourced.record.label}: default_deployments() must return "
            "{deployment: {retriever id: {option: value}}}",
        )
    return found, where


def _only(retrievers: Iterable[str]) -> str | None:
    names = list(retrievers)
    return names[0] if len(names) == 1 else None


def known_deployments(config: Config, sourced: Iterable[SourcedSet] = ()) -> dict[str, DeploymentChoice]:
    """Every deployment the configuration and the given sets' providers define, merged per retriever.

    Each provider is asked once, however many of its sets are given; two providers defining
    the same deployment name are merged in the order given (the first keeps a retriever).
    """
    provided: dict[str, DeploymentChoice] = {}
    asked: set[int] = set()
    for entry in sourced:
        if id(entry.provider) in asked:
            continue
        asked.add(id(entry.provider))
        found, where = _provider_deployments(entry)
        for name, retrievers in found.items():
            options = {rid: _Options(dict(o), where, None) for rid, o in retrievers.items()}
            earlier = provided.get(name)
            places: tuple[str, ...] = (where,)
            if earlier is not None:
                options = {**options, **earlier.retrievers}
                places = earlier.sources if where in earlier.sources else (*earlier.sources, where)
            provided[name] = DeploymentChoice(name, _only(options), options, places)
    chosen = dict(provided)
    configured_at = f"configuration {path_named(config.path)}" if config.path else "configuration"
    boundary = ProjectBoundary.of(config) if config.path is not None and config.deployments else None
    for name, retrievers in config.deployments.items():
        options = {rid: _Options(dict(o), configured_at, config.root, boundary) for rid, o in retrievers.items()}
        places = (configured_at,)
        named = config.deployment_retrievers.get(name)
        base = provided.get(name)
        if base is not None:
            options = {**base.retrievers, **options}
            places = (configured_at, *base.sources)
        chosen[name] = DeploymentChoice(name, named or _only(options), options, places)
    return chosen


def choose_deployment(
    name: str | None, config: Config, *, sourced: SourcedSet | None = None
) -> DeploymentChoice | None:
    """The deployment ``name`` (else ``$EVALKIT_DEPLOYMENT``), ``None`` when neither names one.

    Raises :class:`UsageError` for an unknown deployment, listing the known ones, and for an
    ``$EVALKIT_DEPLOYMENT`` that is set but empty: read as unset, a CI variable the job could not
    read ran the retriever with no deployment's options, a scope of its own whose first run passed
    as its baseline (as an empty ``EVALKIT_DATABASE_URL`` is refused).
    """
    chosen = (
        name
        if name is not None
        else variable(DEPLOYMENT_ENV, "a deployment's name", "run the retriever with no deployment's options")
    )
    if chosen is None:
        return None
    if not chosen:
        raise UsageError(f"{argument('deployment')} must name a deployment")
    known = known_deployments(config, [sourced] if sourced is not None else [])
    if chosen not in known:
        from evalkit.printable import hidden_escaped
        from evalkit.wording import did_you_mean, listed, quoted

        shown = hidden_escaped(chosen)
        origin = argument("deployment", shown) if name is not None else f"{DEPLOYMENT_ENV}={shown}"
        shown_known = listed(sorted(known), '(none: add [deployments.NAME] with retriever = "ID" to evalkit.toml)')
        raise UsageError(
            f"Unknown deployment {quoted(chosen)} ({origin}).{did_you_mean(chosen, sorted(known))} Known deployments: {shown_known}"
        )
    return known[chosen]


def takes_no_options(factory: Any) -> bool:
    """True when ``factory`` can be built without options (a retriever that needs none): every
    option its ``Options`` declares has a default, or, declaring none, it can be called without
    arguments."""
    declared = declared_options(factory)
    if declared is not None:
        return all(field.default is not attrs.NOTHING for field in attrs.fields(declared))
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in signature.parameters.values()
    )


def retriever_of(choice: DeploymentChoice | None, explicit: str | None) -> str:
    """The retriever a run uses: ``explicit`` when given, else the deployment's.

    Raises :class:`UsageError` when neither names one.
    """
    if explicit is not None:
        return explicit
    if choice is None:
        raise UsageError(
            f"name {argument('retriever', option='a RETRIEVER')}, or choose a deployment that names one ({argument('deployment', 'NAME')} or "
            f'{DEPLOYMENT_ENV}; [deployments.NAME] retriever = "ID" in evalkit.toml)'
        )
    if choice.retriever is None:
        configured = ", ".join(map(hidden_escaped, sorted(choice.retrievers))) or "none"
        raise UsageError(
            f"deployment {quoted(choice.name)} names no retriever and has options for several ({configured}); "
            f'name one: evalkit retrieval SET RETRIEVER, or retriever = "ID" under [deployments.{table_key(choice.name)}]'
        )
    return choice.retriever


def deployment_options(choice: DeploymentChoice | None, retriever_id: str, factory: Any = None) -> Deployment:
    """The options ``retriever_id`` is created with in ``choice``.

    Relative paths in configured options the factory declares as paths (``option(..., path=True)``,
    or :class:`~evalkit.components.PathOptions`) are resolved against the configuration file's
    folder, and must lie inside the project (:func:`~evalkit.components.resolve_paths`). Raises
    :class:`UsageError` when the deployment has no options for a retriever that needs some.
    """
    if choice is None:
        return Deployment(None, {}, "none")
    entry = choice.retrievers.get(retriever_id)
    if entry is None:
        unquoted = _written_unquoted(choice, retriever_id)
        if not unquoted and (retriever_id == choice.retriever or (factory is not None and takes_no_options(factory))):
            return Deployment(
                choice.name, {}, choice.sources, table=_table(choice.name, retriever_id, choice.source, None)
            )
        configured = ", ".join(map(hidden_escaped, sorted(choice.retrievers))) or "none"
        hint = ""
        if unquoted:
            hint = (
                f"; [deployments.{table_key(choice.name)}.retrievers.{hidden_escaped(retriever_id)}] is read as nested tables, "
                f"quote an id with dots in the table name: [deployments.{table_key(choice.name)}.retrievers.{table_key(retriever_id, always_quoted=True)}]"
            )
        raise UsageError(
            f"deployment {quoted(choice.name)} has no options for retriever {quoted(retriever_id)} (it configures: {configured}){hint}"
        )
    options = dict(entry.options)
    timeout = _time_limit(options, choice.name, retriever_id)
    table = _table(choice.name, retriever_id, entry.source, entry.root)
    if entry.root is not None:
        options = resolve_paths(options, factory, entry.root, boundary=entry.boundary, table=table)
    return Deployment(choice.name, options, entry.source, timeout, table)


def unquoted_retriever(choice: DeploymentChoice, retriever_id: str, installed: Iterable[str]) -> str | None:
    """The refusal of a deployment whose retriever ``retriever_id`` is no installed retriever
    because its table was written unquoted (``[deployments.NAME.retrievers.evalkit.lexical]``
    alone in the deployment, which TOML reads as a table ``evalkit`` holding a table ``lexical``,
    so the deployment's only retriever was ``evalkit``); ``None`` when no installed retriever's id
    reads that way. Said in the words :func:`deployment_options` uses when such an id is named; the
    deployment "runs" ``retriever_id`` only when it is the deployment's retriever, else (``retriever =
    "other"`` beside the table, as ``evalkit list deployments`` reads every table) it "has options
    for" it."""
    does = "runs" if retriever_id == choice.retriever else "has options for"
    for meant in sorted(installed):
        if meant.startswith(f"{retriever_id}.") and _written_unquoted(choice, meant):
            return (
                f"deployment {quoted(choice.name)} {does} retriever {quoted(retriever_id)}, which is no installed retriever: "
                f"[deployments.{table_key(choice.name)}.retrievers.{hidden_escaped(meant)}] is read as nested tables, "
                f"quote an id with dots in the table name: [deployments.{table_key(choice.name)}.retrievers.{table_key(meant, always_quoted=True)}]"
            )
    return None


#: The entry-point group a deployment's retrievers are found in.
RETRIEVERS = "evalkit.retrievers"


def deployment_name_problem(name: object) -> str | None:
    """Why ``--deployment`` can never name the deployment ``name`` a set provider ships, as
    configuration refuses such a name: not text, not in Unicode normal form NFC (the option is
    read in NFC), or holding a control or invisible character; ``None`` when it can. The one
    source of the words ``evalkit list deployments`` marks it unusable with and ``evalkit
    validate`` refuses it with (:func:`unusable_deployment`)."""
    if not isinstance(name, str):
        return "the name is no text"
    return not_nfc(name) or hidden_problem(name)


def unusable_deployment(name: object) -> str | None:
    """``evalkit validate``'s problem with a deployment ``--deployment`` can never choose
    (:func:`deployment_name_problem`'s words, which name it escaped); ``None``: it can be chosen."""
    problem = deployment_name_problem(name)
    return None if problem is None else f"unusable deployment: {problem} (--deployment can never choose it)"


def deployment_problems(deployments: Mapping[str, DeploymentChoice]) -> dict[str, list[str]]:
    """Why each of ``deployments`` that cannot run here cannot, one sentence a problem, told
    without importing any plugin (``evalkit list deployments`` and ``evalkit validate`` say these,
    exit 2); a deployment absent has none that can be told before its retriever is imported.

    - a retriever table written unquoted that an installed retriever's id was meant as
      (:func:`unquoted_retriever`), whether the deployment runs it or has options for it;
    - the retriever it runs cannot run here: :func:`evalkit.registry.unusable_choices`, the check a
      provider instance's adapter gets too (no installed retriever has its id — with a "did you
      mean" — ``EVALKIT_DISABLE_PLUGINS`` switches it off, it is declared twice, or its entry point
      cannot be loaded: the rule ``evalkit list`` marks plugins by).

    A deployment that names no retriever and has options for several runs the one given on the
    command line: nothing to tell of it here."""
    installed = sorted({record.name for record in registry.enabled(RETRIEVERS)})
    problems: dict[str, list[str]] = {}
    runs: dict[str, str] = {}
    for name, choice in deployments.items():
        refused = {
            rid: refusal for rid in choice.retrievers
            if rid not in installed and (refusal := unquoted_retriever(choice, rid, installed)) is not None
        }  # fmt: skip
        if refused:
            problems[name] = list(refused.values())
        if choice.retriever is not None and choice.retriever not in refused:
            runs[name] = choice.retriever
    for name, problem in registry.unusable_choices(RETRIEVERS, runs, lambda name: f"deployment {quoted(name)} runs").items():
        problems.setdefault(name, []).append(problem)
    return problems


def read_as_tables(choice: DeploymentChoice, retriever_id: str) -> list[str]:
    """The retriever ids a configured table ``retriever_id`` of ``choice`` may have been meant as,
    written unquoted: ``[deployments.NAME.retrievers.outr.x]`` (or the dotted key ``outr.x.k = 1``)
    is read by TOML as a retriever ``outr`` holding a table ``x``, so ``["outr.x"]``; every chain of
    tables below it counts. Empty for a provider's deployment (no TOML was written) and for a
    table holding no table. What ``evalkit list deployments`` shows beside ``outr``, so the table
    says what was written rather than only what TOML made of it."""
    entry = choice.retrievers.get(retriever_id)
    if entry is None or entry.root is None:
        return []
    found: list[str] = []
    stack: list[tuple[str, Mapping[str, Any]]] = [(retriever_id, entry.options)]
    while stack:
        written, table = stack.pop()
        for key, value in table.items():
            if isinstance(value, Mapping):
                found.append(f"{written}.{key}")
                stack.append((f"{written}.{key}", value))
    return sorted(found)


def _written_unquoted(choice: DeploymentChoice, retriever_id: str) -> bool:
    """Whether ``retriever_id``'s table was written unquoted in ``choice``
    (``[deployments.NAME.retrievers.evalkit.lexical]``, which TOML reads as a table ``evalkit``
    holding a table ``lexical``): its options were meant for this retriever, and running it
    without them would pass over what was written."""
    head, *rest = retriever_id.split(".")
    entry = choice.retrievers.get(head)
    if not rest or entry is None:
        return False
    nested: Any = entry.options
    for part in rest:
        if not isinstance(nested, Mapping) or not isinstance(nested.get(part), Mapping):
            return False
        nested = nested[part]
    return True


def _table(deployment: str, retriever_id: str, source: str, root: Path | None) -> str:
    """Where a retriever's options in a deployment are written, as a user would look for them."""
    if root is not None:
        return f"[deployments.{table_key(deployment)}.retrievers.{table_key(retriever_id, always_quoted=True)}] of {source}"
    return f"deployment {quoted(deployment)} of {source}"


def resolve_deployment(
    name: str | None,
    retriever_id: str,
    config: Config,
    *,
    sourced: SourcedSet | None = None,
    factory: Any = None,
) -> Deployment:
    """The options of ``retriever_id`` in deployment ``name`` (else ``$EVALKIT_DEPLOYMENT``, else none).

    :func:`choose_deployment` then :func:`deployment_options`; see the module docstring for
    how project and provider deployments combine.
    """
    choice = choose_deployment(name, config, sourced=sourced)
    if choice is None:
        return no_deployment(retriever_id, config.deployments)
    return deployment_options(choice, retriever_id, factory)


def no_deployment(retriever_id: str, configured: Iterable[str] = ()) -> Deployment:
    """The retriever's options when no deployment was chosen: none. Its ``table`` says how to
    choose one — naming the ``configured`` deployments of the project — or the table to write, for
    a message about an option the retriever requires (no provider is asked for its deployments: a
    broken one must not stop a run that chose none)."""
    names = ", ".join(sorted(configured))
    listed_here = f"configured: {names}; `evalkit list deployments` lists every one" if names else "`evalkit list deployments` lists them"
    table = (
        "a deployment's table, but none was chosen, so the retriever gets no options: choose one with "
        f"{argument('deployment', 'NAME')} ({listed_here}), or write [deployments.NAME.retrievers.{table_key(retriever_id, always_quoted=True)}] "
        "in evalkit.toml"
    )
    return Deployment(None, {}, "none", table=table)
