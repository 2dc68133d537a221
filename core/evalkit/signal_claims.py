"""Signals evalkit relies on, kept out of plugins' hands while it does.

evalkit's time limits ring with ``SIGALRM`` (:mod:`evalkit.timeouts`: a stuck hook, grader or set
provider is interrupted at its limit), and the ``evalkit`` console script ends on ``SIGTERM``
(:mod:`evalkit.cli.ending`: a CI job's timeout, ``docker stop``). A plugin that installs its own
handler for either — or stops the real-time timer — would silently switch those off: a hook stuck
past ``hook_timeout`` would hang the run, a CI job's ``SIGTERM`` would be ignored until its runner
killed it, with nothing said.

While a signal is *claimed* (:func:`claimed`), ``signal.signal`` for it leaves evalkit's handler in
place and returns it; while ``SIGALRM`` is claimed, ``signal.setitimer(ITIMER_REAL, …)`` and
``signal.alarm()`` leave evalkit's timer as it is (returning it), ``signal.pthread_sigmask`` in
the main thread blocks what it is asked to except ``SIGALRM`` (blocked there, the alarm no longer
interrupted a stuck call's blocking wait: a grader's ``sleep(3600)`` ran its hour), and
``signal.siginterrupt(SIGALRM, …)`` is not applied (``False`` made a blocking read restart when the
alarm rang: a grader waiting on a socket that never answered hung the run). What a plugin asked for is not
applied later either. This holds for calls through the :mod:`signal` module — the way code calls
it — not for the private ``_signal`` module (evalkit's own way, which the claims do not affect).
Claims are made and released in the main thread, the only one that may set a handler.

A signal may also be *adopted* (:func:`adopting`): while it is, and not claimed, a handler set
through ``signal.signal`` is installed as the adopter wraps it (:mod:`evalkit.timeouts` wraps a
host program's ``SIGALRM`` handler set during a library run), and ``signal.signal`` returns the
previous handler unwrapped, as its caller set it. The adopter also decides, claimed or not, whether
a call for the signal (and for ``SIGALRM`` the real-time timer) is refused as a claim refuses it
(:mod:`evalkit.timeouts` refuses a plugin call's during a library run), and may refuse it aloud by
raising.
"""

from __future__ import annotations

# The C functions under the signal module: evalkit's own calls, which claims must not refuse.
import _signal
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["Adopter", "adopting", "claim", "claimed", "is_claimed", "release"]


class Adopter(Protocol):
    """How :func:`adopting` installs a handler set through ``signal.signal`` and gives one back."""

    def wrap(self, handler: Any) -> Any:
        """The handler to install for ``handler``."""

    def unwrap(self, handler: Any) -> Any:
        """The handler as its caller set it, for an installed one (any other as it is)."""

    def refuses(self, call: str, claimed: bool) -> bool:
        """Whether ``call`` (``"signal.signal"``, ``"signal.setitimer"``, ``"signal.alarm"``,
        ``"signal.pthread_sigmask"``, ``"signal.siginterrupt"``), made now, is not applied;
        ``claimed``: a claim is in force. May raise to refuse it aloud."""


#: How many claims are in force on each signal number.
_claims: dict[int, int] = {}
#: The signal module's own functions, before :func:`_guard` replaced them.
_originals: dict[str, Any] = {}
#: The adopter in force on each signal number (see :func:`adopting`).
_adopters: dict[int, Adopter] = {}


def claim(signum: int) -> None:
    """Keep ``signum``'s handler (and for ``SIGALRM`` the real-time timer) evalkit's until the
    matching :func:`release`."""
    _guard()
    number = int(signum)
    _claims[number] = _claims.get(number, 0) + 1


def release(signum: int) -> None:
    """End one :func:`claim` on ``signum``."""
    _claims[int(signum)] -= 1


@contextlib.contextmanager
def claimed(signum: int) -> Iterator[None]:
    """:func:`claim` ``signum`` while inside."""
    claim(signum)
    try:
        yield
    finally:
        release(signum)


@contextlib.contextmanager
def adopting(signum: int, adopter: Adopter) -> Iterator[None]:
    """While inside, a handler set for ``signum`` through ``signal.signal`` (and not refused by a
    claim) is installed as ``adopter.wrap(handler)``; the previous handler is returned as
    ``adopter.unwrap`` gives it. Main thread only, one adopter per signal at a time."""
    _guard()
    number = int(signum)
    _adopters[number] = adopter
    try:
        yield
    finally:
        del _adopters[number]


def is_claimed(signum: int) -> bool:
    """True while a claim on ``signum`` is in force."""
    return _claims.get(int(signum), 0) > 0


def _guard() -> None:
    """Put the claim-aware versions of ``signal.signal``, ``signal.setitimer``, ``signal.alarm``,
    ``signal.pthread_sigmask`` and ``signal.siginterrupt`` in the :mod:`signal` module (once)."""
    if _originals:
        return
    _originals.update(
        signal=signal.signal, setitimer=signal.setitimer, alarm=signal.alarm, pthread_sigmask=signal.pthread_sigmask,
        siginterrupt=signal.siginterrupt,
    )  # fmt: skip
    signal.signal = _signal_unless_claimed  # type: ignore[assignment]
    signal.setitimer = _setitimer_unless_claimed  # type: ignore[assignment]
    signal.alarm = _alarm_unless_claimed  # type: ignore[assignment]
    signal.pthread_sigmask = _sigmask_unless_claimed  # type: ignore[assignment]
    signal.siginterrupt = _siginterrupt_unless_claimed  # type: ignore[assignment]


def _refused(signum: int, call: str) -> bool:
    """Whether ``call`` for ``signum`` is not applied: claimed, or as its adopter decides."""
    adopter = _adopters.get(signum)
    claimed = is_claimed(signum)
    return claimed if adopter is None else adopter.refuses(call, claimed)


def _signal_unless_claimed(signalnum: Any, handler: Any) -> Any:
    """``signal.signal``, except for a claimed signal (its handler is kept, and returned) and an
    adopted one (the handler installed as its adopter wraps it, or refused as it decides)."""
    number = int(signalnum)
    adopter = _adopters.get(number)
    if _refused(number, "signal.signal"):
        current = signal.getsignal(signalnum)
        return current if adopter is None else adopter.unwrap(current)
    if adopter is not None:
        return adopter.unwrap(_originals["signal"](signalnum, adopter.wrap(handler)))
    return _originals["signal"](signalnum, handler)


def _setitimer_unless_claimed(which: int, seconds: float, interval: float = 0.0) -> tuple[float, float]:
    """``signal.setitimer``, except for the real-time timer while ``SIGALRM`` is claimed (or its
    adopter refuses it): left running as it was (its state returned)."""
    if which == _signal.ITIMER_REAL and _refused(_signal.SIGALRM, "signal.setitimer"):
        return _signal.getitimer(which)
    return _originals["setitimer"](which, seconds, interval)


def _alarm_unless_claimed(seconds: int) -> int:
    """``signal.alarm``, except while ``SIGALRM`` is claimed (or its adopter refuses it): the timer
    is left running as it was."""
    if _refused(_signal.SIGALRM, "signal.alarm"):
        return int(_signal.getitimer(_signal.ITIMER_REAL)[0])
    return int(_originals["alarm"](seconds))


def _is_alarm(signum: Any) -> bool:
    """True for ``SIGALRM`` (an ``int`` or a ``Signals``); anything else is the real call's to refuse."""
    try:
        return int(signum) == _signal.SIGALRM
    except (TypeError, ValueError):
        return False


def _sigmask_unless_claimed(how: int, mask: Any) -> Any:
    """``signal.pthread_sigmask``, except in the main thread while ``SIGALRM`` is claimed (or its
    adopter refuses it): what it blocks (or sets as the mask) keeps ``SIGALRM`` out."""
    try:
        signals = list(mask)
    except TypeError:  # no set of signals: the real call says so
        return _originals["pthread_sigmask"](how, mask)
    if (
        how != _signal.SIG_UNBLOCK
        and threading.current_thread() is threading.main_thread()
        and any(_is_alarm(s) for s in signals)
        and _refused(_signal.SIGALRM, "signal.pthread_sigmask")
    ):
        signals = [s for s in signals if not _is_alarm(s)]
    return _originals["pthread_sigmask"](how, signals)


def _siginterrupt_unless_claimed(signalnum: Any, flag: Any) -> None:
    """``signal.siginterrupt``, except for ``SIGALRM`` while it is claimed (or its adopter refuses
    it): a ring keeps interrupting blocking calls."""
    if _is_alarm(signalnum) and _refused(_signal.SIGALRM, "signal.siginterrupt"):
        return None
    return _originals["siginterrupt"](signalnum, flag)  # type: ignore[no-any-return]
