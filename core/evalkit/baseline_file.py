"""Baseline files: a scope's baseline run carried in the repository instead of a shared store.

A CI job without a shared database starts with an empty store every time, so every run would be
"the first of its scope" and no gate would ever fire. ``evalkit baseline export SET -o FILE``
writes the scope's accepted baseline run into a JSON file (committed with the code);
``evalkit run … --baseline-file FILE`` compares with it whatever the store holds.

The file holds the run as the store keeps it — its identity, fingerprints (the set's and each
case's, so added and edited cases are told apart) and cases — with answer text only as far as
the export's privacy level allows, and a digest of all of it: a file edited by hand, cut short or
written by something else is refused (exit 2) naming it, and so is a file of another scope,
before anything is called or stored. It is validated against
``evalkit/schemas/baseline-file.schema.json`` and written atomically (a temporary file renamed
over the target).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from .errors import UsageError
from .jsonparse import parse_json
from .runs import Run, RunStatus
from .storage.values import Acceptance
from .wording import argument, path_named, quoted

__all__ = ["FORMAT", "MAX_BYTES", "BaselineFile", "baseline_document", "read_baseline_file", "write_baseline_file"]

#: The ``format`` a baseline file declares.
FORMAT = "evalkit-baseline"
#: The largest baseline file read (a 100,000-case run with answers fits).
MAX_BYTES = 512 * 1024 * 1024
#: Privacy levels, from the least text kept to the most.
_LEVELS = ("metadata", "redacted", "full")


@attrs.frozen
class BaselineFile:
    """A baseline read from a file: where it came from (``path``, as the user named it), the run
    (complete, with its cases) and how it had been accepted where it was exported."""

    path: str
    run: Run
    acceptance: Acceptance | None = None

    def named(self) -> str:
        """``baseline file PATH``, for messages."""
        from .wording import path_named

        return f"baseline file {path_named(self.path)}"


def _digest(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _within_privacy(run: Run, privacy: str) -> Run:
    """``run`` with no more answer text than ``privacy`` allows (never more than it was stored with)."""
    from .privacy import redacted_text

    if privacy == "full":
        return run
    if privacy == "metadata":
        cases = [attrs.evolve(c, answer_text=None, detail=None) for c in run.cases]
    else:
        cases = [attrs.evolve(c, answer_text=None if c.answer_text is None else redacted_text(c.answer_text)) for c in run.cases]
    return attrs.evolve(run, cases=tuple(cases))


def baseline_document(run: Run, acceptance: Acceptance | None, privacy: str | None = None) -> dict[str, Any]:
    """The baseline file's content for the complete ``run`` (with its cases), at ``privacy``
    (default: the run's own level; a level that keeps more than the run's is refused). A usage
    error, before anything is written, when the content breaks the file's schema, so that
    :func:`read_baseline_file` would refuse it."""
    from . import convert
    from .storage.values import BaselineScope
    from .version import __version__

    stored = run.privacy or "metadata"
    level = privacy or stored
    if _LEVELS.index(level) > _LEVELS.index(stored):
        raise UsageError(f"{argument('privacy', level)}: run {run.id} keeps answers at the {stored} level; a baseline file cannot hold more")
    scope = BaselineScope.of_run(run)
    if run.status is not RunStatus.COMPLETE or scope is None:
        raise UsageError(f"run {run.id} is not a complete run of a scope, so it cannot be a baseline file")
    exported = _within_privacy(run, level)
    data = json.loads(convert.dumps(attrs.evolve(exported, privacy=level)))
    for aggregate in ("stored_passed_count", "stored_errored_count", "stored_answered_count", "stored_mean_score"):
        data.pop(aggregate, None)  # counted from the cases when read back
    # What the reader would refuse is never written: an export that exits 0 and a CI job that
    # exits 2 on it later, with no store left to export from again, is the worst of both.
    problem = _schema_problem({"format": FORMAT, "version": 1, "exported_at": "", "scope": {}, "run": data, "digest": "sha256:" + "0" * 64})
    if problem is not None:
        redacted = argument("privacy", '"redacted"', option="--privacy redacted")
        hint = f" ({redacted} keeps each answer cut at 2,000 characters)" if level == "full" and "answer_text" in problem else ""
        reader = argument("baseline_file", option="`--baseline-file`")  # read_baseline_file's, for a Python caller
        raise UsageError(f"run {run.id} cannot be written to a baseline file that {reader} would read: {problem}{hint}; nothing was written")
    body: dict[str, Any] = {
        "format": FORMAT,
        "version": 1,
        "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "evalkit_version": __version__,
        "privacy": level,
        "scope": {"kind": scope.kind.value, "description": scope.describe()},
        "acceptance": None if acceptance is None else attrs.asdict(acceptance),
        "run": data,
    }
    return {**body, "digest": _digest(body)}


def write_baseline_file(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    """Write ``document`` to ``path`` atomically (an earlier file stays whole if this fails)."""
    from .textfiles import write_text_file

    text = json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    write_text_file(Path(path), [text])


def _schema() -> dict[str, Any]:
    return json.loads(resources.files("evalkit.schemas").joinpath("baseline-file.schema.json").read_text("utf-8"))


def _where(error: Any) -> str:
    """An error's position and rule, never the value it found (the file is not quoted)."""
    position = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "(the top level)"
    rule = error.validator
    expected = error.validator_value
    if rule in ("type", "enum", "const", "required", "pattern", "maxLength", "minLength", "maximum", "minimum", "maxItems"):
        shown = json.dumps(expected)
        if len(shown) > 120:
            shown = shown[:117] + "..."
        return f"{position}: breaks the rule {rule} = {shown}"
    return f"{position}: breaks the rule {rule}"


def _schema_problem(document: dict[str, Any]) -> str | None:
    """Where ``document`` first breaks the baseline file's JSON Schema (and how many more
    breaks follow), or ``None`` when it keeps it: what the reader refuses and the export checks."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(_schema()).iter_errors(document), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{_where(errors[0])}{more}"


def read_baseline_file(path: str) -> BaselineFile:
    """The baseline ``path`` holds; a usage error naming the file when it cannot be read, is not a
    baseline file (schema), was changed after it was written (digest) or is not a complete run."""
    from . import convert
    from .textfiles import read_whole_file

    name = f"baseline file {path_named(path)}"
    try:
        raw = read_whole_file(path, MAX_BYTES)
    except OSError as exc:
        raise UsageError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    try:
        # parse_json: NaN and the infinities, nesting past the stack, a 5,000-digit number are
        # JSONDecodeErrors; their reasons name a position or a constant, never the file's text. A
        # key written twice is one too: evalkit never exports one, and the last value winning would
        # let an edited (merged) file still match its digest
        document = parse_json(raw.decode("utf-8"), unique_keys=True)
    except UnicodeDecodeError:
        raise UsageError(f"{name}: is not a JSON document (export it with `evalkit baseline export`)") from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{name}: is not a JSON document ({exc.msg} at line {exc.lineno}, column {exc.colno}; "
            "export it with `evalkit baseline export`)"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UsageError(f'{name}: is not an evalkit baseline file (no "format": {quoted(FORMAT)}; export one with `evalkit baseline export`)')
    problem = _schema_problem(document)
    if problem is not None:
        raise UsageError(f"{name}: is not a valid baseline file: {problem}")
    body = {k: v for k, v in document.items() if k != "digest"}
    if _digest(body) != document["digest"]:
        raise UsageError(
            f"{name}: its content does not match its digest (changed after it was exported, by hand or by a merge?); "
            "export it again with `evalkit baseline export`"
        )
    try:
        run = convert.structure({**document["run"], "status": "complete"}, Run)
        acceptance = None if document.get("acceptance") is None else convert.structure(document["acceptance"], Acceptance)
    except Exception:  # noqa: BLE001 - what a schema-valid file can still hold wrong: the file is named, not quoted
        raise UsageError(f"{name}: holds a run this evalkit cannot read") from None
    if len({c.case_id for c in run.cases}) != len(run.cases):
        raise UsageError(f"{name}: holds a case id twice")
    return BaselineFile(path, run, acceptance)
