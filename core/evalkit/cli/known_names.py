"""The names a command that reads the results store was given — a set, and the ``--provider``,
``--model``, ``--grader``, ``--retriever`` and ``--deployment`` that narrow it — each resolved once, where the
store is opened for reading (:func:`evalkit.cli.stored.open_store`), by one rule for every such
command (``history``, ``flaky``, ``baseline show``, ``baseline export``):

- a name the store holds runs of (for the filters: among the set's runs) answers from the store,
  installed or not — a set since uninstalled still has its history;
- a name installed or configured here, with no runs stored, answers empty (nothing ran yet) — for
  ``--model``, an alias a configured provider instance sends;
- a name that is neither is a typo: a usage error (exit 2) with a "did you mean" drawn from both
  the installed names and the stored ones (:func:`evalkit.wording.did_you_mean`, the helper click's
  suggestions use), as ``evalkit run`` refuses an unknown set. It once answered ``No stored runs of
  set "evalkit.smok"``, exit 0, and a CI step reading the history of a misspelt set passed.

The store is asked first; plugins are loaded (to list installed sets, or a set provider's
deployments) only when the store does not know the name. A store that cannot list runs (no
``RunHistory``) cannot say what it holds: nothing is refused then.
"""

from __future__ import annotations

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

from ..run_lookup import SUGGESTION_RUNS

__all__ = ["SUGGESTION_RUNS", "require_known_names"]

#: The filters a reading command narrows a set by: its argument, and what it names.
_FILTERS = (
    ("provider", "provider"), ("model", "model alias"), ("grader", "grader"), ("retriever", "retriever"),
    ("deployment", "deployment"),
)  # fmt: skip


def require_known_names(repository: Any, args: Any, config: Any) -> None:
    """Refuse (exit 2, :class:`~evalkit.errors.UsageError`) a set ``args.set``, or a filter
    (``args.provider``, ``grader``, ``retriever``, ``deployment``), that is neither installed or
    configured here nor present in ``repository``; nothing when the command names no set."""
    from ..storage import capabilities

    set_id = getattr(args, "set", None)
    history = capabilities(repository).history
    if not isinstance(set_id, str) or history is None:
        return
    given = [(option, what, getattr(args, option, None)) for option, what in _FILTERS]
    given = [(option, what, value) for option, what, value in given if isinstance(value, str)]
    # One read of the set's runs answers both questions (is the set stored; what do its runs
    # answer to); the newest alone says the first. The store's other sets are read only to suggest.
    runs = history.recent_runs(set_id, limit=SUGGESTION_RUNS if given else 1)
    if not runs:
        _require_installed_set(set_id, history, config)
    for option, what, value in given:
        stored = {name for run in runs for name in _stored_names(run, option)}
        if value in stored:
            continue
        installed = _installed(option, set_id, config)
        if installed is None or value in installed:
            continue
        _refuse_filter(option, what, value, set_id, [*installed, *sorted(stored)])


def _require_installed_set(set_id: str, history: Any, config: Any) -> None:
    """Refuse ``set_id`` when no installed provider ships it (the store holds no run of it)."""
    from ..catalog import prompt_set_catalog, question_set_catalog
    from ..errors import UsageError
    from ..storage import stored_set_identifiers
    from ..wording import did_you_mean, quoted

    catalogs = [prompt_set_catalog(config=config), question_set_catalog(config=config)]
    installed = [identifier for catalog in catalogs for identifier in catalog.identifiers()]
    if set_id in installed or any(set_id in catalog.duplicates for catalog in catalogs):
        return
    stored = stored_set_identifiers(history, SUGGESTION_RUNS)  # the distinct sets, not every set's runs
    failed = "".join(f"\n  provider failed: {failure.named()}" for catalog in catalogs for failure in catalog.failures)
    raise UsageError(
        f"Unknown set {quoted(set_id)}: no installed provider ships it and the store holds no run of it."
        f"{did_you_mean(set_id, [*installed, *stored])} `evalkit list sets` lists the installed sets.{failed}"
    )


def _stored_names(run: Any, option: str) -> Iterable[str]:
    """What a stored ``run`` answers to as ``--option`` (as the commands filter: a provider
    matches a retrieval run's retriever too, a grader ``decision`` matches ``decision:…``)."""
    if option == "provider":
        found = (run.provider_instance, run.retriever)
    elif option == "model":
        found = (getattr(run, "model_alias", None),)
    elif option == "grader":
        found = (run.grader, run.grader.partition(":")[0] if isinstance(run.grader, str) else None)
    else:
        found = (getattr(run, option, None),)
    return [name for name in found if isinstance(name, str) and name]


def _installed(option: str, set_id: str, config: Any) -> list[str] | None:
    """The names ``--option`` may take here though nothing stored has them: configured providers
    and installed generators (and retrievers), installed graders, installed retrievers, the
    configured deployments and those the set's provider ships; ``None`` when they cannot be
    told (a set provider that fails listing its deployments: nothing is refused on its word)."""
    from .. import registry

    if option == "provider":
        adapters = {r.name for group in ("evalkit.generators", "evalkit.retrievers") for r in registry.records(group)}
        return [*config.providers, *sorted(adapters)]
    if option == "model":  # the aliases the configured instances send (an alias is any text an endpoint takes)
        return sorted({alias for instance in config.providers.values() if isinstance(alias := instance.model, str)})
    if option in ("grader", "retriever"):
        return sorted({r.name for r in registry.records(f"evalkit.{option}s")})
    from ..catalog import question_set_catalog
    from ..errors import PLUGIN_FAILURES
    from ..retrieval.deployments import known_deployments

    try:
        sourced = question_set_catalog(config=config).sets.get(set_id)
        return sorted(known_deployments(config, [sourced] if sourced is not None else []))
    except PLUGIN_FAILURES:
        return None


def _refuse_filter(option: str, what: str, value: str, set_id: str, known: list[str]) -> None:
    from ..errors import UsageError
    from ..wording import did_you_mean, quoted

    raise UsageError(
        f"--{option} {quoted(value)}: no {what} of that name is configured or installed here, and no run of set "
        f"{quoted(set_id)} in the store has it.{did_you_mean(value, known)}"
    )
