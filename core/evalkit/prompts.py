"""Golden prompt sets: the prompts a model must answer and the properties a good answer has."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .answers import Answer

__all__ = ["Assertion", "GoldenPrompt", "GoldenPromptSet", "DEFAULT_CHECK_NAMES"]


def _tuple(value: Iterable[Any] | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        return (value,)
    return tuple(value)


#: The check name each assertion kind reports unless the assertion names its own.
DEFAULT_CHECK_NAMES: Mapping[str, str] = {
    "exact": "exact_match",
    "contains": "contains",
    "regex": "matches_pattern",
    "json_schema": "schema_valid",
    "contains_any": "stated_the_fact",
    "contains_none": "avoided_known_error",
    "max_words": "within_length",
    "refusal": "refused",
    "cites_any": "cited_expected_source",
    "citations_resolve": "citations_resolve",
}


@attrs.frozen
class Assertion:
    """One property a good answer has; grading turns it into one named check.

    Build assertions with the factories (``Assertion.contains("Paris")``); a plugin that adds
    an assertion kind through the ``evalkit_assertion_kinds`` hook is used as
    ``Assertion(kind="my_kind", value=...)``.
    """

    kind: str
    value: Any = None
    name: str | None = None

    @property
    def check_name(self) -> str:
        """The name of the check this assertion yields."""
        return self.name or DEFAULT_CHECK_NAMES.get(self.kind, self.kind)

    @classmethod
    def exact(cls, value: str, *, name: str | None = None) -> Assertion:
        """The trimmed answer equals ``value`` (trimmed)."""
        return cls("exact", value, name)

    @classmethod
    def contains(cls, value: str, *, name: str | None = None) -> Assertion:
        """``value`` is a case-sensitive substring of the answer."""
        return cls("contains", value, name)

    @classmethod
    def regex(cls, pattern: str, *, name: str | None = None) -> Assertion:
        """The answer matches ``pattern`` somewhere.

        ``pattern`` is a PCRE-style delimited pattern with modifiers, as in the original
        (``'/9(:00)?\\s*(am|–|-)/i'``), when it starts with one of ``/ # ~ ! @ % | + , ; :`` and
        that character closes it; anything else (``[0-9]``, ``(a|b)c``) is a plain Python regex.
        """
        return cls("regex", pattern, name)

    @classmethod
    def json_schema(cls, schema: str | Mapping[str, Any], *, name: str | None = None) -> Assertion:
        """The answer parses as JSON and validates against ``schema`` (a JSON string or a dict)."""
        return cls("json_schema", schema, name)

    @classmethod
    def contains_any(cls, values: Iterable[str], *, name: str | None = None) -> Assertion:
        """At least one of ``values`` occurs in the answer, ignoring case."""
        return cls("contains_any", _tuple(values), name)

    @classmethod
    def contains_none(cls, values: Iterable[str], *, name: str | None = None) -> Assertion:
        """None of ``values`` (known wrong answers) occurs in the answer, ignoring case."""
        return cls("contains_none", _tuple(values), name)

    @classmethod
    def max_words(cls, limit: int, *, name: str | None = None) -> Assertion:
        """The answer has at most ``limit`` whitespace-separated words."""
        return cls("max_words", limit, name)

    @classmethod
    def refusal(cls, *, name: str | None = None) -> Assertion:
        """The answer says it abstained (``Answer.abstained`` is true)."""
        return cls("refusal", None, name)

    @classmethod
    def cites_any(cls, source_ids: Iterable[str], *, name: str | None = None) -> Assertion:
        """One of the answer's citations names one of ``source_ids``."""
        return cls("cites_any", _tuple(source_ids), name)

    @classmethod
    def citations_resolve(cls, *, name: str | None = None) -> Assertion:
        """The answer cites at least one source, and every citation resolves to a passage sent
        with the prompt (``Answer.passages``): by source id, else by the text it quotes from a
        passage that names no source. A failure names the citations that do not resolve."""
        return cls("citations_resolve", None, name)


@attrs.frozen
class GoldenPrompt:
    """A prompt with the assertions its answer must satisfy and, optionally, an ideal answer.

    ``reference`` is the ideal answer's text, or a whole :class:`~evalkit.Answer` when the ideal
    answer also abstains or cites sources (RAG sets).
    """

    id: str
    prompt: str
    assertions: tuple[Assertion, ...] = attrs.field(default=(), converter=_tuple)
    reference: str | Answer | None = None
    system_prompt: str | None = None
    tags: tuple[str, ...] = attrs.field(default=(), converter=_tuple)

    @property
    def reference_text(self) -> str | None:
        """The reference answer's text, whatever form it was declared in."""
        if self.reference is None or isinstance(self.reference, str):
            return self.reference
        return self.reference.text


@attrs.frozen
class GoldenPromptSet:
    """A named, versioned collection of golden prompts shipped by a package.

    The identifier is namespaced (``package.set``) so sets of different packages never collide.
    Construction never raises for content problems; :func:`evalkit.validate_prompt_set` lists
    them all at once, naming the set, the prompt and the field.
    """

    identifier: str
    name: str
    description: str = ""
    prompts: tuple[GoldenPrompt, ...] = attrs.field(default=(), converter=_tuple)
    version: str | None = None
