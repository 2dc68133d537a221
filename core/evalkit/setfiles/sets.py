"""Turning a schema-valid document into golden sets, checking the kernel's rules with file positions.

The schema catches shapes and types; the rules it cannot express (a regex that does not compile,
a JSON Schema that is not one, repeated ids, an unknown plugin assertion kind, a prompt with
neither assertions nor a reference) are checked here with the kernel's own assertion-kind
validators, so each problem still points at its line and JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from ..answers import Answer
from ..checks import AssertionKind
from ..printable import has_visible_text
from ..prompts import Assertion, GoldenPrompt, GoldenPromptSet
from ..questions import GoldenQuestion, GoldenQuestionSet
from ..shapes import exception_text, value_fault
from ..wording import listed
from .conversations import conversation_problems
from .documents import SetDocument
from .problems import FileProblem, JsonPath, lone_surrogate_problem, quoted

__all__ = [
    "FlaggedPaths",
    "build_sets",
    "golden_prompt",
    "kernel_problems",
    "near",
    "rule_problems",
    "set_entries",
    "skipped_prompts",
]

#: Keys of an assertion object that are not its kind.
_NOT_KINDS = ("name", "kind", "value", "turn")
#: Kinds that take no value: a file writes ``refusal: true``.
_FLAG_KINDS = ("refusal", "citations_resolve")


def set_entries(data: Any) -> Iterator[tuple[JsonPath, Any]]:
    """Each set object in a document with its path: the document itself, or ``sets[i]``."""
    if isinstance(data, dict) and isinstance(data.get("sets"), list):
        for index, item in enumerate(data["sets"]):
            yield ("sets", index), item
    else:
        yield (), data


@attrs.frozen
class FlaggedPaths:
    """The paths the schema already reported in a document, asked about in steps of a path's
    length, never of their number: :func:`near` was a scan of every flagged path, made for each
    prompt and assertion, so a JSONL file of 8,000 prompts without a ``prompt`` took 10 s to
    validate and one of 200,000 did not finish in 10 minutes."""

    paths: frozenset[JsonPath] = frozenset()
    #: Every path leading to a flagged one (each flagged path and its ancestors).
    around: frozenset[JsonPath] = frozenset()

    @classmethod
    def of(cls, paths: Iterable[JsonPath]) -> FlaggedPaths:
        """The flagged ``paths`` (the ``path`` of each problem the schema found)."""
        flagged = frozenset(paths)
        return cls(flagged, frozenset(path[:length] for path in flagged for length in range(len(path) + 1)))

    def __contains__(self, path: object) -> bool:
        return path in self.paths


def near(path: JsonPath, flagged: FlaggedPaths) -> bool:
    """True when the schema already reported ``path``, one of its ancestors or descendants."""
    return path in flagged.around or any(path[:length] in flagged.paths for length in range(len(path)))


def rule_problems(
    document: SetDocument, kind: str, kinds: Mapping[str, AssertionKind], flagged: FlaggedPaths
) -> list[FileProblem]:
    """The kernel's rules the schema cannot express, checked on whatever parts are well-formed.

    Parts the schema already reported (``flagged`` paths) are skipped, so one mistake is reported once.
    """
    member_key = {"question-set": "questions", "calibration-set": "items"}.get(kind, "prompts")
    problems: list[FileProblem] = []
    for where, entry in set_entries(document.data):
        members = entry.get(member_key) if isinstance(entry, dict) else None
        if not isinstance(members, list):
            continue
        problems.extend(_repeated_ids(document, where, member_key, members, flagged))
        if kind == "calibration-set":
            problems.extend(_calibration_item_problems(document, where, entry, members, flagged))
        if kind != "golden-set":
            continue
        for index, raw in enumerate(members):
            at = where + ("prompts", index)
            if not isinstance(raw, dict) or at in flagged:
                continue
            assertions = raw.get("assertions", [])
            if isinstance(assertions, list):
                for number, raw_assertion in enumerate(assertions):
                    path = at + ("assertions", number)
                    if isinstance(raw_assertion, dict) and not near(path, flagged):
                        problems.extend(_assertion_problems(document, path, raw_assertion, kinds))
            problems.extend(_tag_problems(document, at, raw.get("tags"), flagged))
            problems.extend(_lone_surrogates(document, at, raw, flagged))
            reference = raw.get("reference")
            reference_text = reference.get("text") if isinstance(reference, dict) else reference
            if not assertions and not reference_text and not near(at + ("assertions",), flagged):
                problems.append(document.problem(at, "has no assertions and no reference; declare at least one"))
            if not near(at, flagged):
                problems.extend(conversation_problems(document, at, raw, golden_prompt))
    return problems


def _tag_problems(document: SetDocument, at: JsonPath, tags: Any, flagged: FlaggedPaths) -> Iterator[FileProblem]:
    """Each tag holding a control or invisible character (the kernel's tag rule,
    :func:`evalkit.identity.hidden_problem`), placed at the tag's line."""
    from ..identity import hidden_problem

    if not isinstance(tags, list) or near(at + ("tags",), flagged):
        return
    for index, tag in enumerate(tags):
        if isinstance(tag, str) and (hidden := hidden_problem(tag)) is not None:
            yield document.problem(at + ("tags", index), hidden)


#: The fields of a prompt written in a set file whose text is sent to an endpoint (a ``template``
#: is its prompt, a conversation's turns their ``content``): the kernel's rule on lone surrogates.
SENT_FIELDS = ("prompt", "template", "system_prompt")


def _lone_surrogates(document: SetDocument, at: JsonPath, raw: dict[str, Any], flagged: FlaggedPaths) -> Iterator[FileProblem]:
    """Each text a prompt sends holding a lone surrogate (a JSON ``"\\ud800"`` escape without its
    pair: :func:`~evalkit.setfiles.problems.lone_surrogate_problem`), placed at the line that holds
    it and said once. Left to the kernel's net, it was told at the set's line 1:1, and a template's
    once for every row of its table."""
    sent: list[tuple[JsonPath, Any]] = [(at + (field,), raw.get(field)) for field in SENT_FIELDS]
    messages = raw.get("messages")
    if isinstance(messages, list):
        sent += [(at + ("messages", n, "content"), m.get("content")) for n, m in enumerate(messages) if isinstance(m, dict)]
    rows = raw.get("vars")
    if isinstance(rows, list):  # a table written in the file: a value is put in the prompt
        sent += [(at + ("vars", n, key), value) for n, row in enumerate(rows) if isinstance(row, dict) for key, value in row.items()]
    for path, text in sent:
        if isinstance(text, str) and not near(path, flagged) and (problem := lone_surrogate_problem(text)) is not None:
            yield document.problem(path, problem)


def _calibration_item_problems(
    document: SetDocument, where: JsonPath, entry: dict[str, Any], items: list[Any], flagged: FlaggedPaths
) -> Iterator[FileProblem]:
    """Each item's label on the declared scale, and the fields the calibrated grader's judge needs."""
    from ..calibration import CALIBRATED_GRADERS

    labels = entry.get("labels")
    grader = entry.get("grader")
    if not isinstance(labels, list) or near(where + ("labels",), flagged):
        return
    scale = {(type(label), label) for label in labels}
    for index, item in enumerate(items):
        at = where + ("items", index)
        if not isinstance(item, dict) or near(at, flagged):
            continue
        label = item.get("label")
        if "label" in item and (type(label), label) not in scale:
            shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in labels)
            yield document.problem(at + ("label",), f"{quoted(label, as_json=True)} is not on the scale [{shown}]")
        for field in CALIBRATED_GRADERS.get(grader, ()) if isinstance(grader, str) else ():
            if field not in item:
                yield document.problem(at, f"the {grader} judge needs {field}")


def _repeated_ids(
    document: SetDocument, where: JsonPath, key: str, members: list[Any], flagged: FlaggedPaths
) -> Iterator[FileProblem]:
    seen: dict[str, int] = {}
    for index, member in enumerate(members):
        member_id = member.get("id") if isinstance(member, dict) else None
        if not isinstance(member_id, str) or near(where + (key, index, "id"), flagged):
            continue
        if not has_visible_text(member_id):  # left to the kernel's net, it was told at the set's line 1:1 as "#1"
            reason = (
                f"id {quoted(member_id)} has nothing visible in it (only whitespace, control or invisible characters)"
            )
            yield document.problem(where + (key, index, "id"), reason)
        elif member_id in seen:
            yield document.problem(
                where + (key, index, "id"), f"id {quoted(member_id)} is already used by {key}[{seen[member_id]}]"
            )
        else:
            seen[member_id] = index


def _assertion_parts(raw: dict[str, Any]) -> tuple[str, Any, str]:
    """The kind, the value as the kernel takes it, and the key the value sits under."""
    if "kind" in raw:
        return raw["kind"], raw.get("value"), "value"
    kind_name = next(k for k in raw if k not in _NOT_KINDS)
    value = raw[kind_name]
    if kind_name in _FLAG_KINDS:
        value = None
    elif isinstance(value, list):
        value = tuple(value)
    return kind_name, value, kind_name


def _assertion_problems(
    document: SetDocument, at: JsonPath, raw: dict[str, Any], kinds: Mapping[str, AssertionKind]
) -> list[FileProblem]:
    kind_name, value, key = _assertion_parts(raw)
    if (fault := value_fault(value)) is not None:  # the kernel's rule, placed at the value's line
        return [document.problem(at + (key, *fault.path), fault.sentence())]
    if kind_name not in kinds:
        known = listed(sorted(kinds))
        return [document.problem(at + ("kind",), f"unknown assertion kind {quoted(kind_name)}; known kinds: {known}")]
    try:
        issues = list(kinds[kind_name].validate(value))
    except Exception as exc:  # a plugin's validator must not hide the other problems
        issues = [f"validator raised {exception_text(exc)}"]
    return [document.problem(at + (key,), issue) for issue in issues]


def _reference(raw: Any) -> str | Answer | None:
    if raw is None or isinstance(raw, str):
        return raw
    return Answer(
        text=raw["text"],
        abstained=raw.get("abstained"),
        citations=raw.get("citations", ()),
        passages=raw.get("passages", ()),
    )


def build_sets(
    document: SetDocument, kind: str, expansions: Mapping[JsonPath, list[dict[str, Any]]] | None = None
) -> list[tuple[JsonPath, Any]]:
    """The sets a document that passed the schema and the rules declares, each with its path;
    each template entry is replaced by the prompts it expands into (``expansions``, by its path;
    see :mod:`.templates`)."""
    if kind == "question-set":
        return [(where, _question_set(entry)) for where, entry in set_entries(document.data)]
    if kind == "calibration-set":
        return [(where, _calibration_set(entry)) for where, entry in set_entries(document.data)]
    return [(where, _prompt_set(entry, where, expansions or {})) for where, entry in set_entries(document.data)]


def _prompt_objects(
    entry: dict[str, Any], where: JsonPath, expansions: Mapping[JsonPath, list[dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """The set's prompt objects to run, in order: each template entry replaced by its expansion,
    skipped prompts left out."""
    for index, raw in enumerate(entry["prompts"]):
        if "template" in raw:
            yield from expansions[where + ("prompts", index)]
        elif "skip" not in raw:
            yield raw


def skipped_prompts(document: SetDocument) -> Iterator[tuple[JsonPath, str, str]]:
    """``(path, id, reason)`` of every prompt of the document marked ``skip``."""
    for where, entry in set_entries(document.data):
        for index, raw in enumerate(entry.get("prompts", ())):
            if "skip" in raw:
                yield where + ("prompts", index), raw["id"], raw["skip"]


def golden_prompt(raw: dict[str, Any]) -> GoldenPrompt:
    """The golden prompt a schema-valid prompt object declares (a conversation's turns, tools and
    canned results as the kernel's types)."""
    return GoldenPrompt(
        id=raw["id"],
        prompt=raw.get("prompt", ""),
        assertions=[
            Assertion(*_assertion_parts(a)[:2], a.get("name"), a.get("turn")) for a in raw.get("assertions", ())
        ],
        reference=_reference(raw.get("reference")),
        system_prompt=raw.get("system_prompt"),
        tags=raw.get("tags", ()),
        messages=raw.get("messages", ()),
        mode=raw.get("mode", "fixed"),
        tools=raw.get("tools", ()),
        tool_results=raw.get("tool_results", ()),
        max_steps=raw.get("max_steps"),
        tool_choice=raw.get("tool_choice"),
    )


def _prompt_set(
    entry: dict[str, Any], where: JsonPath, expansions: Mapping[JsonPath, list[dict[str, Any]]]
) -> GoldenPromptSet:
    prompts = [golden_prompt(raw) for raw in _prompt_objects(entry, where, expansions)]
    return GoldenPromptSet(
        identifier=entry["identifier"],
        name=entry["name"],
        description=entry.get("description", ""),
        prompts=prompts,
        version=entry.get("version"),
    )


def _question_set(entry: dict[str, Any]) -> GoldenQuestionSet:
    return GoldenQuestionSet(
        identifier=entry["identifier"],
        name=entry["name"],
        description=entry.get("description", ""),
        questions=[
            GoldenQuestion(
                id=raw["id"],
                question=raw["question"],
                form=raw.get("form", "match"),
                expected_document_ids=raw.get("expected_document_ids", ()),
                hard_class=raw.get("hard_class"),
                answer_gist=raw.get("answer_gist"),
            )
            for raw in entry["questions"]
        ],
    )


def _calibration_set(entry: dict[str, Any]) -> Any:
    from ..calibration import CalibrationItem, CalibrationSet

    fields = ("prompt", "answer", "reference", "context", "criterion", "query", "document")
    return CalibrationSet(
        identifier=entry["identifier"],
        name=entry["name"],
        grader=entry["grader"],
        labels=entry["labels"],
        items=[
            CalibrationItem(raw["id"], raw["label"], **{f: raw[f] for f in fields if f in raw})
            for raw in entry["items"]
        ],
        description=entry.get("description", ""),
    )


def kernel_problems(
    document: SetDocument, built: list[tuple[JsonPath, Any]], kinds: Mapping[str, AssertionKind]
) -> list[FileProblem]:
    """The kernel's own validation of each built set (a safety net: the checks above cover its rules)."""
    from ..calibration import CalibrationSet, calibration_set_problems
    from ..retrieval.validation import question_set_problems
    from ..validation import prompt_set_problems

    problems = []
    for where, item in built:
        if isinstance(item, CalibrationSet):
            rules = calibration_set_problems(item)
        elif isinstance(item, GoldenQuestionSet):
            rules = question_set_problems(item)
        else:
            rules = prompt_set_problems(item, kinds)
        problems.extend(document.problem(where, rule) for rule in rules)
    return problems
