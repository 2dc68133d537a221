"""``evalkit retrieval … --judge-unjudged NAME`` end to end: the documents a retriever returned that
nobody judged are graded by the relevance judge (an ``openai`` instance pointed at the local
chat-completions server, scripted grades), the figures with those holes filled are shown beside
the human-label ones, and the store keeps which grades came from the model.

The collection is built here in tmp_path: five documents, two queries, one judged document each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from evalkit.storage import open_repository

from tests.plugins.judge_support import JUDGE_MODEL, user_message
from tests.support.chat_server import ChatServer

DOCS = {
    "d1": "apple orchard harvest in autumn",
    "d2": "apple pie recipe with cinnamon",
    "d3": "apple cider pressing",
    "d4": "banana bread baking",
    "d5": "banana plantation farming",
}
QUERIES = {"q1": "apple harvest", "q2": "banana farming"}
#: The people's labels: one document per query (q1's is not the one the retriever ranks first).
QRELS = {"q1": {"d3": 1}, "q2": {"d5": 1}}
#: What the judge says of each document, whatever the query (scripted).
JUDGE_GRADES = {"d1": 3, "d2": 0, "d3": 2, "d4": 3, "d5": 3}


def write_collection(project: Path, judge_url: str, *, judge: bool = True) -> None:
    folder = project / "col"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in DOCS.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    rows = [f"{q}\t{d}\t{g}" for q, judged in QRELS.items() for d, g in judged.items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    providers = (
        f'[providers.judge]\nadapter = "openai"\nbase_url = "{judge_url}"\nmodel = "judge-alias"\nmax_attempts = 1\napi_key_env = ""\n'
        if judge
        else ""
    )
    (project / "evalkit.toml").write_text(
        '[question_sets."beir.col"]\npath = "col"\n\n'
        '[deployments.prod]\nretriever = "evalkit.lexical"\n\n'
        f'[deployments.prod.retrievers."evalkit.lexical"]\ncorpus = "col"\nindex_dir = "{project / "index"}"\n\n' + providers
    )


def document_of(body: Mapping[str, Any]) -> str:
    return user_message(body).split("DOCUMENT\n<<<\n", 1)[1].split("\n>>>", 1)[0]


def grading(body: Mapping[str, Any]) -> str:
    text = document_of(body)
    (doc,) = [d for d, t in DOCS.items() if t == text]
    return json.dumps({"reason": "Scripted.", "grade": JUDGE_GRADES[doc]})


@pytest.fixture
def judge(chat_server: ChatServer, project: Path) -> ChatServer:
    chat_server.model = JUDGE_MODEL
    chat_server.responder = grading
    write_collection(project, chat_server.base_url)
    return chat_server


def retrieval(evalkit_cli: Callable[..., Any], *args: str) -> Any:
    return evalkit_cli("retrieval", "beir.col", "--deployment", "prod", "--k", "3", *args)


def test_holes_are_graded_and_reported_beside_the_human_figures(judge: ChatServer, evalkit_cli: Callable[..., Any], project: Path) -> None:
    plain = retrieval(evalkit_cli, "--json")
    assert plain.code == 0, plain.stderr
    assert plain.json()["judged_holes"] is None
    assert judge.request_count == 0

    result = retrieval(evalkit_cli, "--judge-unjudged", "judge", "--privacy", "full", "--json")
    assert result.code == 0, result.stderr
    document = result.json()
    rankings = {q["id"]: q["ranked_ids"][:3] for q in document["questions"]}
    holes = {q: [d for d in ranked if d not in QRELS[q]] for q, ranked in rankings.items()}
    # Every hole of the top 3, and nothing else, was shown to the judge, with its query.
    asked = [r for r in judge.requests if r.path.endswith("/chat/completions")]  # besides the readiness probe
    assert len(asked) == sum(len(h) for h in holes.values()) > 0
    assert all(user_message(r.body).startswith("QUERY\n<<<\n" + QUERIES["q1"]) or QUERIES["q2"] in user_message(r.body) for r in asked)
    shown = sorted(document_of(r.body) for r in asked)
    assert shown == sorted(DOCS[d] for h in holes.values() for d in h)
    # The human figures are the run's metrics, exactly as without the judge.
    assert document["metrics"] == {**plain.json()["metrics"], "latency_p50_s": document["metrics"]["latency_p50_s"],
                                   "latency_p95_s": document["metrics"]["latency_p95_s"]}  # fmt: skip
    filled = document["judged_holes"]
    assert filled["judge"]["instance"] == "judge" and filled["judge"]["models"] == [JUDGE_MODEL]
    assert filled["judge"]["binary_from"] == 2  # the set's labels are binary
    assert filled["judged"] == sum(len(h) for h in holes.values()) and filled["unjudged"] == 0
    # q1's top document, unjudged by people and graded 3, is a hit once the holes are filled.
    assert rankings["q1"][0] == "d1" and document["metrics"]["top1_hit_rate"] == 0.5
    assert filled["metrics"]["top1_hit_rate"] == 1.0
    # Filled: a hole graded 2 or 3 counts as relevant, 0 or 1 not; recall counts every relevant document.
    for question in document["questions"]:
        model = question["holes_filled"]["model_grades"]
        assert model == {d: JUDGE_GRADES[d] for d in holes[question["id"]]}
        relevant = set(QRELS[question["id"]]) | {d for d, g in model.items() if g >= 2}
        ranked = rankings[question["id"]]
        assert question["holes_filled"]["hit_at_1"] == (ranked[0] in relevant)
        assert question["holes_filled"]["recall_at_k"] == pytest.approx(sum(d in relevant for d in ranked) / len(relevant))
    # The store keeps which grades came from the model: per case, and the judge with the run.
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        run = repository.get_run(document["run_id"])
        assert run.metrics["judged_holes"]["judge"]["instance"] == "judge"
        assert run.metrics["retrieval"]["top1_hit_rate"] == document["metrics"]["top1_hit_rate"]
        for case in run.cases:
            assert case.measures["model_judged"] == len(holes[case.case_id])
            assert case.detail["model_grades"] == {d: JUDGE_GRADES[d] for d in holes[case.case_id]}
            assert case.measures["filled_recall_at_k"] == pytest.approx(
                next(q for q in document["questions"] if q["id"] == case.case_id)["holes_filled"]["recall_at_k"]
            )
    finally:
        repository.close()


def test_the_human_report_shows_both_columns(judge: ChatServer, evalkit_cli: Callable[..., Any]) -> None:
    result = retrieval(evalkit_cli, "--judge-unjudged", "judge")
    assert result.code == 0, result.stderr
    assert "Unjudged documents graded by a relevance judge" in result.stdout
    assert 'Judge:          "judge" (' in result.stdout, "the judge named quoted, as every message names a user's word"
    assert "Human labels" in result.stdout and "Holes filled" in result.stdout
    assert "The gate and the regression check use the human labels only" in result.stdout


def test_an_unknown_judge_is_refused_before_anything_is_asked_or_stored(
    chat_server: ChatServer, project: Path, evalkit_cli: Callable[..., Any]
) -> None:
    write_collection(project, chat_server.base_url, judge=False)
    result = retrieval(evalkit_cli, "--judge-unjudged", "judge")
    assert result.code == 2
    assert 'judge "judge" is not a configured provider instance' in result.stderr
    assert chat_server.request_count == 0
    assert not (project / ".evalkit" / "results.db").exists()


def test_a_judge_that_cannot_be_reached_stores_nothing(project: Path, evalkit_cli: Callable[..., Any]) -> None:
    from tests.plugins.judge_support import closed_port_url

    write_collection(project, closed_port_url())
    result = retrieval(evalkit_cli, "--judge-unjudged", "judge")
    assert result.code == 2, result.stderr  # as `evalkit run` refuses a grader that cannot run
    assert 'its judge "judge" is not reachable' in result.stderr
    assert not (project / ".evalkit" / "results.db").exists()
