"""The command a "continue it with `…`" line prints: the command as it was given, so that pasted
as printed it resumes the run in the same store, with the same configuration and provider.

The library's own line names only the set (and retriever, deployment): it cannot know that the
store came from ``--database`` or the configuration from ``--config``, and pasted without them it
looked in the default store and said there was no such run. The CLI knows what was given: the
command, its arguments and every option given that changes what the run does (all but those
:data:`NOT_RESUMED` names: the store, the configuration, what answers and grades, how — ``--concurrency``,
``--judge-unjudged``, ``--k``, the limits, the gate), each quoted for a POSIX shell. A password in a database URL is shown as ``***`` (a printed line is not a secret store: the
reader puts it back, or sets ``EVALKIT_DATABASE_URL`` as the job did).
"""

from __future__ import annotations

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from ..errors import RunInternalError, RunInterrupted, RunStoreFailed
    from .app import Arguments

__all__ = [
    "ANSWERING_ONLY",
    "NOT_RESUMED",
    "answering_only_given",
    "continuing_defaults",
    "given_options",
    "resume_command",
    "kept_options",
    "resumed_options",
    "store_words",
    "with_resume_command",
]

#: The options of ``evalkit run`` / ``retrieval`` / ``regrade`` a line that continues the run does
#: NOT repeat, and why; every other option given (not left at its default) is repeated, as typed
#: and in the order the command declares its options (:func:`given_options`). This is the one
#: declaration: an option added to a command is repeated unless it is named here, so a line never
#: again drops one that changes what the resumed run does (``--concurrency``, ``--judge-unjudged``,
#: ``--k``, ``--budget``, a gate option…).
NOT_RESUMED: dict[str, str] = {
    "resume": "the line ends with its own place (--resume RUN_ID, or a shard's --shard I/N --run-id RUN_ID)",
    "shard": "the line ends with its own place",
    "run_id": "the line ends with its own place",
    "wait": "--wait-for-shards answers nothing: no line continues it",
    "timeout": "how --wait-for-shards waits",
    "poll": "how --wait-for-shards waits",
    "label": "stored with a new run only: a resumed or joined run keeps its own",
    "show_all": "what the output lists, not what the run does",
    "show_answers": "what the output shows, not what the run does",
    "json": "the output's form, not what the run does",
    "traceback": "what an internal error prints, not what the run does",
}


def _hidden_password(url: str) -> str:
    """``url`` with its passwords (user info, ``?password=``) shown as ``***`` (the whole URL otherwise kept)."""
    from ..storage.urls import hide_password

    return hide_password(url)


def resume_command(words: Sequence[str], args: Arguments, run_id: str) -> str:
    """``evalkit WORDS… [OPTIONS as given] --resume RUN_ID``, quoted for a shell; ``words`` is
    the command and its arguments (``("run", SET)``, ``("retrieval", SET, RETRIEVER)``). A shard's
    ends ``--shard I/N --run-id RUN_ID`` (``--shard`` as it was typed, ``auto`` too): it is run
    again, its slice answered — a resume answers the whole run, and is refused while another shard
    answers it. Built as a line printed later from the stored run is (:func:`evalkit.run.continuing.resume_hint`),
    by :func:`evalkit.run.placement.continuing_command`, from the :func:`resumed_options` the run
    keeps: the store's words last, before the place."""
    shard = getattr(args, "shard", None)
    ending = ["--shard", str(shard), "--run-id", run_id] if shard else ["--resume", run_id]
    from ..run.placement import continuing_command  # the stored run's line is built by it too

    return continuing_command(words, resumed_options(args), store_words(args), ending)


def continuing_defaults(args: Arguments, config: Any) -> Any:
    """What a command that reads the store (``show``, ``history``, ``compare``, ``report``) passes
    :func:`evalkit.run.continuing.gone_sentence` for a run no process answers: the configuration's
    :func:`~evalkit.run.continuing.resume_defaults`, with the :func:`store_words` this command was given,
    so the line it prints continues the run in the store it read."""
    import attrs

    from ..run.continuing import resume_defaults

    return attrs.evolve(resume_defaults(config), store=store_words(args))


def store_words(args: Arguments) -> tuple[str, ...]:
    """The ``--config PATH`` and ``--database URL`` (its password as ``***``) this command was
    given, as words: what a line continuing a run repeats (:func:`evalkit.run.placement.store_options`)."""
    from ..run.placement import store_options

    return store_options(getattr(args, "config", None) or None, getattr(args, "database", None) or None)


def given_options(args: Arguments) -> list[str]:
    """Every option given to this command that changes what the run does, as words, in the order
    the command declares them (a database password as ``***``): all the command's options
    (:attr:`Arguments.declared_options`) but those :data:`NOT_RESUMED` names and those left at their
    defaults. What every line that resumes a run repeats, an interrupted one's and a stopped one's
    alike; a stopped one gives its higher limits after them (:func:`without_options` drops the
    given ones: :func:`evalkit.run.placement.without_options`)."""
    return [word for name, words in _each_given(args) if name not in NOT_RESUMED for word in words]


#: The options that say which store a line continuing a run is pasted into: a line printed from the
#: store says the store it was read from (:func:`store_words`), so a run keeps them not
#: (:func:`resumed_options`).
_STORE = frozenset({"config", "database"})


def resumed_options(args: Arguments) -> list[list[str]]:
    """The options of :func:`given_options` but the store's (``--config``, ``--database``), each as
    its words (``["--concurrency", "3"]``), in the command's order: what a run this command begins
    keeps (:data:`evalkit.run.placement.RESUMED_OPTIONS`), so that the line ``history``, ``show``
    and the viewer print later from the store repeats them as the live one does."""
    return [words for name, words in _each_given(args) if name not in NOT_RESUMED and name not in _STORE]


#: The spending limits: each attempt at a run gives its own (a shard run again with a higher
#: ``--max-requests``), and a part a limit stopped is continued with the higher one its stop keeps
#: (:mod:`evalkit.run.limit_stops`), so a run keeps them not (:func:`kept_options`).
_LIMITS = frozenset({"budget", "max_requests"})


def kept_options(args: Arguments) -> list[list[str]]:
    """The :func:`resumed_options` a run this command begins keeps for the line printed later from
    the store (:data:`evalkit.run.placement.RESUMED_OPTIONS`): all but the spending limits
    (``--budget``, ``--max-requests``), which are the attempt's, not the run's."""
    return [words for name, words in _each_given(args) if name not in NOT_RESUMED and name not in _STORE | _LIMITS]


#: The options that only say how a process answers the cases (or what a run it begins stores):
#: ``--wait-for-shards`` answers nothing, so each of them given with it is refused
#: (:func:`answering_only_given`), where it was silently ignored.
ANSWERING_ONLY = frozenset({
    "concurrency", "wait_ready", "repeats", "judge", "judge_repeats", "judge_temperature", "allow_self_judge",
    "budget", "max_requests", "cache", "answers_from", "label", "privacy", "k", "relevance_threshold",
    "judge_unjudged",
})  # fmt: skip


def answering_only_given(args: Arguments) -> list[str]:
    """The :data:`ANSWERING_ONLY` options given to this command, as their names (``--concurrency``)."""
    return [words[0] for name, words in _each_given(args) if name in ANSWERING_ONLY]


def _each_given(args: Arguments) -> Iterator[tuple[str, list[str]]]:
    """Each option of this command given (not left at its default), by name, with its words
    (:func:`_given`), in the order the command declares them."""
    for option in getattr(args, "declared_options", ()):
        name = option.name
        if name is None or not option.opts or not hasattr(args, name):
            continue
        words = _given(option, args, name)
        if words:
            yield name, words


def _given(option: Any, args: Arguments, name: str) -> list[str]:
    """Click ``option`` as this command was given it, as words: none when left at its default (or
    ``None``, or an empty repeatable option); a flag as its own name (``--no-cache`` for a
    ``--cache/--no-cache`` turned off); a repeatable option once per value; a database URL with its
    password as ``***``. A run of several ``--provider`` is continued one provider at a time: its
    ``args.provider``."""
    value = getattr(args, name)
    if name == "providers":
        value = (args.provider,) if getattr(args, "provider", None) else value
    default = option.default if not callable(option.default) else None
    if value is None or value is False and not option.secondary_opts or value == default:
        return []
    flag = _longest(option.opts)
    if getattr(option, "is_flag", False) and isinstance(value, bool):
        return [flag if value else _longest(option.secondary_opts)]
    values = list(value) if getattr(option, "multiple", False) else [value]
    said = [_hidden_password(str(one)) if name == "database" else str(one) for one in values]
    return [word for one in said for word in (flag, one)]


def _longest(opts: Sequence[str]) -> str:
    """The option's long name (``--max-requests``, not a short alias)."""
    return max(opts, key=len)


def with_resume_command(
    error: RunInterrupted | RunStoreFailed | RunInternalError, command: str
) -> RunInterrupted | RunStoreFailed | RunInternalError:
    """The same error, its "continue it with" line giving ``command``."""
    from ..errors import RunInternalError, RunInterrupted

    if isinstance(error, RunInterrupted):
        return RunInterrupted(error.run_id, error.set_identifier, command=command, cause=error.cause)
    if isinstance(error, RunInternalError):
        return RunInternalError(
            error.run_id,
            error.set_identifier,
            error.cause,
            kept=error.kept,
            status=error.status,
            command=command,
            held=error.held,
        )
    return type(error)(
        error.run_id, error.set_identifier, error.cause, kept=error.kept, marked=error.marked,
        resumable=error.resumable, command=command, complete=error.complete, can_mark=error.can_mark,
        held=error.held, elsewhere=error.elsewhere,
    )  # fmt: skip
