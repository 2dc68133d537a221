"""Set files, and every file a configuration names, are read only inside the project (or where
``[sets] allow_outside`` allows); a problem never quotes more than a short scalar of a file; a
``[sets] paths`` entry that cannot be read says why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from evalkit.config import load_config
from evalkit.errors import ConfigError
from evalkit.project_files import OutsideProjectError, ProjectBoundary, check_inside_project
from evalkit.setfiles import load_configured_sets, load_set_files

SET = "identifier: a.ok\nname: OK\nprompts:\n  - id: p\n    prompt: hi\n    assertions: [{contains: hi}]\n"
CREDENTIALS = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project with one good set file, and a folder outside it holding a credentials file."""
    monkeypatch.delenv("EVALKIT_CONFIG", raising=False)
    project, home = tmp_path / "project", tmp_path / "home"
    (project / "evals").mkdir(parents=True)
    (home / ".aws").mkdir(parents=True)
    (project / "evals" / "ok.yaml").write_text(SET)
    (home / ".aws" / "credentials").write_text(CREDENTIALS)
    return project, home


def configure(project: Path, sets: str) -> None:
    (project / "evalkit.toml").write_text(f"[sets]\n{sets}\n")


def loaded_problems(project: Path) -> list[str]:
    return [str(p) for p in load_configured_sets(load_config(cwd=project)).problems]


@pytest.mark.parametrize("name", ["creds.yaml", "creds.json", "sub/creds.toml"])
def test_a_set_file_linking_outside_the_project_is_refused_and_never_read(layout, name: str) -> None:
    project, home = layout
    link = project / "evals" / name
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(home / ".aws" / "credentials")
    configure(project, 'paths = ["evals/**/*"]')
    problems = loaded_problems(project)
    (problem,) = problems
    assert problem.startswith(f"evals/{name}: resolves to {home / '.aws' / 'credentials'}, outside the project ({project})")
    assert "[sets] allow_outside" in problem and f'allow_outside = ["{home / ".aws"}"]' in problem
    assert "wJalrXUtnFEMI" not in problem and "aws_secret" not in problem


def test_a_pattern_whose_folder_is_outside_is_one_problem_and_never_walked(layout) -> None:
    project, _ = layout
    configure(project, 'paths = ["/proc/**/*.json", "../home/**/*"]')
    problems = loaded_problems(project)
    assert len(problems) == 2
    assert problems[0].startswith("/proc/**/*.json: is named in [sets] paths but its folder /proc lies outside the project")
    assert "../home/**/*: is named in [sets] paths but its folder" in problems[1]


def test_a_glob_through_a_linked_folder_outside_is_refused_file_by_file(layout) -> None:
    project, home = layout
    (home / ".aws" / "config.yaml").write_text(CREDENTIALS)
    (project / "evals" / "shared").symlink_to(home / ".aws")
    configure(project, 'paths = ["evals/**/*"]')
    (problem,) = loaded_problems(project)  # credentials, not named like a set file, is passed over unread
    assert problem.startswith("evals/shared/config.yaml: resolves to")


def test_allow_outside_lets_a_folder_or_a_glob_be_read(layout) -> None:
    project, home = layout
    shared = home / "shared-evals"
    shared.mkdir()
    (shared / "team.yaml").write_text(SET.replace("a.ok", "team.one"))
    (shared / "other.yaml").write_text(SET.replace("a.ok", "team.two"))
    (project / "evals" / "team.yaml").symlink_to(shared / "team.yaml")
    configure(project, f'paths = ["evals/*.yaml", "{shared}/other.yaml"]')
    assert len(loaded_problems(project)) == 2
    for allowed in (str(shared), "../home/shared-evals", f"{home}/**/*.yaml"):
        configure(project, f'paths = ["evals/*.yaml", "{shared}/other.yaml"]\nallow_outside = ["{allowed}"]')
        loaded = load_configured_sets(load_config(cwd=project))
        assert not loaded.problems, (allowed, loaded.problems)
        assert {s.identifier for s in loaded.prompt_sets} == {"a.ok", "team.one", "team.two"}


def test_allow_outside_must_be_a_list_of_places(layout) -> None:
    project, _ = layout
    configure(project, 'paths = ["evals"]\nallow_outside = "/srv"')
    with pytest.raises(ConfigError, match=r"\[sets\] allow_outside must be a list of folders or globs"):
        load_configured_sets(load_config(cwd=project))


def test_the_one_check_other_file_kinds_call(layout) -> None:
    project, home = layout
    configure(project, 'paths = ["evals"]')
    config = load_config(cwd=project)
    assert check_inside_project(config, "evals/ok.yaml", "the baseline file") == project / "evals" / "ok.yaml"
    with pytest.raises(OutsideProjectError) as caught:
        check_inside_project(config, str(home / ".aws" / "credentials"), "the baseline file")
    assert str(caught.value).startswith(f"the baseline file {home / '.aws' / 'credentials'} lies outside the project")
    configure(project, f'paths = ["evals"]\nallow_outside = ["{home}"]')
    assert check_inside_project(load_config(cwd=project), str(home / ".aws" / "credentials"), "x")


def test_a_boundary_allows_what_a_glob_lists_and_folders_named_on_the_command_line(tmp_path: Path) -> None:
    boundary = ProjectBoundary(tmp_path / "p", (f"{tmp_path}/data/*.jsonl",))
    assert boundary.outside(tmp_path / "data" / "a.jsonl") is None
    assert boundary.outside(tmp_path / "data" / "a.yaml") is not None
    assert boundary.allowing([tmp_path / "data"]).outside(tmp_path / "data" / "a.yaml") is None


@pytest.mark.parametrize(
    ("make", "cause"),
    [
        (lambda p: p.symlink_to(p.name), "is a loop of symbolic links"),
        (lambda p: p.symlink_to("nowhere.yaml"), "is a symbolic link to nowhere.yaml, which does not exist"),
        (lambda p: p.symlink_to("/dev/null"), "is a character device, not a set file"),
    ],
    ids=["loop", "dangling", "device"],
)
def test_a_named_path_that_cannot_be_read_says_why_not_that_it_does_not_exist(layout, make, cause: str) -> None:
    project, _ = layout
    make(project / "evals" / "odd.yaml")
    configure(project, 'paths = ["evals/odd.yaml"]')
    (problem,) = loaded_problems(project)
    assert problem == f"evals/odd.yaml: is named in [sets] paths but {cause}"


def test_a_named_pipe_in_sets_paths_is_read_not_called_missing(layout) -> None:
    project, _ = layout
    os.mkfifo(project / "evals" / "live.yaml")
    configure(project, 'paths = ["evals/live.yaml"]')
    (problem,) = loaded_problems(project)  # nobody writes it: it reads as empty, an empty document
    assert "does not exist" not in problem and problem.startswith("evals/live.yaml: ")


LONG = "x" * 41


@pytest.mark.parametrize(
    ("text", "expected", "absent"),
    [
        (CREDENTIALS, f"a string of {len(CREDENTIALS) - 1} characters is not of type 'object'", "wJalrXUtnFEMI"),
        (f"identifier: a.b\nname: N\nprompts: {LONG}\n", "prompts: a string of 41 characters is not of type 'array'", LONG),
        ("identifier: a.b\nname: N\nprompts: [{id: p, prompt: q, reference: r, tags: [1, {k: v}]}]\n", "tags[1]: a mapping of 1 key is not of type 'string'", "{'k'"),
        ("identifier: sk-abcdefghijklmnopqrstuv\nname: N\nprompts: [{id: p, prompt: q, reference: r}]\n", "identifier: a string of 25 characters does not match", "sk-abc"),
        ("identifier: a.b\nname: N\nprompts: [{id: p, prompt: q, reference: r}]\nversion: 5\n", "version: 5 is not of type 'string'", None),
    ],
    ids=["credentials", "long scalar", "mapping", "secret-shaped", "short scalar kept"],
)
def test_problems_describe_a_value_by_its_type_and_size_never_quoting_a_long_one(tmp_path: Path, text: str, expected: str, absent: str | None) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(text)
    problems = [str(p) for p in load_set_files([path], root=tmp_path).problems]
    assert any(expected in p for p in problems), problems
    if absent is not None:
        assert not any(absent in p for p in problems), problems


@pytest.mark.parametrize(
    ("line", "key", "read_as"),
    [("~: y", "'~'", "null"), ("1: y", "'1'", "a number"), ("yes: y", "'yes'", "a boolean"), ("null: y", "'null'", "null")],
)
def test_a_yaml_key_that_is_not_text_is_a_problem_naming_the_file_and_key(tmp_path: Path, line: str, key: str, read_as: str) -> None:
    path = tmp_path / "nullkey.yaml"
    path.write_text(SET + line + "\n")
    loaded = load_set_files([path], root=tmp_path)
    (problem,) = [str(p) for p in loaded.problems]
    assert problem == f"nullkey.yaml:7:1: the key {key} is read as {read_as}, not as text; every key in a set file is text (put it in quotes)"
    assert not loaded.prompt_sets


def test_a_yaml_merge_key_is_still_welcome(tmp_path: Path) -> None:
    path = tmp_path / "merged.yaml"
    path.write_text("base: &base {identifier: a.merged, name: M}\n<<: *base\n" + SET.split("\n", 2)[2])
    loaded = load_set_files([path], root=tmp_path)
    assert [str(p) for p in loaded.problems] == ["merged.yaml:1:1: base: unknown field 'base'; allowed here: description, identifier, name, prompts, version"]
