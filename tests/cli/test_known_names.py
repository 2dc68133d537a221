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


def test_a_mistyped_set_is_suggested_from_the_stored_sets_without_reading_their_runs(evalkit_cli, project, monkeypatch) -> None:
    # The "did you mean" of a set neither installed nor stored read the newest 1,000 runs of every
    # set, whole, to keep their identifiers: now one read of the distinct sets the store holds.
    from evalkit import Run

    assert evalkit_cli("run", "evalkit.smoke").code == 0
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        for n in range(60):  # sets no installed provider ships: only the store knows them
            set_id = ("team.billing", "team.search", "team.onboarding")[n % 3]
            repository.begin_run(Run(id=f"old-{n}", set_identifier=set_id, grader="deterministic", case_count=1, started_at=1000.0 + n))
    finally:
        repository.close()
    reads: list[str | None] = []
    read = HistoryAndQuality.recent_runs

    def counted(self, set_identifier=None, limit=20):  # noqa: ANN001, ANN202 - as recent_runs
        reads.append(set_identifier)
        return read(self, set_identifier, limit)

    monkeypatch.setattr(HistoryAndQuality, "recent_runs", counted)
    typo = evalkit_cli("history", "team.biling")
    assert typo.code == 2, typo.stdout + typo.stderr
    assert (
        'error: Unknown set "team.biling": no installed provider ships it and the store holds no run of it. '
        'Did you mean "team.billing"?'
    ) in typo.stderr
    assert reads == ["team.biling"], reads  # the typed set's runs looked up; no other set's runs read
    near = evalkit_cli("flaky", "evalkit.smok")  # an installed set, stored too: suggested once
    assert near.code == 2 and near.stderr.count('Did you mean "evalkit.smoke"?') == 1, near.stderr
    assert None not in reads, reads
