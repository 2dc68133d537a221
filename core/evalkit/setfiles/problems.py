"""A problem in a set file: the file, the line and column, the JSON path and the reason."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import attrs

from ..errors import SetValidationError
from ..printable import has_visible_text, lone_surrogate, visible
from ..shapes import ProblemsNotKept, bounded_problem, bounded_problems, not_kept

__all__ = [
    "MAX_QUOTED_CHARACTERS",
    "FileProblem",
    "JsonPath",
    "SetFileError",
    "format_path",
    "kept_file_problems",
    "lone_surrogate_problem",
    "quoted",
]

def lone_surrogate_problem(text: str) -> str | None:
    """Why ``text`` is refused when it holds a lone surrogate (which one, and where), else ``None``.
    JSON writes one as ``"\\ud800"`` without its pair: valid JSON, but no Unicode text, so it cannot
    be encoded as UTF-8 — a prompt holding one errored at the endpoint in every run."""
    lone = lone_surrogate(text)
    if lone is None:
        return None
    code, position = lone
    return (
        f"{quoted(text)} holds a lone surrogate (U+{code:04X}, character {position}): a \\u{code:04x} escape "
        "without the other half of its pair, which is no Unicode text and cannot be sent to an endpoint or written "
        "as UTF-8; write the character itself, or both halves of its pair"
    )

#: A location inside a document: keys and list indexes from the top.
JsonPath = tuple["str | int", ...]

_IDENTIFIER_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

#: The longest text from a set file a problem quotes; a longer value is described, not quoted.
MAX_QUOTED_CHARACTERS = 40


def quoted(value: object, *, as_json: bool = False) -> str:
    """A value read from a set file as a problem may show it: a short scalar as itself
    (``'zero'``, ``5``, ``null``; ``"zero"`` ``as_json``), anything else by its type and size
    (``a string of 58 characters``, ``a list of 3 items``). A file that is not a set file at all
    (a link to ``~/.aws/credentials``) must not have its content quoted into a terminal, a report
    or a CI log: a string is quoted only when it is at most :data:`MAX_QUOTED_CHARACTERS` long and
    looks like no secret (:func:`evalkit.privacy.scrub`), with its control and format characters
    escaped (``'a\\x1b[31m'``)."""
    from ..privacy import scrub

    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= MAX_QUOTED_CHARACTERS else f"a number of {len(text):,} characters"
    if isinstance(value, str):
        if len(value) <= MAX_QUOTED_CHARACTERS and scrub(value) == value:
            return json.dumps(value, ensure_ascii=False) if as_json else repr(value)
        return f"a string of {len(value):,} characters"
    if isinstance(value, list):
        return "[]" if not value else f"a list of {len(value):,} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "{}" if not value else f"a mapping of {len(value):,} key{'s' if len(value) != 1 else ''}"
    return f"a value of type {type(value).__name__}"


def quoted_key(key: object) -> str:
    """A mapping key from a set file as a problem names it (``'contian'``, or its length)."""
    shown = quoted(key)
    return shown if shown[:1] in ("'", '"') else f"({shown})"


def format_path(path: JsonPath) -> str:
    """``("prompts", 3, "assertions", 0, "regex")`` → ``prompts[3].assertions[0].regex``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not isinstance(part, str):  # a YAML key that is not text (null, a number), reported as such
            out += f"[{quoted(part)}]"
        elif _IDENTIFIER_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{quoted_key(part)}]"
    return out


@attrs.frozen
class FileProblem:
    """What is wrong, and where: ``evals/faq.yaml:12:9: prompts[3].assertions[0].regex: …``.
    ``reason`` is cut to :data:`~evalkit.shapes.MAX_PROBLEM_CHARS` (an assertion kind's validator,
    a plugin, words it)."""

    file: str
    reason: str = attrs.field(converter=bounded_problem)
    path: JsonPath = ()
    line: int | None = None
    column: int | None = None
    #: The prompt or question the path is inside, when it has an id: how many steps of the path
    #: lead to it, its id and what it is ("prompt", "question"); see :func:`member_of`.
    member: tuple[int, str, str] | None = None

    @property
    def json_path(self) -> str:
        """The path inside the document, ``prompts[3].assertions[0]`` (empty for the whole file)."""
        return format_path(self.path)

    def __str__(self) -> str:
        from ..wording import path_named

        where = path_named(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.member is not None:  # prompt 'opening-hours': assertions[0].regex — an id, not prompts[3]
            steps, member_id, noun = self.member
            rest = format_path(self.path[steps:])
            inside = f" {noun} {quoted(member_id)}:" + (f" {rest}:" if rest else "")
        else:
            inside = f" {self.json_path}:" if self.path else ""
        return visible(f"{where}:{inside} {self.reason}")

    def as_dict(self) -> dict[str, object]:
        """The machine-readable form (``evalkit validate --json``): the whole JSON path, and the
        id of the prompt or question it is inside (``null`` when none)."""
        member = self.member[1] if self.member is not None else None
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.json_path,
            "member": member,
            "reason": self.reason,
        }


#: Lists of a set file whose entries are named by their ``id``, and what each entry is.
MEMBER_NOUNS = {"prompts": "prompt", "questions": "question"}
#: The longest id a problem names (a longer one is shown by its place in the list).
MAX_NAMED_ID = 200


def member_of(data: object, path: JsonPath) -> tuple[int, str, str] | None:
    """The innermost prompt or question ``path`` leads into, when its entry has a text ``id``: how
    many steps of the path lead to it, its id and its noun (:attr:`FileProblem.member`)."""
    found = None
    node = data
    for step, part in enumerate(path):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and not isinstance(part, bool) and 0 <= part < len(node):
            node = node[part]
        else:
            break
        parent = path[step - 1] if step else None
        if isinstance(part, int) and parent in MEMBER_NOUNS and isinstance(node, dict):
            member_id = node.get("id")
            if isinstance(member_id, str) and has_visible_text(member_id) and len(member_id) <= MAX_NAMED_ID:
                found = (step + 1, member_id, MEMBER_NOUNS[parent])
    return found


def kept_file_problems(problems: Sequence[FileProblem]) -> tuple[FileProblem, ...]:
    """``problems`` as a holder of set-file problems keeps them (:attr:`SetFiles.problems
    <evalkit.setfiles.SetFiles.problems>`, :attr:`SetFileError.file_problems`): the first
    :data:`~evalkit.shapes.MAX_PROBLEMS_KEPT`, then one naming the file of the first one not kept
    and how many more there were (:func:`~evalkit.shapes.bounded_problems`' line, a
    :class:`~evalkit.shapes.ProblemsNotKept` that counts as them). A JSONL file of 200,000 prompts
    without a ``prompt`` had each printed by ``validate`` and by a run (8,000 of them: 450 KB)."""
    problems = tuple(problems)
    kept = bounded_problems(problems)
    if len(kept) == len(problems):
        return problems
    note = kept[-1]
    assert isinstance(note, ProblemsNotKept)  # bounded_problems' last line, when it cut
    files = list(dict.fromkeys(p.file for p in problems[len(kept) - 1 :]))
    if len(files) > 1:
        note = note.naming(f"{note} (they are in this file and {len(files) - 1:,} more)")
    return (*kept[:-1], FileProblem(files[0], note))


class SetFileError(SetValidationError):
    """One or more set files are invalid; ``file_problems`` holds each :class:`FileProblem`, up to
    :func:`kept_file_problems`' bound."""

    subject = "the set files are invalid"

    def __init__(self, problems: Sequence[FileProblem]) -> None:
        self.file_problems = kept_file_problems(problems)
        # each problem as a line; the line of those not kept still counts as them
        super().__init__([_line(p) for p in self.file_problems])


def _line(problem: FileProblem) -> str:
    """``problem`` as :attr:`SetFileError.problems` holds it: its text, counting as the problems it names."""
    note = not_kept(problem)
    return str(problem) if note is None else note.naming(str(problem))
