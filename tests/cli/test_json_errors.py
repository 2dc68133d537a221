"""With ``--json``, an error exit ends standard output with one JSON object: a CI script parsing
``evalkit run … --json`` got nothing machine-readable when the command failed (the error was text
on standard error only). The text on standard error stays as it was."""

from __future__ import annotations

import json

import pytest

from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with


def error_object(result) -> dict:  # noqa: ANN001 - a CliResult
    """The last line of standard output, which must be the error object."""
    document = json.loads(result.stdout.splitlines()[-1])
    assert set(document) >= {"error", "exit_code", "runs_kept"}, document
    assert document["exit_code"] == result.code
    return document


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_usage_error_click_found_is_an_error_object_exit_2(evalkit_cli, where: str) -> None:
    args = ("--json", "run", "evalkit.smoke", "--bogus") if where == "before" else ("run", "evalkit.smoke", "--bogus", "--json")
    result = evalkit_cli(*args)
    assert result.code == 2
    assert result.json() == {"error": "No such option '--bogus'.", "exit_code": 2, "runs_kept": []}, "stdout is the object alone"
    assert "evalkit run: error: No such option '--bogus'." in result.stderr and "Usage: evalkit run" in result.stderr


def test_a_prefix_of_json_click_takes_counts_and_words_after_the_double_dash_do_not(evalkit_cli) -> None:
    assert evalkit_cli("run", "evalkit.smoke", "--bogus", "--js").json()["exit_code"] == 2
    refused = evalkit_cli("run", "evalkit.smoke", "--bogus", "--", "--json")
    assert refused.code == 2 and refused.stdout == ""


def test_no_command_and_a_command_without_json_are_usage_errors_said_in_json(evalkit_cli) -> None:
    bare = evalkit_cli("--json")
    assert bare.code == 2 and error_object(bare)["error"] == "no command given (the usage is on standard error)"
    assert "Usage: evalkit" in bare.stderr and "Usage" not in bare.stdout, "the help is no JSON document: on stderr"
    models = evalkit_cli("--json", "models")
    assert models.code == 2 and error_object(models)["error"] == "--json does not apply to `evalkit models`: it prints no JSON document"


def test_invalid_input_is_an_error_object_exit_2_naming_the_culprit(evalkit_cli, project) -> None:
    (project / "evalkit.toml").write_text('database = "sqlite://x.db"\n', encoding="utf-8")
    result = evalkit_cli("run", "evalkit.smoke", "--json")
    assert result.code == 2
    document = result.json()
    assert document["error"].startswith(f'{project / "evalkit.toml"}: database URL "sqlite://x.db" is not spelled sqlite:///PATH')
    assert document["runs_kept"] == [] and f"evalkit: error: {document['error']}" in result.stderr


def test_a_set_s_problems_are_the_error_object_s_details(evalkit_cli, project) -> None:
    from tests.cli.test_set_files_cmd import BROKEN, GOOD, project_with

    project_with(project, {"faq.yaml": GOOD, "broken.yaml": BROKEN})
    result = evalkit_cli("run", "myapp.faq", "--json")
    assert result.code == 2, result.stderr
    document = error_object(result)
    assert document["error"] == "the set files are invalid (3 problems):"
    assert len(document["details"]) == 3 and all(f"  - {problem}" in result.stderr for problem in document["details"])
    assert "evals/broken.yaml:7:16: prompt 'a': assertions[0].regex: invalid regular expression" in document["details"][0]


def test_a_run_that_could_not_complete_is_an_error_object_exit_3_with_the_run_kept(evalkit_cli, project, monkeypatch) -> None:
    from evalkit.run.answering.prompts import PromptAnswering

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug in finishing the run")

    answer_with(project, ARITH_GOOD)
    monkeypatch.setattr(PromptAnswering, "finish", broken)
    crashed = evalkit_cli("run", "arith.basic", "--run-id", "crash-1", "--json")
    assert crashed.code == 3, crashed.stderr
    document = error_object(crashed)
    assert document["runs_kept"] == ["crash-1"]
    assert document["error"].startswith("internal error (an evalkit bug) during run crash-1: RuntimeError: a bug in finishing the run")
    assert "Traceback" not in crashed.stdout and "Traceback" in crashed.stderr, "the traceback stays on stderr"


def test_an_interrupt_is_an_error_object_exit_3(evalkit_cli, monkeypatch) -> None:
    from evalkit.cli import list_cmd

    def interrupted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(list_cmd, "handle", interrupted)
    result = evalkit_cli("list", "--json")
    assert result.code == 3 and result.json() == {"error": "interrupted", "exit_code": 3, "runs_kept": []}


def test_without_json_or_with_the_command_s_own_exit_code_no_error_object_is_written(evalkit_cli, project) -> None:
    (project / "evalkit.toml").write_text('database = "sqlite://x.db"\n', encoding="utf-8")
    assert evalkit_cli("run", "evalkit.smoke").stdout == ""
    (project / "evalkit.toml").unlink()
    answer_with(project, ARITH_GOOD)
    assert evalkit_cli("run", "arith.basic").code == 0
    answer_with(project, {**ARITH_GOOD, "add-7-5": "13"})
    regressed = evalkit_cli("run", "arith.basic", "--json", "--fail-on-regression")
    assert regressed.code == 1 and "error" not in regressed.json(), "a failed gate prints the run's own document"


def test_a_document_an_error_cut_short_is_followed_by_the_error_object_on_a_line_of_its_own(capsys) -> None:
    from evalkit.cli import error_json
    from evalkit.cli.json_output import print_json_streamed

    def cases():  # noqa: ANN202
        yield {"id": "a"}
        raise RuntimeError("the store went away")

    error_json.begin()
    with pytest.raises(RuntimeError):
        print_json_streamed({"run_id": "r1"}, "cases", cases(), batch=1)
    error_json.said("evalkit: error: the store went away")
    error_json.write_error_object(3)
    cut, last = capsys.readouterr().out.splitlines()
    assert cut.startswith('{"run_id":"r1","cases":[{"id":"a"}')
    assert json.loads(last) == {"error": "the store went away", "exit_code": 3, "runs_kept": []}
    error_json.begin()
