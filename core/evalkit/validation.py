"""Rules a golden prompt set must follow, checked before any generator is called."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .checks import AssertionKind
from .errors import SetValidationError
from .prompts import GoldenPromptSet

__all__ = ["IDENTIFIER_PATTERN", "prompt_set_problems", "validate_prompt_set"]

#: Lowercase segments of ``[a-z0-9_]`` separated by single dots: ``package.set``.
IDENTIFIER_PATTERN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def _is_answer(value: object) -> bool:
    from .answers import Answer

    return isinstance(value, Answer)


def prompt_set_problems(golden_set: GoldenPromptSet, kinds: Mapping[str, AssertionKind]) -> list[str]:
    """Every problem with ``golden_set``, each naming the set, the prompt id and the field."""
    where = f'set "{golden_set.identifier}"'
    problems: list[str] = []
    if not isinstance(golden_set.identifier, str) or not IDENTIFIER_PATTERN.fullmatch(golden_set.identifier):
        problems.append(
            f"{where}: field identifier must be lowercase segments of a-z, 0-9 and _ joined by dots "
            f"(like package.set), got {golden_set.identifier!r}"
        )
    if not isinstance(golden_set.name, str) or not golden_set.name.strip():
        problems.append(f"{where}: field name must not be empty")
    if not golden_set.prompts:
        problems.append(f"{where}: field prompts must hold at least one prompt")
    seen: set[str] = set()
    for index, prompt in enumerate(golden_set.prompts):
        pid = prompt.id if isinstance(prompt.id, str) and prompt.id else f"#{index + 1}"
        at = f'{where}, prompt "{pid}"'
        if not isinstance(prompt.id, str) or not prompt.id:
            problems.append(f"{at}: field id must be a non-empty string")
        elif prompt.id in seen:
            problems.append(f"{at}: field id is used by more than one prompt")
        seen.add(prompt.id)
        if not isinstance(prompt.prompt, str) or not prompt.prompt.strip():
            problems.append(f"{at}: field prompt must not be empty")
        if prompt.reference is not None and not isinstance(prompt.reference, str) and not _is_answer(prompt.reference):
            problems.append(f"{at}: field reference must be a string or an evalkit.Answer")
        if prompt.system_prompt is not None and not isinstance(prompt.system_prompt, str):
            problems.append(f"{at}: field system_prompt must be a string")
        if not prompt.assertions and not prompt.reference_text:
            problems.append(f"{at}: field assertions is empty and there is no reference; declare at least one")
        for number, assertion in enumerate(prompt.assertions, start=1):
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


def validate_prompt_set(golden_set: GoldenPromptSet, kinds: Mapping[str, AssertionKind] | None = None) -> None:
    """Raise :class:`SetValidationError` listing every problem with ``golden_set``."""
    if kinds is None:
        from .checks import BUILTIN_KINDS

        kinds = BUILTIN_KINDS
    problems = prompt_set_problems(golden_set, kinds)
    if problems:
        raise SetValidationError(problems)
