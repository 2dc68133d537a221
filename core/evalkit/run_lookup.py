"""A run id someone gave, looked up in the results store: the stored run, or one refusal
(:class:`~evalkit.errors.UnknownRunError`, exit 2) with a "did you mean" naming stored runs.

Every place that takes a run id a user typed — ``show``, ``report``, ``compare``, ``regrade``,
``baseline accept``, ``baseline export --run``, and ``run``/``retrieval`` ``--baseline``,
``--resume``, ``--answers-from`` — looks it up here, so each says the same thing and each
suggests: ``evalkit regrade`` and ``baseline accept`` once said "there is no run" with no hint
where ``show`` named the run meant.

The suggestion is drawn from the newest :data:`SUGGESTION_RUNS` stored runs (of the set, when the
id had to be one of a set's runs): the ids that begin with what was typed (the first part of an
id copied short), newest first; else those close to it by the rule click's suggestions use
(:func:`evalkit.wording.close_matches`). Every id is quoted with its control characters escaped
(:func:`evalkit.wording.quoted`). A store that cannot list runs (no ``RunHistory``) suggests nothing.
"""

from __future__ import annotations

from typing import Any

from .errors import UnknownRunError
from .runs import Run
from .storage.protocols import capabilities
from .wording import close_matches, suggestion

__all__ = ["MAX_SUGGESTED", "SUGGESTION_RUNS", "run_id_suggestion", "stored_run", "unknown_run"]

#: How many of the newest stored runs a mistyped run id (or set, or filter) is compared with.
SUGGESTION_RUNS = 1000

#: At most this many ids are suggested (click's and difflib's three).
MAX_SUGGESTED = 3


def stored_run(
    repository: Any, run_id: str, *, with_cases: bool = True, option: str | None = None, of_set: str | None = None
) -> Run:
    """The stored run ``run_id`` (of set ``of_set``, when given), or :func:`unknown_run`'s
    refusal naming ``option`` (the argument that gave it, as :func:`evalkit.wording.argument` says
    it), if any."""
    run = repository.get_run(run_id, with_cases=with_cases)
    if run is None or (of_set is not None and run.set_identifier != of_set):
        raise unknown_run(repository, run_id, option=option, of_set=of_set)
    return run


def unknown_run(
    repository: Any, run_id: str, *, option: str | None = None, of_set: str | None = None
) -> UnknownRunError:
    """The refusal of ``run_id``, which the store does not hold (as a run of ``of_set``, when
    given), with :func:`run_id_suggestion`'s "did you mean"."""
    return UnknownRunError(run_id, option=option, of_set=of_set, hint=run_id_suggestion(repository, run_id, of_set))


def run_id_suggestion(repository: Any, run_id: str, of_set: str | None = None) -> str:
    """`` Did you mean "x"?`` naming the stored runs (of ``of_set``, when given) whose ids begin
    with ``run_id``, else those close to it; ``""`` when none is, or the store cannot list runs."""
    history = capabilities(repository).history
    if history is None:
        return ""
    ids = [run.id for run in history.recent_runs(of_set, limit=SUGGESTION_RUNS)]
    return suggestion(suggested_ids(run_id, ids))


def suggested_ids(run_id: str, ids: list[str]) -> list[str]:
    """Of ``ids`` (newest first), those that begin with ``run_id`` (not blank), the newest
    :data:`MAX_SUGGESTED`; else those :func:`~evalkit.wording.close_matches` finds."""
    if run_id.strip():
        begun = [found for found in dict.fromkeys(ids) if found.startswith(run_id) and found != run_id]
        if begun:
            return begun[:MAX_SUGGESTED]
    return close_matches(run_id, ids)
