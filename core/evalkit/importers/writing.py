"""Writing imported cases as a set file and a ``replay`` answers file beside it.

Each case becomes a golden prompt whose reference is the observed answer and whose one check,
``same_as_observed``, is that answer exactly: replaying the recorded answers passes, and a reviewer
replaces the check with the properties that matter. A case with one user turn is a plain
``prompt``; a longer history is kept as ``messages`` (see :mod:`evalkit.setfiles.conversations`),
marked ``skip`` when it holds tool calls. The observed answers go to a JSONL file the ``replay``
generator reads (``{"id", "text", "model"}``, and the answer's ``tool_calls`` when it made some).

Both files are written whole or not at all (:func:`evalkit.textfiles.write_text_file`), never over
an existing file unless asked to: the answers first, so a set file never names answers that are
not there, but only once the set file's text is written beside its place
(:func:`evalkit.textfiles.staged_text_file`), so a set file that cannot be written leaves the
answers file as it was.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from ..errors import UsageError, write_failed
from ..printable import is_hidden
from ..textfiles import staged_text_file, write_text_file
from ..wording import path_named
from .otel import ImportedCase, TraceImport
from .otlp import valid_text

__all__ = [
    "OBSERVED_CHECK", "TOOLS_SKIP_REASON", "UNWRITABLE", "ImportTarget", "check_distinct", "set_document", "set_file_text",
    "writable_cases", "write_import",
]  # fmt: skip

#: The name of the check each imported case starts with.
OBSERVED_CHECK = "same_as_observed"
#: Why a span is not imported when the set file could not hold its case (``evalkit validate`` would
#: refuse it: a tool turn answering a call the recorded history left out, …).
UNWRITABLE = "spans whose case a set file cannot hold"
#: Why an imported conversation with tool calls is kept but not run.
TOOLS_SKIP_REASON = "holds tool calls: declare its tools and their canned results, then remove skip (imported from a trace; review it)"


@attrs.frozen
class ImportTarget:
    """Where and as what the import is written."""

    set_file: Path
    answers_file: Path
    identifier: str
    name: str
    source: str
    force: bool = False


def set_document(cases: Sequence[ImportedCase], target: ImportTarget) -> dict[str, Any]:
    """The set file's document: one golden prompt per case."""
    prompts = []
    for case in cases:
        prompt: dict[str, Any] = {"id": case.id}
        if case.single_prompt:
            system = [turn.content for turn in case.turns if turn.role == "system" and turn.content]
            prompt["prompt"] = next(turn.content for turn in case.turns if turn.role == "user")
            if system:
                prompt["system_prompt"] = "\n\n".join(system)  # type: ignore[arg-type]
        else:
            prompt["mode"] = "fixed"
            prompt["messages"] = [turn.as_dict() for turn in case.turns]
            if case.kept_skipped:
                prompt["skip"] = TOOLS_SKIP_REASON
        tags = [_tag(f"trace:{case.trace_id}")] if case.trace_id else []
        tags += [_tag(f"provider:{case.provider}")] if case.provider else []
        if tags:
            prompt["tags"] = tags
        prompt["reference"] = case.answer
        prompt["assertions"] = [{"exact": case.answer, "name": OBSERVED_CHECK}]
        prompts.append(prompt)
    return {
        "identifier": target.identifier,
        "name": valid_text(target.name),
        "description": valid_text(f"Model calls recorded in {target.source}, imported by evalkit import otel with the answers observed; review before trusting."),
        "prompts": prompts,
    }


def _tag(text: str) -> str:
    """``text`` as a tag may hold it: each character a tag refuses (a control or invisible one, a
    space other than ``" "``: :func:`evalkit.identity.hidden_problem`) written as its escape, as
    Python writes it (``provider:a b\\nc``). A tag is a hint for a reader, not the recorded text."""
    return text if text.isprintable() else "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _answer_lines(cases: Sequence[ImportedCase]) -> list[str]:
    """The answers file's lines, hidden characters written as JSON escapes (:func:`~evalkit.printable.json_visible`)."""
    from ..printable import json_visible

    lines = []
    for case in cases:
        line: dict[str, Any] = {"id": case.id, "text": case.answer, "model": case.model}
        if case.answer_tool_calls:
            line["tool_calls"] = [dict(call) for call in case.answer_tool_calls]
        lines.append(json_visible(json.dumps(line, ensure_ascii=False)) + "\n")
    return lines


def _hidden(char: str) -> bool:
    """A character no reader of the set file may meet raw, by the rule of everything evalkit shows
    (:func:`evalkit.printable.is_hidden`): a control, a format character (a bidi override, a
    zero-width one), a line or paragraph separator (U+2028, which the YAML writer leaves raw in a
    quoted scalar); a line break and a tab are the text's own."""
    return char not in "\n\t" and is_hidden(char)


def _holds_hidden(text: str) -> bool:
    """Whether ``text`` holds a hidden character (line by line: most lines are printable, a quick test)."""
    return any(not line.isprintable() and any(map(_hidden, line)) for line in text.split("\n"))


def _escaped_hidden(text: str) -> str:
    """``text`` with each hidden character written as a YAML double-quoted scalar's escape."""
    return "".join((f"\\u{ord(c):04X}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08X}") if _hidden(c) else c for c in text)


#: A character past U+FFFF (an emoji, a CJK extension ideograph), which libyaml writes as a
#: ``\U0001F99C`` escape whatever ``allow_unicode`` says, or a private-use one of the Basic
#: Multilingual Plane, which it writes as it is (:class:`_StandIns` picks among those).
_WIDE_OR_PRIVATE = re.compile("[\U00010000-\U0010FFFF\uE000-\uF8FF]")
#: The private-use characters of the Basic Multilingual Plane.
_PRIVATE = range(0xE000, 0xF900)


class _StandIns:
    """Wide characters replaced, while the document is dumped, by private-use characters it does
    not hold, and put back in the text written: YAML's writer writes those raw in whatever style
    it picks (plain, quoted, folded), so the wide characters are written as they are and the file
    loads back exactly. Hidden ones (the tag characters U+E0000-U+E007F, which can spell a text no
    one sees) keep their escapes, as do any past the 6,400 stand-ins there are. A stand-in the
    document turns out to hold (met after it was picked) is a :attr:`clash`: dump again, avoiding
    what was met."""

    def __init__(self, avoid: frozenset[str] = frozenset()) -> None:
        self._free = (chr(code) for code in _PRIVATE if chr(code) not in avoid)
        self.into: dict[int, str] = {}
        self.back: dict[int, str] = {}
        #: The private-use characters the document's own texts hold.
        self.met: set[str] = set()

    @property
    def clash(self) -> bool:
        """Whether a stand-in picked is also a character of the document's texts."""
        return any(chr(code) in self.met for code in self.back)

    def replaced(self, text: str) -> str:
        """``text`` with each visible wide character replaced by its stand-in."""
        found = _WIDE_OR_PRIVATE.findall(text)
        if not found:
            return text
        for char in found:
            if char <= "\uF8FF":
                self.met.add(char)
            elif ord(char) not in self.into and not _hidden(char):
                stand_in = next(self._free, None)
                if stand_in is not None:
                    self.into[ord(char)], self.back[ord(stand_in)] = stand_in, char
        return text.translate(self.into)


def _yaml_body(document: dict[str, Any]) -> str:
    """The document as YAML, readable as written and hiding nothing. A text holding a hidden
    character (a bidi override that shows a reviewer other words than the ones sent) is written
    double-quoted with it as an escape; a wide character (an emoji) is written as it is, not as
    the escape libyaml writes (:class:`_StandIns`). Both load back the same."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    options: dict[str, Any] = {"sort_keys": False, "allow_unicode": True, "width": 100, "default_flow_style": False}
    stand_ins = _StandIns()

    class Writer(dumper):  # type: ignore[misc, valid-type]
        pass

    def text(representer: Any, value: str) -> Any:
        style = '"' if not value.isprintable() and _holds_hidden(value) else None
        return representer.represent_scalar("tag:yaml.org,2002:str", stand_ins.replaced(value), style=style)

    Writer.add_representer(str, text)
    body = yaml.dump(document, Dumper=Writer, **options)
    if stand_ins.clash:  # rare: a text holds a private-use character picked before it was met
        stand_ins = _StandIns(frozenset(stand_ins.met))
        body = yaml.dump(document, Dumper=Writer, **options)
    body = body.translate(stand_ins.back) if stand_ins.back else body
    if not _holds_hidden(body):
        return body
    # Every hidden character is inside a double-quoted scalar, where an escape means it.
    return "\n".join(_escaped_hidden(line) if not line.isprintable() else line for line in body.split("\n"))


def _yaml_text(document: dict[str, Any], target: ImportTarget, answers_path: str) -> str:
    body = _yaml_body(document)
    header = (
        f"# Imported by `evalkit import otel` from {json.dumps(target.source, ensure_ascii=True)}.\n"
        f"# The observed answers are in {json.dumps(answers_path, ensure_ascii=True)} (the replay generator reads them).\n"
        f"# Each case checks that the answer is the observed one: replace {OBSERVED_CHECK} by what matters.\n"
    )
    return header + body


def _same_file(one: Path, other: Path) -> bool:
    """True when ``one`` and ``other`` name one file: the same path once links are resolved, or
    two names (a hard link) of one existing file."""
    if os.path.realpath(one) == os.path.realpath(other):
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist (yet): they are different files
        return False


def check_distinct(trace_file: Path, target: ImportTarget) -> None:
    """:class:`~evalkit.errors.UsageError` when the set file and the answers file are one file
    (the second write replaced the first: a set file naming itself as its answers), or when either
    is the trace file read (``--force`` replaced the source with what was made of it), or is a
    folder (it "already existed", and ``--force`` then failed with "Is a directory")."""
    for option, path in (("-o", target.set_file), ("--answers", target.answers_file)):
        if os.path.isdir(path):
            raise UsageError(f"evalkit import writes nothing: {option} {path_named(path)} is a folder; give a file's path")
    if _same_file(target.set_file, target.answers_file):
        raise UsageError(
            f"evalkit import writes nothing: the set file and the answers file are both {path_named(target.set_file)}; "
            "give --answers another path (or leave it out)"
        )
    for option, path in (("-o", target.set_file), ("--answers", target.answers_file)):
        if _same_file(path, trace_file):
            raise UsageError(f"evalkit import writes nothing: {option} {path_named(path)} is the trace file it reads; choose another path")


def set_file_text(cases: Sequence[ImportedCase], target: ImportTarget) -> str:
    """The set file's text for ``cases``, exactly as :func:`write_import` writes it."""
    return _text_of(set_document(cases, target), target)


def _text_of(document: dict[str, Any], target: ImportTarget) -> str:
    relative = os.path.relpath(target.answers_file, target.set_file.parent)
    return _yaml_text(document, target, relative)


def _set_file_problems(document: dict[str, Any], target: ImportTarget) -> tuple[Any, ...]:
    """What ``evalkit validate`` would say of the set file holding ``document`` (its
    ``FileProblem``s): the document is checked as it is, in memory, by the checks a set file's
    data gets once read (:func:`evalkit.setfiles.check_document`); its text, PyYAML's safe dump,
    loads back as that data. Reading the file back cost more than making it: at 20,000 spans,
    twice the import's time."""
    from ..setfiles import check_document
    from ..setfiles.documents import FileSyntaxError, made_document

    try:
        made = made_document(target.set_file, document)
    except FileSyntaxError as exc:
        return tuple(exc.problems)
    return check_document(made).problems


def _prompt_index(problem: Any) -> int | None:
    """The index of the prompt (``prompts[N]``) a set file's problem is in, or ``None`` for one of the set itself."""
    path = problem.path
    return path[1] if len(path) >= 2 and path[0] == "prompts" and isinstance(path[1], int) else None


def writable_cases(found: TraceImport, target: ImportTarget) -> tuple[TraceImport, str]:
    """``found`` without the cases the set file could not hold, and the set file's text for the
    rest: the set is checked as ``evalkit validate`` checks it, and a case it refuses is left out
    and counted under :data:`UNWRITABLE` (the first reason named); a problem of the set itself (its
    ``--name``, a file larger than a set file may be) is a :class:`~evalkit.errors.UsageError`.
    An import never writes a set file ``evalkit run`` refuses. When every case left is kept but
    skipped, nothing is checked and the text is empty: such a set has nothing to run, which
    :func:`evalkit.importers.import_otel` says."""
    from ..setfiles import documents

    cases = list(found.cases)
    skipped = dict(found.not_imported)
    document = set_document(cases, target)
    while cases and not all(case.kept_skipped for case in cases):
        problems = _set_file_problems(document, target)
        if not problems:
            break
        refused = {index for index in map(_prompt_index, problems) if index is not None}
        whole = [p for p in problems if _prompt_index(p) is None]
        if whole or not refused or not refused <= set(range(len(cases))):
            first = (whole or list(problems))[0]
            where = f"{first.json_path}: " if first.json_path else ""
            raise UsageError(f"evalkit import writes nothing: the set file would not be valid: {where}{first.reason}")
        first = next(p for p in problems if p.path[1] in refused)
        why = f"{UNWRITABLE} (first: {cases[first.path[1]].id}: {first.reason})"
        skipped[why] = skipped.get(why, 0) + len(refused)
        cases = [case for index, case in enumerate(cases) if index not in refused]
        document = set_document(cases, target)
    if all(case.kept_skipped for case in cases):  # none left, or none that runs: nothing is written
        return attrs.evolve(found, cases=tuple(cases), not_imported=skipped), ""
    text = _text_of(document, target)
    size = len(text.encode("utf-8"))
    if size > documents.MAX_SET_FILE_BYTES:
        raise UsageError(
            f"evalkit import writes nothing: the set file would be {size:,} bytes, larger than the "
            f"{documents.MAX_SET_FILE_BYTES:,} a set file may hold; import a part of the trace file at a time"
        )
    return attrs.evolve(found, cases=tuple(cases), not_imported=skipped), text


def write_import(cases: Sequence[ImportedCase], target: ImportTarget, text: str) -> None:
    """Write the answers file, then the set file (``text``, as :func:`writable_cases` made and
    checked it); :class:`~evalkit.errors.UsageError` when either exists and ``target.force`` is
    not set, or when one cannot be written (nothing is left half-written; a full disk is
    :class:`~evalkit.errors.OutputFailed`, exit 3: :func:`~evalkit.errors.write_failed`)."""
    targets = (target.answers_file, target.set_file)
    existing = [path_named(path) for path in targets if os.path.lexists(path)]
    if existing and not target.force:
        one = len(existing) == 1
        raise UsageError(
            f"evalkit import writes nothing: {', '.join(existing)} already {'exists' if one else 'exist'}; "
            "choose another -o, or give --force to replace"
        )
    answers_existed = os.path.lexists(target.answers_file)
    try:
        # The set file is written beside its place first: a folder it cannot be in, a full disk,
        # fail before an answers file that --force replaces is touched (it was lost, exit 2).
        with staged_text_file(target.set_file, [text]) as put_set_file:
            write_text_file(target.answers_file, _answer_lines(cases))
            try:
                put_set_file()
            except BaseException:
                if not answers_existed:
                    target.answers_file.unlink(missing_ok=True)
                raise
    except OSError as exc:
        raise write_failed(f"evalkit import cannot write {path_named(exc.filename or target.set_file)}: {exc.strerror}", exc) from None
