"""Judge calibration records in the SQL repository."""

from __future__ import annotations

import json
from typing import Any

from ...shapes import short_repr
from ..stored_checks import stored_count, stored_number, stored_time
from ..values import CalibrationRecord
from .rows import load_json
from .store import SqlStore, guarded

__all__ = ["Calibrations"]


class Calibrations(SqlStore):
    """``JudgeCalibrations`` over the calibration table."""

    @guarded
    def record_calibration(self, record: CalibrationRecord) -> None:
        """Store one calibration (its report as JSON)."""
        with self._atomic():
            self.models.JudgeCalibration.create(
                yardstick=record.yardstick, temperature=record.temperature, grader=record.grader,
                judge_instance=record.judge_instance, judge_model=record.judge_model,
                prompt_version=record.prompt_version, set_identifier=record.set_identifier, repeats=record.repeats,
                n=record.n, agreement=record.agreement, kappa=record.kappa, kappa_low=record.kappa_low,
                kappa_high=record.kappa_high, self_agreement=record.self_agreement,
                report=json.dumps(record.report, ensure_ascii=False, allow_nan=False), calibrated_at=record.calibrated_at,
            )  # fmt: skip

    @guarded
    def calibrations(self, yardstick: str | None = None) -> list[CalibrationRecord]:
        """The stored calibrations (of ``yardstick`` only, when given), newest first."""
        C = self.models.JudgeCalibration
        query = C.select().order_by(C.calibrated_at.desc(), C.id.desc())
        if yardstick is not None:
            query = query.where(C.yardstick == yardstick)
        return [_record(row) for row in self._guarded_rows(iter(query))]


def _record(row: Any) -> CalibrationRecord:
    """A calibration row as a :class:`CalibrationRecord`; a number or time the store should not
    hold (another program's, SQLite keeps text anywhere) is refused by name, as a run's is."""
    owner = f"judge calibration {row.id} ({short_repr(row.yardstick)})"
    counts = {field: stored_count(getattr(row, field), owner, field) for field in ("prompt_version", "repeats", "n")}
    figures = {field: stored_number(getattr(row, field), owner, field) for field in ("temperature", "agreement")}
    optional = {
        field: None if getattr(row, field) is None else stored_number(getattr(row, field), owner, field)
        for field in ("kappa", "kappa_low", "kappa_high", "self_agreement")
    }
    report = load_json(row.report)
    return CalibrationRecord(
        yardstick=row.yardstick, grader=row.grader, judge_instance=row.judge_instance, judge_model=row.judge_model,
        set_identifier=row.set_identifier, calibrated_at=stored_time(row.calibrated_at, owner, "calibrated_at"),
        report=report if isinstance(report, dict) else {}, **counts, **figures, **optional,
    )  # fmt: skip
