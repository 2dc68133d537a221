"""Every refusal of the verdict statistics, message in full: the message names the argument (and
for a sequence the position) that was wrong, and a caller — the CLI, a plugin — shows it as is."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from evalkit.stats import (
    StatisticsInputError,
    StatisticsSettings,
    _checks,
    cases_needed,
    compare_pass_rates,
    compare_values,
    decision_confidence,
    flip_history,
    is_flaky,
    mcnemar_detectable_drop,
    mcnemar_drop_p,
    mcnemar_exact_p,
    mcnemar_power,
    minimum_detectable_drop,
    newcombe_interval,
    noise_from_differences,
    noise_from_history,
    noise_from_rate,
    noise_from_repeats,
    paired_binary,
    paired_bootstrap,
    paired_t,
    pass_all_k,
    pass_at_k,
    repeats_needed,
    sign_flip_test,
    summarize_repeats,
    wilson_interval,
)
from evalkit.stats.means import paired_t_from_differences
from evalkit.stats.power import smallest_flagged_regressions
from evalkit.stats.resampling import bootstrap_from_differences, sign_flip_from_differences

REFUSALS: list[tuple[str, Callable[[], object], str]] = [
    ('wilson trials 0', lambda: wilson_interval(0, 0), 'trials is 0, not an integer of at least 1'),
    ('wilson successes -1', lambda: wilson_interval(-1, 5), 'successes is -1, not an integer of at least 0'),
    ('wilson successes > trials', lambda: wilson_interval(6, 5), 'successes is 6, more than the 5 trials'),
    ('wilson confidence 1', lambda: wilson_interval(1, 5, 1.0), 'confidence is 1.0, not a number strictly between 0 and 1'),
    ('paired_t confidence', lambda: paired_t([0.1], [0.2], confidence=0), 'confidence is 0, not a number strictly between 0 and 1'),
    ('paired_t empty diffs', lambda: paired_t_from_differences([]), 'no paired cases: the differences are empty'),
    ('paired_t lengths', lambda: paired_t([0.1, 0.2], [0.3]), 'baseline and current must pair case by case: 2 baseline values, 1 current values'),
    ('paired_t empty', lambda: paired_t([], []), 'no paired cases: baseline and current are empty'),
    ('paired_t value', lambda: paired_t([0.1, "x"], [0.1, 0.2]), "baseline[1] is 'x', not a number in [0, 1]"),
    ('paired_t nan', lambda: paired_t([0.1, float("nan")], [0.1, 0.2]), 'baseline[1] is nan, not a number in [0, 1]'),
    ('mcnemar regressed', lambda: mcnemar_exact_p(-1, 0), 'regressed is -1, not an integer of at least 0'),
    ('mcnemar fixed', lambda: mcnemar_exact_p(0, 1.5), 'fixed is 1.5, not an integer of at least 0'),
    ('mcnemar drop regressed', lambda: mcnemar_drop_p(True, 0), 'regressed is True, not an integer of at least 0'),
    ('mcnemar drop fixed', lambda: mcnemar_drop_p(0, -2), 'fixed is -2, not an integer of at least 0'),
    ('newcombe empty', lambda: newcombe_interval(0, 0, 0, 0), 'no paired cases: every cell of the 2×2 table is 0'),
    ('newcombe both_passed', lambda: newcombe_interval(-1, 0, 0, 1), 'both_passed is -1, not an integer of at least 0'),
    ('newcombe regressed', lambda: newcombe_interval(1, -1, 0, 1), 'regressed is -1, not an integer of at least 0'),
    ('newcombe fixed', lambda: newcombe_interval(1, 0, -1, 1), 'fixed is -1, not an integer of at least 0'),
    ('newcombe both_failed', lambda: newcombe_interval(1, 0, 0, -1), 'both_failed is -1, not an integer of at least 0'),
    ('newcombe confidence', lambda: newcombe_interval(1, 0, 0, 1, 1.5), 'confidence is 1.5, not a number strictly between 0 and 1'),
    ('paired_binary outcome', lambda: paired_binary([True, 2], [True, False]), 'baseline[1] is 2, not a pass/fail outcome (a bool, or 0 or 1)'),
    ('paired_binary current', lambda: paired_binary([True, False], [True, 0.5]), 'current[1] is 0.5, not a pass/fail outcome (a bool, or 0 or 1)'),
    ('alpha', lambda: decision_confidence(0.5), 'alpha is 0.5, not a number strictly between 0 and 0.5'),
    ('alpha bool', lambda: decision_confidence(True), 'alpha is True, not a number strictly between 0 and 0.5'),
    ('summarize none', lambda: summarize_repeats([]), 'no outcome: a case answered 0 times has no pass fraction'),
    ('summarize bad', lambda: summarize_repeats([True, "yes"]), "outcomes[1] is 'yes', not a pass/fail outcome (a bool, or 0 or 1)"),
    ('is_flaky bad', lambda: is_flaky([1, 2]), 'outcomes[1] is 2, not a pass/fail outcome (a bool, or 0 or 1)'),
    ('pass_at_k passes > repeats', lambda: pass_at_k(3, 4, 1), 'passes is 4, more than the 3 repeats'),
    ('pass_at_k k > repeats', lambda: pass_at_k(3, 1, 4), 'k is 4, more than the 3 repeats it is estimated from'),
    ('pass_all_k repeats 0', lambda: pass_all_k(0, 0, 1), 'repeats is 0, not an integer of at least 1'),
    ('pass_all_k passes -1', lambda: pass_all_k(3, -1, 1), 'passes is -1, not an integer of at least 0'),
    ('pass_all_k k 0', lambda: pass_all_k(3, 1, 0), 'k is 0, not an integer of at least 1'),
    ('flip last 0', lambda: flip_history([True], last=0), 'last is 0, not an integer of at least 1'),
    ('noise diffs 1', lambda: noise_from_differences([0.1]), 'a spread needs at least 2 differences, got 1'),
    ('noise diffs value', lambda: noise_from_differences([0.1, -1.5]), 'differences[1] is -1.5, not a difference in [-1, 1]'),
    ('noise diffs repeats', lambda: noise_from_differences([0.1, 0.2], repeats=0), 'repeats is 0, not an integer of at least 1'),
    ('noise history none', lambda: noise_from_history([[0.1]]), 'history holds no comparison of at least 2 paired cases'),
    ('noise history value', lambda: noise_from_history([[0.1, 0.2], [0.1, 2]]), 'history[1][1] is 2, not a difference in [-1, 1]'),
    ('noise history repeats', lambda: noise_from_history([[0.1, 0.2]], repeats=0), 'repeats is 0, not an integer of at least 1'),
    ('noise repeats none', lambda: noise_from_repeats([[1], [0]]), 'no case has at least 2 answers: repeats cannot measure the noise'),
    ('noise repeats value', lambda: noise_from_repeats([[1, 0], [0, 1.5]]), 'answers[1][1] is 1.5, not a number in [0, 1]'),
    ('noise rate', lambda: noise_from_rate(1.5), 'rate is 1.5, not a number in [0, 1]'),
    ('noise rate bool', lambda: noise_from_rate(True), 'rate is True, not a number in [0, 1]'),
    ('noise rate repeats', lambda: noise_from_rate(0.5, 0), 'repeats is 0, not an integer of at least 1'),
    ('with_repeats', lambda: noise_from_rate(0.5).with_repeats(0), 'repeats is 0, not an integer of at least 1'),
    ('mdd n', lambda: minimum_detectable_drop(noise_from_rate(0.5), 0), 'n is 0, not an integer of at least 1'),
    ('mdd power', lambda: minimum_detectable_drop(noise_from_rate(0.5), 5, power=1), 'power is 1, not a number strictly between 0 and 1'),
    ('mdd alpha', lambda: minimum_detectable_drop(noise_from_rate(0.5), 5, alpha=0), 'alpha is 0, not a number strictly between 0 and 0.5'),
    ('cases drop', lambda: cases_needed(noise_from_rate(0.5), 0), 'drop is 0, not a number in (0, 1]'),
    ('cases drop bool', lambda: cases_needed(noise_from_rate(0.5), True), 'drop is True, not a number in (0, 1]'),
    ('repeats drop', lambda: repeats_needed(noise_from_rate(0.5), 1.5, 10), 'drop is 1.5, not a number in (0, 1]'),
    ('repeats n', lambda: repeats_needed(noise_from_rate(0.5), 0.1, 0), 'n is 0, not an integer of at least 1'),
    ('mcnemar power rate', lambda: mcnemar_power(10, 1.5, 0.1), 'rate is 1.5, not a number in [0, 1]'),
    ('mcnemar power drop', lambda: mcnemar_power(10, 0.5, 0.6), 'drop is 0.6, not a number between 0 and the rate 0.5'),
    ('mcnemar power n', lambda: mcnemar_power(0, 0.5, 0.1), 'n is 0, not an integer of at least 1'),
    ('mcnemar mdd power', lambda: mcnemar_detectable_drop(10, 0.5, power=0), 'power is 0, not a number strictly between 0 and 1'),
    ('smallest', lambda: smallest_flagged_regressions(0.7), 'alpha is 0.7, not a number strictly between 0 and 0.5'),
    ('bootstrap method', lambda: paired_bootstrap([0.1, 0.2], [0.2, 0.3], method="basic"), "method is 'basic': 'bca' or 'percentile'"),
    ('bootstrap empty', lambda: bootstrap_from_differences([]), 'no paired cases: the differences are empty'),
    ('bootstrap resamples', lambda: paired_bootstrap([0.1, 0.2], [0.2, 0.3], resamples=0), 'resamples is 0, not an integer of at least 1'),
    ('bootstrap seed', lambda: paired_bootstrap([0.1, 0.2], [0.2, 0.3], seed=1.5), 'seed is 1.5, not an integer'),
    ('bootstrap confidence', lambda: paired_bootstrap([0.1, 0.2], [0.2, 0.3], confidence=1), 'confidence is 1, not a number strictly between 0 and 1'),
    ('signflip empty', lambda: sign_flip_from_differences([]), 'no paired cases: the differences are empty'),
    ('signflip samples', lambda: sign_flip_test([0.1, 0.2], [0.2, 0.3], samples=0), 'samples is 0, not an integer of at least 1'),
    ('signflip seed', lambda: sign_flip_test([0.1, 0.2], [0.2, 0.3], seed="1"), "seed is '1', not an integer"),
    ('settings interval', lambda: StatisticsSettings(interval="z"), "interval is 'z': 't' or 'bootstrap'"),
    ('settings test', lambda: StatisticsSettings(test="wilcoxon"), "test is 'wilcoxon': 't' or 'sign_flip'"),
    ('settings power', lambda: StatisticsSettings(power=1.0), 'power is 1.0, not a number strictly between 0 and 1'),
    ('settings alpha', lambda: StatisticsSettings(alpha=0.6), 'alpha is 0.6, not a number strictly between 0 and 0.5'),
    ('settings resamples', lambda: StatisticsSettings(resamples=0), 'resamples is 0, not an integer of at least 1'),
    ('settings samples', lambda: StatisticsSettings(samples=0), 'samples is 0, not an integer of at least 1'),
    ('settings seed', lambda: StatisticsSettings(seed=None), 'seed is None, not an integer'),
    ('compare tolerance', lambda: compare_values([0.1], [0.2], tolerance=1.5), 'tolerance is 1.5, not a number in [0, 1]'),
    ('compare tolerance bool', lambda: compare_pass_rates([True], [True], tolerance=True), 'tolerance is True, not a number in [0, 1]'),
    ('compare repeats', lambda: compare_values([0.1], [0.2], tolerance=0.1, repeats=0), 'repeats is 0, not an integer of at least 1'),
    ('finite', lambda: _checks.finite(float("inf"), "delta"), 'delta is inf, not a finite number'),
]


@pytest.mark.parametrize(("call", "message"), [(call, message) for _, call, message in REFUSALS], ids=[name for name, _, _ in REFUSALS])
def test_the_refusal_says_what_was_wrong(call: Callable[[], object], message: str) -> None:
    with pytest.raises(StatisticsInputError) as caught:
        call()
    assert str(caught.value) == message


def test_the_refusal_names_the_first_bad_value_not_an_edge_before_it() -> None:
    """Values at the edges of what is accepted (1.0, False, 0) come before the bad one: the message
    must name the bad one's place."""
    cases = [
        (lambda: paired_t([0.1, 0.1], [1.0, 1.5]), "current[1] is 1.5, not a number in [0, 1]"),
        (lambda: paired_t([0.0, -0.5], [0.1, 0.1]), "baseline[1] is -0.5, not a number in [0, 1]"),
        (lambda: paired_binary([False, 2], [True, True]), "baseline[1] is 2, not a pass/fail outcome (a bool, or 0 or 1)"),
        (lambda: paired_binary([0, 5], [True, True]), "baseline[1] is 5, not a pass/fail outcome (a bool, or 0 or 1)"),
        (lambda: paired_binary([1.0, 0.5], [True, True]), "baseline[1] is 0.5, not a pass/fail outcome (a bool, or 0 or 1)"),
        (lambda: flip_history([True, "x"]), "outcomes[1] is 'x', not a pass/fail outcome (a bool, or 0 or 1)"),
    ]
    for call, message in cases:
        with pytest.raises(StatisticsInputError) as caught:
            call()
        assert str(caught.value) == message
