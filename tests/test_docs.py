"""The documentation tells the truth: every command in a block marked runnable parses against the
real CLI, and every relative link points at a file in the repository."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from evalkit.cli.app import Printed, evalkit

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = re.compile(r"<!-- runnable -->\s*\n\s*```(?:sh|bash|console)?\n(.*?)\n\s*```", re.S)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def runnable_commands() -> list[tuple[str, list[str]]]:
    """(where, evalkit arguments) for every evalkit call in a runnable block."""
    found = []
    for document in DOCUMENTS:
        for block in RUNNABLE.findall(document.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0].strip()
                for part in re.split(r"&&|\|\||;|\|", line):
                    words = shlex.split(part)
                    if words and Path(words[0]).name == "evalkit":
                        found.append((f"{document.name}: {part.strip()}", words[1:]))
    return found


COMMANDS = runnable_commands()


def test_the_docs_mark_their_commands_runnable() -> None:
    documents = {where.split(":", 1)[0] for where, _ in COMMANDS}
    assert {"README.md", "configuration.md", "storage.md"} <= documents
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize(("where", "args"), COMMANDS, ids=[where for where, _ in COMMANDS])
def test_each_runnable_command_parses_against_the_real_cli(where: str, args: list[str]) -> None:
    try:
        parsed = evalkit.parse(args)
    except click.UsageError as exc:
        pytest.fail(f"{where} does not parse: {exc.format_message()}")
    except Printed as printed:
        assert printed.code == 0, f"{where} names no command"
        return  # --help
    assert getattr(parsed, "handler", None) is not None, f"{where} names no command"


@pytest.mark.parametrize("document", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_every_relative_link_points_at_a_file_in_the_repository(document: Path) -> None:
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.S)
    missing = [
        target for target in LINK.findall(text)
        if "://" not in target and not target.startswith("mailto:") and not (document.parent / target).exists()
    ]
    assert not missing, f"{document.name} links to files that are not in the repository: {missing}"
