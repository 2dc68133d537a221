"""The store's baseline reads keep to their scope when more than a page of other runs is newer.

A baseline read looks at the newest 20 rows its SQL filter lets through and then checks the scope
exactly (collations may match loosely). So every part of the SQL filter matters: one loosened
(``&`` read as ``|``) lets 20 newer runs of another set or instance fill the page and hide the
real baseline — the run is then compared with nothing, or accepted as the first of its scope.
The verdict and acceptance reads answer for the runs asked about, however many are asked.
"""

from __future__ import annotations

from evalkit import CaseResult, Run, ServingIdentity
from evalkit.baselines import Acceptance, BaselineScope
from evalkit.runs import RunKind, RunStatus
from evalkit.storage.sql.baselines import _scope_lock_key
from evalkit.storage.values import StoredVerdict

IDENTITY = ServingIdentity("prod", "gpt", "gpt-2025")
OTHER_INSTANCE = ServingIdentity("staging", "gpt", "gpt-2025")
SCOPE = BaselineScope(RunKind.PROMPTS, "pkg.set", "prod", "gpt", "gpt-2025", "deterministic")
PAGE = 20  # the rows a baseline read looks at


def store(repo, run_id: str, finished: float, *, set_id: str = "pkg.set", identity: ServingIdentity = IDENTITY, cases: int = 1) -> Run:  # noqa: ANN001
    repo.begin_run(Run(id=run_id, set_identifier=set_id, grader="deterministic", case_count=max(cases, 1), started_at=finished - 1,
                       provider_instance=identity.provider_instance, model_alias=identity.model_alias))  # fmt: skip
    repo.record_cases(run_id, [CaseResult(f"c{n}", True, 1.0, identity=identity) for n in range(cases)], "metadata")
    return repo.finish_run(run_id, "complete", finished, grader="deterministic", identity=identity)


def store_retrieval(repo, run_id: str, finished: float, *, set_id: str = "q.set", retriever: str = "r.one") -> None:  # noqa: ANN001
    repo.begin_run(Run(id=run_id, set_identifier=set_id, grader="retrieval_hit_rate", kind=RunKind.RETRIEVAL,
                       retriever=retriever, deployment=None, started_at=finished - 1))  # fmt: skip
    repo.finish_run(run_id, RunStatus.COMPLETE.value, finished)


def test_the_accepted_baseline_is_found_behind_a_page_of_newer_accepted_runs_of_other_scopes(repo) -> None:  # noqa: ANN001
    store(repo, "base", 100.0)
    repo.accept_run("base", Acceptance("first", 100.0))
    for n in range(PAGE):
        store(repo, f"other-set-{n}", 200.0 + n, set_id="other.set")
        repo.accept_run(f"other-set-{n}", Acceptance("first", 200.0 + n))
        store(repo, f"other-instance-{n}", 300.0 + n, identity=OTHER_INSTANCE)
        repo.accept_run(f"other-instance-{n}", Acceptance("first", 300.0 + n))
    # a run of the scope that answered nothing is never a baseline, even accepted on purpose
    store(repo, "answered-nothing", 400.0, cases=0)
    repo.accept_run("answered-nothing", Acceptance("manual", 400.0, "eve", "by mistake"))

    assert repo.accepted_baseline(SCOPE).id == "base"
    assert repo.accepted_baseline(SCOPE, with_cases=False).id == "base"
    assert repo.accepted_baseline(BaselineScope(RunKind.PROMPTS, "other.set", "prod", "gpt", "gpt-2025", "deterministic")).id == "other-set-19"
    assert repo.accept_if_first("late-first", SCOPE, Acceptance("first", 500.0)) is False, "the scope has its baseline"


def test_the_accepted_retrieval_baseline_is_found_behind_a_page_of_another_retrievers_runs(repo) -> None:  # noqa: ANN001
    store_retrieval(repo, "base", 100.0)
    repo.accept_run("base", Acceptance("first", 100.0))
    for n in range(PAGE):
        store_retrieval(repo, f"other-retriever-{n}", 200.0 + n, retriever="r.two")
        repo.accept_run(f"other-retriever-{n}", Acceptance("first", 200.0 + n))
    assert repo.accepted_baseline(BaselineScope(RunKind.RETRIEVAL, "q.set", retriever="r.one", deployment=None)).id == "base"


def test_the_latest_verified_run_is_found_behind_a_page_of_newer_runs_of_another_set(repo) -> None:  # noqa: ANN001
    store(repo, "base", 100.0)
    for n in range(PAGE):
        store(repo, f"other-set-{n}", 200.0 + n, set_id="other.set")
    store(repo, "answered-nothing", 300.0, cases=0)
    found = repo.baseline_for("pkg.set", IDENTITY, "deterministic")
    assert found is not None and found.id == "base"


def test_the_latest_retrieval_run_is_found_behind_a_page_of_newer_runs_of_another_set(repo) -> None:  # noqa: ANN001
    store_retrieval(repo, "base", 100.0)
    for n in range(PAGE):
        store_retrieval(repo, f"other-set-{n}", 200.0 + n, set_id="other.set")
    found = repo.latest_retrieval_run("q.set", "r.one")
    assert found is not None and found.id == "base"
    assert repo.latest_retrieval_run("q.set", "r.one", exclude_run_id="base") is None


def test_verdicts_and_acceptances_are_read_for_the_runs_asked_about_however_many(repo) -> None:  # noqa: ANN001
    for run_id, finished in (("a", 100.0), ("b", 200.0)):
        store(repo, run_id, finished)
    repo.record_verdict("a", StoredVerdict("baseline", None, "the first run of its scope"))
    repo.record_verdict("b", StoredVerdict("regressed", "a", "1 case regressed"))
    repo.accept_run("a", Acceptance("first", 100.0))
    repo.accept_run("b", Acceptance("manual", 300.0, "alice", "the new bar"))

    assert repo.verdicts_for(["a"]) == {"a": StoredVerdict("baseline", None, "the first run of its scope")}
    assert repo.acceptances_for(["b"]) == {"b": Acceptance("manual", 300.0, "alice", "the new bar")}
    # more ids than one query takes (500): the one past the first batch is read too
    many = [f"absent-{n}" for n in range(500)] + ["b"]
    assert repo.verdicts_for(many) == {"b": StoredVerdict("regressed", "a", "1 case regressed")}
    assert repo.acceptances_for(many) == {"b": Acceptance("manual", 300.0, "alice", "the new bar")}
    assert repo.verdicts_for([]) == {} and repo.acceptances_for([]) == {}


def test_a_scope_lock_key_is_the_same_in_every_version() -> None:
    """Two evalkit versions accepting first runs of one scope at once must take the same PostgreSQL
    lock: the key of a scope is pinned (a signed 64-bit number, so half the keys are negative)."""
    assert _scope_lock_key(SCOPE) == 9190962987405382864
    assert _scope_lock_key(BaselineScope(RunKind.RETRIEVAL, "q.set", retriever="r.one", deployment=None)) == 2908240756277742809
    hostile = BaselineScope(RunKind.RETRIEVAL, "q\udcff.set", retriever="r.one", deployment="prod")  # a lone surrogate
    assert _scope_lock_key(hostile) == -7078168076379169831


def test_a_base_system_prompt_gives_its_scope_its_own_lock_key_and_none_keeps_the_old_one() -> None:
    """A base system prompt starts its own scope, so two first runs of it must not wait on the lock
    of the scope without one (nor share it): its digest joins the key's text after one more 0x1f.
    Pinned from the formula: the first 8 bytes, big-endian and signed, of SHA-256 over
    "prompts\x1fpkg.set\x1fprod\x1fgpt\x1fgpt-2025\x1fdeterministic\x1f\x1f\x1fsha256:0123456789abcdef" in UTF-8.
    A scope whose base prompt is "" keeps the key it had before base prompts were kept."""
    fields = (RunKind.PROMPTS, "pkg.set", "prod", "gpt", "gpt-2025", "deterministic")
    assert _scope_lock_key(BaselineScope(*fields, base_prompt="sha256:0123456789abcdef")) == 6036220872168508376
    assert _scope_lock_key(BaselineScope(*fields, base_prompt="")) == 9190962987405382864
