"""Checking a large set file as a user does: ``evalkit validate evals`` in a fresh process.

A JSONL file of N prompts (one ``contains`` check each, as a team's exported set looks) is written
into a fresh project folder, twice: valid, and broken on every line (the check written ``type:``
where ``kind:`` belongs, so the schema reports two problems a prompt). Each is validated by a
fresh ``evalkit validate evals``, and the valid one is then run as the project's set
(``[sets] paths``): ``evalkit run big --provider bench --concurrency 64 --json`` against the test
chat server (1 ms delay, in its own process; the ``openai`` adapter, as bench/throughput.py runs
it). Printed per command: wall from spawn to exit, CPU (user + system) and peak RSS of the child
(``os.wait4``), its exit code and its last line. The best (lowest) of ``--repeats`` runs is printed.

    python bench/set_files.py [--prompts 200000] [--repeats 1] [--no-run]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def write_set(folder: Path, prompts: int, *, broken: bool) -> None:
    """``folder/evals/big.jsonl``: ``prompts`` prompts, each line broken when ``broken``."""
    evals = folder / "evals"
    evals.mkdir(parents=True)
    key = "type" if broken else "kind"
    with (evals / "big.jsonl").open("w", encoding="utf-8") as out:
        for n in range(prompts):
            row = {"id": f"p{n}", "prompt": f"What is {n} + 1?", "assertions": [{key: "contains", "value": str(n + 1)}]}
            out.write(json.dumps(row) + "\n")


def evalkit(folder: Path, *arguments: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """One fresh ``evalkit ARGUMENTS`` in ``folder``: wall, CPU, peak RSS, exit code, last line."""
    command = [str(Path(sys.executable).parent / "evalkit"), *arguments]
    env = {k: v for k, v in (env or os.environ).items() if k != "EVALKIT_CONFIG"}
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        output.seek(0)
        lines = output.read().decode("utf-8", "replace").splitlines()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "code": os.waitstatus_to_exitcode(status),
        "last": lines[-1] if lines else "",
    }


def best_of(runs: list[dict[str, object]]) -> dict[str, object]:
    """The lowest wall, CPU and peak RSS of ``runs`` (each from :func:`evalkit`), with the last one's exit code and
    last line: the figures a printout's row shows."""
    best: dict[str, object] = {key: min(r[key] for r in runs) for key in ("wall", "cpu", "rss_mib")}  # type: ignore[type-var]
    return {**best, "code": runs[-1]["code"], "last": str(runs[-1]["last"])}


def run(folder: Path) -> dict[str, object]:
    """``evalkit run big`` in ``folder`` against the test chat server (see the module docstring)."""
    from bench.throughput import KEY_VARIABLE, write_project
    from tests.support.chat_server import ChatServerProcess

    with ChatServerProcess(delay=0.001, text="The answer is 42.", quiet=True) as server:
        write_project(folder, server.base_url)
        with (folder / "evalkit.toml").open("a", encoding="utf-8") as config:
            config.write('\n[sets]\npaths = ["evals"]\n')
        figures = evalkit(folder, "run", "big", "--provider", "bench", "--concurrency", "64", "--json", env={**os.environ, KEY_VARIABLE: "bench"})
    document = json.loads(str(figures["last"]))
    figures["last"] = f"{document['status']}, {document['passed']:,} of {document['answered']:,} passed"
    return figures


def main() -> None:
    """Write both files, validate each, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-run", action="store_true", help="only validate")
    args = parser.parse_args()
    print(f"evalkit validate evals, one JSONL file of {args.prompts:,} prompts, fresh process, best of {args.repeats};"
          f" load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")  # fmt: skip
    header = f"{'command':<18}{'wall s':>9}{'CPU s':>9}{'RSS MiB':>9}{'exit':>6}  last line"
    print(header)
    print("-" * len(header))
    jobs = [("validate valid", False, False), ("validate broken", True, False)]
    jobs += [] if args.no_run else [("run valid", False, True)]
    for label, broken, running in jobs:
        with tempfile.TemporaryDirectory() as folder:
            write_set(Path(folder), args.prompts, broken=broken)
            runs = [run(Path(folder)) if running else evalkit(Path(folder), "validate", "evals") for _ in range(args.repeats)]
        best = best_of(runs)
        print(f"{label:<18}{best['wall']:>9.2f}{best['cpu']:>9.2f}{best['rss_mib']:>9.1f}{best['code']:>6}  {best['last'][:80]}")


if __name__ == "__main__":
    main()
