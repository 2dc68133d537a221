"""Rules a golden prompt set must follow, checked before any generator is called."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .checks import AssertionKind
from .errors import SetValidationError
from .prompts import Assertion, GoldenPrompt, GoldenPromptSet

__all__ = ["IDENTIFIER_PATTERN", "members_with_ids", "prompt_set_problems", "set_problems", "validate_prompt_set"]

#: Lowercase segments of ``[a-z0-9_]`` separated by single dots: ``package.set``.
IDENTIFIER_PATTERN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def _is_answer(value: object) -> bool:
    from .answers import Answer

    return isinstance(value, Answer)


def set_problems(where: str, identifier: object, name: object, members: Sequence[Any], member: str) -> list[str]:
    """Problems shared by every kind of golden set: identifier, name, at least one member."""
    problems: list[str] = []
    if not isinstance(identifier, str) or not IDENTIFIER_PATTERN.fullmatch(identifier):
        problems.append(
            f"{where}: field identifier must be lowercase segments of a-z, 0-9 and _ joined by dots "
            f"(like package.set), got {identifier!r}"
        )
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{where}: field name must not be empty")
    if not members:
        problems.append(f"{where}: field {member}s must hold at least one {member}")
    return problems


def members_with_ids(where: str, members: Sequence[Any], member: str) -> Iterator[tuple[str, Any, list[str]]]:
    """Each member with its location (``set "x", prompt "p"``) and the problems with its ``id``."""
    seen: set[str] = set()
    for index, item in enumerate(members):
        item_id = item.id if isinstance(item.id, str) and item.id else f"#{index + 1}"
        at = f'{where}, {member} "{item_id}"'
        problems = []
        if not isinstance(item.id, str) or not item.id:
            problems.append(f"{at}: field id must be a non-empty string")
        elif item.id in seen:
            problems.append(f"{at}: field id is used by more than one {member}")
        else:
            seen.add(item.id)
        yield at, item, problems


def prompt_set_problems(golden_set: GoldenPromptSet, kinds: Mapping[str, AssertionKind]) -> list[str]:
    """Every problem with ``golden_set``, each naming the set, the prompt id and the field."""
    where = f'set "{golden_set.identifier}"'
    problems = set_problems(where, golden_set.identifier, golden_set.name, golden_set.prompts, "prompt")
    strays = [(n, p) for n, p in enumerate(golden_set.prompts, start=1) if not isinstance(p, GoldenPrompt)]
    for number, stray in strays:
        problems.append(f"{where}, prompt #{number}: must be an evalkit.GoldenPrompt, got {_describe(stray)}")
    if strays:
        return problems
    for at, prompt, id_problems in members_with_ids(where, golden_set.prompts, "prompt"):
        problems.extend(id_problems)
        if not isinstance(prompt.prompt, str) or not has_visible_text(prompt.prompt):
            problems.append(f"{at}: field prompt must not be empty (or hold only whitespace and control characters)")
        reference_ok = prompt.reference is None or isinstance(prompt.reference, str) or _is_answer(prompt.reference)
        if not reference_ok:
            problems.append(f"{at}: field reference must be a string or an evalkit.Answer")
        if prompt.system_prompt is not None and not isinstance(prompt.system_prompt, str):
            problems.append(f"{at}: field system_prompt must be a string")
        if not prompt.assertions and reference_ok and not prompt.reference_text:
            problems.append(f"{at}: field assertions is empty and there is no reference; declare at least one")
        for number, assertion in enumerate(prompt.assertions, start=1):
            if not isinstance(assertion, Assertion):
                problems.append(
                    f"{at}: field assertions[{number}] must be an evalkit.Assertion (e.g. Assertion.contains(...)), "
                    f"got {_describe(assertion)}"
                )
                continue
            kind = kinds.get(assertion.kind)
            field = f"assertions[{number}] ({assertion.kind})"
            if kind is None:
                known = ", ".join(sorted(kinds))
                problems.append(f"{at}: field {field}: unknown assertion kind; known kinds: {known}")
                continue
            try:
                issues = list(kind.validate(assertion.value))
            except Exception as exc:  # a plugin's validator must not hide the other problems
                issues = [f"validator raised {type(exc).__name__}: {exc}"]
            problems.extend(f"{at}: field {field} {issue}" for issue in issues)
    return problems


def has_visible_text(text: str) -> bool:
    """True when ``text`` holds something besides whitespace and control characters (``"\\x00"`` does not)."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Zl", "Zp") for ch in text)


def _describe(value: object) -> str:
    """``str 'contains Paris'``: a stray value's type and a short repr, for a problem message."""
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 60 else shown[:57] + '...'}"


def validate_prompt_set(golden_set: GoldenPromptSet, kinds: Mapping[str, AssertionKind] | None = None) -> None:
    """Raise :class:`SetValidationError` listing every problem with ``golden_set``."""
    if kinds is None:
        from .checks import BUILTIN_KINDS

        kinds = BUILTIN_KINDS
    problems = prompt_set_problems(golden_set, kinds)
    if problems:
        raise SetValidationError(problems)
