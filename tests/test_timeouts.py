"""Bounded calls: the alarm interrupts a runaway search and leaves the process's SIGALRM as it was."""

from __future__ import annotations

import re
import signal
import threading
import time
from typing import Any

import pytest
from evalkit.timeouts import RegexTimeout, call_with_timeout, search_with_timeout

RUNAWAY = re.compile(r"(a+)+$")


def test_a_search_that_finishes_gives_its_answer() -> None:
    assert search_with_timeout(re.compile(r"\bparis\b", re.I), "The capital of France is Paris.") is True
    assert search_with_timeout(re.compile(r"\bparis\b"), "The capital of France is Paris.") is False


def test_a_runaway_search_is_stopped() -> None:
    started = time.perf_counter()
    with pytest.raises(RegexTimeout):
        search_with_timeout(RUNAWAY, "a" * 40 + "b", timeout_s=0.2)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("runaway", [False, True])
def test_the_callers_sigalrm_handler_is_back_afterwards(runaway: bool) -> None:
    calls: list[int] = []

    def mine(signum: int, frame: Any) -> None:
        calls.append(signum)

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        if runaway:
            with pytest.raises(RegexTimeout):
                search_with_timeout(RUNAWAY, "a" * 40 + "b", timeout_s=0.2)
        else:
            assert call_with_timeout(len, "abc") == 3
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no alarm left armed
        signal.raise_signal(signal.SIGALRM)
        assert calls == [signal.SIGALRM]
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_the_default_disposition_is_restored_too() -> None:
    previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        call_with_timeout(len, "abc")
        assert signal.getsignal(signal.SIGALRM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_off_the_main_thread_a_runaway_search_is_stopped_in_a_helper_process() -> None:
    outcome: list[object] = []

    def search() -> None:
        try:
            outcome.append(search_with_timeout(RUNAWAY, "a" * 40 + "b", timeout_s=0.5))
        except RegexTimeout as exc:
            outcome.append(exc)

    thread = threading.Thread(target=search)
    thread.start()
    thread.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], RegexTimeout)
