"""Fixtures of the viewer tests: one real store per session, written by the CLI, copied per test."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.view.store_project import StoredRuns, build

RETRIEVAL_FIXTURES = "evalkit-retrieval-fixtures"
#: The built project, kept for the session: (folder, run ids).
_BUILT: dict[str, tuple[Path, StoredRuns]] = {}


@pytest.fixture
def viewer_cli(evalkit_cli, plugin_dists) -> Callable[..., object]:  # noqa: ANN001 - the suite's fixtures
    """``evalkit`` in the test's project, with the retrieval fixtures installed."""
    env = {"PYTHONPATH": plugin_dists(RETRIEVAL_FIXTURES)}
    return lambda *args, **kwargs: evalkit_cli(*args, env={**env, **kwargs.pop("env", {})}, **kwargs)


@pytest.fixture
def stored(viewer_cli, project: Path, tmp_path_factory: pytest.TempPathFactory) -> StoredRuns:  # noqa: ANN001
    """The test's project holds the viewer project and its store (built by the CLI once per
    session, then copied: every test gets its own files)."""
    if "project" not in _BUILT:
        runs = build(project, viewer_cli)
        kept = tmp_path_factory.mktemp("viewer-project") / "project"
        shutil.copytree(project, kept)
        _BUILT["project"] = (kept, runs)
        return runs
    kept, runs = _BUILT["project"]
    shutil.copytree(kept, project, dirs_exist_ok=True)
    return runs


@pytest.fixture
def store_url(stored: StoredRuns, project: Path) -> str:
    """The URL of the test's copy of the store."""
    return f"sqlite:///{project / '.evalkit' / 'results.db'}"


@pytest.fixture
def client(store_url: str, project: Path) -> Iterator[object]:
    """A Starlette TestClient over the viewer of the test's store (Host 127.0.0.1:8765)."""
    from evalkit.config import load_config
    from evalkit.view import create_app
    from starlette.testclient import TestClient

    app = create_app(store_url, port=8765, config=load_config(project / "evalkit.toml"))
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        yield test_client
