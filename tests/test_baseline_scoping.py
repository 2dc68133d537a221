"""Which earlier run is the baseline: exact scope, complete and verified runs only."""

from __future__ import annotations

import itertools

import pytest
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.baselines import Acceptance, BaselineScope
from evalkit.runs import RunStatus
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


def test_runs_that_carry_their_cases_are_compared_on_them_even_where_the_store_streams(repo) -> None:
    """The store pairs the cases only when both runs come without theirs: two runs held in memory
    (here unknown to the store) are compared on the cases they carry."""
    from evalkit.run.decide import compare_runs
    from evalkit.runs import RunStatus
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    store_capabilities = capabilities(repo)
    assert store_capabilities.streamed is not None
    before = Run(id="in-memory-before", set_identifier="pkg.set", grader="deterministic", status=RunStatus.COMPLETE,
                 cases=[CaseResult("c1", True, 1.0), CaseResult("c2", True, 1.0)])  # fmt: skip
    after = Run(id="in-memory-after", set_identifier="pkg.set", grader="deterministic", status=RunStatus.COMPLETE,
                cases=[CaseResult("c1", False, 0.0), CaseResult("c2", True, 1.0)])  # fmt: skip
    comparison = compare_runs(after, before, store_capabilities, Tolerances())
    assert comparison.regressed and comparison.regressed_cases == ("c1",)


def test_a_gate_on_new_failures_is_off_unless_the_caller_asks(repo) -> None:
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging
    from evalkit.storage import capabilities

    judging = Judging(capabilities(repo), PromptRules())
    assert judging.fail_on_new_failures is False and judging.baseline_id is None and judging.tally is None


def test_a_chosen_run_that_cannot_be_the_baseline_is_refused_with_the_reason(repo) -> None:
    from evalkit.baselines import BaselineScope, scope_mismatch
    from evalkit.runs import RunKind

    scope = BaselineScope(RunKind.PROMPTS, "pkg.set", "prod-gpt", "gpt-4o", "gpt-4o-2024-08-06", "deterministic")
    good = repo.get_run(store(repo))
    assert scope_mismatch(good, scope) is None
    other = repo.get_run(store(repo, ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-11-20")))
    assert scope_mismatch(other, scope) == (
        f'run {other.id} is of another scope (set "pkg.set", "gpt-4o-2024-11-20" ("prod-gpt/gpt-4o"), grader "deterministic"), '
        'not set "pkg.set", "gpt-4o-2024-08-06" ("prod-gpt/gpt-4o"), grader "deterministic"'
    )
    unfinished = repo.get_run(store(repo, status="interrupted"))
    assert scope_mismatch(unfinished, scope) == f"run {unfinished.id} is interrupted; only a complete run can be a baseline"
    unverified = repo.get_run(store(repo, errored=True))
    assert scope_mismatch(unverified, scope) == (
        f"run {unverified.id} has no verified serving identity (unverified), so it belongs to no scope"
    )


def test_who_accepts_is_the_user_variable_then_the_login_name_then_unknown(monkeypatch) -> None:
    import getpass

    from evalkit.baselines import current_user

    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("LOGNAME", "not-alice")  # what the login name would say
    assert current_user() == "alice"
    monkeypatch.setenv("USER", "")
    monkeypatch.setattr(getpass, "getuser", lambda: "bob")
    assert current_user() == "bob"

    def no_login_name() -> str:
        raise OSError("no login name")

    monkeypatch.setattr(getpass, "getuser", no_login_name)
    assert current_user() == "unknown"


def test_accepting_on_purpose_records_who_when_and_why_and_refuses_what_cannot_be_a_baseline(repo) -> None:
    from evalkit.baselines import MAX_REASON_CHARS, Acceptance, accept_run
    from evalkit.errors import UsageError

    run_id = store(repo)
    run, acceptance = accept_run(repo, run_id, "  a new prompt template ", by="ali\x1bce", at=5.0)
    assert run.id == run_id and acceptance == Acceptance("manual", 5.0, "ali\\x1bce", "a new prompt template")
    assert repo.acceptances_for([run_id]) == {run_id: acceptance}
    _, longest = accept_run(repo, run_id, "x" * MAX_REASON_CHARS, by="alice", at=6.0)
    assert longest.reason == "x" * MAX_REASON_CHARS

    refusals = [
        # accept_run's reason, named as its caller gave it: the command line's --reason is its own (tests/cli)
        ((run_id, " \t"), "reason must say why this run is accepted (it is recorded with the acceptance)"),
        ((run_id, "x" * (MAX_REASON_CHARS + 1)), "reason is 1,001 characters long, more than the 1,000 allowed"),
        ((run_id, "two\nlines"), "reason must be printable text on one line, got 'two\\nlines'"),
        (("no-such-run", "why"), 'there is no run "no-such-run" in the store (see `evalkit history SET` for run ids)'),
    ]
    incomplete = store(repo, status="interrupted")
    refusals.append(((incomplete, "why"), f"run {incomplete} is interrupted: only a complete run can be accepted as a baseline"))
    unverified = store(repo, errored=True)
    refusals.append(((unverified, "why"), f"run {unverified} has no verified serving identity (unverified), so it "
                                          "belongs to no baseline scope and cannot be accepted"))  # fmt: skip
    for (chosen, reason), message in refusals:
        with pytest.raises(UsageError) as refused:
            accept_run(repo, chosen, reason, by="alice", at=7.0)
        assert str(refused.value) == message
    assert repo.acceptances_for([run_id, incomplete, unverified]) == {run_id: longest}, "nothing written by a refusal"


def test_the_current_baselines_of_a_set_narrowed_by_parts_of_their_scope(repo) -> None:
    from evalkit.baselines import Acceptance, current_baselines
    from evalkit.runs import RunKind

    older = store(repo)
    newer = store(repo)
    judged = store(repo, grader="decision:judge:gpt-4o:v1")
    staging = store(repo, ServingIdentity("staging-gpt", "gpt-4o", "gpt-4o-2024-08-06"))
    mini = store(repo, ServingIdentity("prod-gpt", "gpt-4o-mini", "gpt-4o-2024-08-06"))
    store(repo)  # not accepted: never a current baseline
    repo.begin_run(Run(id="retrieval", set_identifier="pkg.set", grader="retrieval_hit_rate", kind=RunKind.RETRIEVAL,
                       retriever="r.one", deployment="prod", started_at=1.0))  # fmt: skip
    repo.finish_run("retrieval", "complete", 2.0)
    for number, run_id in enumerate([older, newer, judged, staging, mini, "retrieval"]):
        repo.accept_run(run_id, Acceptance("first", 10.0 + number))

    def ids(**narrowed: str) -> list[str]:
        return sorted(b.run.id for b in current_baselines(repo, "pkg.set", **narrowed))

    assert ids() == sorted([newer, judged, staging, mini, "retrieval"]), "one per scope, the most recently accepted"
    shown = {b.run.id: b for b in current_baselines(repo, "pkg.set")}
    assert shown[newer].acceptance == Acceptance("first", 11.0) and shown[newer].scope.grader == "deterministic"
    assert ids(provider_instance="staging-gpt") == [staging]
    assert ids(model_alias="gpt-4o-mini") == [mini]
    assert ids(grader="deterministic") == sorted([newer, staging, mini])
    assert ids(grader="decision") == [judged], "a grader matches its yardstick's prefix"
    assert ids(grader="decision:judge:gpt-4o:v1") == [judged]
    assert ids(grader="decis") == [], "a prefix counts up to a colon only"
    assert ids(retriever="r.one") == ["retrieval"] and ids(retriever="r.two") == []
    assert ids(deployment="prod") == ["retrieval"]
    assert ids(provider_instance="prod-gpt", model_alias="gpt-4o") == sorted([newer, judged])


def test_an_unfinished_run_is_not_compared_and_says_why(repo) -> None:
    from evalkit.run.decide import incomplete_reason

    run = repo.get_run(store(repo, status="incomplete", errored=True), with_cases=False)
    assert incomplete_reason(run, "case") == (
        "not compared: the run is incomplete (1 errored case), so it is never a baseline and is not compared"
    )
    assert incomplete_reason(run, "question", None) == (
        "not compared: the run is incomplete (1 errored question), so it is never a baseline and is not compared"
    )


def test_a_run_a_spending_limit_stopped_says_which_limit_not_zero_errored_cases(repo) -> None:
    """A run --max-requests or --budget stopped said "incomplete (0 errored cases)": the limit is why."""
    from evalkit.run.decide import incomplete_reason

    clean = repo.get_run(store(repo, status="incomplete"), with_cases=False)
    assert clean.errored_count == 0
    assert incomplete_reason(clean, "case", "the limit of 2 requests reached") == (
        "not compared: the run is incomplete (a spending limit stopped it: the limit of 2 requests reached), "
        "so it is never a baseline and is not compared"
    )
    errored = repo.get_run(store(repo, status="incomplete", errored=True), with_cases=False)
    assert incomplete_reason(errored, "case", "the budget of 0.03 EUR reached") == (
        "not compared: the run is incomplete (a spending limit stopped it: the budget of 0.03 EUR reached; 1 errored case), "
        "so it is never a baseline and is not compared"
    )
    assert incomplete_reason(clean, "case") == (
        "not compared: the run is incomplete (0 errored cases), so it is never a baseline and is not compared"
    )


def test_a_run_with_a_new_failing_case_is_accepted_unless_new_failures_gate(repo) -> None:
    """No regression against the accepted run, and an added case fails: not accepted either way —
    not worse, but not significantly better (issue 33: the bar moves only on purpose) — and never
    when the caller gates on new failures."""
    from evalkit.baselines import Acceptance
    from evalkit.evaluation import automatic_acceptance, verdict_for
    from evalkit.run.decide import automatic_acceptance as decide_acceptance
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    accepted = store(repo)
    repo.accept_run(accepted, Acceptance("first", 1.0))
    _stored_run(repo, "with-a-new-case", {"c1": True, "c-new": False})
    verdict = verdict_for(repo.get_run("with-a-new-case"), repo, Tolerances.parse("1", "1"))
    assert verdict.state == "no_regression" and verdict.comparison.new_failures == ("c-new",)
    store_capabilities = capabilities(repo)
    assert decide_acceptance(verdict, store_capabilities, 2.0) is None
    assert decide_acceptance(verdict, store_capabilities, 2.0, fail_on_new_failures=True) is None
    assert automatic_acceptance(verdict, repo, 2.0) is None


def _stored_run(repo, run_id: str, passes: dict[str, bool], *, grader: str = "deterministic",
                yardsticks: dict[str, str] | None = None) -> str:  # fmt: skip
    """A complete run of ``pkg.set`` with these cases (passed or not), each graded by ``grader``
    unless ``yardsticks`` names another for it."""
    now = float(next(_clock))
    repo.begin_run(Run(id=run_id, set_identifier="pkg.set", grader=grader, started_at=now, case_count=len(passes),
                       provider_instance=IDENTITY.provider_instance, model_alias=IDENTITY.model_alias))  # fmt: skip
    repo.record_cases(run_id, [CaseResult(case_id, ok, 1.0 if ok else 0.0, identity=IDENTITY,
                                          yardstick=(yardsticks or {}).get(case_id, grader))
                               for case_id, ok in passes.items()], "metadata")  # fmt: skip
    repo.finish_run(run_id, "complete", now + 0.5, grader=grader, identity=IDENTITY)
    return run_id


def test_a_better_run_with_an_added_failing_case_is_accepted_only_when_new_failures_do_not_gate(repo) -> None:
    """Six cases fixed and none regressed (one-sided McNemar p = 1/2**6 = 1/64 on pass_rate, the same
    on mean_score; Holm: 2/64 <= 0.05): significantly better, so accepted automatically — unless the
    caller gates on new failures, for the added case "c-new" fails. Gating is the caller's choice:
    without ``fail_on_new_failures`` the added failure does not block the acceptance."""
    from evalkit.baselines import Acceptance
    from evalkit.evaluation import verdict_for
    from evalkit.run.decide import automatic_acceptance
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    cases = [f"c{i}" for i in range(8)]
    accepted = _stored_run(repo, "six-failing", {c: i >= 6 for i, c in enumerate(cases)})
    repo.accept_run(accepted, Acceptance("first", 1.0))
    now = _stored_run(repo, "all-fixed-one-added", {**dict.fromkeys(cases, True), "c-new": False})
    verdict = verdict_for(repo.get_run(now, with_cases=False), repo, Tolerances())
    assert verdict.state == "no_regression" and verdict.comparison.new_failures == ("c-new",)
    store_capabilities = capabilities(repo)
    acceptance = automatic_acceptance(verdict, store_capabilities, 2.0)
    reason = "significantly better than the baseline on pass_rate, mean_score (alpha 0.05), against accepted run "
    reason += "six-failing"
    assert acceptance == Acceptance("no_regression", 2.0, None, reason)
    assert automatic_acceptance(verdict, store_capabilities, 2.0, fail_on_new_failures=True) is None


def test_a_run_read_without_its_cases_is_checked_for_one_yardstick_from_the_stores_tally(repo) -> None:
    """A store that streams cases hands the run over without them, so the rule "one yardstick per
    run" is checked on the store's count of the run's cases: a run graded "decision:j:m:v1" for one
    case and "decision:k:m:v1" for another (two judges, neither refining the other) is not compared,
    case-less as it comes."""
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, decide
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    _stored_run(repo, "two-judges", {"c1": True, "c2": True}, grader="decision:j:m:v1", yardsticks={"c2": "decision:k:m:v1"})
    run = repo.get_run("two-judges", with_cases=False)
    assert run.cases == ()
    verdict = decide(run, Judging(capabilities(repo), PromptRules(), Tolerances()))
    assert (verdict.state, verdict.reason) == (
        "not_comparable",
        'not compared: the gradings of this run do not share one yardstick (stored as "decision:j:m:v1"); '
        "a grading failed for some cases, or the judge model changed during the run",
    )


def test_settling_a_significantly_better_run_records_it_as_the_scopes_new_baseline(repo) -> None:
    """The lifecycle's last step (settle: decide, keep, accept): six cases fixed and none
    regressed against the accepted run (p = 1/64 on each metric, Holm 2/64 <= 0.05), so the run is
    accepted as "no_regression" — recorded in the store, carried by the verdict — and is now the
    baseline the scope's next run is compared with."""
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, settle
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    cases = [f"c{i}" for i in range(8)]
    accepted = _stored_run(repo, "settle-six-failing", {c: i >= 6 for i, c in enumerate(cases)})
    repo.accept_run(accepted, Acceptance("first", 1.0))
    better = _stored_run(repo, "settle-all-fixed", dict.fromkeys(cases, True))
    verdict = settle(repo.get_run(better, with_cases=False), Judging(capabilities(repo), PromptRules(), Tolerances()))
    assert verdict.state == "no_regression" and verdict.comparison.baseline_id == accepted
    reason = "significantly better than the baseline on pass_rate, mean_score (alpha 0.05), against accepted run settle-six-failing"
    assert (verdict.acceptance.how, verdict.acceptance.reason) == ("no_regression", reason)
    assert repo.acceptances_for([better]) == {better: verdict.acceptance}
    assert repo.verdicts_for([better])[better].state == "no_regression"
    scope = BaselineScope.of_run(repo.get_run(better, with_cases=False))
    assert repo.accepted_baseline(scope, with_cases=False).id == better


def test_the_first_run_of_a_scope_is_accepted_as_such(repo) -> None:
    from evalkit.baselines import Acceptance
    from evalkit.evaluation import automatic_acceptance, verdict_for
    from evalkit.tolerance import Tolerances

    first = repo.get_run(store(repo))
    verdict = verdict_for(first, repo, Tolerances())
    assert verdict.state == "baseline"
    assert automatic_acceptance(verdict, repo, 3.0) == Acceptance("first", 3.0, None, "the first run of its scope")


def test_a_chosen_baseline_that_cannot_serve_is_named_in_the_verdict(repo) -> None:
    from evalkit.evaluation import verdict_for
    from evalkit.run.decide import Judging, decide
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    current = repo.get_run(store(repo))
    gone = verdict_for(current, repo, Tolerances(), baseline_id="no-such-run")
    assert (gone.state, gone.reason) == ("not_comparable", "not compared with the chosen baseline: run no-such-run is no longer in the store")
    other = store(repo, ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-11-20"))
    elsewhere = verdict_for(current, repo, Tolerances(), baseline_id=other)
    assert elsewhere.state == "not_comparable"
    assert elsewhere.reason.startswith(f"not compared with the chosen baseline: run {other} is of another scope (")

    unverified = repo.get_run(store(repo, errored=True, status="complete"))
    nowhere = decide(unverified, Judging(capabilities(repo), _any_run_rules(), baseline_id=current.id))
    assert (nowhere.state, nowhere.reason) == ("not_comparable", "not compared with the chosen baseline: this run belongs to no scope")


def test_a_baseline_file_that_cannot_serve_is_named_in_the_verdict(repo) -> None:
    """``--baseline-file``: a run of another serving identity is not compared with, and a run that
    belongs to no scope cannot be compared with a file either; the verdict says which."""
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, decide
    from evalkit.storage import capabilities
    from evalkit.tolerance import Tolerances

    current = repo.get_run(store(repo))
    other = repo.get_run(store(repo, ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-11-20")))
    elsewhere = decide(current, Judging(capabilities(repo), PromptRules(), Tolerances(), baseline_run=other))
    assert elsewhere.state == "not_comparable"
    assert elsewhere.reason.startswith(f"not compared with the baseline file: run {other.id} is of another scope (")

    unverified = repo.get_run(store(repo, errored=True, status="complete"))
    nowhere = decide(unverified, Judging(capabilities(repo), _any_run_rules(), baseline_run=current))
    assert nowhere.state == "not_comparable"
    assert nowhere.reason == "not compared with the baseline file: this run belongs to no scope"


def test_the_verdict_the_closing_shard_stored_is_read_back_and_compared_again(repo) -> None:
    """What the final job of a sharded CI run prints and exits on: the stored verdict, its baseline
    compared again under the job's tolerances, the acceptance the closing process recorded; a run
    stored without a verdict, or not complete, is decided now."""
    from evalkit.baselines import Acceptance
    from evalkit.evaluation import stored_run_verdict
    from evalkit.storage.values import StoredVerdict
    from evalkit.tolerance import Tolerances

    def read_back(run_id: str, tolerances: Tolerances = Tolerances()):  # noqa: ANN202, B008
        return stored_run_verdict(repo.get_run(run_id), repo, tolerances)

    base = store(repo)
    repo.accept_run(base, Acceptance("first", 1.0))
    repo.record_verdict(base, StoredVerdict("baseline", None, "recorded as the baseline"))
    first = read_back(base)
    assert (first.state, first.reason, first.acceptance) == ("baseline", "recorded as the baseline", Acceptance("first", 1.0))

    worse = store(repo, passed=False)
    repo.record_verdict(worse, StoredVerdict("regressed", base, "1 case regressed"))
    regressed = read_back(worse)
    assert regressed.state == "regressed" and regressed.acceptance is None
    assert regressed.comparison.baseline_id == base and regressed.comparison.regressed_cases == ("c1",)
    assert read_back(worse, Tolerances.parse("1", "1")).state == "no_regression", "compared again, under these tolerances"

    kept_note = store(repo)
    repo.record_verdict(kept_note, StoredVerdict("not_comparable", None, "not compared: the grader failed"))
    assert (read_back(kept_note).state, read_back(kept_note).reason) == ("not_comparable", "not compared: the grader failed")

    orphan = store(repo)
    repo.record_verdict(orphan, StoredVerdict("regressed", "deleted-run", "1 case regressed against deleted-run"))
    gone = read_back(orphan)
    assert (gone.state, gone.reason, gone.comparison) == ("not_comparable", "1 case regressed against deleted-run", None)

    unrecorded = read_back(store(repo))
    assert unrecorded.state == "no_regression" and unrecorded.comparison.baseline_id == base

    incomplete = store(repo, status="incomplete", errored=True)
    repo.record_verdict(incomplete, StoredVerdict("baseline", None, "a stale note"))
    decided_now = read_back(incomplete)
    assert decided_now.state == "not_comparable" and decided_now.reason.startswith("not compared: the run is incomplete")


def test_a_store_without_accepted_baselines_is_named_in_the_refusal_and_the_verdict(repo) -> None:
    from evalkit.baselines import accept_run, current_baselines, unreadable_baseline
    from evalkit.errors import StorageError, UsageError
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, decide
    from evalkit.storage.protocols import Capabilities

    without = Capabilities(repository=repo, scoped=repo)  # a store that keeps no acceptances
    run_id = store(repo)
    with pytest.raises(UsageError) as refused:
        accept_run(without, run_id, "why", by="alice", at=1.0)
    assert str(refused.value) == (
        "the configured repository (Capabilities) cannot keep accepted baselines: it lacks the AcceptedBaselines capability"
    )
    with pytest.raises(UsageError) as refused:
        current_baselines(without, "pkg.set")
    assert str(refused.value) == (
        "the configured repository (Capabilities) keeps no accepted baselines: it lacks the AcceptedBaselines capability"
    )
    verdict = decide(repo.get_run(run_id), Judging(without, PromptRules()))
    assert (verdict.state, verdict.reason) == (
        "not_comparable",
        "not compared: the configured repository keeps no accepted baselines (AcceptedBaselines capability)",
    )
    assert unreadable_baseline(StorageError("a row this version cannot read")) == (
        "not compared: the baseline could not be read from the store — a row this version cannot read"
    )


def test_a_set_changed_when_a_case_was_only_added_only_removed_or_only_edited() -> None:
    from evalkit.set_versions import CaseSplit

    for edited, added, removed in ((("e",), (), ()), ((), ("a",), ()), ((), (), ("r",))):
        assert CaseSplit(("u",), edited, added, removed, True).set_changed
    assert not CaseSplit(("u",), (), (), (), True).set_changed


def _any_run_rules():  # noqa: ANN202
    """Prompt rules that find no problem with any run, so a run without a scope reaches the baseline."""
    from evalkit.run.answering.prompts import PromptRules

    class AnyRun(PromptRules):
        def run_problem(self, run, judging):  # noqa: ANN001, ANN201
            return None

    return AnyRun()


@pytest.mark.parametrize(
    ("status", "todo"),
    [
        (
            RunStatus.RUNNING,
            "wait until it completes, or continue it if its process is gone (`evalkit show r7` says which)",
        ),
        (RunStatus.INCOMPLETE, "continue it (`evalkit show r7` prints the command that does)"),
        (RunStatus.INTERRUPTED, "continue it (`evalkit show r7` prints the command that does)"),
    ],
)
def test_a_chosen_baseline_that_is_not_complete_is_told_what_to_do_by_its_status(status: RunStatus, todo: str) -> None:
    # a running run may still be answered (wait) or be a killed one that stays "running" (continue it);
    # an incomplete or interrupted one can only be continued
    from evalkit.baselines import not_complete

    said = not_complete(Run("r7", "s.x", "deterministic", status=status), "--baseline r7")
    assert said == f"--baseline r7 is {status.value}, and only a complete run can be a baseline: {todo}, or choose a complete run"
    assert not_complete(Run("r7", "s.x", "deterministic", status=RunStatus.COMPLETE), "--baseline r7") is None
