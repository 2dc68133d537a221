"""The repository reads routing relies on, against the rules of the reference (§7.2, §7.4, §12.8–12.9)."""

from __future__ import annotations

import pytest
from evalkit.runs import RunStatus
from evalkit.storage import open_repository
from evalkit.storage.protocols import ProviderModelQualityRuns

from tests.routing.routing_support import store_run


@pytest.fixture
def repository(sqlite_url: str):  # noqa: ANN201
    """A real repository over a fresh SQLite file."""
    repo = open_repository(sqlite_url)
    yield repo
    repo.close()


def test_reference_oracle_latest_run_per_set_averaged(repository) -> None:  # noqa: ANN001
    store_run(repository, "set-a", "inst", "alias", [1.0], run_id="r1", finished_at=100.0)
    store_run(repository, "set-a", "inst", "alias", [0.0], run_id="r2", finished_at=100.0)  # same time, later id
    store_run(repository, "set-b", "inst", "alias", [0.5], run_id="r3", finished_at=200.0)
    store_run(repository, "set-c", "inst", "alias", [1.0], grader="decision-model", finished_at=300.0)
    store_run(repository, "set-d", "inst", "alias", [1.0], verified=False, finished_at=300.0)

    assert repository.mean_quality_for_provider_model("inst", "alias", "deterministic") == 0.25
    assert repository.mean_quality_for_provider_model("inst", "alias", "decision-model") == 1.0
    runs = repository.quality_runs_for_provider_model("inst", "alias")
    assert [(r.id, r.set_identifier, r.mean_score) for r in runs] == [("r3", "set-b", 0.5), ("r2", "set-a", 0.0)]
    assert all(r.cases == () for r in runs)


def test_a_measured_zero_stays_zero_and_no_data_is_none(repository) -> None:  # noqa: ANN001
    store_run(repository, "set-a", "inst", "alias", [0.0, 0.0])
    assert repository.mean_quality_for_provider_model("inst", "alias") == 0.0
    assert repository.mean_quality_for_model("alias") == 0.0
    assert repository.mean_quality_for_provider_model("inst", "other") is None
    assert repository.mean_quality_for_provider_model("other", "alias") is None
    assert repository.mean_quality_for_model("other") is None
    assert repository.mean_quality_for_provider_model("", "alias") is None
    assert repository.mean_quality_for_provider_model("inst", "") is None
    assert repository.mean_quality_for_model("") is None
    assert repository.quality_runs_for_provider_model("", "alias") == []


def test_incomplete_unverified_and_other_grader_runs_never_count(repository) -> None:  # noqa: ANN001
    store_run(repository, "set-a", "inst", "alias", [0.5], finished_at=100.0)
    store_run(repository, "set-a", "inst", "alias", [1.0], status=RunStatus.INCOMPLETE, finished_at=200.0)
    store_run(repository, "set-a", "inst", "alias", [1.0], status=RunStatus.INTERRUPTED, finished_at=210.0)
    store_run(repository, "set-a", "inst", "alias", [1.0], verified=False, finished_at=300.0)
    store_run(repository, "set-a", "inst", "alias", [1.0], grader="decision", finished_at=400.0)
    assert repository.mean_quality_for_provider_model("inst", "alias") == 0.5
    assert repository.mean_quality_for_model("alias") == 0.5


def test_the_unscoped_read_is_none_when_eligible_runs_come_from_several_instances(repository) -> None:  # noqa: ANN001
    # instance-b's run is shadowed by instance-a's newer run of the same set, yet still makes it ambiguous
    store_run(repository, "set-a", "instance-b", "shared", [0.0], finished_at=100.0)
    store_run(repository, "set-a", "instance-a", "shared", [1.0], finished_at=200.0)
    assert repository.mean_quality_for_model("shared") is None
    assert repository.mean_quality_for_provider_model("instance-a", "shared") == 1.0
    assert repository.mean_quality_for_provider_model("instance-b", "shared") == 0.0


def test_ineligible_runs_of_another_instance_do_not_make_the_alias_ambiguous(repository) -> None:  # noqa: ANN001
    store_run(repository, "set-a", "instance-a", "shared", [0.75])
    store_run(repository, "set-a", "instance-b", "shared", [0.0], status=RunStatus.INCOMPLETE)
    store_run(repository, "set-a", "instance-c", "shared", [0.0], grader="decision")
    store_run(repository, "set-a", "instance-d", "shared", [0.0], verified=False)
    assert repository.mean_quality_for_model("shared") == 0.75


def test_scope_strings_match_exactly(repository) -> None:  # noqa: ANN001
    store_run(repository, "set-a", "inst", "alias", [1.0])
    store_run(repository, "Set-A", "inst", "alias", [0.0])
    store_run(repository, "set-a", "inst", "Alias", [0.5])
    store_run(repository, "set-a", "Inst", "alias", [0.5])
    store_run(repository, "set-a", "inst", "alias", [0.25], grader="DETERMINISTIC")
    assert repository.mean_quality_for_provider_model("inst", "alias") == 0.5  # set-a 1.0 and Set-A 0.0
    assert repository.mean_quality_for_provider_model("inst", "Alias") == 0.5
    assert repository.mean_quality_for_provider_model("inst", "alias", "DETERMINISTIC") == 0.25
    assert repository.mean_quality_for_model("Alias") == 0.5


def test_the_sql_repository_offers_the_quality_runs_capability(repository) -> None:  # noqa: ANN001
    assert isinstance(repository, ProviderModelQualityRuns)
