"""Observer hooks: each implementation is called on its own, one that raises is reported once."""

from __future__ import annotations

from evalkit import hookimpl
from evalkit.hooks import Observers, plugin_manager


class Recorder:
    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    @hookimpl
    def evalkit_run_started(self, total):
        self.seen.append(f"started {total}")


class Raising:
    @hookimpl
    def evalkit_run_started(self, run, total):
        raise ValueError(f"bad\nrun {run}")


def test_a_raising_observer_is_reported_once_and_the_others_still_run() -> None:
    seen: list[str] = []
    manager, failures = plugin_manager([Recorder(seen), Raising(), Recorder(seen)])
    assert failures == []
    assert manager.has_plugin("Recorder") and manager.has_plugin("Recorder#2") and manager.has_plugin("Raising")
    observers = Observers(manager)
    observers.notify("evalkit_run_started", run="r1", total=3)
    observers.notify("evalkit_run_started", run="r2", total=4)
    assert seen == ["started 3", "started 3", "started 4", "started 4"]
    assert observers.failures == (
        'hook plugin "Raising" raised in evalkit_run_started (2 times; the first shown): ValueError: bad\\x0arun r1; '
        "the run went on without it",
    )


def test_no_failure_no_report() -> None:
    manager, _ = plugin_manager([Recorder([])])
    observers = Observers(manager)
    observers.notify("evalkit_run_finished", run=None)
    assert observers.failures == ()
