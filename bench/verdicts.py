"""How often the gate cries wolf, and how often it catches a real drop (issue 33, Proof).

A benchmark, not a timed test: it prints rates, it asserts nothing. Two parts.

**The grid, in process.** Seeded outcomes go through the lifecycle's decide step — :func:`evalkit.run.decide.settle`
with the prompt kind's rules, the tolerances and the gate settings a run would use — on a store held in
memory. A model answers each case correctly with probability ``p`` (every answer independently; with
``--repeats``-style repeats each case is answered ``r`` times and the comparison pairs the pass fractions).
A drop of ``d`` lowers every case's probability to ``p - d``. For set sizes 20/50/200, pass probabilities
0.6/0.8/0.95, drops 5/10/20 pp and repeats 1/3/5, under both gate methods (default tolerances: 10 pp on the
pass rate and the mean score; ``alpha`` 0.05):

- *fresh trials*: a first run (the baseline) and one run after it, in a fresh store each time;
- *chains*: one store per chain, ``--chain`` runs of the unchanged model in a row, each decided against the
  scope's accepted baseline and accepted (or not) by the acceptance rule — a lucky run can only move the bar
  if it is significantly better — then each drop decided against the baseline the chain ended with.

``false alarm`` is the share of unchanged runs the gate called regressed; ``caught`` the share of dropped runs
it called regressed; ``MDD`` the mean minimum detectable drop of the pass rate the verdicts printed (for the
unchanged runs; the paired gate's figure: one-sided ``alpha``, power 0.8).

**A few cells end to end** (``--cli-trials``, 0 skips them): ``evalkit run`` as a process against a seeded
stochastic OpenAI-compatible test server, each trial a fresh store: a baseline run, then an unchanged or a
dropped one; the exit code of ``--fail-on-regression`` counted.

    python bench/verdicts.py                      # the full grid (minutes on a busy 2-core machine)
    python bench/verdicts.py --quick              # sizes 20/50, p 0.8, repeats 1/5: a first look
    python bench/verdicts.py --trials 200 --chain 20 --chains 20 --cli-trials 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = (20, 50, 200)
RATES = (0.6, 0.8, 0.95)
DROPS = (0.05, 0.10, 0.20)
REPEATS = (1, 3, 5)
METHODS = ("tolerance", "paired")


class MemoryBaselines:
    """The accepted baselines and verdicts of one store, in memory: what the decide step reads and writes."""

    def __init__(self) -> None:
        self.runs: dict[str, Any] = {}
        self.accepted: dict[str, Any] = {}
        self.order: list[str] = []
        self.verdicts: dict[str, Any] = {}

    def accepted_baseline(self, scope: Any, exclude_run_id: str | None = None, with_cases: bool = True) -> Any:
        """The scope's most recently accepted run (one scope per store here)."""
        for run_id in reversed(self.order):
            if run_id != exclude_run_id:
                return self.runs[run_id]
        return None

    def accept_run(self, run_id: str, acceptance: Any) -> None:
        """Record ``acceptance`` of ``run_id``."""
        self.accepted[run_id] = acceptance
        self.order.append(run_id)

    def accept_if_first(self, run_id: str, scope: Any, acceptance: Any) -> bool:
        """Accept ``run_id`` when nothing is accepted yet."""
        if self.order:
            return False
        self.accept_run(run_id, acceptance)
        return True

    def acceptances_for(self, run_ids: Sequence[str]) -> dict[str, Any]:
        """The acceptances of those of ``run_ids`` that are accepted."""
        return {run_id: self.accepted[run_id] for run_id in run_ids if run_id in self.accepted}

    def record_verdict(self, run_id: str, verdict: Any) -> None:
        """Keep the verdict with the run."""
        self.verdicts[run_id] = verdict


class Simulation:
    """Seeded runs of one model through the decide step, on in-memory stores."""

    def __init__(self, n: int, repeats: int, seed: int) -> None:
        from evalkit.identity import ServingIdentity

        self.n, self.repeats = n, repeats
        self.rng = random.Random(seed)
        self.identity = ServingIdentity("bench", "model", "model-2026")
        self.count = 0

    def run(self, p: float) -> Any:
        """One complete run: every case answered ``repeats`` times, each correct with probability ``p``."""
        from evalkit.runs import CaseResult, Run, RunStatus

        self.count += 1
        cases = []
        random_ = self.rng.random
        for i in range(self.n):
            passes = sum(1 for _ in range(self.repeats) if random_() < p)
            fraction = passes / self.repeats
            if self.repeats > 1:
                measures = {"pass_fraction": fraction, "answers": self.repeats, "passes": passes}
                passed = passes * 2 > self.repeats
            else:
                measures, passed = None, passes == 1
            cases.append(CaseResult(f"c{i:03d}", passed, fraction, fingerprint="f", measures=measures))
        return Run(
            f"r{self.count}", "bench.set", "deterministic", status=RunStatus.COMPLETE, cases=cases,
            fingerprints_kept=True, identity=self.identity,
        )  # fmt: skip


def new_store() -> Any:
    """An empty in-memory store offering what the prompt kind's decide step needs."""
    from evalkit.storage.protocols import Capabilities

    baselines = MemoryBaselines()
    return Capabilities(baselines, baselines=baselines, scoped=baselines)  # type: ignore[arg-type]


def settled(run: Any, store: Any, method: str) -> Any:
    """``run`` stored and decided: its verdict (with the acceptance it earned)."""
    from evalkit.gate_settings import GateSettings
    from evalkit.run.answering.prompts import PromptRules
    from evalkit.run.decide import Judging, settle

    store.baselines.runs[run.id] = run
    return settle(run, Judging(store, PromptRules(), gate=GateSettings(method=method)))


def _mdd(verdict: Any) -> float | None:
    comparison = verdict.comparison
    if comparison is None:
        return None
    figure = comparison.statistic("pass_rate")
    return None if figure is None or figure.detectable is None else float(figure.detectable.drop)


class Cell:
    """The counts of one grid cell (size, rate, repeats, method)."""

    def __init__(self) -> None:
        self.alarms = {"fresh": [0, 0], "chain": [0, 0]}
        self.caught = {(kind, d): [0, 0] for kind in ("fresh", "chain") for d in DROPS}
        self.inconclusive = [0, 0]
        self.mdds: list[float] = []

    def count(self, key: list[int], hit: bool) -> None:
        key[0] += hit
        key[1] += 1

    @staticmethod
    def rate(key: list[int]) -> str:
        return f"{key[0] / key[1] * 100:5.1f}%" if key[1] else "    —"


def measure(n: int, p: float, repeats: int, options: argparse.Namespace) -> dict[str, Cell]:
    """Every method's cell for one set size, pass probability and repeats (the same seeded runs for both)."""
    cells = {method: Cell() for method in METHODS}
    drops = [d for d in DROPS if p - d >= 0]
    sim = Simulation(n, repeats, seed=hash((n, p, repeats, options.seed)) & 0xFFFFFFFF)
    for _ in range(options.trials):
        baseline, unchanged = sim.run(p), sim.run(p)
        dropped = [(d, sim.run(p - d)) for d in drops]
        for method, cell in cells.items():
            store = new_store()
            settled(baseline, store, method)
            verdict = settled(unchanged, store, method)
            cell.count(cell.alarms["fresh"], verdict.state == "regressed")
            cell.count(cell.inconclusive, verdict.state == "inconclusive")
            mdd = _mdd(verdict)
            if mdd is not None:
                cell.mdds.append(mdd)
            for d, run in dropped:  # each against the first run alone, in a store of its own
                store = new_store()
                settled(baseline, store, method)
                cell.count(cell.caught[("fresh", d)], settled(run, store, method).state == "regressed")
    for _ in range(options.chains):
        runs = [sim.run(p) for _ in range(options.chain)]
        dropped = [(d, sim.run(p - d)) for d in drops]
        for method, cell in cells.items():
            store = new_store()
            for position, run in enumerate(runs):
                verdict = settled(run, store, method)
                if position:
                    cell.count(cell.alarms["chain"], verdict.state == "regressed")
            for d, run in dropped:
                verdict = settled(run, store, method)
                cell.count(cell.caught[("chain", d)], verdict.state == "regressed")
                store.baselines.runs.pop(run.id)  # not a baseline for the next drop (it was not accepted anyway)
    return cells


def grid(options: argparse.Namespace) -> None:
    """Print the grid's table (Markdown)."""
    sizes, rates, repeats = (SIZES, RATES, REPEATS) if not options.quick else ((20, 50), (0.8,), (1, 5))
    drops = " | ".join(f"caught {int(d * 100)} pp" for d in DROPS)
    print(
        f"Seeded grid through the decide step: {options.trials} fresh trials and {options.chains} chains of "
        f"{options.chain} runs per cell; default tolerances (10 pp), alpha 0.05. Each rate: fresh / chain.\n"
    )
    print(f"| gate | cases | p | repeats | MDD | false alarm | {drops} | inconclusive |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in DROPS) + " | ---: |")
    started = time.perf_counter()
    rows: dict[str, list[str]] = {method: [] for method in METHODS}
    for n in sizes:
        for p in rates:
            for r in repeats:
                cells = measure(n, p, r, options)
                for method, cell in cells.items():
                    mdd = f"{sum(cell.mdds) / len(cell.mdds) * 100:.1f} pp" if cell.mdds else "—"
                    alarms = f"{Cell.rate(cell.alarms['fresh'])} / {Cell.rate(cell.alarms['chain'])}"
                    caught = " | ".join(
                        f"{Cell.rate(cell.caught[('fresh', d)])} / {Cell.rate(cell.caught[('chain', d)])}"
                        if p - d >= 0 else "—"
                        for d in DROPS
                    )  # fmt: skip
                    shown = "—" if method == "tolerance" else Cell.rate(cell.inconclusive).strip()
                    rows[method].append(f"| {method} | {n} | {p} | {r} | {mdd} | {alarms} | {caught} | {shown} |")
                print(f"  … {n} cases, p {p}, {r} repeats done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    for method in METHODS:
        print("\n".join(rows[method]))
    goal = measure(30, 0.8, 5, options)["paired"]  # the goal: 20 pp on 30 cases at p 0.8, --repeats 5
    print(
        f"\nGoal cell (paired, 30 cases, p 0.8, 5 repeats): a 20 pp drop caught {Cell.rate(goal.caught[('fresh', 0.2)]).strip()} "
        f"(fresh) / {Cell.rate(goal.caught[('chain', 0.2)]).strip()} (chain); false alarms "
        f"{Cell.rate(goal.alarms['fresh']).strip()} / {Cell.rate(goal.alarms['chain']).strip()}; "
        f"MDD {sum(goal.mdds) / len(goal.mdds) * 100:.1f} pp"
    )


# -- a few cells end to end --------------------------------------------------------------------------------


def _cli(project: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    evalkit = Path(sys.executable).with_name("evalkit")
    command = [str(evalkit) if evalkit.exists() else sys.executable, *([] if evalkit.exists() else ["-m", "evalkit"])]
    done = subprocess.run([*command, *args, "--json"], cwd=project, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"evalkit {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return done.returncode, json.loads(done.stdout)


def end_to_end(options: argparse.Namespace) -> None:
    """``evalkit run`` against a seeded stochastic test server: a few cells, fresh stores."""
    from tests.support.chat_server import ChatServer, StochasticResponder

    cells = (("paired", 30, 0.8, 5, 0.0), ("paired", 30, 0.8, 5, 0.2), ("tolerance", 30, 0.8, 1, 0.0), ("paired", 30, 0.8, 1, 0.0))
    print(f"\nEnd to end through `evalkit run --fail-on-regression` ({options.cli_trials} trials per cell, fresh store each):\n")
    print("| gate | cases | p | repeats | drop | gate failed | inconclusive |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    responder = StochasticResponder(0.8, seed=options.seed)
    with tempfile.TemporaryDirectory() as folder, ChatServer(responder=responder) as server:
        project = Path(folder)
        prompts = [{"id": f"case-{i:02d}", "prompt": f"Say w-{i:02d}", "assertions": [{"contains": f"w-{i:02d}"}]} for i in range(30)]
        (project / "set.json").write_text(json.dumps({"identifier": "bench.words", "name": "Words", "prompts": prompts}))
        (project / "evalkit.toml").write_text(
            '[sets]\npaths = ["set.json"]\n'
            f'[providers.prod]\nadapter = "openai"\nbase_url = "{server.base_url}"\nmodel = "smart"\n'
            'api_key_env = "BENCH_KEY"\nmax_attempts = 1\ntimeout = 10\n'
        )
        env = {**os.environ, "BENCH_KEY": "sk-bench-0123456789abcdef", "NO_COLOR": "1"}
        trial = 0
        for method, n, p, repeats, drop in cells:
            failed = inconclusive = 0
            for _ in range(options.cli_trials):
                trial += 1
                database = f"sqlite:///{project / f'trial-{trial}.db'}"
                base = ("run", "bench.words", "--provider", "prod", "--gate", method, "--repeats", str(repeats), "--database", database)
                responder.p = p
                _cli(project, env, *base)
                responder.p = p - drop
                code, document = _cli(project, env, *base, "--fail-on-regression")
                failed += code == 1
                inconclusive += document["verdict"]["state"] == "inconclusive"
            print(
                f"| {method} | {n} | {p} | {repeats} | {int(drop * 100)} pp | {failed}/{options.cli_trials} | "
                f"{inconclusive}/{options.cli_trials} |"
            )


def main() -> None:
    """Run the grid, then the end-to-end cells."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100, help="fresh trials per cell (default 100)")
    parser.add_argument("--chains", type=int, default=10, help="chains per cell (default 10)")
    parser.add_argument("--chain", type=int, default=10, help="unchanged runs per chain (default 10)")
    parser.add_argument("--quick", action="store_true", help="a reduced grid: sizes 20/50, p 0.8, repeats 1 and 5")
    parser.add_argument("--no-grid", dest="grid", action="store_false", help="only the end-to-end cells")
    parser.add_argument("--cli-trials", type=int, default=10, help="trials per end-to-end cell (default 10; 0 skips them)")
    parser.add_argument("--seed", type=int, default=33, help="the seed of every outcome (default 33)")
    options = parser.parse_args()
    if options.grid:
        grid(options)
    if options.cli_trials:
        end_to_end(options)


if __name__ == "__main__":
    main()
