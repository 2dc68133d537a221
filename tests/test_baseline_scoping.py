"""Which earlier run is the baseline: exact scope, complete and verified runs only."""

from __future__ import annotations

import itertools

import pytest
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.storage import open_repository

IDENTITY = ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-08-06")
_clock = itertools.count(1000)


def store(repo, identity=IDENTITY, *, set_id="pkg.set", grader="deterministic", status="complete", errored=False, passed=True):
    now = float(next(_clock))
    run_id = f"run-{int(now)}"
    repo.begin_run(Run(id=run_id, set_identifier=set_id, grader=grader, started_at=now, case_count=1,
                       provider_instance=identity.provider_instance, model_alias=identity.model_alias))
    case = CaseResult(case_id="c1", passed=passed and not errored, score=1.0 if passed else 0.0, identity=identity,
                      yardstick=grader, error="boom" if errored else None, finished_at=now)
    repo.record_cases(run_id, [case], "metadata")
    repo.finish_run(run_id, status, now + 0.5, grader=grader, identity=None if errored else identity)
    return run_id


@pytest.fixture
def repo(sqlite_url):
    repository = open_repository(sqlite_url)
    yield repository
    repository.close()


def test_the_latest_matching_complete_run_is_the_baseline(repo) -> None:
    store(repo)
    newer = store(repo)
    assert repo.baseline_for("pkg.set", IDENTITY, "deterministic").id == newer


@pytest.mark.parametrize(
    "other",
    [
        {"identity": ServingIdentity("staging-gpt", "gpt-4o", "gpt-4o-2024-08-06")},  # another instance
        {"identity": ServingIdentity("prod-gpt", "gpt-4o-mini", "gpt-4o-2024-08-06")},  # another alias
        {"identity": ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-11-20")},  # another snapshot
        {"grader": "decision:judge:gpt-4o:v1"},  # another yardstick
        {"set_id": "pkg.other"},
        {"status": "incomplete", "errored": True},
        {"status": "interrupted"},
        {"status": "running"},
    ],
    ids=["instance", "alias", "reported-model", "grader", "set", "incomplete", "interrupted", "running"],
)
def test_a_newer_ineligible_run_never_hides_the_older_eligible_one(repo, other) -> None:
    eligible = store(repo)
    store(repo, **other)
    assert repo.baseline_for("pkg.set", IDENTITY, "deterministic").id == eligible


def test_no_eligible_run_means_no_baseline(repo) -> None:
    store(repo, identity=ServingIdentity("prod-gpt", "gpt-4o", "other-snapshot"))
    store(repo, status="incomplete", errored=True)
    assert repo.baseline_for("pkg.set", IDENTITY, "deterministic") is None


def test_the_run_itself_is_excluded(repo) -> None:
    only = store(repo)
    assert repo.baseline_for("pkg.set", IDENTITY, "deterministic", exclude_run_id=only) is None


def test_scope_is_case_sensitive(repo) -> None:
    store(repo, set_id="Pkg.Set")
    store(repo, grader="DETERMINISTIC")
    assert repo.baseline_for("pkg.set", IDENTITY, "deterministic") is None


def test_a_first_run_that_loses_the_race_to_another_is_compared_with_it(repo) -> None:
    """Two first runs of a scope finishing at once: each read "no baseline yet". The one that
    records its acceptance second is not a second "first": it is decided again, against the
    other, and accepted (or not) as any compared run."""
    from evalkit.baselines import Acceptance
    from evalkit.evaluation import record_verdict, stored_verdict, verdict_for
    from evalkit.tolerance import Tolerances

    winner, loser = store(repo), store(repo, passed=False)
    loser_run = repo.get_run(loser)
    too_early = verdict_for(loser_run, repo, Tolerances())  # read before the winner was accepted
    assert too_early.state == "baseline"
    repo.accept_run(winner, Acceptance("first", 1.0, None, "the first run of its scope"))
    kept = record_verdict(loser_run, too_early, repo, stored_verdict(too_early),
                          recompare=lambda: verdict_for(loser_run, repo, Tolerances()))  # fmt: skip
    assert kept.state == "regressed" and kept.comparison.baseline_id == winner and kept.comparison.regressed
    assert kept.acceptance is None and list(repo.acceptances_for([winner, loser])) == [winner]
    assert repo.verdicts_for([loser])[loser].state == "regressed"
