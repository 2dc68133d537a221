"""Start-up budget: ``evalkit --help`` within 6x and ``evalkit list`` within 8x a bare ``python -c pass``.

Prints the best-of-N wall time of each command (in fresh processes, same interpreter) and the two
ratios, and checks that neither command imported aiohttp, jsonschema, peewee or a plugin module.

    python bench/startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("aiohttp", "jsonschema", "regex", "yaml", "peewee", "cattrs", "rich", "stevedore", "evalkit_plugins")


def evalkit_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m evalkit``."""
    script = Path(sys.executable).with_name("evalkit")
    if script.exists():
        return [str(script)]
    found = shutil.which("evalkit")
    return [found] if found else [sys.executable, "-m", "evalkit"]


def best_of(command: list[str], runs: int) -> float:
    """Minimum wall time over ``runs`` fresh processes (the least-disturbed run)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return min(times)


def imported_modules(
    argv: list[str], modules: tuple[str, ...] = HEAVY, *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> list[str]:
    """Those of ``modules`` that ``evalkit ARGV`` imported, run in a fresh interpreter (in ``cwd``,
    with ``env``) whose output is discarded; RuntimeError, with its stderr, when it does not exit 0."""
    probe = (
        "import sys, io, contextlib\n"
        "from evalkit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        code = main({argv!r})\n"
        "    except SystemExit as exc:\n"
        "        code = exc.code\n"
        f"print(code, ','.join(m for m in {modules!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False, cwd=cwd, env=env)
    code, _, loaded = done.stdout.strip().rpartition("\n")[2].partition(" ")
    if done.returncode or code not in ("0", "None"):
        raise RuntimeError(f"evalkit {' '.join(argv)} exited {code or done.returncode}:\n{done.stderr}")
    return [m for m in loaded.split(",") if m]


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    os.environ.setdefault("NO_COLOR", "1")
    bare = best_of([sys.executable, "-c", "pass"], args.runs)
    command = evalkit_command()
    helptime = best_of([*command, "--help"], args.runs)
    listtime = best_of([*command, "list"], args.runs)
    print(f"python -c pass   {bare * 1000:7.1f} ms")
    print(f"evalkit --help   {helptime * 1000:7.1f} ms   ratio {helptime / bare:4.2f}  (budget 6)")
    print(f"evalkit list     {listtime * 1000:7.1f} ms   ratio {listtime / bare:4.2f}  (budget 8)")
    for argv in (["--help"], ["list"]):
        loaded = imported_modules(argv)
        print(f"evalkit {' '.join(argv):<8} imported heavy modules: {', '.join(loaded) or 'none'}")


if __name__ == "__main__":
    main()
