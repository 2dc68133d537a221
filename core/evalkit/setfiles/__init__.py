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

import errno
import fnmatch
import glob
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError
from ..wording import counted, path_named
from .documents import SUFFIXES, FileSyntaxError, SetDocument, read_document
from .problems import FileProblem, SetFileError, format_path, kept_file_problems, quoted

if TYPE_CHECKING:
    from ..project_files import ProjectBoundary

__all__ = [
    "SUFFIXES",
    "CheckedDocument",
    "FileProblem",
    "SetDocument",
    "SetFileError",
    "SetFiles",
    "SkippedFile",
    "SkippedPrompt",
    "check_document",
    "configured_inputs",
    "configured_patterns",
    "expand_patterns",
    "format_path",
    "glob_once",
    "load_configured_sets",
    "load_set_files",
    "passed_over",
    "set_files_and_unreadable_under",
    "set_file_names",
    "set_files_under",
    "unreadable_matches",
]


@attrs.frozen
class SkippedPrompt:
    """A prompt a set file keeps but marks ``skip: REASON``: where it is, its id and the reason."""

    file: str
    line: int | None
    path: str
    id: str
    reason: str

    def __str__(self) -> str:
        from ..printable import visible

        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return visible(f"{where}: {self.path} {quoted(self.id)}: {self.reason}")

    def as_dict(self) -> dict[str, object]:
        """The machine-readable form (``evalkit validate --json``)."""
        return {"file": self.file, "line": self.line, "path": self.path, "id": self.id, "reason": self.reason}


@attrs.frozen
class SkippedFile:
    """A file a folder, a wildcard or the command line reached that is no set file: one the
    configuration names for another job (:func:`configured_inputs`), with which."""

    file: str
    reason: str

    def __str__(self) -> str:
        from ..printable import visible

        return visible(f"{self.file}: {self.reason}")

    def as_dict(self) -> dict[str, object]:
        """The machine-readable form (``evalkit validate --json``), with a skipped prompt's keys."""
        return {"file": self.file, "line": None, "path": None, "id": None, "reason": self.reason}


@attrs.frozen
class SetFiles:
    """What a group of set files declares: the sets of each kind, the files read, every problem
    (the first 1,000 and how many more), the prompts kept but marked ``skip``, and the set files
    that failed."""

    files: tuple[Path, ...] = ()
    prompt_sets: tuple[Any, ...] = ()
    question_sets: tuple[Any, ...] = ()
    #: Up to :data:`~evalkit.shapes.MAX_PROBLEMS_KEPT` of them, then how many more (:func:`kept_file_problems`).
    problems: tuple[FileProblem, ...] = attrs.field(default=(), converter=kept_file_problems)
    #: Prompts kept but marked ``skip``, and files passed over as no set file (:class:`SkippedFile`).
    skipped: tuple[SkippedPrompt | SkippedFile, ...] = ()
    calibration_sets: tuple[Any, ...] = ()
    #: The set files reading which met a problem — in the file itself, or in a file it names (a
    #: template's table of variables, whose problems are filed at the table's own lines): none of
    #: them is "ok", even when every problem is another file's.
    failed: tuple[Path, ...] = ()
    #: Where each set is declared, by identifier: ``FILE:LINE`` as problems show the file.
    declared_at: Mapping[str, str] = attrs.field(factory=dict)

    def raise_for_problems(self) -> None:
        """Raise :class:`SetFileError` listing every problem, if there is one."""
        if self.problems:
            raise SetFileError(self.problems)


def _named_members(document: Any, problems: list[FileProblem]) -> list[FileProblem]:
    """``problems`` of ``document`` (those in its own file) naming the prompt or question each is
    inside by its id (``prompt 'opening-hours': assertions[0].regex``), not by its place."""
    from .problems import member_of

    own = str(document.file)
    return [attrs.evolve(p, member=member_of(document.data, p.path)) if p.file == own and p.path else p for p in problems]


def configured_patterns(config: Any) -> tuple[str, ...]:
    """The ``[sets] paths`` patterns of a :class:`~evalkit.config.Config` (empty when absent)."""
    from ..project_files import allowed_outside

    table = config.raw.get("sets")
    if table is None:
        return ()
    where = str(config.path) if config.path else "configuration"
    if not isinstance(table, Mapping):
        raise ConfigError(f'{where}: [sets] must be a table with paths = ["evals/*.yaml", ...]')
    paths = table.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ConfigError(f'{where}: [sets] paths must be a list of file patterns, like ["evals/*.yaml"]')
    unknown = sorted(set(table) - {"paths", "allow_outside"})
    if unknown:
        raise ConfigError(f"{where}: [sets] has {counted(len(unknown), 'unknown key')} {', '.join(unknown)}; it takes paths and allow_outside")
    allowed_outside(table, where)
    return tuple(paths)


def expand_patterns(
    patterns: Iterable[str], root: Path, boundary: ProjectBoundary | None = None
) -> tuple[list[Path], list[FileProblem]]:
    """The files the glob ``patterns`` name (relative to ``root``; ``**`` descends), in order.

    A folder named without wildcards stands for every set file under it (``folder/**/*`` with a
    set file's suffix), and a wildcard matches set files only: what either meets with another
    suffix (a template's ``.csv`` table, a README) is not a set file and is passed over
    (:func:`set_file_names`); a file named without wildcards is read whatever its suffix, and
    refused when it is no set file's. A pattern without wildcards that names nothing is a problem: a typo must
    not hide a set; so is one that names a loop of symbolic links, a link to nothing, a device or
    a socket, each by its real cause (a named pipe is read: a set made on the fly). ``**`` visits
    each real folder once (see :func:`glob_once`). With a ``boundary``, a file that resolves
    outside the project and the places it allows is a problem naming it, and a pattern whose
    folder lies outside them is one problem, its folders never walked (``/proc/**/*.json``).
    """
    files: list[Path] = []
    problems: list[FileProblem] = []
    for pattern in patterns:
        if "\x00" in pattern:  # no file name holds one; the system calls raise ValueError
            problems.append(FileProblem(pattern, "is named in [sets] paths but holds a NUL character, which no file name can"))
            continue
        full = pattern if os.path.isabs(pattern) else os.path.join(root, pattern)
        if not glob.has_magic(pattern):
            found, cause = _what_is_there(full)
            if cause is not None:
                looked = f" (looked in {path_named(root)})" if cause == "does not exist" else ""
                problems.append(FileProblem(pattern, f"is named in [sets] paths but {cause}{looked}"))
                continue
            if found == "folder":
                readable, unreadable = set_files_and_unreadable_under(full)
                matches = [str(path) for path in readable]
                problems.extend(FileProblem(_shown(path, root), f"is matched by [sets] paths {pattern!r} but {cause}") for path, cause in unreadable)
            else:
                matches = [full]
        else:
            folder = _fixed_folder(pattern) if os.path.isabs(pattern) else os.path.normpath(os.path.join(root, _fixed_folder(pattern)))
            if boundary is not None and not boundary.may_hold_allowed(folder):
                reason = boundary.outside(folder, folder=True)
                problems.append(FileProblem(pattern, f"is named in [sets] paths but its folder {path_named(folder)} {reason}"))
                continue
            matched = sorted(set_file_names(glob_once(pattern, root_dir=root)))
            matches = [m for m in matched if os.path.isfile(m)]
            problems.extend(
                FileProblem(_shown(path, root), f"is matched by [sets] paths {pattern!r} but {cause}")
                for path, cause in unreadable_matches(m for m in matched if not os.path.isfile(m))
            )
        for match in matches:
            path = Path(match)
            if path in files:
                continue
            reason = boundary.outside(path) if boundary is not None else None
            if reason is not None:
                problems.append(FileProblem(_shown(path, root), reason))
                continue
            files.append(path)
    return files, problems


def _what_is_there(path: str) -> tuple[str, str | None]:
    """``("folder" | "file", None)`` for a folder, a regular file or a named pipe at ``path``
    (links followed); else ``("", cause)``, the real reason nothing can be read there."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            return "", f"is a symbolic link to {os.readlink(path)}, which does not exist"
        return "", "does not exist"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "", "is a loop of symbolic links"
        return "", f"cannot be looked up: {exc.strerror}"
    if stat.S_ISDIR(mode):
        return "folder", None
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return "file", None
    kind = "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "a socket"
    return "", f"is {kind}, not a set file"


def _fixed_folder(pattern: str) -> str:
    """The folder a glob ``pattern`` starts in: its path up to the first part with a wildcard."""
    parts = pattern.replace(os.sep, "/").split("/")
    fixed = 0
    while fixed < len(parts) and not glob.has_magic(parts[fixed]):
        fixed += 1
    return "/".join(parts[:fixed]) or ("/" if pattern.startswith("/") else os.curdir)


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when it is under it (as problems show set files)."""
    return str(_display(path, root))


def glob_once(pattern: str, root_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """The paths ``pattern`` matches, as :func:`glob.glob` with ``recursive=True`` finds them
    (``**`` is zero or more folders; a wildcard matches no name starting with a dot), except that
    ``**`` enters each real folder once: a symbolic link to a folder is followed, but not one to
    the folder it is in or a folder above it (two such links made ``glob`` take exponential
    time: a cloned project hung ``evalkit run``), and a folder reached by two links is listed
    once. A relative ``pattern`` is matched under ``root_dir`` (the working directory without
    one), whose own name is never read as a pattern — a project in ``proj[1]`` found no set file
    — and the paths found start with it."""
    if root_dir is not None and not os.path.isabs(pattern):
        return [os.path.join(root_dir, found) for found in _glob_once(pattern, os.fspath(root_dir))]
    return _glob_once(pattern, None)


def _glob_once(pattern: str, root_dir: str | None) -> list[str]:
    parts = pattern.replace(os.sep, "/").split("/")
    if "**" not in parts:
        return glob.glob(pattern, root_dir=root_dir)
    fixed = 0
    while fixed < len(parts) and not glob.has_magic(parts[fixed]):
        fixed += 1
    base = "/".join(parts[:fixed]) or ("/" if pattern.startswith("/") else os.curdir)
    found: list[str] = []
    _match(os.path.join(root_dir, base) if root_dir is not None else base, parts[fixed:], 0, set(), found, prefix="/".join(parts[:fixed]))
    return found


def _match(folder: str, segments: list[str], depth: int, entered: set[tuple[int, int, int]], found: list[str], prefix: str) -> None:
    """Add to ``found`` what ``segments`` match under ``folder`` (shown as ``prefix``)."""
    if not segments:
        found.append(prefix)
        return
    head, rest = segments[0], segments[1:]
    if head == "**":
        try:
            status = os.stat(folder)
        except OSError:
            return
        key = (depth, status.st_dev, status.st_ino)
        if key in entered:
            return
        entered.add(key)
        _match(folder, rest, depth + 1, entered, found, prefix)  # zero folders
        if not rest:  # a last "**" matches the files in each folder too
            found.extend(f"{prefix}/{name}" if prefix else name for name in _files(folder))
        here = None
        for name, path, linked in _subfolders(folder):
            if linked:  # a link to this folder or one above it is a loop: not followed
                here = here or os.path.realpath(folder)
                target = os.path.realpath(path)
                if here == target or here.startswith(target.rstrip(os.sep) + os.sep):
                    continue
            _match(path, segments, depth, entered, found, f"{prefix}/{name}" if prefix else name)
        return
    if glob.has_magic(head):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            if (name.startswith(".") and not head.startswith(".")) or not fnmatch.fnmatchcase(name, head):
                continue
            path = os.path.join(folder, name)
            if rest and not os.path.isdir(path):
                continue
            _match(path, rest, depth + 1, entered, found, f"{prefix}/{name}" if prefix else name)
        return
    path = os.path.join(folder, head)
    if os.path.lexists(path):
        _match(path, rest, depth + 1, entered, found, f"{prefix}/{head}" if prefix else head)


def set_files_under(folder: str | os.PathLike[str]) -> list[Path]:
    """Every set file (by :data:`SUFFIXES`) under ``folder``, at any depth, in order (what a folder
    named in ``[sets] paths`` or given to ``evalkit validate`` stands for)."""
    return set_files_and_unreadable_under(folder)[0]


def set_files_and_unreadable_under(folder: str | os.PathLike[str]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """:func:`set_files_under` ``folder``, and the entries under it named like set files that
    cannot be read as one (:func:`unreadable_matches`), each with its cause."""
    named = sorted(Path(path) for path in set_file_names(glob_once(os.path.join("**", "*"), root_dir=folder)))
    return [path for path in named if path.is_file()], unreadable_matches(path for path in named if not path.is_file())


def set_file_names(paths: Iterable[str]) -> list[str]:
    """Of ``paths`` a folder or a wildcard matched, those named like a set file (a suffix of
    :data:`SUFFIXES`, in any case), in their order: the one rule for what a folder or a wildcard in ``[sets]
    paths`` or on the command line stands for. The rest — the ``.csv`` table a template names
    beside its set file, a README — are not set files, not problems."""
    return [path for path in paths if os.path.splitext(path)[1].lower() in SUFFIXES]


def unreadable_matches(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, str]]:
    """Of ``paths`` a wildcard or a folder matched, those that are no folder, file or named pipe
    — a loop of symbolic links, a link to nothing, a device, a socket — each with its cause. They
    are problems: dropped without a word, a set whose link broke vanished and validated as ok.
    (A named pipe a wildcard matches is left alone; named, it is read.)"""
    found: list[tuple[Path, str]] = []
    for path in paths:
        _, cause = _what_is_there(os.fspath(path))
        if cause is not None:
            found.append((Path(path), cause))
    return found


def _files(folder: str) -> list[str]:
    """The names of what is not a folder in ``folder``, not starting with a dot."""
    try:
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if not e.name.startswith(".") and not e.is_dir())
    except OSError:
        return []


def _subfolders(folder: str) -> list[tuple[str, str, bool]]:
    """``(name, path, is a link)`` of the folders in ``folder`` (links to folders too) whose names
    do not start with a dot."""
    try:
        with os.scandir(folder) as entries:
            return sorted((e.name, e.path, e.is_symlink()) for e in entries if not e.name.startswith(".") and e.is_dir())
    except OSError:
        return []


def _display(path: Path, root: Path | None) -> Path:
    if root is not None:
        try:
            return path.relative_to(root)
        except ValueError:
            pass
    return path


@attrs.frozen
class CheckedDocument:
    """A set document checked as ``evalkit validate`` checks a set file (:func:`check_document`):
    its kind, every problem found, and the sets it declares when there is none."""

    kind: str
    problems: tuple[FileProblem, ...]
    #: ``(where, set)`` for each set declared, when there is no problem.
    built: tuple[tuple[Any, Any], ...] = ()


def check_document(
    document: SetDocument,
    kinds: Mapping[str, Any] | None = None,
    path: Path | None = None,
    root: Path | None = None,
    boundary: ProjectBoundary | None = None,
) -> CheckedDocument:
    """Check a parsed set document (a file's, or one made in memory to be written) as
    :func:`load_set_files` checks each file it reads: the reader's problems, the schema, the
    kernel's set rules, its templates' tables (read from ``path``'s folder, by default the
    document's file, within ``boundary``; shown relative to ``root``), and the sets built from
    it. Problems are returned, never raised."""
    from ..project_files import ProjectBoundary
    from .schemas import document_kind, schema_problems
    from .sets import FlaggedPaths, build_sets, kernel_problems, rule_problems
    from .templates import TemplateReading, expand_templates

    if kinds is None:
        from ..checks import BUILTIN_KINDS

        kinds = BUILTIN_KINDS
    path = document.file if path is None else path
    shown = str(document.file)
    kind = document_kind(document.data)
    found = schema_problems(document, kind)
    found += rule_problems(document, kind, kinds, FlaggedPaths.of(p.path for p in found))
    expansions: dict[Any, Any] = {}
    if kind == "golden-set":
        where = boundary or ProjectBoundary(Path(os.path.realpath(path.parent)))
        reading = TemplateReading(path, where, kinds, lambda table: str(_display(table, root)))
        expansions, expanded = expand_templates(document, reading, FlaggedPaths.of(p.path for p in found))
        found += expanded
    found.sort(key=lambda p: (p.file != shown, p.file, p.line or 0, p.column or 0))
    found = _named_members(document, found)
    if found or document.problems:
        return CheckedDocument(kind, (*document.problems, *found))
    built = build_sets(document, kind, expansions)
    found = _named_members(document, kernel_problems(document, built, kinds))
    return CheckedDocument(kind, tuple(found), () if found else tuple(built))


def _check_files(files: object) -> None:
    """Refuse ``files`` unless it is a collection of paths (see :func:`load_set_files`)."""
    from ..errors import UsageError
    from ..shapes import short_repr

    single = isinstance(files, (str, bytes, os.PathLike))
    if single or not isinstance(files, Iterable) or isinstance(files, Mapping):
        hint = f" (one file: [{short_repr(files)}])" if single else ""
        raise UsageError(f"load_set_files: files must be a list of paths (str or Path){hint}, got {type(files).__name__} {short_repr(files)}")


def load_set_files(
    files: Sequence[str | os.PathLike[str]],
    kinds: Mapping[str, Any] | None = None,
    root: Path | None = None,
    boundary: ProjectBoundary | None = None,
) -> SetFiles:
    """Read, schema-check and build every set in ``files``; problems are collected, never raised.

    ``kinds`` are the assertion kinds sets may use (default: the built-in ones). File names in
    problems are shown relative to ``root`` when given. A file a set file names (a template's
    table of variables) is read only when it lies inside ``boundary`` (the project and the places
    ``[sets] allow_outside`` lists); without one, only inside the set file's own folder.
    ``files`` that is one path (text or a :class:`~pathlib.Path`), or not paths, is a
    :class:`~evalkit.errors.UsageError` naming it: text was read as one file per character.
    """
    from .sets import skipped_prompts

    _check_files(files)
    files = list(files)  # gone over twice below (a generator's paths would be read once)
    for name in files:
        if not isinstance(name, (str, os.PathLike)):
            _check_files(name)  # refused, naming the member that is not a path
    readings: list[SetDocument | FileSyntaxError] = []
    for name in files:
        try:
            readings.append(read_document(Path(name)))
        except FileSyntaxError as exc:
            readings.append(exc)
    tables = _tables_named(readings, root)

    prompt_sets: list[Any] = []
    question_sets: list[Any] = []
    calibration_sets: list[Any] = []
    problems: list[FileProblem] = []
    skipped: list[SkippedPrompt] = []
    declared: dict[str, FileProblem] = {}
    read: list[Path] = []
    first_problem: list[int] = []  # of each file read: where its problems begin in ``problems``
    for name, document in zip(files, readings, strict=True):
        path = Path(name)
        shown = _display(path, root)
        named_by = tables.get(os.path.realpath(path))
        if named_by is not None:
            skipped.append(SkippedFile(str(shown), f"{named_by}, not a set file; passed over"))  # type: ignore[arg-type]
            continue
        read.append(path)
        first_problem.append(len(problems))
        if isinstance(document, FileSyntaxError):
            problems.extend(attrs.evolve(p, file=str(shown)) for p in document.problems)
            continue
        # the reader's own problems (a repeated key) name the file as it was opened: shown as the rest
        document = attrs.evolve(document, file=shown, problems=tuple(attrs.evolve(p, file=str(shown)) for p in document.problems))
        checked = check_document(document, kinds, path, root, boundary)
        if checked.problems:
            problems.extend(checked.problems)
            continue
        kind, built = checked.kind, checked.built
        for at, prompt_id, reason in skipped_prompts(document) if kind == "golden-set" else ():
            line = document.problem(at, "").line
            skipped.append(SkippedPrompt(str(shown), line, format_path(at), prompt_id, reason))
        for where, built_set in built:
            first = declared.get(built_set.identifier)
            if first is not None:
                problems.append(
                    document.problem(where + ("identifier",), f"set {quoted(built_set.identifier)} is already declared at {first.file}:{first.line}")
                )
                continue
            declared[built_set.identifier] = document.problem(where, "")
            {"question-set": question_sets, "calibration-set": calibration_sets}.get(kind, prompt_sets).append(built_set)
    bounds = [*first_problem, len(problems)]
    failed = tuple(path for path, start, end in zip(read, bounds, bounds[1:], strict=False) if end > start)
    return SetFiles(
        tuple(read), tuple(prompt_sets), tuple(question_sets), tuple(problems), tuple(skipped), tuple(calibration_sets), failed,
        {identifier: f"{at.file}:{at.line}" if at.line is not None else at.file for identifier, at in declared.items()},
    )  # fmt: skip


def _tables_named(readings: Sequence[SetDocument | FileSyntaxError], root: Path | None) -> dict[str, str]:
    """The files with a set file's suffix that the templates of the set files read name as their
    table of variables (``vars: caps.jsonl``), by real path, each with what names it. Such a file
    is no set file: a ``.jsonl``
    table beside its set file, which a folder or a wildcard of ``[sets] paths`` reaches, was read
    as a set and failed line by line (``'identifier' is required``)."""
    from .sets import set_entries

    found: dict[str, str] = {}
    for document in readings:
        if isinstance(document, FileSyntaxError):
            continue
        for at, item in set_entries(document.data):
            prompts = item.get("prompts") if isinstance(item, dict) else None
            for index, prompt in enumerate(prompts if isinstance(prompts, list) else ()):
                source = prompt.get("vars") if isinstance(prompt, dict) and "template" in prompt else None
                if not isinstance(source, str) or not source.strip() or "\x00" in source:
                    continue
                table = os.path.realpath(os.path.join(Path(document.file).parent, source))
                # a .csv or .tsv table is no set file by its suffix already (named in [sets] paths, refused as such)
                if Path(table).suffix.lower() in SUFFIXES and table != os.path.realpath(document.file):
                    where = format_path((*at, "prompts", index, "vars"))
                    found.setdefault(table, f"named by {where} in {_display(Path(document.file), root)} as its table of variables")
    return found


def configured_inputs(config: Any) -> dict[str, str]:
    """The files a configuration names for another job than holding sets, by real path, each with
    what names it: the configuration file itself, and each existing file a string of one of its
    tables other than ``[sets]`` names relative to the project (a ``replay`` provider's answers, a
    CA bundle, a collection's qrels file, a plugin's option). Such a file is no set file wherever
    it lies: ``evalkit validate .`` or ``evals`` and ``[sets] paths = ["evals"]`` read a project's
    recorded answers, or its ``evalkit.toml``, as a set and failed it line by line."""
    found: dict[str, str] = {}
    shown = config.path.name if config.path is not None else "the configuration"
    if config.path is not None:
        found[os.path.realpath(config.path)] = f"the configuration file {shown}"

    def walk(value: Any, keys: tuple[str, ...]) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, (*keys, str(key)))
        elif isinstance(value, list):
            for item in value:
                walk(item, keys)
        elif isinstance(value, str) and value.strip() and "\x00" not in value and len(value) <= 4096:
            path = os.path.join(config.root, os.path.expanduser(value))
            try:
                is_file = os.path.isfile(path)
            except (OSError, ValueError):
                return
            if is_file:
                table = f"[{'.'.join(keys[:-1])}] {keys[-1]}" if len(keys) > 1 else keys[0]
                found.setdefault(os.path.realpath(path), f"named by {table} in {shown}")

    for key, value in config.raw.items():
        if key != "sets":
            walk(value, (str(key),))
    return found


def passed_over(files: Sequence[Path], config: Any, root: Path | None = None) -> tuple[list[Path], list[SkippedFile]]:
    """``files`` without those ``config`` names for another job (:func:`configured_inputs`), and
    one :class:`SkippedFile` for each of those (shown relative to ``root`` when under it)."""
    kept: list[Path] = []
    skipped: list[SkippedFile] = []
    inputs = configured_inputs(config) if files else {}
    for file in files:
        named = inputs.get(os.path.realpath(file)) if inputs else None
        if named is None:
            kept.append(file)
            continue
        shown = file.relative_to(root) if root is not None and file.is_relative_to(root) else file
        skipped.append(SkippedFile(str(shown), f"{named}, not a set file; passed over"))
    return kept, skipped


def load_configured_sets(config: Any, kinds: Mapping[str, Any] | None = None) -> SetFiles:
    """Every set file the configuration's ``[sets] paths`` name, loaded with :func:`load_set_files`
    (those it names for another job passed over: :func:`configured_inputs`)."""
    from ..project_files import ProjectBoundary

    patterns = configured_patterns(config)
    if not patterns:
        return SetFiles()
    files, problems = expand_patterns(patterns, config.root, ProjectBoundary.of(config))
    files, skipped = passed_over(files, config, config.root)
    loaded = load_set_files(files, kinds, config.root, ProjectBoundary.of(config))
    return attrs.evolve(loaded, problems=tuple(problems) + loaded.problems, skipped=(*skipped, *loaded.skipped))
