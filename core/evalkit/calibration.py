"""Calibration sets: items people have labelled, on which a judge is measured before it may gate.

A calibration set names the grader it calibrates (``rubric``, ``decision``, ``groundedness``,
``relevance``), the scale of its labels in order (``[fail, pass]``, ``[0, 1, 2, 3]``) and its
items, each with what that judge sees and the people's label. It ships like a golden set: from a
provider in the ``evalkit.calibration_sets`` entry-point group (``provider.calibration_sets()``),
or from a set file with ``kind: calibration`` among the configuration's ``[sets] paths``.
The catalog of the installed ones is :func:`evalkit.catalog.calibration_set_catalog`.
``evalkit judge calibrate`` asks the judge every item and measures its agreement with the labels
(:mod:`evalkit.agreement`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from .printable import not_nfc

__all__ = [
    "CALIBRATED_GRADERS",
    "CalibrationItem",
    "CalibrationSet",
    "calibration_set_problems",
    "item_problems",
]

#: The graders a calibration set may calibrate, and the fields each one's items need.
CALIBRATED_GRADERS: dict[str, tuple[str, ...]] = {
    "rubric": ("prompt", "answer", "criterion"),
    "decision": ("prompt", "answer"),
    "groundedness": ("answer", "context"),
    "relevance": ("query", "document"),
}


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        return (value,)
    return tuple(value)


@attrs.frozen
class CalibrationItem:
    """One labelled item: what the judge sees and the label people gave it.

    ``prompt`` and ``answer`` for the rubric and decision judges (``criterion`` for a rubric,
    ``reference`` as the decision judge's evidence), ``answer`` and ``context`` (the passages) for
    groundedness, ``query`` and ``document`` for relevance.
    """

    id: str
    label: str | int
    prompt: str | None = None
    answer: str | None = None
    reference: str | None = None
    context: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    criterion: str | None = None
    query: str | None = None
    document: str | None = None


@attrs.frozen
class CalibrationSet:
    """People's labels for one grader's judge: ``labels`` is the scale in order (lowest first),
    ``items`` the labelled items. The identifier is namespaced like a golden set's."""

    identifier: str
    name: str
    grader: str
    labels: tuple[str | int, ...] = attrs.field(converter=_tuple)
    items: tuple[CalibrationItem, ...] = attrs.field(default=(), converter=_tuple)
    description: str = ""

    @property
    def ordered(self) -> bool:
        """Whether the scale has more than two labels: κ is then quadratic-weighted (a near miss
        costs less than a far one); two labels are weighted alike either way."""
        return len(self.labels) > 2


def _label_key(label: Any) -> tuple[type, Any]:
    return (type(label), label)


def item_problems(item: CalibrationItem, grader: str, labels: Sequence[Any]) -> list[str]:
    """What is wrong with one item of a set calibrating ``grader`` on ``labels``."""
    problems = []
    if not isinstance(item.id, str) or not item.id.strip():
        problems.append("an item has no id")
    where = f"item {item.id!r}"
    if _label_key(item.label) not in {_label_key(label) for label in labels}:
        shown = ", ".join(repr(label) for label in labels)
        problems.append(f"{where}: label {item.label!r} is not on the scale ({shown})")
    for field in CALIBRATED_GRADERS.get(grader, ()):
        value = getattr(item, field)
        if field == "context":
            if not value or not all(isinstance(v, str) and v.strip() for v in value):
                problems.append(f"{where}: the {grader} judge needs context (the passages, non-empty strings)")
        elif not isinstance(value, str) or not value.strip():
            problems.append(f"{where}: the {grader} judge needs {field}")
    return problems


def calibration_set_problems(calibration: Any) -> list[str]:
    """Every problem of a calibration set, each a sentence; empty when it is usable."""
    if not isinstance(calibration, CalibrationSet):
        return [f"{type(calibration).__name__} is not an evalkit.calibration.CalibrationSet"]
    problems = []
    if calibration.grader not in CALIBRATED_GRADERS:
        problems.append(f"grader {calibration.grader!r} is not one a calibration set calibrates ({', '.join(CALIBRATED_GRADERS)})")
    labels = calibration.labels
    if len(labels) < 2:
        problems.append("labels must name at least two labels, lowest first")
    if any(isinstance(label, bool) or not isinstance(label, (str, int)) for label in labels):
        problems.append("every label is a string or an integer")
    elif len({_label_key(label) for label in labels}) != len(labels):
        problems.append("a label appears twice on the scale")
    if not calibration.items:
        problems.append("the set has no items")
    seen: set[str] = set()
    for item in calibration.items:
        if not isinstance(item, CalibrationItem):
            problems.append(f"{type(item).__name__} is not an evalkit.calibration.CalibrationItem")
            continue
        if item.id in seen:
            problems.append(f"item id {item.id!r} is used twice")
        elif isinstance(item.id, str) and (unnormalised := not_nfc(item.id)) is not None:
            problems.append(f"item id {unnormalised}")
        seen.add(item.id)
        problems.extend(item_problems(item, calibration.grader, labels))
    return problems

