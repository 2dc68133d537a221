"""Plugins declare their options as attrs classes; evalkit checks the configuration against them
before building anything, and lists them."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import attrs
import pytest
from evalkit import registry
from evalkit.options import declared_options, receives_options


def test_a_missing_required_option_names_plugin_option_and_table(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\nmodel = "v1"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app")
    assert result.code == 2 and result.stdout == ""
    assert 'generator "replay" (evalkit-golden' in result.stderr
    assert 'needs option "path"' in result.stderr
    assert f"[providers.my-app] of {project / 'evalkit.toml'}" in result.stderr
    assert "__init__" not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"


def test_an_unknown_option_is_refused_with_a_suggestion(evalkit_cli, project: Path) -> None:
    (project / "answers.jsonl").write_text("")
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\npaht = "answers.jsonl"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app")
    assert result.code == 2
    assert 'has no option "paht"' in result.stderr and 'Did you mean "path"?' in result.stderr
    assert "Its options: path, model." in result.stderr


def test_a_value_of_the_wrong_type_names_the_option(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(
        '[providers.gpt]\nadapter = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ntimeout = "fast"\napi_key = "sk-x"\n'
    )
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2
    assert 'has no option "api_key"' in result.stderr and "api_key_env" in result.stderr
    assert "sk-x" not in result.stderr


def test_a_wrong_type_alone_is_reported_with_the_value(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.gpt]\nadapter = "openai"\nmodel = "m"\nconcurrency = "many"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2
    assert 'wrong value for option "concurrency" in [providers.gpt]' in result.stderr and "'many'" in result.stderr


def test_a_retriever_without_its_required_option_names_the_deployment_table(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[deployments.demo.retrievers."evalkit.lexical"]\ntitle_weight = 2.0\n')
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert result.code == 2
    assert 'retriever "evalkit.lexical"' in result.stderr and 'needs option "corpus"' in result.stderr
    assert '[deployments.demo.retrievers."evalkit.lexical"]' in result.stderr
    unknown = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "dmeo")
    assert unknown.code == 2 and 'Did you mean "demo"?' in unknown.stderr


def test_list_plugins_options_shows_each_declared_option(evalkit_cli) -> None:
    text = evalkit_cli("list", "plugins", "--options")
    assert text.code == 0, text.stderr
    assert "api_key_env: str | None, default none — the NAME of the environment variable holding the API key" in text.stdout
    assert "corpus: str, required" in text.stdout
    assert "(takes no options)" in text.stdout  # deterministic
    document = evalkit_cli("list", "--options", "--json").json()
    replay = next(row for row in document if row["name"] == "replay")
    assert replay["options"][0] == {
        "name": "path", "type": "str", "required": True, "default": None,
        "help": replay["options"][0]["help"],
    }
    plain = evalkit_cli("list", "--json").json()
    assert "options" not in plain[0], "plain `evalkit list` loads no plugin"
    refused = evalkit_cli("list", "sets", "--options")
    assert refused.code == 2 and "--options applies to `evalkit list plugins`" in refused.stderr


BUILT_IN = [
    r for r in registry.scan()
    if r.distribution == "evalkit-golden" and r.group in ("evalkit.generators", "evalkit.retrievers", "evalkit.graders")
]


@pytest.mark.parametrize("record", BUILT_IN, ids=lambda r: f"{r.group}:{r.name}")
def test_every_built_in_plugin_declares_its_options_once_and_receives_them_as_one_object(record: registry.PluginRecord) -> None:
    factory = registry.load(record)
    options = declared_options(factory)
    assert options is not None, f"{record.describe()} declares no Options"
    assert receives_options(factory) == "options", f"{record.describe()} must take its Options object, not repeat its options"
    parameters = [p for p in inspect.signature(factory).parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert [p.name for p in parameters] == ["options"], "no option is repeated in the constructor"
    assert all(field.metadata.get("help") for field in attrs.fields(options)), "every option has its line of help"
    assert not hasattr(factory, "path_options"), "path options are marked on their fields (option(..., path=True))"


def test_set_providers_receive_their_options_from_config(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-options-sets")}
    (project / "prompts").mkdir()
    (project / "prompts" / "hello.txt").write_text("Hello there\n")
    (project / "evalkit.toml").write_text(
        '[set_providers."optsets.folder"]\nfolder = "prompts"\nprefix = "mine"\n\n'
        '[opt_questions.capitals]\nquestion = "capital of France?"\nrelevant = ["doc-paris"]\n'
    )
    (project / "sub").mkdir()
    listed = evalkit_cli("list", "sets", "--json", env=env, cwd=project / "sub")
    assert listed.code == 0, listed.stderr
    assert "mine.folder" in [row["identifier"] for row in listed.json()["sets"]]
    run = evalkit_cli("run", "mine.folder", "--json", env=env, cwd=project / "sub")
    assert run.code == 0 and run.json()["pass_rate"] == 1.0
    questions = evalkit_cli("list", "questions", "--json", env=env).json()
    assert "optsets.capitals" in [row["identifier"] for row in questions["sets"]]


def test_a_set_provider_with_a_missing_or_wrong_option_is_named(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-options-sets")}
    (project / "evalkit.toml").write_text('[set_providers."optsets.folder"]\nprefx = "x"\n\n[opt_questions.bad]\nquestion = 3\nrelevant = []\n')
    run = evalkit_cli("run", "optsets.folder", env=env)
    assert run.code == 2
    assert "golden prompt set provider optsets.folder (evalkit-options-sets 1.2.0): its options are wrong" in run.stderr
    assert 'needs option "folder"' in run.stderr and 'Did you mean "prefix"?' in run.stderr
    assert '[set_providers."optsets.folder"]' in run.stderr
    questions = evalkit_cli("list", "questions", env=env)
    assert questions.code == 2
    assert 'optsets.questions (evalkit-options-sets 1.2.0): it has a wrong value for option "question" in [opt_questions.bad]' in questions.stderr
    assert evalkit_cli("run", "evalkit.smoke", env=env).code == 0, "other providers' sets still run"


def test_a_plugin_that_declares_nothing_still_gets_its_table(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-retrieval-fixtures")}
    listed = evalkit_cli("list", "--options", "--json", env=env).json()
    undeclared = [row for row in listed if row["distribution"] == "evalkit-retrieval-fixtures" and row["options"] is None]
    assert undeclared, json.dumps(listed)[:400]
