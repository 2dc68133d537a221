"""`evalkit retrieval SET RETRIEVER` end to end: real subprocesses, real SQLite files, real installed plugins.

The shipped ``evalkit_stdlib.docs`` set runs with the built-in ``evalkit.lexical`` retriever
through the set's own ``demo`` deployment; the ``retrievalkit.tiny`` set and the scripted,
declaring, raising and garbage retrievers come from tests/data/evalkit-retrieval-fixtures.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

FIXTURES = "evalkit-retrieval-fixtures"

#: The fixture distribution's corpus (evalkit_retrieval_fixtures.CORPUS), for evalkit.lexical.
CORPUS = [
    {"id": "doc-json", "title": "json.loads", "text": "Deserialize a JSON document string into a Python object."},
    {"id": "doc-csv", "title": "csv.reader", "text": "Iterate over the rows of a comma separated values file."},
    {"id": "doc-sleep", "title": "time.sleep", "text": "Suspend execution of the calling thread for some seconds."},
    {"id": "doc-copy", "title": "shutil.copy", "text": "Copy the contents and permission bits of a file."},
    {"id": "doc-zip", "title": "zipfile", "text": "Read and write ZIP archive files."},
]
#: The questions of retrievalkit.tiny, by id.
QUESTIONS = {
    "json": "deserialize a JSON document",
    "csv": "read rows of a comma separated values file",
    "nap": "make the program wait a little",
    "nothing": "quantum chromodynamics lattice",
}
PERFECT = {QUESTIONS["json"]: ["doc-json"], QUESTIONS["csv"]: ["doc-csv"], QUESTIONS["nap"]: ["doc-sleep", "doc-json"]}


@pytest.fixture(scope="module")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One lexical index cache for this module (indexes are keyed by corpus path and content)."""
    return tmp_path_factory.mktemp("lexical-cache")


@pytest.fixture
def env(plugin_dists, index_cache) -> dict[str, str]:  # noqa: ANN001 - the session fixture
    """PYTHONPATH with the fixture distribution, and a private cache for lexical indexes."""
    return {"PYTHONPATH": plugin_dists(FIXTURES), "EVALKIT_CACHE_DIR": str(index_cache)}


@pytest.fixture
def cli(evalkit_cli, env):  # noqa: ANN001, ANN201
    """``evalkit`` with the fixture distribution installed."""

    def run(*args: str, extra_env: dict[str, str] | None = None, cwd: Path | None = None):  # noqa: ANN202
        return evalkit_cli(*args, env={**env, **(extra_env or {})}, cwd=cwd)

    return run


def toml_value(value: object) -> str:
    return json.dumps(value)


def configure(project: Path, deployments: dict[str, dict[str, dict[str, object]]]) -> None:
    """Write evalkit.toml with ``[deployments.NAME.retrievers."ID"]`` tables."""
    lines = []
    for name, retrievers in deployments.items():
        for retriever, options in retrievers.items():
            lines.append(f'[deployments.{name}.retrievers."{retriever}"]')
            lines.extend(f"{key} = {toml_value(value)}" for key, value in options.items())
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_corpus(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def write_answers(project: Path, table: dict[str, list[str]], name: str = "answers.json") -> str:
    (project / name).write_text(json.dumps(table), encoding="utf-8")
    return name


def stored(project: Path) -> list[tuple]:
    db = project / ".evalkit" / "results.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "select id, kind, status, retriever, deployment, grader, passed_count, answered_count, verdict "
            "from evalkit_run order by started_at, rowid"
        ).fetchall()


# -- the shipped demo ---------------------------------------------------------------------------


def test_stdlib_demo_runs_out_of_the_box_and_compares_on_the_second_run(cli, project) -> None:
    first = cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert first.code == 0, first.stderr
    out = first.stdout
    assert "Retrieval evaluation: evalkit_stdlib.docs vs evalkit.lexical" in out
    assert re.search(r"Question\s+┃ Form\s+┃ Hard class\s+┃ Top-1 ┃ Top-3 ┃\s+RR@10 ┃ Latency \(ms\)", out)
    assert re.search(r"parse-json-string\s+│ match │ near-duplicate\s+│", out)
    assert re.search(r"nothing-react\s+│ gap\s+│ out-of-scope", out)
    top1 = re.search(r"Top-1 hit rate: (\d+\.\d)% \((\d+)/61\)", out)
    top3 = re.search(r"Top-3 hit rate: (\d+\.\d)% \((\d+)/61\)", out)
    assert top1 and top3 and int(top1.group(2)) <= int(top3.group(2))
    assert "MRR:" not in out
    for line in (
        "MRR@10:",
        "Recall@10:",
        "nDCG@10:",
        "Latency:        p50",
        "By form",
        "By hard class",
        "Retrieval provenance",
    ):
        assert line in out
    assert (
        "(relevant: grade 1 or more, for the hit rates, MRR and recall; nDCG gains are the grades themselves, linear"
        in out
    )
    stricter = cli(
        "retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", "--relevance-threshold", "2",
        "--database", f"sqlite:///{project / 'other.db'}",
    )  # fmt: skip
    assert "(relevant: grade 2 or more," in stricter.stdout
    assert re.search(r"Corpus revision:\s+sha256:[0-9a-f]{16}", out)
    assert re.search(r"Pipeline identity:\s+evalkit\.lexical-fts5-bm25-v1", out)
    assert 'Deployment:     demo (provider "evalkit_stdlib.docs" (evalkit-set-stdlib' in out
    assert "Baseline state: baseline" in out
    assert "recorded as the baseline" in out
    # The table lists the questions that missed somewhere; the others are counted in one line.
    listed = re.findall(r"│ (?:hit|MISS|ERROR)\s+│ (?:hit|MISS|ERROR)\s+│", out)
    both = re.search(
        r"(\d+) questions that hit at top-1 and top-3 are not listed \(--show-all lists every question\)\.", out
    )
    assert both and int(both.group(1)) + len(listed) == 61
    assert not re.search(r"│ hit\s+│ hit\s+│", out)

    second = cli(
        "retrieval",
        "evalkit_stdlib.docs",
        "evalkit.lexical",
        "--deployment",
        "demo",
        "--fail-on-regression",
        "--show-all",
    )
    assert second.code == 0, second.stderr
    assert len(re.findall(r"│ (?:hit|MISS|ERROR)\s+│ (?:hit|MISS|ERROR)\s+│", second.stdout)) == 61
    assert "not listed" not in second.stdout
    assert "Baseline state: comparable" in second.stdout
    baseline_id = stored(project)[0][0]
    assert f"No regression: top-1 hit rate +0.0 pp, top-3 hit rate +0.0 pp versus run {baseline_id}." in second.stdout
    runs = stored(project)
    assert [r[1:6] for r in runs] == [("retrieval", "complete", "evalkit.lexical", "demo", "retrieval_hit_rate")] * 2
    assert [r[8] for r in runs] == ["baseline", "no_regression"]
    assert runs[0][6] == int(top1.group(2)) and runs[0][7] == 61


def test_stdlib_demo_json_has_every_ranking_and_metric(cli) -> None:
    result = cli(
        "retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--json", extra_env={"EVALKIT_DEPLOYMENT": "demo"}
    )
    assert result.code == 0, result.stderr
    doc = result.json()
    assert doc["set"] == "evalkit_stdlib.docs" and doc["retriever"] == "evalkit.lexical"
    assert doc["deployment"]["name"] == "demo" and doc["k"] == 10 and doc["limit"] == 12
    questions = doc["questions"]
    assert len(questions) == 61
    for q in questions:
        assert q["error"] is None
        assert len(q["ranked_ids"]) == len(set(q["ranked_ids"])) <= 10
        assert 0.0 <= q["ndcg_at_k"] <= 1.0 and 0.0 <= q["recall_at_k"] <= 1.0
    metrics = doc["metrics"]
    assert metrics["question_count"] == 61
    assert metrics["top1_hits"] == sum(q["hit_at_1"] for q in questions)
    assert metrics["top3_hit_rate"] == pytest.approx(sum(q["hit_at_3"] for q in questions) / 61)
    assert "mrr" not in metrics and "reciprocal_rank" not in questions[0]
    assert metrics["mrr_at_k"] == pytest.approx(sum(q["reciprocal_rank_at_k"] for q in questions) / 61)
    assert set(metrics["by_form"]) == {"match", "gap"}
    assert {"near-duplicate", "specific-vs-general", "normal", "out-of-scope"} <= set(metrics["by_hard_class"])
    assert sum(b["questions"] for b in metrics["by_form"].values()) == 61
    assert doc["provenance"]["declared"]["corpus_revision"].startswith("sha256:")
    assert doc["provenance"]["benchmark_fingerprint"].startswith("v1:")
    assert doc["baseline_state"] == "baseline" and doc["verdict"]["state"] == "baseline"
    for q in (q for q in questions if not q["expected_ids"]):
        assert q["hit_at_1"] == (q["ranked_ids"] == [])


# -- refusals -----------------------------------------------------------------------------------


def test_unknown_set_retriever_and_deployment_exit_2_listing_the_known_ones(cli, project) -> None:
    unknown_set = cli("retrieval", "nope.set", "evalkit.lexical")
    assert unknown_set.code == 2
    assert 'Unknown golden question set "nope.set". Available sets:' in unknown_set.stderr
    assert "evalkit_stdlib.docs" in unknown_set.stderr and "retrievalkit.tiny" in unknown_set.stderr

    unknown_retriever = cli("retrieval", "retrievalkit.tiny", "nope.retriever")
    assert unknown_retriever.code == 2
    assert (
        'Unknown retriever "nope.retriever". Available retrievers: evalkit.lexical, fixtures.declaring'
        in unknown_retriever.stderr
    )

    configure(project, {"staging": {"evalkit.lexical": {"corpus": "corpus.jsonl"}}})
    unknown_deployment = cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "prod")
    assert unknown_deployment.code == 2
    assert (
        'Unknown deployment "prod" (--deployment prod). Known deployments: demo, staging' in unknown_deployment.stderr
    )
    from_env = cli("retrieval", "retrievalkit.tiny", "evalkit.lexical", extra_env={"EVALKIT_DEPLOYMENT": "qa"})
    assert (
        from_env.code == 2
        and 'Unknown deployment "qa" (EVALKIT_DEPLOYMENT=qa). Known deployments: staging' in from_env.stderr
    )
    # Set but empty (a CI variable the job cannot read) was read as unset: the retriever ran with no
    # deployment's options, in a scope of its own (whose first run a gate passes as its baseline).
    empty_env = cli(
        "retrieval",
        "retrievalkit.tiny",
        "fixtures.raising",
        "--fail-on-regression",
        extra_env={"EVALKIT_DEPLOYMENT": ""},
    )
    assert empty_env.code == 2 and "EVALKIT_DEPLOYMENT is set but empty" in empty_env.stderr

    # An explicit retriever must be one the deployment has options for, or one that takes none.
    wrong_retriever = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "staging")
    assert wrong_retriever.code == 2
    assert (
        'deployment "staging" has no options for retriever "fixtures.garbage" (it configures: evalkit.lexical)'
        in wrong_retriever.stderr
    )

    no_options = cli("retrieval", "retrievalkit.tiny", "evalkit.lexical")
    assert no_options.code == 2
    assert (
        "none was chosen, so the retriever gets no options: choose one with --deployment NAME (configured: staging; "
        "`evalkit list deployments` lists every one), or write" in no_options.stderr
    )
    # said once: a second "No deployment was chosen … choose one" followed it, joined by ".."
    assert no_options.stderr.count("choose one") == 1 and ".." not in no_options.stderr, no_options.stderr

    not_a_retriever = cli("retrieval", "retrievalkit.tiny", "fixtures.not_a_retriever")
    assert not_a_retriever.code == 2 and "has no retrieve(question, limit) method" in not_a_retriever.stderr
    assert stored(project) == []


def test_unquoted_dotted_retriever_id_gets_a_hint(cli, project) -> None:
    (project / "evalkit.toml").write_text('[deployments.demo2.retrievers.evalkit.lexical]\ncorpus = "c.jsonl"\n')
    result = cli("retrieval", "retrievalkit.tiny", "evalkit.lexical", "--deployment", "demo2")
    assert result.code == 2
    assert 'quote an id with dots in the table name: [deployments.demo2.retrievers."evalkit.lexical"]' in result.stderr


@pytest.mark.parametrize("value", ["nan", "-inf", "1.01", "", "1e309"])
def test_bad_tolerances_exit_2_before_anything_runs_or_is_stored(cli, project, value) -> None:
    result = cli(
        "retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", f"--max-top3-drop={value}"
    )
    assert result.code == 2
    assert 'Option "--max-top3-drop" must be a finite number in 0..1' in result.stderr
    assert not (project / ".evalkit").exists()


def test_refusals_come_in_order_set_retriever_tolerances_set_rules(cli, project) -> None:
    both = cli("retrieval", "nope.set", "nope.retriever", "--max-top1-drop", "nan")
    assert both.code == 2 and "Unknown golden question set" in both.stderr
    retriever_first = cli("retrieval", "retrievalkit.broken", "nope.retriever", "--max-top1-drop", "nan")
    assert retriever_first.code == 2 and "Unknown retriever" in retriever_first.stderr
    tolerance_first = cli("retrieval", "retrievalkit.broken", "fixtures.raising", "--max-top1-drop", "nan")
    assert tolerance_first.code == 2 and '"--max-top1-drop"' in tolerance_first.stderr
    invalid = cli(
        "retrieval", "retrievalkit.broken", "fixtures.raising", "--max-top1-drop", "-0.0", "--max-top3-drop", "1e-1"
    )
    assert invalid.code == 2
    assert "the set is invalid (4 problems)" in invalid.stderr
    assert (
        'question set "retrievalkit.broken", question "twice": field id is used by more than one question'
        in invalid.stderr
    )
    assert not (project / ".evalkit").exists()


# -- baseline states ----------------------------------------------------------------------------


def test_every_baseline_state_with_the_lexical_retriever(cli, project) -> None:
    corpus = write_corpus(project / "corpus.jsonl", CORPUS)
    configure(project, {"local": {"evalkit.lexical": {"corpus": "corpus.jsonl"}}})
    args = ("retrieval", "retrievalkit.tiny", "evalkit.lexical", "--deployment", "local", "--fail-on-regression")

    first = cli(*args, "--json")
    assert first.code == 0, first.stderr
    doc = first.json()
    assert doc["baseline_state"] == "baseline"
    assert {q["id"]: (q["hit_at_1"], q["ranked_ids"][:1]) for q in doc["questions"]} == {
        "json": (True, ["doc-json"]),
        "csv": (True, ["doc-csv"]),
        "nap": (False, []),
        "nothing": (True, []),
    }
    assert doc["metrics"]["by_hard_class"]["out-of-scope"]["top1_hit_rate"] == 1.0

    second = cli(*args)
    assert second.code == 0 and "Baseline state: comparable" in second.stdout
    assert "Treatment changed" not in second.stdout

    write_corpus(corpus, [*CORPUS, {"id": "doc-extra", "text": "An added document about nothing in particular."}])
    changed = cli(*args)
    assert changed.code == 1
    assert "Baseline state: mismatch" in changed.stdout
    first_id = stored(project)[0][0]
    skipped = re.search(
        r"Regression comparison skipped: benchmark provenance is mismatch \((.*)\)\. The measurement was recorded\.",
        changed.stdout,
    )
    assert skipped, changed.stdout
    assert re.fullmatch(rf'corpus revision "[^"]+" → "[^"]+" since baseline run {first_id}', skipped.group(1)), (
        skipped.group(1)
    )
    assert "No regression" not in changed.stdout
    assert "Not accepted as the baseline" in changed.stdout
    # The mismatched run is not accepted: the baseline stays the old corpus's run until a person accepts.
    lenient = cli(*args[:-1])
    assert lenient.code == 0 and "Baseline state: mismatch" in lenient.stdout
    changed_id = stored(project)[2][0]
    accepted = cli("baseline", "accept", changed_id, "--reason", "the corpus grew by one document")
    assert accepted.code == 0, accepted.stderr
    after = cli(*args)
    assert after.code == 0 and "Baseline state: comparable" in after.stdout
    assert f"versus run {changed_id}" in after.stdout

    runs = stored(project)
    assert len(runs) == 5 and {r[2] for r in runs} == {"complete"}
    assert [r[8] for r in runs] == ["baseline", "no_regression", "not_comparable", "not_comparable", "no_regression"]


def test_a_retriever_without_provenance_is_unknown_and_fails_the_strict_gate(cli, project) -> None:
    answers = write_answers(project, PERFECT)
    configure(project, {"local": {"fixtures.scripted": {"answers": answers}}})
    args = ("retrieval", "retrievalkit.tiny", "fixtures.scripted", "--deployment", "local")
    strict = cli(*args, "--fail-on-regression")
    assert strict.code == 1
    assert "unknown: the retriever declares no provenance" in strict.stdout
    assert "Baseline state: unknown" in strict.stdout
    assert (
        "Regression comparison skipped: benchmark provenance is unknown (this run's retriever declares no valid provenance). "
        "The measurement was recorded."
    ) in strict.stdout
    lenient = cli(*args)
    assert lenient.code == 0 and "Baseline state: unknown" in lenient.stdout
    assert "Top-1 hit rate: 100.0% (4/4)" in lenient.stdout
    assert len(stored(project)) == 2


def test_invalid_provenance_is_unknown_and_never_becomes_the_baseline(cli, project) -> None:
    answers = write_answers(project, PERFECT)
    declared = {"answers": answers, "corpus_revision": "corpus-v1"}
    configure(
        project,
        {
            "bad": {"fixtures.declaring": {**declared, "corpus_revision": "https://user:secret@host/v1"}},
            "na": {"fixtures.declaring": {**declared, "pipeline_identity": "not-applicable"}},
        },
    )
    bad = cli("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "bad", "--json")
    assert bad.code == 0
    doc = bad.json()
    assert doc["baseline_state"] == "unknown" and doc["provenance"]["declared"] is None
    assert any("corpus_revision" in p for p in doc["provenance"]["problems"])
    assert "secret" not in bad.stdout
    na = cli("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "na")
    assert "must declare an applicable revision" in na.stdout and "Baseline state: unknown" in na.stdout

    # A run of unknown provenance is never accepted, so the first run with a known benchmark is the first
    # baseline of its scope, and the next one is comparable.
    assert "Not accepted as the baseline: the run could not be compared." in na.stdout
    configure(project, {"bad": {"fixtures.declaring": declared}})
    after_unknown = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "bad", "--fail-on-regression"
    )
    assert after_unknown.code == 0 and "Baseline state: baseline" in after_unknown.stdout
    assert "Accepted as the baseline of its scope (automatically: the first run of its scope)." in after_unknown.stdout
    assert "Corpus revision:    corpus-v1" in after_unknown.stdout
    again = cli("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "bad", "--fail-on-regression")
    assert again.code == 0 and "Baseline state: comparable" in again.stdout


def test_treatment_change_stays_comparable_and_execution_revision_changes_nothing(cli, project) -> None:
    answers = write_answers(project, PERFECT)
    base = {"answers": answers, "model_revision": "embed-v1", "execution_revision": "build-1"}
    args = (
        "retrieval",
        "retrievalkit.tiny",
        "fixtures.declaring",
        "--deployment",
        "x",
        "--fail-on-regression",
        "--json",
    )

    configure(project, {"x": {"fixtures.declaring": base}})
    first = cli(*args).json()
    configure(project, {"x": {"fixtures.declaring": {**base, "execution_revision": "build-2"}}})
    rerun = cli(*args)
    assert rerun.code == 0
    second = rerun.json()
    assert second["baseline_state"] == "comparable" and second["treatment_changed"] is False
    assert second["provenance"]["benchmark_fingerprint"] == first["provenance"]["benchmark_fingerprint"]
    assert second["provenance"]["variant_fingerprint"] == first["provenance"]["variant_fingerprint"]
    assert second["provenance"]["declared"]["execution_revision"] == "build-2"

    configure(project, {"x": {"fixtures.declaring": {**base, "model_revision": "embed-v2"}}})
    treated = cli(*args[:-1])
    assert treated.code == 0
    assert "Baseline state: comparable" in treated.stdout
    assert (
        "Treatment changed: model, chunking or pipeline identity differs; the benchmark remains comparable."
        in treated.stdout
    )
    assert "No regression: top-1 hit rate +0.0 pp" in treated.stdout


def test_a_regression_fails_the_gate_only_beyond_the_tolerances(cli, project) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    args = ("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x")
    assert cli(*args).code == 0
    worse = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, worse)}}})

    gated = cli(*args, "--fail-on-regression")
    assert gated.code == 1
    assert "Lost a top-1 hit (hit in the baseline, miss now): 1\n  - json" in gated.stdout
    assert "Regression: top-1 hit rate dropped 25.0 pp and top-3 hit rate dropped 25.0 pp" in gated.stdout
    assert "Retrieval regression detected against the baseline." in gated.stdout

    # The previous run is now the regressed one; tolerate a drop of exactly 25 pp against a fresh baseline.
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    assert cli(*args).code == 0
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, worse)}}})
    tolerated = cli(*args, "--fail-on-regression", "--max-top1-drop", "0.25", "--max-top3-drop", "2.5e-1", "--json")
    assert tolerated.code == 0, tolerated.stdout
    verdict, hits = tolerated.json()["verdict"], tolerated.json()["hit_rate_changes"]
    assert verdict["regressed"] is False and hits["top1_hit_rate_delta"] == -0.25
    assert hits["lost_top1_hits"] == ["json"]
    ungated = cli(*args)
    assert ungated.code == 0


def test_retrieval_gates_on_ndcg_when_asked_from_the_command_line_or_the_gate_table(cli, project) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    args = (
        "retrieval",
        "retrievalkit.tiny",
        "fixtures.declaring",
        "--deployment",
        "x",
        "--max-top1-drop",
        "0.5",
        "--max-top3-drop",
        "0.5",
    )
    assert cli(*args).code == 0
    worse = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, worse)}}})

    reported = cli(*args, "--fail-on-regression", "--json")  # hit rates within 50 pp; nDCG@k reported, not gated
    assert reported.code == 0, reported.stdout
    assert reported.json()["verdict"]["metrics"]["ndcg_at_k"]["tolerance"] is None
    assert reported.json()["verdict"]["metrics"]["ndcg_at_k"]["delta"] < -0.01

    gated = cli(*args, "--fail-on-regression", "--max-ndcg-drop", "0.01", "--json")
    assert gated.code == 1, gated.stdout
    verdict = gated.json()["verdict"]
    assert verdict["state"] == "regressed" and verdict["metrics"]["ndcg_at_k"]["tolerance"] == 0.01
    assert "nDCG" in verdict["reason"] and "dropped" in verdict["reason"]

    with (project / "evalkit.toml").open("a", encoding="utf-8") as toml:
        toml.write("[gate]\nmax_ndcg_drop = 0.01\n")
    configured = cli(*args, "--fail-on-regression")
    assert configured.code == 1 and "Retrieval regression detected against the baseline." in configured.stdout
    assert cli(*args, "--fail-on-regression", "--max-ndcg-drop", "0.9").code == 0, "the option overrides the table"


def test_changing_k_changes_the_benchmark(cli, project) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    args = ("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--json")
    assert cli(*args).json()["baseline_state"] == "baseline"
    five = cli(*args, "--k", "5").json()
    assert five["k"] == 5 and five["limit"] == 12 and five["metrics"]["k"] == 5
    assert five["baseline_state"] == "mismatch"
    twenty = cli(*args, "--k", "20").json()
    assert twenty["limit"] == 20 and twenty["baseline_state"] == "mismatch"
    assert cli(*args, "--k", "0").code == 2
    said = cli(*args[:-1], "--k", "5").stdout
    assert f"benchmark provenance is mismatch (k 10 → 5 since baseline run {stored(project)[0][0]})" in said, said


# -- deployments --------------------------------------------------------------------------------


def test_two_deployments_are_stored_apart_and_have_separate_baselines(cli, project, tmp_path) -> None:
    write_corpus(project / "staging.jsonl", CORPUS)
    write_corpus(project / "production.jsonl", [d for d in CORPUS if d["id"] != "doc-csv"])
    configure(
        project,
        {
            "staging": {"evalkit.lexical": {"corpus": "staging.jsonl"}},
            "production": {"evalkit.lexical": {"corpus": "production.jsonl"}},
        },
    )
    args = ("retrieval", "retrievalkit.tiny", "evalkit.lexical", "--fail-on-regression", "--json")
    staging = cli(*args, "--deployment", "staging").json()
    production = cli(*args, extra_env={"EVALKIT_DEPLOYMENT": "production"}).json()
    assert staging["baseline_state"] == production["baseline_state"] == "baseline"
    assert staging["metrics"]["top1_hits"] == 3 and production["metrics"]["top1_hits"] == 2
    assert staging["provenance"]["benchmark_fingerprint"] != production["provenance"]["benchmark_fingerprint"]
    # --deployment wins over the environment.
    again = cli(*args, "--deployment", "staging", extra_env={"EVALKIT_DEPLOYMENT": "production"})
    assert again.code == 0 and again.json()["baseline_state"] == "comparable"
    assert again.json()["verdict"]["baseline_id"] == staging["run_id"]
    assert [(r[3], r[4]) for r in stored(project)] == [
        ("evalkit.lexical", "staging"), ("evalkit.lexical", "production"), ("evalkit.lexical", "staging"),
    ]  # fmt: skip

    # Relative corpus paths are relative to the configuration file, not the working directory.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    remote = cli(
        "retrieval", "retrievalkit.tiny", "evalkit.lexical", "--deployment", "production", "--json",
        "--config", str(project / "evalkit.toml"), "--database", f"sqlite:///{project / '.evalkit' / 'results.db'}",
        cwd=elsewhere,
    )  # fmt: skip
    assert remote.code == 0, remote.stderr
    assert remote.json()["baseline_state"] == "comparable"


def test_a_configured_deployment_replaces_the_providers_of_the_same_name(cli, project) -> None:
    configure(project, {"demo": {"evalkit.lexical": {"corpus": "missing.jsonl"}}})
    result = cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert result.code == 2
    assert "missing.jsonl" in result.stderr and "does not exist" in result.stderr


# -- retrievers that misbehave ------------------------------------------------------------------


def test_a_raising_retriever_makes_an_incomplete_run_naming_retriever_and_question(cli, project) -> None:
    configure(project, {"x": {"fixtures.raising": {"fail_on": "rows"}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.raising", "--deployment", "x", "--json")
    assert result.code == 3
    doc = result.json()
    assert doc["status"] == "incomplete" and doc["metrics"]["errored_questions"] == 1
    errors = {q["id"]: q["error"] for q in doc["questions"]}
    assert (
        errors["csv"]
        == 'retriever "fixtures.raising" raised ConnectionError on question "csv": search backend unreachable'
    )
    assert errors["json"] is None and doc["metrics"]["question_count"] == 3
    assert doc["verdict"]["state"] == "not_comparable" and "incomplete" in doc["verdict"]["reason"]

    text = cli("retrieval", "retrievalkit.tiny", "fixtures.raising", "--deployment", "x")
    assert text.code == 3
    assert "Errored questions (1):" in text.stdout
    assert "(rates over the 3 scored questions; 1 errored)" in text.stdout
    # An incomplete run is never a baseline: a later complete run has no predecessor.
    configure(project, {"x": {"fixtures.raising": {"fail_on": "no question has this"}}})
    complete = cli("retrieval", "retrievalkit.tiny", "fixtures.raising", "--deployment", "x", "--fail-on-regression")
    assert complete.code == 0 and "Baseline state: baseline" in complete.stdout
    assert [r[2] for r in stored(project)] == ["incomplete", "incomplete", "complete"]


def test_an_incomplete_retrieval_run_shows_one_hit_rate_in_every_command(cli, project) -> None:
    # `evalkit retrieval` printed "Top-1 hit rate: 33.3% (1/3)" over the scored questions, while
    # `show` and `history` printed "25.0% (1/4)" (the errored question counted as a miss) and the
    # markdown report "4 of 4 questions answered" beside "1 errored question".
    configure(project, {"x": {"fixtures.raising": {"fail_on": "rows"}}})
    ran = cli("retrieval", "retrievalkit.tiny", "fixtures.raising", "--deployment", "x")
    assert ran.code == 3
    assert "Status:         incomplete, 3 of 4 questions answered, 1 errored" in ran.stdout, ran.stdout
    assert "Top-1 hit rate: 33.3% (1/3)" in ran.stdout and "Top-3 hit rate: 33.3% (1/3)" in ran.stdout
    run_id = re.search(r"\(run (\S+)\)", ran.stdout).group(1)
    shown = cli("show", run_id).stdout
    assert "Pass rate:  33.3% (1/3)\n" in shown and "Mean score: 0.333\n" in shown and "25.0%" not in shown, shown
    document = cli("show", run_id, "--json").json()
    assert (document["pass_rate"], document["scored"]) == (document["metrics"]["retrieval"]["top1_hit_rate"], 3)
    history = cli("history", "retrievalkit.tiny").stdout
    assert "33.3%" in history and "25.0%" not in history, history
    markdown = cli("report", run_id, "--format", "markdown").stdout
    assert "3 of 4 questions answered, 1 errored" in markdown and "| hit\\@1 | — | 33.3% | — |" in markdown, markdown


def test_a_provenance_declaration_that_raises_makes_the_run_unknown(cli, project) -> None:
    configure(project, {"x": {"fixtures.raising": {"fail_on": "no question has this", "fail_provenance": True}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.raising", "--deployment", "x", "--fail-on-regression")
    assert result.code == 1
    assert 'retriever "fixtures.raising": provenance() raised RuntimeError: revision service down' in result.stdout
    assert "Baseline state: unknown" in result.stdout and "Top-1 hit rate: 25.0% (1/4)" in result.stdout


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("non-string", "a retriever returned a document id that is not a string: 42"),
        ("string", "returned str 'doc-json', not a list of document ids"),
        ("dict", "returned dict"),
        # a set has no order: its ranking (and every metric) changed with the process's hash seed
        ("set", "returned set, which has no order: a ranking is a list, best first"),
    ],
)
def test_garbage_from_a_retriever_is_an_error_naming_it(cli, project, mode, message) -> None:
    configure(project, {"x": {"fixtures.garbage": {"mode": mode}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "x")
    assert result.code == 3
    assert f'retriever "fixtures.garbage" on question "json": {message}' in result.stdout
    assert stored(project)[0][2] == "incomplete"


def test_a_run_whose_every_question_errored_reports_no_figures(cli, project) -> None:
    # It printed "Top-1 hit rate: 0.0% (0/0)", "MRR@10: 0.000" and "Latency: p50 0.0 ms": the
    # figures of a retriever that found nothing instantly, where nothing was measured.
    configure(project, {"x": {"fixtures.garbage": {"mode": "string"}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "x")
    assert result.code == 3
    assert "Measured:       nothing (no question was scored; 4 questions errored)\n" in result.stdout
    assert "(0/0)" not in result.stdout and "MRR@10" not in result.stdout and "Latency:" not in result.stdout
    assert "not compared: the run is incomplete (4 errored questions)" in result.stdout
    # Its reports said what the terminal no longer says: "hit@1 0.0%", "MRR@10 0.000" in the
    # markdown table, the junit properties and the json figures, and a 0 % point in the HTML trend.
    reported = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "x",
        "--report", "markdown:-", "--report", f"json:{project / 'report.json'}",
    )  # fmt: skip
    assert reported.code == 3
    rows = [line for line in reported.stdout.splitlines() if line.startswith(("| hit", "| MRR", "| nDCG"))]
    assert len(rows) == 4 and all(row.split(" | ")[2] == "—" for row in rows), rows
    figures = json.loads((project / "report.json").read_text(encoding="utf-8"))["figures"]
    assert [figure["value"] for figure in figures] == [None, None, None, None]


def test_duplicates_are_collapsed_and_ids_past_the_limit_are_dropped_with_a_warning(cli, project) -> None:
    configure(
        project,
        {"dup": {"fixtures.garbage": {"mode": "duplicates"}}, "many": {"fixtures.garbage": {"mode": "too-many"}}},
    )
    dup = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "dup", "--json")
    assert dup.code == 0
    doc = dup.json()
    assert doc["warnings"] == []
    ranked = {q["id"]: q["ranked_ids"] for q in doc["questions"]}
    assert ranked["json"] == ["doc-csv", "doc-json", "doc-sleep"]
    assert {q["id"]: q["reciprocal_rank_at_k"] for q in doc["questions"]}["json"] == 0.5

    many = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "many", "--k", "20", "--json")
    assert many.code == 0
    warnings = many.json()["warnings"]
    assert warnings == [
        'retriever "fixtures.garbage" returned more than limit=20 ids for 4 questions (up to 28); '
        "only the first 20 of each were scored"
    ]
    assert all(len(q["ranked_ids"]) == 20 for q in many.json()["questions"])
    text = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "many")
    assert 'warning: retriever "fixtures.garbage" returned more than limit=12 ids' in text.stdout


def test_a_retriever_returning_an_endless_generator_is_read_up_to_a_bound(cli, project) -> None:
    # list() of the generator took every byte of memory the machine had
    configure(project, {"x": {"fixtures.garbage": {"mode": "endless"}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "x", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert all(q["ranked_ids"] == [f"doc-{i}" for i in range(10)] for q in document["questions"])
    assert document["warnings"] == [
        'retriever "fixtures.garbage" returned more than limit=12 ids for 4 questions (up to 10012); '
        "only the first 12 of each were scored"
    ]


@pytest.mark.parametrize("mode", ["touchy", "touchy-scored"])
def test_document_ids_of_a_str_subclass_are_scored_as_plain_text(cli, project, mode) -> None:
    # a str subclass whose == raised was compared with the labels outside the retriever's guard:
    # an internal error, the run left interrupted
    configure(project, {"x": {"fixtures.garbage": {"mode": mode}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.garbage", "--deployment", "x", "--json")
    assert result.code == 0, result.stderr
    ranked = {q["id"]: q["ranked_ids"] for q in result.json()["questions"]}
    assert ranked["json"] == ["doc-json", "doc-csv"]
    assert {q["id"]: q["hit_at_1"] for q in result.json()["questions"]}["json"] is True
    assert stored(project)[0][2] == "complete"


# -- storage ------------------------------------------------------------------------------------


def test_a_repository_without_retrieval_reads_stores_and_says_why_it_does_not_compare(
    cli, project, plugin_dists
) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    env = {"PYTHONPATH": plugin_dists(FIXTURES, "evalkit-minimal-repo")}
    store = project / "store.json"
    args = (
        "retrieval",
        "retrievalkit.tiny",
        "fixtures.declaring",
        "--deployment",
        "x",
        "--database",
        f"minimal://{store}",
    )
    result = cli(*args, extra_env=env)
    assert result.code == 0, result.stderr
    assert "not compared: the configured repository cannot read earlier retrieval runs" in result.stdout
    assert "Baseline state: unknown" in result.stdout
    assert cli(*args, "--fail-on-regression", extra_env=env).code == 1
    assert store.exists()


def test_show_and_history_read_a_stored_retrieval_run(cli, project) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    run = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--privacy", "full", "--json"
    )
    run_id = run.json()["run_id"]
    shown = cli("show", run_id, "--json")
    assert shown.code == 0, shown.stderr
    doc = shown.json()
    assert doc["kind"] == "retrieval" and doc["retriever"] == "fixtures.declaring" and doc["deployment"] == "x"
    assert doc["provenance"]["corpus_revision"] == "corpus-v1" and doc["provenance"]["k"] == 10
    assert doc["metrics"]["retrieval"]["top1_hit_rate"] == 1.0
    nap = next(c for c in doc["cases"] if c["id"] == "nap")
    assert [(c["name"], c["passed"]) for c in nap["checks"]] == [("hit_at_1", True), ("hit_at_3", True)]
    assert nap["detail"]["ranked_ids"] == ["doc-sleep", "doc-json"]
    history = cli("history", "retrievalkit.tiny")
    assert history.code == 0 and run_id in history.stdout and "baseline" in history.stdout



def test_a_not_compared_retrieval_run_is_shown_later_in_the_words_it_said(cli, project) -> None:
    # The store keeps a not-compared retrieval run's note as "baseline state WORD: REASON" (so
    # the job reporting a sharded run gets the word back); show, history --json and every report
    # printed that encoding: "not compared — baseline state comparable: not compared: the run is
    # incomplete …" — "comparable" beside "not compared", words the run itself never said.
    configure(project, {"x": {"fixtures.raising": {"fail_on": "rows"}}})
    incomplete = cli("retrieval", "retrievalkit.tiny", "fixtures.raising", "--deployment", "x", "--json")
    assert incomplete.code == 3
    run_id, said = incomplete.json()["run_id"], incomplete.json()["verdict"]["reason"]
    assert said.startswith("not compared: the run is incomplete"), said
    shown = cli("show", run_id)
    # the label says "not compared" once: the line read "not compared — not compared: the run …"
    verdict_line = next(line for line in shown.stdout.splitlines() if line.startswith("Verdict:"))
    assert shown.code == 0 and verdict_line == f"Verdict:    not compared — {said.removeprefix('not compared: ')}", shown.stdout
    history = cli("history", "retrievalkit.tiny", "--json")
    assert history.json()["runs"][0]["verdict"]["note"] == said
    markdown = cli("report", run_id, "--format", "markdown", "-o", "-")
    assert markdown.code == 3 and "not compared\\: the run is incomplete" in markdown.stdout, markdown.stdout
    as_json = cli("report", run_id, "--format", "json", "-o", "-")
    assert as_json.json()["verdict"]["note"] == said and as_json.json()["verdict_sentence"] == said
    for output in (shown.stdout, history.stdout, markdown.stdout, as_json.stdout):
        assert "baseline state" not in output


# -- accepted baselines -------------------------------------------------------------------------


def test_a_regressed_retrieval_run_never_becomes_the_baseline_until_accepted(cli, project) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    args = ("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--fail-on-regression")
    first = cli(*args, "--json")
    assert first.code == 0 and first.json()["accepted"]["how"] == "first"
    baseline_id = first.json()["run_id"]
    worse = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, worse)}}})

    regressed = cli(*args)
    assert regressed.code == 1 and f"(baseline run {baseline_id})" in regressed.stdout
    assert f"Not accepted as the baseline: run {baseline_id} stays the baseline" in regressed.stdout
    again = cli(*args, "--json")
    assert again.code == 1, again.stdout
    document = again.json()
    assert document["verdict"]["baseline_id"] == baseline_id and document["accepted"] is None
    assert document["hit_rate_changes"]["lost_top1_hits"] == ["json"]

    accepted = cli("baseline", "accept", document["run_id"], "--reason", "json docs moved", extra_env={"USER": "bob"})
    assert accepted.code == 0, accepted.stderr
    assert 'retriever "fixtures.declaring", deployment "x"' in accepted.stdout
    passing = cli(*args, "--json")
    assert passing.code == 0, passing.stdout
    assert passing.json()["verdict"]["baseline_id"] == document["run_id"]
    # As good as the accepted run, not significantly better: the bar stays where it was put.
    assert passing.json()["accepted"] is None

    shown = cli(
        "baseline", "show", "retrievalkit.tiny", "--retriever", "fixtures.declaring", "--deployment", "x", "--json"
    )
    baselines = shown.json()["baselines"]
    assert [b["run_id"] for b in baselines] == [document["run_id"]]
    assert baselines[0]["scope"] == {
        "kind": "retrieval",
        "set": "retrievalkit.tiny",
        "retriever": "fixtures.declaring",
        "deployment": "x",
    }
    # a deployment neither configured nor among the set's stored runs is a typo: refused, not answered empty
    unknown = cli("baseline", "show", "retrievalkit.tiny", "--deployment", "y", "--json")
    assert unknown.code == 2 and '--deployment "y": no deployment of that name' in unknown.stderr, unknown.stderr


def test_a_chosen_retrieval_baseline_of_another_scope_is_refused_before_anything_runs(cli, project) -> None:
    answers = write_answers(project, PERFECT)
    configure(
        project, {"x": {"fixtures.declaring": {"answers": answers}}, "y": {"fixtures.declaring": {"answers": answers}}}
    )
    x = cli("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--json").json()
    count = len(stored(project))
    refused = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "y", "--baseline", x["run_id"]
    )
    assert refused.code == 2 and (
        f'--baseline {x["run_id"]} is of another scope: it is of set "retrievalkit.tiny", retriever '
        '"fixtures.declaring", deployment "x", not set "retrievalkit.tiny", retriever "fixtures.declaring", '
        'deployment "y"'
    ) in refused.stderr, refused.stderr
    assert refused.stderr.count("of another scope") == 1, "said once, not twice"
    assert len(stored(project)) == count
    chosen = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--baseline", x["run_id"], "--json"
    )
    assert chosen.code == 0 and chosen.json()["verdict"]["baseline_id"] == x["run_id"]


def test_mrr_at_k_is_one_figure_in_the_report_the_json_and_the_store(cli, project) -> None:
    """The first relevant id at rank 4: RR@3 is 0, RR@10 is 1/4; printed, emitted and stored alike."""
    late = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, late)}}})
    for k, expected in ((3, (0 + 1 + 1 + 1) / 4), (10, (0.25 + 1 + 1 + 1) / 4)):
        args = (
            "retrieval",
            "retrievalkit.tiny",
            "fixtures.declaring",
            "--deployment",
            "x",
            "--k",
            str(k),
            "--privacy",
            "full",
        )
        document = cli(*args, "--json").json()
        assert document["metrics"]["mrr_at_k"] == pytest.approx(expected)
        assert {q["id"]: q["reciprocal_rank_at_k"] for q in document["questions"]}["json"] == (0.0 if k == 3 else 0.25)
        text = cli(*args).stdout
        assert f"{f'MRR@{k}:':<16}{expected:.3f}" in text
        assert re.search(rf"Class\s+┃ Questions ┃\s+Top-1 ┃\s+Top-3 ┃\s+MRR@{k} ┃", text)
        shown = cli("show", document["run_id"], "--json").json()
        assert shown["metrics"]["retrieval"]["mrr_at_k"] == pytest.approx(expected)
        assert {c["id"]: c["detail"]["reciprocal_rank_at_k"] for c in shown["cases"]}["json"] == (
            0.0 if k == 3 else 0.25
        )


@pytest.mark.parametrize(
    ("variable", "value"), [("EVALKIT_CACHE_DIR", "/dev/null"), ("XDG_CACHE_HOME", "/dev/null/cache")]
)
def test_a_cache_folder_that_cannot_be_made_is_named_with_where_it_came_from(cli, project, variable, value) -> None:
    """EVALKIT_CACHE_DIR=/dev/null was "could not prepare: NotADirectoryError" and exit 3, as if
    the retriever had failed; it is a setting to fix, refused before anything is stored."""
    extra = {"EVALKIT_CACHE_DIR": None} if variable == "XDG_CACHE_HOME" else {}
    result = cli(
        "retrieval",
        "evalkit_stdlib.docs",
        "evalkit.lexical",
        "--deployment",
        "demo",
        extra_env={**extra, variable: value},
    )
    assert result.code == 2, result.stderr[-500:]
    assert (
        f"evalkit.lexical: cannot make its index folder {value}" in result.stderr
        and f"(from ${variable}): Not a directory" in result.stderr
    )
    assert not (project / ".evalkit" / "results.db").exists()


def test_an_index_an_older_reader_built_is_not_served_to_a_newer_one(cli, project, tmp_path, monkeypatch) -> None:
    """An index is keyed by the corpus's content and by what built it: a corpus line with a key
    written twice, indexed while the reader still let the last value win, was served from that
    index after the reader learnt to refuse it, so the refusal waited for the corpus to change."""
    import json as json_module

    from evalkit_plugins import lexical

    cache = tmp_path / "older-cache"
    (project / "corpus.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in CORPUS[:4])
        + '{"id": "doc-zip", "text": "Read ZIP.", "text": "Write ZIP."}\n',
        encoding="utf-8",
    )
    configure(project, {"local": {"evalkit.lexical": {"corpus": "corpus.jsonl"}}})
    with monkeypatch.context() as older:  # an evalkit of before: its reader version, its lenient reader
        older.setattr(lexical, "READER_VERSION", 1, raising=False)
        older.setattr(lexical, "parse_json", lambda text, **_: json_module.loads(text))
        built = lexical.LexicalRetriever(
            lexical.LexicalOptions(str(project / "corpus.jsonl"), index_dir=str(cache / "lexical"))
        )
        assert built.prepare().documents == 5
        built.close()
    args = ("retrieval", "retrievalkit.tiny", "evalkit.lexical", "--deployment", "local")
    refused = cli(*args, extra_env={"EVALKIT_CACHE_DIR": str(cache)})
    assert refused.code == 2, refused.stdout[-500:]
    assert 'line 5: not JSON (key "text" appears more than once' in refused.stderr, refused.stderr[-500:]
    assert not (project / ".evalkit" / "results.db").exists()

    write_corpus(project / "corpus.jsonl", CORPUS)  # fixed: indexed afresh, and the older index is cleaned away
    fixed = cli(*args, extra_env={"EVALKIT_CACHE_DIR": str(cache)})
    assert fixed.code == 0, fixed.stderr[-500:]
    assert len(list((cache / "lexical").iterdir())) == 1


def test_a_retrieval_baseline_file_gates_a_fresh_store_and_one_of_another_scope_is_refused(cli, project) -> None:
    import shutil

    answers = write_answers(project, PERFECT)
    configure(
        project, {"x": {"fixtures.declaring": {"answers": answers}}, "y": {"fixtures.declaring": {"answers": answers}}}
    )
    args = ("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x")
    assert cli(*args).code == 0
    exported = cli("baseline", "export", "retrievalkit.tiny", "--deployment", "x", "-o", "baseline.json")
    assert exported.code == 0, exported.stderr
    shutil.rmtree(project / ".evalkit")  # a fresh CI job: the file is committed, the store is empty

    worse = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    worse_answers = write_answers(project, worse)
    configure(
        project,
        {
            "x": {"fixtures.declaring": {"answers": worse_answers}},
            "y": {"fixtures.declaring": {"answers": worse_answers}},
        },
    )
    gated = cli(*args, "--baseline-file", "baseline.json", "--fail-on-regression", "--json")
    assert gated.code == 1, gated.stdout
    assert gated.json()["hit_rate_changes"]["lost_top1_hits"] == ["json"]
    other = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "y", "--baseline-file", "baseline.json"
    )
    assert other.code == 2 and "baseline file baseline.json holds a run of another scope" in other.stderr, other.stderr


def test_a_shard_of_a_complete_retrieval_run_asks_nothing_and_gives_its_verdict(cli, project) -> None:
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, PERFECT)}}})
    args = (
        "retrieval",
        "retrievalkit.tiny",
        "fixtures.declaring",
        "--deployment",
        "x",
        "--json",
        "--database",
        "sqlite:///s.db",
    )
    first = cli(*args, "--shard", "1/1", "--run-id", "pipeline-3")
    assert first.code == 0, first.stderr
    again = cli(*args, "--shard", "1/1", "--run-id", "pipeline-3")  # a later attempt of the pipeline
    assert again.code == 0, again.stderr
    document = again.json()
    assert document["run_id"] == "pipeline-3" and document["status"] == "complete"
    assert any(note.startswith("Run pipeline-3 is already complete") for note in document["notes"]), document["notes"]
    assert (
        document["metrics"] == first.json()["metrics"]
        and document["verdict"]["state"] == first.json()["verdict"]["state"]
    )


def test_a_long_prepare_is_reported_on_stderr_while_it_runs(cli, project, monkeypatch) -> None:
    """``prepare()`` (an index build) has no time limit, on purpose; a long one said nothing, so the
    command looked hung. While it runs, stderr says so now and then (here every 0.01 s, so a
    prepare of 1 s is reported however loaded the machine); the run then goes on as usual."""
    import evalkit.run.answering.questions as questions

    monkeypatch.setattr(questions, "PREPARE_REPORTED_AFTER_S", 0.01)
    monkeypatch.setattr(questions, "PREPARE_REPORTED_EVERY_S", 0.01)
    answers = write_answers(project, PERFECT)
    configure(project, {"local": {"fixtures.preparing": {"answers": answers, "log": "closed.log", "delay": 1.0}}})
    result = cli("retrieval", "retrievalkit.tiny", "fixtures.preparing", "--deployment", "local", "--json")
    assert result.code == 0, result.stderr
    assert re.search(r'^still preparing retriever "fixtures\.preparing" \(\d+ s\)$', result.stderr, re.MULTILINE), (
        result.stderr
    )
    assert result.json()["status"] == "complete"


def test_ctrl_c_while_the_retriever_prepares_ends_cleanly_and_stores_nothing(env, project, evalkit_process) -> None:  # noqa: ANN001
    """Ctrl-C during ``prepare()`` (untimed: an index build may take an hour), sent to a real process
    as the other interruption tests send it: the command ends as for any interruption (exit 3,
    ``evalkit: interrupted``, no traceback), the retriever is closed, and no run is stored."""
    import signal
    import time

    answers = write_answers(project, PERFECT)
    configure(project, {"local": {"fixtures.preparing": {"answers": answers, "log": "retriever.log", "delay": 3600}}})
    process = evalkit_process.start(
        "retrieval", "retrievalkit.tiny", "fixtures.preparing", "--deployment", "local", env=env
    )
    log = project / "retriever.log"
    try:
        deadline = time.monotonic() + 60
        while not log.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert log.exists(), process.communicate(timeout=5)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3, stderr
    assert "evalkit: interrupted" in stderr and "Traceback" not in stderr
    assert log.read_text(encoding="utf-8") == "preparing\nclosed\n"
    assert stored(project) == []


@pytest.mark.parametrize("privacy", ["metadata", "redacted", "full"])
def test_the_report_a_retrieval_run_writes_holds_what_a_later_report_of_it_holds(cli, project, privacy) -> None:
    """At ``metadata`` privacy the store drops each question's detail (document ids can name
    content) and ``evalkit report RUN`` later omits it, but the report the run wrote itself (html,
    json) showed every ranked id: the live cases were laid over the stored ones as graded. Both
    now keep what the run's privacy level keeps, by one rule."""
    late = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, late)}}})
    ran = cli(
        "retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--privacy", privacy,
        "--report", "json:run.json", "--report", "html:run.html", "--json",
    )  # fmt: skip
    assert ran.code == 0, ran.stderr[-2000:]
    run_id = ran.json()["run_id"]
    later = cli("report", run_id, "--format", "json", "-o", "later.json", "--report", "html:later.html")
    assert later.code == 0, later.stderr[-2000:]
    written, read_later = (json.loads((project / name).read_text(encoding="utf-8")) for name in ("run.json", "later.json"))
    assert written["run"]["cases"] == read_later["run"]["cases"]
    if privacy == "metadata":
        assert all(case["detail"] is None for case in written["run"]["cases"]), written["run"]["cases"]
        for name in ("run.html", "later.html"):
            assert "doc-zip" not in (project / name).read_text(encoding="utf-8"), name
    else:
        ranked = {case["case_id"]: case["detail"]["ranked_ids"] for case in written["run"]["cases"]}
        assert ranked["json"] == ["doc-csv", "doc-zip", "doc-copy", "doc-json"]


def test_the_live_json_holds_every_ranking_whatever_the_privacy_level(cli, project) -> None:
    """docs/providers.md "Privacy levels": `evalkit retrieval --json` is the command's live output,
    as its terminal is: at ``metadata`` its document holds each question's ranked ids and ranking
    (docs/retrieval.md promises them with their scores), while the store keeps only the hits."""
    late = {**PERFECT, QUESTIONS["json"]: ["doc-csv", "doc-zip", "doc-copy", "doc-json"]}
    configure(project, {"x": {"fixtures.declaring": {"answers": write_answers(project, late)}}})
    ran = cli("retrieval", "retrievalkit.tiny", "fixtures.declaring", "--deployment", "x", "--privacy", "metadata", "--json")
    assert ran.code == 0, ran.stderr[-2000:]
    document = ran.json()
    assert document["privacy"] == "metadata"
    live = {q["id"]: q for q in document["questions"]}
    assert live["json"]["ranked_ids"] == ["doc-csv", "doc-zip", "doc-copy", "doc-json"]
    assert [pair[0] for pair in live["json"]["ranking"]] == ["doc-csv", "doc-zip", "doc-copy", "doc-json"]
    shown = cli("show", document["run_id"], "--json")
    assert shown.code == 0, shown.stderr[-2000:]
    assert all(case["detail"] is None for case in shown.json()["cases"]), shown.stdout
    assert "doc-zip" not in shown.stdout
