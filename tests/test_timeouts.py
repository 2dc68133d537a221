"""Bounded calls: the alarm interrupts a runaway call and leaves the process's SIGALRM as it was.

(Regex matches are bounded by the regex module itself, in any thread: tests/test_checks.py.)"""

from __future__ import annotations

import _signal
import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from evalkit.timeouts import alarm_bounded, alarm_scope


class Outer(BaseException):
    """The outer guard's exception in these tests."""


class Inner(BaseException):
    """An inner guard's exception (a limit of its own inside a grader's)."""


@pytest.mark.parametrize("runaway", [False, True])
def test_the_callers_sigalrm_handler_is_back_afterwards(runaway: bool) -> None:
    calls: list[int] = []

    def mine(signum: int, frame: Any) -> None:
        calls.append(signum)

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        if runaway:
            with pytest.raises(Outer):
                alarm_bounded(time.sleep, (10,), 0.2, Outer)
        else:
            assert alarm_bounded(len, ("abc",), 1, Outer) == 3
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no alarm left armed
        signal.raise_signal(signal.SIGALRM)
        assert calls == [signal.SIGALRM]
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_the_default_disposition_is_restored_too() -> None:
    previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        alarm_bounded(len, ("abc",), 1, Outer)
        assert signal.getsignal(signal.SIGALRM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGALRM, previous)


# --- Guards that nest (a call with a limit of its own inside a grader with its own time limit) ---------


def test_an_inner_limit_that_passes_first_is_the_inner_ones_and_the_outer_still_holds() -> None:
    seen: list[str] = []

    def grader() -> None:
        try:
            alarm_bounded(time.sleep, (10,), 0.2, Inner)
        except Inner:
            seen.append("inner timed out")
        time.sleep(10)  # past the outer limit: interrupted

    started = time.perf_counter()
    with pytest.raises(Outer):
        alarm_bounded(grader, (), 0.6, Outer)
    assert seen == ["inner timed out"] and time.perf_counter() - started < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_an_outer_limit_that_passes_first_is_raised_through_the_inner_guard() -> None:
    def grader() -> None:
        alarm_bounded(time.sleep, (30,), 30, Inner)

    started = time.perf_counter()
    with pytest.raises(Outer):
        alarm_bounded(grader, (), 0.3, Outer)
    assert time.perf_counter() - started < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_call_that_swallows_exceptions_is_still_stopped() -> None:
    def stubborn() -> None:
        while True:
            try:
                time.sleep(10)
            except Exception:  # noqa: S112 - the point: an except Exception cannot keep it going
                continue

    started = time.perf_counter()
    with pytest.raises(Outer):
        alarm_bounded(stubborn, (), 0.2, Outer)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("scope", [contextlib.nullcontext, alarm_scope], ids=["per-call", "in-a-scope"])
def test_a_call_that_catches_even_the_limit_gets_it_again_until_it_ends(scope) -> None:  # noqa: ANN001
    caught: list[BaseException] = []

    def retrying() -> None:
        for _ in range(2):
            try:
                time.sleep(10)
            except BaseException as exc:  # noqa: BLE001 - swallowing on purpose
                caught.append(exc)
        time.sleep(10)

    started = time.perf_counter()
    with scope(), pytest.raises(Outer):
        alarm_bounded(retrying, (), 0.2, Outer)
    assert [type(exc) for exc in caught] == [Outer, Outer] and time.perf_counter() - started < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@contextlib.contextmanager
def process_timer(seconds: float) -> Iterator[list[int]]:
    """A SIGALRM handler and timer of the process's own (pytest-timeout's, say), and the signals it got."""
    calls: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: calls.append(signum))
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield calls
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_timer_the_process_had_set_is_set_again_less_the_time_taken() -> None:
    with process_timer(30) as calls:
        assert alarm_bounded(time.sleep, (0.2,), 5, Outer) is None
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < remaining <= 29.85
        assert calls == []


def test_a_timer_that_fell_due_during_the_call_rings_right_after_it() -> None:
    with process_timer(0.1) as calls:
        alarm_bounded(time.sleep, (0.3,), 5, Outer)
        time.sleep(0.2)
        assert calls == [signal.SIGALRM]


def test_alarm_bounded_refuses_to_run_off_the_main_thread() -> None:
    outcome: list[BaseException] = []

    def off_main() -> None:
        try:
            alarm_bounded(len, ("abc",), 1, Outer)
        except RuntimeError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=off_main)
    thread.start()
    thread.join(10)
    assert len(outcome) == 1 and "main thread" in str(outcome[0])


def test_inside_a_scope_guards_that_end_in_time_leave_one_timer_set_and_the_scope_puts_the_handler_back() -> None:
    previous = signal.getsignal(signal.SIGALRM)
    with alarm_scope():
        for _ in range(1000):
            assert alarm_bounded(len, ("abc",), 30, Outer) == 3
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 29 < remaining <= 30  # set once, by the first guard: the later ones are no nearer
        # a nearer limit (an inner call's) sets the timer nearer; its ringing with nothing due moves it on
        assert alarm_bounded(len, ("abc",), 0.1, Inner) == 3
        assert signal.getitimer(signal.ITIMER_REAL)[0] <= 0.1
        time.sleep(0.3)
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nothing was in force: off
    assert signal.getsignal(signal.SIGALRM) is previous
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_inside_a_scope_limits_still_stop_calls_nested_or_not() -> None:
    with alarm_scope():
        started = time.perf_counter()
        with pytest.raises(Outer):
            alarm_bounded(time.sleep, (10,), 0.2, Outer)
        assert time.perf_counter() - started < 5

        def grader() -> None:
            alarm_bounded(len, ("x",), 0.05, Inner)  # an inner guard that ends in time
            time.sleep(10)

        with pytest.raises(Outer):
            alarm_bounded(grader, (), 0.3, Outer)
        assert time.perf_counter() - started < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_scope_leaves_a_process_timer_alone_and_guards_as_before() -> None:
    with process_timer(0.3) as calls:
        with alarm_scope():
            assert alarm_bounded(time.sleep, (0.05,), 5, Outer) is None
            time.sleep(0.5)
        assert calls == [signal.SIGALRM]  # rang on time, inside the scope


class _Stalled(BaseException):
    pass


def test_a_plugins_own_sigalrm_handler_or_timer_inside_a_limit_does_not_switch_it_off() -> None:
    """Issue 34, item 4: signal.signal(SIGALRM, …), signal.setitimer(ITIMER_REAL, 0) and
    signal.alarm(0) inside a guarded call leave evalkit's handler and timer as they were."""

    def unruly() -> None:
        signal.signal(signal.SIGALRM, lambda signum, frame: None)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.alarm(0)
        time.sleep(30)

    for scoped in (False, True):
        with alarm_scope() if scoped else contextlib.nullcontext():
            with pytest.raises(_Stalled):
                alarm_bounded(unruly, (), 0.2, _Stalled)
    previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)  # outside any limit: applied as asked
    try:
        assert signal.getsignal(signal.SIGALRM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGALRM, previous)


#: A child that guards thousands of calls with a limit shorter than the guard takes to begin, in a
#: scope and outside one, and says whether each left a deadline in force or the handler installed.
_TOO_SHORT_TO_BEGIN = """
import contextlib, signal, sys, time
from evalkit import timeouts
from evalkit.timeouts import TimeLimitExceeded, alarm_bounded, alarm_scope

def busy():
    began = time.monotonic()
    while time.monotonic() - began < 0.001:
        pass

for scoped in (False, True):
    for call in range(500):
        with alarm_scope() if scoped else contextlib.nullcontext():
            with contextlib.suppress(TimeLimitExceeded):
                alarm_bounded(busy, (), 1e-9, TimeLimitExceeded)
        if timeouts._deadlines or signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL:
            sys.exit(f"call {call} (scoped: {scoped}) left its deadline in force or the handler installed")
print("clean")
"""


def test_a_limit_that_passes_before_the_guarded_call_begins_leaves_nothing_behind() -> None:
    """The timer was set before the guard's ``try``: a limit that passed in between (1e-9 s) left
    its deadline in force and the alarm ringing, and the next guarded call was killed by SIGALRM
    ("Alarm clock"). A child process: the failure kills the process that meets it."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", _TOO_SHORT_TO_BEGIN], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0 and child.stdout.strip() == "clean", (child.returncode, child.stdout, child.stderr[-2000:])


def _lose_the_next_ring() -> None:
    """The next ``SIGALRM`` is taken from the process without its handler running, as a ring is
    lost on a loaded machine: delivered after the main thread's last check for signals but before
    it entered its blocking call (``time.sleep``'s ``clock_nanosleep`` is then not interrupted), or
    delivered to another thread while the main one had a signal pending. Blocked through
    ``_signal``, below evalkit's claims (``signal.pthread_sigmask`` keeps a claimed SIGALRM out)."""
    _signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        assert signal.sigtimedwait({signal.SIGALRM}, 10) is not None
    finally:
        _signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


@pytest.mark.parametrize("scoped", [False, True])
def test_a_ring_lost_before_a_blocking_call_is_followed_by_another(scoped: bool) -> None:
    """Every timer evalkit set rang once: a ring lost on a loaded machine left the guarded call
    blocked for good (a stalled set producer's sleep(3600) ran past the test runner's 60 s
    watchdog). The timer now rings again every 0.1 s until it is moved or stopped."""

    def stalls() -> None:
        _lose_the_next_ring()  # the limit's own ring
        time.sleep(10)

    started = time.perf_counter()
    with alarm_scope() if scoped else contextlib.nullcontext():
        with pytest.raises(Outer):
            alarm_bounded(stalls, (), 0.2, Outer)
    assert time.perf_counter() - started < 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_ring_lost_while_nothing_is_due_is_followed_by_another_in_a_scope() -> None:
    """The timer a guard that ended in time left running rings with nothing due and moves itself
    to the next limit; that ring lost, the next limit was never set."""
    with alarm_scope():
        assert alarm_bounded(len, ("abc",), 0.1, Inner) == 3

        def stalls() -> None:
            _lose_the_next_ring()  # the earlier guard's ring, nothing due: nothing moves the timer
            time.sleep(10)

        started = time.perf_counter()
        with pytest.raises(Outer):
            alarm_bounded(stalls, (), 0.3, Outer)
        assert time.perf_counter() - started < 2


@pytest.mark.parametrize("scope", [contextlib.nullcontext, alarm_scope], ids=["per-call", "in-a-scope"])
def test_an_outer_limit_is_raised_while_inner_guards_come_and_go_faster_than_the_alarm_repeats(scope) -> None:  # noqa: ANN001
    """Each inner guard sets the timer for the outer limit that has passed, and its ring lands in
    that guard's own code, where it is withheld: the guard raises it once its own limit is removed,
    or the outer limit was never raised."""

    def inner_guards_for_5_s() -> str:
        began = time.monotonic()
        while time.monotonic() - began < 5:
            alarm_bounded(len, ("x",), 30, Inner)
        return "the outer limit never came"

    started = time.perf_counter()
    with scope(), pytest.raises(Outer):
        alarm_bounded(inner_guards_for_5_s, (), 0.2, Outer)
    assert time.perf_counter() - started < 2
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


#: A child that rings the alarm as a guard removes its limit after the call ended late (its limit's
#: own ring lost, as on a loaded machine), outside and inside a scope, alone and inside an outer
#: guard; then guards another call, and says what each left behind.
_RING_AS_THE_GUARD_ENDS = """
import _signal, contextlib, signal, sys, time
from evalkit import timeouts
from evalkit.timeouts import alarm_bounded, alarm_scope

class Late(BaseException):
    pass

class Outer(BaseException):
    pass

class RingsAsALimitIsRemoved(list):
    ring = False

    def __delitem__(self, index):
        if self.ring:
            self.ring = False
            signal.raise_signal(signal.SIGALRM)  # handled at once: a ring at this bytecode
        super().__delitem__(index)

timeouts._deadlines = RingsAsALimitIsRemoved()

def late():
    _signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # below evalkit's claims
    try:
        assert signal.sigtimedwait({signal.SIGALRM}, 10) is not None  # the limit's ring, lost
    finally:
        _signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
    timeouts._deadlines.ring = True
    return "done"

for scoped in (False, True):
    for nested in (False, True):
        with alarm_scope() if scoped else contextlib.nullcontext():
            try:
                if nested:
                    outcome = alarm_bounded(alarm_bounded, (late, (), 0.05, Late), 30, Outer)
                else:
                    outcome = alarm_bounded(late, (), 0.05, Late)
            except BaseException as exc:
                outcome = type(exc).__name__
            left = list(timeouts._deadlines)
            assert alarm_bounded(time.sleep, (0.3,), 30, Outer) is None
        state = (outcome, left, signal.getsignal(signal.SIGALRM) is signal.SIG_DFL, signal.getitimer(signal.ITIMER_REAL))
        if state != ("done", [], True, (0.0, 0.0)):
            sys.exit(f"scoped {scoped}, nested {nested}: {state}")
print("clean")
"""


def test_a_ring_as_a_guard_removes_its_limit_leaves_nothing_in_force() -> None:
    """A ring that came as a guard's ``finally`` began, its limit just passed, raised the limit out
    of the ``finally`` before the limit was removed: the limit stayed in force after the call (the
    next ring raised it into whatever ran next; outside a scope the handler stayed installed too)
    and the next guard set the timer without the handler ("Alarm clock"). The handler now never
    raises into a guard's own code. A child process: the failure kills the process that meets it."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", _RING_AS_THE_GUARD_ENDS], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0 and child.stdout.strip() == "clean", (child.returncode, child.stdout, child.stderr[-2000:])


def test_a_coroutine_that_blocks_the_loop_is_interrupted_in_its_step_and_the_other_tasks_go_on() -> None:
    """``alarm_bounded_steps``: a step that blocks the event loop (``time.sleep`` in an ``async
    def``, which no ``asyncio.timeout`` can cancel) has the limit's exception raised into it; a
    task beside it, whose steps run between the bounded one's, is untouched and finishes."""
    import asyncio

    from evalkit.timeouts import alarm_bounded_steps

    reached: list[str] = []

    async def blocks() -> None:
        await asyncio.sleep(0)
        reached.append("blocking")
        while True:
            try:
                time.sleep(30)
            except Exception:  # noqa: S112 - swallows what an Exception would be
                continue

    async def beside() -> str:
        for _ in range(3):
            await asyncio.sleep(0)
        return "done"

    async def both() -> tuple[Any, Any]:
        bounded = asyncio.ensure_future(alarm_bounded_steps(blocks(), 0.3, Outer))
        other = asyncio.ensure_future(beside())
        return tuple(await asyncio.gather(bounded, other, return_exceptions=True))

    before = signal.getsignal(signal.SIGALRM)
    with alarm_scope():
        stopped, other = asyncio.run(both())
    assert isinstance(stopped, Outer) and reached == ["blocking"]
    assert other == "done"
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_step_bounded_coroutine_returns_its_value_and_is_cancelled_where_it_awaits() -> None:
    """The bound changes nothing for a coroutine that does not block the loop: it gets what it
    awaited, returns its value, and a cancellation reaches it where it waits (its ``finally`` runs)."""
    import asyncio

    from evalkit.timeouts import alarm_bounded_steps

    cleaned: list[str] = []

    async def answers() -> int:
        got = await asyncio.sleep(0, result=20)
        return got + 22

    async def waits() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("finally")

    async def main() -> int:
        assert await alarm_bounded_steps(answers(), 5, Outer) == 42
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await alarm_bounded_steps(waits(), 5, Outer)
        return 0

    assert asyncio.run(main()) == 0
    assert cleaned == ["finally"]
