"""A problem in a set file: the file, the line and column, the JSON path and the reason."""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from ..errors import SetValidationError
from ..printable import visible

__all__ = ["FileProblem", "JsonPath", "SetFileError", "format_path"]

#: A location inside a document: keys and list indexes from the top.
JsonPath = tuple["str | int", ...]

_IDENTIFIER_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def format_path(path: JsonPath) -> str:
    """``("prompts", 3, "assertions", 0, "regex")`` → ``prompts[3].assertions[0].regex``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


@attrs.frozen
class FileProblem:
    """What is wrong, and where: ``evals/faq.yaml:12:9: prompts[3].assertions[0].regex: …``."""

    file: str
    reason: str
    path: JsonPath = ()
    line: int | None = None
    column: int | None = None

    @property
    def json_path(self) -> str:
        """The path inside the document, ``prompts[3].assertions[0]`` (empty for the whole file)."""
        return format_path(self.path)

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        inside = f" {self.json_path}:" if self.path else ""
        return visible(f"{where}:{inside} {self.reason}")

    def as_dict(self) -> dict[str, object]:
        """The machine-readable form (``evalkit validate --json``)."""
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.json_path, "reason": self.reason}


class SetFileError(SetValidationError):
    """One or more set files are invalid; ``file_problems`` holds each :class:`FileProblem`."""

    subject = "the set files are invalid"

    def __init__(self, problems: Sequence[FileProblem]) -> None:
        self.file_problems = tuple(problems)
        super().__init__([str(p) for p in problems])
