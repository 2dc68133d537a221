"""Mutation testing of the verdict core: would the tests notice a wrong verdict?

Usage: ``python bench/mutation.py [--module NAME]... [--jobs N] [--list] [--check]``
(``tox -e mutation`` runs it over every module of ``bench/mutation.toml``). Exit 0 when every
module kills at least its ``minimum`` score; 1 when one does not; 2 when the configuration is
wrong (a listed equivalent that matches no mutant, an equivalent without a reason, a module that
does not exist) or the tests fail without any mutant.

**Mutants.** Each mutant changes *one* operator or constant of one module (``<`` → ``<=``,
``and`` → ``or``, ``&`` → ``|`` (a query filter), ``not x`` → ``x``, ``True`` → ``False``, ``n`` → ``n + 1``, ``"text"`` →
``"XXtextXX"``, ``+=`` → ``-=``, …); docstrings, annotations, ``__all__`` and ``TYPE_CHECKING``
blocks are left alone. A mutant is *killed* when its tests fail (or time out), *survives* when
they pass, and is *equivalent* when the config lists it: a change no behaviour can observe, with
a one-line reason. The score of a module is killed / (mutants − equivalent − incompetent), an
incompetent mutant being one that does not compile.

**Ids that survive line moves.** A mutant's id names where it is by meaning, not by position:
``module:qualname:operator:text`` — the function (or class, or ``<module>``) it is in, the
operator, and the source it changes: the whole expression for an operator
(``pcre.py:_strip_comments:Lt->LtE#0:end < 0``, the ``#0`` being the operator's place in a
chained comparison), the expression a constant sits in for a constant
(``tolerance.py:parse_tolerance:0->+1:value < 0``). Text longer than 72 characters is cut and
ends with a hash of the whole (``...~1a2b3c4d``), so any edit of it changes the id. When the
same (function, operator, text) occurs again, ``@2``, ``@3``… follow in source order. Adding or
moving lines elsewhere changes no id; editing the mutated expression does, and then a listed
equivalent that no longer matches any mutant is an error, so an equivalence is never carried
over to code nobody re-read. ``--list`` prints every mutant with its line and column for humans.

**Tests chosen from coverage.** No module keeps a list of its tests. The candidate test files
(``tests`` in the config: all of ``tests/``) run once under coverage.py with each test as its own
context (the node id), and the map "line of a module → the tests that execute it" is cached in
``.mutation-cache/`` per test file, keyed by the test file's content and a hash of the code
(``core/``, ``plugins/``, the non-test files under ``tests/``, the config): a new commit rebuilds
it once, a new or edited test file re-runs only that file. Each mutant then runs only the tests
that execute its statement, fastest first, stopping at the first failure; a mutant in
module-level code (a constant, a class body, a default value, a decorator) or in code run while
modules are imported runs every test that executes any line of its module. A mutant no test
executes counts as survived ("no test" in the listing). Only the pytest process is measured,
so a test that runs evalkit in a child process neither selects nor kills a mutant; tests that
need PostgreSQL are left out (the variables that point at it are removed), so a score does not
depend on the machine.

**Mutated imports.** Each mutant runs in a child forked from this process, which forgets every
evalkit module and puts an import hook first on ``sys.meta_path`` that serves the mutated source
(compiled under the module's real file name) for that one module: tests, fixtures and the CLI
called in-process all import the mutant, the working tree is never written, and mutants can run
side by side. pytest runs in the child with ``--assert=plain`` and without evalkit's own pytest
plugin, either of which would load evalkit modules from disk ahead of the hook.

**CPU.** The process lowers its priority (``--nice``, default 19); ``--jobs`` (default 1) bounds
the children and the coverage workers; run one module at a time with ``--module`` and re-run only
the last run's survivors of a module with ``--survivors``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib.abc
import importlib.util
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_ROOT = ROOT / "core" / "evalkit"
DEFAULT_CONFIG = ROOT / "bench" / "mutation.toml"
DEFAULT_CACHE = ROOT / ".mutation-cache"
# What the children and the coverage workers pass to pytest, whatever the config adds: no cache
# written into the tree, no assertion rewriting and no evalkit plugin (both would import evalkit
# modules from disk ahead of the mutant), quiet.
PYTEST_FLAGS = ["-q", "-p", "no:cacheprovider", "-p", "no:evalkit", "--assert=plain"]
# Removed from the environment: a score must not depend on whether PostgreSQL is at hand, and
# mutants running side by side must not share one database.
HIDDEN_VARIABLES = ("EVALKIT_TEST_POSTGRES_URL", "EVALKIT_REQUIRE_POSTGRES", "EVALKIT_DATABASE_URL")

# `&` and `|` build the store's query filters (peewee): loosening one lets other scopes' runs in.
_BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
           ast.Mod: ast.Mult, ast.Pow: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}  # fmt: skip
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}  # fmt: skip
_BOOL = {ast.And: ast.Or, ast.Or: ast.And}
_TEXT_LIMIT = 72


class ConfigError(Exception):
    """The configuration (or the tree it names) is wrong: exit 2, naming the culprit."""


# --- mutation points -------------------------------------------------------------------------


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
                yield node, "str->XX"


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


@dataclass(frozen=True)
class _Place:
    """Where a node sits: its parent, the function it belongs to, the statement that runs it."""

    parent: ast.AST | None
    qualname: str
    statement: ast.AST | None
    in_function: bool  # inside a function's (or lambda's) body: runs when called, not when defined


def _places(tree: ast.Module) -> dict[int, _Place]:
    """The place of every node of ``tree``, by ``id(node)``."""
    places: dict[int, _Place] = {}
    statement_types = (ast.stmt, ast.excepthandler, ast.match_case)

    def visit(node: ast.AST, parent: ast.AST | None, qualname: str, statement: ast.AST | None, in_function: bool) -> None:
        places[id(node)] = _Place(parent, qualname, statement, in_function)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = node.name if qualname == "<module>" else f"{qualname}.{node.name}"
            body_in_function = in_function or not isinstance(node, ast.ClassDef)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt) and child in node.body:
                    visit(child, node, inner, child, body_in_function)
                else:  # decorators, defaults, bases: evaluated where the definition runs
                    visit(child, node, inner, node, in_function)
            return
        for child in ast.iter_child_nodes(node):
            child_statement = child if isinstance(child, statement_types) else statement
            child_in_function = in_function or (isinstance(node, ast.Lambda) and child is node.body)
            visit(child, node, qualname, child_statement, child_in_function)

    visit(tree, None, "<module>", None, False)
    return places


def _short(text: str) -> str:
    """``text`` on one line, cut to the limit with a hash of the whole when longer."""
    text = " ".join(text.split())
    if len(text) <= _TEXT_LIMIT:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{text[: _TEXT_LIMIT - 16]}...~{digest}"


def _named_text(node: ast.AST, places: dict[int, _Place]) -> str:
    """The source a mutant's id names: the expression an operator applies to, or the expression
    (or simple statement) a constant sits in — a constant alone (``0``) says nothing."""
    if not isinstance(node, ast.Constant):
        return ast.unparse(node)
    parent = places[id(node)].parent
    while parent is not None and not isinstance(parent, (ast.expr, ast.stmt)):
        parent = places[id(parent)].parent  # a keyword, an argument list, a comprehension
    compound = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
                ast.With, ast.AsyncWith, ast.Try, ast.Match, ast.Module)  # fmt: skip
    if parent is None or isinstance(parent, compound) or (hasattr(ast, "TryStar") and isinstance(parent, ast.TryStar)):
        return ast.unparse(node)
    return ast.unparse(parent)


@dataclass(frozen=True)
class Mutant:
    """One change to one module."""

    module: str  # path relative to core/evalkit, e.g. "retrieval/scoring.py"
    index: int  # position among the module's mutation points (in this version of the file)
    line: int
    column: int
    operator: str
    qualname: str  # the function or class it is in, or "<module>"
    text: str  # the source the id names (see _named_text)
    occurrence: int  # 0 for the first of the same (qualname, operator, text)
    lines: tuple[int, ...]  # the lines whose coverage selects its tests
    in_function: bool

    @property
    def id(self) -> str:
        """``module:qualname:operator:text``, then ``@2``, ``@3``… for a repeat."""
        repeat = f"@{self.occurrence + 1}" if self.occurrence else ""
        return f"{self.module}:{self.qualname}:{self.operator}:{self.text}{repeat}"


def _source(module: str) -> str:
    path = PACKAGE_ROOT / module
    if not path.is_file():
        raise ConfigError(f"{module}: no such module under core/evalkit")
    return path.read_text(encoding="utf-8")


def mutants_in(module: str, source: str) -> list[Mutant]:
    """Every mutant of ``source``, the text of ``module`` (a path under core/evalkit)."""
    tree = ast.parse(source)
    places = _places(tree)
    seen: dict[tuple[str, str, str], int] = {}
    mutants = []
    for index, (node, operator) in enumerate(_points(tree)):
        place = places[id(node)]
        text = _short(_named_text(node, places))
        key = (place.qualname, operator, text)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        statement = place.statement
        lines = {getattr(node, "lineno", 0), *range(getattr(node, "lineno", 0), (getattr(node, "end_lineno", 0) or 0) + 1)}
        if statement is not None:
            lines.add(statement.lineno)
        mutants.append(Mutant(
            module, index, getattr(node, "lineno", 0), getattr(node, "col_offset", 0), operator,
            place.qualname, text, occurrence, tuple(sorted(lines)), place.in_function,
        ))  # fmt: skip
    return mutants


def mutants_of(module: str) -> list[Mutant]:
    """Every mutant of ``module`` (a path under core/evalkit) as it is on disk."""
    return mutants_in(module, _source(module))


def mutated_source(mutant: Mutant, source: str | None = None) -> str:
    """The module's source with ``mutant`` applied."""
    tree = ast.parse(source if source is not None else _source(mutant.module))
    node, operator = list(_points(tree))[mutant.index]
    if operator.startswith("drop-"):
        tree = _DropUnary(node).visit(tree)
    else:
        _mutate(node, operator)
    return ast.unparse(ast.fix_missing_locations(tree))


def mutated_line(mutant: Mutant) -> str:
    """The mutated statement's line, before → after, for reviewing a survivor."""
    source = _source(mutant.module)
    lines = source.splitlines()
    before = lines[mutant.line - 1].strip() if 0 < mutant.line <= len(lines) else "?"
    node, operator = list(_points(ast.parse(source)))[mutant.index]
    after = copy.deepcopy(node)
    if operator.startswith("drop-"):
        assert isinstance(after, ast.UnaryOp)
        after = after.operand
    else:
        _mutate(after, operator)
    return f"{before}    [{ast.unparse(node)} -> {ast.unparse(after)}]"


# --- configuration ---------------------------------------------------------------------------


@dataclass
class ModuleConfig:
    """One module under test and its equivalent mutants (id → the reason no behaviour sees it)."""

    path: str
    equivalent: dict[str, str] = field(default_factory=dict)
    # when not empty, only the mutants inside these functions (qualnames, a class stands for its
    # methods) are in scope: the part of a larger module that decides a verdict
    functions: list[str] = field(default_factory=list)

    def in_scope(self, mutants: Iterable[Mutant]) -> list[Mutant]:
        """The mutants of ``mutants`` this entry scores."""
        if not self.functions:
            return list(mutants)
        return [m for m in mutants if any(m.qualname == f or m.qualname.startswith(f"{f}.") for f in self.functions)]


@dataclass
class Config:
    """``bench/mutation.toml``: the modules, the candidate tests, the floor."""

    modules: dict[str, ModuleConfig]
    tests: list[str]
    pytest_args: list[str]
    minimum: float


def load_config(path: Path) -> Config:
    """Read and check the config: every module exists, every equivalent has a reason."""
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    unknown = set(data) - {"minimum", "tests", "pytest_args", "modules"}
    if unknown:
        raise ConfigError(f"{path.name}: unknown keys {', '.join(sorted(unknown))}")
    modules = {}
    for name, entry in data.get("modules", {}).items():
        extra = set(entry) - {"equivalent", "functions"}
        if extra:
            raise ConfigError(f"{path.name}: modules.{name!r}: unknown keys {', '.join(sorted(extra))}")
        equivalent = dict(entry.get("equivalent", {}))
        for mutant_id, reason in equivalent.items():
            if not mutant_id.startswith(f"{name}:"):
                raise ConfigError(f"{path.name}: equivalent {mutant_id!r} is listed under {name!r}, another module")
            if not isinstance(reason, str) or not reason.strip():
                raise ConfigError(f"{path.name}: equivalent {mutant_id!r} has no reason")
        functions = entry.get("functions", [])
        if not isinstance(functions, list) or not all(isinstance(f, str) and f for f in functions):
            raise ConfigError(f"{path.name}: modules.{name!r}: functions is a list of qualnames")
        module = ModuleConfig(name, equivalent, list(functions))
        found = {m.qualname for m in mutants_in(name, _source(name))}  # the module exists
        missing = [f for f in functions if not any(q == f or q.startswith(f"{f}.") for q in found)]
        if missing:
            raise ConfigError(f"{path.name}: modules.{name!r}: no mutant in {', '.join(missing)} (renamed or removed?)")
        modules[name] = module
    return Config(modules, list(data.get("tests", ["tests"])), list(data.get("pytest_args", [])), float(data.get("minimum", 0.95)))


def stale_equivalents(config: ModuleConfig, mutants: Iterable[Mutant]) -> list[str]:
    """The listed equivalents that match no mutant of the module any more."""
    return sorted(set(config.equivalent) - {m.id for m in mutants})


# --- the coverage map ------------------------------------------------------------------------


def candidate_files(patterns: list[str]) -> list[str]:
    """The test files the config names (a folder stands for its ``test_*.py``), relative to the root."""
    found: set[str] = set()
    for pattern in patterns:
        path = ROOT / pattern
        if path.is_dir():
            found.update(str(p.relative_to(ROOT)) for p in path.rglob("test_*.py") if "__pycache__" not in p.parts)
        elif path.is_file():
            found.add(str(path.relative_to(ROOT)))
        else:
            raise ConfigError(f"tests: {pattern} does not exist")
    return sorted(found)


def _digest_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_fingerprint(config: Config, candidates: list[str]) -> str:
    """A hash of everything a test's coverage depends on, but the candidate test files themselves
    (and the equivalents of the config, which change no coverage)."""
    scope = json.dumps([sorted(config.modules), config.tests, config.pytest_args])
    digest = hashlib.sha256(scope.encode("utf-8"))
    digest.update((ROOT / "pyproject.toml").read_bytes())
    skip = set(candidates)
    for folder in ("core", "plugins", "tests", "contrib_sets"):
        for path in sorted((ROOT / folder).rglob("*")):
            relative = str(path.relative_to(ROOT))
            if path.is_file() and "__pycache__" not in path.parts and relative not in skip:
                digest.update(relative.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass
class ModuleCoverage:
    """Which tests execute which lines of one module."""

    by_line: dict[int, set[str]] = field(default_factory=dict)
    outside_tests: set[int] = field(default_factory=set)  # lines run while importing, collecting

    def every_test(self) -> set[str]:
        """The tests that execute any line of the module."""
        return set().union(*self.by_line.values()) if self.by_line else set()


@dataclass
class CoverageMap:
    """The line → tests map of every module in scope, with each test's time and outcome."""

    modules: dict[str, ModuleCoverage]
    seconds: dict[str, float]
    failed: set[str]

    def tests_for(self, mutant: Mutant) -> set[str]:
        """The tests that would see ``mutant``: those executing its statement; or, when the statement
        runs while modules are imported (a constant, a class body, a default value), every test of
        every test file that executes the module — a test can read a constant (an enum's value)
        without executing a line of the module."""
        coverage = self.modules.get(mutant.module, ModuleCoverage())
        if not mutant.in_function or any(line in coverage.outside_tests for line in mutant.lines):
            return self.every_test_of_files(mutant.module)
        return set().union(*(coverage.by_line.get(line, set()) for line in mutant.lines))

    def leave_out(self, tests: set[str]) -> None:
        """Select none of ``tests`` for any mutant."""
        for coverage in self.modules.values():
            for line, found in coverage.by_line.items():
                coverage.by_line[line] = found - tests
        for test in tests:
            self.seconds.pop(test, None)

    def every_test_of_files(self, module: str) -> set[str]:
        """Every test of the test files that have a test executing ``module``."""
        files = {test.split("::", 1)[0] for test in self.modules.get(module, ModuleCoverage()).every_test()}
        return {test for test in self.seconds if test.split("::", 1)[0] in files}


class _ContextRecorder:
    """pytest plugin of a coverage worker: each test is its own coverage context; times, outcomes."""

    def __init__(self, coverage: object) -> None:
        self.coverage = coverage
        self.seconds: dict[str, float] = {}
        self.failed: set[str] = set()

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        self.coverage.switch_context(nodeid)  # type: ignore[attr-defined]

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        self.coverage.switch_context("")  # type: ignore[attr-defined]

    def pytest_runtest_logreport(self, report: object) -> None:
        nodeid = report.nodeid  # type: ignore[attr-defined]
        self.seconds[nodeid] = self.seconds.get(nodeid, 0.0) + report.duration  # type: ignore[attr-defined]
        if report.failed:  # type: ignore[attr-defined]
            self.failed.add(nodeid)


def _coverage_worker(output: Path, include: list[str], arguments: list[str]) -> int:
    """In a fresh interpreter: run the tests under coverage, one context per test; write the map."""
    import coverage

    measured = coverage.Coverage(data_file=None, config_file=False, include=include, branch=False)
    measured.start()
    import pytest

    recorder = _ContextRecorder(measured)
    code = pytest.main([*PYTEST_FLAGS, "-p", "no:randomly", *arguments], plugins=[recorder])
    measured.stop()
    data = measured.get_data()
    lines: dict[str, dict[str, list[int]]] = {}
    for filename in data.measured_files():
        module = str(Path(filename).resolve().relative_to(PACKAGE_ROOT))
        per_test: dict[str, set[int]] = {}
        for line, contexts in data.contexts_by_lineno(filename).items():
            for context in contexts:
                per_test.setdefault(context, set()).add(line)
        lines[module] = {context: sorted(found) for context, found in per_test.items()}
    document = {"code": int(code), "seconds": recorder.seconds, "failed": sorted(recorder.failed), "lines": lines}
    output.write_text(json.dumps(document), encoding="utf-8")
    return 0


def _entry_path(cache: Path, test_file: str) -> Path:
    return cache / (test_file.replace("/", "__") + ".json")


def build_coverage_map(config: Config, cache_dir: Path, jobs: int) -> CoverageMap:
    """The coverage map, from the cache where it is current, running the stale test files."""
    candidates = candidate_files(config.tests)
    fingerprint = code_fingerprint(config, candidates)
    cache = cache_dir / "coverage" / fingerprint[:20]
    cache.mkdir(parents=True, exist_ok=True)
    for old in cache.parent.iterdir():  # a map of other code is never read again (one per test selection)
        if old != cache and (old / "tests.json").is_file() and json.loads((old / "tests.json").read_text()) == config.tests:
            shutil.rmtree(old, ignore_errors=True)
    (cache / "tests.json").write_text(json.dumps(config.tests), encoding="utf-8")
    hashes = {name: _digest_file(ROOT / name) for name in candidates}
    stale = []
    for name in candidates:
        entry = _entry_path(cache, name)
        if not entry.is_file() or json.loads(entry.read_text(encoding="utf-8")).get("sha256") != hashes[name]:
            stale.append(name)
    if stale:
        _measure(stale, config, cache, hashes, jobs)
    return _read_map(candidates, cache, config)


def _measure(stale: list[str], config: Config, cache: Path, hashes: dict[str, str], jobs: int) -> None:
    """Run ``stale`` test files under coverage in up to ``jobs`` workers; one cache entry per file."""
    print(f"coverage map: running {len(stale)} test file(s) under coverage (once per change) ...", flush=True)
    started = time.perf_counter()
    include = sorted(str(PACKAGE_ROOT / name) for name in config.modules)
    shares = [stale[i::jobs] for i in range(max(1, min(jobs, len(stale))))]
    with tempfile.TemporaryDirectory(prefix="evalkit-mutation-map-") as scratch:
        workers = []
        for number, share in enumerate(shares):
            output = Path(scratch) / f"worker{number}.json"
            arguments = [f"--basetemp={Path(scratch) / f'tmp{number}'}", *config.pytest_args, *share]
            command = [sys.executable, str(Path(__file__).resolve()), "--coverage-worker", str(output),
                       json.dumps(include), json.dumps(arguments)]  # fmt: skip
            log = Path(scratch) / f"worker{number}.log"
            with log.open("wb") as stream:
                process = subprocess.Popen(command, cwd=ROOT, env=_environment(), stdout=stream, stderr=subprocess.STDOUT)
            workers.append((share, output, log, process))
        for share, output, log, process in workers:
            if process.wait() != 0 or not output.is_file():
                raise ConfigError(f"coverage worker failed:\n{log.read_text(errors='replace')[-3000:]}")
            document = json.loads(output.read_text(encoding="utf-8"))
            for name in share:
                _write_entry(name, document, cache, hashes[name])
    print(f"coverage map: done in {time.perf_counter() - started:.0f} s", flush=True)


def _write_entry(test_file: str, document: dict, cache: Path, sha256: str) -> None:
    """The part of a worker's map that belongs to ``test_file`` (and the lines run outside tests)."""
    prefix = f"{test_file}::"
    lines = {}
    for module, per_test in document["lines"].items():
        kept = {context: found for context, found in per_test.items() if context.startswith(prefix) or context == ""}
        if kept:
            lines[module] = kept
    entry = {
        "sha256": sha256,
        "seconds": {k: v for k, v in document["seconds"].items() if k.startswith(prefix)},
        "failed": [k for k in document["failed"] if k.startswith(prefix)],
        "lines": lines,
    }
    _entry_path(cache, test_file).write_text(json.dumps(entry), encoding="utf-8")


def _read_map(candidates: list[str], cache: Path, config: Config) -> CoverageMap:
    modules = {name: ModuleCoverage() for name in config.modules}
    seconds: dict[str, float] = {}
    failed: set[str] = set()
    for name in candidates:
        entry = json.loads(_entry_path(cache, name).read_text(encoding="utf-8"))
        seconds.update(entry["seconds"])
        failed.update(entry["failed"])
        for module, per_test in entry["lines"].items():
            if module not in modules:
                continue
            coverage = modules[module]
            for context, found in per_test.items():
                if context == "":
                    coverage.outside_tests.update(found)
                else:
                    for line in found:
                        coverage.by_line.setdefault(line, set()).add(context)
    return CoverageMap(modules, seconds, failed)


# --- running mutants -------------------------------------------------------------------------


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in HIDDEN_VARIABLES}


def _dotted(module: str) -> str:
    return "evalkit." + module.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


class _MutantLoader(importlib.abc.Loader):
    """Executes the mutated source, compiled under the module's real file name."""

    def __init__(self, source: str, filename: str) -> None:
        self.source = source
        self.filename = filename

    def create_module(self, spec: object) -> None:
        return None

    def exec_module(self, module: object) -> None:
        exec(compile(self.source, self.filename, "exec"), module.__dict__)  # noqa: S102


class _MutantFinder(importlib.abc.MetaPathFinder):
    """Serves the mutated source of module ``name`` (an import hook first on ``sys.meta_path``)."""

    def __init__(self, name: str, path: Path, source: str) -> None:
        self.name = name
        self.path = path
        self.source = source

    def find_spec(self, fullname: str, target: object = None, module: object = None) -> object:
        if fullname != self.name:
            return None
        package = [str(self.path.parent)] if self.path.name == "__init__.py" else None
        return importlib.util.spec_from_file_location(
            fullname, self.path, loader=_MutantLoader(self.source, str(self.path)), submodule_search_locations=package
        )


class _Selection:
    """pytest plugin of a child: keep only the chosen tests, fastest first."""

    def __init__(self, tests: set[str], seconds: dict[str, float]) -> None:
        self.tests = tests
        self.seconds = seconds

    def pytest_collection_modifyitems(self, session: object, config: object, items: list) -> None:
        import pytest

        if getattr(session, "testsfailed", 0):
            # A test file failed to collect (the mutant breaks an import): its tests are missing
            # for that reason, and pytest ends the session as interrupted (exit 2), a kill.
            return
        missing = self.tests - {i.nodeid for i in items}
        # A parametrized test whose ids come from the mutated module is collected under other ids:
        # it still runs, as every case of its function.
        functions = {test.split("[", 1)[0] for test in missing}
        chosen = [i for i in items if i.nodeid in self.tests or i.nodeid.split("[", 1)[0] in functions]
        unmatched = functions - {i.nodeid.split("[", 1)[0] for i in chosen}
        if unmatched:  # the map and the tree disagree: no verdict is better than a wrong one
            pytest.exit(f"tests in the coverage map but not collected: {sorted(unmatched)[:5]}", returncode=4)
        config.hook.pytest_deselected(items=[i for i in items if i not in chosen])  # type: ignore[attr-defined]
        items[:] = sorted(chosen, key=lambda i: self.seconds.get(i.nodeid, 0.0))


def _child(
    mutant: Mutant, source: str, tests: set[str], arguments: list[str], seconds: dict[str, float], output: Path | None = None
) -> int:
    """In the forked child: forget evalkit and the tests, serve the mutant, run the tests (what
    pytest prints goes to ``output``, or nowhere)."""
    import pytest

    for name in list(sys.modules):
        if name in ("evalkit", "tests") or name.startswith(("evalkit.", "tests.", "evalkit_")):
            del sys.modules[name]
    sys.meta_path.insert(0, _MutantFinder(_dotted(mutant.module), PACKAGE_ROOT / mutant.module, source))
    null = os.open(os.devnull, os.O_WRONLY)
    printed = null if output is None else os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(null, 0)
    os.dup2(printed, 1)
    os.dup2(printed, 2)
    files = sorted({test.split("::", 1)[0] for test in tests})
    return int(pytest.main([*PYTEST_FLAGS, "-x", "-p", "no:randomly", *arguments, *files], plugins=[_Selection(tests, seconds)]))


@dataclass
class Result:
    """What happened to one mutant."""

    mutant: Mutant
    outcome: str  # killed | survived | no test | timeout | equivalent | incompetent | error
    seconds: float = 0.0
    tests: int = 0


@dataclass
class _Run:
    """What every child of one module shares."""

    config: Config
    module: ModuleConfig
    source: str
    coverage: CoverageMap
    scratch: Path
    timeout_factor: float = 10.0  # a mutant's tests may take this many times their measured time


def _start(mutant: Mutant, run: _Run) -> tuple[int, float, int] | Result:
    """Fork a child that runs the tests covering ``mutant``: its pid, timeout and test count."""
    if mutant.id in run.module.equivalent:
        return Result(mutant, "equivalent")
    try:
        source = mutated_source(mutant, run.source)
        compile(source, mutant.module, "exec")
    except (SyntaxError, ValueError):
        return Result(mutant, "incompetent")
    tests = run.coverage.tests_for(mutant)
    if not tests:
        return Result(mutant, "no test")
    budget = sum(run.coverage.seconds.get(t, 1.0) for t in tests)
    # a loaded machine is slow; a loop that never ends is slower
    timeout = 60.0 + run.timeout_factor * budget
    arguments = [f"--basetemp={run.scratch / str(mutant.index)}", *run.config.pytest_args]
    pid = os.fork()
    if pid == 0:  # the child never returns into the parent's code
        code = 3
        try:
            code = _child(mutant, source, tests, arguments, run.coverage.seconds)
        finally:
            os._exit(code)
    return pid, timeout, len(tests)


def _outcome(code: int) -> str:
    # 0 passed; 1 a test failed; 2 interrupted (a collection error: the mutant breaks an import);
    # 3 pytest's internal error; 4 and 5 (usage error, nothing collected) are this tool's fault.
    if code == 0:
        return "survived"
    return "error" if code in (4, 5) else "killed"


def run_mutants(mutants: list[Mutant], run: _Run, jobs: int, progress: bool = True) -> list[Result]:
    """Run every mutant, at most ``jobs`` forked children at a time; results in mutant order."""
    done: dict[int, Result] = {}
    running: dict[int, tuple[Mutant, float, float, int]] = {}
    queue = list(mutants)
    while queue or running:
        while queue and len(running) < jobs:
            mutant = queue.pop(0)
            started = _start(mutant, run)
            if isinstance(started, Result):
                done[mutant.index] = started
            else:
                running[started[0]] = (mutant, time.perf_counter(), started[1], started[2])
        for pid, (mutant, began, timeout, count) in list(running.items()):
            finished, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.perf_counter() - began
            if finished:
                del running[pid]
                done[mutant.index] = Result(mutant, _outcome(os.waitstatus_to_exitcode(status)), elapsed, count)
            elif elapsed > timeout:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del running[pid]
                done[mutant.index] = Result(mutant, "timeout", elapsed, count)
            else:
                continue
            if progress and done[mutant.index].outcome not in ("killed", "timeout"):
                print(f"  {done[mutant.index].outcome:<9} {mutant.id}", flush=True)
        time.sleep(0.02)
    return [done[m.index] for m in mutants]


def _warm_up(modules: Iterable[str], test_files: Iterable[str]) -> None:
    """Import what the tests import, once, so each forked child only re-imports evalkit and the
    tests: the chosen modules, the CLI, and the other packages the test files import at their top
    (scipy, hypothesis… cost a second each, per child, otherwise)."""
    import importlib

    import pytest  # noqa: F401

    names = {"evalkit.cli", *(_dotted(m) for m in modules)}
    for test_file in test_files:
        for node in ast.parse((ROOT / test_file).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    for name in sorted(names):
        if name.split(".")[0] in ("tests", "__future__"):
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a test file may import what is absent here; it skips
            continue


# --- the report ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One module's row of the table."""

    module: str
    mutants: int
    killed: int  # timeouts included
    survived: int  # "no test" included
    equivalent: int
    incompetent: int
    timeouts: int
    untested: int

    @property
    def score(self) -> float:
        """killed / (mutants − equivalent − incompetent)."""
        scored = self.mutants - self.equivalent - self.incompetent
        return self.killed / scored if scored else 1.0


def score(module: str, results: list[Result]) -> Score:
    """Count ``results`` into a table row."""
    count = {o: sum(1 for r in results if r.outcome == o) for o in
             ("killed", "timeout", "survived", "no test", "equivalent", "incompetent")}  # fmt: skip
    return Score(
        module, len(results), count["killed"] + count["timeout"], count["survived"] + count["no test"],
        count["equivalent"], count["incompetent"], count["timeout"], count["no test"],
    )  # fmt: skip


def _percent(score: float) -> str:
    """``score`` as a percentage cut (not rounded) to one decimal: 94.96 % prints 94.9 %, never the floor's 95.0 %."""
    return f"{math.floor(score * 1000) / 10:.1f}%"


def table(scores: list[Score]) -> str:
    """The per-module table: module, mutants, killed, survived, equivalent, score."""
    header = f"{'module':<28} {'mutants':>7} {'killed':>7} {'survived':>8} {'equiv.':>6} {'score':>7}"
    rows = [header, "-" * len(header)]
    for row in scores:
        rows.append(f"{row.module:<28} {row.mutants:>7} {row.killed:>7} {row.survived:>8} {row.equivalent:>6} {_percent(row.score):>7}")
    total = Score("all", *(sum(getattr(s, f) for s in scores) for f in
                           ("mutants", "killed", "survived", "equivalent", "incompetent", "timeouts", "untested")))  # fmt: skip
    rows += ["-" * len(header),
             f"{'all':<28} {total.mutants:>7} {total.killed:>7} {total.survived:>8} {total.equivalent:>6} {_percent(total.score):>7}"]  # fmt: skip
    notes = []
    if total.timeouts:
        notes.append(f"{total.timeouts} killed by a timeout")
    if total.untested:
        notes.append(f"{total.untested} survived with no test executing them")
    if total.incompetent:
        notes.append(f"{total.incompetent} did not compile (not scored)")
    if notes:
        rows.append("(" + "; ".join(notes) + ")")
    return "\n".join(rows)


def _results_path(cache_dir: Path, module: str) -> Path:
    return cache_dir / "results" / (module.replace("/", "__") + ".json")


def _load_results(cache_dir: Path, module: str) -> dict[str, str]:
    """The last outcome of each mutant id of ``module`` (from full and partial runs)."""
    path = _results_path(cache_dir, module)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _save_results(cache_dir: Path, module: str, outcomes: dict[str, str]) -> None:
    path = _results_path(cache_dir, module)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(outcomes, indent=0), encoding="utf-8")


# --- main ------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where the coverage map is kept")
    parser.add_argument("--jobs", type=int, default=1, help="children (and coverage workers) at a time (default 1)")
    parser.add_argument("--module", action="append", help="only this module (repeatable)")
    parser.add_argument(
        "--tests", action="append", metavar="PATH",
        help="candidate tests instead of the config's (repeatable): a quicker, partial measure — a mutant only "
             "the tests left out would kill counts as survived, so a score can only be lower",
    )  # fmt: skip
    parser.add_argument("--mutant", action="append", help="only mutants whose id contains this text (repeatable)")
    parser.add_argument("--survivors", action="store_true", help="only the mutants that survived this module's last run")
    parser.add_argument("--list", action="store_true", help="print every mutant (line:column, id, change) and exit")
    parser.add_argument("--check", action="store_true", help="check the config (equivalents match mutants) and exit")
    parser.add_argument(
        "--table", action="store_true",
        help="print the table from the outcomes the last runs kept in the cache (no mutant is run) and exit",
    )  # fmt: skip
    parser.add_argument("--map", action="store_true", help="bring the coverage map up to date, print its size and exit")
    parser.add_argument(
        "--no-control", action="store_true",
        help="skip the control run of the unmutated module (the coverage map's run then vouches for the tests: "
             "one that failed there is an error)",
    )  # fmt: skip
    parser.add_argument(
        "--timeout-factor", type=float, default=10.0,
        help="a mutant times out (killed) after 60 s + this many times its tests' measured time (default 10)",
    )  # fmt: skip
    parser.add_argument("--nice", type=int, default=19, help="lower this process's priority by this much (default 19)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the mutants of the chosen modules and print the per-module table."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--coverage-worker"]:
        return _coverage_worker(Path(argv[1]), json.loads(argv[2]), json.loads(argv[3]))
    args = _parser().parse_args(argv)
    try:
        return _main(args)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    if args.nice and hasattr(os, "nice"):
        os.nice(args.nice)
    config = load_config(args.config)
    if args.tests:
        config.tests = list(args.tests)
    unknown = [name for name in args.module or () if name not in config.modules]
    if unknown:
        raise ConfigError(f"not in {args.config.name}: {', '.join(unknown)} (known: {', '.join(config.modules)})")
    chosen = [config.modules[name] for name in (args.module or config.modules)]
    mutants = {m.path: m.in_scope(mutants_of(m.path)) for m in chosen}
    stale = [f"{i}" for m in chosen for i in stale_equivalents(m, mutants[m.path])]
    if stale:
        raise ConfigError("listed equivalents that match no mutant (re-read the code and list them again):\n  "
                          + "\n  ".join(stale))  # fmt: skip
    if args.check:
        print(f"{args.config.name}: {len(chosen)} modules, {sum(len(m) for m in mutants.values())} mutants, "
              f"{sum(len(m.equivalent) for m in chosen)} equivalents, all current")  # fmt: skip
        return 0
    if args.list:
        for module in chosen:
            for mutant in sorted(mutants[module.path], key=lambda m: (m.line, m.column, m.index)):
                mark = "  (equivalent)" if mutant.id in module.equivalent else ""
                print(f"{mutant.line}:{mutant.column}\t{mutant.id}\t{mutated_line(mutant)}{mark}")
        return 0
    if args.table:
        return _kept_table(chosen, mutants, args.cache_dir, config.minimum)
    os.chdir(ROOT)
    sys.dont_write_bytecode = True
    for variable in HIDDEN_VARIABLES:
        os.environ.pop(variable, None)
    coverage = build_coverage_map(config, args.cache_dir, max(1, args.jobs))
    _warn_failing_tests(coverage, [m.path for m in chosen], refuse=args.no_control)
    if args.map:
        for module in chosen:
            measured = coverage.modules[module.path]
            print(f"{module.path:<28} {len(measured.every_test()):>5} tests execute {len(measured.by_line):>4} lines")
        return 0
    tested = set().union(*(coverage.every_test_of_files(m.path) for m in chosen))
    _warm_up((m.path for m in chosen), {test.split("::", 1)[0] for test in tested})
    started = time.perf_counter()
    results: dict[str, list[Result]] = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-mutants-") as scratch:
        for module in chosen:
            current = mutants[module.path]
            last = {k: v for k, v in _load_results(args.cache_dir, module.path).items() if k in {m.id for m in current}}
            todo = current
            if args.survivors:  # the rest keep their last outcome
                settled = ("killed", "timeout", "incompetent")
                todo = [m for m in current if m.id not in module.equivalent and last.get(m.id) not in settled]
            if args.mutant:
                todo = [m for m in todo if any(text in m.id for text in args.mutant)]
            print(f"{module.path}: {len(todo)} of {len(current)} mutants", flush=True)
            began = time.perf_counter()
            run = _Run(config, module, _source(module.path), coverage, Path(scratch), args.timeout_factor)
            if todo and not args.no_control:
                _control(run)
            ran = run_mutants(todo, run, max(1, args.jobs))
            outcomes = {**last, **{r.mutant.id: r.outcome for r in ran}}
            _save_results(args.cache_dir, module.path, outcomes)
            if args.survivors and not args.mutant:
                fresh = {r.mutant.id: r for r in ran}
                ran = [fresh.get(m.id) or Result(m, "equivalent" if m.id in module.equivalent else last[m.id]) for m in current]
            results[module.path] = ran
            print(f"{module.path}: done in {time.perf_counter() - began:.0f} s", flush=True)
    if args.mutant:
        print("\n(only the mutants --mutant chose: not a module's score)")
    elif args.survivors:
        print("\n(--survivors: the mutants not re-run keep their outcome of the last run)")
    return report(results, config.minimum, time.perf_counter() - started)


def _kept_table(chosen: list[ModuleConfig], mutants: dict[str, list[Mutant]], cache_dir: Path, minimum: float) -> int:
    """The per-module table from the kept outcomes of the current mutants; a module with a mutant
    no run has decided yet (new code, or never run) is named and left out of the table."""
    scores, missing = [], []
    for module in chosen:
        kept = _load_results(cache_dir, module.path)
        current = mutants[module.path]
        outcomes = ["equivalent" if m.id in module.equivalent else kept.get(m.id) for m in current]
        if any(o is None for o in outcomes):
            missing.append(f"{module.path} ({sum(o is None for o in outcomes)} of {len(current)} not run)")
            continue
        scores.append(score(module.path, [Result(m, o) for m, o in zip(current, outcomes, strict=True)]))  # type: ignore[arg-type]
    if scores:
        print(table(scores))
    if missing:
        print("without a kept outcome for every mutant:\n  " + "\n  ".join(missing))
    below = [s.module for s in scores if s.score < minimum]
    if below:
        print(f"below the minimum: {', '.join(below)}")
    return 1 if below or missing else 0


def _control(run: _Run) -> None:
    """Serve the unmutated module through the hook to every test of the module: they must pass, or
    every "killed" below would mean nothing."""
    tests = run.coverage.every_test_of_files(run.module.path)
    if not tests:
        return
    log = run.scratch / "control.log"
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            identity = Mutant(run.module.path, -1, 0, 0, "none", "<module>", "", 0, (), False)
            arguments = [f"--basetemp={run.scratch / 'control'}", *run.config.pytest_args]
            code = _child(identity, run.source, tests, arguments, run.coverage.seconds, output=log)
        finally:
            os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code != 0:
        printed = log.read_text("utf-8", "replace").splitlines() if log.exists() else []
        failed = [line for line in printed if line.startswith(("FAILED ", "ERROR "))][:1]
        why = [line for line in printed if line.startswith("E ")][:3]
        raise ConfigError(
            f"{run.module.path}: its {len(tests)} tests fail (pytest exit {code}) with the unmutated module served by "
            "the import hook, the fastest first in a fresh import (a test may depend on another having run before "
            "it); run them with: pytest -p no:evalkit --assert=plain ..." + "".join(f"\n  {line}" for line in failed + why)
        )


def _warn_failing_tests(coverage: CoverageMap, modules: list[str], *, refuse: bool = False) -> None:
    """Name the tests that failed while the map was measured: a test failing under coverage (one
    that times itself, on a loaded machine) may pass without it; the control run decides. Without
    a control run (``refuse``), such a test would "kill" every mutant it runs for: it is left out."""
    relevant = set().union(*(coverage.every_test_of_files(m) for m in modules))
    failing = sorted(coverage.failed & relevant)
    if failing and refuse:
        print("warning: these tests failed while the coverage map was measured; without a control run they are left "
              "out of every mutant's tests (they could kill none honestly):\n  " + "\n  ".join(failing))  # fmt: skip
        coverage.leave_out(set(failing))
    elif failing:
        print("warning: these tests failed while the coverage map was measured:\n  " + "\n  ".join(failing))


def report(results: dict[str, list[Result]], minimum: float, seconds: float) -> int:
    """Print the survivors and the per-module table; 1 when a module scores below ``minimum``."""
    print()
    errors = False
    for items in results.values():
        for result in items:
            if result.outcome in ("survived", "no test", "error"):
                errors = errors or result.outcome == "error"
                line = f"{result.mutant.line}:{result.mutant.column}"
                print(f"{result.outcome:<9} {line:<8} {result.mutant.id}\n          {mutated_line(result.mutant)}")
    print()
    scores = [score(module, items) for module, items in results.items()]
    print(table(scores))
    print(f"\n{sum(s.mutants for s in scores)} mutants in {seconds:.0f} s; minimum score per module {minimum:.0%}")
    failing = [s.module for s in scores if s.score < minimum]
    if errors:
        print("some mutants could not be run (outcome 'error'): a fault of this tool or of the coverage map")
        return 2
    if failing:
        print(f"below the minimum: {', '.join(failing)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
