"""Judge calibration records round-trip through the SQL repository on each engine, hostile text included."""

from __future__ import annotations

from evalkit.storage import JudgeCalibrations, capabilities
from evalkit.storage.values import CalibrationRecord


def record(yardstick: str, at: float, kappa: float | None = 0.75, **fields: object) -> CalibrationRecord:
    values: dict[str, object] = {
        "yardstick": yardstick, "temperature": 0.0, "grader": "rubric", "judge_instance": "judge",
        "judge_model": "m\x00\ud800 [bold]x", "prompt_version": 1, "set_identifier": "shop.labels", "repeats": 1,
        "n": 120, "agreement": 0.9, "kappa": kappa, "kappa_low": 0.6 if kappa is not None else None,
        "kappa_high": 0.85 if kappa is not None else None, "self_agreement": None, "calibrated_at": at,
        "report": {"n": 120, "labels": ["fail", "pass"], "note": "\u202e"},
    }  # fmt: skip
    values.update(fields)
    return CalibrationRecord(**values)  # type: ignore[arg-type]


def test_records_are_kept_newest_first_and_read_by_yardstick(repo: object) -> None:
    keeper = capabilities(repo).calibrations
    assert isinstance(keeper, JudgeCalibrations)
    assert keeper.calibrations() == []
    older = record("deterministic:rubric:judge:m:v1", 100.0)
    newer = record("deterministic:rubric:judge:m:v1", 200.0, kappa=None, self_agreement=0.5, temperature=0.7)
    other = record("decision:judge:m:v1", 150.0, grader="decision")
    for item in (older, newer, other):
        keeper.record_calibration(item)
    assert keeper.calibrations() == [newer, other, older]
    assert keeper.calibrations("deterministic:rubric:judge:m:v1") == [newer, older]
    assert keeper.calibrations("nobody") == []
