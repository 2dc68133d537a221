"""Mutation testing of the verdict core: would the tests notice a wrong verdict?

Usage: ``python bench/mutation.py [--config bench/mutation.toml] [--jobs N] [--module NAME] [--list]``
(``tox -e mutation`` runs it). Exit 0 when every module kills at least its ``minimum`` score.

Each mutant changes **one** operator or constant of one module (``<`` → ``<=``, ``and`` → ``or``,
``not x`` → ``x``, ``True`` → ``False``, ``n`` → ``n + 1``, ``"text"`` → ``"XXtextXX"``, ``+=`` →
``-=``, …). The module's tests run in a fresh interpreter in which an import hook serves the
mutated source instead of the file on disk — the working tree is never written, so mutants can run
in parallel and a crash leaves nothing behind. A mutant is *killed* when the tests fail (or time
out), *survives* when they pass, and is *equivalent* when the config lists it: a change no
behaviour can observe. The score of a module is killed / (mutants − equivalent).

A mutant's id is ``module:line:column:operator`` (``pcre.py:57:11:Lt->LtE#0``, the number being
the position of the operator in a chained comparison; a string mutant names the start of the
string, escaped: ``checks.py:84:38:str:regex ->XX``); ``--list`` prints
every mutant with its id and the mutated line, to review survivors and write the equivalents down.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_ROOT = ROOT / "core"

_BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
           ast.Mod: ast.Mult, ast.Pow: ast.Mult}  # fmt: skip
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}  # fmt: skip
_BOOL = {ast.And: ast.Or, ast.Or: ast.And}


@dataclass(frozen=True)
class Mutant:
    """One change to one module."""

    module: str  # path relative to core/evalkit, e.g. "retrieval/scoring.py"
    index: int  # position among the module's mutation points
    line: int
    column: int
    operator: str

    @property
    def id(self) -> str:
        """``module:line:column:operator``."""
        return f"{self.module}:{self.line}:{self.column}:{self.operator}"


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _skipped_subtrees(tree: ast.AST) -> set[int]:
    """Nodes never mutated: annotations, ``__all__``, ``if TYPE_CHECKING`` blocks, docstrings."""
    skipped = _docstring_nodes(tree)
    for node in ast.walk(tree):
        roots: list[ast.AST] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.extend(a.annotation for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs] if a.annotation)
            for extra in (node.args.vararg, node.args.kwarg):
                if extra is not None and extra.annotation is not None:
                    roots.append(extra.annotation)
            if node.returns is not None:
                roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            roots.append(node)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            roots.append(node)
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            roots.append(node.format_spec)  # "XX.1fXX" is no format: trivially killed, so not counted
        for root in roots:
            skipped.update(id(n) for n in ast.walk(root))
    return skipped


def _points(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every mutation point of ``tree`` in a stable order: (node, operator label)."""
    skipped = _skipped_subtrees(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            yield node, f"{type(node.op).__name__}->{_BINARY[type(node.op)].__name__}"
        elif isinstance(node, ast.AugAssign) and type(node.op) in _BINARY:
            yield node, f"Aug{type(node.op).__name__}->{_BINARY[type(node.op)].__name__}"
        elif isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                yield node, f"{type(op).__name__}->{_COMPARE[type(op)].__name__}#{position}"
        elif isinstance(node, ast.BoolOp):
            yield node, f"{type(node.op).__name__}->{_BOOL[type(node.op)].__name__}"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            yield node, f"drop-{type(node.op).__name__}"
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                yield node, f"{value}->{not value}"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                yield node, f"{value!r}->+1"
            elif isinstance(value, str) and value:
                yield node, f"str:{repr(value[:24])[1:-1]}->XX"


def _mutate(node: ast.AST, operator: str) -> None:
    if isinstance(node, ast.BinOp):
        node.op = _BINARY[type(node.op)]()
    elif isinstance(node, ast.AugAssign):
        node.op = _BINARY[type(node.op)]()
    elif isinstance(node, ast.Compare):
        position = int(operator.rsplit("#", 1)[1])
        node.ops[position] = _COMPARE[type(node.ops[position])]()
    elif isinstance(node, ast.BoolOp):
        node.op = _BOOL[type(node.op)]()
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            node.value = not value
        elif isinstance(value, (int, float)):
            node.value = value + 1
        else:
            node.value = f"XX{value}XX"
    else:  # pragma: no cover - _points yields no other node
        raise AssertionError(operator)


class _DropUnary(ast.NodeTransformer):
    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if node is self.target:
            return node.operand
        return self.generic_visit(node)


def mutants_of(module: str) -> list[Mutant]:
    """Every mutant of ``module`` (a path under core/evalkit)."""
    tree = ast.parse((PACKAGE_ROOT / "evalkit" / module).read_text(encoding="utf-8"))
    return [
        Mutant(module, index, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), operator)
        for index, (node, operator) in enumerate(_points(tree))
    ]


def mutated_source(mutant: Mutant) -> str:
    """The module's source with ``mutant`` applied."""
    tree = ast.parse((PACKAGE_ROOT / "evalkit" / mutant.module).read_text(encoding="utf-8"))
    node, operator = list(_points(tree))[mutant.index]
    if operator.startswith("drop-"):
        tree = _DropUnary(node).visit(tree)
    else:
        _mutate(node, operator)
    return ast.unparse(ast.fix_missing_locations(tree))


def mutated_line(mutant: Mutant) -> str:
    """The mutated statement's line, before → after, for reviewing a survivor."""
    source = (PACKAGE_ROOT / "evalkit" / mutant.module).read_text(encoding="utf-8").splitlines()
    before = source[mutant.line - 1].strip() if 0 < mutant.line <= len(source) else "?"
    tree = ast.parse("\n".join(source))
    node, operator = list(_points(tree))[mutant.index]
    after = copy.deepcopy(node)
    if operator.startswith("drop-"):
        assert isinstance(after, ast.UnaryOp)
        after = after.operand
    else:
        _mutate(after, operator)
    return f"{before}    [{ast.unparse(node)} -> {ast.unparse(after)}]"


class _MutantFinder:
    """Serves ``path`` as the source of module ``name`` (an import hook on ``sys.meta_path``)."""

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path

    def find_spec(self, fullname: str, target: object = None, module: object = None) -> object:
        return importlib.util.spec_from_file_location(fullname, self.path) if fullname == self.name else None


@dataclass
class Result:
    """What happened to one mutant."""

    mutant: Mutant
    outcome: str  # killed | survived | timeout | equivalent | incompetent
    seconds: float = 0.0


@dataclass
class ModuleConfig:
    """One module under test: its tests and the mutants known to be equivalent."""

    path: str
    tests: list[str]
    equivalent: set[str] = field(default_factory=set)


def _dotted(module: str) -> str:
    return "evalkit." + module.removesuffix(".py").replace("/", ".")


def _child(mutant: Mutant, file: str, tests: list[str]) -> int:
    """In the forked child: forget evalkit and the tests, serve the mutant, run the tests."""
    import pytest

    for name in list(sys.modules):
        if name == "evalkit" or name.startswith(("evalkit.", "tests.", "evalkit_")) or name == "tests":
            del sys.modules[name]
    sys.meta_path.insert(0, _MutantFinder(_dotted(mutant.module), file))  # type: ignore[arg-type]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    # evalkit's own pytest plugin (an entry point) would make pytest rewrite, and so load from disk,
    # every evalkit module ahead of this finder: keep it out, and keep assertions plain.
    return int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-p", "no:evalkit", "--assert=plain", *tests]))


def _start(mutant: Mutant, config: ModuleConfig, scratch: Path) -> tuple[int, str] | Result:
    """Fork a child that runs ``config.tests`` against ``mutant``; its pid and source file."""
    if mutant.id in config.equivalent:
        return Result(mutant, "equivalent")
    try:
        source = mutated_source(mutant)
        compile(source, mutant.module, "exec")
    except (SyntaxError, ValueError):
        return Result(mutant, "incompetent")
    file = scratch / f"{mutant.index}_{Path(mutant.module).name}"
    file.write_text(source, encoding="utf-8")
    pid = os.fork()
    if pid == 0:  # the child never returns into the parent's code
        code = 3
        try:
            code = _child(mutant, str(file), config.tests)
        finally:
            os._exit(code)
    return pid, str(file)


def run_mutants(mutants: list[Mutant], config: ModuleConfig, timeout: float, jobs: int) -> list[Result]:
    """Run every mutant, at most ``jobs`` forked children at a time; results in mutant order."""
    done: dict[int, Result] = {}
    running: dict[int, tuple[Mutant, float]] = {}
    queue = list(mutants)
    with tempfile.TemporaryDirectory(prefix="evalkit-mutants-") as scratch:
        while queue or running:
            while queue and len(running) < jobs:
                mutant = queue.pop(0)
                started = _start(mutant, config, Path(scratch))
                if isinstance(started, Result):
                    done[mutant.index] = started
                else:
                    running[started[0]] = (mutant, time.perf_counter())
            for pid, (mutant, began) in list(running.items()):
                finished, status = os.waitpid(pid, os.WNOHANG)
                elapsed = time.perf_counter() - began
                if finished:
                    del running[pid]
                    code = os.waitstatus_to_exitcode(status)
                    done[mutant.index] = Result(mutant, "survived" if code == 0 else "killed", elapsed)
                elif elapsed > timeout:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    del running[pid]
                    done[mutant.index] = Result(mutant, "timeout", elapsed)
            time.sleep(0.01)
    return [done[m.index] for m in mutants]


def _warm_up() -> None:
    """Import what the tests import, once, so each forked child only re-imports evalkit."""
    import evalkit.checks  # noqa: F401
    import evalkit.evaluation  # noqa: F401
    import evalkit.retrieval.evaluation  # noqa: F401
    import jsonschema  # noqa: F401
    import pytest  # noqa: F401
    import referencing  # noqa: F401


def load_config(path: Path) -> tuple[dict[str, ModuleConfig], float]:
    """The modules to mutate, from the TOML config, and the minimum score."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    modules = {
        name: ModuleConfig(name, list(entry["tests"]), set(entry.get("equivalent", [])))
        for name, entry in data["modules"].items()
    }
    return modules, float(data.get("minimum", 0.95))


def _baseline_seconds(config: ModuleConfig) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *config.tests],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"the tests of {config.path} fail without any mutant:\n{done.stdout[-2000:]}")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run every mutant and print the per-module table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "bench" / "mutation.toml")
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--module", action="append", help="only this module (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--nice", type=int, default=10, help="lower this process's priority (default 10)")
    args = parser.parse_args(argv)
    if args.nice and hasattr(os, "nice"):
        os.nice(args.nice)
    modules, minimum = load_config(args.config)
    chosen = [modules[name] for name in (args.module or modules)]
    if args.list:
        for config in chosen:
            for mutant in mutants_of(config.path):
                print(f"{mutant.id}\t{mutated_line(mutant)}")
        return 0
    sys.dont_write_bytecode = True
    _warm_up()
    started = time.perf_counter()
    results: dict[str, list[Result]] = {}
    for config in chosen:
        timeout = max(30.0, 5 * _baseline_seconds(config))
        mutants = mutants_of(config.path)
        unknown = config.equivalent - {m.id for m in mutants}
        if unknown:
            print(f"warning: {config.path}: listed equivalent mutants that no longer exist: {', '.join(sorted(unknown))}")
        began = time.perf_counter()
        results[config.path] = run_mutants(mutants, config, timeout, args.jobs)
        survived = sum(1 for r in results[config.path] if r.outcome == "survived")
        print(f"{config.path}: {len(mutants)} mutants, {survived} survived ({time.perf_counter() - began:.0f} s)", flush=True)
    return report(results, minimum, time.perf_counter() - started)


def report(results: dict[str, list[Result]], minimum: float, seconds: float) -> int:
    """Print the survivors and the per-module table; 1 when a module scores below ``minimum``."""
    failing = []
    print()
    for items in results.values():
        for result in items:
            if result.outcome == "survived":
                print(f"survived  {result.mutant.id}\t{mutated_line(result.mutant)}")
    print()
    header = f"{'module':<26} {'mutants':>7} {'killed':>7} {'timeout':>7} {'survived':>8} {'equiv.':>6} {'score':>7}"
    print(header)
    print("-" * len(header))
    totals = {"mutants": 0, "killed": 0, "survived": 0, "equivalent": 0}
    for module, items in results.items():
        counts = {o: sum(1 for r in items if r.outcome == o) for o in ("killed", "timeout", "survived", "equivalent", "incompetent")}
        killed = counts["killed"] + counts["timeout"]
        scored = len(items) - counts["equivalent"] - counts["incompetent"]
        score = killed / scored if scored else 1.0
        if score < minimum:
            failing.append(module)
        totals["mutants"] += len(items)
        totals["killed"] += killed
        totals["survived"] += counts["survived"]
        totals["equivalent"] += counts["equivalent"]
        print(
            f"{module:<26} {len(items):>7} {counts['killed']:>7} {counts['timeout']:>7} {counts['survived']:>8} "
            f"{counts['equivalent']:>6} {score:>7.1%}"
        )
    scored = totals["mutants"] - totals["equivalent"]
    print("-" * len(header))
    overall = totals["killed"] / scored if scored else 1.0
    print(f"{'all':<26} {totals['mutants']:>7} {totals['killed']:>15} {totals['survived']:>8} {totals['equivalent']:>6} {overall:>7.1%}")
    print(f"\n{totals['mutants']} mutants in {seconds:.0f} s; minimum score per module {minimum:.0%}")
    if failing:
        print(f"below the minimum: {', '.join(failing)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
