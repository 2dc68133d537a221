"""The command line's parser: a command named on the command line is parsed by a parser holding only
that command, with exactly the outcome (arguments, help, errors) of the parser holding all of them."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from evalkit.cli import COMMAND_MODULES, _named_command, _parse, build_parser

COMMANDS = [name.removesuffix("_cmd") for name in COMMAND_MODULES]

#: Command lines of every command, each as a user types it.
COMMAND_LINES = [
    ["run", "pkg.set", "--provider", "p", "--concurrency", "64", "--json", "--show-all"],
    ["--config", "x.toml", "run", "pkg.set", "--resume"],
    ["--database", "sqlite:///x.db", "--json", "retrieval", "pkg.q", "evalkit.lexical", "--deployment", "demo"],
    ["list", "--json"],
    ["models", "rank", "pkg.set"],
    ["history", "pkg.set", "--limit", "3"],
    ["show", "RUN", "--json"],
    ["compare", "A", "B"],
    ["db", "upgrade"],
    ["validate", "pkg.set"],
    ["schema", "golden-set"],
    ["init"],
    ["report", "RUN", "--format", "junit"],
    ["baseline", "show", "pkg.set"],
    ["completion", "bash"],
    ["--conf", "run", "show", "RUN"],  # an abbreviated option's value that names a command
]


def _outcome(parse) -> tuple[str, object]:  # noqa: ANN001
    """What parsing gives: the arguments, or the exit status and what was printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            return "parsed", vars(parse())
        except SystemExit as exc:
            return "exited", (exc.code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=" ".join)
def test_a_named_command_parses_as_the_whole_parser_parses_it(argv: list[str]) -> None:
    assert _outcome(lambda: _parse(argv)[1]) == _outcome(lambda: build_parser().parse_args(argv))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_and_its_errors_are_the_whole_parsers(command: str) -> None:
    for argv in ([command, "--help"], [command, "--no-such-option"], [command, "--traceback", "--help"]):
        one, whole = _outcome(lambda: _parse(argv)[1]), _outcome(lambda: build_parser().parse_args(argv))  # noqa: B023
        assert one == whole, argv
        assert one[0] == "exited"


def test_every_command_is_registered_by_the_module_named_after_it() -> None:
    for command in COMMANDS:
        (subparsers,) = (a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction))
        assert list(subparsers.choices) == [command]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["run", "x"], "run"),
        (["--config", "run", "show", "R"], "show"),
        (["--config=a.toml", "--json", "db", "status"], "db"),
        (["--help", "run"], None),
        (["--version"], None),
        (["runn", "x"], None),
        (["--", "run"], None),
        ([], None),
    ],
)
def test_the_command_word_is_found_after_the_global_options(argv: list[str], command: str | None) -> None:
    assert _named_command(argv) == command


def test_a_run_imports_no_other_commands_module() -> None:
    # A process of its own: what a fresh interpreter imports (this one has imported every command).
    code = (
        "import sys\n"
        "from evalkit.cli import main\n"
        "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('evalkit.cli.') and m.endswith('_cmd'))), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # run's --report option is report_cmd's: the one other command module a run needs.
    assert done.stderr.strip().splitlines()[-1] == "evalkit.cli.report_cmd,evalkit.cli.run_cmd"


def test_a_run_imports_without_garbage_collection_and_collects_from_its_start(tmp_path) -> None:  # noqa: ANN001
    # A process of its own: the modules a run imports are imported for the first time.
    code = (
        "import gc, sys\n"
        "from evalkit.cli import common, main\n"
        "seen = []\n"
        "original = common.run_started\n"
        "def spy(progress_start):\n"
        "    start = original(progress_start)\n"
        "    def started(run, total):\n"
        "        seen.append(gc.isenabled())\n"
        "        start(run, total)\n"
        "        seen.append(gc.isenabled())\n"
        "    return started\n"
        "common.run_started = spy\n"
        "code = main(['run', 'evalkit.smoke'])\n"
        "print(code, seen, gc.isenabled(), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stderr.strip().splitlines()[-1] == "0 [False, True] True"


def test_main_leaves_garbage_collection_as_it_found_it(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    import gc

    from evalkit.cli import main

    monkeypatch.chdir(tmp_path)
    assert gc.isenabled()
    assert main(["run", "no.such.set"]) == 2  # refused before the run starts
    assert gc.isenabled()
    gc.disable()
    try:
        assert main(["list"]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_main_stops_on_sigterm_as_on_ctrl_c_and_leaves_a_callers_handler_alone(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    import signal

    from evalkit.cli import main

    monkeypatch.chdir(tmp_path)
    seen = []

    def list_under_sigterm(argv: list[str]) -> int:
        monkeypatch.setattr("evalkit.cli.list_cmd.handle", lambda args: seen.append(signal.getsignal(signal.SIGTERM)) or 0)
        return main(argv)

    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        assert list_under_sigterm(["list"]) == 0
        assert seen[-1] is signal.default_int_handler  # SIGTERM raises KeyboardInterrupt while evalkit runs
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # and is given back
        ours = lambda signum, frame: None  # noqa: E731
        signal.signal(signal.SIGTERM, ours)
        assert list_under_sigterm(["list"]) == 0
        assert seen[-1] is ours and signal.getsignal(signal.SIGTERM) is ours
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_main_forgets_the_secrets_its_command_remembered_and_keeps_the_callers(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    """main() may be called again in the same process: the next command scrubs its own secrets
    and its caller's, not the last command's."""
    from evalkit import privacy
    from evalkit.cli import main

    class Holder:
        def __init__(self, secret: str) -> None:
            self.secret = secret

        def secret_values(self) -> tuple[str, ...]:
            return (self.secret,)

    monkeypatch.chdir(tmp_path)
    callers, commands = Holder("sk-callers-0123456789abcdef"), Holder("sk-commands-0123456789abcdef")
    with privacy.secrets_remembered_within():
        privacy.remember_secret_holder(callers)
        seen: list[tuple[str, ...]] = []

        def handle(args: argparse.Namespace) -> int:
            privacy.remember_secret_holder(commands)
            seen.append(privacy.secrets_to_hide())
            return 0

        monkeypatch.setattr("evalkit.cli.list_cmd.handle", handle)
        assert main(["list"]) == 0
        assert {callers.secret, commands.secret} <= set(seen[-1])  # while the command runs: both
        assert callers.secret in privacy.secrets_to_hide() and commands.secret not in privacy.secrets_to_hide()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_discarding_standard_output_leaves_no_descriptor_open(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from evalkit.cli import _discard_stdout

    with open(tmp_path / "out", "w") as out:
        monkeypatch.setattr("evalkit.cli.stdout.stdout", lambda: out)
        before = len(os.listdir("/proc/self/fd"))
        _discard_stdout()
        after = len(os.listdir("/proc/self/fd"))
        out.write("dropped")
        out.flush()
    assert after == before
    assert (tmp_path / "out").read_text() == ""


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("args", [("list",), ("run", "evalkit.smoke", "--json"), ("run", "evalkit.smoke", "--show-all")])
def test_output_that_cannot_be_written_is_an_error_naming_why_not_a_crash(evalkit_process, args: tuple[str, ...]) -> None:  # noqa: ANN001
    # A process of its own: its standard output is /dev/full, and what the interpreter does at exit counts.
    with open("/dev/full", "w") as full:  # every write: "No space left on device"
        done = evalkit_process.run(*args, stdout=full, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stderr.endswith(
        "evalkit: error: could not write the output: No space left on device (anything the command stored is kept)\n"
    ), done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("args", [("--help",), ("--version",), ("run", "--help"), ()], ids=["help", "version", "run-help", "bare"])
def test_help_that_cannot_be_written_is_an_error_not_a_silent_success(evalkit_process, args: tuple[str, ...]) -> None:  # noqa: ANN001
    """argparse ignores a failed write of help or the version: `evalkit --help > /dev/full` exited 0."""
    # A process of its own: its standard output is /dev/full, and what the interpreter does at exit counts.
    with open("/dev/full", "w") as full:
        done = evalkit_process.run(*args, stdout=full, timeout=60)
    assert done.returncode == 3, done.stderr
    assert done.stderr == "evalkit: error: could not write the output: No space left on device\n"


@pytest.mark.parametrize("args", [("--help",), ()], ids=["help", "bare"])
def test_help_into_a_closed_pipe_keeps_its_exit_code(evalkit_process, args: tuple[str, ...]) -> None:  # noqa: ANN001
    # A process of its own: a broken pipe is SIGPIPE/EPIPE on the process's own standard output.
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before evalkit writes (`evalkit --help | true`)
    try:
        done = evalkit_process.run(*args, stdout=writer, timeout=60)
    finally:
        os.close(writer)
    assert done.returncode == (0 if args else 2), done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize("closed", [(1,), (2,), (1, 2), (0, 1, 2)], ids=["stdout", "stderr", "both", "all"])
def test_closed_standard_streams_are_not_a_crash_and_never_reach_the_store(
    project: Path, evalkit_process, evalkit_cli, closed: tuple[int, ...]
) -> None:  # noqa: ANN001
    """`evalkit run >&-` had no sys.stdout (an internal error at the first write), and the store,
    opened next, would have taken the free descriptor and received what was printed."""
    import sqlite3

    def close_them() -> None:
        for descriptor in closed:
            os.close(descriptor)

    for args in (("run", "evalkit.smoke", "--json"), ("run", "evalkit.smoke"), ("list",), ("--help",)):
        # A process of its own: it starts with the standard streams closed.
        done = evalkit_process.run(*args, preexec_fn=close_them, stdin=None, stdout=None, stderr=None, timeout=120)  # noqa: PLW1509
        assert done.returncode == 0, args
    store = project / ".evalkit" / "results.db"
    with sqlite3.connect(store) as conn:
        assert conn.execute("pragma integrity_check").fetchone() == ("ok",)
        assert conn.execute("select count(*), min(status) from evalkit_run").fetchone() == (2, "complete")
    history = evalkit_cli("history", "evalkit.smoke", timeout=60)
    assert history.code == 0 and "(2 runs)" in history.stdout, history.stderr


def test_a_sys_exit_no_plugin_call_caught_ends_the_command_with_3_saying_so(capsys) -> None:
    """The backstop: every call into a plugin catches SystemExit itself; one raised anywhere else
    in a command never becomes that command's exit code (0 would pass a CI gate)."""
    import argparse

    from evalkit.cli import _handle

    def exits(args: argparse.Namespace) -> int:
        raise SystemExit(0)

    assert _handle(argparse.Namespace(handler=exits, traceback=False)) == 3
    assert "a plugin ended the command with sys.exit(0)" in capsys.readouterr().err
