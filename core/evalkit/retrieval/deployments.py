"""Deployments: which options each retriever is created with, per environment.

``[deployments.NAME.retrievers."ID"]`` tables in the project configuration, or a question-set
provider's :class:`~evalkit.retrieval.contracts.DeploymentDefaults`, chosen by ``--deployment`` or
``$EVALKIT_DEPLOYMENT``. The same question set then measures staging and production retrievers
without code changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from evalkit.catalog import SourcedSet
from evalkit.components import resolve_paths
from evalkit.config import Config
from evalkit.errors import PluginError, UsageError

from .contracts import DeploymentDefaults

__all__ = ["DEFAULT_TIMEOUT_S", "DEPLOYMENT_ENV", "TIMEOUT_OPTION", "Deployment", "resolve_deployment"]

#: Names the deployment when ``--deployment`` is not given.
DEPLOYMENT_ENV = "EVALKIT_DEPLOYMENT"
#: How long one ``retrieve`` call may take before its question is errored (seconds).
DEFAULT_TIMEOUT_S = 60.0
#: The option of a deployment's retriever table that evalkit keeps for itself: the per-question
#: time limit in seconds (not passed to the retriever's factory).
TIMEOUT_OPTION = "timeout"


@attrs.frozen
class Deployment:
    """The options one retriever is created with, and where they came from.

    ``name`` is ``None`` when no deployment was chosen (the retriever gets no options);
    ``source`` is ``configuration <path>``, ``provider <distribution>`` or ``none``; ``timeout``
    is how long one question may take (the table's ``timeout`` option, else
    :data:`DEFAULT_TIMEOUT_S`).
    """

    name: str | None
    options: Mapping[str, Any]
    source: str
    timeout: float = DEFAULT_TIMEOUT_S


def _time_limit(options: dict[str, Any], deployment: str, retriever_id: str) -> float:
    """Take ``timeout`` out of the options: a number of seconds above 0, at most a day."""
    raw = options.pop(TIMEOUT_OPTION, DEFAULT_TIMEOUT_S)
    valid = isinstance(raw, (int, float)) and not isinstance(raw, bool) and 0 < raw <= 86400
    if not valid:
        raise UsageError(
            f'deployment "{deployment}", retriever "{retriever_id}": {TIMEOUT_OPTION} must be a number of seconds '
            f"above 0 and at most 86400, got {raw!r}"
        )
    return float(raw)


def _provider_deployments(sourced: SourcedSet | None) -> tuple[Mapping[str, Any], str]:
    if sourced is None or not isinstance(sourced.provider, DeploymentDefaults):
        return {}, ""
    where = f"provider {sourced.record.describe()}"
    try:
        found = sourced.provider.default_deployments()
    except Exception as exc:
        raise PluginError.for_plugin(
            sourced.record,
            f"golden question set provider {sourced.record.describe()} raised {type(exc).__name__} "
            f"in default_deployments(): {exc}",
        ) from exc
    if not isinstance(found, Mapping) or not all(
        isinstance(d, Mapping) and all(isinstance(o, Mapping) for o in d.values()) for d in found.values()
    ):
        raise PluginError.for_plugin(
            sourced.record,
            f"golden question set provider {sourced.record.describe()}: default_deployments() must return "
            "{deployment: {retriever id: {option: value}}}",
        )
    return found, where


def resolve_deployment(
    name: str | None,
    retriever_id: str,
    config: Config,
    *,
    sourced: SourcedSet | None = None,
    factory: Any = None,
) -> Deployment:
    """The deployment ``name`` (else ``$EVALKIT_DEPLOYMENT``) for ``retriever_id``.

    Deployments come from the project configuration (``[deployments.NAME.retrievers."ID"]``) and
    from the set's provider (:class:`~evalkit.retrieval.contracts.DeploymentDefaults`); a
    configured deployment replaces a provider's of the same name. Relative paths in configured
    options the retriever's factory declares as paths (:class:`PathOptions`) are resolved against
    the configuration file's folder. Raises :class:`UsageError` for an unknown deployment (listing
    the known ones) and for a deployment without options for this retriever.
    """
    chosen = name if name is not None else (os.environ.get(DEPLOYMENT_ENV) or None)
    if chosen is None:
        return Deployment(None, {}, "none")
    if not chosen:
        raise UsageError("--deployment must name a deployment")
    provided, provider_source = _provider_deployments(sourced)
    origin = f"--deployment {chosen}" if name is not None else f"{DEPLOYMENT_ENV}={chosen}"
    if chosen in config.deployments:
        retrievers = config.deployments[chosen]
        source = f"configuration {config.path}" if config.path else "configuration"
        root = config.root
    elif chosen in provided:
        retrievers = provided[chosen]
        source = provider_source
        root = None
    else:
        known = sorted({*config.deployments, *provided})
        listed = ", ".join(known) if known else "(none: add [deployments.NAME.retrievers.\"ID\"] to evalkit.toml)"
        raise UsageError(f'Unknown deployment "{chosen}" ({origin}). Known deployments: {listed}')
    if retriever_id not in retrievers:
        configured = ", ".join(sorted(retrievers)) or "none"
        hint = ""
        head = retriever_id.split(".", 1)[0]
        if "." in retriever_id and head in retrievers:
            hint = f'; quote an id with dots in the table name: [deployments.{chosen}.retrievers."{retriever_id}"]'
        raise UsageError(
            f'deployment "{chosen}" has no options for retriever "{retriever_id}" (it configures: {configured}){hint}'
        )
    options = dict(retrievers[retriever_id])
    timeout = _time_limit(options, chosen, retriever_id)
    if root is not None:
        options = resolve_paths(options, factory, root)
    return Deployment(chosen, options, source, timeout)
