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

__all__ = ["INSTANCE_PATTERN", "MODEL_PATTERN", "MODEL_UNSAFE", "identity_problems", "model_problem", "part_problem"]

INSTANCE_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_MODEL_CHARACTERS = r"A-Za-z0-9_./\\:@+-"
MODEL_PATTERN = re.compile(f"[{_MODEL_CHARACTERS}]{{1,150}}")
#: One character a model name may not hold (what an adapter that builds a name replaces).
MODEL_UNSAFE = re.compile(f"[^{_MODEL_CHARACTERS}]")
_SHOWN = 60


def _shown(value: str) -> str:
    """The value as a message may show it: credentials scrubbed, escapes visible, bounded."""
    from .privacy import scrub

    text = visible(scrub(value))
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def part_problem(value: object, pattern: re.Pattern[str], limit: int) -> str | None:
    """Why ``value`` is not a well-formed identity part (``None`` when it is)."""
    from .privacy import scrub

    if not isinstance(value, str):
        return f"is {type(value).__name__}, not text"
    if not value:
        return "is empty"
    if len(value) > limit:
        return f"is longer than {limit} characters"
    if any(not char.isprintable() for char in value):
        return "contains control or invisible characters"
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
    return None if problem is None else f'"{_shown(model)}" {problem}'


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
            shown = _shown(value) if isinstance(value, str) else repr(value)
            problems.append(f'{label} "{shown}" {problem}')
    return problems
