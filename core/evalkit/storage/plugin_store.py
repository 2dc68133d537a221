"""A third-party store as the kernel holds it: :class:`PluginStore`, the adapter
:func:`evalkit.storage.open_repository` hands back for a store an ``evalkit.repositories`` plugin
made, and :func:`plugin_store_failure`, which tells that store's own failure from anything else.

The adapter checks what the store gives back where the kernel would otherwise fail on it in an
internal error (a ``begin_run`` that returns ``None``, a ``get_run`` that returns a dict, a
``recent_runs`` that returns ``[{}]`` or a run whose ``started_at`` is text, a ``case_history``
whose outcomes are keyed by what is no case id, an ``iter_cases`` that yields what is no case, a
``case_usage`` row evalkit cannot sum), naming the plugin and the method; it offers exactly the optional capabilities (:mod:`.protocols`) the store offers, so
``capabilities(adapter)`` answers as ``capabilities(store)`` would. The store object itself is
never changed (a class with ``__slots__``, or a frozen one, is held to the same checks).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from ..plugin_attributes import declared, protocol_members
from .protocols import STORE_PROTOCOLS

__all__ = ["PluginStore", "plugin_store_failure", "store_failure_said", "unwrapped"]

#: The methods that give a run back (the base protocol's and the capabilities'), with whether
#: ``None`` is an answer.
_RUN_RETURNS = (
    ("begin_run", False), ("finish_run", False), ("get_run", True), ("latest_unfinished_run", True),
    ("latest_unfinished_retrieval_run", True), ("accepted_baseline", True), ("baseline_for", True),
)  # fmt: skip
#: The capabilities' methods that give back a list of runs (or of cases), with the class of an item
#: and whether ``None`` is an answer.
_LIST_RETURNS = (
    ("recent_runs", "Run", False), ("accepted_runs", "Run", False), ("quality_runs_for_provider_model", "Run", False),
    ("record_cases_as_stored", "CaseResult", True), ("case_history", "RunOutcomes", False),
)  # fmt: skip
#: The methods of the store protocols that give back an iterator, read after the method returned,
#: with the class of what it yields (``None``: a ``case_usage`` row, checked by its own rule).
_ITERATOR_RETURNS = (("iter_cases", "CaseResult"), ("paired_cases", "CasePair"), ("case_usage", None))
#: Every member of the base protocol and of each optional capability: what the adapter offers when
#: (and only when) the store offers it.
_MEMBERS = tuple(sorted({name for protocol in STORE_PROTOCOLS for name, _ in protocol_members(protocol)}))
_ABSENT = object()


class PluginStore:
    """A store an ``evalkit.repositories`` plugin made (``wrapped``), as the kernel talks to it:
    each method that gives back a run (``begin_run``, ``get_run``, ``recent_runs``… :data:`_RUN_RETURNS`,
    :data:`_LIST_RETURNS`) or yields cases (:data:`_ITERATOR_RETURNS`) refuses what is no
    :class:`~evalkit.runs.Run` (or case) whose every field holds what the class declares
    (:func:`~evalkit.storage.returned.value_problem`) as the store's failure naming the plugin,
    ``label`` (``repository "acme" (acme 1.0)``), the method and what it returned; every other member of
    the store protocols is the store's own (its bound method), present on the adapter only when
    the store has it, so an ``isinstance`` check against a capability answers for the store; what
    ``iter_cases``, ``paired_cases`` and ``case_usage`` give back is read through a frame of the
    store's (:func:`_pages_of`), so that a failure while it is read is told as the store's. Any
    other attribute is read from the store."""

    def __init__(self, wrapped: Any, label: str) -> None:
        """Hold ``wrapped``, the store ``label`` names, without changing it."""
        self.wrapped = wrapped
        self.label = label
        for name in _MEMBERS:
            value = declared(wrapped, name, _ABSENT)  # a property that raises is not offered (plugin_attributes.offers)
            if value is not _ABSENT:
                setattr(self, name, value)
        for name, none_too in _RUN_RETURNS:
            method = self.__dict__.get(name)
            if callable(method):
                setattr(self, name, _checked(method, name, none_too, label))
        for name, item, none_too in _LIST_RETURNS:
            method = self.__dict__.get(name)
            if callable(method):
                setattr(self, name, _checked_list(method, name, item, none_too, label))
        for name, item in _ITERATOR_RETURNS:
            method = self.__dict__.get(name)
            if callable(method):
                setattr(self, name, _read_through(method, wrapped, name, item, label))

    def __getattr__(self, name: str) -> Any:
        """An attribute of the store the protocols do not name (``url``, ``runs_started_before``)."""
        if name == "wrapped":  # not set yet (a copy being made): no store to ask
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    def __repr__(self) -> str:
        return f"PluginStore({self.wrapped!r}, {self.label!r})"


def _returned_class(name: str) -> type:
    """The evalkit class called ``name`` that a store method gives back (imported when a store is
    opened: the adapter's module is imported by every command)."""
    from ..runs import CaseResult, Run
    from .values import CasePair, RunOutcomes

    return {"Run": Run, "CaseResult": CaseResult, "CasePair": CasePair, "RunOutcomes": RunOutcomes}[name]


def _refused(label: str, said: str) -> Exception:
    """The store's failure ``said`` of it (``label`` names the plugin)."""
    from ..errors import StoreFailure

    return StoreFailure(f"{label}: {said}")


def _checked(method: Any, name: str, none_too: bool, label: str) -> Any:
    """``method`` (the store's ``name``), refusing a return that is no Run (``none_too``: or
    ``None``), or a Run a field of which is not what :class:`~evalkit.runs.Run` declares
    (:func:`~evalkit.storage.returned.value_problem`)."""
    from ..runs import Run
    from .returned import value_problem

    @functools.wraps(method)  # its signature is the store's (latest_unfinished_run_of reads such signatures)
    def checked(*args: Any, **kwargs: Any) -> Any:
        value = method(*args, **kwargs)
        if none_too and value is None:
            return value
        if (problem := value_problem(value, Run)) is None:
            return value
        if none_too and not isinstance(value, Run):
            problem += " or None"
        raise _refused(label, f"{name}() returned {problem}")

    return checked


def _checked_list(method: Any, name: str, item: str, none_too: bool, label: str) -> Any:
    """``method`` (the store's ``name``), refusing a return that is no list (``none_too``: or
    ``None``) of values of the evalkit class ``item`` each field of which holds what the class
    declares: a ``recent_runs`` that returned ``[{}]`` ended ``evalkit history`` in an internal error."""
    from .returned import value_problem

    cls = _returned_class(item)

    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Any:
        from ..shapes import short_repr

        value = method(*args, **kwargs)
        if none_too and value is None:
            return value
        if not isinstance(value, (list, tuple)):
            wanted = f"a list of evalkit {item}s" + (" or None" if none_too else "")
            raise _refused(label, f"{name}() returned {type(value).__name__} {short_repr(value)}, not {wanted}")
        for index, each in enumerate(value):
            if (problem := value_problem(each, cls)) is not None:
                raise _refused(label, f"{name}() returned, as its item {index}, {problem}")
        return value

    return checked


def _read_through(method: Any, store: Any, name: str, item: str | None, label: str) -> Any:
    """``method`` (one of the store's :data:`_ITERATOR_RETURNS`), its iterator read through
    :func:`_pages_of`: what is raised while it is read (its client's cursor losing the connection
    after the first page) passed through no frame of the store once the method had returned, and
    was said as evalkit's internal error, exit 2; now :func:`_through` finds the store in it. Each
    value it yields is checked to be an ``item`` (when named) as :func:`_checked_list` checks one;
    a ``case_usage`` row by its own rule (:func:`_usage_rows`)."""
    cls = None if item is None else _returned_class(item)

    @functools.wraps(method)
    def read(*args: Any, **kwargs: Any) -> Any:
        pages = _pages_of(store, method(*args, **kwargs))
        if cls is None:
            return _usage_rows(pages, name, label)
        return _each_checked(pages, cls, name, label)

    return read


def _usage_rows(rows: Any, name: str, label: str) -> Any:
    """``rows`` (``case_usage``'s), each a :class:`~evalkit.storage.values.CaseUsage`, refused as
    the store's failure when it is not a row evalkit can sum (:func:`~evalkit.storage.returned.usage_row_problem`):
    a row of three values or a count that is text ended ``evalkit run`` in an internal error, a
    negative, huge or NaN count was summed into the run's spend and its limits."""
    from ..costs import CaseUsage
    from .returned import usage_row_problem

    for index, row in enumerate(rows):
        if (problem := usage_row_problem(row)) is not None:
            raise _refused(label, f"{name}() gave, as its row {index}, {problem}")
        yield CaseUsage.of(row)


def _each_checked(values: Any, cls: type, name: str, label: str) -> Any:
    """``values``, each refused as the store's failure when it is no ``cls`` as declared."""
    from .returned import value_problem

    for index, value in enumerate(values):
        if (problem := value_problem(value, cls)) is not None:
            raise _refused(label, f"{name}() gave, as its item {index}, {problem}")
        yield value


def _pages_of(store: Any, iterable: Any) -> Any:
    """``iterable``, which ``store`` returned, read through a frame whose first argument is
    ``store``: what reading it raises passed through that store (:func:`_through`)."""
    yield from iterable


def unwrapped(repository: Any) -> Any:
    """The store a :class:`PluginStore` holds; any other repository as it is."""
    return repository.wrapped if isinstance(repository, PluginStore) else repository


def _through(exc: BaseException, store: Any) -> bool:
    """Whether ``exc`` was raised in or through a method of the object ``store`` itself, or while an
    iterator one of them returned was read (a frame of its traceback whose first argument —
    ``self``, or :func:`_pages_of`'s ``store`` — is ``store``): the store's own failure, where an
    error from elsewhere in its package (another of its plugins, a second store) is not."""
    frame = exc.__traceback__
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_argcount and frame.tb_frame.f_locals.get(code.co_varnames[0]) is store:
            return True
        frame = frame.tb_next
    return False


def plugin_store_failure(exc: BaseException, stores: Sequence[object]) -> Any:
    """``exc`` as the :class:`~evalkit.errors.StoreFailure` of a third-party store — one of
    ``stores``, the stores (or their :class:`PluginStore` adapters) the caller opened — when it was
    raised in or through that store object's methods (an ``OSError`` from its full disk, its
    client's lost connection), naming the store's class; ``None`` for anything else (an evalkit bug
    stays one; so does what another plugin of the store's package, or another store, raised).
    Only evalkit's own stores turn their errors into ``StoreFailure`` themselves: a plugin's that
    raised while ``evalkit show``, ``compare`` or ``report`` read it was said as evalkit's
    internal error, with a traceback."""
    from ..errors import StoreFailure
    from ..shapes import exception_text

    for opened in stores:
        store = unwrapped(opened)
        kind = type(store)
        if kind.__module__.partition(".")[0] == "evalkit":
            continue
        if _through(exc, store):
            return StoreFailure(f"{kind.__module__}.{kind.__qualname__} raised {exception_text(exc)}")
    return None


def store_failure_said(exc: Exception, stores: Sequence[object]) -> Exception:
    """``exc``, or — raised in or through the methods of one of the third-party ``stores``
    (:func:`plugin_store_failure`) — that store's failure as the built-in stores' are said
    (:class:`~evalkit.errors.StoreUnavailable`: exit 3, no traceback unless ``--traceback``), with
    ``exc`` as its cause. An :class:`~evalkit.errors.EvalkitError` is given back as it is."""
    from ..errors import EvalkitError, StoreUnavailable

    if isinstance(exc, EvalkitError):
        return exc
    failure = plugin_store_failure(exc, stores)
    if failure is None:
        return exc
    said = StoreUnavailable(f"the results store failed: {failure}")
    said.__cause__ = exc  # --traceback shows where the store raised
    return said
