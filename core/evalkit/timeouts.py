"""Bounded-time calls in the main thread, so a stuck grader, set provider or observer cannot hang a run.

:func:`alarm_bounded` runs a call with ``SIGALRM`` set for its limit and raises the caller's
exception into it when the limit passes (CPython checks for signals between bytecodes and in
blocking calls, so the alarm interrupts it). Signals reach the main thread only: elsewhere the
callers leave their calls unbounded or bound them otherwise. Regex matches are not bounded here:
the `regex` module stops a match itself, in any thread (:mod:`evalkit.pcre`).

An ``async`` call's steps are guarded one by one (:func:`alarm_bounded_steps`): each runs with the
event loop blocked, so a coroutine that blocks it (``time.sleep`` in an ``async def``, which no
``asyncio`` timeout can cancel) is interrupted there, and nothing is ever raised into the loop.

Guards nest: a guarded call inside a guarded grader keeps both limits, the alarm is set for the
nearer one, and when the outer limit passes first its exception is the one raised. A timer the
process had set before the outermost guard (``pytest-timeout``'s, say) is set again afterwards,
less the time the call took.

A host program that calls evalkit as a library may have a ``SIGALRM`` handler of its own (a
``@timeout`` decorator) that raises its own exception. Inside :func:`host_alarms` (every library run
is) that handler is wrapped: what it raises is raised as :class:`HostAlarm`, which no boundary that
takes an exception as a plugin's failure catches (:data:`~evalkit.errors.PLUGIN_FAILURES`,
:func:`~evalkit.errors.carried`), and is raised to the host as the host's own exception when it
leaves :func:`host_alarms` (the run it stopped is marked interrupted on the way). Who set a handler
during the run is told by the frames of the call that set it: one of the caller's callbacks
(:func:`callers_call`) is the host; a plugin call (:func:`~evalkit.errors.carried`) is a plugin,
whose ``SIGALRM`` handler and timer are not applied during a library run (the host's are in force);
anything else, evalkit cannot tell, and says so. A callback of the caller's that sets them while
evalkit's limits hold ``SIGALRM`` is refused aloud (:class:`~evalkit.errors.AlarmHeld`), not
quietly: the caller's own time limit would never ring.

While a guard or scope is in force, ``SIGALRM`` and the real-time timer are claimed
(:mod:`evalkit.signal_claims`): a plugin that installs its own ``SIGALRM`` handler, or stops the
timer, inside a guarded call cannot switch evalkit's limits off.

A guard costs two ``signal()`` and two to four ``setitimer()`` calls. Inside :func:`alarm_scope`
(a run wraps its answering in one) the handler stays installed and the timer is set only when a
guard's limit is nearer than the one already set: a guarded call that ends in time leaves the timer
running, and the alarm, when it rings with nothing due, sets itself for the nearest limit still in
force or stays off. Thousands of short guarded calls then cost no system call at all.

A limit's exception is raised into the guarded call only, never into a guard's own code (setting
its limit up, or removing it after the call ended): a ring there would cut that code short and
leave a limit in force with no call under it. Such a ring is withheld: the alarm repeats, so the
next ring reaches the call if it is still running, and the guard, once its own limit is removed,
raises an enclosing limit that has passed (the call of an outer guard it runs in).
"""

from __future__ import annotations

# The C functions under the signal module: its wrappers turn every handler and number into an enum
# and back, 13 µs of the 15 a guarded call spent installing and restoring the handler.
import _signal
import contextlib
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator
from typing import Any, TypeVar

# The two exceptions live with evalkit's others (errors.py tells a plugin's failure from them);
# they are named here too, where the limits that raise them are.
from .errors import HOSTS_OWN, SET_UNTOLD, AlarmHeld, HostAlarm, TimeLimitExceeded, carried, carried_async
from .signal_claims import adopting, claim, release

__all__ = [
    "HostAlarm",
    "TimeLimitExceeded",
    "alarm_bounded",
    "alarm_bounded_steps",
    "alarm_scope",
    "alarms_reach_this_thread",
    "callers_call",
    "host_alarms",
]

T = TypeVar("T")


class _HostHandler:
    """The host's ``SIGALRM`` handler, its exception raised as :class:`HostAlarm`."""

    __slots__ = ("by", "handler")

    def __init__(self, handler: Callable[[int, Any], Any], by: str) -> None:
        self.handler = handler
        self.by = by

    def __call__(self, signum: int, frame: Any) -> None:
        try:
            self.handler(signum, frame)
            return
        except KeyboardInterrupt:  # evalkit's own interruption already: handled as Ctrl-C
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the host raises is the host's
            raised = exc
        raise HostAlarm(raised, self.by)  # outside the except: no context chain back to the cause


def _as_hosts(handler: Any, by: str) -> Any:
    """``handler`` as a :class:`_HostHandler` when it is a Python callable not yet wrapped, nor
    evalkit's own; any other as it is."""
    if not callable(handler) or isinstance(handler, _HostHandler) or handler is _on_alarm:
        return handler
    return _HostHandler(handler, by)


def callers_call(name: str, callback: Callable[..., T], *args: Any) -> T:
    """``callback(*args)``: the library caller's own callback ``name`` (``on_start``, ``on_case``,
    ``on_stored``, ``on_check``). Its frame tells the caller's code from evalkit's and a plugin's:
    a ``SIGALRM`` handler set in it during a run is the host's own (:func:`host_alarms`)."""
    return callback(*args)


_CALLERS_CALL = callers_call.__code__
_PLUGIN_CALLS = (carried.__code__, carried_async.__code__)

#: The calls that set a time limit of the caller's own, as :class:`~evalkit.errors.AlarmHeld` names
#: them (the others — ``pthread_sigmask``, ``siginterrupt`` — are refused quietly to the caller too:
#: blocking every signal around a thread's start is common code, not a time limit).
_SHOWN = {
    "signal.signal": "signal.signal(SIGALRM, …)",
    "signal.setitimer": "signal.setitimer(ITIMER_REAL, …)",
    "signal.alarm": "signal.alarm(…)",
}


def _whose_call() -> tuple[str, str]:
    """Who is calling now: ``("caller", name)`` inside the caller's callback ``name``, ``("plugin",
    "")`` inside a plugin call, ``("", "")`` when neither (the innermost of them decides)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _CALLERS_CALL:
            return "caller", str(frame.f_locals.get("name", "a"))
        if frame.f_code in _PLUGIN_CALLS:
            return "plugin", ""
        frame = frame.f_back
    return "", ""


class _HostHandlers:
    """The :class:`~evalkit.signal_claims.Adopter` of ``SIGALRM`` handlers set during a run: the
    caller's wrapped as :class:`_HostHandler` (given back as the host set them); a plugin call's
    refused, as evalkit's limits refuse it, its handler and timer left the host's."""

    def wrap(self, handler: Any) -> Any:
        """``handler`` as a :class:`_HostHandler` when it is a Python callable (the host's own when
        one of the caller's callbacks set it)."""
        return _as_hosts(handler, HOSTS_OWN if _whose_call()[0] == "caller" else SET_UNTOLD)

    def unwrap(self, handler: Any) -> Any:
        """The host's own handler for a :class:`_HostHandler`; any other as it is."""
        return handler.handler if isinstance(handler, _HostHandler) else handler

    def refuses(self, call: str, claimed: bool) -> bool:
        """A plugin call's ``call`` is refused; the caller's callback's handler or timer raises
        :class:`~evalkit.errors.AlarmHeld` while evalkit's limits claim ``SIGALRM``; any other is
        refused while they do."""
        whose, name = _whose_call()
        if whose == "plugin":
            return True
        if whose == "caller" and claimed and call in _SHOWN:
            raise AlarmHeld(
                f"{_SHOWN[call]} in the {name} callback was not applied: evalkit's own time limits hold SIGALRM "
                "there (while a run answers, or a set's prompts are checked), so a SIGALRM handler or timer of the "
                "caller's would never be in force; set it before calling evalkit, or from on_start"
            )
        return claimed


_HOST_HANDLERS = _HostHandlers()

#: True while a :func:`host_alarms` is in force (main thread).
_hosting = False


@contextlib.contextmanager
def host_alarms() -> Iterator[None]:
    """Inside it, a ``SIGALRM`` handler of the host program's own (a Python callable, in the main
    thread: set before it, or during it through ``signal.signal`` outside evalkit's time limits,
    from a callback say) raises its exception as :class:`HostAlarm`; a :class:`HostAlarm` leaving it
    is raised as the host's exception itself. A plugin call's ``signal.signal(SIGALRM, …)``,
    ``signal.setitimer(ITIMER_REAL, …)`` and ``signal.alarm()`` are not applied inside it; a caller's
    callback's, while evalkit's limits hold ``SIGALRM``, raise :class:`~evalkit.errors.AlarmHeld`.
    Elsewhere (another thread, inside another :func:`host_alarms` or one of evalkit's time limits)
    it changes nothing. The host's handler (the last it set) is put back after."""
    global _hosting
    handler = _signal.getsignal(_signal.SIGALRM) if alarms_reach_this_thread() else None
    if handler is None or _hosting or isinstance(handler, _HostHandler) or handler is _on_alarm:
        yield
        return
    _hosting = True
    try:
        wrapped = _as_hosts(handler, HOSTS_OWN)
        if wrapped is not handler:
            _signal.signal(_signal.SIGALRM, wrapped)
        with adopting(_signal.SIGALRM, _HOST_HANDLERS):
            yield
    except HostAlarm as alarm:
        raise alarm.cause from None
    finally:
        _hosting = False
        current = _signal.getsignal(_signal.SIGALRM)
        if isinstance(current, _HostHandler):
            _signal.signal(_signal.SIGALRM, current.handler)


#: Once a limit has passed, the alarm rings again this often until the guarded call has ended:
#: a call that catches the first exception (a retry loop) gets another. Every timer set here
#: repeats at this interval too, until it is moved or stopped: a ring can be lost (delivered after
#: the main thread last checked for signals but before it entered a blocking call, which then is not
#: interrupted; or delivered to another thread), and a timer that rang once then left the guarded
#: call blocked for good. The next ring interrupts it; the handler, finding nothing due, moves the
#: timer on as before.
_RING_AGAIN_S = 0.1


class _Deadline:
    __slots__ = ("at", "error")

    def __init__(self, at: float, error: type[BaseException]) -> None:
        self.at = at
        self.error = error


#: The guards in force in the main thread, outermost first.
_deadlines: list[_Deadline] = []


class _Scope:
    """An :func:`alarm_scope` in force: when the timer rings (``None``: it is off)."""

    __slots__ = ("rings_at",)

    def __init__(self) -> None:
        self.rings_at: float | None = None


#: The alarm scope in force in the main thread, if any.
_scope: _Scope | None = None

#: This module's namespace: the frames of its code (the guards' own) are told by it.
_OWN_GLOBALS = globals()


def _call(function: Callable[..., T], args: tuple[Any, ...]) -> T:
    """The guarded call: the one frame of this module a limit's exception is raised into."""
    return function(*args)


_CALL = _call.__code__


def _in_the_guards_own_code(frame: Any) -> bool:
    """True when the alarm rang while a guard's own code ran (setting its limit up, or removing it
    after the call ended, and what that calls), not the guarded call (:func:`_call` and below)."""
    while frame is not None:
        if frame.f_code is _CALL:
            return False
        if frame.f_globals is _OWN_GLOBALS:
            return True
        frame = frame.f_back
    return False


#: True when the alarm found a limit passed while a guard's own code ran, and raised nothing.
_withheld = False


def _on_alarm(signum: int, frame: Any) -> None:
    global _withheld
    now = time.monotonic()
    for deadline in _deadlines:
        if now >= deadline.at:
            # Never into a guard's own code: raised in its ``finally`` before it removed its limit,
            # the limit stayed in force after the call (the next ring raised it into whatever ran,
            # a guard outside a scope then set the timer without the handler: "Alarm clock"). The
            # timer repeats: the next ring, if the call is still running, raises it there; and the
            # guard, once its own limit is removed, raises an enclosing one that has passed.
            if _in_the_guards_own_code(frame):
                _withheld = True
                return
            _set_timer(now, now + _RING_AGAIN_S)
            raise deadline.error()
    _arm_nearest()


def _raise_what_was_withheld() -> None:
    """After a guard removed its limit: the limit in force that has passed (the outermost), raised
    as the alarm would have, when the alarm withheld one meanwhile. A guarded call that starts and
    ends guarded calls of its own faster than the alarm repeats would otherwise never get its
    limit: each inner guard sets the timer for it at once, and the ring lands in that guard's code."""
    global _withheld
    _withheld = False
    now = time.monotonic()
    for deadline in _deadlines:
        if now >= deadline.at:
            _set_timer(now, now + _RING_AGAIN_S)
            raise deadline.error()


def _set_timer(now: float, at: float | None) -> None:
    """Ring at ``at`` and every :data:`_RING_AGAIN_S` after (``None``: not at all), remembering it
    in the scope in force."""
    if at is None:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
    else:
        _signal.setitimer(_signal.ITIMER_REAL, max(at - now, 1e-6), _RING_AGAIN_S)
    if _scope is not None:
        _scope.rings_at = at


def _take_the_alarm() -> Any:
    """Install the handler of evalkit's limits; return the handler to put back after. During a
    library run (:func:`host_alarms`) a host's handler set there in a way ``signal.signal``'s
    adoption did not see (``_signal.signal``, or ``signal.signal`` as imported before evalkit was)
    is put back wrapped as one set through ``signal.signal`` would be."""
    previous = _signal.signal(_signal.SIGALRM, _on_alarm)
    return _as_hosts(previous, SET_UNTOLD) if _hosting else previous


def _arm_nearest() -> None:
    if _deadlines:
        _set_timer(time.monotonic(), min(deadline.at for deadline in _deadlines))
    elif _scope is not None:
        _set_timer(0.0, None)


@contextlib.contextmanager
def alarm_scope() -> Iterator[None]:
    """Guarded calls inside it (main thread) share one installed handler and a lazily set timer
    (see the module docstring); on leaving it the timer is stopped and the process's own handler
    put back. Off the main thread, inside another scope or guard, or when the process has a timer
    of its own running (its alarm must ring on time), it changes nothing."""
    global _scope
    if _scope is not None or _deadlines or not alarms_reach_this_thread() or _signal.getitimer(_signal.ITIMER_REAL)[0]:
        yield
        return
    previous_handler = _take_the_alarm()
    claim(_signal.SIGALRM)  # a plugin's own SIGALRM handler or timer cannot switch the limits off
    scope = _scope = _Scope()
    try:
        yield
    finally:
        _scope = None
        release(_signal.SIGALRM)
        if scope.rings_at is not None:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, previous_handler)


def alarms_reach_this_thread() -> bool:
    """True in the main thread: the only one Python delivers signals to, so the only one
    :func:`alarm_bounded` can guard."""
    return threading.current_thread() is threading.main_thread()


#: The least a step of :func:`alarm_bounded_steps` is given once its deadline has passed: its limit
#: then rings at once, raised into that step (a limit must be above zero).
_PASSED_S = 1e-6


class _BoundedSteps:
    """The awaitable of :func:`alarm_bounded_steps`: drives ``coroutine`` itself, one step at a time."""

    __slots__ = ("at", "coroutine", "error")

    def __init__(self, coroutine: Coroutine[Any, Any, T], at: float, error: type[BaseException]) -> None:
        self.coroutine = coroutine
        self.at = at
        self.error = error

    def __await__(self) -> Generator[Any, Any, Any]:
        coroutine, at, error = self.coroutine, self.at, self.error
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            limit = max(at - time.monotonic(), _PASSED_S)
            try:
                if thrown is None:
                    waits_on = alarm_bounded(coroutine.send, (sent,), limit, error)
                else:
                    waits_on = alarm_bounded(coroutine.throw, (thrown,), limit, error)
            except StopIteration as returned:
                return returned.value
            try:
                sent, thrown = (yield waits_on), None
            except GeneratorExit:  # closed unfinished (its task collected): closed likewise
                coroutine.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - a cancellation thrown into the awaiting task: handed on
                sent, thrown = None, exc


def alarm_bounded_steps(
    coroutine: Coroutine[Any, Any, T], timeout_s: float, error: type[BaseException]
) -> Awaitable[T]:
    """``coroutine`` awaited with every step of it — its code from one ``await`` that suspends to the
    next, which runs with the event loop blocked — under :func:`alarm_bounded`, limited to what
    remains of ``timeout_s`` (counted from this call): a coroutine that blocks the loop (a
    ``time.sleep`` in an ``async def``) has ``error()`` raised into it, as a synchronous call does.
    The waits between steps are not bounded here (the caller's ``asyncio.timeout`` cancels those):
    nothing is raised into the loop, nor into another task, whose code runs between the steps. Main
    thread only, as :func:`alarm_bounded`; a step costs no system call inside an :func:`alarm_scope`
    whose timer is set for a nearer limit."""
    return _BoundedSteps(coroutine, time.monotonic() + timeout_s, error)


def alarm_bounded(function: Callable[..., T], args: tuple[Any, ...], timeout_s: float, error: type[BaseException]) -> T:
    """``function(*args)``, with ``error()`` raised into it once it has run ``timeout_s`` seconds
    (and every 0.1 s after, until it ends). Main thread only (signals are delivered there);
    :class:`RuntimeError` elsewhere. The process's own ``SIGALRM`` handler and timer are put back."""
    if not alarms_reach_this_thread():
        raise RuntimeError("alarm_bounded works in the main thread only")
    # The timer is set inside the ``try``, as its last step: a limit short enough to pass before
    # the ``try`` began (a few bytecodes; 1e-9 s did) raised out of this function with its deadline
    # left in force, the handler installed and the alarm ringing again: the next guarded call then
    # rang at once, with the default handler, and killed the process ("Alarm clock").
    started = time.monotonic()
    depth = len(_deadlines)
    scope = _scope
    if scope is not None:
        at = started + timeout_s
        try:
            _deadlines.append(_Deadline(at, error))
            if scope.rings_at is None or at < scope.rings_at:
                _set_timer(started, at)
            return _call(function, args)
        finally:
            del _deadlines[depth:]  # the timer runs on: when it rings with nothing due, it moves on
            if _withheld:
                _raise_what_was_withheld()
    if depth == 0:
        previous_handler = _take_the_alarm()
        claim(_signal.SIGALRM)
        previous_timer = _signal.getitimer(_signal.ITIMER_REAL)
    try:
        _deadlines.append(_Deadline(started + timeout_s, error))
        if depth == 0:
            _signal.setitimer(_signal.ITIMER_REAL, timeout_s, _RING_AGAIN_S)
        else:
            _arm_nearest()
        return _call(function, args)
    finally:
        del _deadlines[depth:]  # this guard's and any inner one an exception cut short
        if depth == 0:
            release(_signal.SIGALRM)
            _signal.setitimer(_signal.ITIMER_REAL, 0)
            _signal.signal(_signal.SIGALRM, previous_handler)
            delay, interval = previous_timer
            if delay or interval:
                _signal.setitimer(_signal.ITIMER_REAL, max(delay - (time.monotonic() - started), 1e-6), interval)
        else:
            _arm_nearest()
            if _withheld:
                _raise_what_was_withheld()
