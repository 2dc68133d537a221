"""How far a judge agrees with people, and with itself: the statistics of judge calibration.

Pure functions over plain sequences of labels (strings or integers, as a calibration set
declares them, in their declared order), returning frozen results; the standard library only.

* :func:`cohen_kappa` — Cohen's κ (Cohen 1960, Educ. Psychol. Meas. 20:37–46): agreement beyond
  chance, ``κ = 1 − Σ w·O / Σ w·E`` over the confusion matrix ``O`` and the matrix ``E`` chance
  would give with the same margins. Unweighted (``w = 1`` off the diagonal) for nominal labels;
  linear (``|i − j|``) or quadratic (``(i − j)²``) weights for an ordered scale (Cohen 1968,
  Psychol. Bull. 70:213–220), where a near miss costs less than a far one. With a seeded 95 %
  percentile bootstrap interval over items.
* :func:`judge_agreement` — the calibration report: raw agreement, κ, the confusion matrix over
  the declared labels (rows: the people's labels, columns: the judge's), precision and recall
  per label, and the judge's positive rate beside the people's.
* :func:`krippendorff_alpha` — Krippendorff's α (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability", Annenberg School for Communication; Hayes & Krippendorff 2007, Commun.
  Methods Meas. 1:77–89) for the judge's agreement with itself across repeats: items × repeats,
  missing answers allowed, at the nominal, ordinal or interval level.

κ and α are ``None`` when undefined: when chance agreement is already perfect (every label the
same), agreement beyond chance has no scale.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Collection, Hashable, Sequence
from typing import Literal

import attrs

from .stats._checks import StatisticsInputError, count, probability
from .stats._checks import seed as check_seed
from .stats.intervals import Interval
from .stats.resampling import quantile

__all__ = [
    "Agreement",
    "Kappa",
    "KrippendorffAlpha",
    "LabelAgreement",
    "cohen_kappa",
    "confusion_matrix",
    "judge_agreement",
    "krippendorff_alpha",
]

Label = Hashable
Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval"]


def _label_positions(labels: Sequence[Label]) -> dict[tuple[type, Label], int]:
    """The declared labels by (type, value), so ``1``, ``True`` and ``"1"`` stay distinct."""
    if isinstance(labels, (str, bytes)) or not labels:
        raise StatisticsInputError(f"labels must be a non-empty sequence of labels, got {labels!r}")
    positions: dict[tuple[type, Label], int] = {}
    for index, label in enumerate(labels):
        if not isinstance(label, Hashable) or label is None:
            raise StatisticsInputError(f"labels[{index}] is {label!r}, not a label (a string or an integer)")
        key = (type(label), label)
        if key in positions:
            raise StatisticsInputError(f"labels[{index}] is {label!r} again: each label once")
        positions[key] = index
    return positions


def _positions(
    values: Sequence[Label | None],
    name: str,
    positions: dict[tuple[type, Label], int],
    labels: Sequence[Label],
    *,
    missing: bool = False,
) -> list[int]:
    """Each value's position among the declared labels (``None`` kept as ``None`` when
    ``missing`` answers are allowed); a value outside them is refused, naming it."""
    result: list = []
    for index, value in enumerate(values):
        if value is None and missing:
            result.append(None)
            continue
        position = positions.get((type(value), value)) if isinstance(value, Hashable) else None
        if position is None:
            raise StatisticsInputError(f"{name}[{index}] is {value!r}, not one of the labels {list(labels)!r}")
        result.append(position)
    return result


def _paired_positions(reference: Sequence[Label], judged: Sequence[Label], labels: Sequence[Label]) -> tuple[list[int], list[int]]:
    positions = _label_positions(labels)
    if len(reference) != len(judged):
        raise StatisticsInputError(
            f"reference and judged must pair item by item: {len(reference)} reference labels, {len(judged)} judged"
        )
    if not reference:
        raise StatisticsInputError("no items: reference and judged are empty")
    return _positions(reference, "reference", positions, labels), _positions(judged, "judged", positions, labels)


def _matrix(rows: Sequence[int], columns: Sequence[int], size: int) -> list[list[int]]:
    cells = Counter(r * size + c for r, c in zip(rows, columns, strict=True))
    return [[cells[r * size + c] for c in range(size)] for r in range(size)]


def confusion_matrix(reference: Sequence[Label], judged: Sequence[Label], labels: Sequence[Label]) -> tuple[tuple[int, ...], ...]:
    """Counts of items by (the people's label, the judge's label), in the declared label order:
    ``matrix[i][j]`` items labelled ``labels[i]`` by people and ``labels[j]`` by the judge."""
    rows, columns = _paired_positions(reference, judged, labels)
    return tuple(tuple(row) for row in _matrix(rows, columns, len(labels)))


def _weight_matrix(size: int, weights: Weights) -> list[list[float]]:
    if weights is None:
        return [[0.0 if i == j else 1.0 for j in range(size)] for i in range(size)]
    if weights == "linear":
        return [[float(abs(i - j)) for j in range(size)] for i in range(size)]
    if weights == "quadratic":
        return [[float((i - j) ** 2) for j in range(size)] for i in range(size)]
    raise StatisticsInputError(f"weights is {weights!r}: None, 'linear' or 'quadratic'")


def _kappa_from_counts(cells: Sequence[Sequence[int]], weight: Sequence[Sequence[float]]) -> float | None:
    size = len(cells)
    rows = [sum(row) for row in cells]
    columns = [sum(cells[r][c] for r in range(size)) for c in range(size)]
    total = sum(rows)
    observed = math.fsum(weight[r][c] * cells[r][c] for r in range(size) for c in range(size))
    expected = math.fsum(weight[r][c] * rows[r] * columns[c] for r in range(size) for c in range(size)) / total
    if expected == 0:
        return None
    return 1.0 - observed / expected


@attrs.frozen
class Kappa:
    """Cohen's κ with a seeded percentile bootstrap interval over items.

    ``value`` and ``interval`` are ``None`` when κ is undefined (chance agreement already perfect:
    every item has one and the same label on both sides). ``weights`` is ``None`` (unweighted),
    ``linear`` or ``quadratic``. Resamples where κ is undefined are left out of the interval
    (``undefined_resamples`` counts them).
    """

    value: float | None
    interval: Interval | None
    weights: str | None
    resamples: int
    seed: int
    undefined_resamples: int = 0


def cohen_kappa(
    reference: Sequence[Label],
    judged: Sequence[Label],
    labels: Sequence[Label],
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    resamples: int = 2_000,
    seed: int = 0,
) -> Kappa:
    """Cohen's κ of ``judged`` against ``reference`` (item by item) over the declared ``labels``
    (their order matters for weighted κ), with a seeded bootstrap interval; equal to
    scikit-learn's ``cohen_kappa_score(reference, judged, labels=labels, weights=weights)``."""
    rows, columns = _paired_positions(reference, judged, labels)
    confidence = probability(confidence, "confidence")
    resamples = count(resamples, "resamples", minimum=1)
    seed = check_seed(seed)
    size = len(labels)
    weight = _weight_matrix(size, weights)
    value = _kappa_from_counts(_matrix(rows, columns, size), weight)
    if value is None:
        return Kappa(None, None, weights, resamples, seed)
    cells = [r * size + c for r, c in zip(rows, columns, strict=True)]
    draw = random.Random(seed).choices
    n = len(cells)
    estimates = []
    undefined = 0
    for _ in range(resamples):
        drawn = Counter(draw(cells, k=n))
        estimate = _kappa_from_counts([[drawn[r * size + c] for c in range(size)] for r in range(size)], weight)
        if estimate is None:
            undefined += 1
        else:
            estimates.append(estimate)
    if not estimates:
        return Kappa(value, None, weights, resamples, seed, undefined)
    estimates.sort()
    interval = Interval(quantile(estimates, (1 - confidence) / 2), quantile(estimates, (1 + confidence) / 2), confidence)
    return Kappa(value, interval, weights, resamples, seed, undefined)


@attrs.frozen
class LabelAgreement:
    """One label: how many items people gave it (``support``) and the judge gave it
    (``predicted``); ``precision`` (of the judge's uses of it, the share people agree with) and
    ``recall`` (of the people's uses of it, the share the judge found), ``None`` when undefined."""

    label: Label
    support: int
    predicted: int
    precision: float | None
    recall: float | None


@attrs.frozen
class Agreement:
    """A judge's calibration against people's labels on ``n`` items.

    ``agreement`` is the raw share of items with the same label; ``kappa`` Cohen's κ (weighted
    as asked); ``confusion[i][j]`` counts items people labelled ``labels[i]`` and the judge
    ``labels[j]``; ``judge_positive_rate`` and ``human_positive_rate`` are the shares of items
    labelled with one of ``positive_labels`` by each side.
    """

    n: int
    labels: tuple[Label, ...]
    agreement: float
    kappa: Kappa
    confusion: tuple[tuple[int, ...], ...]
    per_label: tuple[LabelAgreement, ...]
    positive_labels: tuple[Label, ...]
    judge_positive_rate: float
    human_positive_rate: float


def judge_agreement(
    reference: Sequence[Label],
    judged: Sequence[Label],
    labels: Sequence[Label],
    *,
    weights: Weights = None,
    positive: Collection[Label] | None = None,
    confidence: float = 0.95,
    resamples: int = 2_000,
    seed: int = 0,
) -> Agreement:
    """The calibration report of ``judged`` against people's ``reference`` labels (item by item).

    ``positive`` names the labels that count as positive for the positive rates (default: the
    last declared label — ``pass`` of ``[fail, pass]``, the top grade of a scale); ``weights``
    as for :func:`cohen_kappa` (quadratic for an ordered scale).
    """
    rows, columns = _paired_positions(reference, judged, labels)
    size = len(labels)
    cells = _matrix(rows, columns, size)
    n = len(rows)
    if positive is None:
        positive_labels: tuple[Label, ...] = (labels[-1],)
    else:
        if isinstance(positive, (str, bytes)):
            raise StatisticsInputError(f"positive must be a collection of labels, got {positive!r}")
        positive_labels = tuple(positive)
        if not positive_labels:
            raise StatisticsInputError("positive names no label")
    positions = _label_positions(labels)
    positive_positions = set(_positions(positive_labels, "positive", positions, labels))
    per_label = []
    for index, label in enumerate(labels):
        support = sum(cells[index])
        predicted = sum(cells[r][index] for r in range(size))
        hits = cells[index][index]
        per_label.append(
            LabelAgreement(label, support, predicted, hits / predicted if predicted else None, hits / support if support else None)
        )
    return Agreement(
        n=n,
        labels=tuple(labels),
        agreement=sum(cells[i][i] for i in range(size)) / n,
        kappa=cohen_kappa(reference, judged, labels, weights=weights, confidence=confidence, resamples=resamples, seed=seed),
        confusion=tuple(tuple(row) for row in cells),
        per_label=tuple(per_label),
        positive_labels=positive_labels,
        judge_positive_rate=sum(1 for c in columns if c in positive_positions) / n,
        human_positive_rate=sum(1 for r in rows if r in positive_positions) / n,
    )


@attrs.frozen
class KrippendorffAlpha:
    """Krippendorff's α at ``level`` over ``units`` items with at least two answers (``values``
    answers in them); ``value`` is ``None`` when undefined (fewer than two pairable answers, or
    all of them the same)."""

    value: float | None
    level: str
    units: int
    values: int


def _interval_scale(labels: Sequence[Label]) -> list[float]:
    scale = []
    for index, label in enumerate(labels):
        if isinstance(label, bool) or not isinstance(label, (int, float)):
            raise StatisticsInputError(
                f"the interval level needs numeric labels: labels[{index}] is {label!r} (use ordinal for ordered names)"
            )
        scale.append(float(label))
    return scale


def _distances(level: Level, labels: Sequence[Label], totals: Sequence[float]) -> list[list[float]]:
    """Krippendorff's squared difference δ²(c, k) between label positions."""
    size = len(labels)
    if level == "nominal":
        return [[0.0 if c == k else 1.0 for k in range(size)] for c in range(size)]
    if level == "ordinal":
        # (sum of the totals from c to k) − (total of c + total of k) / 2, squared
        cumulative = [0.0]
        for total in totals:
            cumulative.append(cumulative[-1] + total)
        return [
            [(cumulative[max(c, k) + 1] - cumulative[min(c, k)] - (totals[c] + totals[k]) / 2) ** 2 for k in range(size)]
            for c in range(size)
        ]
    if level == "interval":
        scale = _interval_scale(labels)
        return [[(scale[c] - scale[k]) ** 2 for k in range(size)] for c in range(size)]
    raise StatisticsInputError(f"level is {level!r}: 'nominal', 'ordinal' or 'interval'")


def krippendorff_alpha(
    data: Sequence[Sequence[Label | None]], *, level: Level = "nominal", labels: Sequence[Label] | None = None
) -> KrippendorffAlpha:
    """Krippendorff's α for ``data[item][repeat]`` (``None`` where an answer is missing).

    ``labels`` declares the values in order (required for ``ordinal`` unless the values sort
    themselves; numeric for ``interval``); when omitted, the values seen, sorted. Built from the
    coincidence matrix: each item with ``m >= 2`` answers adds every ordered pair of its answers
    with weight ``1 / (m − 1)``; then ``α = 1 − (n − 1) Σ o(c,k) δ²(c,k) / Σ n(c) n(k) δ²(c,k)``.
    Equal to the ``krippendorff`` package's ``alpha`` (items as its units, repeats as its coders).
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise StatisticsInputError(f"level is {level!r}: 'nominal', 'ordinal' or 'interval'")
    if isinstance(data, (str, bytes)):
        raise StatisticsInputError("data must be items, each a sequence of answers")
    if labels is None:
        seen = {value for item in data for value in item if value is not None}
        try:
            labels = sorted(seen)  # type: ignore[type-var]
        except TypeError:
            raise StatisticsInputError("the answers do not sort themselves: declare their order in labels") from None
        if not labels:
            return KrippendorffAlpha(None, level, 0, 0)
    positions = _label_positions(labels)
    size = len(labels)
    coincidence = [[0.0] * size for _ in range(size)]
    units = pairable = 0
    for index, item in enumerate(data):
        if isinstance(item, (str, bytes)):
            raise StatisticsInputError(f"data[{index}] is {item!r}: each item is a sequence of answers")
        # positions of the answers given; a missing one (None) keeps the others' indices in messages
        answers = [p for p in _positions(item, f"data[{index}]", positions, labels, missing=True) if p is not None]
        m = len(answers)
        if m < 2:
            continue
        units += 1
        pairable += m
        tally = Counter(answers)
        for c, count_c in tally.items():
            for k, count_k in tally.items():
                pairs = count_c * (count_k - 1) if c == k else count_c * count_k
                coincidence[c][k] += pairs / (m - 1)
    totals = [math.fsum(row) for row in coincidence]
    n = math.fsum(totals)
    if n < 2:
        return KrippendorffAlpha(None, level, units, pairable)
    delta = _distances(level, labels, totals)
    observed = math.fsum(coincidence[c][k] * delta[c][k] for c in range(size) for k in range(size))
    expected = math.fsum(totals[c] * totals[k] * delta[c][k] for c in range(size) for k in range(size))
    if expected == 0:
        return KrippendorffAlpha(None, level, units, pairable)
    return KrippendorffAlpha(1.0 - (n - 1) * observed / expected, level, units, pairable)
