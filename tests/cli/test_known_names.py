"""The names a reading command was given, resolved from one read of the store
(``evalkit.cli.known_names``): a set and its filters were checked with a read of the newest run
and a second read of the set's runs (and a third of every set's, to suggest)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from evalkit.cli.known_names import require_known_names
from evalkit.config import load_config
from evalkit.errors import UsageError
from evalkit.storage import open_repository
from evalkit.storage.sql.history import HistoryAndQuality


@pytest.fixture
def counted_reads(evalkit_cli, project, monkeypatch):  # noqa: ANN201 - (repository, reads)
    """A store holding a run of evalkit.smoke, and the ``recent_runs`` reads made of it."""
    assert evalkit_cli("run", "evalkit.smoke").code == 0
    reads: list[tuple[str | None, int]] = []
    read = HistoryAndQuality.recent_runs

    def counted(self, set_identifier=None, limit=20):  # noqa: ANN001, ANN202 - as recent_runs
        reads.append((set_identifier, limit))
        return read(self, set_identifier, limit)

    monkeypatch.setattr(HistoryAndQuality, "recent_runs", counted)
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    yield repository, reads
    repository.close()


def _args(**given: str) -> SimpleNamespace:
    names = ("provider", "model", "grader", "retriever", "deployment")
    return SimpleNamespace(set="evalkit.smoke", **{name: given.get(name) for name in names})


@pytest.mark.parametrize("given", [{}, {"provider": "reference"}, {"provider": "reference", "grader": "deterministic"}])
def test_a_stored_set_and_its_filters_are_resolved_from_one_read(counted_reads, project, given) -> None:
    repository, reads = counted_reads
    require_known_names(repository, _args(**given), load_config(None, cwd=project))
    assert len(reads) == 1, reads


def test_a_mistyped_filter_is_refused_from_the_same_one_read(counted_reads, project) -> None:
    repository, reads = counted_reads
    with pytest.raises(UsageError, match='--provider "referense".*Did you mean "reference"'):
        require_known_names(repository, _args(provider="referense"), load_config(None, cwd=project))
    assert reads == [("evalkit.smoke", 1000)]
