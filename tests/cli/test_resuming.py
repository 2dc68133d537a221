"""The printed resume line is the command as given (issue 34, item 11): pasted, it resumes in the
same store, with the same configuration and provider; a database password is hidden."""

from __future__ import annotations

import shlex
from typing import Any

from evalkit.cli import retrieval_cmd, run_cmd
from evalkit.cli.app import Arguments
from evalkit.cli.resuming import resume_command


def parsed(command: Any, *words: str) -> Arguments:
    """``command``'s :class:`Arguments` for ``words``, as its command line makes them."""
    ctx = command.make_context(command.name, list(words))
    with ctx:
        return ctx.invoke(command.callback, **ctx.params)


def test_the_resume_line_repeats_what_was_given_and_hides_the_password() -> None:
    args = parsed(
        run_cmd.command, "my.set", "--provider", "prod", "--model", "fast one", "--grader", "decision", "--judge",
        "judge-a", "--allow-self-judge", "--config", "ci/evalkit.toml", "--database", "postgresql://ci:s3cret-pw@db:5432/evals",
    )  # fmt: skip
    line = resume_command(("run", "my.set"), args, "run-1")
    assert "s3cret-pw" not in line
    assert shlex.split(line) == [
        "evalkit", "run", "my.set", "--provider", "prod", "--model", "fast one", "--grader", "decision",
        "--judge", "judge-a", "--allow-self-judge", "--config", "ci/evalkit.toml",
        "--database", "postgresql://ci:***@db:5432/evals", "--resume", "run-1",
    ]  # fmt: skip


def test_options_left_at_their_defaults_are_not_repeated() -> None:
    args = parsed(retrieval_cmd.command, "docs", "evalkit.lexical", "--deployment", "prod", "--k", "10", "--concurrency", "1")
    assert resume_command(("retrieval", "docs", "evalkit.lexical"), args, "r") == (
        "evalkit retrieval docs evalkit.lexical --deployment prod --resume r"
    )


def test_every_option_that_changes_the_resumed_run_is_repeated() -> None:
    """``evalkit run SET --concurrency 3 …`` stopped, and its line said ``--provider``, ``--grader``,
    the judge's and the store's options only: pasted, it answered 8 at a time, without the wait for
    the server, under the default gate… Every option given is repeated, in the command's order, but
    those ``NOT_RESUMED`` names (the place, the output's form, a new run's label)."""
    args = parsed(
        run_cmd.command, "arith.basic", "--provider", "p", "--concurrency", "3", "--wait-ready", "90s", "--no-cache",
        "--budget", "2.5", "--judge-temperature", "0.5", "--max-pass-rate-drop", "0.2", "--fail-on-regression",
        "--repeats", "2", "--privacy", "full", "--label", "v2", "--show-answers", "--show-all", "--json",
        "--shard", "1/2", "--run-id", "x", "--report", "junit:r.xml",
    )  # fmt: skip
    assert shlex.split(resume_command(("run", "arith.basic"), args, "x")) == [
        "evalkit", "run", "arith.basic", "--provider", "p", "--concurrency", "3", "--wait-ready", "90s",
        "--privacy", "full", "--max-pass-rate-drop", "0.2", "--fail-on-regression", "--repeats", "2",
        "--judge-temperature", "0.5", "--report", "junit:r.xml", "--budget", "2.5", "--no-cache",
        "--shard", "1/2", "--run-id", "x",
    ]  # fmt: skip
    retrieval = parsed(
        retrieval_cmd.command, "docs", "evalkit.lexical", "--k", "5", "--relevance-threshold", "2",
        "--judge-unjudged", "judge", "--concurrency", "2", "--resume", "r",
    )  # fmt: skip
    assert shlex.split(resume_command(("retrieval", "docs", "evalkit.lexical"), retrieval, "r")) == [
        "evalkit", "retrieval", "docs", "evalkit.lexical", "--k", "5", "--relevance-threshold", "2",
        "--judge-unjudged", "judge", "--concurrency", "2", "--resume", "r",
    ]  # fmt: skip


def test_a_stopped_run_is_continued_with_its_options_and_one_higher_limit(evalkit_cli, project) -> None:
    """``evalkit run arith.basic --concurrency 2 --max-pass-rate-drop 0.2 --max-requests 1``: the
    line said ``--max-requests 2`` but neither ``--concurrency 2`` nor the gate's tolerance; it
    now says both, and the higher limit once (it replaces the one given), and pasted it completes."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    stopped = evalkit_cli(
        "run", "arith.basic", "--provider", "my-app", "--concurrency", "2", "--max-pass-rate-drop", "0.2",
        "--max-requests", "1", "--run-id", "cont-1",
    )  # fmt: skip
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    (line,) = [line.split("resume it with: ", 1)[1] for line in stopped.stdout.splitlines() if "resume it with: " in line]
    words = shlex.split(line)
    assert words[words.index("--concurrency") + 1] == "2", line
    assert words[words.index("--max-pass-rate-drop") + 1] == "0.2", line
    assert words.count("--max-requests") == 1 and words[words.index("--max-requests") + 1] != "1", line
    resumed = evalkit_cli(*words[1:])
    assert resumed.code == 0, resumed.stdout + resumed.stderr


def test_a_provider_named_with_a_control_character_is_continued_by_the_line_as_printed(evalkit_cli, project) -> None:
    """``[providers."rec\\u001b"]``, ``evalkit run arith.basic --provider $'rec\\x1b' --max-requests 1``:
    the line that continues the run quoted the name with ``shlex.quote`` (``'rec<ESC>'``), and the
    output boundary wrote its ESC as ``\\x1b``: ``--provider 'rec\\x1b'``, pasted, named another
    provider (``Unknown provider "rec\\\\x1b"``). A word with a hidden character is written as
    ``$'…'`` (bash, zsh), the CLI's line, a library call's and a stored run's alike; pasted into a
    shell, it continues the run."""
    import subprocess

    from evalkit import evaluate_set
    from evalkit.run.continuing import resume_hint
    from evalkit.storage import close_repository, open_repository

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    config = (project / "evalkit.toml").read_text().replace("[providers.my-app]", '[providers."rec\\u001b"]')
    (project / "evalkit.toml").write_text(config)
    stopped = evalkit_cli("run", "arith.basic", "--provider", "rec\x1b", "--max-requests", "1", "--run-id", "esc-1")
    assert stopped.code == 3, stopped.stdout + stopped.stderr
    (line,) = [line.split("resume it with: ", 1)[1] for line in stopped.stdout.splitlines() if "resume it with: " in line]
    assert "--provider $'rec\\x1b'" in line, line
    library = evaluate_set("arith.basic", provider="rec\x1b", cwd=project, max_requests=1, run_id="esc-2")
    (note,) = [n for n in library.notes if "reached after" in n]
    assert "--provider $'rec\\x1b'" in note, note
    repository = open_repository(f"sqlite:///{project / '.evalkit' / 'results.db'}")
    try:
        assert "--provider $'rec\\x1b'" in resume_hint(repository.get_run("esc-1", with_cases=False))
    finally:
        close_repository(repository)
    # the shell itself reads the line: what it hands evalkit is what the user pastes
    said = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, check=True).stdout
    words = said.decode().split("\0")[:-1]
    assert words[words.index("--provider") + 1] == "rec\x1b"
    resumed = evalkit_cli(*words[1:])
    assert resumed.code == 0, resumed.stdout + resumed.stderr
