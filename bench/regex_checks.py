"""What one time-limited pattern check costs: a ``regex`` assertion and a ``json_schema`` assertion
with a ``pattern``, graded in the main thread inside a run's alarm scope (as ``evalkit run`` grades)
and in another thread (a library caller running ``evaluate_set`` in a worker), beside the bare
search of the same pattern with no limit.

    python bench/regex_checks.py [--number 20000] [--repeats 5]

Each figure is microseconds of processor time per check (the process's, so a helper process the
kernel starts is not counted in it: its wall time is printed beside it), the best (lowest) of
``--repeats`` rounds of ``--number`` checks: on a shared, loaded machine wall time counts the
time other processes held the processor, and the best round is the one least disturbed by them. Only
the public kernel API is used (``evalkit.checks.evaluate``, ``evalkit.timeouts.alarm_scope``), so
the script measures any version of the kernel put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The bench set's regex assertion (tests/data/evalkit-bench-sets) and its answer.
PATTERN, ANSWER = r"/\bparis\b/i", "The capital of France is Paris."
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "pattern": r"^[A-Z][a-z]+$"}}}
JSON_ANSWER = '{"city": "Paris"}'


def best_microseconds(call: Callable[[], object], number: int, repeats: int) -> tuple[float, float]:
    """The lowest processor and wall time per call over ``repeats`` rounds of ``number`` calls, in µs."""
    call()  # compiled and cached before the clock starts
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(number):
            call()
        best_cpu = min(best_cpu, (time.process_time() - cpu) / number)
        best_wall = min(best_wall, (time.perf_counter() - wall) / number)
    return best_cpu * 1e6, best_wall * 1e6


def in_a_thread(measure: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    result: list[tuple[float, float]] = []
    thread = threading.Thread(target=lambda: result.append(measure()))
    thread.start()
    thread.join()
    return result[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=20_000, help="checks per round (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds; the best is printed (default 5)")
    args = parser.parse_args()

    import evalkit
    from evalkit import Answer, Assertion
    from evalkit.checks import BUILTIN_KINDS, evaluate
    from evalkit.timeouts import alarm_scope

    regex_check = Assertion.regex(PATTERN)
    schema_check = Assertion.json_schema(SCHEMA)
    answer, json_answer = Answer(ANSWER), Answer(JSON_ANSWER)
    assert evaluate(regex_check, answer, BUILTIN_KINDS).passed and evaluate(schema_check, json_answer, BUILTIN_KINDS).passed

    def measure(call: Callable[[], object], number: int | None = None) -> tuple[float, float]:
        return best_microseconds(call, number or args.number, args.repeats)

    def in_scope(call: Callable[[], object], number: int | None = None) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            with alarm_scope():
                return measure(call, number)

        return run

    bare = re.compile(r"\bparis\b", re.IGNORECASE | re.ASCII)
    rows: list[tuple[str, tuple[float, float]]] = [("bare re.search, no limit", measure(lambda: bare.search(ANSWER)))]
    try:
        import regex
    except ImportError:
        pass
    else:
        compiled = regex.compile(r"\bparis\b", regex.IGNORECASE | regex.ASCII)
        rows.append(("bare regex.search(timeout=1.0)", measure(lambda: compiled.search(ANSWER, timeout=1.0))))

    def grade_regex() -> object:
        return evaluate(regex_check, answer, BUILTIN_KINDS)

    def grade_schema() -> object:
        return evaluate(schema_check, json_answer, BUILTIN_KINDS)

    # Off the main thread the earlier kernel sent each check to a helper process: fewer calls there.
    slow = max(args.number // 100, 20)
    rows += [
        ("regex check, main thread (a run's alarm scope)", in_scope(grade_regex)()),
        ("regex check, another thread", in_a_thread(in_scope(grade_regex, slow))),
        ("json_schema pattern check, main thread (alarm scope)", in_scope(grade_schema)()),
        ("json_schema pattern check, another thread", in_a_thread(in_scope(grade_schema, slow))),
    ]
    print(f"evalkit from {Path(evalkit.__file__).parent}, Python {sys.version.split()[0]}")
    print(f"{'µs per check, best of ' + str(args.repeats):55} {'CPU':>10} {'wall':>10}")
    for name, (cpu, wall) in rows:
        print(f"{name:55} {cpu:10.2f} {wall:10.2f}")


if __name__ == "__main__":
    main()
