"""Which judges may fail a build: ``[gate] min_judge_kappa`` against the stored calibration records.

A judge is known by the yardstick its gradings carry (grader, instance, reported model, prompt
version) and its sampling temperature — the key of a calibration record (``evalkit judge
calibrate``). Its *licence* is its newest record: a judge whose newest κ is at or above
``min_judge_kappa`` gates like any check; one without a record, or whose newest κ is below the
threshold or undefined, is **advisory**. A re-calibration that scores lower withdraws a licence.

:meth:`JudgeGate.apply` is the kernel's step after grading: in the grading of an advisory judge,
every check the grader marked ``judged`` is marked ``advisory`` and the case's pass and score are
taken from the other checks alone (a case with none left passes, with score 1: nothing that gates
failed). A grading that could not be made (``error``) is left alone — a judge's failure is no
verdict. With ``min_judge_kappa`` unset nothing is advisory; each judge's κ is still reported
(:meth:`JudgeGate.metrics`, stored with the run as ``judge_gate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .grading import Grading
from .runs import CaseResult
from .storage.values import CalibrationRecord
from .wording import word_named

__all__ = ["JudgeGate", "JudgeLicence", "judge_lines"]


@attrs.frozen
class JudgeLicence:
    """One judge's standing: its newest calibration's κ and set (``None``: never calibrated)."""

    yardstick: str
    kappa: float | None
    set_identifier: str | None
    gating: bool


@attrs.frozen
class JudgeGate:
    """The threshold (``None``: unset, every judge gates), the judges' newest calibration records
    by ``(yardstick, temperature)``, and the temperature the run's judge samples at."""

    min_kappa: float | None
    records: Mapping[tuple[str, float], CalibrationRecord] = attrs.field(factory=dict)
    temperature: float = 0.0

    @classmethod
    def from_records(
        cls, min_kappa: float | None, records: Iterable[CalibrationRecord], temperature: float
    ) -> JudgeGate:
        """The gate over ``records`` (any order): the newest record of each judge counts."""
        newest: dict[tuple[str, float], CalibrationRecord] = {}
        for record in records:
            key = (record.yardstick, float(record.temperature))
            held = newest.get(key)
            if held is None or record.calibrated_at > held.calibrated_at:
                newest[key] = record
        return cls(min_kappa, newest, float(temperature))

    def licence(self, yardstick: str) -> JudgeLicence:
        """The standing of the judge whose gradings carry ``yardstick``."""
        record = self.records.get((yardstick, self.temperature))
        kappa = record.kappa if record is not None else None
        gating = self.min_kappa is None or (kappa is not None and kappa >= self.min_kappa)
        return JudgeLicence(yardstick, kappa, record.set_identifier if record is not None else None, gating)

    def apply(self, grading: Grading) -> Grading:
        """``grading`` with its judged checks advisory when its judge is not licensed (see the module docstring)."""
        if self.min_kappa is None or grading.error is not None or not any(c.judged for c in grading.checks):
            return grading
        if self.licence(grading.yardstick).gating:
            return grading
        checks = tuple(attrs.evolve(c, advisory=True) if c.judged else c for c in grading.checks)
        gating = [c for c in checks if not c.advisory]
        held = sum(1 for c in gating if c.passed)
        score = held / len(gating) if gating else 1.0
        return attrs.evolve(grading, checks=checks, passed=held == len(gating), score=score)

    def metrics(self, cases: Sequence[CaseResult]) -> Mapping[str, Any] | None:
        """``{"judge_gate": …}``: the threshold, each judge of ``cases`` with its κ, and how many
        checks were advisory; ``None`` when no case has a judged check."""
        yardsticks = dict.fromkeys(c.yardstick for c in cases if c.yardstick and any(k.judged for k in c.checks))
        if not yardsticks:
            return None
        judges = []
        for yardstick in yardsticks:
            licence = self.licence(yardstick)
            judges.append({
                "yardstick": yardstick, "kappa": licence.kappa, "calibration_set": licence.set_identifier,
                "gating": licence.gating,
            })  # fmt: skip
        advisory = sum(1 for c in cases for k in c.checks if k.advisory)
        return {"judge_gate": {"min_judge_kappa": self.min_kappa, "judges": judges, "advisory_checks": advisory}}


def judge_lines(metrics: Mapping[str, Any] | None) -> list[str]:
    """The lines a run's output says about its judges (from its stored ``judge_gate`` metrics):
    each judge's κ or ``uncalibrated``, and whether its verdicts gate."""
    gate = (metrics or {}).get("judge_gate")
    if not isinstance(gate, Mapping) or not isinstance(gate.get("judges"), list):
        return []
    threshold = gate.get("min_judge_kappa")
    lines = []
    for judge in gate["judges"]:
        if not isinstance(judge, Mapping):
            continue
        kappa, calibrated = judge.get("kappa"), judge.get("calibration_set")
        # the stored yardstick and set, as a message names a word (a line break in one printed a line
        # of its own in a report's notes, which keep their lines)
        calibrated = word_named(calibrated) if isinstance(calibrated, str) else None
        standing = (
            "uncalibrated" if calibrated is None
            else f"κ {kappa:.2f} (calibrated on {calibrated})" if isinstance(kappa, (int, float)) else f"κ undefined (calibrated on {calibrated})"
        )  # fmt: skip
        if not isinstance(threshold, (int, float)):
            role = "its verdicts gate ([gate] min_judge_kappa is unset)"
        elif judge.get("gating"):
            role = f"its verdicts gate (min_judge_kappa {threshold:g})"
        else:
            role = f"its verdicts are advisory: below min_judge_kappa {threshold:g}, they do not fail the run"
        lines.append(f"Judge {word_named(judge.get('yardstick'))}: {standing}; {role}.")
    advisory = gate.get("advisory_checks")
    if isinstance(advisory, int) and advisory:
        lines.append(f"{advisory} advisory judged check{'s' if advisory != 1 else ''} left out of the gated figures.")
    return lines
