"""A complete run whose verdict the store failed to record is settled by the next command that reads
it (:func:`evalkit.run.decide.recorded_verdict`), on a real store of each engine."""

from __future__ import annotations

import pytest
from evalkit.evaluation import stored_run_verdict
from evalkit.tolerance import Tolerances

from tests.storage.test_sql_repository import IDENTITY, case, header


def stored_without_verdict(repo, run_id: str, **fields):  # noqa: ANN001, ANN003, ANN201
    """A complete run of three passing cases, stored as the process that closed it left it when the
    store failed as it recorded the verdict: no verdict, no acceptance."""
    repo.begin_run(header(run_id, **fields))
    repo.record_cases(run_id, [case("a"), case("b"), case("c")], "metadata")
    repo.finish_run(run_id, "complete", 2_000.0, identity=IDENTITY)
    return repo.get_run(run_id, with_cases=True)


@pytest.mark.parametrize(("reused", "accepted"), [(None, "first"), ("earlier-run", None)], ids=["answered", "reused"])
def test_a_lost_verdict_is_settled_and_a_run_of_reused_answers_is_not_accepted_by_it(repo, reused, accepted) -> None:
    """The first run of its scope is accepted automatically when its lost verdict is settled later,
    as the process that closed it would have done; a run whose answers were reused (``--answers-from``,
    ``regrade``) never is, whatever the reading command reused itself (the CI job that waits for
    the shards reuses nothing)."""
    run = stored_without_verdict(repo, "lost-1", answers_reused=reused)
    assert run.answers_reused == reused
    verdict = stored_run_verdict(run, repo, Tolerances())
    assert "lost-1" in repo.verdicts_for(["lost-1"]), "the verdict is recorded now"
    acceptance = repo.acceptances_for(["lost-1"]).get("lost-1")
    assert (acceptance.how if acceptance else None) == accepted
    assert (verdict.acceptance.how if verdict.acceptance else None) == accepted
