"""Verdict statistics: paired comparisons of a run with its baseline, with their uncertainty.

Pure functions over plain sequences and counts, returning frozen results; the standard library
only (no numpy, no scipy: a verdict must stay cheap to import and to compute). Values are
fractions in [0, 1]; every delta is the run minus the baseline, so a drop is negative.

* :mod:`~evalkit.stats.binary` — paired pass/fail: exact McNemar, Newcombe's interval.
* :mod:`~evalkit.stats.means` — paired values in [0, 1]: Student's paired t.
* :mod:`~evalkit.stats.resampling` — the seeded paired bootstrap and sign-flip test.
* :mod:`~evalkit.stats.power` — the minimum detectable drop, the cases or repeats a drop needs.
* :mod:`~evalkit.stats.gate` — the three-state decision with Holm's correction.
* :mod:`~evalkit.stats.repeats` — a case's repeats: pass fraction, pass@k, pass^k, flakiness.
* :mod:`~evalkit.stats.comparison` — one metric's figures and decision evidence in one call.
* :mod:`~evalkit.stats.distributions` — the normal and Student t quantiles, binomial tails.

docs/statistics.md explains each method, why it was chosen, and its source.
"""

from __future__ import annotations

from ._checks import StatisticsInputError
from .binary import (
    PairedBinary,
    mcnemar_drop_p,
    mcnemar_exact_p,
    newcombe_interval,
    paired_binary,
    paired_binary_counts,
)
from .comparison import MetricComparison, StatisticsSettings, compare_pass_rates, compare_values
from .gate import (
    GateDecision,
    GateState,
    MetricDecision,
    MetricEvidence,
    decide,
    decide_metric,
    decision_confidence,
    holm_adjusted,
)
from .intervals import Interval, wilson_interval
from .means import PairedMean, paired_t
from .power import (
    DetectableDrop,
    NoiseEstimate,
    cases_needed,
    choose_noise,
    connor_detectable_drop,
    mcnemar_detectable_drop,
    mcnemar_power,
    minimum_detectable_drop,
    noise_from_differences,
    noise_from_history,
    noise_from_rate,
    noise_from_repeats,
    repeats_needed,
)
from .repeats import FlipHistory, RepeatSummary, flip_history, is_flaky, pass_all_k, pass_at_k, summarize_repeats
from .resampling import BootstrapInterval, RandomizationTest, paired_bootstrap, sign_flip_test

__all__ = [
    "BootstrapInterval",
    "DetectableDrop",
    "FlipHistory",
    "GateDecision",
    "GateState",
    "Interval",
    "MetricComparison",
    "MetricDecision",
    "MetricEvidence",
    "NoiseEstimate",
    "PairedBinary",
    "PairedMean",
    "RandomizationTest",
    "RepeatSummary",
    "StatisticsInputError",
    "StatisticsSettings",
    "cases_needed",
    "choose_noise",
    "compare_pass_rates",
    "compare_values",
    "connor_detectable_drop",
    "decide",
    "decide_metric",
    "decision_confidence",
    "flip_history",
    "holm_adjusted",
    "is_flaky",
    "mcnemar_detectable_drop",
    "mcnemar_drop_p",
    "mcnemar_exact_p",
    "mcnemar_power",
    "minimum_detectable_drop",
    "newcombe_interval",
    "noise_from_differences",
    "noise_from_history",
    "noise_from_rate",
    "noise_from_repeats",
    "paired_binary",
    "paired_binary_counts",
    "paired_bootstrap",
    "paired_t",
    "pass_all_k",
    "pass_at_k",
    "repeats_needed",
    "sign_flip_test",
    "summarize_repeats",
    "wilson_interval",
]
