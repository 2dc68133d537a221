"""Standard collections end to end: a BEIR folder and TREC files declared in evalkit.toml, the
deployment naming its retriever, graded qrels, and TREC files anyone can recompute the run from.

Each collection is built here in tmp_path (never the shared data sets): a small random corpus,
queries made of its words and graded judgements including 0 and -1.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from evalkit.storage import open_repository

pytrec_eval = pytest.importorskip("pytrec_eval")

WORDS = [f"w{i}" for i in range(60)]


def make_collection(root: Path, seed: int = 7) -> dict[str, dict[str, int]]:
    """A BEIR folder with 80 documents, 25 queries and graded qrels; returns the qrels."""
    rng = random.Random(seed)
    (root / "qrels").mkdir(parents=True)
    docs = [
        {"_id": f"doc{i}", "title": " ".join(rng.sample(WORDS, 2)), "text": " ".join(rng.choices(WORDS, k=30))}
        for i in range(80)
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries, qrels = [], {}
    for q in range(25):
        target = rng.sample(docs, 4)
        queries.append({"_id": f"q{q}", "text": " ".join(target[0]["text"].split()[:3] + target[1]["title"].split())})
        qrels[f"q{q}"] = {d["_id"]: g for d, g in zip(target, rng.sample([-1, 0, 1, 2, 3, 3], 4), strict=False)}
    queries.append({"_id": "unjudged", "text": "w1 w2"})
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    rows = [f"{q}\t{d}\t{g}" for q, judged in qrels.items() for d, g in judged.items()]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    return qrels


@pytest.fixture
def collection(project: Path) -> dict[str, dict[str, int]]:
    qrels = make_collection(project / "col")
    (project / "evalkit.toml").write_text(
        '[question_sets."beir.col"]\npath = "col"\nsplit = "test"\n\n'
        '[deployments.prod]\nretriever = "evalkit.lexical"\n\n'
        '[deployments.prod.retrievers."evalkit.lexical"]\ncorpus = "col"\n'
    )
    return qrels


def trec_means(qrels_path: Path, run_path: Path, k: int, threshold: int) -> dict[str, float]:
    """pytrec_eval's means over every judged question (a question missing from the run counts 0)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in run_path.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    names = {"success_1": "success.1,3", "success_3": "success.1,3", "recip_rank": "recip_rank",
             f"recall_{k}": f"recall.{k}", f"ndcg_cut_{k}": f"ndcg_cut.{k}"}  # fmt: skip
    results = pytrec_eval.RelevanceEvaluator(qrels, set(names.values()), relevance_level=threshold).evaluate(run)
    # MRR@k is trec_eval's recip_rank on the ranking cut at k.
    cut = {q: dict(sorted(docs.items(), key=lambda item: -item[1])[:k]) for q, docs in run.items()}
    reciprocal = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=threshold).evaluate(cut)
    for q, values in results.items():
        values["recip_rank"] = reciprocal.get(q, {}).get("recip_rank", 0.0)
    return {m: math.fsum(results.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels) for m in names}


@pytest.mark.parametrize(("k", "threshold"), [(10, 1), (5, 2)])
def test_exported_files_recompute_the_stored_means_with_trec_eval(
    evalkit_cli, project, collection, tmp_path, k, threshold
) -> None:
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", "--k", str(k), "--relevance-threshold", str(threshold),
        "--export-run", "run.txt", "--export-qrels", "qrels.txt", "--privacy", "full", "--json", env=env,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["retriever"] == "evalkit.lexical" and document["deployment"]["name"] == "prod"
    assert document["relevance_threshold"] == threshold and document["metrics"]["by_form"] == {}
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        stored = repository.get_run(document["run_id"])
    finally:
        repository.close()
    means = stored.metrics["retrieval"]
    theirs = trec_means(project / "qrels.txt", project / "run.txt", k, threshold)
    ours = {"success_1": means["top1_hit_rate"], "success_3": means["top3_hit_rate"], "recip_rank": means["mrr_at_k"],
            f"recall_{k}": means["recall_at_k"], f"ndcg_cut_{k}": means["ndcg_at_k"]}  # fmt: skip
    for measure, value in theirs.items():
        assert abs(ours[measure] - value) <= 1e-12, measure
    assert means["question_count"] == 25 and 0 < means["ndcg_at_k"] < 1
    # full privacy keeps every fetched id with its BM25 score, and --json shows the same
    case = stored.case_map()["q0"]
    question = next(q for q in document["questions"] if q["id"] == "q0")
    assert case.detail["ranking"] == question["ranking"] and len(question["ranking"]) == max(k, 12)
    assert all(isinstance(score, float) for _, score in question["ranking"])
    assert question["grades"] == list(collection["q0"].values())


def test_the_deployment_runs_its_retriever_and_an_explicit_one_still_wins(
    evalkit_cli, project, collection, tmp_path
) -> None:
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    by_deployment = evalkit_cli("retrieval", "beir.col", env={**env, "EVALKIT_DEPLOYMENT": "prod"})
    assert by_deployment.code == 0, by_deployment.stderr
    assert "Retriever:      evalkit.lexical" in by_deployment.stdout
    assert "Deployment:     prod (configuration" in by_deployment.stdout
    assert "By form" not in by_deployment.stdout  # every question is unspecified
    explicit = evalkit_cli("retrieval", "beir.col", "evalkit.lexical", "--deployment", "prod", env=env)
    assert explicit.code == 0 and "Baseline state: comparable" in explicit.stdout
    no_retriever = evalkit_cli("retrieval", "beir.col", env=env)
    assert no_retriever.code == 2 and "name a RETRIEVER, or choose a deployment that names one" in no_retriever.stderr


def test_a_broken_collection_is_named_when_its_set_is_asked_for(evalkit_cli, project) -> None:
    (project / "evalkit.toml").write_text('[question_sets."beir.gone"]\npath = "nowhere"\n')
    result = evalkit_cli("retrieval", "beir.gone", "evalkit.lexical")
    assert result.code == 2
    assert 'Unknown golden question set "beir.gone"' in result.stderr
    assert "evalkit.collections" in result.stderr and "does not exist" in result.stderr


def test_one_invalid_collection_table_fails_only_its_own_set(evalkit_cli, project, collection, tmp_path) -> None:
    # one bad [question_sets] table made the whole evalkit.collections provider fail: beir.col was unknown too
    with (project / "evalkit.toml").open("a") as config:
        config.write('[question_sets."beir.gone"]\npath = "nowhere"\n\n[question_sets."trec.odd"]\nformat = "nope"\n')
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    good = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", env=env)
    assert good.code == 0, good.stderr
    for identifier, problem in (("beir.gone", "does not exist"), ("trec.odd", 'format must be "beir" or "trec"')):
        bad = evalkit_cli("retrieval", identifier, "--deployment", "prod", env=env)
        assert bad.code == 2 and f'Unknown golden question set "{identifier}"' in bad.stderr, bad.stderr
        assert "Available sets: beir.col" in bad.stderr
        assert f'[question_sets."{identifier}"]' in bad.stderr and problem in bad.stderr


def test_a_grade_past_what_ndcg_can_use_is_refused_before_anything_runs(evalkit_cli, project, collection) -> None:
    qrels = project / "col" / "qrels" / "test.tsv"
    first_query, judged = next(iter(collection.items()))
    document = next(iter(judged))
    lines = qrels.read_text().splitlines()
    lines = [
        f"{first_query}\t{document}\t{10**400}" if line.startswith(f"{first_query}\t{document}\t") else line
        for line in lines
    ]
    qrels.write_text("\n".join(lines) + "\n")
    result = evalkit_cli("retrieval", "beir.col", "--deployment", "prod")
    assert result.code == 2 and "Traceback" not in result.stderr, result.stderr
    assert f'question "{first_query}": field grades[' in result.stderr
    assert "must be from -2,147,483,648 to 2,147,483,647" in result.stderr
    assert (
        not (project / ".evalkit" / "results.db").exists()
        or "beir.col" not in evalkit_cli("history", "beir.col").stdout
    )


def test_an_export_path_in_no_folder_is_named_as_a_path(evalkit_cli, project, collection, tmp_path) -> None:
    """``--export-run missing/x<LF>evalkit: ok: must be a file …``: the path was put in raw, and a
    usage error keeps its lines. It is named as every message names a path (``path_named``)."""
    result = evalkit_cli(
        "retrieval", "beir.col", "--deployment", "prod", "--export-run", "missing/run\nevalkit: ok.txt",
        env={"EVALKIT_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert result.code == 2, result.stderr
    assert '--export-run "missing/run\\x0aevalkit: ok.txt": must be a file in an existing folder' in result.stderr
    assert not any(line.startswith("evalkit: ok") for line in result.stderr.splitlines()), result.stderr


@pytest.mark.parametrize(
    ("path", "refusal"),
    [
        (" ", '--export-run " ": names no file (its name is blank)'),
        ("out/\t", '--export-run "out/\\x09": names no file (its name is blank)'),
        ("n" * 300, f"--export-run {'n' * 300}: cannot be made: File name too long"),
        (".evalkit/results.db", "--export-run .evalkit/results.db: is the results store's file"),
    ],
    ids=["space", "tab", "too-long", "the-store"],
)
def test_an_export_path_no_write_could_make_is_refused_before_anything_is_stored(
    evalkit_cli, project, collection, tmp_path, path, refusal
) -> None:
    """``--export-run " "`` wrote a file named by a space; ``--export-run .evalkit/results.db``
    (the store) ran and stored the run, then failed, exit 3; a name too long was an internal error."""
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    assert evalkit_cli("retrieval", "beir.col", "--deployment", "prod", env=env).code == 0
    before = len(evalkit_cli("history", "beir.col", "--json").json()["runs"])
    result = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", "--export-run", path, env=env)
    assert result.code == 2 and refusal in result.stderr, result.stderr
    assert len(evalkit_cli("history", "beir.col", "--json").json()["runs"]) == before, "nothing stored"
    assert sorted(entry.name for entry in project.iterdir()) == [".evalkit", "col", "evalkit.toml"]


def test_an_export_or_report_in_a_folder_that_takes_no_file_is_refused_before_anything_is_stored(
    evalkit_cli, project, collection, tmp_path
) -> None:
    """``--export-run ro/run.txt`` on a read-only mount (root's permission bits do not stop it)
    asked every question and stored the run, then failed; ``--report html:ro/r.html`` likewise,
    its reporter failing at the end. Both are refused first, exit 2, naming the option and the path."""
    from tests.support.tmpfs import read_only_folder

    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    with read_only_folder(project / "ro") as folder:
        for option, value, said in (
            ("--export-run", "ro/run.txt", "--export-run ro/run.txt: cannot be made: "),
            ("--export-qrels", "ro/qrels.txt", "--export-qrels ro/qrels.txt: cannot be made: "),
            ("--report", "html:ro/r.html", "--report: the html report cannot be written to ro/r.html: it cannot be made: "),
        ):
            result = evalkit_cli("retrieval", "beir.col", "--deployment", "prod", option, value, env=env)
            assert result.code == 2 and said in result.stderr, result.stderr
            assert "no file can be made in ro (Read-only file system)" in result.stderr
        assert list(folder.iterdir()) == []
    assert not (project / ".evalkit").exists(), "nothing stored"
