"""Answering a set: one interface, two implementations.

The lifecycle (:mod:`evalkit.run.lifecycle`) knows nothing of generators, graders or retrievers.
It asks an :class:`Answering` what the run's header holds, which cases of the set remain for this
process (its shard, minus what is stored), to answer them — each finished case handed to a
:class:`CaseSink`, which commits it to the store and tells the observers — and what the finish
step records. The verdict's kind-specific rules come with it (:class:`~evalkit.run.decide.KindRules`).

* :class:`~evalkit.run.answering.prompts.PromptAnswering`: a golden prompt set, answered by a
  generator and graded (the async runner in :mod:`evalkit.run.answering.prompt_runner`);
* :class:`~evalkit.run.answering.questions.QuestionAnswering`: a golden question set, asked of a
  retriever and scored.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ...answers import ServingIdentity
from ...runs import CaseResult, Run, RunKind, RunStatus
from ...storage.protocols import Capabilities
from ...storage.values import CaseTally

if TYPE_CHECKING:
    from ...verdict import Verdict
    from ..decide import KindRules
    from ..placement import Placement, Shard

__all__ = ["Answering", "CaseSink", "Finish", "Slice", "final_status"]


class CaseSink(Protocol):
    """Where an answering puts each finished case (see :class:`evalkit.run.lifecycle.Commits`)."""

    def commit(self, case: CaseResult) -> None:
        """Store ``case`` (now, or with the group commit that is gathering) and tell the observers."""
        ...

    def flush(self) -> None:
        """Store every case committed so far."""
        ...


@attrs.frozen
class Slice:
    """What of the run this process answers: its ``shard`` of the set (``None``: all of it) minus
    the cases already stored with an answer (``skip``); ``stored_cases`` reads those back when an
    answering needs more than their ids. ``privacy`` is the level the run's cases are kept at."""

    run_id: str
    shard: Shard | None
    skip: Collection[str]
    store: Capabilities
    privacy: str = "metadata"

    def stored_cases(self) -> Iterable[CaseResult]:
        """The run's stored cases, a page at a time when the store streams them."""
        if self.store.streamed is not None:
            return self.store.streamed.iter_cases(self.run_id)
        run = self.store.repository.get_run(self.run_id)
        return run.cases if run is not None else ()


@attrs.frozen
class Finish:
    """What the end of a run (or of its slice) records: the status, the yardstick it is stored
    under, who answered (or why that is unknown), the run metrics, the store's count of the
    cases when it was taken (reused by the verdict of a whole run), what the run spent
    (:meth:`evalkit.costs.RunSpend.document`), whether its answers were reused (``cache``,
    ``regrade``…: never accepted automatically), notes for the user and the plugins that failed
    around it (warnings). ``slice_in`` is false when the answering stopped before its slice was
    all in (a budget or request limit): the part is not given up as in, so a shard so stopped is
    still missing, and named to continue."""

    status: RunStatus
    grader: str
    identity: ServingIdentity | None = None
    identity_note: str | None = None
    metrics: Mapping[str, Any] | None = None
    tally: CaseTally | None = None
    spend: Mapping[str, Any] | None = None
    answers_reused: str | None = None
    notes: tuple[str, ...] = ()
    slice_in: bool = True
    #: Plugins that failed around the run without changing it (a generator's ``close()``), said
    #: with the outcome as a hook's failure is.
    plugin_failures: tuple[str, ...] = ()
    #: The spending limit that stopped the answering ("the limit of 2 requests reached"), said in the
    #: verdict of the run it left incomplete; ``None``: none did.
    stopped_by: str | None = None
    #: The same limit as data (:func:`evalkit.run.limit_stops.limit_stop`), kept in the run's
    #: provenance for the part this answering answered; ``None``: none stopped it.
    limit_stop: Mapping[str, Any] | None = None
    #: The notes made from the run as the store finished it (``finish_run``'s return: the spend it
    #: summed from every case stored by then), said after :attr:`notes`; ``None``: none.
    stored_notes: Callable[[Run], tuple[str, ...]] | None = None


class Answering(Protocol):
    """How one kind of set is answered, as the lifecycle asks for it (see the module docstring)."""

    kind: RunKind
    #: The requests kept in flight, as the outcome reports it (``None``: not reported).
    concurrency: int | None
    #: True when cases finishing close together share a commit (an event loop runs the answering).
    groups_commits: bool

    @property
    def rules(self) -> KindRules:
        """The verdict's rules for this kind of run."""
        ...

    @property
    def set_identifier(self) -> str:
        """The identifier of the set answered."""
        ...

    def header(self, run_id: str, started: float, placement: Placement) -> Run:
        """The run as :meth:`~evalkit.storage.ResultRepository.begin_run` stores it."""
        ...

    def unfinished_run(self, store: Capabilities) -> str:
        """The id of the newest unfinished run of this scope (``--resume`` without an id); a usage
        error when there is none or the store cannot tell."""
        ...

    def check_joinable(self, existing: Run, header: Run, resume: bool) -> None:
        """Refuse (usage error, nothing written) to add cases to a stored run they do not belong to."""
        ...

    def check_stored(self, existing: Run, store: Capabilities) -> None:
        """Refuse (usage error, nothing written) to add cases to ``existing`` when its stored cases
        were answered otherwise than this process answers (read once :meth:`check_joinable` agreed)."""
        ...

    def before_joining(self) -> list[str]:
        """Checks made only when an existing run is resumed or joined, once the store agreed;
        returns notes for the user."""
        ...

    def secrets(self) -> tuple[str, ...]:
        """Credential values that must never reach the store (scrubbed from every case committed)."""
        ...

    def resumed(self, run_id: str, kept: int, asked: int) -> str | None:
        """A note for a resumed run that kept ``kept`` answered cases and answers ``asked`` now."""
        ...

    def select(self, part: Slice) -> Collection[Any]:
        """The cases this process answers: its shard, minus what is stored (``len()`` is the total
        reported to the observers)."""
        ...

    def answer(self, todo: Collection[Any], sink: CaseSink) -> None:
        """Answer ``todo``, committing each finished case through ``sink``; close what answered."""
        ...

    def finish(self, header: Run, store: Capabilities, streamed: bool) -> Finish:
        """What the end of this slice records (``streamed``: count in the store, read no case back)."""
        ...

    def detail(self, run: Run, verdict: Verdict, store: Capabilities) -> Any:
        """What only this kind of outcome carries (``None`` for none)."""
        ...

    def resume_command(self, run_id: str, shard: Shard | None = None) -> str:
        """The command that continues the run ``run_id`` (said when it is interrupted); for a
        ``shard``, the shard's own (:func:`~evalkit.run.placement.continuing_words`)."""
        ...


def stored_whole(cases: Iterable[CaseResult], owns: Callable[[str], bool] | None = None) -> int:
    """How many of ``cases`` are stored whole — not errored: a resume asks an errored case again —
    and, given ``owns`` (a shard's test of a case id), are that shard's. The one count a limit's
    note says a run or a shard stopped after, and a resume's limit is sized from."""
    return sum(1 for case in cases if not case.errored and (owns is None or owns(case.case_id)))


def final_status(case_count: int, stored: int, errored: int) -> RunStatus:
    """Complete when every case of the set is stored without error; still running while cases are
    missing (shards not all in), even when some stored case errored; incomplete otherwise."""
    if stored < case_count:
        return RunStatus.RUNNING
    if errored:
        return RunStatus.INCOMPLETE
    return RunStatus.COMPLETE
