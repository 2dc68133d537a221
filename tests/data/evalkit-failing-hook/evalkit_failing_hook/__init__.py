"""Observer hooks that raise: in every hook named in $FAILING_HOOKS (comma-separated; default all three)."""

import os

from evalkit import hookimpl


def _maybe_raise(hook, what):
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
