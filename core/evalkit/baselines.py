"""Accepted baselines: which stored run a new run is compared with, and how a run earns that place.

The baseline of a *scope* is the most recently accepted run of that scope. A scope is

* for a prompt run: the set, the serving identity (provider instance, model alias, reported model)
  and the grader's yardstick;
* for a retrieval run: the set, the retriever and the deployment.

A run is accepted automatically when it is complete and either the first run of its scope (there
is no accepted run yet) or its comparison with an accepted run found no regression. A run that
regressed, could not be compared, or is incomplete is stored and shown but never accepted, so
re-running a failing CI job compares against the same good run again and fails again. People
accept a run on purpose (an intended change of behaviour) with :func:`accept_run`
(``evalkit baseline accept RUN_ID --reason TEXT``), which records who, when and why.
"""

from __future__ import annotations

import getpass
import os
import time
from collections.abc import Sequence

import attrs

from .errors import UsageError
from .printable import visible
from .run_lookup import stored_run
from .runs import Run, RunKind, RunStatus
from .shapes import clipped_line, short_repr, too_long
from .storage.plugin_store import unwrapped
from .storage.protocols import AcceptedBaselines, ResultRepository, capabilities
from .storage.values import ACCEPTANCE_KINDS, Acceptance, BaselineScope
from .wording import argument

__all__ = [
    "ACCEPTANCE_KINDS",
    "Acceptance",
    "BaselineScope",
    "CurrentBaseline",
    "NO_ACCEPTANCE",
    "accept_run",
    "current_baselines",
    "current_user",
    "graded_by",
    "not_complete",
    "scope_mismatch",
    "unreadable_baseline",
]

#: The longest ``--reason`` for accepting a baseline, in characters (shown in history and reports).
MAX_REASON_CHARS = 1_000

#: Why a comparison is impossible with a store that cannot keep acceptances.
NO_ACCEPTANCE = "not compared: the configured repository keeps no accepted baselines (AcceptedBaselines capability)"


def graded_by(yardstick: str, grader: str) -> bool:
    """Whether a run stored under ``yardstick`` was graded by the grader named ``grader``: the
    yardstick is its name, or refines it (``decision`` → ``decision:…``). The one rule a baseline's
    scope and the reading commands (``plan``, ``flaky``) match a grader by."""
    return yardstick == grader or yardstick.startswith(f"{grader}:")


def unreadable_baseline(error: Exception) -> str:
    """Why a stored run was not compared when reading its baseline raised ``error`` (a run written
    by something else than this evalkit): the new run is kept, its verdict says so."""
    return f"not compared: the baseline could not be read from the store — {error}"


def not_complete(chosen: Run, named: str) -> str | None:
    """Why stored run ``chosen``, as ``named`` says it (``--baseline ID``, ``baseline file PATH
    holds run ID, which``), can be no baseline of any scope: it is not complete — said as that, with
    what to do, not as a run "of another scope" (``None``: it is complete)."""
    if chosen.status is RunStatus.COMPLETE:
        return None
    # a run whose process was killed stays "running" too: show says which, and how to continue it
    todo = (
        f"wait until it completes, or continue it if its process is gone (`evalkit show {chosen.id}` says which)"
        if chosen.status is RunStatus.RUNNING
        else f"continue it (`evalkit show {chosen.id}` prints the command that does)"
    )
    return f"{named} is {chosen.status.value}, and only a complete run can be a baseline: {todo}, or choose a complete run"


def scope_mismatch(chosen: Run, scope: BaselineScope) -> str | None:
    """Why the stored run ``chosen`` cannot be the baseline of a run of ``scope`` (``None``: it can).

    The chosen run must be complete and of exactly this scope.
    """
    if chosen.status is not RunStatus.COMPLETE:
        return f"run {chosen.id} is {chosen.status.value}; only a complete run can be a baseline"
    theirs = BaselineScope.of_run(chosen)
    if theirs is None:
        return f"run {chosen.id} has no verified serving identity ({chosen.identity_note or 'unverified'}), so it belongs to no scope"
    if theirs != scope:
        return f"run {chosen.id} is of another scope ({theirs.describe()}), not {scope.describe()}"
    return None


#: The longest name of who accepted a baseline stored whole; a longer one is cut in its middle.
MAX_ACCEPTOR_CHARS = 200


def current_user() -> str:
    """Who is accepting: ``$USER``, else what :func:`getpass.getuser` finds, else ``unknown``."""
    user = os.environ.get("USER")
    if user:
        return user
    try:
        return getpass.getuser()
    except Exception:  # getpass raises OSError (or KeyError on old Pythons) without a login name
        return "unknown"


def accept_run(
    repository: ResultRepository, run_id: str, reason: str, *, by: str | None = None, at: float | None = None
) -> tuple[Run, Acceptance]:
    """Accept the stored run ``run_id`` as the baseline of its scope, on purpose.

    Refused with :class:`UsageError` (nothing written) when the store cannot keep acceptances, the
    run does not exist, is not complete, belongs to no scope, or ``reason`` is blank. Accepting a run
    that is already accepted records the new acceptance, which makes it the scope's baseline again.
    """
    baselines = _baselines(repository, "cannot keep accepted baselines")
    if not reason.strip():
        raise UsageError(f"{argument('reason')} must say why this run is accepted (it is recorded with the acceptance)")
    if (length := too_long(reason, MAX_REASON_CHARS)) is not None:
        raise UsageError(f"{argument('reason')} {length}")
    if not all(ch.isprintable() for ch in reason):
        raise UsageError(f"{argument('reason')} must be printable text on one line, got {short_repr(reason)}")
    run = stored_run(repository, run_id, with_cases=False)
    if run.status is not RunStatus.COMPLETE:
        raise UsageError(f"run {run.id} is {run.status.value}: only a complete run can be accepted as a baseline")
    if BaselineScope.of_run(run) is None:
        raise UsageError(
            f"run {run.id} has no verified serving identity ({run.identity_note or 'unverified'}), so it belongs to no "
            "baseline scope and cannot be accepted"
        )
    # $USER is the environment's word: kept as every stored name is shown (escapes visible), and bounded
    who = clipped_line(visible(by or current_user()), MAX_ACCEPTOR_CHARS)
    acceptance = Acceptance("manual", at if at is not None else time.time(), who, reason.strip())
    baselines.accept_run(run.id, acceptance)
    return run, acceptance


def _baselines(repository: ResultRepository, cannot: str) -> AcceptedBaselines:
    """The store's :class:`~evalkit.storage.AcceptedBaselines`; a usage error saying it ``cannot``
    what was asked when it lacks the capability."""
    baselines = capabilities(repository).baselines
    if baselines is None:
        raise UsageError(
            f"the configured repository ({type(unwrapped(repository)).__name__}) {cannot}: it lacks the AcceptedBaselines capability"
        )
    return baselines


@attrs.frozen
class CurrentBaseline:
    """The baseline of one scope as ``evalkit baseline show`` reports it."""

    scope: BaselineScope
    run: Run
    acceptance: Acceptance


def current_baselines(
    repository: ResultRepository,
    set_identifier: str,
    *,
    provider_instance: str | None = None,
    model_alias: str | None = None,
    grader: str | None = None,
    retriever: str | None = None,
    deployment: str | None = None,
) -> list[CurrentBaseline]:
    """The current baseline of every scope of a set, optionally narrowed by the given parts of the
    scope (a grader matches its yardstick exactly or as its prefix, ``decision`` → ``decision:…``)."""
    baselines = _baselines(repository, "keeps no accepted baselines")
    runs = baselines.accepted_runs(set_identifier)
    acceptances = baselines.acceptances_for([r.id for r in runs])
    seen: dict[BaselineScope, CurrentBaseline] = {}
    for run in runs:
        scope = BaselineScope.of_run(run)
        if scope is None or scope in seen or run.id not in acceptances:
            continue
        seen[scope] = CurrentBaseline(scope, run, acceptances[run.id])
    return [b for b in seen.values() if _matches(b.scope, provider_instance, model_alias, grader, retriever, deployment)]


def _matches(
    scope: BaselineScope,
    provider_instance: str | None,
    model_alias: str | None,
    grader: str | None,
    retriever: str | None,
    deployment: str | None,
) -> bool:
    wanted: Sequence[tuple[str | None, str | None]] = (
        (provider_instance, scope.provider_instance),
        (model_alias, scope.model_alias),
        (retriever, scope.retriever),
        (deployment, scope.deployment),
    )
    if any(want is not None and want != have for want, have in wanted):
        return False
    if grader is not None and scope.grader is not None:
        return graded_by(scope.grader, grader)
    return grader is None or scope.kind is RunKind.PROMPTS
