"""A run's plan: everything the lifecycle needs, decided before anything is called or stored.

A :class:`RunPlan` is built from CLI, configuration or library arguments (see
:mod:`evalkit.run.library`) and grouped by concern: *what* answers (an
:class:`~evalkit.run.answering.Answering`, prompts or questions), *which run and which part of it*
this process answers (:class:`Placement`), *how the run is judged* (:class:`Gate`) and *who hears
about it while it runs* (:class:`Observing`). The plan holds no open store: the lifecycle is given
one (:func:`evalkit.run.lifecycle.execute`).
"""

from __future__ import annotations

import re
import secrets
import time
import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..config import DEFAULT_HOOK_TIMEOUT_S
from ..errors import UsageError
from ..runs import CaseResult, Run
from ..tolerance import Tolerances

if TYPE_CHECKING:
    from .answering import Answering

__all__ = ["Gate", "Observing", "Placement", "RunPlan", "Shard", "check_run_id", "new_run_id"]

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def new_run_id(now: float | None = None) -> str:
    """A sortable, unique run id: UTC time to the second plus random hex."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> None:
    """Refuse a run id a user gave that is not 1 to 64 letters, digits, ``.``, ``_``, ``:`` or ``-``."""
    if not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 80 else f"{run_id[:77]}..."
        raise UsageError(f'run id "{shown}" must be 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit')


@attrs.frozen
class Shard:
    """Slice ``index`` (1-based) of ``count`` deterministic slices of a set."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse ``I/N``."""
        try:
            left, right = text.split("/")
            shard = cls(int(left), int(right))
        except ValueError:
            raise UsageError(f'--shard must look like I/N (e.g. 2/4), got "{text}"') from None
        if not 1 <= shard.index <= shard.count:
            raise UsageError(f"--shard {text}: I must be between 1 and N")
        return shard

    def owns(self, case_id: str) -> bool:
        """True when the case belongs to this slice (stable across processes and machines)."""
        return zlib.crc32(case_id.encode("utf-8", "surrogatepass")) % self.count == self.index - 1


@attrs.frozen
class Placement:
    """Which run this process answers, and which part of it.

    ``run_id`` names the run (``None``: a new run gets a fresh id); an existing run of that id is
    joined (a shard) or, with ``resume``, continued — ``resume`` without a ``run_id`` continues the
    newest unfinished run of the same scope. ``shard`` limits this process to one slice of the set
    (it needs a ``run_id``: every shard joins one run). ``label`` and ``privacy`` are stored with a
    new run; a joined or resumed run keeps the privacy level it was started with.
    """

    run_id: str | None = None
    resume: bool = False
    shard: Shard | None = None
    label: str | None = None
    privacy: str = "metadata"


@attrs.frozen
class Gate:
    """How the run is judged: the tolerances, a chosen baseline (``None``: the accepted baseline of
    the run's scope) and whether an added or edited case that fails keeps the run from being
    accepted automatically (``fail_on_new_failures``, the caller's gate)."""

    tolerances: Tolerances = attrs.Factory(Tolerances)
    baseline_id: str | None = None
    fail_on_new_failures: bool = False


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
    and the notes gathered while planning (said before the run's own)."""

    answering: Answering
    placement: Placement = attrs.Factory(Placement)
    gate: Gate = attrs.Factory(Gate)
    observing: Observing = attrs.Factory(Observing)
    notes: Sequence[str] = ()
