"""Set versions: a fingerprint per case, so a comparison can tell a changed set from a regression.

A case's fingerprint is the SHA-256 of the canonical JSON of what its result depends on, built
through the one cattrs converter (:mod:`evalkit.convert`): keys sorted, ASCII only, no spaces.

* a golden prompt: its prompt, system prompt, assertions (kind, value, name, and the reply they
  apply to) and reference (a string or a whole :class:`~evalkit.Answer`) and, for a conversation,
  its turns, mode, tools, canned tool results and ``max_steps`` — not its tags, not the set's name
  or description (a prompt without conversation fields has the fingerprint it had before they
  existed);
* a golden question: its question text, expected document ids (order ignored) and form — not its
  hard class or answer gist, which label the question without changing its score.

Each stored case carries the fingerprint of the prompt or question it answered
(``CaseResult.fingerprint``), and its run says that it keeps them (``Run.fingerprints_kept``).
Two runs' cases then split into *unchanged* (in both, same fingerprint), *edited* (in both,
fingerprints differ), *added* (only in the newer run) and *removed* (only in the older one).
A run stored before fingerprints were kept has none: every case of it present in both runs counts
as unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .conversations import ConversationMode
from .convert import unstructure
from .jsontext import scalar_texts
from .prompts import Assertion, GoldenPrompt, GoldenPromptSet

if TYPE_CHECKING:  # imported where used: a prompt run never needs the question types (~3 ms)
    from .questions import GoldenQuestion, GoldenQuestionSet

__all__ = [
    "CaseSplit",
    "case_fingerprint",
    "case_fingerprints",
    "prompt_digest",
    "question_fingerprint",
    "set_version_fingerprint",
    "split_cases",
]


#: The canonical JSON text a fingerprint hashes (one encoder for every case).
_canonical_json = json.JSONEncoder(sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str).encode


def _digest(document: Any) -> str:
    canonical = _canonical_json(document)
    return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


#: What a golden prompt's fingerprint covers (not its id or tags).
_PROMPT_CASE_FIELDS = ("prompt", "system_prompt", "assertions", "reference")
#: What it also covers when a conversation holds them (left out of the converter's data at their defaults).
_CONVERSATION_FIELDS = ("messages", "mode", "tools", "tool_results", "max_steps", "tool_choice")


def prompt_digest(prompt: GoldenPrompt) -> str:
    """The digest of what the model is asked for a prompt: its prompt and system prompt, and
    nothing of its checks or reference (an answer to it answers the same question however it is
    graded: what a re-grade and ``--answers-from`` compare)."""
    texts = scalar_texts((prompt.prompt, prompt.system_prompt), ascii=True)
    if texts is not None:  # the canonical JSON written directly: the same text, without an encoder per call
        return "sha256:" + hashlib.sha256(f'["prompt-request-v1",{texts[0]},{texts[1]}]'.encode("ascii")).hexdigest()
    return _digest(["prompt-request-v1", prompt.prompt, prompt.system_prompt])


def case_fingerprint(prompt: GoldenPrompt) -> str:
    """The fingerprint of a golden prompt: prompt, system prompt, assertions and reference."""
    canonical = _plain_prompt_case_json(prompt)
    if canonical is not None:
        return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()
    # The prompt's own generated unstructure function, then its fields picked: the same data as
    # unstructuring a dict of them, without cattrs dispatching on every value's type.
    data = unstructure(prompt)
    return _digest(["prompt-case-v1", {name: data[name] for name in (*_PROMPT_CASE_FIELDS, *_CONVERSATION_FIELDS) if name in data}])


def plain_assertion_texts(prompt: GoldenPrompt, *, ascii: bool) -> list[list[str]] | None:
    """The JSON texts (:func:`~evalkit.jsontext.scalar_text`) of the kind, value and name of each
    assertion of a plain prompt — exactly a :class:`GoldenPrompt`, whose assertions are exactly
    :class:`Assertion` objects holding plain scalars —; ``None`` for any other prompt (its JSON is
    the converter's to write). What the fingerprint and the set digest write directly."""
    if type(prompt) is not GoldenPrompt or prompt.is_chat or prompt.tool_results or prompt.max_steps is not None or prompt.tool_choice is not None:
        return None
    if prompt.mode is not ConversationMode.FIXED:
        return None
    texts = []
    for assertion in prompt.assertions:
        if type(assertion) is not Assertion or assertion.turn is not None:
            return None
        kind_value_name = scalar_texts((assertion.kind, assertion.value, assertion.name), ascii=ascii)
        if kind_value_name is None:
            return None
        texts.append(kind_value_name)
    return texts


def _plain_prompt_case_json(prompt: GoldenPrompt) -> str | None:
    """The canonical JSON :func:`case_fingerprint` hashes, written directly for the usual prompt
    (every field and assertion value a plain scalar, the reference a string or nothing); ``None``
    for any other, which goes through the converter. Both give the same text (tests pin it)."""
    assertions = plain_assertion_texts(prompt, ascii=True)
    if assertions is None:
        return None
    fields = scalar_texts((prompt.prompt, prompt.reference, prompt.system_prompt), ascii=True)
    if fields is None:
        return None
    text, reference, system = fields
    written = ",".join([f'{{"kind":{kind},"name":{name},"value":{value}}}' for kind, value, name in assertions])
    return f'["prompt-case-v1",{{"assertions":[{written}],"prompt":{text},"reference":{reference},"system_prompt":{system}}}]'


def question_fingerprint(question: GoldenQuestion) -> str:
    """The fingerprint of a golden question: its text, expected ids (in any order) and form."""
    expected = sorted(
        (unstructure(e) for e in question.expected_document_ids), key=lambda e: json.dumps(e, sort_keys=True, default=str)
    )
    return _digest(["question-case-v1", {"question": question.question, "expected": expected, "form": question.form.value}])


def case_fingerprints(golden_set: GoldenPromptSet | GoldenQuestionSet) -> dict[str, str]:
    """``{case id: fingerprint}`` of every prompt (or question) of the set, in set order (a run does
    not build it: each case is stored with its own fingerprint)."""
    from .questions import GoldenQuestionSet

    if isinstance(golden_set, GoldenQuestionSet):
        return {q.id: question_fingerprint(q) for q in golden_set.questions}
    return {p.id: case_fingerprint(p) for p in golden_set.prompts}


def set_version_fingerprint(fingerprints: Mapping[str, str]) -> str:
    """One fingerprint of a set version: its case ids with their fingerprints, order ignored."""
    return _digest(["set-version-v1", sorted(fingerprints.items())])


@attrs.frozen
class CaseSplit:
    """The cases of two runs of one set, by what happened to them between the runs (ids in the
    newer run's order, removed ones in the older run's). ``fingerprints_known`` is false when
    either run was stored without fingerprints (then nothing counts as edited)."""

    unchanged: tuple[str, ...]
    edited: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    fingerprints_known: bool

    @property
    def set_changed(self) -> bool:
        """True when a case was edited, added or removed."""
        return bool(self.edited or self.added or self.removed)


def split_cases(
    baseline_ids: Iterable[str],
    current_ids: Iterable[str],
    baseline_fingerprints: Mapping[str, str] | None,
    current_fingerprints: Mapping[str, str] | None,
) -> CaseSplit:
    """Split two runs' case ids into unchanged, edited, added and removed.

    A case whose fingerprint is missing on either side (a run stored before fingerprints, or a
    case id the stored map lacks) counts as unchanged when it is in both runs.
    """
    before = list(dict.fromkeys(baseline_ids))
    after = list(dict.fromkeys(current_ids))
    known_before = set(before)
    known_after = set(after)
    old = baseline_fingerprints or {}
    new = current_fingerprints or {}
    unchanged: list[str] = []
    edited: list[str] = []
    for case_id in after:
        if case_id not in known_before:
            continue
        a, b = old.get(case_id), new.get(case_id)
        (edited if a is not None and b is not None and a != b else unchanged).append(case_id)
    return CaseSplit(
        unchanged=tuple(unchanged),
        edited=tuple(edited),
        added=tuple(c for c in after if c not in known_before),
        removed=tuple(c for c in before if c not in known_after),
        fingerprints_known=baseline_fingerprints is not None and current_fingerprints is not None,
    )
