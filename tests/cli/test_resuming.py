"""The printed resume line is the command as given (issue 34, item 11): pasted, it resumes in the
same store, with the same configuration and provider; a database password is hidden."""

from __future__ import annotations

import shlex

from evalkit.cli.app import Arguments
from evalkit.cli.resuming import resume_command


def test_the_resume_line_repeats_what_was_given_and_hides_the_password() -> None:
    args = Arguments(
        provider="prod", model="fast one", grader="decision", judge="judge-a", allow_self_judge=True,
        config="ci/evalkit.toml", database="postgresql://ci:s3cret-pw@db:5432/evals", deployment=None,
    )  # fmt: skip
    line = resume_command(("run", "my.set"), args, "run-1")
    assert "s3cret-pw" not in line
    assert shlex.split(line) == [
        "evalkit", "run", "my.set", "--provider", "prod", "--model", "fast one", "--grader", "decision",
        "--judge", "judge-a", "--allow-self-judge", "--config", "ci/evalkit.toml",
        "--database", "postgresql://ci:***@db:5432/evals", "--resume", "run-1",
    ]  # fmt: skip


def test_options_left_at_their_defaults_are_not_repeated() -> None:
    args = Arguments(grader="deterministic", allow_self_judge=False, config=None, database=None, deployment="prod")
    assert resume_command(("retrieval", "docs", "evalkit.lexical"), args, "r") == (
        "evalkit retrieval docs evalkit.lexical --deployment prod --resume r"
    )
