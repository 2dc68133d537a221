"""Observer hooks: each implementation is called on its own, one that raises is reported once."""

from __future__ import annotations

from evalkit import AssertionKind, hookimpl
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


class _Kinds:
    def __init__(self, returned: object) -> None:
        self.returned = returned

    @hookimpl
    def evalkit_assertion_kinds(self) -> object:
        if isinstance(self.returned, BaseException):
            raise self.returned
        return self.returned


def test_a_kinds_hook_that_raises_or_gives_no_kind_is_the_plugins_error_naming_it() -> None:
    """It was an internal error ("an evalkit bug") with a traceback, naming no plugin, the
    plugin's message printed as it was; an item that is no AssertionKind was dropped unsaid."""
    import pytest
    from evalkit.errors import PluginError
    from evalkit.hooks import assertion_kinds

    raising, _ = plugin_manager([_Kinds(RuntimeError("down\nevalkit: error: forged"))])
    with pytest.raises(PluginError) as refused:
        assertion_kinds(raising)
    assert str(refused.value) == 'hook plugin "_Kinds" raised in evalkit_assertion_kinds(): RuntimeError: down\\x0aevalkit: error: forged'
    for returned, said in ((5, "raised in evalkit_assertion_kinds(): TypeError: 'int' object is not iterable"),
                           ([AssertionKind("shout", lambda value, answer: True), "x"],
                            "returned str 'x' from evalkit_assertion_kinds(), not an evalkit.AssertionKind")):  # fmt: skip
        manager, _ = plugin_manager([_Kinds(returned)])
        with pytest.raises(PluginError) as refused:
            assertion_kinds(manager)
        assert str(refused.value) == f'hook plugin "_Kinds" {said}'


def test_a_kinds_hook_taking_a_built_in_name_is_warned_about_and_the_built_in_kept() -> None:
    """The hook's documentation promised a warning; the kind was ignored without one."""
    import pytest
    from evalkit.checks import BUILTIN_KINDS
    from evalkit.errors import EvalkitWarning
    from evalkit.hooks import assertion_kinds

    manager, _ = plugin_manager([_Kinds([AssertionKind("contains", lambda value, answer: True)])])
    with pytest.warns(EvalkitWarning, match='^hook plugin "_Kinds" adds the assertion kind "contains", which is built in'):
        kinds = assertion_kinds(manager)
    assert kinds["contains"] is BUILTIN_KINDS["contains"]
