"""What a verdict's statistics cost: the wall time of five gated metrics at 20, 200, 2,000 and
100,000 paired cases (a verdict must stay cheap next to a run's fixed cost, which
bench/run_phases.py measures).

The five metrics are the ones a retrieval verdict gates — hit@1 and hit@3 (pass/fail per
question: Newcombe interval, exact McNemar, the exact test's detectable drop), MRR@10, recall@10
and nDCG@10 (values in [0, 1]: paired t interval, seeded sign-flip test) — then the three-state
decision over all five. The seeded BCa bootstrap is not part of that default; its cost is printed
apart (it draws ``n × resamples`` values, so it is not run at 100,000 cases).

    python bench/statistics_cost.py [--repeat 3] [--sizes 20,200,2000,100000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from evalkit.stats import StatisticsSettings, compare_pass_rates, compare_values, decide, paired_bootstrap


def seeded_runs(n: int, seed: int = 1) -> dict[str, tuple[list[float], list[float]]]:
    """Per-question values of the five metrics for a baseline and a slightly worse run."""
    rng = random.Random(seed)
    data: dict[str, tuple[list[float], list[float]]] = {}
    for name, rate in (("hit@1", 0.7), ("hit@3", 0.85)):
        baseline = [float(rng.random() < rate) for _ in range(n)]
        data[name] = (baseline, [float(rng.random() < rate - 0.02) for _ in range(n)])
    reciprocal = [0.0, *(1 / rank for rank in range(1, 11))]
    baseline = [rng.choice(reciprocal) for _ in range(n)]
    data["mrr@10"] = (baseline, [r if rng.random() < 0.8 else rng.choice(reciprocal) for r in baseline])
    for name in ("recall@10", "ndcg@10"):
        baseline = [rng.random() for _ in range(n)]
        data[name] = (baseline, [min(1.0, max(0.0, b + rng.gauss(-0.01, 0.15))) for b in baseline])
    return data


def verdict_statistics(data: dict[str, tuple[list[float], list[float]]], settings: StatisticsSettings) -> Callable[[], object]:
    """One verdict's statistics: five comparisons and the decision."""

    def run() -> object:
        metrics = []
        for name, (baseline, current) in data.items():
            if name.startswith("hit@"):
                metrics.append(compare_pass_rates(baseline, current, tolerance=0.05, settings=settings, name=name))
            else:
                metrics.append(compare_values(baseline, current, tolerance=0.05, settings=settings, name=name))
        return decide([m.evidence for m in metrics], settings.alpha)

    return run


def best_time(action: Callable[[], object], repeat: int) -> float:
    """The least-disturbed wall time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="calls per figure; the best is printed (default 3)")
    parser.add_argument("--sizes", default="20,200,2000,100000", help="paired cases, comma-separated")
    args = parser.parse_args()
    settings = StatisticsSettings(test="sign_flip")
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"verdict statistics, 5 metrics (2 pass/fail, 3 in [0, 1] with a {settings.samples:,}-sample sign-flip test)")
    print(f"{'cases':>9}  {'verdict':>10}  {'per metric':>46}  {'bootstrap (2,000)':>18}")
    for n in sizes:
        data = seeded_runs(n)
        total = best_time(verdict_statistics(data, settings), args.repeat)
        parts = []
        for name, (baseline, current) in data.items():
            if name.startswith("hit@"):
                one = best_time(lambda b=baseline, c=current: compare_pass_rates(b, c, tolerance=0.05), args.repeat)
            else:
                one = best_time(lambda b=baseline, c=current: compare_values(b, c, tolerance=0.05, settings=settings), args.repeat)
            parts.append(f"{one * 1000:.0f}")
        if n <= 2_000:
            baseline, current = data["ndcg@10"]
            boot = f"{best_time(lambda b=baseline, c=current: paired_bootstrap(b, c, resamples=2_000), 1) * 1000:,.0f} ms"
        else:
            boot = "not run"
        print(f"{n:>9,}  {total * 1000:>7,.0f} ms  {' / '.join(parts) + ' ms':>46}  {boot:>18}")


if __name__ == "__main__":
    main()
