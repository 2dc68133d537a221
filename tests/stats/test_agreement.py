"""Judge calibration statistics agree with scikit-learn and the ``krippendorff`` package."""

from __future__ import annotations

import random

import numpy as np
import pytest
from evalkit.agreement import (
    Kappa,
    KrippendorffAlpha,
    cohen_kappa,
    confusion_matrix,
    judge_agreement,
    krippendorff_alpha,
)
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
def test_kappa_equals_scikit_learn(
    reference: list[object], judged: list[object], labels: list[object], weights: str | None
) -> None:
    ours = cohen_kappa(reference, judged, labels, weights=weights, resamples=300)  # type: ignore[arg-type]
    assert ours.value == pytest.approx(cohen_kappa_score(reference, judged, labels=labels, weights=weights), abs=1e-12)
    assert ours.interval is not None and ours.interval.low <= ours.value <= ours.interval.high


@pytest.mark.parametrize(("reference", "judged", "labels"), TABLES[:6], ids=[f"table{i}" for i in range(6)])
def test_confusion_precision_and_recall_equal_scikit_learn(
    reference: list[object], judged: list[object], labels: list[object]
) -> None:
    report = judge_agreement(reference, judged, labels, resamples=100)
    assert np.array_equal(np.array(report.confusion), reference_confusion(reference, judged, labels=labels))
    assert confusion_matrix(reference, judged, labels) == report.confusion
    precision, recall, _, support = precision_recall_fscore_support(
        reference, judged, labels=labels, zero_division=np.nan
    )
    for row, p, r, s in zip(report.per_label, precision, recall, support, strict=True):
        assert row.support == s
        assert (row.precision is None) == bool(np.isnan(p)) and (
            row.precision is None or row.precision == pytest.approx(p)
        )
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
    report = judge_agreement(
        [0, 1, 2, 3, 3, 0], [0, 2, 2, 3, 1, 1], [0, 1, 2, 3], positive=[1, 2, 3], weights="quadratic", resamples=50
    )
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
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=50),
    st.sampled_from([None, "linear", "quadratic"]),
)
def test_kappa_stays_within_minus_one_and_one(pairs: list[tuple[int, int]], weights: str | None) -> None:
    reference = [r for r, _ in pairs]
    judged = [j for _, j in pairs]
    result = cohen_kappa(reference, judged, [0, 1, 2, 3], weights=weights, resamples=50)  # type: ignore[arg-type]
    if result.value is not None:
        assert -1.0 - 1e-12 <= result.value <= 1.0 + 1e-12
        swapped = cohen_kappa(judged, reference, [0, 1, 2, 3], weights=weights, resamples=50)  # type: ignore[arg-type]
        assert swapped.value == pytest.approx(result.value, abs=1e-12)  # κ is symmetric in its raters


# --- the bootstrap interval, the defaults and the refusals, pinned against independent computations ---


def _kappa_by_formula(
    reference: list[object], judged: list[object], labels: list[object], weights: str | None
) -> float | None:
    """Cohen's κ from its definition, 1 − Σ w·O / Σ w·E, with numpy; ``None`` when Σ w·E is 0."""
    size = len(labels)
    index = {label: i for i, label in enumerate(labels)}
    observed = np.zeros((size, size))
    for r, j in zip(reference, judged, strict=True):
        observed[index[r], index[j]] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(reference)
    i, j = np.indices((size, size))
    weight = {
        None: (i != j).astype(float),
        "linear": np.abs(i - j).astype(float),
        "quadratic": ((i - j) ** 2).astype(float),
    }[weights]
    chance = float((weight * expected).sum())
    return None if chance == 0 else 1.0 - float((weight * observed).sum()) / chance


@pytest.mark.parametrize(
    ("reference", "judged", "labels", "weights", "confidence"),
    [
        # a resample of one label only (items 0 and 1 alone, or item 2 alone: 9 in 27) leaves κ undefined
        (["a", "a", "b"], ["a", "a", "b"], ["a", "b"], None, 0.9),
        ([0, 1, 2, 2, 1, 0, 2, 1], [0, 2, 2, 1, 1, 0, 2, 0], [0, 1, 2], "linear", 0.8),
        ([0, 1, 2, 2, 1, 0, 2, 1, 1, 0], [1, 2, 2, 1, 1, 0, 2, 0, 1, 1], [0, 1, 2], "quadratic", 0.95),
    ],
)
def test_kappa_interval_is_the_seeded_percentile_bootstrap_over_items(
    reference: list[object], judged: list[object], labels: list[object], weights: str | None, confidence: float
) -> None:
    """The interval is the (1 ± confidence) / 2 quantiles of κ over items drawn with replacement by
    ``random.Random(seed)``; resamples where κ is undefined are counted and left out."""
    n, resamples, seed = len(reference), 200, 11
    draw = random.Random(seed)
    estimates, undefined = [], 0
    for _ in range(resamples):
        items = draw.choices(range(n), k=n)
        estimate = _kappa_by_formula([reference[i] for i in items], [judged[i] for i in items], labels, weights)
        if estimate is None:
            undefined += 1
        else:
            estimates.append(estimate)
    low, high = np.percentile(estimates, [50 * (1 - confidence), 50 * (1 + confidence)])
    result = cohen_kappa(
        reference,
        judged,
        labels,
        weights=weights,
        confidence=confidence,
        resamples=resamples,
        seed=seed,  # type: ignore[arg-type]
    )
    assert result.value == pytest.approx(_kappa_by_formula(reference, judged, labels, weights), abs=1e-12)
    assert result.interval is not None and result.interval.confidence == confidence
    assert (result.interval.low, result.interval.high) == (
        pytest.approx(low, abs=1e-12),
        pytest.approx(high, abs=1e-12),
    )
    assert result.undefined_resamples == undefined
    assert (result.resamples, result.seed, result.weights) == (resamples, seed, weights)


def test_kappa_and_the_report_default_to_2000_resamples_seed_0_and_95_percent() -> None:
    """The documented defaults, as recorded in the results."""
    reference, judged, labels = (
        ["pass", "fail", "pass", "fail", "pass"],
        ["pass", "fail", "fail", "fail", "pass"],
        ["fail", "pass"],
    )
    for kappa in (cohen_kappa(reference, judged, labels), judge_agreement(reference, judged, labels).kappa):
        assert (kappa.resamples, kappa.seed, kappa.weights) == (2000, 0, None)
        assert kappa.interval is not None and kappa.interval.confidence == 0.95


def test_an_undefined_kappa_counts_no_undefined_resamples_and_one_resample_is_enough() -> None:
    """κ undefined on the sample itself: no bootstrap is drawn, so none of it is undefined; and a
    single resample is a valid request."""
    undefined = cohen_kappa([1, 1], [1, 1], [0, 1], weights="linear")
    assert undefined == Kappa(None, None, "linear", 2000, 0, 0)
    once = cohen_kappa([0, 1, 0, 1], [0, 1, 1, 1], [0, 1], resamples=1)
    assert once.resamples == 1 and once.undefined_resamples + (once.interval is not None) == 1


def test_by_default_the_last_declared_label_is_the_positive_one() -> None:
    """Of [0, 1, 2] only 2 counts as positive: people gave it to 2 of 5 items, the judge to 1."""
    report = judge_agreement([0, 2, 1, 2, 0], [0, 2, 2, 1, 1], [0, 1, 2], resamples=10)
    assert report.positive_labels == (2,)
    assert (report.human_positive_rate, report.judge_positive_rate) == (2 / 5, 2 / 5)
    report = judge_agreement([0, 2, 1, 2, 0], [0, 1, 2, 1, 1], [0, 1, 2], resamples=10)
    assert (report.human_positive_rate, report.judge_positive_rate) == (2 / 5, 1 / 5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cohen_kappa([0], [0], "01"), "labels must be a non-empty sequence of labels, got '01'"),
        (lambda: cohen_kappa([0], [0], []), "labels must be a non-empty sequence of labels, got []"),
        (lambda: cohen_kappa([0], [0], [0, None]), "labels[1] is None, not a label (a string or an integer)"),
        (lambda: cohen_kappa([0], [0], [0, [1]]), "labels[1] is [1], not a label (a string or an integer)"),
        (lambda: cohen_kappa([0], [0], [0, 1, 0]), "labels[2] is 0 again: each label once"),
        (lambda: cohen_kappa([0, 2], [0, 1], [0, 1]), "reference[1] is 2, not one of the labels [0, 1]"),
        (lambda: cohen_kappa([0, None], [0, 1], [0, 1]), "reference[1] is None, not one of the labels [0, 1]"),
        (lambda: cohen_kappa([0, 1], [[0], 1], [0, 1]), "judged[0] is [0], not one of the labels [0, 1]"),
        (
            lambda: cohen_kappa([0, 1], [0], [0, 1]),
            "reference and judged must pair item by item: 2 reference labels, 1 judged",
        ),
        (lambda: cohen_kappa([], [], [0, 1]), "no items: reference and judged are empty"),
        (lambda: cohen_kappa([0], [0], [0, 1], weights="cubic"), "weights is 'cubic': None, 'linear' or 'quadratic'"),
        (
            lambda: cohen_kappa([0], [0], [0, 1], confidence=1.0),
            "confidence is 1.0, not a number strictly between 0 and 1",
        ),
        (lambda: cohen_kappa([0], [0], [0, 1], resamples=0), "resamples is 0, not an integer of at least 1"),
        (lambda: judge_agreement([0], [0], [0, 1], positive="1"), "positive must be a collection of labels, got '1'"),
        (lambda: judge_agreement([0], [0], [0, 1], positive=[]), "positive names no label"),
        (
            lambda: judge_agreement([0], [0], [0, 1], positive=[1, "1"]),
            "positive[1] is '1', not one of the labels [0, 1]",
        ),
        (lambda: krippendorff_alpha([[0, 1]], level="ratio"), "level is 'ratio': 'nominal', 'ordinal' or 'interval'"),
        (lambda: krippendorff_alpha("01"), "data must be items, each a sequence of answers"),
        (lambda: krippendorff_alpha([["a", 1]]), "the answers do not sort themselves: declare their order in labels"),
        (
            lambda: krippendorff_alpha([[0, 1], "01"], labels=[0, 1]),
            "data[1] is '01': each item is a sequence of answers",
        ),
        (lambda: krippendorff_alpha([[0, 1], [1, 2]], labels=[0, 1]), "data[1][1] is 2, not one of the labels [0, 1]"),
        (
            lambda: krippendorff_alpha([["bad", "good"]], level="interval", labels=["bad", "good"]),
            "the interval level needs numeric labels: labels[0] is 'bad' (use ordinal for ordered names)",
        ),
        (
            lambda: krippendorff_alpha([[False, True]], level="interval", labels=[False, True]),
            "the interval level needs numeric labels: labels[0] is False (use ordinal for ordered names)",
        ),
    ],
)
def test_each_refusal_word_for_word(call: object, message: str) -> None:
    """Every refusal is a StatisticsInputError naming the culprit exactly."""
    with pytest.raises(StatisticsInputError) as caught:
        call()  # type: ignore[operator]
    assert str(caught.value) == message


def test_alpha_counts_the_items_and_answers_it_pairs() -> None:
    """Items with fewer than two answers pair nothing: 2 items with 3 + 2 answers are pairable here."""
    data = [[0, 1, None], [1, None, None], [None, None, None], [1, 1, 1]]
    result = krippendorff_alpha(data)
    assert (result.level, result.units, result.values) == ("nominal", 2, 5)
    coders_by_units = np.array([[np.nan if v is None else v for v in item] for item in data], dtype=float).T
    assert result.value == pytest.approx(
        reference_alpha(reliability_data=coders_by_units, level_of_measurement="nominal"), abs=1e-12
    )


def test_alpha_of_one_disagreeing_pair_is_zero_and_of_nothing_is_undefined() -> None:
    """One item answered 0 and 1: o(0,1) = o(1,0) = 1, n = 2, so α = 1 − (2 − 1)·2 / (1·1 + 1·1) = 0.
    No answers at all (or none pairable) leave α undefined with nothing counted."""
    assert krippendorff_alpha([[0, 1]]) == KrippendorffAlpha(0.0, "nominal", 1, 2)
    assert krippendorff_alpha([]) == KrippendorffAlpha(None, "nominal", 0, 0)
    assert krippendorff_alpha([[None, None], [None]], level="ordinal") == KrippendorffAlpha(None, "ordinal", 0, 0)
    assert krippendorff_alpha([[1], [None, 0]], labels=[0, 1]) == KrippendorffAlpha(None, "nominal", 0, 0)
