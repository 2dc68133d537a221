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
