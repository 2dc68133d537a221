"""Migration 3: accepted baselines, and retrieval MRR stored as MRR@k.

Frozen: never edit.

The run table gets ``accepted_at``, ``acceptance`` (how), ``accepted_by`` and ``acceptance_reason``
and an index on (set, accepted_at); existing complete runs that did not regress count as accepted
(``migrated``). It also gets ``case_fingerprints`` (the set version a run answered, as one JSON map;
migration 6 moves it onto the case rows and drops it).

Stored retrieval metrics are renamed to what they are. Before schema 3 a retrieval run stored
``mrr``: the mean reciprocal rank over the whole fetched ranking, ``max(k, 12)`` ids deep, while the
label suggested a cut-off of ``k``. Since schema 3 the store keeps ``mrr_at_k`` (and each question's
``reciprocal_rank_at_k``), the reciprocal rank of the first relevant id within the first ``k`` ids,
0 past it (trec_eval's ``recip_rank`` on the ranking cut at ``k``). Stored rows are rewritten
exactly where the data allows:

* a question's stored ``reciprocal_rank`` (``1/r``) becomes ``reciprocal_rank_at_k``: the same
  value when ``r <= k``, else 0.0 — exact, since ``k`` is stored beside it;
* a run stored with ``k >= 12`` fetched exactly ``k`` ids, so its ``mrr`` *was* MRR@k: renamed;
* a run with ``k < 12`` whose questions all kept their detail (privacy ``redacted``/``full``):
  MRR@k is recomputed from them, overall and per form and hard class;
* otherwise (privacy ``metadata``, ``k < 12``) MRR@k cannot be known: ``mrr_at_k`` is ``null``
  and the old value is kept as ``mrr_at_depth`` with ``mrr_depth`` = 12, its real cut-off.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import peewee as pw

NAME = "accepted baselines (who, when, why); retrieval MRR stored as MRR@k"

#: The fetch depth of every stored retrieval run before schema 3 when k was smaller.
FETCH_DEPTH = 12


def run_columns() -> list[tuple[str, pw.Field]]:
    """Columns added to the run table: whether and why the run is an accepted baseline, and the
    fingerprint of each case of the set version it ran.

    A run is accepted when ``accepted_at`` is set; ``acceptance`` says how (see
    :data:`evalkit.baselines.ACCEPTANCE_KINDS`), ``accepted_by`` who and ``acceptance_reason`` why.
    ``case_fingerprints`` is a JSON object ``{case id: fingerprint}`` (``NULL`` for runs stored
    before: every case of theirs counts as unchanged in a comparison).
    """
    return [
        ("accepted_at", pw.DoubleField(null=True)),
        ("acceptance", pw.CharField(max_length=16, null=True)),
        ("accepted_by", pw.TextField(null=True)),
        ("acceptance_reason", pw.TextField(null=True)),
        ("case_fingerprints", pw.TextField(null=True)),
    ]


#: Indexes added: the accepted runs of a set, most recently accepted first.
INDEXES = (("evalkit_run_set_accepted", "evalkit_run", ("set_identifier", "accepted_at")),)


def up(migrator: Any, db: pw.Database) -> None:
    """Add the acceptance columns and index (those missing), accept the runs that were baselines,
    and rename the stored retrieval metrics."""
    existing = {column.name for column in db.get_columns("evalkit_run")}
    migrator.migrate(*(migrator.add_column("evalkit_run", name, field) for name, field in run_columns() if name not in existing))
    indexed = {index.name for index in db.get_indexes("evalkit_run")}
    migrator.migrate(*(migrator.add_index(table, columns, name=name) for name, table, columns in INDEXES if name not in indexed))
    # Existing complete runs that did not regress count as accepted: those whose stored verdict is
    # "baseline" or "ok", and those stored before verdicts were kept (they were baselines under the
    # rules they were stored with). Prompt runs only when verified: no other prompt run has a scope.
    eligible = "status = 'complete' AND (kind = 'retrieval' OR verified = %s)" % ("1" if isinstance(db, pw.SqliteDatabase) else "true")
    db.execute_sql(
        "UPDATE evalkit_run SET accepted_at = COALESCE(finished_at, started_at), acceptance = 'migrated', "
        "acceptance_reason = 'a complete run whose stored verdict was ' || verdict "
        f"WHERE {eligible} AND verdict IN ('baseline', 'ok')"
    )
    db.execute_sql(
        "UPDATE evalkit_run SET accepted_at = COALESCE(finished_at, started_at), acceptance = 'migrated', "
        "acceptance_reason = 'a complete run stored before verdicts were kept' "
        f"WHERE {eligible} AND verdict IS NULL"
    )
    migrate_retrieval_metric_names(db)


def reciprocal_rank_at_k(reciprocal_rank: float, k: int) -> float:
    """``1/r`` cut at ``k``: unchanged when the first relevant rank ``r`` is at most ``k``, else 0.0."""
    if reciprocal_rank <= 0:
        return 0.0
    return reciprocal_rank if round(1 / reciprocal_rank) <= k else 0.0


def _load(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _migrated_detail(detail: Any) -> Any:
    """A case detail with ``reciprocal_rank`` replaced by ``reciprocal_rank_at_k`` (or ``None``: unchanged)."""
    if not isinstance(detail, dict) or "reciprocal_rank" not in detail:
        return None
    k = detail.get("k")
    rr = detail.pop("reciprocal_rank")
    if type(k) is int and k > 0 and isinstance(rr, (int, float)):
        detail["reciprocal_rank_at_k"] = reciprocal_rank_at_k(float(rr), k)
    else:
        detail["reciprocal_rank_at_k"] = None
    return detail


def _rename_breakdowns(document: dict[str, Any], value_for: Any) -> None:
    for key in ("by_form", "by_hard_class"):
        groups = document.get(key)
        if not isinstance(groups, dict):
            continue
        for name, group in groups.items():
            if isinstance(group, dict) and "mrr" in group:
                old = group.pop("mrr")
                group["mrr_at_k"] = value_for(key, name, old)


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _migrated_metrics(metrics: Any, details: list[Mapping[str, Any]]) -> Any:
    """The run metrics with ``mrr`` renamed or recomputed (``None``: nothing to change)."""
    if not isinstance(metrics, dict) or not isinstance(metrics.get("retrieval"), dict):
        return None
    document = metrics["retrieval"]
    if "mrr" not in document:
        return None
    k = document.get("k")
    old = document.pop("mrr")
    if type(k) is int and k >= FETCH_DEPTH:
        document["mrr_at_k"] = old
        _rename_breakdowns(document, lambda _key, _name, value: value)
        return metrics
    scored = document.get("question_count")
    usable = [d for d in details if isinstance(d.get("reciprocal_rank_at_k"), (int, float))]
    if type(k) is int and isinstance(scored, int) and scored == len(usable) == len(details):
        groups: dict[tuple[str, str], list[float]] = {}
        for detail in usable:
            value = float(detail["reciprocal_rank_at_k"])
            groups.setdefault(("by_form", str(detail.get("form"))), []).append(value)
            if detail.get("hard_class") is not None:
                groups.setdefault(("by_hard_class", str(detail["hard_class"])), []).append(value)
        document["mrr_at_k"] = _mean([float(d["reciprocal_rank_at_k"]) for d in usable])
        _rename_breakdowns(document, lambda key, name, _value: _mean(groups.get((key, name), [])))
        return metrics
    document["mrr_at_k"] = None
    document["mrr_at_depth"] = old
    document["mrr_depth"] = FETCH_DEPTH
    _rename_breakdowns(document, lambda _key, _name, _value: None)
    return metrics


def migrate_retrieval_metric_names(db: pw.Database) -> None:
    """Rewrite every stored retrieval run's metrics and case details (see the module docstring)."""
    runs = db.execute_sql("SELECT id, metrics FROM evalkit_run WHERE kind = 'retrieval'").fetchall()
    param = db.param
    for run_id, metrics_text in runs:
        details: list[Mapping[str, Any]] = []
        cases = db.execute_sql(
            f"SELECT id, detail FROM evalkit_case WHERE run_id = {param} AND errored = {param}", (run_id, False)
        ).fetchall()
        for case_pk, detail_text in cases:
            detail = _migrated_detail(_load(detail_text))
            if detail is None:
                continue
            details.append(detail)
            db.execute_sql(f"UPDATE evalkit_case SET detail = {param} WHERE id = {param}", (_dump(detail), case_pk))
        metrics = _migrated_metrics(_load(metrics_text), details)
        if metrics is not None:
            db.execute_sql(f"UPDATE evalkit_run SET metrics = {param} WHERE id = {param}", (_dump(metrics), run_id))
