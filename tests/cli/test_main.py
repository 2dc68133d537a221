"""The command line on click: each command's module is imported only when the command is asked
for, every command line parses to the arguments its handler reads, and main() keeps the process
behaviour evalkit promises (exit codes, help that could not be written, closed streams, signals)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import click
import pytest
from evalkit.cli.app import COMMANDS, Arguments, Printed, evalkit, unabbreviated


def parsed(*argv: str) -> Arguments:
    """What ``evalkit ARGV`` hands its command's handler (nothing run)."""
    return evalkit.parse(list(argv))


@pytest.mark.parametrize(
    ("argv", "handler", "expected"),
    [
        (["run", "pkg.set", "--provider", "p", "--concurrency", "64", "--json", "--show-all"], "run_cmd.handle",
         {"set": "pkg.set", "provider": "p", "concurrency": 64, "json": True, "show_all": True, "grader": "deterministic", "report": None}),
        (["--config", "x.toml", "run", "pkg.set", "--resume"], "run_cmd.handle", {"config": "x.toml", "resume": ""}),
        (["run", "pkg.set", "--resume", "R1", "--report", "junit", "--report", "html:r.html"], "run_cmd.handle", {"resume": "R1", "report": ["junit", "html:r.html"]}),
        (["--database", "sqlite:///x.db", "--json", "retrieval", "pkg.q", "evalkit.lexical", "--deployment", "demo"], "retrieval_cmd.handle",
         {"database": "sqlite:///x.db", "json": True, "retriever": "evalkit.lexical", "deployment": "demo", "k": 10, "wait": False}),
        (["list", "--json"], "list_cmd.handle", {"what": "plugins", "json": True, "options": False}),
        (["models", "rank", "--capability", "chat"], "models_cmd.handle_rank", {"capability": ["chat"], "policy": None}),
        (["history", "pkg.set", "--limit", "3"], "history_cmd.handle", {"limit": 3, "json": False}),
        (["show", "RUN", "--json"], "show_cmd.handle", {"run_id": "RUN", "json": True}),
        (["compare", "A", "B"], "compare_cmd.handle", {"base": "A", "run": "B", "max_pass_rate_drop": None}),
        (["db", "prune", "--older-than", "3d"], "db_cmd._prune", {"older_than": "3d"}),
        (["validate", "pkg.set", "x.yaml"], "validate_cmd.handle", {"targets": ["pkg.set", "x.yaml"]}),
        (["schema", "golden-set"], "schema_cmd.handle", {"kind": "golden-set"}),
        (["init"], "init_cmd.handle", {"directory": "."}),
        (["import", "otel", "t.jsonl", "-o", "s.yaml", "--force"], "import_cmd.handle", {"file": "t.jsonl", "output": "s.yaml", "force": True}),
        (["report", "RUN", "-o", "r.xml", "--format", "junit", "--wait"], "report_cmd.handle", {"output": "r.xml", "format": "junit", "wait": True}),
        (["baseline", "accept", "RUN", "--reason", "intended"], "baseline_cmd.handle_accept", {"run_id": "RUN", "reason": "intended"}),
        (["completion", "bash"], "shell_completion.handle", {"shell": "bash"}),
        (["--conf", "run", "show", "RUN"], "show_cmd.handle", {"config": "run", "run_id": "RUN"}),  # an abbreviated option's value that names a command
        (["--trace", "db", "status"], "db_cmd._status", {"traceback": True}),
        (["show", "RUN", "--data=sqlite:///y.db", "--trac"], "show_cmd.handle", {"database": "sqlite:///y.db", "traceback": True}),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_a_command_line_parses_to_what_its_handler_reads(argv: list[str], handler: str, expected: dict[str, object]) -> None:
    args = parsed(*argv)
    module, _, function = handler.partition(".")
    assert args.handler is getattr(import_module(f"evalkit.cli.{module}"), function)
    assert {name: getattr(args, name) for name in expected} == expected
    assert {"config", "database", "json", "traceback"} <= set(vars(args))


def test_only_run_retrieval_and_import_collect_garbage_rarely_until_a_run_starts() -> None:
    assert parsed("run", "s").collects_garbage_from_run_start
    assert parsed("retrieval", "s").collects_garbage_from_run_start
    # an import starts no run: what it builds lives to its end, full collections only walked it
    assert parsed("import", "otel", "t.jsonl").collects_garbage_from_run_start
    assert not parsed("history", "s").collects_garbage_from_run_start


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_has_help_and_refuses_an_unknown_option(command: str) -> None:
    for argv in ([command, "--help"], [command, "-h"], [command, "--traceback", "--help"]):
        with pytest.raises(Printed) as printed:
            parsed(*argv)
        assert printed.value.code == 0 and printed.value.text.startswith(f"Usage: evalkit {command} ")
    with pytest.raises(click.NoSuchOption) as refused:
        parsed(command, "--no-such-option")
    assert refused.value.option_name == "--no-such-option"


def test_words_left_over_are_each_named_quoted(evalkit_cli) -> None:
    # click joined them with spaces in parentheses: an empty word read "Got unexpected extra argument ()"
    alone = evalkit_cli("view", "")
    assert alone.code == 2 and 'evalkit view: error: unexpected extra argument ""' in alone.stderr
    several = evalkit_cli("history", "arith.basic", "a b", "\x1b[31m")
    assert several.code == 2 and 'evalkit history: error: unexpected extra arguments "a b" "\\x1b[31m"' in several.stderr
    assert "\x1b" not in several.stderr  # the escape code is shown, never sent to the terminal


def test_every_command_is_the_command_of_the_module_named_for_it() -> None:
    """Loaded as `evalkit --help` loads it, through the root group, which gives a command its short
    help from COMMANDS: read straight from the module, the line was there only when another test had
    loaded the command first (the mutation harness runs the fastest tests first, in a fresh import)."""
    context = click.Context(evalkit)
    for name, (module, line) in COMMANDS.items():
        command = evalkit.get_command(context, name)
        assert command is import_module(f"evalkit.cli.{module}").command
        assert command.name == name and command.get_short_help_str(limit=200) == line


def test_a_group_named_alone_prints_its_help_and_exits_2() -> None:
    for argv, stderr in ((["db"], False), (["baseline"], False), (["models"], True), ([], False)):
        with pytest.raises(Printed) as printed:
            parsed(*argv)
        assert (printed.value.code, printed.value.stderr) == (2, stderr)
    with pytest.raises(click.UsageError, match="Missing command"):  # a source is required
        parsed("import")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--trace", "--conf", "x", "run"], ["--traceback", "--config", "x", "run"]),
        (["--conf=--json", "--js", "show", "--trace"], ["--config=--json", "--json", "show", "--trace"]),  # the rest is the command's
        (["--config", "--js", "run"], ["--config", "--js", "run"]),  # a value, not an option
        (["--", "--trace"], ["--", "--trace"]),
    ],
)
def test_a_unique_prefix_of_a_long_option_is_the_option(argv: list[str], expected: list[str]) -> None:
    with evalkit.make_context("evalkit", [], resilient_parsing=True) as ctx:
        assert unabbreviated(evalkit, ctx, argv) == expected


def test_an_ambiguous_prefix_names_the_options_it_could_be() -> None:
    with pytest.raises(click.UsageError, match='option "--re" is ambiguous: it could be --repeats, --resume or --report'):
        parsed("run", "s", "--re")
    assert parsed("run", "s", "--resu").resume == ""


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["run", "s", "--re"], 'evalkit run: error: option "--re" is ambiguous: it could be --repeats, --resume or --report; write more of its name'),
        (["run", "s", "--re=3"], 'evalkit run: error: option "--re" is ambiguous: it could be'),
        (["db", "prune", "--=3d"], "evalkit db prune: error: No such option '--'."),
    ],
)
def test_an_ambiguous_prefix_reads_as_a_usage_error_of_its_own(evalkit_cli, argv: list[str], said: str) -> None:
    # click's "no such option" carried it, its hints appended ("no command takes the option --"),
    # and "--=x" was "ambiguous" among every option: "-- could match --older-than, --config, …"
    result = evalkit_cli(*argv)
    assert result.code == 2 and said in result.stderr, result.stderr
    assert "could match" not in result.stderr and "no command takes" not in result.stderr, result.stderr
    assert "Usage: evalkit" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_an_ambiguous_prefix_before_the_command_gets_no_hint_of_a_missing_option(evalkit_cli) -> None:
    # before the command, an ambiguous prefix ran into the hints of an unknown option
    result = evalkit_cli("--=x", "run", "s")
    assert result.code == 2 and "ambiguous" not in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("argv", "imported"),
    [(["--help"], ""), (["list"], "evalkit.cli.list_cmd"), (["run", "--help"], "evalkit.cli.run_cmd"), (["db", "status", "--help"], "evalkit.cli.db_cmd")],
)
def test_a_command_line_imports_no_command_module_it_does_not_run(argv: list[str], imported: str, tmp_path: Path) -> None:
    # A process of its own: what a fresh interpreter imports (this one has imported every command).
    # The options commands share are declared in evalkit.cli.params, not in another command's module.
    code = (
        "import sys\n"
        "from evalkit.cli import main\n"
        f"main({argv!r})\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('evalkit.cli.') and m.endswith('_cmd'))), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert done.stderr.strip().splitlines()[-1:] == ([imported] if imported else [])


def test_a_run_collects_garbage_rarely_until_it_starts_then_as_usual(tmp_path) -> None:  # noqa: ANN001
    # A process of its own: the modules a run imports are imported for the first time. The set's
    # provider leaves 300,000 reference cycles behind while the run starts up (as a set file's
    # scan did): they are collected before the run starts, not frozen with what it built.
    code = (
        "import gc, sys, weakref\n"
        "from evalkit import catalog\n"
        "from evalkit.cli import common, main\n"
        "class Cycle:\n"
        "    def __init__(self):\n"
        "        self.me = self\n"
        "first = []\n"
        "listing = catalog.load_catalog\n"
        "def leaving_cycles(*args, **kwargs):\n"
        "    for n in range(300_000):\n"
        "        cycle = Cycle()\n"
        "        if n < 10:\n"
        "            first.append(weakref.ref(cycle))\n"
        "    return listing(*args, **kwargs)\n"
        "catalog.load_catalog = leaving_cycles\n"
        "seen = []\n"
        "original = common.run_started\n"
        "def spy(progress_start):\n"
        "    start = original(progress_start)\n"
        "    def started(run, total):\n"
        "        seen.append((gc.isenabled(), gc.get_threshold()[0], sum(r() is not None for r in first)))\n"
        "        start(run, total)\n"
        "        seen.append((gc.isenabled(), gc.get_threshold()[0]))\n"
        "    return started\n"
        "common.run_started = spy\n"
        "usual = gc.get_threshold()\n"
        "code = main(['run', 'evalkit.smoke'])\n"
        "print(code, seen, gc.isenabled(), gc.get_threshold() == usual, usual[0], file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    usual = done.stderr.strip().splitlines()[-1].rsplit(" ", 1)[1]
    assert done.stderr.strip().splitlines()[-1] == f"0 [(True, 100000, 0), (True, {usual})] True True {usual}"


def test_main_leaves_garbage_collection_as_it_found_it(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    import gc

    from evalkit.cli import main

    monkeypatch.chdir(tmp_path)
    assert gc.isenabled()
    usual = gc.get_threshold()
    assert main(["run", "no.such.set"]) == 2  # refused before the run starts
    assert gc.isenabled() and gc.get_threshold() == usual
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

        def handle(args: Arguments) -> int:
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


@pytest.mark.parametrize("output", [(), ("--json",)], ids=["text", "json"])
def test_a_command_whose_reader_left_keeps_its_exit_code(project: Path, evalkit_process, evalkit_cli, output: tuple[str, ...]) -> None:  # noqa: ANN001
    """`evalkit compare A B --fail-on-regression | head -1` must still fail the gate: a closed pipe
    exited 3 "a plugin ended the command with sys.exit(1)" (rich's own broken-pipe exit) for text,
    and 0 for --json (the whole exit code lost). What is printed after the reader left is dropped;
    the command's outcome, and its exit code, stand."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with, run_json

    answer_with(project, ARITH_GOOD)
    base = run_json(evalkit_cli, "arith.basic")["run_id"]
    answer_with(project, {**ARITH_GOOD, "add-2-2": "5", "add-7-5": "11"})
    run = run_json(evalkit_cli, "arith.basic")["run_id"]
    commands = {
        ("compare", base, run, "--fail-on-regression", *output): 1,  # the gate failed
        ("compare", base, run, *output): 0,
        ("show", run, *output): 0,
        ("run", "arith.basic", "--fail-on-regression", *output): 1,  # compared with the accepted first run
    }
    for args, code in commands.items():
        # A process of its own: a broken pipe is EPIPE on the process's own standard output.
        reader, writer = os.pipe()
        os.close(reader)  # the reader is gone before evalkit writes (`evalkit … | true`)
        try:
            done = evalkit_process.run(*args, stdout=writer, timeout=120)
        finally:
            os.close(writer)
        assert (done.returncode, done.stderr) == (code, ""), args
    history = evalkit_cli("history", "arith.basic", "--json").json()
    assert len(history["runs"]) == 3 and {r["status"] for r in history["runs"]} == {"complete"}, "the run piped away was stored whole"


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
    from evalkit.cli import _handle

    def exits(args: Arguments) -> int:
        raise SystemExit(0)

    assert _handle(Arguments(handler=exits, traceback=False)) == 3
    assert "a plugin ended the command with sys.exit(0)" in capsys.readouterr().err


def test_an_error_raised_while_the_command_line_is_parsed_is_said_with_its_exit_code(evalkit_cli, monkeypatch) -> None:
    """An evalkit error a type or a callback raised (or something it read: the configuration, the
    environment) while click parsed left `main()` unsaid: the console script ended with 3 and no
    message. It is said as every command's error is, with its code; anything else is an evalkit
    bug, said with its traceback (exit 3, as every internal error)."""
    from evalkit.cli.params import Duration
    from evalkit.errors import ConfigError

    def refuses(self, value, param, ctx):  # noqa: ANN001, ANN202
        raise ConfigError(f"evalkit.toml: [wait] cannot be read for {value!r}")

    monkeypatch.setattr(Duration, "convert", refuses)
    result = evalkit_cli("report", "r-1", "--timeout", "5s")
    assert result.code == 2, result.stderr
    assert result.stderr == "evalkit: error: evalkit.toml: [wait] cannot be read for '5s'\n", result.stderr
    as_json = evalkit_cli("run", "arith.basic", "--wait-ready", "5s", "--json")
    assert as_json.code == 2 and as_json.json()["error"].startswith("evalkit.toml: [wait]"), as_json.stdout

    def breaks(self, value, param, ctx):  # noqa: ANN001, ANN202
        raise RuntimeError("a bug")

    monkeypatch.setattr(Duration, "convert", breaks)
    result = evalkit_cli("report", "r-1", "--timeout", "5s")
    assert result.code == 3, result.stderr
    assert result.stderr.startswith("evalkit: internal error (an evalkit bug): RuntimeError: a bug"), result.stderr
    assert "Traceback" in result.stderr


def test_every_internal_error_exits_3_whatever_the_command(evalkit_cli, project, monkeypatch) -> None:
    """An evalkit bug that ended a command before it stored a run exited 2, the code of bad usage or
    input (`retrieval --export-run` of a 300-character name said "internal error (an evalkit bug)",
    exit 2): a CI could not tell evalkit crashing from its own typo. docs/cli.md: 3, the command
    could not complete, whatever the command, stored runs or not; --json's error object says 3."""
    from evalkit.cli import stored
    from evalkit.run import lifecycle

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise RuntimeError("a bug")

    monkeypatch.setattr(stored, "open_store", broken)
    monkeypatch.setattr(lifecycle._Lifecycle, "_begin", broken)
    for command in (("history", "arith.basic"), ("run", "arith.basic", "--provider", "reference")):
        result = evalkit_cli(*command)
        assert result.code == 3, (command, result.stderr)
        assert result.stderr.startswith("evalkit: internal error (an evalkit bug): RuntimeError: a bug"), result.stderr
        as_json = evalkit_cli(*command, "--json")
        assert as_json.code == 3 and as_json.json()["exit_code"] == 3, (command, as_json.stdout)

