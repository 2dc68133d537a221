"""When a serving identity is evidence: the original's rules for each of its parts.

A serving identity (:class:`~evalkit.answers.ServingIdentity`) proves who answered only when every
part is well formed, as nr_llm's ``GeneratorProvenance`` requires:

* the provider **instance**: 1 to 100 characters of ``A-Z a-z 0-9 _ . -``;
* the model **alias** sent and the **reported model** (the dated snapshot the endpoint names):
  1 to 150 characters of ``A-Z a-z 0-9 _ . / : @ + -``, and no ``://`` (no URL);
* and, beyond the original, a backslash in those two: a model file's Windows path
  (``C:\\models\\judge.gguf``), which a llama.cpp or LM Studio server on Windows reports as a POSIX
  server reports ``/models/judge.gguf``;
* and, beyond the original, no part has the shape of a credential or an e-mail address (the
  shapes :func:`evalkit.privacy.scrub` removes).

The character sets already keep out whitespace and control characters. A case whose identity
breaks a rule is not verified, and a run with such a case is stored but never compared.
"""

from __future__ import annotations

import re

from .answers import ServingIdentity
from .printable import visible

__all__ = [
    "INSTANCE_PATTERN", "MODEL_PATTERN", "MODEL_UNSAFE", "hidden_problem", "identity_problems", "model_problem", "part_problem",
]

INSTANCE_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_MODEL_CHARACTERS = r"A-Za-z0-9_./\\:@+-"
MODEL_PATTERN = re.compile(f"[{_MODEL_CHARACTERS}]{{1,150}}")
#: One character a model name may not hold (what an adapter that builds a name replaces).
MODEL_UNSAFE = re.compile(f"[^{_MODEL_CHARACTERS}]")
_SHOWN = 60
#: One character of a shown value: an escape (``\\\\``, ``\\"``, ``\\x1b``, ``\\u202e``) or a character.
_SHOWN_CHARACTER = re.compile(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\U[0-9a-f]{8}|\\.|.", re.DOTALL)


def _shown(value: str) -> str:
    """The value as a refusal shows it, in double quotes: credentials scrubbed, a typed ``"`` and
    backslash escaped (``\\"``, ``\\\\``), every control or invisible character as its escape
    (``\\x1b``, ``\\u202e``: :func:`evalkit.printable.visible`), cut to about 60 characters. A name
    may hold a backslash (a Windows path), so the typed text ``\\u202e`` must not read as the
    character: it is shown ``\\\\u202e``, as a Python or TOML string writes it."""
    from .privacy import scrub

    body = visible(scrub(value).replace("\\", "\\\\").replace('"', '\\"'))
    if len(body) <= _SHOWN:
        return f'"{body}"'
    kept, size = [], 0
    for match in _SHOWN_CHARACTER.finditer(body):  # never cut an escape in two
        size += len(match.group())
        if size > _SHOWN - 3:
            break
        kept.append(match.group())
    return '"' + "".join(kept) + '..."'


def _hidden_character(value: str) -> str | None:
    """The first control or invisible character of ``value``, named by code point and position
    (``U+202E RIGHT-TO-LEFT OVERRIDE, character 7``); ``None`` when there is none."""
    import unicodedata

    for position, char in enumerate(value, start=1):
        if not char.isprintable():
            name = unicodedata.name(char, "")
            return f"U+{ord(char):04X}{' ' + name if name else ''}, character {position}"
    return None


def hidden_problem(value: str) -> str | None:
    """Why text that names something people compare by eye (a grading's yardstick, a prompt's
    tag) cannot: it holds a control or invisible character, so it prints as other text while it
    compares differently. The words show ``value`` safely and name the first such character
    (``"judge:\\u202e..." contains control or invisible characters (the first: U+202E
    RIGHT-TO-LEFT OVERRIDE, character 7)``), as a refused model name's do; ``None`` when there is
    none. A space is no such character."""
    hidden = None if value.isprintable() else _hidden_character(value)  # isprintable: one C call for the common case
    return None if hidden is None else f"{_shown(value)} contains control or invisible characters (the first: {hidden})"


def part_problem(value: object, pattern: re.Pattern[str], limit: int) -> str | None:
    """Why ``value`` is not a well-formed identity part (``None`` when it is)."""
    from .privacy import scrub

    if not isinstance(value, str):
        return f"is {type(value).__name__}, not text"
    if not value:
        return "is empty"
    if len(value) > limit:
        return f"is longer than {limit} characters"
    if (hidden := _hidden_character(value)) is not None:
        return f"contains control or invisible characters (the first: {hidden})"
    if "://" in value:
        return "is a URL"
    if scrub(value) != value:
        return "looks like a credential or an e-mail address"
    if not pattern.fullmatch(value):
        allowed = "_ . -" if pattern is INSTANCE_PATTERN else "_ . / \\ : @ + -"
        return f"may only use ASCII letters, digits and {allowed}"
    return None


def model_problem(model: str) -> str | None:
    """Why a reported model name is not well formed, showing it safely (``None`` when it is): the
    rule a run's serving identity keeps, for a judge's model too."""
    problem = part_problem(model, MODEL_PATTERN, 150)
    return None if problem is None else f"{_shown(model)} {problem}"


def identity_problems(identity: ServingIdentity) -> list[str]:
    """Every malformed part of ``identity``, each naming the part and showing its value safely."""
    problems = []
    for label, value, pattern, limit in (
        ("provider instance", identity.provider_instance, INSTANCE_PATTERN, 100),
        ("model alias", identity.model_alias, MODEL_PATTERN, 150),
        ("reported model", identity.reported_model, MODEL_PATTERN, 150),
    ):
        problem = part_problem(value, pattern, limit)
        if problem is not None:
            shown = _shown(value) if isinstance(value, str) else f'"{value!r}"'
            problems.append(f"{label} {shown} {problem}")
    return problems
