"""Golden sets declared in files: YAML, JSON, JSONL or TOML, named in the configuration.

::

    # evalkit.toml (or [tool.evalkit.sets] in pyproject.toml)
    [sets]
    paths = ["evals/*.yaml", "evals/**/*.json"]     # relative to the configuration file

Every file is parsed, checked against the published JSON Schema and against the kernel's set
rules before anything runs; :func:`load_set_files` returns every problem of every file at once,
each with the file, line, column and JSON path. The ``evalkit.files`` provider (a built-in plugin)
and ``evalkit validate`` are thin layers over this module.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..errors import ConfigError
from .documents import SUFFIXES, FileSyntaxError, SetDocument, read_document
from .problems import FileProblem, SetFileError, format_path

__all__ = [
    "SUFFIXES",
    "FileProblem",
    "SetDocument",
    "SetFileError",
    "SetFiles",
    "configured_patterns",
    "expand_patterns",
    "format_path",
    "load_configured_sets",
    "load_set_files",
]


@attrs.frozen
class SetFiles:
    """What a group of set files declares: the sets of each kind, the files read, every problem."""

    files: tuple[Path, ...] = ()
    prompt_sets: tuple[Any, ...] = ()
    question_sets: tuple[Any, ...] = ()
    problems: tuple[FileProblem, ...] = ()

    def raise_for_problems(self) -> None:
        """Raise :class:`SetFileError` listing every problem, if there is one."""
        if self.problems:
            raise SetFileError(self.problems)


def configured_patterns(config: Any) -> tuple[str, ...]:
    """The ``[sets] paths`` patterns of a :class:`~evalkit.config.Config` (empty when absent)."""
    table = config.raw.get("sets")
    if table is None:
        return ()
    where = str(config.path) if config.path else "configuration"
    if not isinstance(table, Mapping):
        raise ConfigError(f'{where}: [sets] must be a table with paths = ["evals/*.yaml", ...]')
    paths = table.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ConfigError(f'{where}: [sets] paths must be a list of file patterns, like ["evals/*.yaml"]')
    unknown = sorted(set(table) - {"paths"})
    if unknown:
        raise ConfigError(f"{where}: [sets] has unknown key(s) {', '.join(unknown)}; it takes paths")
    return tuple(paths)


def expand_patterns(patterns: Iterable[str], root: Path) -> tuple[list[Path], list[FileProblem]]:
    """The files the glob ``patterns`` name (relative to ``root``; ``**`` descends), in order.

    A pattern without wildcards that names no file is a problem: a typo must not hide a set.
    """
    files: list[Path] = []
    problems: list[FileProblem] = []
    for pattern in patterns:
        if "\x00" in pattern:  # no file name holds one; the system calls raise ValueError
            problems.append(FileProblem(pattern, "is named in [sets] paths but holds a NUL character, which no file name can"))
            continue
        full = pattern if os.path.isabs(pattern) else os.path.join(root, pattern)
        if not glob.has_magic(pattern):
            if not os.path.isfile(full):
                problems.append(FileProblem(pattern, f"is named in [sets] paths but does not exist (looked in {root})"))
                continue
            matches = [full]
        else:
            matches = sorted(glob.glob(full, recursive=True))
        for match in matches:
            path = Path(match)
            if path.is_file() and path not in files:
                files.append(path)
    return files, problems


def _display(path: Path, root: Path | None) -> Path:
    if root is not None:
        try:
            return path.relative_to(root)
        except ValueError:
            pass
    return path


def load_set_files(
    files: Sequence[str | os.PathLike[str]],
    kinds: Mapping[str, Any] | None = None,
    root: Path | None = None,
) -> SetFiles:
    """Read, schema-check and build every set in ``files``; problems are collected, never raised.

    ``kinds`` are the assertion kinds sets may use (default: the built-in ones). File names in
    problems are shown relative to ``root`` when given.
    """
    from .schemas import document_kind, schema_problems
    from .sets import build_sets, kernel_problems, rule_problems

    if kinds is None:
        from ..checks import BUILTIN_KINDS

        kinds = BUILTIN_KINDS
    prompt_sets: list[Any] = []
    question_sets: list[Any] = []
    problems: list[FileProblem] = []
    declared: dict[str, FileProblem] = {}
    read: list[Path] = []
    for name in files:
        path = Path(name)
        shown = _display(path, root)
        read.append(path)
        try:
            document = read_document(path)
        except FileSyntaxError as exc:
            problems.extend(attrs.evolve(p, file=str(shown)) for p in exc.problems)
            continue
        document = attrs.evolve(document, file=shown)
        problems.extend(document.problems)
        kind = document_kind(document.data)
        found = schema_problems(document, kind)
        found += rule_problems(document, kind, kinds, {p.path for p in found})
        found.sort(key=lambda p: (p.line or 0, p.column or 0))
        if found or document.problems:
            problems.extend(found)
            continue
        built = build_sets(document, kind)
        found = kernel_problems(document, built, kinds)
        if found:
            problems.extend(found)
            continue
        for where, built_set in built:
            first = declared.get(built_set.identifier)
            if first is not None:
                problems.append(
                    document.problem(where + ("identifier",), f"set {built_set.identifier!r} is already declared at {first.file}:{first.line}")
                )
                continue
            declared[built_set.identifier] = document.problem(where, "")
            (question_sets if kind == "question-set" else prompt_sets).append(built_set)
    return SetFiles(tuple(read), tuple(prompt_sets), tuple(question_sets), tuple(problems))


def load_configured_sets(config: Any, kinds: Mapping[str, Any] | None = None) -> SetFiles:
    """Every set file the configuration's ``[sets] paths`` name, loaded with :func:`load_set_files`."""
    patterns = configured_patterns(config)
    if not patterns:
        return SetFiles()
    files, problems = expand_patterns(patterns, config.root)
    loaded = load_set_files(files, kinds, config.root)
    return attrs.evolve(loaded, problems=tuple(problems) + loaded.problems)
