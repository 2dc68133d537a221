"""What the forced end of the process (a second SIGTERM, or a plugin that swallowed the first one's
interrupt: :mod:`evalkit.cli.ending`) says was stored, wherever in the run it comes.

In this process: the forced end is called from another thread (as the grace period's thread calls
it), ``os._exit`` raising instead of ending the test run, the command left to go on afterwards.
Whether the process really ends is tests/test_hostile_input.py's ``test_issue34_04_*`` (real processes).
"""

from __future__ import annotations

import os
import threading

import pytest
from evalkit.cli import ending
from evalkit.run import lifecycle


class _Ended(BaseException):
    """``os._exit`` was called (with its code)."""


def _forced_end_on_another_thread(said: list[str]) -> None:
    """End the process as the grace period's thread does; keep what it says."""
    codes: list[int] = []

    def force() -> None:
        try:
            ending._forced_end("a second SIGTERM")
        except _Ended as exc:
            codes.append(exc.args[0])

    thread = threading.Thread(target=force)
    thread.start()
    thread.join()
    assert codes == [3], "the forced end ends the process, exit 3"
    assert len(said) == 1


@pytest.mark.parametrize("when", ["before the run is stored", "after its lease is taken", "once it answers"])
def test_a_forced_end_names_the_stored_run_and_says_nothing_was_stored_only_before_it(cli, monkeypatch, when) -> None:
    """A forced end after the run was stored and its lease taken, but before it began answering
    (the `evalkit_run_started` hook, the slice selection), said "no run had begun, nothing was
    stored": it names the run, kept, and how to see it."""
    said: list[str] = []
    monkeypatch.setattr(ending, "_run", None)  # as in a fresh process: no run began in it
    monkeypatch.setattr(ending, "_write_stderr", said.append)

    def exit_(code: int) -> None:
        raise _Ended(code)

    monkeypatch.setattr(os, "_exit", exit_)
    if when == "before the run is stored":
        begin = lifecycle._Lifecycle._begin

        def forced_then_begin(self):  # noqa: ANN001, ANN202
            _forced_end_on_another_thread(said)
            return begin(self)

        monkeypatch.setattr(lifecycle._Lifecycle, "_begin", forced_then_begin)
    elif when == "after its lease is taken":
        take = lifecycle.RunLease.take

        def take_then_forced(self, shard_count):  # noqa: ANN001, ANN202
            taken = take(self, shard_count)
            _forced_end_on_another_thread(said)
            return taken

        monkeypatch.setattr(lifecycle.RunLease, "take", take_then_forced)
    else:
        began = ending.run_began

        def began_then_forced(run_id: str, resume: str) -> None:
            began(run_id, resume)
            _forced_end_on_another_thread(said)

        monkeypatch.setattr(ending, "run_began", began_then_forced)
    result = cli("run", "evalkit.smoke", "--run-id", "forced-run")
    assert result.code == 0, result.stderr  # the command went on: only the process's end was faked
    (message,) = said
    prefix = "evalkit: interrupted: a second SIGTERM; "
    expected = {
        "before the run is stored": prefix + "no run had begun, nothing was stored\n",
        "after its lease is taken": prefix + "run forced-run was stored before it: the run and its results are kept (see `evalkit show forced-run`)\n",
        "once it answers": prefix + "run forced-run keeps every case committed before it (0 from this process); "
        "continue it with `evalkit run evalkit.smoke --resume forced-run`\n",
    }
    assert message == expected[when]
