"""A set file a wildcard or a folder matches that cannot be read is a problem, not a set that
silently is not there.

A named path that is a link to nothing, a loop of links or a device says why (issue 34); one that
`evals/*.yaml`, `evals/**/*.yaml`, `paths = ["evals"]` or `evalkit validate evals` matched was
dropped without a word: a shared set whose link broke when its target moved vanished, and
`evalkit validate` (the pre-commit hook) said every file was ok, exit 0. A named pipe a wildcard
matches is still left alone, and folders are what they were.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GOOD = "identifier: demo.good\nname: G\nprompts:\n  - id: a\n    prompt: p\n    reference: p\n    assertions: [{contains: p}]\n"

CASES = [
    (lambda p: p.symlink_to("moved.yaml"), "is a symbolic link to moved.yaml, which does not exist"),
    (lambda p: p.symlink_to(p.name), "is a loop of symbolic links"),
    (lambda p: p.symlink_to("/dev/zero"), "is a character device, not a set file"),
]


def lay_out(project: Path, make) -> None:
    (project / "evals" / "shared").mkdir(parents=True)
    (project / "evals" / "good.yaml").write_text(GOOD)
    make(project / "evals" / "shared" / "faq.yaml")
    os.mkfifo(project / "evals" / "live.yaml.d")  # not a set file's name: never looked at


@pytest.mark.parametrize("pattern", ["evals/**/*.yaml", "evals/*/*.yaml", "evals"])
@pytest.mark.parametrize(("make", "cause"), CASES, ids=["dangling", "loop", "device"])
def test_a_configured_match_that_cannot_be_read_is_named_with_its_cause(evalkit_cli, project: Path, pattern: str, make, cause: str) -> None:
    lay_out(project, make)
    (project / "evalkit.toml").write_text(f'[sets]\npaths = ["{pattern}"]\n')
    checked = evalkit_cli("validate", "--json")
    assert checked.code == 2, checked.stdout
    problems = {p["file"]: p["reason"] for p in checked.json()["problems"]}
    assert problems == {"evals/shared/faq.yaml": f"is matched by [sets] paths {pattern!r} but {cause}"}
    ran = evalkit_cli("run", "demo.good")
    assert ran.code == 2 and "evals/shared/faq.yaml" in ran.stderr


@pytest.mark.parametrize(("make", "cause"), CASES, ids=["dangling", "loop", "device"])
def test_a_folder_named_to_validate_names_what_in_it_cannot_be_read(evalkit_cli, project: Path, make, cause: str) -> None:
    lay_out(project, make)
    checked = evalkit_cli("validate", "evals", "--json")
    assert checked.code == 2, checked.stdout
    problems = {p["file"]: p["reason"] for p in checked.json()["problems"]}
    assert problems == {"evals/shared/faq.yaml": f"is in the folder evals but {cause}"}


def test_a_pipe_a_wildcard_matches_is_still_left_alone(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "good.yaml").write_text(GOOD)
    os.mkfifo(project / "evals" / "live.yaml")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    checked = evalkit_cli("validate", timeout=30)
    assert checked.code == 0, checked.stdout + checked.stderr
