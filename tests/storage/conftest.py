"""Every storage test runs against both engines: SQLite always, PostgreSQL when
``EVALKIT_TEST_POSTGRES_URL`` names a server (``eval "$(.ci/pg-start)"`` starts one).

Each PostgreSQL test gets a database of its own, created from that URL and dropped afterwards. With
``EVALKIT_REQUIRE_POSTGRES=1`` (set by ``.ci/run``, which starts a server) a missing PostgreSQL URL
fails those tests instead of skipping them. ``CI=true`` alone does not: GitHub Actions and GitLab set
it for every contributor, who may have no PostgreSQL.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

POSTGRES_ENV = "EVALKIT_TEST_POSTGRES_URL"
#: Set to 1 by .ci/run: PostgreSQL must be there, so its absence fails instead of skipping.
REQUIRE_ENV = "EVALKIT_REQUIRE_POSTGRES"


def postgres_required() -> bool:
    """True when the environment says PostgreSQL must be available (``EVALKIT_REQUIRE_POSTGRES=1``)."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in ("1", "true", "yes")


def _admin_connection(base_url: str):  # noqa: ANN202 - a psycopg2 connection
    import psycopg2

    connection = psycopg2.connect(base_url)
    connection.autocommit = True
    return connection


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for one test; yields its URL and drops it afterwards."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        if postgres_required():
            pytest.fail(f"{REQUIRE_ENV}=1 but {POSTGRES_ENV} is not set: .ci/pg-start must run before the tests")
        pytest.skip(f'{POSTGRES_ENV} is not set (start a server with: eval "$(.ci/pg-start)")')
    name = f"evalkit_t_{uuid.uuid4().hex[:16]}"
    admin = _admin_connection(base)
    try:
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        admin.close()
    parts = urlsplit(base)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        admin = _admin_connection(base)
        try:
            with admin.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            admin.close()


ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=ENGINES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, then (second parameter) a PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'results.db'}"
        return
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture
def engine(database_url: str) -> str:
    """``sqlite`` or ``postgresql``: the engine behind ``database_url``."""
    return "sqlite" if database_url.startswith("sqlite:") else "postgresql"


@pytest.fixture
def repo(database_url: str) -> Iterator[object]:
    """The built-in repository on a fresh database of each engine."""
    from evalkit.storage import open_repository

    repository = open_repository(database_url)
    yield repository
    repository.close()


@pytest.fixture
def storage_plugins(plugin_dists) -> str:  # noqa: ANN001 - the session fixture from tests/conftest.py
    """PYTHONPATH with the storage test sets and the minimal third-party repository installed."""
    return plugin_dists("evalkit-minimal-repo", "evalkit-storage-sets")
