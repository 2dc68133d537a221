"""Database URLs: SQLite paths, unreachable stores named clearly, passwords never shown."""

from __future__ import annotations

import pytest
from evalkit.errors import StorageError
from evalkit.storage import open_repository, schema_status
from evalkit.storage.sql import sqlite_path


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////srv/evalkit/results.db", "/srv/evalkit/results.db"),
        ("sqlite:///.evalkit/results.db", ".evalkit/results.db"),
        ("sqlite:///:memory:", ":memory:"),
        ("postgresql://ci@db/evalkit", None),
    ],
)
def test_sqlite_paths(url: str, path: str | None) -> None:
    assert sqlite_path(url) == path


@pytest.mark.parametrize("url", ["sqlite:///", "sqlite://", "sqlite:", "sqlite://:memory:", "sqlite:///  "])
def test_a_sqlite_url_without_a_file_is_refused_not_silently_in_memory(url: str) -> None:
    with pytest.raises(StorageError, match="names no file"):
        sqlite_path(url)


def test_a_folder_that_cannot_be_created_is_a_storage_error() -> None:
    with pytest.raises(StorageError, match="cannot create the folder of database sqlite:////proc/nope/x.db"):
        open_repository("sqlite:////proc/nope/x.db")


def test_an_unreachable_server_is_named_without_its_password() -> None:
    with pytest.raises(StorageError) as caught:
        schema_status("postgresql://ci:s3cret@127.0.0.1:1/evalkit")
    assert "cannot open database postgresql://ci:***@127.0.0.1:1/evalkit" in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_the_cli_says_so_and_exits_2(evalkit_cli) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--database", "postgresql://ci:s3cret@127.0.0.1:1/evalkit")
    assert result.code == 2 and "cannot open database postgresql://ci:***@127.0.0.1:1/evalkit" in result.stderr
    assert "s3cret" not in result.stderr + result.stdout
