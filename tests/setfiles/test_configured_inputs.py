"""A file the configuration names for another job is no set file, wherever a set file is looked for.

A project keeps a ``replay`` provider's recorded answers (JSONL) beside its sets, as the
``evalkit init`` of the released version did: ``[sets] paths = ["evals"]``, ``evalkit validate
evals``, ``evalkit validate .`` and the ``evalkit-validate-files`` pre-commit hook (which names the
staged files) read that file — and ``evalkit.toml`` itself, under ``.`` — as set files and failed
them line by line, and with ``paths = ["evals"]`` every command refused the project. Such files
are passed over, each named with what names it (:func:`evalkit.setfiles.configured_inputs`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

FAQ = """\
identifier: demo.faq
name: FAQ
prompts:
  - id: hours
    prompt: When is the office open?
    assertions: [{contains: Monday}]
"""


def lay_out(project: Path, paths: str = '["evals"]') -> None:
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "faq.yaml").write_text(FAQ)
    (project / "evals" / "answers.jsonl").write_text('{"id": "hours", "text": "Monday to Friday.", "model": "app-1"}\n')
    (project / "evalkit.toml").write_text(
        f'[sets]\npaths = {paths}\n\n[providers.recorded]\nadapter = "replay"\nmodel = "app-1"\npath = "evals/answers.jsonl"\n'
        '\n[providers.other]\nadapter = "replay"\nmodel = "."\npath = "evals/answers.jsonl"\n'  # "." names the root: no file
    )


SKIP = "skip  evals/answers.jsonl: named by [providers.recorded] path in evalkit.toml, not a set file; passed over"


def test_a_folder_in_sets_paths_passes_over_the_recorded_answers_and_the_project_runs(evalkit_cli, project: Path) -> None:
    lay_out(project)
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stderr
    assert "ok  evals/faq.yaml" in checked.stdout and SKIP in checked.stdout
    assert "ok  set demo.faq (1 prompt)" in checked.stdout
    run = evalkit_cli("run", "demo.faq", "--provider", "recorded", "--json")
    assert run.code == 0, run.stderr
    assert run.json()["pass_rate"] == 1.0
    assert [row["identifier"] for row in evalkit_cli("list", "sets", "--json").json()["sets"] if row["identifier"].startswith("demo")] == ["demo.faq"]


@pytest.mark.parametrize("targets", [["evals"], ["."], ["evals/answers.jsonl"], ["evals/faq.yaml", "evals/answers.jsonl"]])
def test_validate_passes_over_what_the_configuration_names_when_named_or_under_a_folder(evalkit_cli, project: Path, targets: list[str]) -> None:
    lay_out(project, paths='["evals/*.yaml"]')
    checked = evalkit_cli("validate", *targets)
    assert checked.code == 0, checked.stderr
    assert SKIP in checked.stdout
    assert ("skip  evalkit.toml: the configuration file evalkit.toml, not a set file; passed over" in checked.stdout) == (targets == ["."])
    assert "nothing to check" not in checked.stdout
    document = evalkit_cli("validate", *targets, "--json").json()
    assert document["valid"] is True
    assert {"file": "evals/answers.jsonl", "line": None, "path": None, "id": None,
            "reason": "named by [providers.recorded] path in evalkit.toml, not a set file; passed over"} in document["skipped"]  # fmt: skip


def test_a_file_the_configuration_does_not_name_is_still_read_and_refused(evalkit_cli, project: Path) -> None:
    lay_out(project)
    (project / "evals" / "stray.jsonl").write_text('{"id": "x", "text": "not a prompt"}\n')
    checked = evalkit_cli("validate", "evals")
    assert checked.code == 2
    assert "evals/stray.jsonl:1:1: prompt 'x': 'prompt' is required" in checked.stderr
    assert SKIP in checked.stdout


TEMPLATE = """\
identifier: demo.capitals
name: Capitals
prompts:
  - id: capital
    template: What is the capital of {country}?
    vars: capitals.jsonl
    id_column: country
    assertions: [{contains: "{capital}"}]
"""


def test_a_templates_jsonl_table_beside_its_set_file_is_passed_over_not_read_as_a_set(evalkit_cli, project: Path) -> None:
    """A ``.jsonl`` table of variables beside the set file that names it, under a folder of
    ``[sets] paths``: it was read as a set file too, and every command refused the project
    (``evals/capitals.jsonl:1:1: 'identifier' is required``, exit 2)."""
    (project / "evals").mkdir()
    (project / "evals" / "capitals.yaml").write_text(TEMPLATE)
    (project / "evals" / "capitals.jsonl").write_text('{"country": "France", "capital": "Paris"}\n{"country": "Japan", "capital": "Tokyo"}\n')
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals"]\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n')
    skip = "skip  evals/capitals.jsonl: named by prompts[0].vars in evals/capitals.yaml as its table of variables, not a set file; passed over"
    for targets in ([], ["evals"], ["evals/capitals.yaml", "evals/capitals.jsonl"]):
        checked = evalkit_cli("validate", *targets)
        assert checked.code == 0, checked.stdout + checked.stderr
        assert "ok  set demo.capitals (2 prompts)" in checked.stdout and skip in checked.stdout
    listed = evalkit_cli("list", "sets", "--json")
    assert listed.code == 0, listed.stderr
    assert "demo.capitals" in [row["identifier"] for row in listed.json()["sets"]]
