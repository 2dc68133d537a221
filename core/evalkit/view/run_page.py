"""A run's page and a case's page: the cases filtered, searched, sorted and cut server-side.

Filters (:data:`FILTERS`) and sorts (:data:`SORTS`) are registries: a filter is a test on a
case's index row and its change against the baseline, so one more (``flaky``, when runs keep
repeats) is one more entry. The changes come from comparing the run with the baseline its stored
verdict names, by the kernel's own rule (:func:`evalkit.verdict.compare_pairs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ..baselines import Acceptance
from ..leases import RunLiveness
from ..reports.model import Figure, Report
from ..run.continuing import ResumeDefaults, gone_sentence, status_label
from ..runs import CaseResult, Run, RunKind, RunStatus
from ..shapes import whole_number
from ..storage import StoredVerdict
from ..verdict import Comparison
from .cases_view import ANSWER_PAGE_CHARS, BESIDE_BASELINE, CaseParts, CaseView, Column, case_view, columns_for
from .index import CaseRow, RunIndex
from .paging import Paging, page_number, per_page
from .search import Query
from .state import SearchResult, ViewerState, progress_state
from .urls import run_url

__all__ = [
    "FILTERS", "SORTS", "CasePage", "Filter", "RunPage", "RunQuery", "build_case_page", "build_run_page", "change_tags",
    "compared_figures",
]  # fmt: skip


@attrs.frozen
class Filter:
    """A filter of a run's cases: ``keep(row, change)`` (``change``: the case's tag against the
    baseline, or ``None``); ``needs_baseline``: meaningless without one; ``needs_data``: offered
    only when a case of the run has what it looks for (``why_not`` says what that is)."""

    key: str
    label: str
    keep: Callable[[CaseRow, str | None], bool]
    needs_baseline: bool = False
    needs_data: bool = False
    why_not: str = "this run was not compared with a baseline"


def _tagged(tag: str) -> Callable[[CaseRow, str | None], bool]:
    return lambda row, change: change == tag


#: The filters, in the order the page offers them. A case is flaky when its outcome differed among
#: its repeats: today the judge's, asked several times (``--judge-repeats``), disagreeing with itself
#: (the ``judge_agreement`` check, stored at every privacy level); answers repeated per case will
#: widen the same test.
FILTERS: tuple[Filter, ...] = (
    Filter("all", "All", lambda row, change: True),
    Filter("failed", "Failed", lambda row, change: not row.passed),
    Filter("regressed", "Regressed", _tagged("regressed"), True),
    Filter("fixed", "Fixed", _tagged("fixed"), True),
    Filter("still_failing", "Still failing", _tagged("still failing"), True),
    Filter("added", "Added", _tagged("added"), True),
    Filter("edited", "Edited", _tagged("edited"), True),
    Filter(
        "flaky",
        "Flaky",
        lambda row, change: row.unstable,
        needs_data=True,
        why_not="no case of this run was judged several times with differing outcomes (--judge-repeats)",
    ),
)
_FILTERS = {f.key: f for f in FILTERS}

#: Sort keys: (label, key function given the row and its place in the installed set).
SORTS: Mapping[str, tuple[str, Callable[[CaseRow, int], Any]]] = {
    "order": ("set order", lambda row, place: (place, row.position)),
    "stored": ("stored order", lambda row, place: row.position),
    "case": ("case id", lambda row, place: row.case_id),
    "result": ("result (errors, failures first)", lambda row, place: (not row.errored, row.passed, row.position)),
    "score": ("score", lambda row, place: (row.score, row.position)),
    "latency": ("latency", lambda row, place: (row.latency_s, row.position)),
}


@attrs.frozen
class RunQuery:
    """What a run page's address asks: filter, search (text or regex), sort and order, page and size."""

    filter: str = "all"
    q: str = ""
    regex: bool = False
    sort: str = "order"
    order: str = "asc"
    page: int = 1
    per: int = 50

    @classmethod
    def parse(cls, params: Mapping[str, str], default_per: int) -> RunQuery:
        """The query from an address's parameters; unknown values fall back to the defaults."""
        sort = params.get("sort", "order")
        return cls(
            filter=params.get("filter", "all") if params.get("filter", "all") in _FILTERS else "all",
            q=params.get("q", ""),
            regex=params.get("regex", "") in ("1", "on", "true"),
            sort=sort if sort in SORTS else "order",
            order="desc" if params.get("order") == "desc" else "asc",
            page=page_number(params.get("page")),
            per=per_page(params.get("per"), default_per),
        )

    def params(self, **changes: Any) -> dict[str, Any]:
        """The address parameters of this query with ``changes``, defaults left out (page 1 unless
        given: a new filter or sort starts at the top)."""
        query = attrs.evolve(self, **{"page": 1, **changes})
        return {
            "filter": None if query.filter == "all" else query.filter,
            "q": query.q or None,
            "regex": "1" if query.regex and query.q else None,
            "sort": None if query.sort == "order" else query.sort,
            "order": "desc" if query.order == "desc" else None,
            "page": query.page if query.page > 1 else None,
            "per": query.per if query.per != 50 else None,
        }


def compared_figures(comparison: Comparison | None, retrieval: bool) -> tuple[Figure, ...]:
    """The figures the verdict is computed on — the two rates on the cases unchanged between the
    runs — each beside the baseline's (empty without a comparison)."""
    if comparison is None:
        return ()
    count = len(comparison.compared_cases)
    unit = f"{count} unchanged {'question' if retrieval else 'case'}{'s' if count != 1 else ''}"
    first, second = ("hit@1", "hit@3") if retrieval else ("Pass rate", "Mean score")
    return (
        Figure("pass_rate", f"{first}, {unit}", float(comparison.pass_rate), float(comparison.baseline_pass_rate)),
        Figure(
            "mean_score",
            f"{second}, {unit}",
            float(comparison.mean_score),
            float(comparison.baseline_mean_score),
            retrieval,
        ),
    )


def change_tags(comparison: Comparison | None) -> dict[str, str]:
    """``{case id: change}`` from a comparison: regressed, fixed, still failing, added, edited, removed."""
    if comparison is None:
        return {}
    tags: dict[str, str] = {}
    for attribute, tag in (("regressed_cases", "regressed"), ("fixed_cases", "fixed"), ("still_failing", "still failing"),
                           ("added_cases", "added"), ("removed_cases", "removed")):  # fmt: skip
        for case_id in getattr(comparison, attribute):
            tags.setdefault(case_id, tag)
    for edited in comparison.edited_cases:
        tags.setdefault(edited.case_id, "edited")
    return tags


@attrs.frozen
class FilterChoice:
    """A filter as the page offers it: how many cases it keeps, and whether it is the one applied."""

    filter: Filter
    count: int
    active: bool
    available: bool

    @property
    def why_not(self) -> str:
        """Why the filter is not offered (shown as its title)."""
        return self.filter.why_not


@attrs.frozen
class RunPage:
    """Everything the run page shows."""

    run: Run
    report: Report
    verdict: StoredVerdict | None
    acceptance: Acceptance | None
    baseline: Run | None
    comparison: Comparison | None
    query: RunQuery
    filters: tuple[FilterChoice, ...]
    search: SearchResult | None
    paging: Paging
    cases: tuple[CaseView, ...]
    columns: tuple[Column, ...]
    installed_note: str
    index_seconds: float
    #: Whether a process answers the run now, as its leases say (``None``: not running, or unknown).
    liveness: RunLiveness | None = None
    #: What a bare continuing command answers with (:func:`evalkit.run.continuing.resume_defaults`; ``None``:
    #: not known), for the ``--model`` of the line that continues a run no process answers.
    defaults: ResumeDefaults | None = None

    @property
    def live(self) -> bool:
        """True while the run is stored running (the page refreshes as cases arrive, and when a
        process takes it up again)."""
        return self.run.status is RunStatus.RUNNING

    @property
    def status(self) -> str:
        """The run's status as ``history`` and ``show`` say it (:func:`evalkit.run.continuing.status_label`)."""
        return status_label(self.run, self.liveness)

    @property
    def gone(self) -> str | None:
        """``no live process since …: …; continue it with `…``` for a running run no process
        answers any more (:func:`evalkit.run.continuing.gone_sentence`); ``None`` otherwise."""
        if self.liveness is None or not self.liveness.gone:
            return None
        return gone_sentence(self.run, self.liveness, self.defaults)

    @property
    def retrieval(self) -> bool:
        """True for a retrieval run."""
        return self.run.kind is RunKind.RETRIEVAL

    @property
    def compared_figures(self) -> tuple[Figure, ...]:
        """The figures the verdict is computed on (see :func:`compared_figures`)."""
        return compared_figures(self.comparison, self.retrieval)

    @property
    def progress_state(self) -> str:
        """What the live refresh compares the store's progress with."""
        return progress_state(self.run, self.liveness)

    def page_link(self, number: int) -> str:
        """The address of page ``number`` of the same view."""
        return run_url(self.run.id, **self.query.params(page=number))


def _counted(index: RunIndex, tags: Mapping[str, str]) -> tuple[tuple[str | None, ...], dict[str, int]]:
    """Each row's change, in row order, and how many rows each filter keeps."""
    changes = tuple(tags.get(row.case_id) for row in index.rows)
    counts = {
        key: sum(1 for row, change in zip(index.rows, changes, strict=True) if f.keep(row, change))
        for key, f in _FILTERS.items()
    }
    return changes, counts


def _kept(index: RunIndex, changes: tuple[str | None, ...], query: RunQuery, search: SearchResult | None,
          order: Mapping[str, int]) -> list[CaseRow]:  # fmt: skip
    """The rows the filter and the search keep, sorted as the query asks."""
    chosen = _FILTERS[query.filter]
    matched = search.case_ids if search is not None else None
    kept = [
        row for row, change in zip(index.rows, changes, strict=True)
        if chosen.keep(row, change) and (matched is None or row.case_id in matched)
    ]  # fmt: skip
    if query.sort == "stored" or (query.sort == "order" and not order):
        return kept[::-1] if query.order == "desc" else kept
    _, key = SORTS[query.sort]
    last = len(order)
    kept.sort(key=lambda row: key(row, order.get(row.case_id, last)), reverse=query.order == "desc")
    return kept


def build_run_page(state: ViewerState, run_id: str, params: Mapping[str, str]) -> RunPage | None:
    """The run page of ``run_id`` as ``params`` ask, or ``None`` when there is no such run."""
    run = state.run(run_id)
    if run is None:
        return None
    query = RunQuery.parse(params, state.settings.page_size)
    verdict = state.verdict(run.id)
    acceptance = (state.acceptances([run.id]) or {}).get(run.id)
    baseline = state.baseline(run, verdict)
    comparison = baseline_index = None
    if baseline is not None:
        comparison, index, baseline_index = state.comparison(run, baseline)
    else:
        index = state.index(run)
    tags = change_tags(comparison)
    installed, installed_note = state.installed.get(run.set_identifier, run.kind)
    search = state.search(run, index, Query(query.q, query.regex)) if query.q else None
    versions = (
        run.id,
        index.version,
        baseline_index.run_id if baseline_index else None,
        baseline_index.version if baseline_index else None,
    )
    changes, counts = state.remember(("counted", *versions), lambda: _counted(index, tags))
    order = installed.order if installed is not None else {}
    listed = (
        "kept",
        *versions,
        query.filter,
        query.sort,
        query.order,
        query.q,
        query.regex,
        installed and installed.loaded_at,
    )
    rows = state.remember(listed, lambda: _kept(index, changes, query, search, order))
    paging = Paging.of(query.page, query.per, len(rows))
    shown = paging.cut(rows)
    cases = state.cases(index, [row.case_id for row in shown])
    beside = [row.case_id for row in shown if tags.get(row.case_id) in BESIDE_BASELINE]
    baseline_cases = state.cases(baseline_index, beside) if baseline_index is not None and beside else {}
    sources = state.sources(run, {row.case_id: row.fingerprint for row in shown})
    columns = columns_for(run.kind, [(row, cases.get(row.case_id)) for row in shown])
    views = tuple(
        case_view(
            CaseParts(
                run,
                row,
                cases.get(row.case_id),
                tags.get(row.case_id),
                sources[row.case_id],
                columns,
                baseline_cases.get(row.case_id),
            )
        )  # fmt: skip
        for row in shown
    )
    filters = tuple(
        FilterChoice(
            f,
            counts[f.key],
            f.key == query.filter,
            (comparison is not None or not f.needs_baseline) and (counts[f.key] > 0 or not f.needs_data),
        )
        for f in FILTERS
    )
    report = Report(
        run=run, verdict=verdict, comparison=comparison, baseline=baseline if comparison is not None else None
    )
    return RunPage(
        run, report, verdict, acceptance, baseline, comparison, attrs.evolve(query, page=paging.number), filters, search,
        paging, views, columns, installed_note, index.seconds, state.liveness(run), state.resume_defaults(),
    )  # fmt: skip


@attrs.frozen
class CasePage:
    """One case of a run, with everything stored about it."""

    run: Run
    report: Report
    view: CaseView
    baseline: Run | None
    position: int
    total: int
    columns: tuple[Column, ...] = ()


def build_case_page(state: ViewerState, run_id: str, case_id: str | None, position: str | None) -> CasePage | None:
    """The page of one case (by id, or by its ``position`` in the run's stored order), or ``None``."""
    run = state.run(run_id)
    if run is None:
        return None
    verdict = state.verdict(run.id)
    baseline = state.baseline(run, verdict)
    comparison = baseline_index = None
    if baseline is not None:
        comparison, index, baseline_index = state.comparison(run, baseline)
    else:
        index = state.index(run)
    row = index.row(case_id) if case_id is not None else None
    at = whole_number(position, max_digits=9) if position is not None else None
    if row is None and case_id is None and at is not None:
        row = index.rows[at] if at < len(index.rows) else None
    if row is None:
        return None
    tag = change_tags(comparison).get(row.case_id)
    case = state.cases(index, [row.case_id]).get(row.case_id)
    baseline_case: CaseResult | None = None
    if baseline_index is not None:
        baseline_case = state.cases(baseline_index, [row.case_id]).get(row.case_id)
    source = state.sources(run, {row.case_id: row.fingerprint})[row.case_id]
    columns = columns_for(run.kind, [(row, case)])
    view = case_view(CaseParts(run, row, case, tag, source, columns, baseline_case, ANSWER_PAGE_CHARS))
    report = Report(
        run=run, verdict=verdict, comparison=comparison, baseline=baseline if comparison is not None else None
    )
    return CasePage(
        run, report, view, baseline if baseline_case is not None else None, row.position, len(index), columns
    )
