"""Assertion kinds: how each kind is validated in a set and evaluated against an answer.

Each kind turns one :class:`~evalkit.prompts.Assertion` into one named :class:`~evalkit.grading.Check`.
Plugins add kinds through the ``evalkit_assertion_kinds`` hook by returning :class:`AssertionKind`
objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs

from .answers import Answer, Citation, Passage
from .errors import PLUGIN_FAILURES, carried
from .grading import Check
from .jsonparse import parse_json
from .prompts import Assertion
from .shapes import exception_text, value_fault

__all__ = [
    "AssertionKind", "BUILTIN_KINDS", "TOOL_KINDS", "evaluate", "parse_json_answer", "load_schema", "json_schema_problems",
    "schema_matches",
]

#: PHP's trim set, which the original's ``exact`` uses (Python's strip() removes more).
TRIM_CHARS = " \t\n\r\0\x0b"

Evaluator = Callable[[Any, Answer], "bool | Check"]
Validator = Callable[[Any], Iterable[str]]


@attrs.frozen
class AssertionKind:
    """An assertion kind: its name, how to check its value in a set, how to evaluate it.

    ``evaluate(value, answer)`` returns ``True``/``False`` or a full :class:`Check` (to attach a
    detail or an error); ``validate(value)`` yields problems with the value, each a short phrase.
    """

    name: str
    evaluate: Evaluator
    validate: Validator = lambda value: ()


def _summary(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.strip(TRIM_CHARS)
    return text if len(text) <= 40 else text[:37] + "..."


def _non_empty_string(value: Any) -> Iterable[str]:
    if not isinstance(value, str) or value == "":
        yield "must be a non-empty string"


def _string_list(value: Any) -> Iterable[str]:
    if not isinstance(value, (tuple, list)) or not value:
        yield "must be a non-empty list of strings"
    elif not all(isinstance(v, str) and v for v in value):
        yield "every entry must be a non-empty string"


def _exact(value: str, answer: Answer) -> bool:
    return answer.text.strip(TRIM_CHARS) == value.strip(TRIM_CHARS)


def _contains(value: str, answer: Answer) -> bool:
    return value in answer.text


def _validate_regex(value: Any) -> Iterable[str]:
    yield from _non_empty_string(value)
    if isinstance(value, str) and value:
        from .pcre import PatternError, compile_pattern  # the regex module, only for sets that use it

        try:
            compile_pattern(value)
        except PatternError as exc:
            yield str(exc)


def _regex(value: str, answer: Answer) -> bool | Check:
    from .pcre import MATCH_TIMEOUT_S, compile_pattern

    try:
        return compile_pattern(value).search(answer.text, timeout=MATCH_TIMEOUT_S) is not None
    except TimeoutError:
        return Check(
            "", False, error=f"pattern timed out: regex {_summary(value)} did not finish in time ({MATCH_TIMEOUT_S:g} s)"
        )


_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(.*)\n```\Z", re.DOTALL)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_answer(text: str) -> Any:
    """Parse an answer as JSON; a single fenced code block around the JSON is accepted.

    ``NaN``/``Infinity`` literals are rejected, as strict JSON parsers do.
    """
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    return parse_json(stripped, parse_constant=_reject_constant)


def load_schema(value: Any) -> Any:
    """The schema as a Python object (parsed when given as a JSON string, through
    :func:`~evalkit.jsonparse.parse_json`: text nested too deeply or a number of too many digits is
    a ``JSONDecodeError`` naming where, as for every JSON text evalkit reads)."""
    if isinstance(value, str):
        return parse_json(value)
    return value


def _schema_validator(schema: Any) -> Any:
    from jsonschema.validators import validator_for
    from referencing import Registry

    from .schema_patterns import validator_class

    def refuse(uri: str) -> Any:
        raise LookupError(f"remote $ref {uri!r} is not retrieved")

    cls = validator_class(validator_for(schema))
    return cls(schema, registry=Registry(retrieve=refuse))


def json_schema_problems(value: Any) -> list[str]:
    """What makes ``value`` no usable JSON Schema (empty when it is one): not JSON, not an object
    or a boolean, not valid against its dialect's metaschema, or holding a ``$ref`` that cannot be
    resolved locally (remote references are never retrieved)."""
    return list(_validate_json_schema(value))


def schema_matches(schema: Any, data: Any) -> str | None:
    """``None`` when ``data`` validates against the JSON Schema ``schema`` (a checked one: see
    :func:`json_schema_problems`), else the first error as a detail; its regexes are bounded as
    the ``json_schema`` check's are."""
    try:
        return _bounded_schema_error(schema, data)
    except TimeoutError:
        return _schema_timed_out()


def _bounded_schema_error(schema: Any, data: Any) -> str | None:
    """:func:`_first_schema_error` within :data:`SCHEMA_PATTERN_TIMEOUT_S` for the schema's
    regexes; ``TimeoutError`` past it."""
    from .schema_patterns import patterns_within

    key = schema if isinstance(schema, str) else json.dumps(schema, sort_keys=True)
    with patterns_within(SCHEMA_PATTERN_TIMEOUT_S):
        return _first_schema_error(key, schema, data)


def _schema_timed_out() -> str:
    return f"pattern timed out: the schema's regexes took over {SCHEMA_PATTERN_TIMEOUT_S:g} s"


def _validate_json_schema(value: Any) -> Iterable[str]:
    try:
        schema = load_schema(value)
    except (TypeError, ValueError) as exc:
        yield f"is not valid JSON: {exc}"
        return
    fault = value_fault(schema)  # before anything walks it recursively, as check_schema does
    if fault is not None:
        yield f"is {'not JSON' if fault.number else 'no JSON Schema evalkit can check'}: it {fault.phrase()}"
        return
    try:  # a schema is JSON: a bytes or set value would fail every answer's check
        json.dumps(schema)  # NaN and loops were refused above (value_fault)
    except TypeError as exc:
        yield f"is not JSON: {exc}"
        return
    if not isinstance(schema, (Mapping, bool)):
        yield "must be a JSON object (or a boolean schema)"
        return
    from jsonschema.exceptions import SchemaError

    from .schema_patterns import check_schema

    try:
        check_schema(schema)
    except SchemaError as exc:
        yield f"is not a valid JSON Schema: {exc.message}"
        return
    unresolvable = _unresolvable_refs(schema)
    for ref in unresolvable:
        yield f"holds a $ref that cannot be resolved: {_summary(ref)!r} (remote references are never retrieved)"
    if unresolvable:
        return
    for ref in _looping_refs(schema):
        yield (
            f"holds a $ref that leads back to the schema it is in without going into the answer: {_summary(ref)!r} "
            "(checking any answer would never end)"
        )


def _unresolvable_refs(schema: Any) -> list[str]:
    """Every ``$ref`` of ``schema`` that points nowhere (or outside the schema), in schema order.

    The walk follows the schema's own dialect (``$schema``, default 2020-12), so a ``$ref`` inside
    ``const`` or ``enum`` data is not mistaken for a reference.
    """
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable, Unretrievable
    from referencing.jsonschema import DRAFT202012

    def refuse(uri: str) -> Any:
        raise LookupError(uri)

    try:
        root = Resource.from_contents(schema, default_specification=DRAFT202012)
    except Exception:  # an unknown $schema dialect: check_schema has already said what it can
        return []
    bad: list[str] = []

    def walk(resource: Any, resolver: Any) -> None:
        contents = resource.contents
        ref = contents.get("$ref") if isinstance(contents, Mapping) else None
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except (Unresolvable, Unretrievable, LookupError, ValueError):
                bad.append(ref)
        for sub in resource.subresources():
            walk(sub, resolver.in_subresource(sub))

    try:
        walk(root, Registry(retrieve=refuse).resolver_with_root(root))
    except RecursionError:
        bad.append("(the schema is nested too deeply to check)")
    return bad


#: Keywords that apply their schemas to the very value their own schema is applied to (not to a
#: part of it): a cycle through them and references never ends.
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONES = ("not", "if", "then", "else")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def _looping_refs(schema: Any) -> list[str]:
    """Every ``$ref`` (or ``$dynamicRef``, ``$recursiveRef``) through which ``schema`` applies a
    schema to the value that schema is already being applied to, so validating any value would
    recurse without end (``{"$ref": "#"}``, two ``$defs`` referring to each other through
    ``allOf``); in schema order, each once. A reference inside ``properties``, ``items`` and the
    like goes into the answer, one level a turn, and ends with it (a tree's ``children``).

    The graph of in-place applications (``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``,
    ``then``, ``else``, ``dependentSchemas``, references) is searched for a cycle from every
    subschema, without recursion (a chain of 10,000 ``$defs`` is no stack)."""
    from referencing import Registry
    from referencing.exceptions import Unresolvable, Unretrievable
    from referencing.jsonschema import DRAFT202012, specification_with

    def refuse(uri: str) -> Any:
        raise LookupError(uri)

    dialect = schema.get("$schema") if isinstance(schema, Mapping) else None
    try:
        specification = specification_with(dialect, default=DRAFT202012) if isinstance(dialect, str) else DRAFT202012
    except Exception:  # an unknown $schema dialect: check_schema has already said what it can
        return []
    root = specification.create_resource(schema)

    def applied_here(contents: Mapping[str, Any], resolver: Any) -> Iterator[tuple[Any, Any, str | None]]:
        """The schemas applied to the same value as ``contents``, with their resolvers and the
        reference each was reached through (``None`` for a subschema written in place)."""
        written: list[Any] = []
        for key in _IN_PLACE_LISTS:
            if isinstance(contents.get(key), list):
                written += contents[key]
        written += [contents[key] for key in _IN_PLACE_ONES if key in contents]
        for key in _IN_PLACE_MAPS:
            if isinstance(contents.get(key), Mapping):
                written += contents[key].values()
        for sub in written:
            if isinstance(sub, Mapping):
                yield sub, resolver.in_subresource(specification.create_resource(sub)), None
        for key in _REFERENCES:
            ref = contents.get(key)
            if isinstance(ref, str):
                try:
                    resolved = resolver.lookup(ref)
                except (Unresolvable, Unretrievable, LookupError, ValueError):
                    continue
                yield resolved.contents, resolved.resolver, ref

    everywhere: list[tuple[Any, Any]] = []
    pending = [(root, Registry(retrieve=refuse).resolver_with_root(root))]
    while pending:
        resource, resolver = pending.pop()
        everywhere.append((resource.contents, resolver))
        pending.extend((sub, resolver.in_subresource(sub)) for sub in resource.subresources())
    state: dict[int, bool] = {}  # id(contents): True while on the path searched, False once done
    loops: list[str] = []
    for start, resolver in reversed(everywhere):  # schema order
        if not isinstance(start, Mapping) or id(start) in state:
            continue
        state[id(start)] = True
        path: list[tuple[Any, Iterator[tuple[Any, Any, str | None]], str | None]] = [(start, applied_here(start, resolver), None)]
        while path:
            contents, onward, _ = path[-1]
            step = next(onward, None)
            if step is None:
                state[id(contents)] = False
                path.pop()
                continue
            sub, sub_resolver, ref = step
            if not isinstance(sub, Mapping):
                continue
            if state.get(id(sub)) is True:  # back on the path: a cycle, closed by this reference or one before
                closing = ref or next((entered for _, _, entered in reversed(path) if entered), None)
                if closing is not None and closing not in loops:
                    loops.append(closing)
            elif id(sub) not in state:
                state[id(sub)] = True
                path.append((sub, applied_here(sub, sub_resolver), ref))
    return loops


#: How long the regexes of a schema (``pattern``, ``patternProperties``) may take validating one
#: answer, in seconds from the validation's start, each match using what is left as processor time
#: (:func:`evalkit.schema_patterns.patterns_within`): ``(a|aa)+$`` backtracks for ever on some answers.
SCHEMA_PATTERN_TIMEOUT_S = 2.0

_validators: dict[str, Any] = {}


def _first_schema_error(key: str, value: Any, data: Any) -> str | None:
    """The first validation error of ``data`` against the schema ``value``, as a detail (``None``: valid)."""
    validator = _validators.get(key)
    if validator is None:
        validator = _validators[key] = _schema_validator(load_schema(value))
    error = next(iter(validator.iter_errors(data)), None)
    if error is None:
        return None
    path = "$" + "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{error.message} at {path}"


def _json_schema(value: Any, answer: Answer) -> bool | Check:
    try:
        data = parse_json_answer(answer.text)
    except ValueError as exc:
        return Check("", False, detail=f"answer is not JSON: {exc}")
    try:
        problem = _bounded_schema_error(value, data)
    except TimeoutError:
        return Check(
            "", False,
            error=f"pattern timed out: validating the answer against the schema's regexes took over "
            f"{SCHEMA_PATTERN_TIMEOUT_S:g} s",
        )
    return True if problem is None else Check("", False, detail=problem)


def _lowered(values: Iterable[str]) -> list[str]:
    return [v.casefold() for v in values]


def _contains_any(values: tuple[str, ...], answer: Answer) -> bool:
    text = answer.text.casefold()
    return any(v in text for v in _lowered(values))


def _contains_none(values: tuple[str, ...], answer: Answer) -> bool | Check:
    text = answer.text.casefold()
    found = [v for v, low in zip(values, _lowered(values), strict=True) if low in text]
    return True if not found else Check("", False, detail=f"found {', '.join(repr(v) for v in found)}")


def _validate_max_words(value: Any) -> Iterable[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        yield "must be a positive integer"


def _max_words(limit: int, answer: Answer) -> bool | Check:
    words = len(answer.text.split())
    return True if words <= limit else Check("", False, detail=f"{words} words, limit {limit}")


def _reply_count(answer: Answer) -> int:
    return sum(1 for number in range(1, answer.reply_count + 1) if answer.reply(number) is not None)


def _takes_no_value(value: Any) -> Iterable[str]:
    if value is not None:
        yield "takes no value"


def _refusal(value: None, answer: Answer) -> bool | Check:
    if answer.abstained is None:
        return Check("", False, error="answer carries no abstention flag")
    return bool(answer.abstained)


def _cites_any(source_ids: tuple[str, ...], answer: Answer) -> bool | Check:
    if not answer.citations:
        return Check("", False, error="answer carries no citations")
    cited = {c.source_id for c in answer.citations}
    return True if cited & set(source_ids) else Check("", False, detail=f"cited {', '.join(sorted(cited))}")


def _normalised(text: str) -> str:
    return " ".join(text.split())


def _citation_label(citation: Citation) -> str:
    if citation.source_id:
        return citation.source_id
    return f'"{_summary(_normalised(citation.passage or ""))}"'


def _resolves(citation: Citation, passages: tuple[Passage, ...]) -> bool:
    """By source id; else by the quoted text, within a passage that names no source."""
    if citation.source_id and any(p.source_id == citation.source_id for p in passages):
        return True
    quote = _normalised(citation.passage or "")
    return bool(quote) and any(p.source_id is None and quote in _normalised(p.text) for p in passages)


def _citations_resolve(value: None, answer: Answer) -> bool | Check:
    if not answer.passages:
        return Check("", False, error="answer carries no passages, so its citations cannot be resolved")
    if not answer.citations:
        return Check("", False, detail="the answer cites no source")
    unresolved = list(dict.fromkeys(_citation_label(c) for c in answer.citations if not _resolves(c, answer.passages)))
    if not unresolved:
        return True
    sent = ", ".join(p.source_id or f'"{_summary(_normalised(p.text))}"' for p in answer.passages)
    return Check("", False, detail=f"unresolved {'citation' if len(unresolved) == 1 else 'citations'}: {', '.join(unresolved)} (passages sent: {sent})")


# -- tool checks: over the tool calls of the answer's transcript ---------------------------------


def _tool_name(value: Any) -> Iterable[str]:
    yield from (f"{problem} (a tool name)" for problem in _non_empty_string(value))


def _called(answer: Answer) -> list[str]:
    return [call.name for call in answer.tool_calls]


def _calls_detail(answer: Answer) -> str:
    names = _called(answer)
    return f"called {', '.join(names)}" if names else "called no tool"


def _tool_called(tool: str, answer: Answer) -> bool | Check:
    return True if tool in _called(answer) else Check("", False, detail=_calls_detail(answer))


def _tool_not_called(tool: str, answer: Answer) -> bool | Check:
    count = _called(answer).count(tool)
    return True if not count else Check("", False, detail=f"called {tool} {'once' if count == 1 else f'{count} times'}")


def _validate_tool_args(value: Any) -> Iterable[str]:
    if not isinstance(value, Mapping) or set(value) != {"name", "schema"}:
        yield "must be {name: TOOL, schema: JSON_SCHEMA}"
        return
    yield from _tool_name(value["name"])
    yield from (f"schema {problem}" for problem in _validate_json_schema(value["schema"]))


def _tool_args(value: Mapping[str, Any], answer: Answer) -> bool | Check:
    tool = value["name"]
    calls = [call for call in answer.tool_calls if call.name == tool]
    if not calls:
        return Check("", False, detail=f"{tool} was not called ({_calls_detail(answer)})")
    for number, call in enumerate(calls, start=1):
        try:
            problem = _bounded_schema_error(value["schema"], call.arguments)
        except TimeoutError:  # no verdict on the arguments: an error, as a json_schema check's
            return Check("", False, error=f"call {number} of {tool}: {_schema_timed_out()}")
        if problem is not None:
            return Check("", False, detail=f"call {number} of {tool}: {problem}")
    return True


def _validate_tool_sequence(value: Any) -> Iterable[str]:
    if not isinstance(value, Mapping) or "names" not in value or not set(value) <= {"names", "strict"}:
        yield "must be {names: [TOOL, ...], strict: false}"
        return
    yield from (f"names: {problem}" for problem in _string_list(value["names"]))
    if not isinstance(value.get("strict", False), bool):
        yield "strict must be true or false"


def _tool_sequence(value: Mapping[str, Any], answer: Answer) -> bool | Check:
    wanted = list(value["names"])
    called = _called(answer)
    if value.get("strict", False):
        held = called == wanted
    else:
        remaining = iter(called)
        held = all(name in remaining for name in wanted)  # each found after the one before it
    return True if held else Check("", False, detail=f"{_calls_detail(answer)}; expected {' → '.join(wanted)}")


def _validate_max_tool_calls(value: Any) -> Iterable[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        yield "must be a whole number of zero or more"


def _max_tool_calls(limit: int, answer: Answer) -> bool | Check:
    count = len(answer.tool_calls)
    return True if count <= limit else Check("", False, detail=f"{count} tool calls, limit {limit}")


#: The kinds that look at the tool calls of an answer's transcript rather than its text.
TOOL_KINDS = ("tool_called", "tool_not_called", "tool_args", "tool_sequence", "max_tool_calls")


def _criterion(value: Any) -> Iterable[str]:
    if not isinstance(value, str) or not value.strip():
        yield "must be a criterion in words (a string that is not blank)"


def _unjudged_rubric(value: str, answer: Answer) -> Check:
    return Check(
        "", False,
        error="a rubric check is decided by a judge, and this grading has none (the deterministic grader "
        "judges rubric checks with the judge the run names or the configuration's judge)",
    )


BUILTIN_KINDS: Mapping[str, AssertionKind] = {
    kind.name: kind
    for kind in (
        AssertionKind("exact", _exact, _non_empty_string),
        AssertionKind("contains", _contains, _non_empty_string),
        AssertionKind("regex", _regex, _validate_regex),
        AssertionKind("json_schema", _json_schema, _validate_json_schema),
        AssertionKind("contains_any", _contains_any, _string_list),
        AssertionKind("contains_none", _contains_none, _string_list),
        AssertionKind("max_words", _max_words, _validate_max_words),
        AssertionKind("refusal", _refusal, _takes_no_value),
        AssertionKind("cites_any", _cites_any, _string_list),
        AssertionKind("citations_resolve", _citations_resolve, _takes_no_value),
        AssertionKind("tool_called", _tool_called, _tool_name),
        AssertionKind("tool_not_called", _tool_not_called, _tool_name),
        AssertionKind("tool_args", _tool_args, _validate_tool_args),
        AssertionKind("tool_sequence", _tool_sequence, _validate_tool_sequence),
        AssertionKind("max_tool_calls", _max_tool_calls, _validate_max_tool_calls),
        AssertionKind("rubric", _unjudged_rubric, _criterion),
    )
}


def evaluate(assertion: Assertion, answer: Answer, kinds: Mapping[str, AssertionKind]) -> Check:
    """Evaluate one assertion against an answer; a plugin kind that raises yields an errored check.

    An assertion with a ``turn`` is evaluated against that reply of the conversation
    (:meth:`~evalkit.Answer.reply`); a reply the model never gave fails the check.
    """
    name = assertion.check_name
    kind = kinds.get(assertion.kind)
    if kind is None:
        return Check(name, False, error=f"unknown assertion kind {assertion.kind!r}")
    turn = getattr(assertion, "turn", None)
    if turn is not None:
        reply = answer.reply(turn) if isinstance(turn, int) and not isinstance(turn, bool) else None
        if reply is None:
            return Check(name, False, detail=f"the model gave no reply {turn} (replies: {_reply_count(answer)})")
        answer = reply
    try:
        outcome = carried(kind.evaluate, assertion.value, answer)
    except PLUGIN_FAILURES as exc:  # a plugin's evaluator must not take the run down
        return Check(name, False, error=f"{assertion.kind} check raised {exception_text(exc, lines=True)}")
    if isinstance(outcome, Check):
        return attrs.evolve(outcome, name=name)
    detail = None if outcome else f"{assertion.kind}({_summary(assertion.value)}) did not hold"
    return Check(name, bool(outcome), detail=detail)
