"""The adapter a third-party store is held in (evalkit.storage.plugin_store.PluginStore): it checks
what the store gives back, offers exactly the capabilities the store offers, and never changes
the store."""

from __future__ import annotations

import inspect

import pytest
from evalkit.errors import StoreFailure
from evalkit.storage import PluginStore, capabilities, plugin_store_failure, unwrapped
from evalkit.storage.protocols import STORE_PROTOCOLS, latest_unfinished_run_of

LABEL = 'repository "slotted" (acme-store 1.0)'


class SlottedStore:
    """A store with ``__slots__``: the base protocol, :class:`~evalkit.storage.ResumableRuns`
    (its ``latest_unfinished_run`` written before ``adapter`` was asked for) and ``close``."""

    __slots__ = ("calls", "url")

    def __init__(self, url: str) -> None:
        self.url = url
        self.calls: list[tuple] = []

    def begin_run(self, run):
        return None

    def record_cases(self, run_id, cases, privacy):
        self.calls.append(("record_cases", run_id))

    def finish_run(self, run_id, status, finished_at, **what):
        return {"id": run_id}

    def get_run(self, run_id, with_cases=True):
        if run_id == "gone":
            raise OSError(5, "Input/output error", self.url)
        return None

    def answered_case_ids(self, run_id):
        return set()

    def mark_status(self, run_id, status):
        self.calls.append(("mark_status", run_id, status))

    def latest_unfinished_run(self, set_identifier, provider_instance, model_alias, grader):
        self.calls.append(("latest_unfinished_run", set_identifier))

    def latest_unfinished_retrieval_run(self, set_identifier, retriever, *, deployment=None):
        return None

    def close(self):
        self.calls.append(("close",))


def test_the_adapter_offers_exactly_what_the_store_offers() -> None:
    """Every protocol the kernel asks a store about is answered for the store, not for the
    adapter: a capability the store lacks is not offered because the adapter forwards attributes."""
    store = SlottedStore("slotted:///x")
    held = PluginStore(store, LABEL)
    for protocol in STORE_PROTOCOLS:
        assert isinstance(held, protocol) == isinstance(store, protocol), protocol.__name__
    offered = capabilities(held)
    assert offered.repository is held and offered.resumable is held
    assert (offered.baselines, offered.history, offered.leases, offered.streamed, offered.cache) == (None,) * 5
    assert held.url == "slotted:///x" and unwrapped(held) is store and unwrapped(store) is store


def test_the_adapter_checks_the_runs_a_slotted_store_gives_back_naming_the_plugin() -> None:
    store = SlottedStore("slotted:///x")
    held = PluginStore(store, LABEL)
    with pytest.raises(StoreFailure) as began:
        held.begin_run(object())
    assert str(began.value) == f"{LABEL}: begin_run() returned NoneType None, not an evalkit Run"
    with pytest.raises(StoreFailure) as finished:
        held.finish_run("r-1", "complete", 1.0)
    assert str(finished.value) == f"{LABEL}: finish_run() returned dict {{'id': 'r-1'}}, not an evalkit Run"
    assert held.get_run("r-1") is None  # None is get_run's answer for a run not stored
    held.record_cases("r-1", [], "metadata")
    held.close()
    assert store.calls == [("record_cases", "r-1"), ("close",)]


def test_the_adapter_keeps_the_stores_signatures() -> None:
    """A store whose ``latest_unfinished_run`` takes no ``adapter`` is asked without it through the
    adapter too (a forwarding ``*args, **kwargs`` would have passed it and failed)."""
    store = SlottedStore("slotted:///x")
    held = PluginStore(store, LABEL)
    assert inspect.signature(held.latest_unfinished_run) == inspect.signature(store.latest_unfinished_run)
    assert inspect.signature(held.get_run) == inspect.signature(store.get_run)
    assert latest_unfinished_run_of(held, "pkg.set", "prod", "gpt", "deterministic", "reference") is None
    assert store.calls == [("latest_unfinished_run", "pkg.set")]


def test_a_failure_through_the_held_store_is_its_own_given_the_adapter() -> None:
    store = SlottedStore("slotted:///x")
    held, other = PluginStore(store, LABEL), PluginStore(SlottedStore("slotted:///y"), LABEL)
    with pytest.raises(OSError) as raised:
        held.get_run("gone")
    failure = plugin_store_failure(raised.value, (held,))
    assert failure is not None and str(failure).startswith(f"{__name__}.SlottedStore raised OSError: [Errno 5]"), (
        failure
    )
    assert plugin_store_failure(raised.value, (store,)) is not None
    assert plugin_store_failure(raised.value, (other,)) is None
    assert plugin_store_failure(raised.value, ()) is None  # no store named: no list of opened stores is kept


def test_an_evalkit_function_handed_the_store_is_not_taken_for_the_stores_method() -> None:
    """The kernel is handed the adapter: a function of its own that takes the repository first
    (``counted_so_far(repository, run)``) and fails is evalkit's failure, where, handed the store
    itself, its frame read as one of the store's methods (``evalkit show`` blamed the store for
    evalkit's ``AttributeError``)."""

    def kernel_function(repository: object) -> None:
        raise AttributeError("'dict' object has no attribute 'never_ended'")

    held = PluginStore(SlottedStore("slotted:///x"), LABEL)
    with pytest.raises(AttributeError) as raised:
        kernel_function(held)
    assert plugin_store_failure(raised.value, (held,)) is None
