"""Observer hooks that raise: in every hook named in $FAILING_HOOKS (comma-separated; default all
three); and that never return (a webhook that stopped answering) in every hook named in $STALLING_HOOKS."""

import os
import time

from evalkit import hookimpl


def _maybe_raise(hook, what):
    if hook in os.environ.get("STALLING_HOOKS", "").split(","):
        while True:
            try:
                time.sleep(3600)
            except Exception:  # noqa: BLE001,S112 - catching Exception does not save it
                continue
    chosen = os.environ.get("FAILING_HOOKS", "evalkit_run_started,evalkit_case_graded,evalkit_run_finished")
    if hook in chosen.split(","):
        raise RuntimeError(f"[bold]{what}[/bold] broke\x1b[31m")


@hookimpl
def evalkit_run_started(run, total):
    """Raise at the start."""
    _maybe_raise("evalkit_run_started", f"start of {total}")


@hookimpl
def evalkit_case_graded(case):
    """Raise for every case."""
    _maybe_raise("evalkit_case_graded", "case")


@hookimpl
def evalkit_run_finished(run):
    """Raise at the end."""
    _maybe_raise("evalkit_run_finished", "finish")
