"""``evaluate_retrieval`` as a library call, and the pieces it is made of: deployments, stored cases, stored provenance.

The CLI tests (tests/cli/test_retrieval_cmd.py) drive every baseline state and misbehaving
retriever through real subprocesses; these tests pin what is stored and how options are resolved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from evalkit import GoldenQuestion, GoldenQuestionSet, QuestionForm, RetrievalProvenance, hookimpl
from evalkit.catalog import SourcedSet
from evalkit.config import Config
from evalkit.errors import PluginError, SetValidationError, UsageError
from evalkit.project_files import OutsideProjectError
from evalkit.registry import PluginRecord
from evalkit.retrieval import QuestionScore, aggregate, retrieval_identity
from evalkit.retrieval.evaluation import (
    DEPLOYMENT_ENV,
    GRADER,
    case_from_score,
    evaluate_retrieval,
    metrics_document,
    provenance_document,
    resolve_deployment,
    retrieval_limit,
    stored_benchmark,
)
from evalkit.runs import Run, RunKind, RunStatus
from evalkit.storage import open_repository

DOCS = [
    {"id": "json.loads", "title": "json.loads", "text": "Deserialize a JSON document string into a Python object."},
    {"id": "json.dumps", "title": "json.dumps", "text": "Serialize a Python object to a JSON formatted string."},
    {"id": "csv.reader", "title": "csv.reader", "text": "Iterate over the rows of a comma separated values file."},
    {"id": "time.sleep", "title": "time.sleep", "text": "Suspend execution of the calling thread for some seconds."},
    {"id": "shutil.copy", "title": "shutil.copy", "text": "Copy the contents and permission bits of a file."},
]

SET = GoldenQuestionSet(
    "tests.lexical",
    "Lexical questions",
    questions=[
        GoldenQuestion("parse", "deserialize a JSON document", QuestionForm.MATCH, ["json.loads"], "near-duplicate"),
        GoldenQuestion("dump", "serialize an object to JSON", QuestionForm.MATCH, ["json.dumps"], "near-duplicate"),
        GoldenQuestion("rows", "iterate over csv rows", QuestionForm.MATCH, ["csv.reader"]),
        GoldenQuestion("nap", "take a break for a moment", QuestionForm.GAP, ["time.sleep"], "normal"),
        GoldenQuestion("none", "zebra giraffe safari", QuestionForm.GAP, [], "out-of-scope"),
    ],
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    return path


@pytest.fixture
def config(corpus: Path, tmp_path: Path) -> Config:
    options = {"corpus": str(corpus), "index_dir": str(tmp_path / "indexes")}
    return Config(deployments={"t": {"evalkit.lexical": options}})


def run_lexical(config: Config, url: str, **options: Any):  # noqa: ANN201
    return evaluate_retrieval(SET, "evalkit.lexical", deployment="t", config=config, database=url, **options)


# -- deployments --------------------------------------------------------------------------------


class Provider:
    def __init__(self, deployments: Any) -> None:
        self.deployments = deployments

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        return [SET]

    def default_deployments(self) -> Any:
        if isinstance(self.deployments, Exception):
            raise self.deployments
        return self.deployments


def sourced(deployments: Any) -> SourcedSet:
    record = PluginRecord("evalkit.question_sets", "tests", "tests:Provider", "tests-dist", "1.0")
    return SourcedSet(SET, record, Provider(deployments))


class PathFactory:
    path_options = ("corpus", "index_dir")


def test_no_deployment_means_no_options_and_the_environment_names_one(monkeypatch) -> None:
    monkeypatch.delenv(DEPLOYMENT_ENV, raising=False)
    assert resolve_deployment(None, "r", Config()) == resolve_deployment(None, "r", Config(), sourced=sourced({}))
    assert resolve_deployment(None, "r", Config()).name is None
    config = Config(deployments={"qa": {"r": {"url": "http://qa"}}, "prod": {"r": {"url": "http://prod"}}})
    monkeypatch.setenv(DEPLOYMENT_ENV, "qa")
    assert resolve_deployment(None, "r", config).options == {"url": "http://qa"}
    assert resolve_deployment("prod", "r", config).options == {"url": "http://prod"}
    # set but empty is a CI variable the job could not read, refused as an empty EVALKIT_DATABASE_URL is
    monkeypatch.setenv(DEPLOYMENT_ENV, "")
    with pytest.raises(UsageError, match="EVALKIT_DEPLOYMENT is set but empty"):
        resolve_deployment(None, "r", config)
    with pytest.raises(UsageError, match="must name a deployment"):
        resolve_deployment("", "r", config)


def test_configured_deployments_replace_provided_ones_of_the_same_name(tmp_path: Path) -> None:
    config = Config(path=tmp_path / "evalkit.toml", deployments={"demo": {"r": {"corpus": "mine.jsonl"}}})
    provided = sourced({"demo": {"r": {"corpus": "/pkg/theirs.jsonl"}}, "extra": {"r": {"corpus": "/pkg/x.jsonl"}}})
    mine = resolve_deployment("demo", "r", config, sourced=provided, factory=PathFactory)
    assert mine.options == {"corpus": str(tmp_path / "mine.jsonl")}
    assert mine.source == f"configuration {tmp_path / 'evalkit.toml'}"
    theirs = resolve_deployment("extra", "r", config, sourced=provided, factory=PathFactory)
    assert theirs.options == {"corpus": "/pkg/x.jsonl"} and theirs.source == 'provider "tests" (tests-dist 1.0)'
    with pytest.raises(
        UsageError, match=r'Unknown deployment "nope" \(deployment=nope\)\. Known deployments: demo, extra'
    ):
        resolve_deployment("nope", "r", config, sourced=provided)


def test_only_declared_path_options_are_resolved_against_the_configuration_folder(tmp_path: Path) -> None:
    options = {"corpus": "data/c.jsonl", "index_dir": "~/idx", "collection": "data/c.jsonl", "title_weight": 2}
    home_allowed = {"sets": {"allow_outside": ["~"]}}  # ~/idx lies outside the project
    config = Config(path=tmp_path / "evalkit.toml", deployments={"d": {"r": options}}, raw=home_allowed)
    resolved = resolve_deployment("d", "r", config, factory=PathFactory).options
    assert resolved["corpus"] == str(tmp_path / "data" / "c.jsonl")
    assert resolved["index_dir"] == "~/idx"  # not relative: left to the retriever
    assert resolved["collection"] == "data/c.jsonl" and resolved["title_weight"] == 2
    assert resolve_deployment("d", "r", config, factory=object).options == options


def test_a_path_option_outside_the_project_is_refused_unless_allowed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "data").mkdir(parents=True)
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "link.jsonl").symlink_to(outside / "data")
    for corpus, leads in (
        ("data/link.jsonl", f"resolves to {outside / 'data'}, outside"),
        (str(outside / "data"), "lies outside"),
    ):
        config = Config(path=project / "evalkit.toml", deployments={"d": {"r": {"corpus": corpus}}})
        with pytest.raises(OutsideProjectError) as refused:
            resolve_deployment("d", "r", config, factory=PathFactory)
        message = str(refused.value)
        assert message.startswith(
            f'option "corpus" of [deployments.d.retrievers."r"] of configuration {project / "evalkit.toml"}: {corpus} '
        )
        assert leads in message and f'allow_outside = ["{outside / "data"}"]' in message
        allowed = attrs.evolve(config, raw={"sets": {"allow_outside": [str(outside)]}})
        assert resolve_deployment("d", "r", allowed, factory=PathFactory).options["corpus"] in (
            str(project / corpus),
            corpus,
        )


def test_a_provider_whose_deployments_are_broken_is_named(monkeypatch) -> None:
    monkeypatch.delenv(DEPLOYMENT_ENV, raising=False)
    with pytest.raises(
        PluginError, match=r'"tests" \(tests-dist 1.0\) raised RuntimeError in default_deployments\(\): boom'
    ):
        resolve_deployment("demo", "r", Config(), sourced=sourced(RuntimeError("boom")))
    with pytest.raises(PluginError, match=r"default_deployments\(\) must return"):
        resolve_deployment("demo", "r", Config(), sourced=sourced({"demo": ["not", "a", "table"]}))
    # Not asked at all when no deployment is chosen.
    assert resolve_deployment(None, "r", Config(), sourced=sourced(RuntimeError("boom"))).name is None


# -- what is stored -----------------------------------------------------------------------------


def score(hit1: bool, hit3: bool, ranked: tuple[str, ...] = ("a", "b")) -> QuestionScore:
    return QuestionScore("q", QuestionForm.GAP, "normal", ranked, hit1, hit3, 0.5, 1.0, 0.63, 0.002)


def test_a_case_passes_on_a_top1_hit_and_scores_on_a_top3_hit() -> None:
    miss = case_from_score(score(False, True), 10, finished_at=5.0)
    assert (miss.passed, miss.score, miss.yardstick) == (False, 1.0, GRADER)
    assert [(c.name, c.passed) for c in miss.checks] == [("hit_at_1", False), ("hit_at_3", True)]
    assert miss.detail == {
        "form": "gap", "hard_class": "normal", "ranked_ids": ["a", "b"], "reciprocal_rank_at_k": 0.5,
        "recall_at_k": 1.0, "ndcg_at_k": 0.63, "k": 10,
    }  # fmt: skip
    assert miss.latency_s == 0.002 and miss.finished_at == 5.0
    assert case_from_score(score(False, False), 10).score == 0.0
    assert case_from_score(score(True, True), 10).passed


def test_metrics_document_holds_every_metric_and_breakdown() -> None:
    metrics = aggregate([score(True, True), score(False, True)], 10)
    document = metrics_document(metrics, errored=2)["retrieval"]
    assert document["top1_hit_rate"] == 0.5 and document["top3_hit_rate"] == 1.0 and document["errored_questions"] == 2
    assert document["by_form"]["gap"]["questions"] == 2 and document["by_hard_class"]["normal"]["mrr_at_k"] == 0.5
    assert document["mrr_at_k"] == 0.5 and "mrr" not in document
    json.dumps(document)


def test_provenance_document_keeps_declarations_labels_and_k() -> None:
    declared = RetrievalProvenance("corpus-1", "not-applicable", "whole", "pipe-1", None)
    known = provenance_document(retrieval_identity(SET, declared, 10))
    assert known["corpus_revision"] == "corpus-1" and known["execution_revision"] is None
    assert known["labels_fingerprint"].startswith("v1:") and known["k"] == 10 and "problems" not in known
    unknown = provenance_document(retrieval_identity(SET, None, 5))
    assert set(unknown) == {"labels_fingerprint", "scoring_version", "k"}
    invalid = provenance_document(retrieval_identity(SET, attrs.evolve(declared, corpus_revision="http://x"), 10))
    assert "corpus_revision" not in invalid and len(invalid["problems"]) == 1


VALID = {
    "corpus_revision": "c1", "model_revision": "m1", "chunking_identity": "whole", "pipeline_identity": "p1",
    "execution_revision": None,
}  # fmt: skip


@pytest.mark.parametrize(
    ("provenance", "expected"),
    [
        (VALID, "v1:abc"),
        ({**VALID, "execution_revision": "e1"}, "v1:abc"),
        (None, ""),
        ("plain-string", ""),
        ([], ""),
        ({**VALID, "model_revision": 12}, ""),
        ({**VALID, "corpus_revision": "https://host/v1"}, ""),
        ({**VALID, "pipeline_identity": "not-applicable"}, ""),
        ({**VALID, "execution_revision": []}, ""),
        ({k: v for k, v in VALID.items() if k != "chunking_identity"}, ""),
    ],
)
def test_a_stored_run_counts_as_known_only_with_a_valid_stored_declaration(provenance, expected) -> None:
    run = Run("r", "s", GRADER, kind=RunKind.RETRIEVAL, benchmark_fingerprint="v1:abc", provenance=provenance)
    assert stored_benchmark(run) == expected
    assert stored_benchmark(attrs.evolve(run, benchmark_fingerprint="")) == ""


def test_limit_overfetches_to_at_least_twelve() -> None:
    assert [retrieval_limit(k) for k in (1, 3, 10, 12, 13, 100)] == [12, 12, 12, 12, 13, 100]


# -- a whole run --------------------------------------------------------------------------------


def test_a_run_stores_hits_metrics_provenance_and_deployment_at_metadata_privacy(config, sqlite_url) -> None:
    outcome = run_lexical(config, sqlite_url)
    assert outcome.verdict.state == outcome.detail.baseline_state == "baseline" and outcome.exit_code(True) == 0
    assert outcome.detail.prepare_seconds is not None
    assert outcome.detail.scores["parse"].ranked_ids[0] == "json.loads"
    assert outcome.detail.scores["none"].ranked_ids == () and outcome.detail.scores["none"].hit_at_1
    repository = open_repository(sqlite_url)
    try:
        run = repository.get_run(outcome.run.id)
        verdict = repository.verdicts_for([run.id])[run.id]
    finally:
        repository.close()
    metrics = outcome.detail.metrics
    assert run.kind is RunKind.RETRIEVAL and run.status is RunStatus.COMPLETE and run.grader == GRADER
    assert (run.retriever, run.deployment, run.privacy) == ("evalkit.lexical", "t", "metadata")
    assert float(run.pass_rate) == metrics.top1_hit_rate and run.mean_score == pytest.approx(metrics.top3_hit_rate)
    assert run.metrics == json.loads(json.dumps(metrics_document(metrics)))
    assert run.benchmark_fingerprint == outcome.detail.identity.benchmark_fingerprint != ""
    assert run.provenance["pipeline_identity"] == "evalkit.lexical-fts5-bm25-v1"
    assert run.set_fingerprint == outcome.detail.identity.labels_fingerprint
    assert verdict.state == "baseline"
    for case in run.cases:
        assert [c.name for c in case.checks] == ["hit_at_1", "hit_at_3"]
        assert case.detail is None  # document ids can name content: kept at redacted and full only
        assert case.passed == outcome.detail.scores[case.case_id].hit_at_1


def test_full_privacy_keeps_rankings_and_per_question_metrics(config, sqlite_url) -> None:
    outcome = run_lexical(config, sqlite_url, privacy="full", label="v2 prompt")
    repository = open_repository(sqlite_url)
    try:
        run = repository.get_run(outcome.run.id)
    finally:
        repository.close()
    assert run.label == "v2 prompt"
    detail = run.case_map()["parse"].detail
    assert detail["ranked_ids"][0] == "json.loads" and detail["k"] == 10
    assert detail["reciprocal_rank_at_k"] == outcome.detail.scores["parse"].reciprocal_rank_at_k


def test_concurrency_keeps_set_order_and_scores(config, sqlite_url) -> None:
    sequential = run_lexical(config, sqlite_url)
    parallel = run_lexical(config, sqlite_url, concurrency=4)
    assert list(parallel.detail.scores) == [q.id for q in SET.questions]
    strip = lambda s: attrs.evolve(s, latency_s=0.0)  # noqa: E731
    assert [strip(s) for s in parallel.detail.scores.values()] == [strip(s) for s in sequential.detail.scores.values()]
    assert [c.case_id for c in parallel.run.cases] == [q.id for q in SET.questions]
    assert (
        parallel.detail.baseline_state == "comparable"
        and parallel.verdict.state == "no_regression"
        and not parallel.regressed
    )


def test_hooks_see_a_retrieval_run_start_grade_and_finish(config, sqlite_url) -> None:
    seen: list[tuple[str, Any]] = []

    class Observer:
        @hookimpl
        def evalkit_run_started(self, run: Run, total: int) -> None:
            seen.append(("started", (run.kind, total)))

        @hookimpl
        def evalkit_case_graded(self, case: Any) -> None:
            seen.append(("case", case.case_id))

        @hookimpl
        def evalkit_run_finished(self, run: Run) -> None:
            seen.append(("finished", run.status))

    run_lexical(config, sqlite_url, hook_plugins=[Observer()])
    assert seen[0] == ("started", (RunKind.RETRIEVAL, 5))
    assert [v for k, v in seen if k == "case"] == [q.id for q in SET.questions]
    assert seen[-1] == ("finished", RunStatus.COMPLETE)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, "k must be a positive integer"),
        ({"k": True}, "k must be a positive integer"),
        ({"concurrency": 0}, "concurrency must be a positive integer"),
        ({"k": 1_000_001}, r"k must be a positive integer up to 1,000,000 \(got 1000001\)"),
        ({"relevance_threshold": 1_000_001}, "the relevance threshold must be a positive integer up to 1,000,000"),
        ({"concurrency": 10**9}, "concurrency must be a positive integer up to 1,000,000"),
        ({"privacy": "none"}, "privacy must be one of"),
        ({"deployment": "elsewhere"}, 'Unknown deployment "elsewhere"'),
    ],
)
def test_bad_options_are_refused_before_anything_is_stored(config, tmp_path, options, message) -> None:
    database = tmp_path / "never.db"
    arguments = {"deployment": "t", **options}
    with pytest.raises(UsageError, match=message):
        evaluate_retrieval(SET, "evalkit.lexical", config=config, database=f"sqlite:///{database}", **arguments)
    assert not database.exists()


def test_an_invalid_set_lists_every_problem_before_anything_is_stored(config, tmp_path) -> None:
    broken = GoldenQuestionSet("Bad Id", "", questions=[GoldenQuestion("a", " ", expected_document_ids=["x", "x"])])
    database = tmp_path / "never.db"
    with pytest.raises(SetValidationError) as raised:
        evaluate_retrieval(broken, "evalkit.lexical", deployment="t", config=config, database=f"sqlite:///{database}")
    assert len(raised.value.problems) == 4
    assert not database.exists()


def test_a_first_retrieval_run_that_loses_the_race_is_compared_with_the_winner(config, tmp_path, monkeypatch) -> None:
    """Two first runs of a scope finishing at once: the one whose acceptance comes second is
    decided again, against the first, instead of being a second "first" — and, as good as the
    first and no better, it is not accepted (the bar does not move for an equal run)."""
    import sqlite3

    from evalkit.storage.sql import SqlRepository

    url = f"sqlite:///{tmp_path / 'race.db'}"
    winner = run_lexical(config, url).run.id
    with sqlite3.connect(tmp_path / "race.db") as conn:  # as if the winner had not been accepted yet
        conn.execute("update evalkit_run set accepted_at = null, acceptance = null, acceptance_reason = null")
    original = SqlRepository.accept_if_first

    def the_other_was_quicker(self, run_id, scope, acceptance):  # noqa: ANN001, ANN202
        with sqlite3.connect(tmp_path / "race.db") as conn:
            conn.execute("update evalkit_run set accepted_at = 1, acceptance = 'first' where id = ?", (winner,))
        return original(self, run_id, scope, acceptance)

    monkeypatch.setattr(SqlRepository, "accept_if_first", the_other_was_quicker)
    outcome = run_lexical(config, url)
    assert (
        outcome.verdict.state != "baseline"
        and outcome.comparison is not None
        and outcome.comparison.baseline_id == winner
    )
    assert outcome.verdict.state == "no_regression" and outcome.acceptance is None
    assert "not significantly better" in outcome.verdict.acceptance_note


def test_a_shard_whose_run_another_shard_closes_meanwhile_reports_the_whole_run(
    config, sqlite_url, monkeypatch
) -> None:
    """Shard 1 reads the store, sees its own questions only and finishes the run as still running;
    before its finish is stored, shard 2 stores the rest and completes the run. The store keeps the
    run complete, and shard 1's outcome covers the whole run, not the part it saw."""
    from evalkit.run.plan import Shard
    from evalkit.storage.sql import SqlRepository

    original = SqlRepository.finish_run
    closing: list[Any] = []

    def closed_meanwhile(self, run_id, status, finished_at, **fields):  # noqa: ANN001, ANN202
        if status == "running" and not closing:
            closing.append(run_lexical(config, sqlite_url, run_id="split", shard=Shard(2, 2)))
        return original(self, run_id, status, finished_at, **fields)

    monkeypatch.setattr(SqlRepository, "finish_run", closed_meanwhile)
    first = run_lexical(config, sqlite_url, run_id="split", shard=Shard(1, 2))
    (second,) = closing
    assert second.run.status is RunStatus.COMPLETE and first.run.status is RunStatus.COMPLETE
    assert list(first.detail.scores) == list(second.detail.scores) == [q.id for q in SET.questions]
    assert first.detail.metrics == second.detail.metrics and first.detail.metrics.question_count == 5
    assert first.verdict.state == second.verdict.state == "baseline"


def test_a_stopped_run_of_a_question_set_built_in_code_says_the_library_call_that_continues_it(
    config, sqlite_url
) -> None:
    # A run of SET (built in this module: no entry point finds it) said "continue it with `evalkit
    # retrieval tests.lexical evalkit.lexical --deployment t --resume ID`": that command cannot find
    # the set. It names evaluate_retrieval again, which finishes the run.
    from evalkit.errors import RunInterrupted

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as interrupted:
        run_lexical(config, sqlite_url, run_id="in-1", on_case=ctrl_c)
    call = 'evalkit.evaluate_retrieval(<the in-code set "tests.lexical">, <the same arguments>, run_id="in-1", resume=True)'
    assert str(interrupted.value).endswith(f"continue it with `{call}`"), str(interrupted.value)
    assert run_lexical(config, sqlite_url, run_id="in-1", resume=True).run.status is RunStatus.COMPLETE


def test_a_stopped_library_retrieval_run_says_the_store_it_was_given(config, sqlite_url) -> None:
    # evaluate_retrieval(…, database=URL) interrupted said "continue it with `evalkit retrieval
    # tests.lexical evalkit.lexical --deployment t --resume ID`": pasted, that looked for the run in
    # the default store and found none. The line names the caller's --database, as the CLI's does.
    from evalkit.errors import RunInterrupted

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as interrupted:
        evaluate_retrieval(
            sourced({}), "evalkit.lexical", deployment="t", config=config, database=sqlite_url, run_id="cat-2",
            on_case=ctrl_c,
        )  # fmt: skip
    assert str(interrupted.value).endswith(
        f"continue it with `evalkit retrieval tests.lexical evalkit.lexical --deployment t --resume cat-2 --database {sqlite_url}`"
    ), str(interrupted.value)


def test_a_killed_run_of_a_question_set_built_in_code_is_shown_with_the_library_call(
    config, sqlite_url, evalkit_cli
) -> None:
    # `evalkit show` said a killed run of SET (built in this module) is continued with `evalkit
    # retrieval tests.lexical evalkit.lexical --deployment t --resume ID`, which cannot find the set;
    # the run keeps that its set was built in code, and its catalog entry's run does not.
    from evalkit.errors import RunInterrupted
    from evalkit.leases import STALE_AFTER_S, LeaseOwner

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        run_lexical(config, sqlite_url, run_id="in-1", on_case=ctrl_c)
    with pytest.raises(RunInterrupted):
        evaluate_retrieval(
            sourced({}),
            "evalkit.lexical",
            deployment="t",
            config=config,
            database=sqlite_url,
            run_id="cat-1",
            on_case=ctrl_c,
        )
    repo = open_repository(sqlite_url)
    try:  # what a `kill -9` leaves: the runs running, leases no one renews
        for run_id in ("in-1", "cat-1"):
            repo.mark_status(run_id, "running")
            repo.acquire_lease(run_id, "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).execute()
    finally:
        repo.close()
    shown = " ".join(evalkit_cli("show", "in-1", "--database", sqlite_url).stdout.split())
    assert (
        'continue it with `evalkit.evaluate_retrieval(<the in-code set "tests.lexical">, <the same arguments>, run_id="in-1", resume=True)`'
        in shown
    )
    shown = " ".join(evalkit_cli("show", "cat-1", "--database", sqlite_url).stdout.split())
    # with the --database the reading command was given: pasted without it, the line used the default store
    assert (
        f"continue it with `evalkit retrieval tests.lexical evalkit.lexical --database {sqlite_url} --deployment t --resume cat-1`"
        in shown
    )
