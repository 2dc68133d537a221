"""Results storage: the repository protocols and the Peewee-backed implementation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .protocols import GeneratorScopedResults, ProviderModelQualityScores, ResultRepository, RunHistory

__all__ = [
    "GeneratorScopedResults",
    "ProviderModelQualityScores",
    "ResultRepository",
    "RunHistory",
    "default_database_url",
    "resolve_database_url",
    "open_repository",
]


def default_database_url(cwd: Path | None = None) -> str:
    """``EVALKIT_DATABASE_URL``, else a SQLite file under ``.evalkit/`` in the working directory."""
    env = os.environ.get("EVALKIT_DATABASE_URL")
    if env:
        return env
    return f"sqlite:///{(cwd or Path.cwd()) / '.evalkit' / 'results.db'}"


def resolve_database_url(explicit: str | None, config: Any, cwd: Path | None = None) -> str:
    """The database to use: ``explicit`` (``--database``), ``EVALKIT_DATABASE_URL``, the config's
    ``database`` (a relative SQLite path is relative to the config file), then the default."""
    if explicit:
        return explicit
    if os.environ.get("EVALKIT_DATABASE_URL"):
        return os.environ["EVALKIT_DATABASE_URL"]
    url = getattr(config, "database", None)
    if url:
        if url.startswith("sqlite:///") and not url.startswith("sqlite:////") and config.path is not None:
            return f"sqlite:///{config.root / url[len('sqlite:///'):]}"
        return url
    return default_database_url(cwd)


def open_repository(url: str, **options: Any) -> Any:
    """Open the repository a URL names: SQLite or PostgreSQL built in, other schemes from plugins.

    A plugin in the ``evalkit.repositories`` group whose name is the URL scheme is called with
    ``url`` and must return an object that satisfies :class:`ResultRepository`.
    """
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("sqlite", "postgres", "postgresql"):
        from .sql import SqlRepository

        return SqlRepository(url, **options)
    from .. import registry

    record = registry.find("evalkit.repositories", scheme)
    return registry.instantiate(record, registry.load(record), url=url)
