"""A run's plan: everything the lifecycle needs, decided before anything is called or stored.

A :class:`RunPlan` is built from CLI, configuration or library arguments (see
:mod:`evalkit.run.library`) and grouped by concern: *what* answers (an
:class:`~evalkit.run.answering.Answering`, prompts or questions), *which run and which part of it*
this process answers (:class:`Placement`), *how the run is judged* (:class:`Gate`) and *who hears
about it while it runs* (:class:`Observing`). The plan holds no open store: the lifecycle is given
one (:func:`evalkit.run.lifecycle.execute`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..config import DEFAULT_HOOK_TIMEOUT_S
from ..gate_settings import GateSettings
from ..runs import CaseResult, Run
from ..tolerance import Tolerances
from .placement import Placement, Shard, check_run_id, new_run_id

if TYPE_CHECKING:
    from .answering import Answering
    from .settings import RunSettings

__all__ = ["Gate", "Observing", "Placement", "RunPlan", "Shard", "check_run_id", "new_run_id"]


@attrs.frozen
class Gate:
    """How the run is judged: the tolerances, a chosen baseline (``None``: the accepted baseline of
    the run's scope), whether an added or edited case that fails keeps the run from being
    accepted automatically (``fail_on_new_failures``, the caller's gate), the gate's method and
    settings (``[gate]`` and its options: :class:`~evalkit.gate_settings.GateSettings`), and
    ``baseline_run``, a baseline read from a file (``--baseline-file``): compared with instead of
    any stored run."""

    tolerances: Tolerances = attrs.Factory(Tolerances)
    baseline_id: str | None = None
    fail_on_new_failures: bool = False
    baseline_run: Run | None = None
    settings: GateSettings = attrs.Factory(GateSettings)


@attrs.frozen
class Observing:
    """Who hears about the run while it runs, and what the caller gets back.

    ``manager`` is the pluggy manager of the lifecycle hooks (``None``: no hook plugin), each call
    bounded by ``hook_timeout``; ``hook_failures`` the hook plugins that failed to load. The caller's
    ``on_start(run, total)`` and ``on_case(case)`` are called as the run starts and as each case is
    committed; ``on_stored(cases)`` after each commit of a run this process begins, with the cases as
    the store reads them back (when the store can say so). ``keep_cases=False``: the outcome's run
    comes without its cases and, with a store that streams them, none is read back at all.
    """

    manager: Any = None
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT_S
    hook_failures: tuple[str, ...] = ()
    on_start: Callable[[Run, int], None] | None = None
    on_case: Callable[[CaseResult], None] | None = None
    on_stored: Callable[[list[CaseResult]], None] | None = None
    keep_cases: bool = True


@attrs.frozen
class RunPlan:
    """One run, planned: what answers, which part of which run, how it is judged, who observes it,
    and the notes gathered while planning (said before the run's own).

    ``answers_reused`` is set by whatever answers a run from earlier answers instead of asking
    (a cache, a re-grade of stored answers): such a run is stored and compared, but never accepted
    as its scope's baseline automatically (:func:`evalkit.run.decide.acceptance_of`).

    ``settings``: the keywords of the library call the plan was made from, as declared
    (:class:`~evalkit.run.settings.PromptRunSettings`, :class:`~evalkit.run.settings.RetrievalRunSettings`;
    ``None`` for a plan made otherwise, a re-grade's): the one declaration reaches the plan whole.
    """

    answering: Answering
    placement: Placement = attrs.Factory(Placement)
    gate: Gate = attrs.Factory(Gate)
    observing: Observing = attrs.Factory(Observing)
    notes: Sequence[str] = ()
    answers_reused: bool = False
    settings: RunSettings | None = None
