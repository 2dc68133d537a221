"""The streamed end of a run on both engines: the store counts a run's cases and matches two runs'
cases a page at a time, and the verdict it gives is exactly the one computed from whole runs."""

from __future__ import annotations

import itertools
import math

import attrs
import pytest
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.grading import AGREEMENT_CHECK, Check
from evalkit.storage import CaseTally, StreamedCases
from evalkit.tolerance import Tolerances
from evalkit.verdict import compare, compare_pairs

IDENTITY = ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-2024-08-06")
_clock = itertools.count(5_000)


def _case(case_id: str, passed: bool, score: float | None = None, *, unstable: bool = False, error: str | None = None) -> CaseResult:
    checks = (Check("contains", passed),)
    if unstable:
        checks += (Check(AGREEMENT_CHECK, False),)
    return CaseResult(
        case_id=case_id, passed=passed and error is None, score=(1.0 if passed else 0.0) if score is None else score,
        checks=checks, identity=None if error else IDENTITY, yardstick=None if error else "deterministic",
        error=error, finished_at=1.0,
    )


def _store(repo, run_id: str, cases: list[CaseResult], fingerprints: dict[str, str] | None) -> None:
    """Store a complete run; ``fingerprints`` go onto its cases (``None``: a run stored before they were kept)."""
    if fingerprints is not None:
        cases = [attrs.evolve(c, fingerprint=fingerprints.get(c.case_id)) for c in cases]
    repo.begin_run(
        Run(
            id=run_id, set_identifier="pkg.set", grader="deterministic", case_count=len(cases),
            started_at=float(next(_clock)), provider_instance=IDENTITY.provider_instance,
            model_alias=IDENTITY.model_alias, fingerprints_kept=fingerprints is not None,
        )
    )
    # in several batches, so the stored order is the order given
    for start in range(0, len(cases), 7):
        repo.record_cases(run_id, cases[start : start + 7], "metadata")
    repo.finish_run(run_id, "complete", float(next(_clock)), grader="deterministic", identity=IDENTITY)


def _two_runs(repo) -> None:
    """A baseline and a run of a set that changed between them: kept, edited, added and removed
    cases, flips both ways, unstable cases on either side, scores that are not 0 or 1."""
    base = [_case(f"k{n:03d}", n % 3 != 0, score=[0.25, 1 / 3, 0.7][n % 3]) for n in range(40)]
    base += [_case("gone-1", True), _case("e-1", True), _case("e-2", False), _case("u-base", True, unstable=True)]
    base += [_case("gone-2", False, unstable=True)]
    now = [_case(f"k{n:03d}", n % 4 != 0, score=[0.5, 0.75, 1.0, 0.1][n % 4]) for n in reversed(range(40))]
    now += [_case("new-1", False), _case("new-2", True, unstable=True), _case("e-1", False), _case("e-2", True)]
    now += [_case("u-base", True), _case("k-now-unstable", True)]
    now.insert(5, _case("k-now-unstable-2", False, unstable=True))
    prints_base = {c.case_id: "fp-" + c.case_id for c in base}
    prints_now = {c.case_id: "fp-" + c.case_id for c in now}
    prints_now["e-1"] = prints_now["e-2"] = "changed"
    _store(repo, "base", base, prints_base)
    _store(repo, "now", now, prints_now)


@pytest.mark.parametrize("page", [1, 3, 2000])  # 1: the two removed cases take two pages
def test_the_streamed_comparison_is_the_whole_runs_comparison(repo, page) -> None:
    assert isinstance(repo, StreamedCases)
    _two_runs(repo)
    repo.PAGE_SIZE = page
    tolerances = Tolerances(0, 0)
    whole = compare(repo.get_run("now"), repo.get_run("base"), tolerances)
    now, base = repo.get_run("now", with_cases=False), repo.get_run("base", with_cases=False)
    assert not now.cases and not base.cases
    streamed = compare_pairs(now, base, repo.paired_cases("now", "base"), tolerances)
    assert streamed == whole
    assert set(streamed.added_cases) == {"new-1", "new-2", "k-now-unstable", "k-now-unstable-2"}
    assert streamed.removed_cases == ("gone-1", "gone-2")
    assert [e.case_id for e in streamed.edited_cases] == ["e-1", "e-2"]
    assert set(streamed.unstable_cases) == {"u-base", "gone-2", "new-2", "k-now-unstable-2"}
    assert streamed.regressed_cases and streamed.fixed_cases


def test_runs_stored_without_fingerprints_compare_alike_streamed(repo) -> None:
    _store(repo, "base", [_case("a", True), _case("b", False), _case("c", True)], None)
    _store(repo, "now", [_case("c", False), _case("a", True), _case("d", True)], {"a": "x", "c": "y", "d": "z"})
    whole = compare(repo.get_run("now"), repo.get_run("base"), Tolerances())
    streamed = compare_pairs(
        repo.get_run("now", with_cases=False), repo.get_run("base", with_cases=False), repo.paired_cases("now", "base"), Tolerances()
    )
    assert streamed == whole and not streamed.fingerprints_known and streamed.regressed_cases == ("c",)


def test_the_tally_counts_what_reading_every_case_gives(repo) -> None:
    other = ServingIdentity("prod-gpt", "gpt-4o", "gpt-4o-mini")
    cases = [_case("a", True, 0.7), _case("b", False, 1 / 3), _case("c", True, error="timeout")]
    cases += [attrs.evolve(_case("d", True), identity=other), attrs.evolve(_case("e", True), identity=None, yardstick="judge:x")]
    _store(repo, "r", cases, None)
    tally = repo.case_tally("r")
    run = repo.get_run("r")
    assert tally == CaseTally(
        answered=5, passed=3, errored=1, score_sum=math.fsum(c.score for c in cases if not c.errored),
        identities={IDENTITY: 2, other: 1, None: 1}, yardsticks=frozenset({"deterministic", "judge:x"}),
    )
    assert (run.answered_count, run.passed_count, run.errored_count) == (tally.answered, tally.passed, tally.errored)
    assert run.mean_score == pytest.approx(tally.score_sum / (tally.answered - tally.errored))
    assert repo.case_tally("no-such-run") == CaseTally()


@pytest.mark.parametrize("page", [2, 2000])
def test_iter_cases_reads_the_stored_order_and_the_notable_ones(repo, page) -> None:
    _two_runs(repo)
    repo.PAGE_SIZE = page
    whole = repo.get_run("now").cases
    assert tuple(repo.iter_cases("now")) == whole
    notable = tuple(repo.iter_cases("now", notable_only=True))
    assert notable == tuple(c for c in whole if not c.passed or c.unstable)
    assert any(c.passed and c.unstable for c in notable)


def test_finish_run_and_the_baseline_come_without_cases_when_asked(repo) -> None:
    _two_runs(repo)
    finished = repo.finish_run("now", "complete", 9e9, grader="deterministic", identity=IDENTITY, with_cases=False)
    whole = repo.get_run("now")
    assert not finished.cases and finished.answered_count == len(whole.cases) == whole.answered_count
    assert finished.passed_count == whole.passed_count and finished.mean_score == pytest.approx(whole.mean_score)


@pytest.mark.parametrize("page", [2, 2000])
def test_each_case_reads_back_with_its_own_fingerprint_on_every_path(repo, database_url, page) -> None:
    """A case's fingerprint is stored with the case: whole-run reads, streamed reads and the pairs
    of two runs give it back (across page borders); the run row says whether its cases have them."""
    from evalkit.storage import open_repository

    repo.PAGE_SIZE = page
    _store(repo, "one", [_case("a", True), _case("b", True), _case("gone", False)], {"a": "fp-a", "b": "fp-b", "gone": "fp-g"})
    other = open_repository(database_url)
    try:
        _store(other, "two", [_case("a", True), _case("b", False), _case("new", True)], {"a": "fp-a", "b": "fp-b2"})
        # A shard joining keeps the run as the first one stored it.
        joined = other.begin_run(Run(id="one", set_identifier="pkg.set", grader="deterministic", fingerprints_kept=False))
        assert joined.fingerprints_kept
    finally:
        other.close()
    _store(repo, "old", [_case("a", True)], None)
    assert [(c.case_id, c.fingerprint) for c in repo.get_run("two").cases] == [("a", "fp-a"), ("b", "fp-b2"), ("new", None)]
    assert [c.fingerprint for c in repo.iter_cases("one")] == ["fp-a", "fp-b", "fp-g"]
    assert [c.fingerprint for c in repo.iter_cases("two", notable_only=True)] == ["fp-b2"]
    assert repo.get_run("one", with_cases=False).fingerprints_kept and not repo.get_run("old").fingerprints_kept
    assert repo.get_run("old").cases[0].fingerprint is None
    pairs = {p.case_id: (p.current and p.current.fingerprint, p.baseline and p.baseline.fingerprint) for p in repo.paired_cases("two", "one")}
    assert pairs == {"a": ("fp-a", "fp-a"), "b": ("fp-b2", "fp-b"), "new": (None, None), "gone": (None, "fp-g")}
    streamed = compare_pairs(repo.get_run("two", with_cases=False), repo.get_run("one", with_cases=False), repo.paired_cases("two", "one"), Tolerances())
    assert [e.case_id for e in streamed.edited_cases] == ["b"] and streamed.compared_cases == ("a",) and streamed.fingerprints_known
    assert streamed == compare(repo.get_run("two"), repo.get_run("one"), Tolerances())
    # A resume replaces an errored case: the new result brings its own fingerprint.
    repo.begin_run(Run(id="resumed", set_identifier="pkg.set", grader="deterministic", fingerprints_kept=True))
    repo.record_cases("resumed", [attrs.evolve(_case("a", False, error="timeout"), fingerprint="fp-old")], "metadata")
    repo.record_cases("resumed", [attrs.evolve(_case("a", True), fingerprint="fp-new")], "metadata")
    assert [c.fingerprint for c in repo.get_run("resumed").cases] == ["fp-new"]


def test_cases_with_the_same_stored_checks_share_them_and_the_others_keep_their_own(repo) -> None:
    """Checks and token counts read back through a cache keyed by their stored text: equal texts
    give one shared (frozen) tuple, and a case whose checks or usage differ never gets another's."""
    from evalkit import Usage

    shapes = [
        (Check("contains", True), Check("matches_pattern", True)),
        (Check("contains", False), Check("matches_pattern", True)),
        (Check("contains", True, error="regex ran out of time"),),
        (),
    ]
    usages = [Usage(3, 5), None, Usage(3, 6), Usage(None, 2)]
    cases = [
        attrs.evolve(_case(f"c{n:02d}", True), checks=shapes[n % 4], passed=all(c.passed for c in shapes[n % 4]), usage=usages[n % 3])
        for n in range(24)
    ]
    _store(repo, "r", cases, None)
    read = list(repo.iter_cases("r"))
    assert [(c.case_id, c.checks, c.usage, c.passed) for c in read] == [(c.case_id, c.checks, c.usage, c.passed) for c in cases]
    assert read[0].checks is read[4].checks and read[1].checks is read[5].checks
    assert read[0].checks is not read[1].checks
    assert read[0].usage is read[3].usage and read[0].usage is not read[2].usage


def test_long_stored_checks_read_back_whole_and_are_not_kept(repo) -> None:
    """A check list longer than the cache takes (a plugin's detail can be any size) reads back
    whole, each time on its own; the short ones are still shared."""
    from evalkit.storage.sql import rows

    long_error = "unresolved citations: " + ", ".join(f"doc-{n}" for n in range(1000))
    long_checks = (Check("cites_sources", False, error=long_error),)
    cases = [attrs.evolve(_case(f"c{n}", False), checks=long_checks) for n in range(3)] + [_case("short", True)]
    _store(repo, "r", cases, None)
    before = rows._cached_checks.cache_info().currsize
    read = list(repo.iter_cases("r"))
    assert [c.checks for c in read[:3]] == [long_checks] * 3
    assert read[0].checks[0].passed is False and read[0].checks is not read[1].checks
    assert rows._cached_checks.cache_info().currsize <= before + 1


HOSTILE = "nul\x00 lone\udcff\ud800 escape\uffff\uffff0 bidi\u202e sep\u2028 \x1b[31m"


@pytest.mark.parametrize("privacy", ["full", "redacted", "metadata"])
def test_every_stored_column_reads_back_what_was_recorded_on_every_path(repo, privacy) -> None:
    """Each column ``record_cases`` writes (texts encoded for storage by hand, the statement
    bypassing the models) reads back exactly, through ``iter_cases`` and ``get_run``: NUL, lone
    surrogates and the escape character itself in every text, a non-ASCII measures key, token
    counts, an errored case; answers and details only where the privacy level keeps them; and
    ``record_cases_as_stored`` says exactly that without reading."""
    from evalkit import Usage

    identity = ServingIdentity("inst-" + HOSTILE, "alias-" + HOSTILE, "rep-" + HOSTILE)
    full = CaseResult(
        case_id="id-" + HOSTILE, passed=True, score=0.625, latency_s=0.125,
        checks=(Check("name-" + HOSTILE, True, detail="detail-" + HOSTILE), Check("second", False, error="err-" + HOSTILE)),
        identity=identity, adapter="adapter-" + HOSTILE, yardstick="judge:" + HOSTILE, answer_text="answer-" + HOSTILE,
        usage=Usage(7, None), detail={"why-" + HOSTILE: ["v-" + HOSTILE, 1.5, None]}, finished_at=42.5,
        measures={"recall_at_k": 0.5, "naïve-" + HOSTILE: 1.0}, fingerprint="fp-" + HOSTILE,
    )  # fmt: skip
    errored = CaseResult(case_id="errored-" + HOSTILE, passed=False, score=0.0, error="boom-" + HOSTILE, finished_at=43.0)
    repo.begin_run(Run(id="r", set_identifier="pkg.set", grader="deterministic", case_count=2, started_at=1.0))
    # what the store says it keeps, without reading (the CLI's --json of a large run prints that)
    said = repo.record_cases_as_stored("r", [full, errored], privacy)
    if privacy == "full":
        expected = [full, errored]
    else:
        kept = privacy == "redacted"  # redacted keeps scrubbed texts (these hold no secret shape)
        expected = [
            attrs.evolve(
                full,
                checks=tuple(attrs.evolve(c, detail=c.detail if kept else None) for c in full.checks),
                answer_text=full.answer_text if kept else None, detail=full.detail if kept else None,
            ),
            errored,
        ]  # fmt: skip
    assert list(repo.iter_cases("r")) == expected
    assert list(repo.get_run("r").cases) == expected
    assert said == expected


def test_cases_said_as_stored_go_through_a_subclass_record_cases(database_url) -> None:
    """A store built on the built-in one that changes what ``record_cases`` keeps is still the one
    that decides: what ``record_cases_as_stored`` says is what its ``record_cases`` wrote (here: in
    two writes, without fingerprints), and a subclass that keeps cases its own way says nothing
    (``None``: the CLI then reads the run back)."""
    from evalkit.storage.sql import SqlRepository

    class WithoutFingerprints(SqlRepository):
        def record_cases(self, run_id, cases, privacy) -> None:  # noqa: ANN001
            cases = [attrs.evolve(case, fingerprint=None) for case in cases]
            super().record_cases(run_id, cases[:1], privacy)
            super().record_cases(run_id, cases[1:], privacy)

    class KeptElsewhere(SqlRepository):
        def record_cases(self, run_id, cases, privacy) -> None:  # noqa: ANN001
            self.kept = list(cases)

    cases = [attrs.evolve(_case(f"c{n}", n % 2 == 0), fingerprint=f"fp{n}") for n in range(3)]
    repository = WithoutFingerprints(database_url)
    try:
        repository.begin_run(Run(id="r", set_identifier="pkg.set", grader="deterministic", case_count=3, started_at=1.0))
        said = repository.record_cases_as_stored("r", cases, "metadata")
        assert said == list(repository.iter_cases("r")) == [attrs.evolve(c, fingerprint=None) for c in cases]
    finally:
        repository.close()
    elsewhere = KeptElsewhere(database_url)
    try:
        assert elsewhere.record_cases_as_stored("r", cases, "metadata") is None
        assert elsewhere.kept == cases
    finally:
        elsewhere.close()


@pytest.mark.parametrize("privacy", ["metadata", "full"])
def test_judged_and_advisory_checks_keep_their_flags_and_an_advisory_failure_is_notable(repo, privacy) -> None:
    judged = (Check("contains", True), Check("rubric", False, detail="Curt.", judged=True, advisory=True))
    licensed = (Check("contains", True), Check("rubric", True, judged=True))
    cases = [
        CaseResult(case_id="advisory-fail", passed=True, score=1.0, checks=judged, identity=IDENTITY, yardstick="y", finished_at=1.0),
        CaseResult(case_id="judged-pass", passed=True, score=1.0, checks=licensed, identity=IDENTITY, yardstick="y", finished_at=1.0),
        _case("plain-pass", True),
    ]
    repo.begin_run(Run(id="flags", set_identifier="pkg.set", grader="y", case_count=3, started_at=float(next(_clock))))
    repo.record_cases("flags", cases, privacy)
    stored = {c.case_id: c for c in repo.iter_cases("flags")}
    assert [(c.name, c.judged, c.advisory) for c in stored["advisory-fail"].checks] == [("contains", False, False), ("rubric", True, True)]
    assert [(c.name, c.judged, c.advisory) for c in stored["judged-pass"].checks] == [("contains", False, False), ("rubric", True, False)]
    assert stored["advisory-fail"].checks[1].detail == ("Curt." if privacy == "full" else None)
    assert [c.case_id for c in repo.iter_cases("flags", notable_only=True)] == ["advisory-fail"]
