"""A large golden set in each format a set file is written in: ``evalkit validate`` in a fresh process.

A set of N prompts, each as a team writes one (an id, the prompt, a ``system_prompt``, tags, a
``reference`` answer and three checks: ``contains_any``, ``regex`` and ``max_words``), is written
into a fresh project folder as ``evals/big.yaml``, ``evals/big.json`` and ``evals/big.jsonl`` in
turn, and each is checked by a fresh ``evalkit validate evals``; with ``--run``, the YAML one is
then run as the project's set (``evalkit run big --provider bench --concurrency 64 --json``
against the test chat server, as bench/set_files.py runs its JSONL file). Printed per command:
the file's size, wall from spawn to exit, CPU (user + system) and peak RSS of the child
(``os.wait4``, bench/set_files.py's :func:`evalkit`), its exit code and its last line; the best
(lowest) of ``--repeats`` runs.

    python bench/bigset.py [--prompts 50000] [--formats yaml json jsonl] [--repeats 1] [--run]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.set_files import best_of, evalkit, run  # noqa: E402

FORMATS = ("yaml", "json", "jsonl")


def prompt(n: int) -> dict[str, Any]:
    """Prompt ``n`` of the set, as a team's exported set holds one."""
    return {
        "id": f"question-{n}",
        "prompt": f"Our office number {n} is open Monday to Friday, 9am to 5pm. When is it open? Answer with the days and hours.",
        "system_prompt": "You are the front desk of a small company. Answer briefly and politely.",
        "tags": ["hours", f"office-{n % 50}"],
        "reference": f"Office {n} is open Monday to Friday, 9am to 5pm.",
        "assertions": [
            {"contains_any": ["Monday", "weekdays"], "name": "named_the_days"},
            {"regex": "/9(:00)?\\s*(am|-)/i", "name": "stated_opening_time"},
            {"max_words": 40},
        ],
    }


def write_set(folder: Path, prompts: int, suffix: str) -> Path:
    """``folder/evals/big.SUFFIX``: the set ``big`` of ``prompts`` prompts, written as a user writes that format."""
    evals = folder / "evals"
    evals.mkdir(parents=True)
    file = evals / f"big.{suffix}"
    header = {"identifier": "big", "name": "A large set", "description": "bench/bigset.py"}
    with file.open("w", encoding="utf-8") as out:
        if suffix == "jsonl":
            out.write(json.dumps(header) + "\n")
            for n in range(prompts):
                out.write(json.dumps(prompt(n)) + "\n")
        elif suffix == "json":
            json.dump({**header, "prompts": [prompt(n) for n in range(prompts)]}, out, indent=2)
        else:
            import yaml

            out.write(yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=4096) + "prompts:\n")
            for n in range(prompts):  # one prompt at a time: the whole set through the dumper takes minutes
                out.write(yaml.safe_dump([prompt(n)], sort_keys=False, allow_unicode=True, width=4096))
    return file


def main() -> None:
    """Write each format's file, validate it (and run the YAML one), print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=50_000)
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--run", action="store_true", help="also run the YAML set against the test chat server")
    args = parser.parse_args()
    print(f"evalkit validate evals, one set file of {args.prompts:,} prompts, fresh process, best of {args.repeats};"
          f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")  # fmt: skip
    header = f"{'command':<16}{'MB':>7}{'wall s':>9}{'CPU s':>9}{'RSS MiB':>9}{'exit':>6}  last line"
    print(header)
    print("-" * len(header))
    jobs = [(f"validate {suffix}", suffix, False) for suffix in args.formats]
    jobs += [("run yaml", "yaml", True)] if args.run else []
    for label, suffix, running in jobs:
        with tempfile.TemporaryDirectory() as folder:
            size = write_set(Path(folder), args.prompts, suffix).stat().st_size / 1e6
            runs = [run(Path(folder)) if running else evalkit(Path(folder), "validate", "evals") for _ in range(args.repeats)]
        best = best_of(runs)
        print(f"{label:<16}{size:>7.1f}{best['wall']:>9.2f}{best['cpu']:>9.2f}{best['rss_mib']:>9.1f}{best['code']:>6}  {best['last'][:70]}", flush=True)


if __name__ == "__main__":
    main()
