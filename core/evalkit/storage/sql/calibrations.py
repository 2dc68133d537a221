"""Judge calibration records in the SQL repository."""

from __future__ import annotations

import json

from ..values import CalibrationRecord
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
        return [
            CalibrationRecord(
                yardstick=row.yardstick, temperature=row.temperature, grader=row.grader,
                judge_instance=row.judge_instance, judge_model=row.judge_model, prompt_version=row.prompt_version,
                set_identifier=row.set_identifier, repeats=row.repeats, n=row.n, agreement=row.agreement,
                kappa=row.kappa, kappa_low=row.kappa_low, kappa_high=row.kappa_high,
                self_agreement=row.self_agreement, calibrated_at=row.calibrated_at, report=_report(row.report),
            )  # fmt: skip
            for row in self._guarded_rows(iter(query))
        ]


def _report(text: str | None) -> dict[str, object]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
