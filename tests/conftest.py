"""Fixtures shared by the whole suite: the CLI in a scratch project (in this process, or as a real
child where the process itself is under test), real SQLite files."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.cli_runner import CliResult, InProcessRunner, ProcessRunner

pytest_plugins = ["tests.support.fixtures", "tests.support.tls_fixtures", "tests.support.chromium"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def suite_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``EVALKIT_CACHE_DIR`` is one scratch folder for the whole session, so no test writes the
    developer's own cache (``~/.cache/evalkit``: lexical indexes, a corpus's ids); a test about where
    the cache goes sets or removes the variable itself."""
    folder = tmp_path_factory.mktemp("evalkit-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALKIT_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(autouse=True)
def fresh_plugin_scan() -> Iterator[None]:
    """Forget the per-process plugin scan after each test: a test that put distributions on
    ``sys.path`` (monkeypatch undoes that) must not leave their entry points to the next test.
    The next lookup scans again; scanning here would read every distribution's metadata after
    each of the suite's tests, most of which never look a plugin up."""
    yield
    from evalkit import registry

    registry.forget()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty working directory for a CLI run (its SQLite store lands in .evalkit/)."""
    work = tmp_path / "project"
    work.mkdir()
    return work


@pytest.fixture
def cli(project: Path) -> Callable[..., CliResult]:
    """``evalkit ARGS`` run in this process, in ``project``: ``cli(*args, env=None, timeout=120,
    cwd=None, terminal=False)`` returns its exit code, stdout and stderr (a :class:`CliResult`);
    ``terminal=True`` makes standard output and error say they are a terminal (a progress bar is drawn).

    ``env`` is laid over the suite's command environment (no ``EVALKIT_DATABASE_URL``,
    ``NO_COLOR=1``, ``COLUMNS=200``); a ``PYTHONPATH`` in it puts those folders on ``sys.path`` for
    the call only. See tests/support/cli_runner.py for what else a call gets that a fresh process
    would have.
    """
    return InProcessRunner(project)


@pytest.fixture
def evalkit_cli(project: Path) -> Callable[..., CliResult]:
    """:func:`cli` under the name most test files use (not built from ``cli``: some modules use
    that name for a fixture or parameter of their own)."""
    return InProcessRunner(project)


@pytest.fixture
def evalkit_process(project: Path) -> ProcessRunner:
    """``python -m evalkit ARGS`` as a real child process, for tests about the process itself
    (signals, a killed run, closed or full standard streams, a terminal, resource limits, several
    processes at once). Called like :func:`cli`; ``.start(*args, env=, cwd=, **popen)`` returns the
    running ``Popen``, ``.command(*args)`` its command line. Each test using it says why."""
    return ProcessRunner(project)


@pytest.fixture(scope="session")
def plugin_dists(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """Install test distributions from tests/data into a folder; returns it for PYTHONPATH.

    The one pip call that stages them all is made once for the run: pytest-xdist's workers each
    have a base temporary folder under one shared parent, and stage into that parent together."""
    from tests.support.distributions import TestDistributions

    if os.environ.get("PYTEST_XDIST_WORKER"):
        staging = tmp_path_factory.getbasetemp().parent / "staged-dists"
    else:
        staging = tmp_path_factory.mktemp("staged-dists")
    distributions = TestDistributions(staging)
    cache: dict[tuple[str, ...], str] = {}

    def install(*names: str) -> str:
        key = tuple(sorted(names))
        if key not in cache:
            cache[key] = str(distributions.install(tmp_path_factory.mktemp("dists"), *key))
        return cache[key]

    return install


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite database file URL."""
    return f"sqlite:///{tmp_path / 'results.db'}"
