"""A wildcard in ``[sets] paths`` matches set files only, as a folder entry does.

``paths = ["evals/*"]`` read every file the wildcard matched as a set file: the ``.csv`` table a
template names beside its set file (where sets.md puts it) and a README were each refused as "an
unsupported type", so `evalkit validate` failed and every set file vanished from `evalkit list`,
while ``paths = ["evals"]`` passed them over. Both now stand for the set files they meet
(:func:`evalkit.setfiles.set_file_names`); a file named without wildcards is still refused when
it is no set file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CAPITALS = """\
identifier: demo.capitals
name: Capitals
prompts:
  - id: capital
    template: What is the capital of {country}? Answer with the city only.
    vars: capitals.csv
    reference: "{capital}"
    assertions: [{contains: "{capital}"}]
"""


def lay_out(project: Path) -> None:
    (project / "evals" / "more").mkdir(parents=True)
    (project / "evals" / "capitals.yaml").write_text(CAPITALS)
    (project / "evals" / "capitals.csv").write_text("country,capital\nFrance,Paris\nItaly,Rome\n")
    (project / "evals" / "README.md").write_text("How to add a set.\n")
    (project / "evals" / "more" / "notes.txt").symlink_to("moved.txt")  # not a set file's name: never looked at


@pytest.mark.parametrize("pattern", ["evals/*", "evals/**/*", "evals/*/*", "evals"])
def test_a_wildcard_passes_over_what_is_no_set_file_as_a_folder_does(evalkit_cli, project: Path, pattern: str) -> None:
    lay_out(project)
    (project / "evalkit.toml").write_text(f'[sets]\npaths = ["{pattern}"]\n')
    checked = evalkit_cli("validate", "--json")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert checked.json()["problems"] == []
    if pattern != "evals/*/*":  # that one reaches only evals/more/, which holds no set file
        listed = evalkit_cli("list", "sets")
        assert listed.code == 0 and "demo.capitals" in listed.stdout, listed.stdout + listed.stderr
        assert evalkit_cli("run", "demo.capitals").code == 0


def test_a_file_named_without_wildcards_that_is_no_set_file_is_still_refused(evalkit_cli, project: Path) -> None:
    lay_out(project)
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml", "evals/capitals.csv"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert "evals/capitals.csv: has an unsupported type; use one of .yaml, .yml, .json, .jsonl, .toml" in checked.stdout + checked.stderr
    named = evalkit_cli("validate", "evals/README.md")
    assert named.code == 2 and "evals/README.md: has an unsupported type" in named.stdout + named.stderr
