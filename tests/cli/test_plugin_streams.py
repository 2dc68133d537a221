"""What a plugin writes through ``sys.stdout`` and ``sys.stderr`` reaches standard error made safe
(evalkit.cli.plugin_streams): escape sequences, bidi overrides, carriage returns, lone surrogates
and a CI runner's commands as visible escapes, its secrets as ``***``, its lines as lines — from a
real installed distribution (tests/data/evalkit-loud-plugins) that writes them at import, when
listing its sets and while answering."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

#: What the loud plugins write (tests/data/evalkit-loud-plugins), and how it is shown made safe.
HOSTILE = "\x1b]0;title\x07\x1b[2J\x1b]8;;http://evil.invalid\x07link\x1b]8;;\x07 \u202egnp.exe\rover \udcff"
SHOWN = "\\x1b]0;title\\x07\\x1b[2J\\x1b]8;;http://evil.invalid\\x07link\\x1b]8;;\\x07 \\u202egnp.exe\\x0dover \\udcff"
KEY = "sk-loud-0123456789abcdef0123"
#: What a terminal acts on: ESC, BEL, CR, a bidi override.
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\u202e")


@pytest.fixture
def loud(plugin_dists, project: Path) -> dict[str, str]:  # noqa: ANN001 - the suite's fixture
    """The environment that installs the loud plugins, in a project whose provider ``loud`` is their generator."""
    (project / "evalkit.toml").write_text('[providers.loud]\nadapter = "loud.generator"\nmodel = "m"\n')
    return {"PYTHONPATH": plugin_dists("evalkit-loud-plugins")}


def _raw(text: str) -> list[str]:
    """What in ``text`` a terminal or a CI runner would act on."""
    found = [repr(control) for control in RAW_CONTROLS if control in text]
    found += [line for line in text.splitlines() if line.lstrip().startswith("::") or "##vso[" in line]
    return found


@pytest.mark.parametrize(
    "args",
    [("run", "loud.set", "--provider", "loud"), ("run", "loud.set", "--provider", "loud", "--json"), ("list", "sets"), ("validate", "loud.set")],
    ids=["run", "run --json", "list", "validate"],
)
def test_hostile_text_a_plugin_writes_reaches_stderr_escaped(cli, loud, args) -> None:  # noqa: ANN001
    # Before: the escape sequences, the bidi override, the carriage return and the runner's
    # commands reached the terminal (and a CI log) as they came.
    result = cli(*args, env=loud)
    assert result.code == 0, result.stderr
    assert _raw(result.stdout) == [] and _raw(result.stderr) == []
    assert f"loud: imported {SHOWN}\n" in result.stderr  # at import
    assert f"loud: listing sets {SHOWN}\n" in result.stderr  # when asked for its sets
    assert "loud: stderr at import\n\\x3a:set-env name=PATH::/tmp/evil\n\\x23#vso[task.setvariable" in result.stderr
    assert "loud:" not in result.stdout
    if "--json" in args:
        assert json.loads(result.stdout)["status"] == "complete"  # one valid document, nothing else
    if args[0] == "run":  # while answering: print(), a logging handler made meanwhile, sys.stdout.buffer
        assert f"loud: logged {SHOWN}\n" in result.stderr
        assert f"loud: bytes {SHOWN}\n" in result.stderr


def test_a_secret_a_plugin_prints_is_shown_as_stars_and_its_lines_and_tabs_are_kept(cli, loud) -> None:  # noqa: ANN001
    # Before: the generator's key was printed as it is, on a CI log for everyone to read.
    result = cli("run", "loud.set", "--provider", "loud", "--json", env=loud)
    assert result.code == 0, result.stderr
    assert KEY not in result.stdout + result.stderr and KEY[:10] not in result.stderr
    for case_id in ("l1", "l2"):
        assert f"\nloud: answering {case_id}\twith key ***\n" in result.stderr  # plain text, its tab and line kept
    # written in two parts, split inside the key: the line is made safe whole
    assert result.stderr.count("\nloud: half a line, *** and its end\n") == 2


def test_evalkits_own_output_is_not_escaped_beside_a_plugins(cli, loud) -> None:  # noqa: ANN001
    """evalkit's console writes to the real standard error: its colours stay colours and its error
    messages are as they were, while what the plugin writes is escaped."""
    # Before: the plugin's escape sequences went through raw beside evalkit's own.
    styled = cli("run", "loud.set", "--provider", "loud", "--report", "junit:-", env={**loud, "NO_COLOR": None}, terminal=True)
    assert styled.code == 0, styled.stderr
    assert styled.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert "\x1b[1m" in styled.stderr  # the run's summary, on standard error (the report has stdout), in bold
    # evalkit's own control sequences (styles, the progress bar's cursor moves), none of the plugin's
    assert [raw for raw in ("\x1b]", "\x1b[2J", "\x07", "\u202e") if raw in styled.stderr] == []
    assert f"loud: imported {SHOWN}" in styled.stderr and f"loud: logged {SHOWN}" in styled.stderr and KEY not in styled.stderr
    failed = cli("run", "loud.set", "--provider", "nowhere", env=loud)
    assert failed.code == 2
    assert re.search(r"^evalkit: error: .*\"nowhere\"", failed.stderr, re.MULTILINE), failed.stderr
    assert f"loud: imported {SHOWN}" in failed.stderr


def test_a_progress_bar_prints_a_plugins_output_above_it_made_safe(cli, loud) -> None:  # noqa: ANN001
    # Before: rich's live display took sys.stdout and sys.stderr while the bar was drawn and
    # printed what the plugin wrote as it came: its key, its escape sequences read as styles.
    result = cli("run", "loud.set", "--provider", "loud", env=loud, terminal=True)
    assert result.code == 0, result.stderr
    assert "\x1b[?25l" in result.stderr and "0/2" in result.stderr  # the bar was drawn while answers came in
    assert KEY not in result.stderr and "with key ***" in result.stderr
    assert f"loud: logged {SHOWN}" in result.stderr


def test_the_real_processs_stderr_gets_the_escaped_text(evalkit_process, loud) -> None:  # noqa: ANN001
    """A real process: fd 1 is moved onto standard error (evalkit.cli.stdout), not sys.stdout
    replaced as under the in-process runner; what plugins write is made safe either way."""
    result = evalkit_process("run", "loud.set", "--provider", "loud", "--json", env=loud)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "complete"
    assert _raw(result.stderr) == []
    assert f"loud: imported {SHOWN}\n" in result.stderr and f"loud: logged {SHOWN}\n" in result.stderr
    assert KEY not in result.stderr and "\nloud: answering l1\twith key ***\n" in result.stderr


def test_the_streams_are_given_back_with_what_they_held_on_an_interrupt() -> None:
    """main() runs again in the same process: after Ctrl-C in a command, sys.stdout and sys.stderr
    are the caller's again, and a line a plugin left unfinished is written, made safe."""
    from evalkit.cli.plugin_streams import plugin_streams_made_safe, stderr

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with pytest.raises(KeyboardInterrupt), plugin_streams_made_safe():
            print("unfinished \x1b[2J", end="")  # noqa: T201
            assert stderr() is err
            raise KeyboardInterrupt
        restored = sys.stdout, sys.stderr
    finally:
        sys.stdout, sys.stderr = saved
    assert restored == (out, err)
    assert err.getvalue() == "unfinished \\x1b[2J" and out.getvalue() == ""
