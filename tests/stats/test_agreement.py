"""Judge calibration statistics agree with scikit-learn and the ``krippendorff`` package."""

from __future__ import annotations

import random

import numpy as np
import pytest
from evalkit.agreement import cohen_kappa, confusion_matrix, judge_agreement, krippendorff_alpha
from evalkit.stats import StatisticsInputError
from hypothesis import given, settings
from hypothesis import strategies as st
from krippendorff import alpha as reference_alpha
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support
from sklearn.metrics import confusion_matrix as reference_confusion


def labelled_tables() -> list[tuple[list[object], list[object], list[object]]]:
    """Twelve (reference, judged, labels) tables: binary names, graded 0–3, five-level scales."""
    rng = random.Random(35)
    scales: list[list[object]] = [["fail", "pass"], [0, 1, 2, 3], ["bad", "poor", "fair", "good", "great"], [0, 1]]
    tables = []
    for index in range(12):
        labels = scales[index % len(scales)]
        n = (15, 40, 120)[index % 3]
        reference = [rng.choice(labels) for _ in range(n)]
        judged = [r if rng.random() < 0.6 else rng.choice(labels) for r in reference]
        tables.append((reference, judged, labels))
    return tables


TABLES = labelled_tables()


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize(("reference", "judged", "labels"), TABLES, ids=[f"table{i}" for i in range(len(TABLES))])
def test_kappa_equals_scikit_learn(reference: list[object], judged: list[object], labels: list[object], weights: str | None) -> None:
    ours = cohen_kappa(reference, judged, labels, weights=weights, resamples=300)  # type: ignore[arg-type]
    assert ours.value == pytest.approx(cohen_kappa_score(reference, judged, labels=labels, weights=weights), abs=1e-12)
    assert ours.interval is not None and ours.interval.low <= ours.value <= ours.interval.high


@pytest.mark.parametrize(("reference", "judged", "labels"), TABLES[:6], ids=[f"table{i}" for i in range(6)])
def test_confusion_precision_and_recall_equal_scikit_learn(reference: list[object], judged: list[object], labels: list[object]) -> None:
    report = judge_agreement(reference, judged, labels, resamples=100)
    assert np.array_equal(np.array(report.confusion), reference_confusion(reference, judged, labels=labels))
    assert confusion_matrix(reference, judged, labels) == report.confusion
    precision, recall, _, support = precision_recall_fscore_support(reference, judged, labels=labels, zero_division=np.nan)
    for row, p, r, s in zip(report.per_label, precision, recall, support, strict=True):
        assert row.support == s
        assert (row.precision is None) == bool(np.isnan(p)) and (row.precision is None or row.precision == pytest.approx(p))
        assert (row.recall is None) == bool(np.isnan(r)) and (row.recall is None or row.recall == pytest.approx(r))
    assert report.agreement == pytest.approx(np.mean([a == b for a, b in zip(reference, judged, strict=True)]))
    assert report.n == len(reference) and report.labels == tuple(labels)


def test_judges_that_copy_invert_or_ignore_the_people() -> None:
    people = ["pass", "fail"] * 20
    labels = ["fail", "pass"]
    assert cohen_kappa(people, people, labels).value == 1.0
    inverted = ["fail" if p == "pass" else "pass" for p in people]
    assert cohen_kappa(people, inverted, labels).value == -1.0
    constant = ["pass"] * len(people)
    assert cohen_kappa(people, constant, labels).value == 0.0
    graded = [0, 1, 2, 3] * 10
    for weights in (None, "linear", "quadratic"):
        assert cohen_kappa(graded, graded, [0, 1, 2, 3], weights=weights).value == 1.0  # type: ignore[arg-type]
        assert cohen_kappa(graded, [2] * 40, [0, 1, 2, 3], weights=weights).value == 0.0  # type: ignore[arg-type]


def test_positive_rates_and_undefined_kappa() -> None:
    report = judge_agreement([0, 1, 2, 3, 3, 0], [0, 2, 2, 3, 1, 1], [0, 1, 2, 3], positive=[1, 2, 3], weights="quadratic", resamples=50)
    assert report.positive_labels == (1, 2, 3)
    assert (report.judge_positive_rate, report.human_positive_rate) == (5 / 6, 4 / 6)
    binary = judge_agreement(["pass", "fail", "pass"], ["pass", "pass", "pass"], ["fail", "pass"], resamples=50)
    assert (binary.judge_positive_rate, binary.human_positive_rate) == (1.0, 2 / 3)
    assert binary.per_label[0].precision is None and binary.per_label[0].recall == 0.0
    everyone_agrees = cohen_kappa(["pass"] * 5, ["pass"] * 5, ["fail", "pass"])
    assert everyone_agrees.value is None and everyone_agrees.interval is None


def test_kappa_interval_is_seeded() -> None:
    reference, judged, labels = TABLES[1]
    first = cohen_kappa(reference, judged, labels, resamples=500, seed=3)
    assert first == cohen_kappa(reference, judged, labels, resamples=500, seed=3)
    assert (first.seed, first.resamples) == (3, 500)


def repeat_tables() -> list[tuple[list[list[object]], list[object]]]:
    """Twelve items × repeats tables with missing answers."""
    rng = random.Random(350)
    tables = []
    for index in range(12):
        labels: list[object] = [[1, 2], [0, 1, 2, 3], [1, 2, 3, 4, 5]][index % 3]
        items, repeats = (10, 25, 60)[index % 3], (2, 3, 5)[index % 3]
        data = []
        for _ in range(items):
            truth = rng.choice(labels)
            answers = [truth if rng.random() < 0.7 else rng.choice(labels) for _ in range(repeats)]
            data.append([None if rng.random() < 0.15 else a for a in answers])
        tables.append((data, labels))
    return tables


REPEATS = repeat_tables()


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize(("data", "labels"), REPEATS, ids=[f"repeats{i}" for i in range(len(REPEATS))])
def test_alpha_equals_the_krippendorff_package(data: list[list[object]], labels: list[object], level: str) -> None:
    ours = krippendorff_alpha(data, level=level, labels=labels)  # type: ignore[arg-type]
    coders_by_units = np.array([[np.nan if v is None else v for v in item] for item in data], dtype=float).T
    expected = reference_alpha(reliability_data=coders_by_units, level_of_measurement=level, value_domain=labels)
    assert ours.value == pytest.approx(expected, abs=1e-12)
    assert ours.level == level and ours.units <= len(data)


def test_alpha_with_named_labels_and_its_edges() -> None:
    words = [["good", "good", "bad"], ["bad", "bad", None], ["good", None, None]]
    numbers = [[1, 1, 0], [0, 0, None], [1, None, None]]
    assert krippendorff_alpha(words, labels=["bad", "good"]).value == pytest.approx(krippendorff_alpha(numbers).value)
    assert krippendorff_alpha(words, level="ordinal", labels=["bad", "good"]).units == 2
    assert krippendorff_alpha([[1, 1], [1, 1]]).value is None  # no variation: undefined
    assert krippendorff_alpha([[1], [2, None]]).value is None  # nothing pairable
    assert krippendorff_alpha([]).value is None
    assert krippendorff_alpha([[0, 1], [1, 0]]).value == pytest.approx(-0.5)  # systematic disagreement
    with pytest.raises(StatisticsInputError, match="interval level needs numeric labels"):
        krippendorff_alpha(words, level="interval", labels=["bad", "good"])
    with pytest.raises(StatisticsInputError, match="do not sort themselves"):
        krippendorff_alpha([["a", 1], [2, "b"]])
    with pytest.raises(StatisticsInputError, match="level"):
        krippendorff_alpha(numbers, level="ratio")  # type: ignore[arg-type]


def test_labels_are_checked_as_declared() -> None:
    with pytest.raises(StatisticsInputError, match=r"judged\[1\] is '1', not one of the labels \[0, 1\]"):
        cohen_kappa([0, 1], [0, "1"], [0, 1])
    with pytest.raises(StatisticsInputError, match=r"judged\[0\] is True"):
        cohen_kappa([1], [True], [0, 1])
    with pytest.raises(StatisticsInputError, match="each label once"):
        cohen_kappa([0], [0], [0, 0])
    with pytest.raises(StatisticsInputError, match="pair item by item"):
        cohen_kappa([0, 1], [0], [0, 1])
    with pytest.raises(StatisticsInputError, match="no items"):
        judge_agreement([], [], [0, 1])
    with pytest.raises(StatisticsInputError, match="non-empty sequence"):
        cohen_kappa([0], [0], "01")
    with pytest.raises(StatisticsInputError, match="weights"):
        cohen_kappa([0], [0], [0, 1], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(StatisticsInputError, match=r"positive\[0\] is 'yes'"):
        judge_agreement([0], [0], [0, 1], positive=["yes"])
    with pytest.raises(StatisticsInputError, match=r"data\[1\]\[2\] is 7, not one of the labels \[0, 1\]"):
        krippendorff_alpha([[0, 1], [None, 1, 7]], labels=[0, 1])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=50), st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_stays_within_minus_one_and_one(pairs: list[tuple[int, int]], weights: str | None) -> None:
    reference = [r for r, _ in pairs]
    judged = [j for _, j in pairs]
    result = cohen_kappa(reference, judged, [0, 1, 2, 3], weights=weights, resamples=50)  # type: ignore[arg-type]
    if result.value is not None:
        assert -1.0 - 1e-12 <= result.value <= 1.0 + 1e-12
        swapped = cohen_kappa(judged, reference, [0, 1, 2, 3], weights=weights, resamples=50)  # type: ignore[arg-type]
        assert swapped.value == pytest.approx(result.value, abs=1e-12)  # κ is symmetric in its raters
