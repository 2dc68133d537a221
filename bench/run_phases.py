"""Where one `evalkit run` spends its wall and CPU time, phase by phase.

The job of bench/throughput.py (``evalkit run bench.capitals --provider bench --concurrency C
--json``, the installed bench set, the test chat server in its own process, a fresh project and
SQLite store), in one fresh child process whose phases are timed **in-process** (labelled so:
the child wraps the kernel's functions with timers, which costs a little itself). The parent
adds what the child cannot see: the interpreter's start before the first import and its exit
after ``main()`` returns. What is not a phase of its own (argument parsing, configuration, the
lease, the run header) is the "other" row.

    python bench/run_phases.py [--prompts 2000] [--delay 0.05] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: (module, function, label): what the child times. A function imported by name elsewhere is
#: wrapped where it is looked up at call time.
PHASES = (
    ("evalkit.catalog", "prompt_set_catalog", "find the set (entry points, providers)"),
    ("evalkit.run.answering.prompts", "validate_prompt_set", "check, count and fingerprint the set"),
    ("evalkit.components", "bind_generator", "build the generator (its plugin's imports)"),
    ("evalkit.components", "check_generator_ready", "readiness probe (GET /models)"),
    ("evalkit.run.library", "open_repository", "open (create, migrate) the store"),
    ("evalkit.run.answering.prompts", "answer_prompts", "answer, grade and store every case"),
    ("evalkit.run.lifecycle", "settle", "verdict (counted by the store)"),
    ("evalkit.cli.json_output", "print_json_streamed", "print the --json document"),
)


#: The modules ``evalkit run`` imports when its handler starts (before the phases above).
RUN_PATH_MODULES = ("evalkit.cli.run_cmd", "evalkit.cli.render", "evalkit.cli.reporting", "evalkit.config", "evalkit.tolerance")


def child(argv: list[str]) -> None:
    """Run the CLI in this process with every phase timed; print the figures as JSON on stderr."""
    started = time.perf_counter()
    import evalkit
    from evalkit.cli import main

    # What `evalkit run` imports before it asks anything (the CLI imports a command's modules lazily).
    modules = [importlib.import_module(name) for name in (*RUN_PATH_MODULES, *(m for m, _, _ in PHASES))]
    imported = time.perf_counter()
    cpu_imported = time.process_time()
    figures: dict[str, list[float]] = {}
    for module, (_, name, label) in zip(modules[len(RUN_PATH_MODULES):], PHASES, strict=True):
        _wrap(module, name, figures.setdefault(label, [0.0, 0.0]))
    sys.argv = ["evalkit", *argv]
    try:
        code = main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    ended = time.perf_counter()
    report = {
        "imports": [imported - started, cpu_imported],
        "phases": figures,
        "main": [ended - imported, time.process_time() - cpu_imported],
        "code": code,
        "end_epoch": time.time(),
        "code_from": str(Path(evalkit.__file__).parent.parent),
    }
    sys.stderr.write("\n@phases@" + json.dumps(report) + "\n")
    sys.stderr.flush()


def _wrap(module: Any, name: str, total: list[float]) -> None:
    original = getattr(module, name)

    if _is_coroutine(original):

        @functools.wraps(original)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return await original(*args, **kwargs)
            finally:
                total[0] += time.perf_counter() - wall
                total[1] += time.process_time() - cpu

        setattr(module, name, timed_async)
        return

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            total[0] += time.perf_counter() - wall
            total[1] += time.process_time() - cpu

    setattr(module, name, timed)


def _is_coroutine(function: Any) -> bool:
    import inspect

    return inspect.iscoroutinefunction(function)


def main() -> None:
    """Install the bench set, run the child against the test server, print the phases."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return

    from bench.throughput import KEY_VARIABLE, install_plugins, write_project
    from tests.support.chat_server import ChatServerProcess

    with tempfile.TemporaryDirectory() as folder:
        plugins = install_plugins(Path(folder))
        # a PYTHONPATH given to this script stays first: `PYTHONPATH=/tmp/old/core:/tmp/old/plugins`
        # times another checkout's code (an A/B); the bench's own paths follow it
        path = os.pathsep.join(filter(None, (os.environ.get("PYTHONPATH"), str(ROOT), str(plugins))))
        env = {**os.environ, "PYTHONPATH": path, "EVALKIT_BENCH_PROMPTS": str(args.prompts), KEY_VARIABLE: "bench"}
        env.pop("EVALKIT_CONFIG", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        report = None
        for _ in range(2):  # the first writes the bytecode caches the second reads, as after a user's first run
            with ChatServerProcess(delay=args.delay, text="The capital of France is Paris.", quiet=True) as server:
                project = Path(folder) / f"project-{time.monotonic_ns()}"
                project.mkdir()
                write_project(project, server.base_url)
                command = [sys.executable, str(Path(__file__).resolve()), "--child", "run", "bench.capitals", "--provider", "bench",
                           "--concurrency", str(args.concurrency), "--json"]  # fmt: skip
                spawned = time.perf_counter()
                done = subprocess.run(command, env=env, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                wall = time.perf_counter() - spawned
                exited = time.time()
                lines = [line for line in done.stderr.splitlines() if line.startswith("@phases@")]
                if done.returncode != 0 or not lines:
                    raise SystemExit(f"the run failed ({done.returncode}): {done.stderr[-2000:]}")
                report = json.loads(lines[-1].removeprefix("@phases@"))
        assert report is not None
    _print(report, wall, exited, args)


def _print(report: dict[str, Any], wall: float, exited: float, args: argparse.Namespace) -> None:
    ideal = args.prompts * args.delay / args.concurrency
    print(f"evalkit run, {args.prompts:,} prompts, C={args.concurrency}, server delay {args.delay * 1000:g} ms "
          f"(ideal request window {ideal:.2f} s); load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print("phases timed in-process (one fresh, instrumented child process)")
    print(f"{'phase':<44}{'wall s':>8}{'CPU s':>8}")
    print("-" * 60)
    imports_wall, imports_cpu = report["imports"]
    exit_wall = exited - report["end_epoch"]
    start_wall = wall - imports_wall - report["main"][0] - exit_wall
    rows = [("interpreter start (parent-measured)", start_wall, None), ("imports (CPU: from the process start)", imports_wall, imports_cpu)]
    accounted_wall = accounted_cpu = 0.0
    for label, (phase_wall, phase_cpu) in report["phases"].items():
        rows.append((label, phase_wall, phase_cpu))
        accounted_wall += phase_wall
        accounted_cpu += phase_cpu
    main_wall, main_cpu = report["main"]
    rows.append(("other (arguments, config, run header, lease)", main_wall - accounted_wall, main_cpu - accounted_cpu))
    rows.append(("interpreter exit (parent-measured)", exit_wall, None))
    for label, phase_wall, phase_cpu in rows:
        cpu = f"{phase_cpu:>8.3f}" if phase_cpu is not None else f"{'':>8}"
        print(f"{label:<44}{phase_wall:>8.3f}{cpu}")
    print("-" * 60)
    answering = report["phases"]["answer, grade and store every case"][0]
    print(f"{'spawn to exit (parent-measured)':<44}{wall:>8.3f}")
    print(f"outside the request window: {wall - answering:.3f} s; efficiency {ideal / wall:.3f}")
    print(f"evalkit imported from {report['code_from']}")


if __name__ == "__main__":
    main()
