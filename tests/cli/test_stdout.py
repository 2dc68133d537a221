"""What a plugin prints while a command runs goes to standard error, whatever standard output is."""

from __future__ import annotations

import contextlib
import io

from evalkit.cli.stdout import plugin_output_to_stderr, stdout


def test_with_a_callers_stream_as_stdout_a_plugins_print_goes_to_stderr_and_evalkits_output_to_the_stream() -> None:
    """No descriptor to move (a library caller's StringIO, click's or pytest's capture): sys.stdout
    itself is standard error while the command runs, and given back after."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with plugin_output_to_stderr():
            print("a plugin prints")  # noqa: T201
            stdout().write("evalkit's own output\n")
        print("after the command")  # noqa: T201
    assert out.getvalue() == "evalkit's own output\nafter the command\n"
    assert err.getvalue() == "a plugin prints\n"


def test_outside_a_command_evalkits_output_is_sys_stdout() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        stdout().write("x")
    assert out.getvalue() == "x"


class _ReaderGone(io.StringIO):
    """A caller's stream whose reader has left: every write is EPIPE."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_rich_output_to_a_stream_whose_reader_left_raises_broken_pipe_never_system_exit() -> None:
    """rich ends the process with SystemExit(1) when its stream's reader leaves, which the command
    runner reads as a plugin's sys.exit (exit 3, "a plugin ended the command"): evalkit's console
    raises BrokenPipeError instead, the error the runner handles as a reader that left."""
    from evalkit.cli.console import Output

    out = Output(_ReaderGone())
    try:
        out.print("Regressed: 3")
    except BrokenPipeError:
        pass
    else:  # pragma: no cover - the assertion below names what happened
        raise AssertionError("the write to a stream without a reader went unnoticed")
    assert out.rich.quiet, "nothing more is rendered for a reader that left"
