"""An installed distribution whose metadata is not UTF-8 — evalkit's plugin or any other package
in the environment — takes down only itself, never every command that lists or loads plugins."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.distributions import write_distribution


def _broken_entry_points(folder: Path, name: str, group: str) -> None:
    """A distribution ``name`` whose entry_points.txt declares ``group`` with a byte that is no UTF-8."""
    write_distribution(folder, name, "1.0", {})
    (folder / f"{name}-1.0.dist-info" / "entry_points.txt").write_bytes(f"[{group}]\nbroken\xff = nowhere:Thing\n".encode("latin-1"))


def test_a_distribution_whose_entry_points_are_not_utf8_is_named_and_the_others_run(evalkit_cli, tmp_path: Path) -> None:
    # Before: "internal error (an evalkit bug): UnicodeDecodeError: 'utf-8' codec can't decode
    # byte 0xff …", exit 2, from `list`, `list sets`, `run`: importlib.metadata.entry_points()
    # reads every installed distribution at once, and raised for this one.
    folder = tmp_path / "site"
    _broken_entry_points(folder, "unrelated_tool", "console_scripts")  # not evalkit's at all
    _broken_entry_points(folder, "broken_gen", "evalkit.generators")
    write_distribution(
        folder, "garbled-meta", "1.0", {"evalkit.golden_sets": {"garbled": "garbled_sets:Sets"}},
        {"garbled_sets.py": "from evalkit import Assertion, GoldenPrompt, GoldenPromptSet\n\n"
         "class Sets:\n    def golden_prompt_sets(self):\n"
         "        return [GoldenPromptSet(identifier='garbled.set', name='g', prompts=[GoldenPrompt(id='a', prompt='Say ok', "
         "assertions=[Assertion.contains('ok')], reference='ok')])]\n"},
    )
    (folder / "garbled_meta-1.0.dist-info" / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: garbled\xff-meta\nVersion: 1.0\n\n")
    env = {"PYTHONPATH": str(folder)}

    listed = evalkit_cli("list", env=env)
    assert "internal error" not in listed.stderr
    # "(unreadable)" is evalkit's word for the entry points it could not read, not a plugin's name:
    # it was quoted as one ('generator "(unreadable)" (…)')
    assert (
        f"generator (unreadable) (broken_gen-1.0.dist-info in {folder}): its entry_points.txt cannot be read "
        "(UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff"
    ) in listed.stdout + listed.stderr
    assert '"(unreadable)"' not in listed.stdout + listed.stderr
    assert "unrelated_tool" not in listed.stdout + listed.stderr  # a broken package that is not a plugin is none of evalkit's business
    assert re.search(r"^  garbled +garbled_meta-1\.0\.dist-info \(its METADATA cannot be read\)$", listed.stdout, re.M)

    sets = evalkit_cli("list", "sets", env=env)
    assert sets.code == 0, sets.stderr
    assert "garbled.set" in sets.stdout and "evalkit.smoke" in sets.stdout
    ran = evalkit_cli("run", "garbled.set", env=env)
    assert ran.code == 0, ran.stderr
