"""The exceptions evalkit raises, and the exit code each maps to at the CLI.

::

    EvalkitError                      root; exit 2 unless a subclass says otherwise
    ├── UsageError                    a bad option value, an unknown name (exit 2)
    │   ├── UnknownSetError           with the identifiers that do exist
    │   ├── UnknownPluginError        unknown grader/generator/retriever, with the known ones
    │   ├── UnknownRunError           no stored run has the id given
    │   ├── UnknownKeywordError       a library call's keyword it does not take (a TypeError too)
    │   └── ToleranceError            a --max-*-drop that is not a finite number in 0..1
    ├── ConfigError                   evalkit.toml / [tool.evalkit] is unreadable or wrong (exit 2)
    ├── SetValidationError            a golden set breaks a rule; ``problems`` lists them, up to 1,000 (exit 2)
    ├── PluginError                   a plugin failed to import, raised, or broke its contract (exit 2)
    │   └── DuplicateSetError         two distributions ship one set identifier
    ├── GenerationError               the system under test failed for one case (stored as errored)
    │   └── RequestRejected           the endpoint refused a field of the request (not retried)
    ├── RetrievalError                a retriever failed or returned garbage for one question
    ├── RunInterrupted                Ctrl-C (or a plugin's BaseException): finished cases kept, resumable (exit 3)
    ├── RunNotFinished                waited for a run's shards until the time limit, or no process answers it (exit 3)
    ├── RunStoreFailed                the store failed mid-run: committed cases kept, resumable (exit 3)
    ├── RunInternalError              evalkit's own bug stopped a stored run: marked interrupted, resumable (exit 3)
    ├── AlarmHeld                     a library caller's callback set SIGALRM while evalkit's limits held it (exit 3)
    ├── GraderUnavailableError        a judge cannot be reached before the run (exit 2, nothing stored)
    ├── GeneratorUnavailableError     the endpoint under test refuses or cannot be reached before the run (exit 2)
    └── StorageError                  the results store cannot be used (exit 2)
        ├── SchemaOutOfDateError      the database needs ``evalkit db upgrade``
        └── StoreFailure              the store failed while in use (disk full, locked, connection lost)

``PluginRaised`` (an ``Exception``, no ``EvalkitError``) carries what a plugin raised that is no
``Exception``, or ``StopIteration``, out of the call (:func:`carried`), so that it is handled as
the plugin's failure like any exception.

``EvalkitWarning`` (a ``UserWarning``) is what the library warns with (``warnings.warn``): a
library caller's filters decide what becomes of it, and the CLI says it on stderr as
``evalkit: warning: …`` (:func:`evalkit.cli.main`).

``evalkit.leases`` adds two ``UsageError`` subclasses: ``RunBusyError`` (another live process is
answering the run) and ``ShardMismatchError`` (a shard gives another N than the run's shards).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from typing import Any

from .awaitables import NEVER_AWAITABLE, AwaitableReturned, unawaited_fault
from .problem_texts import bounded_problem, bounded_problems, problem_total
from .wording import counted, quoted

__all__ = [
    "PLUGIN_FAILURES",
    "EndpointRefused",
    "AlarmHeld",
    "HostAlarm",
    "TimeLimitExceeded",
    "PluginRaised",
    "PluginCallAbandoned",
    "carried",
    "carried_async",
    "ConfigError",
    "DuplicateSetError",
    "EvalkitError",
    "EvalkitWarning",
    "GenerationError",
    "GeneratorUnavailableError",
    "GraderUnavailableError",
    "OutputFailed",
    "PluginError",
    "PluginLoadInterrupted",
    "CalibrationFailed",
    "PairwiseJudgingFailed",
    "RequestRejected",
    "SetTooLarge",
    "RetrievalError",
    "RunInternalError",
    "RunInterrupted",
    "RunNotFinished",
    "RunTakenOver",
    "RunStoreFailed",
    "SchemaOutOfDateError",
    "SetValidationError",
    "StorageError",
    "StoreFailure",
    "StoreUnavailable",
    "ToleranceError",
    "UnknownKeywordError",
    "UnknownPluginError",
    "UnknownRunError",
    "UnknownSetError",
    "UsageError",
    "WRITE_FAULT_ERRNOS",
    "write_failed",
]


#: What a call into a plugin may raise that evalkit turns into that plugin's failure (its case
#: errored, its grading failed, its set refused, the plugin named): any error, and ``SystemExit``.
#: A library that "exits" on an error would otherwise end ``evalkit run`` with its code, 0
#: included, and pass a CI gate with the run half done. ``KeyboardInterrupt`` still stops evalkit.
PLUGIN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)


class PluginRaised(Exception):
    """What a plugin raised that the code around the call could not take as it is, carried as an
    :class:`Exception` (so every ``except PLUGIN_FAILURES`` takes it as that plugin's failure):
    ``StopIteration`` (asyncio refuses to carry it from a thread into a future, which then never
    resolved) and a ``BaseException`` that is no ``Exception`` — ``GeneratorExit``,
    ``asyncio.CancelledError`` no one asked for, a framework's own (pytest's ``skip()``). Made by
    :func:`carried` and :func:`carried_async`; ``raised`` is the original, and
    :func:`evalkit.shapes.exception_text` names it, not this class."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__()
        self.raised = raised

    def __str__(self) -> str:
        return str(self.raised)


class PluginCallAbandoned(TimeoutError):
    """A plugin's call outside a case (a factory, a set provider's hook) outlived its limit and was
    abandoned (:func:`evalkit.bounded.plugin_call_within`): the message says which call, the limit
    and what set it. Here, not beside the bounded calls, so a module that catches it imports no
    thread pool."""


class TimeLimitExceeded(BaseException):
    """Raised into a call that outlived its time limit (see
    :func:`~evalkit.timeouts.alarm_bounded`). Not an :class:`Exception`, so the call's own
    ``except Exception`` cannot swallow it."""


#: Who set a wrapped handler, as :class:`HostAlarm`'s ``by`` says it.
HOSTS_OWN = "the host's own SIGALRM handler"
SET_UNTOLD = (
    "a SIGALRM handler set outside the caller's callbacks (the host's or a plugin's: evalkit cannot tell which)"
)


class HostAlarm(BaseException):
    """What the host program's own ``SIGALRM`` handler raised while evalkit ran (see
    :func:`~evalkit.timeouts.host_alarms`): ``cause``, carried past every boundary that isolates a
    plugin's failure, so a host's time limit is never blamed on the plugin that happened to be
    running. ``by`` says whose handler it was: :data:`HOSTS_OWN`, or :data:`SET_UNTOLD` when evalkit cannot tell."""

    def __init__(self, cause: BaseException, by: str = HOSTS_OWN) -> None:
        super().__init__(cause)
        self.cause = cause
        self.by = by


def _carries(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a plugin call, is carried as :class:`PluginRaised`: not an error
    handled as it is, nor an interrupt of evalkit's own (Ctrl-C or SIGTERM as ``KeyboardInterrupt``,
    a time limit as :class:`TimeLimitExceeded`, the host program's own alarm as
    :class:`HostAlarm`)."""
    if isinstance(exc, StopIteration):
        return True
    return not isinstance(exc, (*PLUGIN_FAILURES, KeyboardInterrupt, TimeLimitExceeded, HostAlarm))


#: The exit status of a forked child ended by :func:`ended_if_forked`.
FORKED_CHILD_EXIT = 70


def ended_if_forked(pid: int, method: str | None, call: Any = None) -> None:
    """End this process at once (``os._exit``) when it is not ``pid``, the process a plugin call
    began in: the plugin forked and its child returned (or raised) into evalkit, which would
    otherwise go on running the whole command a second time — answering, storing, printing, and
    holding the caller's pipes open after the real process has exited. The child says so on its
    standard error, naming ``method`` only when it is a plain identifier (a plugin's own text is
    never printed from here), and skips every ``atexit`` handler and buffered output it inherited.
    A child that calls ``exec`` or ends itself (``multiprocessing``, ``subprocess``) never gets here.
    Without ``method``, ``call``'s ``__name__``: looked up only in such a child."""
    if os.getpid() == pid:
        return
    method = method or getattr(call, "__name__", None)
    said = method if isinstance(method, str) and method.isidentifier() else "a plugin call"
    note = (
        f"evalkit: error: {said} returned in a process its plugin forked (pid {os.getpid()}); "
        "that process is ended here, and the run goes on in the process that started it\n"
    )
    try:
        os.write(2, note.encode("ascii", "backslashreplace"))
    except OSError:
        pass
    os._exit(FORKED_CHILD_EXIT)


def carried(call: Any, *args: Any, method: str | None = None, awaits: bool = False) -> Any:
    """``call(*args)``, a plugin's synchronous call; what it raises as it is, except what
    :class:`PluginRaised` carries. An awaitable it returns (an ``async def`` under a synchronous
    name) is refused as a ``TypeError`` raised by the call, naming ``method`` (``call``'s own name
    when not given) and what to write instead (:func:`evalkit.awaitables.unawaited_fault`), unless
    the caller ``awaits`` what it returns. A call that returns or raises in a child process the
    plugin forked ends that child (:func:`ended_if_forked`)."""
    pid = os.getpid()
    try:
        returned = call(*args)
    except BaseException as exc:
        ended_if_forked(pid, method, call)
        if _carries(exc):
            raise PluginRaised(exc) from exc
        raise
    ended_if_forked(pid, method, call)
    if not awaits and type(returned) not in NEVER_AWAITABLE:  # the common values, told apart at once
        name = getattr(call, "__name__", None) if method is None else method
        fault = unawaited_fault(returned, name if isinstance(name, str) and name.isidentifier() else None)
        if fault is not None:
            raise AwaitableReturned(fault)
    return returned


async def carried_async(awaitable: Any, method: str | None = None) -> Any:
    """``await awaitable``, a plugin's coroutine; what it raises as it is, except what
    :class:`PluginRaised` carries. A ``CancelledError`` is carried only when no one asked to
    cancel the awaiting task (a time limit's or Ctrl-C's cancellation goes on as it is). A value
    that is itself awaitable (an ``async def agenerate`` that returned another coroutine
    unawaited) is refused as :class:`~evalkit.awaitables.AwaitableReturned`, naming ``method``
    (the coroutine's own name when not given), its coroutine closed: it was taken as the value. A
    coroutine that resumes in a child process the plugin forked ends that child
    (:func:`ended_if_forked`)."""
    import asyncio

    pid = os.getpid()
    try:
        try:
            returned = await awaitable
        finally:
            ended_if_forked(pid, method)
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        raise PluginRaised(exc) from exc
    except BaseException as exc:
        if _carries(exc):
            raise PluginRaised(exc) from exc
        raise
    if method is None:
        code = getattr(awaitable, "cr_code", None)
        method = getattr(code, "co_name", None)
    fault = unawaited_fault(returned, method if isinstance(method, str) and method.isidentifier() else None, awaited=True)
    if fault is not None:
        raise AwaitableReturned(fault)
    return returned


class EvalkitWarning(UserWarning):
    """What evalkit warns a caller of (``warnings.warn``) about something that does not stop it:
    a library caller's warning filters decide whether and how it is shown (or made an error), and
    the CLI says each one on standard error as ``evalkit: warning: …`` (:func:`evalkit.cli.main`).
    Never printed by the library itself."""


class EvalkitError(Exception):
    """Root of every error evalkit raises on purpose."""

    exit_code = 2


class UsageError(EvalkitError, ValueError):
    """A command was called with a value it cannot use."""


class UnknownSetError(UsageError, LookupError):
    """No installed provider ships a set with this identifier."""

    def __init__(
        self,
        identifier: str,
        available: Sequence[str],
        kind: str = "golden prompt set",
        failures: Sequence[str] = (),
        notes: Sequence[str] = (),
    ) -> None:
        self.identifier = identifier
        self.available = tuple(available)
        from .wording import did_you_mean

        # "No sets are installed" after `evalkit judge calibrate --set starter.faq` denied the golden
        # set it had just run: what is missing is a set of this kind
        hint = f" Available sets: {', '.join(self.available)}." if self.available else f" No {kind}s are installed."
        failed = "".join(f"\n  provider failed: {f}" for f in failures)
        told = "".join(f" {note}" for note in notes)  # why it may be unknown: a path given, a provider switched off
        super().__init__(
            f"Unknown {kind} {quoted(identifier)}.{did_you_mean(identifier, self.available)}{hint}{told}{failed}"
        )


class UnknownPluginError(UsageError, LookupError):
    """No plugin of this name is registered in the group."""

    def __init__(self, kind: str, name: str, available: Sequence[str], note: str = "") -> None:
        """``note``: a sentence on why it may be unknown (a plugin of that name switched off)."""
        self.kind = kind
        self.name = name
        self.available = tuple(available)
        from .wording import did_you_mean, listed

        known = listed(self.available, "(none installed)")
        kinds = "repositories" if kind == "repository" else f"{kind}s"
        hint = did_you_mean(
            name, [a.split(" (", 1)[0] for a in self.available]
        )  # "NAME (configured)", "NAME (built in)"
        told = f" {note}" if note else ""
        super().__init__(f"Unknown {kind} {quoted(name)}.{hint} Available {kinds}: {known}.{told}")


class UnknownRunError(UsageError, LookupError):
    """No stored run has this id (of this set, when ``of_set`` is given); ``option`` is the one
    that named it (``--baseline``), if any. The one wording of every command that looks a run up."""

    def __init__(self, run_id: str, *, option: str | None = None, of_set: str | None = None, hint: str = "") -> None:
        """``hint``: a "did you mean" naming stored runs close to ``run_id``, if any."""
        self.run_id = run_id
        told = f"{option}: " if option else ""
        of = f" of set {quoted(of_set)}" if of_set is not None else ""
        super().__init__(
            f"{told}there is no run {quoted(run_id)}{of} in the store (see `evalkit history SET` for run ids){'.' + hint if hint else ''}"
        )


class UnknownKeywordError(UsageError, TypeError):
    """A library call was given a keyword it does not take (``evaluate_set(concurency=4)``); a
    ``TypeError`` too, as Python's own refusal of an unexpected keyword is."""


class ToleranceError(UsageError):
    """A tolerance option is not a finite number in 0..1."""

    def __init__(self, option: str, raw: object, hint: str = "") -> None:
        self.option = option
        self.raw = raw
        super().__init__(f'Option "--{option}" must be a finite number in 0..1 (got {raw!r}){hint}.')


class ConfigError(EvalkitError):
    """The configuration file cannot be read or says something impossible."""


class SetTooLarge(EvalkitError):
    """A set holds more prompts than evalkit takes in one set (:data:`evalkit.prompts.MAX_PROMPTS`):
    raised by a :class:`~evalkit.PromptStream`'s pass at the prompt past the limit, so a producer that
    never ends stops there instead of being followed for ever."""


#: How many of its problems a :class:`SetValidationError`'s message quotes.
PROBLEMS_IN_MESSAGE = 5


class SetValidationError(EvalkitError):
    """A golden set breaks one or more rules; every problem names the set, prompt and field.

    Each problem is cut to :data:`~evalkit.problem_texts.MAX_PROBLEM_CHARS` (it may quote a plugin's text:
    a validator's issue, a stream producer's exception, or a provider raising this error itself),
    and past :data:`~evalkit.problem_texts.MAX_PROBLEMS_KEPT` of them the first are kept with a last line
    saying how many more there were (:func:`~evalkit.problem_texts.bounded_problems`). Its message
    (``str(error)``) quotes the first :data:`PROBLEMS_IN_MESSAGE` and says how many more there are
    (``…; and 4,999,995 more problems``): a library caller printing the error gets a few lines,
    not a thousand problems of up to 12,000 characters joined; ``problems`` holds the list kept."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = bounded_problems(problems)
        quoted = self.problems[:PROBLEMS_IN_MESSAGE]
        _, more, exact = problem_total(self.problems[PROBLEMS_IN_MESSAGE:])
        rest = (
            f"; and {'' if exact else 'at least '}{more:,} more problem{'' if more == 1 and exact else 's'}"
            if more
            else ""
        )
        super().__init__("; ".join(quoted) + rest)


class PluginError(EvalkitError):
    """A plugin failed to import, raised while loading, or broke its contract.

    The message is cut to :data:`~evalkit.problem_texts.MAX_PROBLEM_CHARS`: it quotes what the plugin
    raised (a plugin may also raise this error itself, with any text)."""

    def __init__(self, message: str, *, group: str = "", name: str = "", distribution: str = "") -> None:
        self.group = group
        self.name = name
        self.distribution = distribution
        super().__init__(bounded_problem(message))

    @classmethod
    def for_plugin(cls, record: Any, message: str) -> PluginError:
        """The error for the plugin an entry-point ``record`` (a ``PluginRecord``) names."""
        return cls(message, group=record.group, name=record.name, distribution=record.distribution)


class OptionsDeclarationError(PluginError):
    """A plugin declares options no configuration can satisfy: an ``Options`` that is not an attrs
    class, or a default its own validator refuses (:func:`evalkit.options.declaration_problem`).
    A defect of the plugin, never of the user's table (exit 2, nothing built)."""


class PluginLoadInterrupted(KeyboardInterrupt):
    """A ``KeyboardInterrupt`` while a plugin's module was imported: Ctrl-C (or SIGTERM) during a
    slow import, or one the module raised itself — evalkit cannot tell them apart, so it is still
    an interrupt (exit 3, no run stored or one marked interrupted), but it names the plugin being
    loaded (``who``: ``generator NAME (DISTRIBUTION VERSION)``) instead of reading as the user's
    Ctrl-C alone. Raised by :meth:`evalkit.registry.PluginRecord.load`."""

    def __init__(self, who: str) -> None:
        super().__init__(who)
        self.who = who

    def __str__(self) -> str:
        return f"interrupted while loading {self.who} (Ctrl-C, or a KeyboardInterrupt its module raised at import)"


class DuplicateSetError(PluginError):
    """Two providers ship a set with the same identifier."""


class GenerationError(EvalkitError):
    """The system under test failed to answer one prompt; the case is stored as errored."""

    exit_code = 3


class EndpointRefused(GenerationError):
    """The endpoint refused the connection (nothing listens at its address yet): a readiness probe
    raises it so the kernel can say that a server still starting is waited for with
    ``--wait-ready`` (:func:`evalkit.components.check_generator_ready`)."""


class CalibrationFailed(EvalkitError):
    """A judge's calibration could not complete (it labelled no item, reported no model, changed
    model on the way); nothing is stored."""

    exit_code = 3


class PairwiseJudgingFailed(EvalkitError):
    """A pairwise judge could not be asked about every case (its endpoint is unreachable or
    failed); no figure is reported."""

    exit_code = 3


class RequestRejected(GenerationError):
    """The endpoint refused the request because of one of its fields (an unsupported
    ``response_format``, a ``temperature`` out of range…); asking again cannot help.

    ``field`` names the request field the endpoint's error names (``None`` when it names none);
    a caller that can ask differently — a judge negotiating structured output — uses it to change
    the request instead of failing.
    """

    def __init__(self, message: str, *, field: str | None = None, status: int | None = None) -> None:
        self.field = field
        self.status = status
        super().__init__(message)


class RetrievalError(EvalkitError):
    """A retriever failed or returned something that is not a ranked list of ids."""

    exit_code = 3


def _resume_command(set_identifier: str, run_id: str, command: str | None) -> str:
    """``command``, else the plain command that resumes a prompt run."""
    return command or f"evalkit run {set_identifier} --resume {run_id}"


def _kept_cases(kept: int | None, before: str, unknown: str) -> str:
    """``3 cases committed before {before} are kept``, or ``unknown`` when the count is not known."""
    return (
        unknown
        if kept is None
        else f"{counted(kept, 'case')} committed before {before} {'is' if kept == 1 else 'are'} kept"
    )


#: What a run-stopping error says of a run whose lease this process never took.
_NOT_HELD = "its status is left as it is: this process never took its lease (another process may be answering it)"
#: What a failing store's error says of such a run that no process answers (a plain ``--resume``
#: whose ``begin_run`` failed): nothing of it was changed, and the command is simply run again.
_NOT_TAKEN_UP = "its status is left as it is (the store failed before this process took the run up)"


class RunInterrupted(EvalkitError):
    """The run was interrupted (Ctrl-C, or ``cause``: what stopped it); its finished cases are
    stored and it can be resumed."""

    exit_code = 3

    def __init__(
        self, run_id: str, set_identifier: str, *, command: str | None = None, cause: str | None = None
    ) -> None:
        self.run_id = run_id
        self.set_identifier = set_identifier
        self.cause = cause
        resume = _resume_command(set_identifier, run_id, command)
        why = f" by {cause}" if cause else ""
        super().__init__(f"interrupted{why}: run {run_id} keeps its finished cases; continue it with `{resume}`")


class AlarmHeld(EvalkitError, RuntimeError):
    """A library caller's own callback (``on_case``, ``on_stored``, ``on_check``) called
    ``signal.signal(SIGALRM, …)``, ``signal.setitimer(ITIMER_REAL, …)`` or ``signal.alarm()`` while
    evalkit's time limits hold ``SIGALRM`` (while a run answers): not applied, and raised in the
    callback rather than leaving the caller's own time limit quietly off. The run stops, marked
    interrupted, as for any callback that raises (:mod:`evalkit.timeouts`)."""

    exit_code = 3


class SetChangedError(EvalkitError):
    """A set's prompts were not the same when the run answered them as when it checked and
    fingerprinted them (a :class:`~evalkit.PromptStream` that yields other prompts on another
    pass): the run stops, is marked ``interrupted`` and is never compared."""

    exit_code = 3


class RunTakenOver(EvalkitError):
    """Another process took over the lease this process held on a run (or a shard of it): its
    heartbeat went unrenewed past the stale limit (the process was suspended, or the store held its
    lock that long). This process stops answering and leaves the run, and its status, to the other."""

    exit_code = 3

    def __init__(self, run_id: str, part: str, stale_after: float) -> None:
        self.run_id = run_id
        what = "the whole run" if part == "*" else f"shard {part}"
        super().__init__(
            f"another process took over run {run_id} ({what}): this process's lease on it went {stale_after:.0f} s "
            "without a heartbeat (the process was suspended, or the store held its lock that long); this process "
            "stops answering it and leaves the run to that process (the cases it committed are kept)"
        )


class RunNotFinished(EvalkitError):
    """A run's shards were not all in (or its verdict not recorded) when the wait ran out, or no
    process answers the run any more (its leases went stale: it was killed)."""

    exit_code = 3


class RunStoreFailed(EvalkitError):
    """The results store failed during a run: the cases committed before the fault are kept, and
    the run is marked ``interrupted`` when the store still answers (``can_mark``: the store keeps
    that status at all, :class:`~evalkit.storage.ResumableRuns`); it can be resumed. ``complete``:
    the fault came after the run was stored complete (its verdict being recorded), which it stays:
    nothing is left to resume, and its verdict may not be recorded. ``held``: this process took
    the run's lease; when it did not (a shard joining a run whose lease it could not take), the run
    is another process's and its status is left as it is; ``elsewhere``: another process may be
    answering it (a live lease of it; true when not known) — when none does (a resume whose
    ``begin_run`` failed), the command is to be run again once the store works."""

    exit_code = 3

    def __init__(
        self,
        run_id: str,
        set_identifier: str,
        cause: str,
        *,
        kept: int | None,
        marked: bool,
        resumable: bool = True,
        command: str | None = None,
        complete: bool = False,
        can_mark: bool = True,
        held: bool = True,
        elsewhere: bool = True,
    ) -> None:
        self.run_id = run_id
        self.set_identifier = set_identifier
        self.cause = cause
        self.kept = kept
        self.marked = marked
        self.can_mark = can_mark
        self.held = held
        self.elsewhere = elsewhere
        self.resumable = resumable and not complete
        self.complete = complete
        if complete:
            super().__init__(
                f"the results store failed after run {run_id} was stored complete: {cause} — its cases are kept; "
                f"its verdict may not be recorded (`evalkit show {run_id}` says)"
            )
            return
        kept_text = _kept_cases(kept, "the fault", "the cases committed before the fault are kept")
        if marked:
            state = "the run is marked interrupted"
        elif not held:
            state = _NOT_HELD if elsewhere else _NOT_TAKEN_UP
        elif can_mark:
            state = "the run could not be marked interrupted (the store does not answer)"
        else:  # a store without ResumableRuns keeps no status it could be asked to change
            state = "the run could not be marked interrupted (the store cannot record that status)"
        resume = ""
        if resumable and not held and not elsewhere:
            resume = f"; once the store works, run `{_resume_command(set_identifier, run_id, command)}` again"
        elif resumable:
            resume = f"; continue it with `{_resume_command(set_identifier, run_id, command)}`"
        super().__init__(f"the results store failed during run {run_id}: {cause} — {kept_text}, {state}{resume}")


class RunInternalError(EvalkitError):
    """An unexpected exception — evalkit's own bug — stopped a run after the run was created in the
    store: its committed cases are kept and it is marked ``interrupted`` (when the store can say
    so), so it can be resumed; ``status`` is the run's stored status afterwards (``None``: the store
    did not say). A run the bug hit after it was finished keeps its status (``complete``). ``held``:
    this process took the run's lease; a run it did not (another process's) keeps its status. The
    CLI prints the traceback under the message: a bug report needs it."""

    exit_code = 3
    #: The CLI prints the traceback of what was raised (``__cause__``) under the message.
    shows_traceback = True

    def __init__(
        self, run_id: str, set_identifier: str, cause: str, *, kept: int | None, status: str | None, command: str | None = None,
        held: bool = True,
    ) -> None:  # fmt: skip
        self.run_id = run_id
        self.set_identifier = set_identifier
        self.cause = cause
        self.kept = kept
        self.status = status
        self.held = held
        command = _resume_command(set_identifier, run_id, command)
        if status == "complete":
            super().__init__(
                f"internal error (an evalkit bug) after run {run_id} was stored complete: {cause} — its cases are "
                f"kept; its verdict may not be recorded (`evalkit show {run_id}` says)"
            )
            return
        kept_text = _kept_cases(kept, "it", "its committed cases are kept")
        if not held:
            state = _NOT_HELD
        elif status == "interrupted":
            state = "the run is marked interrupted"
        elif status == "incomplete":
            state = "the run is stored incomplete"
        else:
            state = "the run could not be marked interrupted (the store cannot say so, or does not answer)"
        super().__init__(
            f"internal error (an evalkit bug) during run {run_id}: {cause} — {kept_text}, {state}; "
            f"continue it with `{command}`"
        )


class GraderUnavailableError(EvalkitError):
    """A grader cannot run (its judge is unreachable); raised before anything is paid for."""


class GeneratorUnavailableError(EvalkitError):
    """The generator under test said, before the first paid request, that it cannot run."""


class StorageError(EvalkitError):
    """The results store cannot be opened, read or written."""


class SchemaOutOfDateError(StorageError):
    """The database schema is older than this evalkit; run ``evalkit db upgrade``."""


class StoreUnavailable(StorageError):
    """The store is there and valid but cannot be used now — another process holds its write lock
    past the busy timeout, its disk cannot take a write, its PostgreSQL server is down, out of
    reach, starting up or out of connection slots: an environment fault (exit 3), not a wrong
    command (a refused password or database name is one: exit 2); nothing was called."""

    exit_code = 3


class OutputFailed(EvalkitError):
    """A file the command was asked to write (an export) could not be written — a full disk, an
    I/O error: an environment fault (exit 3); what the command stored is kept."""

    exit_code = 3


#: What writing fails with when the environment cannot take the text: a full disk or quota, a
#: file grown past its limit, an I/O error. The command asked for the right thing (exit 3), where a
#: path that is a folder, read-only or not allowed is the command's own (exit 2).
WRITE_FAULT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def write_failed(message: str, exc: OSError) -> EvalkitError:
    """The error a file the command was asked to write (an export, a set file, a starter project)
    ends it with when writing raised ``exc``: :class:`OutputFailed` (exit 3) for a fault of the
    environment (:data:`WRITE_FAULT_ERRNOS`), else :class:`UsageError` (exit 2): one rule for every
    such file, so a CI step that retries on 3 retries a full disk and not a wrong path."""
    return OutputFailed(message) if exc.errno in WRITE_FAULT_ERRNOS else UsageError(message)


class StoreFailure(StorageError):
    """The store failed while in use; ``cause`` names the real cause in one line ("database or disk
    is full", "database is locked after 60 s", "connection to PostgreSQL lost"). ``environment``:
    the fault is the environment's (a full disk, a lock held too long, a lost connection), not the
    store's own content (a damaged file): met before a run is stored, that is exit 3, not 2."""

    def __init__(
        self, cause: str, *, connection_lost: bool = False, database: str | None = None, environment: bool = False
    ) -> None:
        self.cause = cause
        self.connection_lost = connection_lost
        self.environment = environment or connection_lost
        # ``database``: the store as a message shows it (password hidden), so that a command that
        # meets the failure outside a run names which store failed, not only how
        super().__init__(f"database {database}: {cause}" if database else cause)

    @property
    def exit_code(self) -> int:  # type: ignore[override] - a class attribute everywhere else
        """3 when the fault is the environment's (the command was right, the store was not free or
        not there: every command, a run or a reader, says so alike), else 2."""
        return 3 if self.environment else 2
