"""Building a :class:`~evalkit.reports.model.Report` from the results store.

This is the one place that knows how a stored run's verdict, comparison and history are found,
so ``evalkit run``, ``evalkit retrieval``, ``evalkit compare`` and ``evalkit report`` hand their
reporters the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..gate_settings import GateSettings
from ..judge_gate import judge_lines
from ..runs import Run, RunKind, RunStatus
from ..storage import StoredVerdict, capabilities
from ..storage.protocols import ResultRepository
from ..tolerance import Tolerances
from ..verdict import Comparison, compare
from .model import HistoryPoint, QuestionInfo, Report, figures_of

__all__ = ["assemble_report", "history_of", "installed_questions", "question_infos", "scope_key"]

#: How many runs of a scope a report's trend shows at most.
HISTORY_LIMIT = 60


def scope_key(run: Run) -> tuple[Any, ...]:
    """The series a run belongs to: set, kind, then who answered and under which yardstick
    (prompt runs) or which retriever in which deployment (retrieval runs)."""
    if run.kind is RunKind.RETRIEVAL:
        return (run.set_identifier, run.kind, run.retriever, run.deployment)
    who = run.identity
    answered = (who.provider_instance, who.model_alias, who.reported_model) if who else (run.provider_instance, run.model_alias, None)
    return (run.set_identifier, run.kind, answered, run.grader)


def accepted(run: Run, verdict: StoredVerdict | None, acceptances: Mapping[str, Any] | None = None) -> bool:
    """Whether a stored run is (or was) an accepted baseline of its scope: its acceptance when the
    store keeps them, else — a store without acceptances — complete and the first of its scope."""
    if acceptances is not None:
        return run.id in acceptances
    return run.status is RunStatus.COMPLETE and verdict is not None and verdict.state == "baseline"


def history_of(repository: ResultRepository, run: Run, limit: int = HISTORY_LIMIT) -> tuple[HistoryPoint, ...]:
    """The runs of ``run``'s scope up to and including it, oldest first (empty when the store
    cannot list runs)."""
    store = capabilities(repository)
    if store.history is None:
        return ()
    listed = store.history.recent_runs(run.set_identifier, limit=limit * 4)
    key = scope_key(run)
    members = [r for r in listed if scope_key(r) == key and (r.started_at, r.id) <= (run.started_at, run.id)]
    if all(r.id != run.id for r in members):
        members.append(run)
    members.sort(key=lambda r: (r.started_at, r.id))
    members = members[-limit:]
    verdicts = store.baselines.verdicts_for([r.id for r in members]) if store.baselines is not None else {}
    acceptances = store.baselines.acceptances_for([r.id for r in members]) if store.baselines is not None else None
    points = []
    for member in members:
        verdict = verdicts.get(member.id)
        points.append(
            HistoryPoint(
                run_id=member.id,
                started_at=member.started_at,
                status=member.status,
                figures=figures_of(member),
                verdict_state=verdict.state if verdict is not None else None,
                accepted=accepted(member, verdict, acceptances),
                current=member.id == run.id,
                label=member.label,
            )
        )
    return tuple(points)


def question_infos(question_set: Any) -> dict[str, QuestionInfo]:
    """``{question id: QuestionInfo}`` for a :class:`~evalkit.questions.GoldenQuestionSet`."""
    return {
        q.id: QuestionInfo(q.question, tuple(q.expected_document_ids), q.form.value, q.hard_class)
        for q in question_set.questions
    }


def installed_questions(run: Run) -> dict[str, QuestionInfo]:
    """The questions of a stored retrieval run, from its installed question set, when the set is
    still installed with the same labels the run was measured against (else empty: a report then
    shows rankings without marking the expected ids)."""
    if run.kind is not RunKind.RETRIEVAL:
        return {}
    from ..catalog import question_set_catalog
    from ..errors import EvalkitError
    from ..retrieval.provenance import labels_fingerprint

    try:
        question_set = question_set_catalog().get(run.set_identifier).set
        if labels_fingerprint(question_set) != run.set_fingerprint:
            return {}
    except (EvalkitError, AttributeError, TypeError):
        return {}
    return question_infos(question_set)


def assemble_report(
    repository: ResultRepository,
    run: Run,
    *,
    verdict: StoredVerdict | None = None,
    comparison: Comparison | None = None,
    baseline: Run | None = None,
    tolerances: Tolerances | None = None,
    questions: Mapping[str, QuestionInfo] | None = None,
    fail_on_regression: bool = False,
    notes: Iterable[str] = (),
    gate: GateSettings | None = None,
    fail_on_inconclusive: bool = False,
    config: Any = None,
) -> Report:
    """The report of a stored run.

    ``verdict`` defaults to the one stored with the run. When no ``comparison`` is given and the
    verdict names a baseline run, the run is compared with it again (under ``tolerances`` and
    ``gate``) for the case-by-case sections, deltas and their uncertainty; the verdict itself
    stays the stored one. The cases the comparison names are marked flaky from the scope's
    history (:mod:`evalkit.flakiness`). What each case asked comes from its set as installed here
    (found with ``config``), when it is the version the run answered. The cases are the stored
    ones, as the run's privacy level kept them, for the command that ran the run as for
    ``evalkit report`` later: a report holds no case text or detail the store dropped.
    """
    baselines = capabilities(repository).baselines
    if verdict is None and baselines is not None:
        verdict = baselines.verdicts_for([run.id]).get(run.id)
    if verdict is not None and verdict.reason != verdict.note:
        # what the run said, not the store's encoding of it (``baseline state WORD: …``)
        verdict = attrs.evolve(verdict, note=verdict.reason)
    if comparison is None and verdict is not None and verdict.baseline_id:
        baseline = repository.get_run(verdict.baseline_id)
        if baseline is not None:
            comparison = compare(run, baseline, tolerances or Tolerances(), gate)
    from ..case_texts import answered_texts

    return Report(
        run=run,
        verdict=verdict,
        comparison=comparison,
        baseline=baseline if comparison is not None else None,
        history=history_of(repository, run),
        questions=dict(questions or {}),
        fail_on_regression=fail_on_regression,
        # each judge's κ (or "uncalibrated") beside its verdicts, as the run's output says it
        notes=(*notes, *judge_lines(run.metrics)),
        flaky=_flaky(repository, run, comparison),
        fail_on_inconclusive=fail_on_inconclusive,
        texts=answered_texts(run, run.cases, config),
    )


def _flaky(repository: ResultRepository, run: Run, comparison: Comparison | None) -> dict[str, str]:
    """The flaky marks of the cases a comparison names, and of the run's cases whose repeats
    disagreed."""
    marks = {c.case_id: "its answers disagreed" for c in run.cases if c.flaky}
    if comparison is not None:
        from ..flakiness import flaky_marks

        named = [*comparison.regressed_cases, *comparison.fixed_cases, *comparison.still_failing]
        marks.update(flaky_marks(capabilities(repository), run, named))
    return marks
