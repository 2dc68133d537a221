"""Two runs of one set compared: the verdict with its figures, then the changed cases first, each
with the two answers side by side and a word diff.

The comparison is the kernel's (:func:`evalkit.verdict.compare_pairs`, on the unchanged cases),
made under the tolerances the address gives (the defaults otherwise) — the same verdict
``evalkit compare BASE RUN`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..case_texts import CaseSource
from ..errors import UsageError
from ..leases import RunLiveness
from ..reports.model import Report
from ..run.continuing import ResumeDefaults, gone_clause, status_label
from ..runs import Run, RunKind
from ..tolerance import Tolerances
from ..verdict import Comparison, different_corpora
from .cases_view import CaseParts, CaseView, case_view, result_words
from .index import RunIndex
from .paging import Paging, page_number, per_page
from .run_page import change_tags
from .state import ViewerState
from .urls import compare_url

__all__ = ["SECTIONS", "ComparePage", "CompareRow", "build_compare_page", "run_differences"]

#: What the page lists: (key, label, the comparison's sections it covers). ``changed`` is the default.
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("changed", "Changed", ("regressed", "fixed", "edited", "added", "removed")),
    ("regressed", "Regressed", ("regressed",)),
    ("fixed", "Fixed", ("fixed",)),
    ("edited", "Edited", ("edited",)),
    ("added", "Added", ("added",)),
    ("removed", "Removed", ("removed",)),
    ("still_failing", "Still failing", ("still failing",)),
    ("all", "All", ("regressed", "fixed", "edited", "added", "removed", "still failing", None)),
)
_SECTIONS = {key: (label, tags) for key, label, tags in SECTIONS}


@attrs.frozen
class CompareRow:
    """One case of the comparison: its view in the run (with the base's answer beside it), or, for
    a removed case, its view in the base."""

    case_id: str
    tag: str | None
    view: CaseView
    base_result: str | None


@attrs.frozen
class ComparePage:
    """Everything the comparison page shows."""

    base: Run
    run: Run
    comparison: Comparison
    tolerances: Tolerances
    report: Report
    notes: tuple[str, ...]
    show: str
    sections: tuple[tuple[str, str, int, bool], ...]
    paging: Paging
    rows: tuple[CompareRow, ...]

    @property
    def retrieval(self) -> bool:
        """True when both runs are retrieval runs."""
        return self.run.kind is RunKind.RETRIEVAL and self.base.kind is RunKind.RETRIEVAL

    @property
    def summary(self) -> str:
        """The comparison in one sentence, as ``evalkit compare`` says it."""
        if self.retrieval:
            return self.comparison.summary("hit@1", "hit@3", mean_in_points=True, unit="question")
        return self.comparison.summary()

    def page_link(self, number: int) -> str:
        """The address of page ``number`` of the same view."""
        return compare_url(self.base.id, self.run.id, **self.params(page=number))

    def params(self, **changes: object) -> dict[str, object]:
        """The address parameters of this view (section, tolerances) with ``changes``."""
        params: dict[str, object] = {"show": None if self.show == "changed" else self.show}
        if self.tolerances != Tolerances():
            params["max_pass_rate_drop"] = str(float(self.tolerances.max_pass_rate_drop))
            params["max_mean_score_drop"] = str(float(self.tolerances.max_mean_score_drop))
        params.update(changes)
        return params

    @property
    def verdict_word(self) -> str:
        """``REGRESSED`` or ``NO REGRESSION``."""
        return "REGRESSED" if self.comparison.regressed else "NO REGRESSION"


def run_differences(
    base: Run, run: Run, alive: Mapping[str, RunLiveness] | None = None, defaults: ResumeDefaults | None = None
) -> tuple[str, ...]:
    """What differs between the two runs besides their cases (who answered, the grader, the set),
    and which of them is not complete: a running run no process answers any more as ``history``
    and ``show`` say it (``alive``: the runs' liveness, :func:`evalkit.run.continuing.status_label`;
    ``defaults``: what a bare continuing command answers with, :func:`evalkit.run.continuing.resume_defaults`)."""
    notes = []
    before, after = Report(run=base).identity, Report(run=run).identity
    retrieval = base.kind is RunKind.RETRIEVAL and run.kind is RunKind.RETRIEVAL
    if before != after:
        what = "measured different retrievers or deployments" if retrieval else "were answered by different generators"
        notes.append(f"The runs {what}: {before} vs {after}.")
    if (corpora := different_corpora(run, base)) is not None:
        notes.append(
            f'The runs searched different corpora (corpus revision "{corpora[0]}" vs "{corpora[1]}"): a document '
            "one corpus lacks is a miss in that run only, so the difference is not the retriever's alone."
        )
    if base.grader != run.grader:
        notes.append(f'The runs were graded by different yardsticks: "{base.grader}" vs "{run.grader}".')
    if base.set_fingerprint and run.set_fingerprint and base.set_fingerprint != run.set_fingerprint:
        notes.append("The set changed between the two runs: the verdict counts only the unchanged cases.")
    for which, stored in (("The base", base), ("The run", run)):
        if stored.status.value != "complete":
            live = (alive or {}).get(stored.id)
            gone = gone_clause(stored, live, defaults)
            notes.append(f"{which} is {status_label(stored, live)}: cases it lacks count as added or removed{gone}.")
    return tuple(notes)


def tolerances_from(params: Mapping[str, str]) -> Tolerances:
    """The tolerances an address gives (``max_pass_rate_drop``, ``max_mean_score_drop``), else the
    defaults; :class:`~evalkit.errors.UsageError` for one that is not a number in 0..1."""
    return Tolerances.parse(params.get("max_pass_rate_drop", "0.1"), params.get("max_mean_score_drop", "0.1"))


def _counted(comparison: Comparison, current: RunIndex, before: RunIndex) -> tuple[dict[str, str], dict[str, int]]:
    """Each case's change, and how many cases each section lists."""
    tags = change_tags(comparison)
    counts = dict.fromkeys(_SECTIONS, 0)
    for tag in (*(tags.get(row.case_id) for row in current.rows), *(["removed"] * len(comparison.removed_cases))):
        for key, (_, section_tags) in _SECTIONS.items():
            if tag in section_tags:
                counts[key] += 1
    return tags, counts


def _listed(tags: Mapping[str, str], current: RunIndex, before: RunIndex, show: str) -> list[str]:
    """The ids the section ``show`` lists: by change (regressed first), then in the run's order
    (removed cases after, in the base's)."""
    order = {tag: number for number, tag in enumerate(_SECTIONS["all"][1])}
    chosen = set(_SECTIONS[show][1])
    listed = [
        (order[tag], row.position, row.case_id) for row in current.rows if (tag := tags.get(row.case_id)) in chosen
    ]
    if "removed" in chosen:
        listed += [
            (order["removed"], len(current) + row.position, row.case_id)
            for row in before.rows
            if row.case_id not in current.positions
        ]
    listed.sort()
    return [case_id for _, _, case_id in listed]


def build_compare_page(
    state: ViewerState, base_id: str, run_id: str, params: Mapping[str, str]
) -> ComparePage | str | None:
    """The comparison page; ``None`` when a run is missing, a sentence when the two cannot be compared."""
    base, run = state.run(base_id), state.run(run_id)
    if base is None or run is None:
        return None
    if base.set_identifier != run.set_identifier:
        return "These runs are of different sets; a comparison needs two runs of one set."
    try:
        tolerances = tolerances_from(params)
    except UsageError as exc:
        return str(exc)
    comparison, current, before = state.comparison(run, base, tolerances)
    show = params.get("show", "changed")
    if show not in _SECTIONS:
        show = "changed"
    versions = (run.id, current.version, base.id, before.version, tolerances)
    tags, counts = state.remember(("compare-counted", *versions), lambda: _counted(comparison, current, before))
    listed = state.remember(("compare-listed", *versions, show), lambda: _listed(tags, current, before, show))
    paging = Paging.of(
        page_number(params.get("page")), per_page(params.get("per"), state.settings.page_size), len(listed)
    )
    shown = paging.cut(listed)
    run_cases = state.cases(current, list(shown))
    base_cases = state.cases(before, list(shown))
    fingerprints = {}
    for case_id in shown:
        row = current.row(case_id) or before.row(case_id)
        if row is not None:
            fingerprints[case_id] = row.fingerprint
    sources = state.sources(run, fingerprints)
    rows = []
    for case_id in shown:
        now, then = current.row(case_id), before.row(case_id)
        tag = tags.get(case_id)
        source = sources.get(case_id, CaseSource("absent"))
        if now is not None:
            view = case_view(CaseParts(run, now, run_cases.get(case_id), tag, source, (), base_cases.get(case_id)))
        else:
            assert then is not None
            view = case_view(CaseParts(base, then, base_cases.get(case_id), tag, source))
        base_result = result_words(base.kind, then) if then is not None and now is not None else None
        rows.append(CompareRow(case_id, tag, view, base_result))
    sections = tuple((key, label, counts[key], key == show) for key, label, _ in SECTIONS)
    report = Report(run=run, comparison=comparison, baseline=base)
    return ComparePage(
        base,
        run,
        comparison,
        tolerances,
        report,
        run_differences(base, run, state.store.liveness([base, run]), state.resume_defaults()),
        show,
        sections,
        paging,
        tuple(rows),
    )
