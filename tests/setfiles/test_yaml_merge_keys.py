"""YAML merge keys (``<<: *base``) and the keys a mapping writes beside them.

A key written in a mapping overrides the same key merged in: that is what a merge key is for
(``<<: *base`` then ``id: b``). PyYAML's constructor writes the merged pairs into the mapping's
node, so the walk after it that finds repeated keys took each overridden key for one written twice
(``key 'id' appears more than once``), exit 2 for a valid file. A key the file itself writes twice
is still a problem.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.setfiles import load_set_files

MERGED = """\
identifier: demo.merge
name: Merged
prompts:
  - &first
    id: a
    prompt: What is 2 + 2?
    reference: "4"
    assertions: [{contains: "4"}]
  - <<: *first
    id: b
    prompt: What is 3 + 1?
  - <<: [*first, {reference: "four"}]
    id: c
    assertions:
      - contains_any: ["4", four]
"""


def test_a_key_written_beside_a_merge_key_overrides_it_and_validates_and_runs(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "merge.yaml").write_text(MERGED)
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stdout + checked.stderr
    assert "ok  set demo.merge (3 prompts)" in checked.stdout
    ran = evalkit_cli("run", "demo.merge", "--json")
    assert ran.code == 0, ran.stderr
    assert ran.json()["pass_rate"] == 1.0 and [case["id"] for case in ran.json()["cases"]] == ["a", "b", "c"]


def test_the_overriding_values_are_the_ones_loaded_and_problems_point_at_them(tmp_path: Path) -> None:
    (tmp_path / "merge.yaml").write_text(MERGED.replace('prompt: What is 3 + 1?', "prompt: What is 3 + 1?\n    tags: 7"))
    loaded = load_set_files([tmp_path / "merge.yaml"], root=tmp_path)
    (problem,) = loaded.problems
    assert (problem.line, problem.json_path) == (12, "prompts[1].tags"), str(problem)
    (tmp_path / "merge.yaml").write_text(MERGED)
    (golden,) = load_set_files([tmp_path / "merge.yaml"], root=tmp_path).prompt_sets
    assert [(p.id, p.prompt) for p in golden.prompts] == [("a", "What is 2 + 2?"), ("b", "What is 3 + 1?"), ("c", "What is 2 + 2?")]


def test_a_key_written_twice_beside_a_merge_key_is_still_a_problem(tmp_path: Path) -> None:
    (tmp_path / "twice.yaml").write_text(MERGED.replace("    id: b\n", "    id: b\n    id: b2\n"))
    (problem,) = load_set_files([tmp_path / "twice.yaml"], root=tmp_path).problems
    assert (problem.line, problem.json_path) == (11, "prompts[1].id") and "appears more than once" in problem.reason


def test_a_key_written_twice_is_named_by_the_file_as_shown_and_its_file_is_not_ok(evalkit_cli, project: Path) -> None:
    """A repeated key is found by the reader, before the file's name is made relative to the
    project: the problem named the file by its absolute path (every other problem by the relative
    one), and `validate` printed `ok  evals/twice.yaml` for the same file, matching it by name."""
    (project / "evals").mkdir()
    (project / "evals" / "twice.yaml").write_text(MERGED.replace("    id: b\n", "    id: b\n    id: b2\n"))
    (project / "evals" / "twice.json").write_text('{"identifier": "demo.j", "name": "J", "prompts": [{"id": "a", "id": "b", "prompt": "p", "reference": "p"}]}')
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 2
    assert "evals/twice.yaml:11:5: prompts[1].id: key 'id' appears more than once" in checked.stderr.splitlines()
    assert "evals/twice.json:1:63: prompts[0].id: key 'id' appears more than once" in checked.stderr.splitlines()
    assert "ok  evals/twice" not in checked.stdout and str(project) not in checked.stdout + checked.stderr
    document = evalkit_cli("validate", "--json").json()
    assert {p["file"] for p in document["problems"]} == {"evals/twice.yaml", "evals/twice.json"}
    assert not any(line.startswith("evals/") for line in document["checked"])
