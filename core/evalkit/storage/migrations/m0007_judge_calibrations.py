"""Migration 7 (to be numbered after the other branches' migrations when merged): judge
calibration records — a judge measured against people's labels (``evalkit judge calibrate``).

Frozen: never edit. The table is built from a copy of the model class as this version declared it
(:func:`calibration_table`), not from :mod:`evalkit.storage.models`.
"""

from __future__ import annotations

from typing import Any

import peewee as pw

NAME = "judge calibration records: a judge's agreement with people's labels, by its yardstick"


def calibration_table(db: pw.Database) -> type[pw.Model]:
    """The calibration table as this migration created it, bound to ``db``.

    One row per calibration: the judge's yardstick (grader, instance, reported model, prompt
    version) and temperature — its identity —, the calibration set, the figures a gate reads (n,
    agreement, κ and its interval, self-agreement) and the whole report as JSON.
    """

    class JudgeCalibration(pw.Model):
        id = pw.AutoField()
        yardstick = pw.TextField()
        temperature = pw.DoubleField()
        grader = pw.TextField()
        judge_instance = pw.TextField()
        judge_model = pw.TextField()
        prompt_version = pw.IntegerField()
        set_identifier = pw.TextField()
        repeats = pw.IntegerField()
        n = pw.IntegerField()
        agreement = pw.DoubleField()
        kappa = pw.DoubleField(null=True)
        kappa_low = pw.DoubleField(null=True)
        kappa_high = pw.DoubleField(null=True)
        self_agreement = pw.DoubleField(null=True)
        report = pw.TextField()
        calibrated_at = pw.DoubleField()

        class Meta:
            database = db
            table_name = "evalkit_judge_calibration"
            indexes = ((("yardstick", "temperature", "calibrated_at"), False),)

    return JudgeCalibration


def up(migrator: Any, db: pw.Database) -> None:
    """Create the calibration table (kept when the database already holds it)."""
    db.create_tables([calibration_table(db)], safe=True)
