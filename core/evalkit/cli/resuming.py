"""The command a "continue it with `…`" line prints: the command as it was given, so that pasted
as printed it resumes the run in the same store, with the same configuration and provider.

The library's own line names only the set (and retriever, deployment): it cannot know that the
store came from ``--database`` or the configuration from ``--config``, and pasted without them it
looked in the default store and said there was no such run. The CLI knows what was given: the
command, its arguments and the options that choose the store, the configuration and what answers
(``--provider``, ``--model``, ``--grader``, the judge, ``--deployment``, ``--answers-from``), each quoted for a POSIX
shell. A password in a database URL is shown as ``***`` (a printed line is not a secret store: the
reader puts it back, or sets ``EVALKIT_DATABASE_URL`` as the job did).
"""

from __future__ import annotations

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..errors import RunInternalError, RunInterrupted, RunStoreFailed
    from .app import Arguments

__all__ = [
    "RESUMED_OPTIONS",
    "continuing_defaults",
    "given_options",
    "resume_command",
    "store_words",
    "with_resume_command",
]

#: The options a resume command repeats when they were given, and the value each has when not
#: given (``None``: any value given is repeated; a flag repeats as the bare option).
RESUMED_OPTIONS: dict[str, Any] = {
    "provider": None, "model": None, "grader": "deterministic", "judge": None, "judge_repeats": None,
    "judge_temperature": None, "allow_self_judge": False, "deployment": None, "config": None, "database": None,
    # the answers a case stands for: a resume without it answers the rest once each
    "repeats": None,
    # the stored run whose answers are reused: a resume without it asks the model for the rest
    "answers_from": None,
}  # fmt: skip


def _hidden_password(url: str) -> str:
    """``url`` with its passwords (user info, ``?password=``) shown as ``***`` (the whole URL otherwise kept)."""
    from ..storage.urls import hide_password

    return hide_password(url)


def resume_command(words: Sequence[str], args: Arguments, run_id: str) -> str:
    """``evalkit WORDS… [OPTIONS as given] --resume RUN_ID``, quoted for a shell; ``words`` is
    the command and its arguments (``("run", SET)``, ``("retrieval", SET, RETRIEVER)``). A shard's
    ends ``--shard I/N --run-id RUN_ID`` (``--shard`` as it was typed, ``auto`` too): it is run
    again, its slice answered — a resume answers the whole run, and is refused while another shard
    answers it."""
    shard = getattr(args, "shard", None)
    ending = ["--shard", str(shard), "--run-id", run_id] if shard else ["--resume", run_id]
    parts = ["evalkit", *words, *given_options(args), *ending]
    from ..wording import shell_line

    return shell_line(parts)


def continuing_defaults(args: Arguments, config: Any) -> Any:
    """What a command that reads the store (``show``, ``history``, ``compare``, ``report``) passes
    :func:`evalkit.leases.gone_sentence` for a run no process answers: the configuration's
    :func:`~evalkit.leases.resume_defaults`, with the :func:`store_words` this command was given,
    so the line it prints continues the run in the store it read."""
    import attrs

    from ..leases import resume_defaults

    return attrs.evolve(resume_defaults(config), store=store_words(args))


def store_words(args: Arguments) -> tuple[str, ...]:
    """The ``--config PATH`` and ``--database URL`` (its password as ``***``) this command was
    given, as words: what a line continuing a run repeats (:func:`evalkit.run.placement.store_options`)."""
    from ..run.placement import store_options

    return store_options(getattr(args, "config", None) or None, getattr(args, "database", None) or None)


def given_options(args: Arguments) -> list[str]:
    """The :data:`RESUMED_OPTIONS` given to this command, as words (a database password as ``***``),
    and ``--cache`` when it was given (with ``--privacy full`` when that was: below it ``--cache`` is
    refused unless ``[cache] enabled`` allows it, and a resume takes the privacy level given, not
    the run's): what every line that resumes a run repeats, an interrupted one's and a stopped one's alike."""
    parts = [word for name, default in RESUMED_OPTIONS.items() for word in _given(args, name, default)]
    if getattr(args, "cache", None) is True:  # a resume without it asks the model for what the cache holds
        parts.append("--cache")
        if getattr(args, "privacy", None) == "full":
            parts += ["--privacy", "full"]
    return parts


def _given(args: Arguments, name: str, default: Any) -> list[str]:
    """Option ``name`` as this command was given it, as words (none when it is ``None`` or
    ``default``; a flag bare; a database URL with its password as ``***``)."""
    value = getattr(args, name, default)
    if value is None or value == default:
        return []
    option = "--" + name.replace("_", "-")
    if value is True:
        return [option]
    return [option, _hidden_password(str(value)) if name == "database" else str(value)]


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
