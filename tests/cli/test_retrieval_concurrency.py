"""`evalkit retrieval --concurrency N`: only for retrievers that declare themselves thread-safe."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = "evalkit-retrieval-fixtures"
QUESTIONS = ["deserialize a JSON document", "read rows of a comma separated values file",
             "make the program wait a little", "quantum chromodynamics lattice"]  # fmt: skip


def write_config(project: Path, retriever: str, options: dict[str, object]) -> None:
    lines = [f'[deployments.local]\nretriever = "{retriever}"', f'[deployments.local.retrievers."{retriever}"]']
    lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    (project / "evalkit.toml").write_text("\n".join(lines) + "\n")


def test_concurrency_is_refused_for_a_retriever_that_does_not_declare_itself_thread_safe(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists(FIXTURES)}
    (project / "answers.json").write_text(json.dumps({QUESTIONS[0]: ["doc-json"]}))
    write_config(project, "fixtures.scripted", {"answers": "answers.json"})
    refused = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "local", "--concurrency", "2", env=env)
    assert refused.code == 2
    assert 'retriever "fixtures.scripted" does not declare itself thread-safe (thread_safe = True)' in refused.stderr
    assert refused.stdout == "" and not (project / ".evalkit" / "results.db").exists()  # refused before the store opens
    alone = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "local", env=env)
    assert alone.code == 0, alone.stderr


def test_a_thread_safe_retriever_answers_several_questions_at_once_in_set_order(evalkit_cli, project, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists(FIXTURES)}
    (project / "answers.json").write_text(json.dumps({QUESTIONS[0]: ["doc-json"], QUESTIONS[2]: ["doc-sleep"]}))
    write_config(project, "fixtures.slow", {"answers": "answers.json", "log": str(project / "asked.log"), "delay": 0.05})
    result = evalkit_cli("retrieval", "retrievalkit.tiny", "--deployment", "local", "--concurrency", "4", "--json", env=env)
    assert result.code == 0, result.stderr
    document = result.json()
    assert [q["id"] for q in document["questions"]] == ["json", "csv", "nap", "nothing"]
    assert document["metrics"]["top1_hits"] == 3  # json, nap, and "nothing" answered with nothing
    assert sorted((project / "asked.log").read_text().splitlines()) == sorted(QUESTIONS)
