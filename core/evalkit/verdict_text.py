"""A comparison's uncertainty in words: one line per metric, the same in the terminal and every
report — baseline → run, the delta with its 95 % interval, the p-value, the minimum detectable
drop (MDD) and the tolerance."""

from __future__ import annotations

from typing import Any

from .wording import counted

__all__ = ["metric_lines"]


def _signed(value: float, percent: bool) -> str:
    return f"{value * 100:+.1f} pp" if percent else f"{value:+.3f}"


def _bound(value: float, percent: bool) -> str:
    return f"{value * 100:+.1f}" if percent else f"{value:+.3f}"


def _level(value: float, percent: bool) -> str:
    return f"{value * 100:.1f}%" if percent else f"{value:.3f}"


def metric_lines(comparison: Any, unit: str = "case") -> list[str]:
    """One line per measured metric: baseline → run, the delta with its 95 % interval, the p-value,
    the minimum detectable drop and the tolerance (``not gated`` for a metric without one); headed
    by one line saying on how many cases and how."""
    from .noise import shown

    measured = [(spec, comparison.statistic(spec.name)) for spec in comparison.metrics]
    measured = [(spec, m) for spec, m in measured if m is not None]
    if not measured:
        return []
    n = measured[0][1].n
    gate = f"paired gate, one-sided alpha {comparison.alpha:g}" if comparison.method == "paired" else "tolerance gate"
    before = getattr(comparison, "baseline_repeats", comparison.repeats)
    if before != comparison.repeats:
        answers = f", {comparison.repeats} answer{'s' if comparison.repeats != 1 else ''} each (the baseline's: {before})"
    else:
        answers = f", {comparison.repeats} answers each" if comparison.repeats > 1 else ""
    lines = [
        f"Statistics on {counted(n, 'paired ' + unit)}{answers} ({gate}; MDD: the smallest drop detected "
        f"4 times in 5 at one-sided alpha {measured[0][1].detectable.alpha:g}):"
    ]
    width = max(len(spec.label) for spec, _ in measured)
    for spec, m in measured:
        tolerance = f"tolerance {shown(float(spec.tolerance), spec.percent)}" if spec.gated else "not gated"
        lines.append(
            f"  {spec.label:<{width}}  {_level(m.baseline, spec.percent)} → {_level(m.value, spec.percent)}  "
            f"{_signed(m.delta, spec.percent)} (95% CI {_bound(m.ci95.low, spec.percent)} to {_bound(m.ci95.high, spec.percent)})  "
            f"p {m.p_value:.3g}  MDD {shown(m.detectable.drop, spec.percent)}  {tolerance}"
        )
    return lines


