"""Project configuration: ``evalkit.toml`` or ``[tool.evalkit]`` in ``pyproject.toml``.

::

    database = "sqlite:///.evalkit/results.db"   # or postgresql://…; EVALKIT_DATABASE_URL wins
    privacy = "metadata"                           # metadata | redacted | full
    max_answer_bytes = 1048576                     # longer answers are stored cut (graded whole)
    judge = "judge-gpt"                            # provider instance used by judge graders

    [providers.prod-gpt]
    adapter = "openai"                             # an evalkit.generators entry point
    model = "gpt-4o-mini"                          # the alias sent
    base_url = "https://…/v1"                      # every other key goes to the adapter

    [deployments.staging]
    retriever = "evalkit.lexical"                  # what `evalkit retrieval SET --deployment staging` runs

    [deployments.staging.retrievers."evalkit.lexical"]
    corpus = "docs/corpus.jsonl"

    [question_sets."beir.scifact"]                 # a standard collection as a question set
    path = "data/scifact"                          # BEIR folder (format = "trec": topics, qrels, corpus)
    split = "test"
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .errors import ConfigError

__all__ = ["Config", "ProviderInstance", "load_config", "DEFAULT_MAX_ANSWER_BYTES", "PRIVACY_LEVELS", "ROUTING_KEYS"]

PRIVACY_LEVELS = ("metadata", "redacted", "full")
#: Provider-instance keys that belong to evalkit's routing, not to the adapter.
ROUTING_KEYS = ("adapter", "priority", "cost_per_1k_tokens", "capabilities")
#: Answers longer than this many bytes (UTF-8) are stored cut, with a marker; they are graded whole.
DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024


@attrs.frozen
class ProviderInstance:
    """A configured endpoint: the adapter that talks to it and the options it gets."""

    name: str
    adapter: str
    options: Mapping[str, Any]
    priority: int = 0
    cost_per_1k_tokens: float | None = None
    capabilities: tuple[str, ...] = ("chat",)

    @property
    def model(self) -> str | None:
        """The alias this instance sends unless a run overrides it."""
        value = self.options.get("model")
        return str(value) if value is not None else None


@attrs.frozen
class Config:
    """Everything read from the configuration file (empty when there is none)."""

    path: Path | None = None
    database: str | None = None
    privacy: str = "metadata"
    judge: str | None = None
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    providers: Mapping[str, ProviderInstance] = attrs.Factory(dict)
    deployments: Mapping[str, Mapping[str, Mapping[str, Any]]] = attrs.Factory(dict)
    raw: Mapping[str, Any] = attrs.Factory(dict)
    #: ``[deployments.NAME] retriever = "ID"``: the retriever each deployment names, when it names one.
    deployment_retrievers: Mapping[str, str] = attrs.Factory(dict)
    #: ``[question_sets."ID"]`` tables, read by the built-in collection provider (paths as written).
    question_sets: Mapping[str, Mapping[str, Any]] = attrs.Factory(dict)

    @property
    def root(self) -> Path:
        """The folder relative paths in the configuration are resolved against."""
        return self.path.parent if self.path else Path.cwd()


def _provider(name: str, table: Any, where: str) -> ProviderInstance:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [providers.{name}] must be a table")
    adapter = table.get("adapter")
    if not isinstance(adapter, str) or not adapter:
        raise ConfigError(f'{where}: [providers.{name}] needs adapter = "<generator name>", e.g. "openai"')
    priority = table.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ConfigError(f"{where}: [providers.{name}] priority must be an integer")
    cost = table.get("cost_per_1k_tokens")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float)) or not 0 <= cost < math.inf):
        raise ConfigError(
            f"{where}: [providers.{name}] cost_per_1k_tokens must be a finite number of zero or more, got {cost!r}"
        )
    capabilities = table.get("capabilities", ["chat"])
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        raise ConfigError(f"{where}: [providers.{name}] capabilities must be a list of strings")
    options = {k: v for k, v in table.items() if k not in ROUTING_KEYS}
    return ProviderInstance(name, adapter, options, priority, cost, tuple(capabilities))


def _deployments(table: Any, where: str) -> tuple[dict[str, dict[str, Mapping[str, Any]]], dict[str, str]]:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [deployments] must be a table")
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    named: dict[str, str] = {}
    for name, deployment in table.items():
        retrievers = deployment.get("retrievers", {}) if isinstance(deployment, Mapping) else None
        if not isinstance(retrievers, Mapping) or not all(isinstance(v, Mapping) for v in retrievers.values()):
            raise ConfigError(f'{where}: [deployments.{name}.retrievers."<retriever id>"] must hold option tables')
        assert isinstance(deployment, Mapping)
        unknown = sorted(set(deployment) - {"retriever", "retrievers"})
        if unknown:
            raise ConfigError(
                f'{where}: [deployments.{name}] takes retriever = "ID" and [deployments.{name}.retrievers."ID"] '
                f"option tables; unknown key(s): {', '.join(unknown)}"
            )
        retriever = deployment.get("retriever")
        if retriever is not None:
            if not isinstance(retriever, str) or not retriever:
                raise ConfigError(f'{where}: [deployments.{name}] retriever must name a retriever, e.g. "evalkit.lexical"')
            named[name] = retriever
        out[name] = {rid: dict(options) for rid, options in retrievers.items()}
    return out, named


def _question_sets(table: Any, where: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(table, Mapping) or not all(isinstance(v, Mapping) for v in table.values()):
        raise ConfigError(f'{where}: [question_sets."<set identifier>"] must be tables (path = "…", split = "test")')
    return {identifier: dict(options) for identifier, options in table.items()}


def _read(path: Path) -> Mapping[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("evalkit", {})
    return data


def load_config(path: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Config:
    """Read ``path``, else ``evalkit.toml``, else ``pyproject.toml``'s ``[tool.evalkit]`` in ``cwd``."""
    base = cwd or Path.cwd()
    if path is not None:
        chosen = Path(path)
        if not chosen.exists():
            raise ConfigError(f"configuration file {chosen} does not exist")
    else:
        chosen = next((p for p in (base / "evalkit.toml", base / "pyproject.toml") if p.is_file()), None)
        if chosen is None:
            return Config()
    data = _read(chosen)
    if not data and chosen.name == "pyproject.toml" and path is None:
        return Config()
    where = str(chosen)
    privacy = data.get("privacy", "metadata")
    if privacy not in PRIVACY_LEVELS:
        raise ConfigError(f"{where}: privacy must be one of {', '.join(PRIVACY_LEVELS)}, got {privacy!r}")
    providers_table = data.get("providers", {})
    if not isinstance(providers_table, Mapping):
        raise ConfigError(f"{where}: [providers] must be a table of provider instances")
    providers = {name: _provider(name, table, where) for name, table in providers_table.items()}
    database = data.get("database")
    if database is not None and not isinstance(database, str):
        raise ConfigError(f"{where}: database must be a URL string")
    judge = data.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise ConfigError(f"{where}: judge must name a provider instance")
    max_answer_bytes = data.get("max_answer_bytes", DEFAULT_MAX_ANSWER_BYTES)
    if isinstance(max_answer_bytes, bool) or not isinstance(max_answer_bytes, int) or max_answer_bytes < 1024:
        raise ConfigError(f"{where}: max_answer_bytes must be a whole number of bytes, at least 1024, got {max_answer_bytes!r}")
    deployments, deployment_retrievers = _deployments(data.get("deployments", {}), where)
    return Config(
        path=chosen.resolve(),
        database=database,
        privacy=privacy,
        judge=judge,
        max_answer_bytes=max_answer_bytes,
        providers=providers,
        deployments=deployments,
        raw=data,
        deployment_retrievers=deployment_retrievers,
        question_sets=_question_sets(data.get("question_sets", {}), where),
    )
