"""Fixtures shared by the whole suite: real CLI subprocesses in a scratch project, real SQLite files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

pytest_plugins = ["tests.support.fixtures"]

ROOT = Path(__file__).resolve().parent.parent


@attrs.frozen
class CliResult:
    """What one ``evalkit`` subprocess did."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> object:
        """stdout parsed as JSON."""
        return json.loads(self.stdout)


@pytest.fixture(autouse=True)
def fresh_plugin_scan() -> Iterator[None]:
    """Forget the per-process plugin scan after each test: a test that put distributions on
    ``sys.path`` (monkeypatch undoes that) must not leave their entry points to the next test."""
    yield
    from evalkit import registry

    registry.scan(refresh=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty working directory for a CLI run (its SQLite store lands in .evalkit/)."""
    work = tmp_path / "project"
    work.mkdir()
    return work


@pytest.fixture
def evalkit_cli(project: Path) -> Callable[..., CliResult]:
    """Run ``python -m evalkit ARGS`` in ``project`` and return code, stdout and stderr."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120, cwd: Path | None = None) -> CliResult:
        environment = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE_URL"}
        environment.update({"NO_COLOR": "1", "COLUMNS": "200"})
        environment.update(env or {})
        done = subprocess.run(
            [sys.executable, "-m", "evalkit", *args],
            cwd=cwd or project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return CliResult(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture(scope="session")
def plugin_dists(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """Install test distributions from tests/data into a folder; returns it for PYTHONPATH."""
    from tests.support.distributions import install_into

    cache: dict[tuple[str, ...], str] = {}

    def install(*names: str) -> str:
        key = tuple(sorted(names))
        if key not in cache:
            cache[key] = str(install_into(tmp_path_factory.mktemp("dists"), *key))
        return cache[key]

    return install


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite database file URL."""
    return f"sqlite:///{tmp_path / 'results.db'}"
