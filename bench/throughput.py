"""Throughput of a whole run against an OpenAI-compatible endpoint with a fixed 50 ms delay.

2,000 prompts with three checks each, at concurrency 1, 16 and 64, through the real kernel
(`evaluate_set`: the openai generator, the deterministic grader, a SQLite store). The server runs
in a child process so its CPU is not charged to the client. Each concurrency runs in a fresh
process, so peak memory (max RSS) is that configuration's own. Prints wall time, client CPU seconds
per 1,000 prompts, peak memory and wall-time efficiency = (N × delay / concurrency) / wall.

Goals: efficiency >= 0.9 at 16 and >= 0.75 at 64; client CPU under 1 s per 1,000 prompts.

    python bench/throughput.py [--prompts 2000] [--delay 0.05] [--concurrency 1 16 64]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def build_set(prompts: int):
    """A set of ``prompts`` prompts, each with three checks the server's answer satisfies."""
    from evalkit import Assertion, GoldenPrompt, GoldenPromptSet

    return GoldenPromptSet(
        identifier="bench.throughput",
        name="Throughput benchmark",
        prompts=[
            GoldenPrompt(
                id=f"p{i:06d}",
                prompt=f"Question number {i}: what is the capital of France?",
                assertions=[Assertion.contains("Paris"), Assertion.regex(r"/\bparis\b/i"), Assertion.max_words(20)],
            )
            for i in range(prompts)
        ],
    )


def measure_one(base_url: str, prompts: int, concurrency: int) -> dict[str, float]:
    """Run the set once in this process and return the figures."""
    from evalkit.config import Config, ProviderInstance
    from evalkit.evaluation import evaluate_set

    golden = build_set(prompts)
    config = Config(
        providers={
            "bench": ProviderInstance(
                "bench", "openai",
                {"base_url": base_url, "model": "bench-model", "concurrency": concurrency, "api_key_env": "BENCH_KEY"},
            )
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        cpu, wall = time.process_time(), time.perf_counter()
        outcome = evaluate_set(
            golden, provider="bench", config=config, database=f"sqlite:///{folder}/bench.db", concurrency=concurrency
        )
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
    run = outcome.run
    assert run.passed_count == prompts, f"only {run.passed_count} of {prompts} passed: {run.status}"
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"wall_s": wall, "cpu_s": cpu, "peak_mib": peak_kib / 1024, "passed": run.passed_count}


def main() -> None:
    """Start the server, measure every concurrency in a fresh process, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--child", nargs=3, metavar=("URL", "PROMPTS", "CONCURRENCY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, prompts, concurrency = args.child
        print(json.dumps(measure_one(url, int(prompts), int(concurrency))))
        return
    from tests.support.chat_server import ChatServerProcess

    print(f"{args.prompts} prompts x 3 checks, server delay {args.delay * 1000:.0f} ms, SQLite store")
    print(f"{'concurrency':>11} {'wall s':>8} {'CPU s/1k':>9} {'peak MiB':>9} {'efficiency':>10}")
    with ChatServerProcess(delay=args.delay, text="The capital of France is Paris.") as server:
        for concurrency in args.concurrency:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
            done = subprocess.run(
                [sys.executable, __file__, "--child", server.base_url, str(args.prompts), str(concurrency)],
                capture_output=True, text=True, env=env, check=True,
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            ideal = args.prompts * args.delay / concurrency
            print(
                f"{concurrency:>11} {figures['wall_s']:>8.2f} {figures['cpu_s'] / args.prompts * 1000:>9.3f} "
                f"{figures['peak_mib']:>9.1f} {ideal / figures['wall_s']:>10.3f}"
            )


if __name__ == "__main__":
    main()
