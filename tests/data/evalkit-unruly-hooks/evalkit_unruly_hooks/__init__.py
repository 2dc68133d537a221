"""A hook plugin that keeps the process alive, in each of the ways named in $UNRULY (comma-separated):

- ``thread``: leaves a thread that is not a daemon running for ever when the run finishes;
- ``atexit``: registers an exit handler that never returns;
- ``alarm``: in the first graded case, installs its own SIGALRM handler, stops the real-time timer
  and sleeps for an hour (evalkit's hook_timeout must still interrupt it);
- ``sigterm``: when the run starts, installs a SIGTERM handler that ignores the signal;
- ``swallow``: from the second graded case on, never returns, swallowing every BaseException
  (evalkit's time limit and the KeyboardInterrupt SIGTERM raises);
- ``slow``: every graded case takes 0.3 s.

When the run starts it writes the file named by $UNRULY_STARTED (a test waits for it); every
graded case appends a line to it.
"""

import atexit
import os
import signal
import threading
import time

from evalkit import hookimpl


def _ways():
    return set(os.environ.get("UNRULY", "").split(","))


def _mark(text):
    path = os.environ.get("UNRULY_STARTED")
    if path:
        with open(path, "a", encoding="utf-8") as marks:
            marks.write(text + "\n")


def _forever():
    while True:
        try:
            time.sleep(3600)
        except BaseException:  # noqa: BLE001,S110 - the point: nothing stops it
            pass


if "atexit" in _ways():
    atexit.register(_forever)


@hookimpl
def evalkit_run_started(run, total):
    """Install the SIGTERM handler; say the run started."""
    if "sigterm" in _ways():
        signal.signal(signal.SIGTERM, lambda signum, frame: None)
    _mark("started")


_graded = []


@hookimpl
def evalkit_case_graded(case):
    """Misbehave as asked."""
    _graded.append(case)
    ways = _ways()
    if "alarm" in ways and len(_graded) == 1:
        signal.signal(signal.SIGALRM, lambda signum, frame: None)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.alarm(0)
        time.sleep(3600)
    if "slow" in ways:
        time.sleep(0.3)
    _mark("graded")
    if "swallow" in ways and len(_graded) >= 2:
        _forever()


@hookimpl
def evalkit_run_finished(run):
    """Leave a thread running."""
    if "thread" in _ways():
        threading.Thread(target=_forever, name="unruly-forever").start()
