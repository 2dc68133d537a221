"""One case as a page shows it: its result, checks with their reasons, judge reasons, figures,
what it was asked (:mod:`.installed`), its answer — and, for a changed case, the baseline's
answer beside it with a word diff.

The figures columns are a registry (:data:`COLUMNS`): a column is shown when a case of the page
has a value for it, so a figure the store learns to keep (a cost) is one more entry here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping

import attrs

from ..case_texts import CaseSource
from ..privacy import scrub
from ..prompts import displayed_check_name
from ..runs import CaseResult, Run, RunKind
from .diff import WordDiff, word_diff
from .index import CaseRow

__all__ = [
    "ANSWER_EXCERPT_CHARS",
    "COLUMNS",
    "CaseParts",
    "CaseView",
    "CheckLine",
    "Column",
    "Excerpt",
    "anchor",
    "case_view",
    "columns_for",
    "excerpt",
    "result_words",
]

#: How much of an answer a list of cases shows (the case's own page shows more).
ANSWER_EXCERPT_CHARS = 2_000
#: How much of an answer a case's page shows.
ANSWER_PAGE_CHARS = 200_000
#: How much of a judge's detail value or a check's reason is shown.
DETAIL_CHARS = 4_000
#: The changes for which the baseline's answer is shown beside the case's.
BESIDE_BASELINE = frozenset({"regressed", "edited", "fixed"})


@attrs.frozen
class Excerpt:
    """The start of a text, and how many characters were left out."""

    text: str
    left_out: int = 0


def excerpt(text: str, limit: int) -> Excerpt:
    """``text`` cut to ``limit`` characters."""
    return Excerpt(text, 0) if len(text) <= limit else Excerpt(text[:limit], len(text) - limit)


def anchor(case_id: str) -> str:
    """A case's anchor in a page (``c-`` and 16 hex digits: any id becomes a valid fragment)."""
    return "c-" + hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@attrs.frozen
class CheckLine:
    """One named check: whether it held, and why not (its error or detail)."""

    name: str
    passed: bool
    reason: Excerpt | None = None


@attrs.frozen
class Column:
    """A figure of a case shown as a column: ``value`` gives its text for a case (``None``: none)."""

    key: str
    label: str
    value: Callable[[CaseRow, CaseResult | None], str | None]
    kinds: frozenset[RunKind] = frozenset(RunKind)


def _latency(row: CaseRow, case: CaseResult | None) -> str | None:
    return f"{row.latency_s * 1000:,.0f} ms"


def _tokens(row: CaseRow, case: CaseResult | None) -> str | None:
    if row.input_tokens is None and row.output_tokens is None:
        return None
    return f"{row.input_tokens if row.input_tokens is not None else '?':,} / {row.output_tokens if row.output_tokens is not None else '?':,}"


def _measure(name: str) -> Callable[[CaseRow, CaseResult | None], str | None]:
    def value(row: CaseRow, case: CaseResult | None) -> str | None:
        measures = case.measures if case is not None else None
        number = (measures or {}).get(name)
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            return None
        return f"{number:.3f}"

    return value


_RETRIEVAL = frozenset({RunKind.RETRIEVAL})
#: The figures columns, in the order shown. A new figure (cost, when the store keeps it) is a
#: Column here; it appears wherever a case of the page carries it.
COLUMNS: tuple[Column, ...] = (
    Column("rr", "RR@k", _measure("reciprocal_rank_at_k"), _RETRIEVAL),
    Column("recall", "recall@k", _measure("recall_at_k"), _RETRIEVAL),
    Column("ndcg", "nDCG@k", _measure("ndcg_at_k"), _RETRIEVAL),
    Column("latency", "Latency", _latency),
    Column("tokens", "Tokens in / out", _tokens),
)


def columns_for(kind: RunKind, cells: list[tuple[CaseRow, CaseResult | None]]) -> tuple[Column, ...]:
    """The columns a page of cases shows: those of its kind that one of its cases has a value for."""
    return tuple(
        column for column in COLUMNS if kind in column.kinds and any(column.value(row, case) is not None for row, case in cells)
    )


@attrs.frozen
class CaseView:
    """Everything a page shows of one case (``case`` is ``None`` when it vanished from the store
    between reading the index and the page)."""

    row: CaseRow
    case: CaseResult | None
    result: str
    tag: str | None
    source: CaseSource
    answer: Excerpt | None
    answer_note: str
    checks: tuple[CheckLine, ...]
    judge: tuple[tuple[str, Excerpt], ...]
    cells: tuple[str | None, ...]
    baseline_case: CaseResult | None = None
    baseline_answer: Excerpt | None = None
    diff: WordDiff | None = None
    diff_note: str = ""
    ranking: tuple[tuple[str, bool], ...] | None = None
    not_retrieved: tuple[str, ...] = ()
    ranking_note: str = ""

    @property
    def anchor(self) -> str:
        """The case's anchor in its page."""
        return anchor(self.row.case_id)

    @property
    def status(self) -> str:
        """``pass``, ``fail`` or ``error``."""
        return "error" if self.row.errored else ("pass" if self.row.passed else "fail")

    @property
    def failed_checks(self) -> tuple[CheckLine, ...]:
        """The checks that did not hold."""
        return tuple(c for c in self.checks if not c.passed)


def result_words(kind: RunKind, row: CaseRow) -> str:
    """A case's result in words: ``pass``/``FAIL``/``ERROR``; a question's ``top-1 hit``,
    ``top-3 hit`` or ``miss``."""
    if row.errored:
        return "ERROR"
    if kind is RunKind.RETRIEVAL:
        return "top-1 hit" if row.passed else ("top-3 hit" if row.score >= 1.0 else "miss")
    return ("pass" if row.passed else "FAIL") + (" (unstable)" if row.unstable else "")


def _checks(case: CaseResult | None, limit: int) -> tuple[CheckLine, ...]:
    if case is None:
        return ()
    lines = [
        CheckLine(displayed_check_name(check.name), check.passed, excerpt(scrub(why), limit) if (why := check.error or check.detail) else None)
        for check in case.checks
    ]
    if case.errored:
        lines.append(CheckLine("error", False, excerpt(scrub(case.error or ""), limit)))
    return tuple(lines)


#: Detail keys a retrieval case carries that the page shows as its ranking and figures instead.
_RETRIEVAL_DETAIL = frozenset({"ranked_ids", "ranking", "reciprocal_rank_at_k", "recall_at_k", "ndcg_at_k", "k", "form", "hard_class"})


def _judge(case: CaseResult | None, kind: RunKind, limit: int) -> tuple[tuple[str, Excerpt], ...]:
    """The grader's detail (judge reasons, scores) as key and text."""
    detail = case.detail if case is not None else None
    if not isinstance(detail, Mapping):
        return ()
    entries = []
    for key, value in detail.items():
        if kind is RunKind.RETRIEVAL and key in _RETRIEVAL_DETAIL:
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        entries.append((str(key), excerpt(scrub(text), limit)))
    return tuple(entries)


def answer_note(run: Run, case: CaseResult | None) -> str:
    """Why no answer is shown."""
    if case is None:
        return "the case is no longer in the store"
    if case.errored:
        return "no answer: the case errored"
    if run.privacy == "metadata":
        return "not stored (privacy metadata)"
    return f"not stored (privacy {run.privacy})"


def _ranking_note(run: Run, case: CaseResult | None) -> str:
    if case is not None and case.errored:
        return f"no ranking: the question errored ({case.error})"
    return f"ranking not stored (privacy {run.privacy})"


def _ranking(case: CaseResult | None, source: CaseSource) -> tuple[tuple[tuple[str, bool], ...] | None, tuple[str, ...]]:
    ranked = (case.detail or {}).get("ranked_ids") if case is not None else None
    if not isinstance(ranked, (list, tuple)):
        return None, ()
    expected = set(source.text.expected_ids or ()) if source.shown and source.text is not None else set()
    ids = tuple(str(item) for item in ranked)
    missing = tuple(doc for doc in (source.text.expected_ids or ()) if doc not in ids) if expected and source.text else ()
    return tuple((doc, doc in expected) for doc in ids), missing


@attrs.frozen
class CaseParts:
    """What :func:`case_view` builds one case's view from."""

    run: Run
    row: CaseRow
    case: CaseResult | None
    tag: str | None
    source: CaseSource
    columns: tuple[Column, ...] = ()
    baseline_case: CaseResult | None = None
    answer_chars: int = ANSWER_EXCERPT_CHARS


def case_view(parts: CaseParts) -> CaseView:
    """The view of one case. Its stored texts are scrubbed of secrets before they are cut or
    diffed: a secret cut in half, or split between two diff segments, would not be recognised
    when the page prints it."""
    run, case = parts.run, parts.case
    limit = parts.answer_chars
    text = scrub(case.answer_text) if case is not None and case.answer_text is not None else None
    baseline = parts.baseline_case
    before = scrub(baseline.answer_text) if baseline is not None and baseline.answer_text is not None else None
    answer = excerpt(text, limit) if text is not None else None
    baseline_answer = excerpt(before, limit) if before is not None else None
    diff, diff_note = None, ""
    if text is not None and before is not None:
        if len(text) > limit or len(before) > limit:
            diff_note = (
                "the answers are long: their word diff is on the case's own page" if limit < ANSWER_PAGE_CHARS
                else "the answers are too long to diff word by word; they are shown side by side"
            )  # fmt: skip
        else:
            diff = word_diff(before, text)
            if diff is None:
                diff_note = "the answers are too long to diff word by word; they are shown side by side"
    ranking, missing = _ranking(case, parts.source) if run.kind is RunKind.RETRIEVAL else (None, ())
    return CaseView(
        row=parts.row,
        case=case,
        result=result_words(run.kind, parts.row),
        tag=parts.tag,
        source=parts.source,
        answer=answer,
        answer_note="" if answer is not None else answer_note(run, case),
        checks=_checks(case, DETAIL_CHARS),
        judge=_judge(case, run.kind, DETAIL_CHARS),
        cells=tuple(column.value(parts.row, case) for column in parts.columns),
        baseline_case=baseline,
        baseline_answer=baseline_answer,
        diff=diff,
        diff_note=diff_note,
        ranking=ranking,
        not_retrieved=missing,
        ranking_note="" if ranking is not None else _ranking_note(run, case),
    )
