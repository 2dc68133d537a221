"""Every assertion kind and its edges, through the deterministic grader's evaluation."""

from __future__ import annotations

import threading

import pytest
from evalkit import Answer, Assertion, Citation
from evalkit.checks import BUILTIN_KINDS, evaluate, parse_json_answer
from evalkit.conversations import Message, ToolCall


def check(assertion: Assertion, text: str = "", **answer: object):
    return evaluate(assertion, Answer(text=text, **answer), BUILTIN_KINDS)


@pytest.mark.parametrize(
    ("text", "held"),
    [("  Paris  ", True), ("Paris\n", True), ("\tParis\r\n", True), ("London", False), ("paris", False), ("", False),
     # the original's trim set: form feed and no-break space are content, not padding
     ("\fParis", False), ("\u00a0Paris", False)],
)
def test_exact_trims_only_the_php_trim_set(text: str, held: bool) -> None:
    assert check(Assertion.exact("Paris"), text).passed is held


def test_exact_compares_unicode_code_points() -> None:
    assert check(Assertion.exact("Zürich"), " Zürich ").passed
    assert not check(Assertion.exact("Zürich"), "Zu\u0308rich").passed  # decomposed form differs


def test_contains_is_a_case_sensitive_substring() -> None:
    assert check(Assertion.contains("Monday"), "Open Monday to Friday").passed
    assert not check(Assertion.contains("Monday"), "open monday").passed
    assert not check(Assertion.contains("Monday"), "").passed


@pytest.mark.parametrize(
    ("pattern", "text", "held"),
    [
        (r"/\b4\b/", "Result: 4", True),
        (r"/\b4\b/", "Result: five", False),
        (r"/\b4\b/", "Result: 42", False),
        (r"/9(:00)?\s*(am|–|-)/i", "Monday to Friday, 9AM to 5PM", True),
        (r"/9(:00)?\s*(am|–|-)/i", "Weekdays 9–17", True),
        (r"/9(:00)?\s*(am|–|-)/i", "Weekdays from 10", False),
        (r"#^ok$#m", "first\nok\nlast", True),
        (r"{^a.b$}s", "a\nb", False),  # paired brackets are not delimiters: a plain regex
        (r"/^\w+$/", "café", False),  # without u, \w is ASCII as in PCRE
        (r"/^\w+$/u", "café", True),
        (r"\d{3}", "call 555 now", True),  # no delimiters: a plain Python regex
        (r"/abc/A", "xabc", False),
        (r"/abc/A", "abcx", True),
    ],
)
def test_regex_is_a_search_with_pcre_delimiters_and_modifiers(pattern: str, text: str, held: bool) -> None:
    assert check(Assertion.regex(pattern), text).passed is held


#: A pattern that backtracks for ever on "a" * 40 + "b" (the regex module answers (a+)+$ at once).
RUNAWAY = r"/(a|a)+$/"


def test_catastrophic_regex_is_bounded_and_recorded_as_errored() -> None:
    # The limit counts processor time, so the wall clock is no measure of it on a busy machine:
    # the message is the proof that the match was stopped rather than finished.
    result = check(Assertion.regex(RUNAWAY), "a" * 40 + "b")
    assert not result.passed
    assert result.error is not None and "did not finish in time" in result.error


SCHEMA = '{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer"}}}'


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ('{"name":"Ada","age":36,"extra":true}', True),
        ('  {"name":"Ada","age":36}\n', True),
        ('```json\n{"name":"Ada","age":36}\n```', True),  # one fenced block is accepted
        ('{"age":"not-a-number","name":"Ada"}', False),
        ('{"name":"Ada"}', False),
        ("not json at all", False),
        ("", False),
        ('{"name":"Ada","age":NaN}', False),
        ('Here it is: {"name":"Ada","age":36}', False),  # prose around JSON is not JSON
    ],
)
def test_json_schema(text: str, held: bool) -> None:
    assert check(Assertion.json_schema(SCHEMA), text).passed is held


def test_json_schema_accepts_a_dict_and_full_json_schema_keywords() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "additionalProperties": False}
    assert check(Assertion.json_schema(schema), '{"n": 5}').passed
    result = check(Assertion.json_schema(schema), '{"n": 1}')
    assert not result.passed
    assert "less than the minimum" in (result.detail or "")
    assert not check(Assertion.json_schema(schema), '{"n": 5, "x": 1}').passed


def test_json_schema_nested_required_and_empty_object() -> None:
    nested = '{"type":"object","properties":{"meta":{"type":"object","required":["id"]}}}'
    assert not check(Assertion.json_schema(nested), '{"meta":{"other":1}}').passed
    assert check(Assertion.json_schema('{"type":"object","required":[]}'), "{}").passed
    assert not check(Assertion.json_schema('{"type":"object","required":["name"]}'), "{}").passed


def test_json_schema_never_fetches_a_remote_ref() -> None:
    schema = {"$ref": "https://example.invalid/schema.json"}
    result = check(Assertion.json_schema(schema), "{}")
    assert not result.passed
    assert result.error is not None


def test_parse_json_answer_rejects_infinity() -> None:
    with pytest.raises(ValueError):
        parse_json_answer("[Infinity]")


def test_contains_any_ignores_case_and_names_the_check() -> None:
    result = check(Assertion.contains_any(["30 days", "thirty days"]), "Within THIRTY DAYS.")
    assert result.passed and result.name == "stated_the_fact"
    assert not check(Assertion.contains_any(["30 days"]), "Within a month.").passed


def test_contains_none_catches_known_wrong_answers() -> None:
    result = check(Assertion.contains_none(["14 days", "as soon as possible"]), "Submit within 14 Days.")
    assert not result.passed
    assert result.name == "avoided_known_error"
    assert "14 days" in (result.detail or "")
    assert check(Assertion.contains_none(["14 days"]), "Within 30 days.").passed


@pytest.mark.parametrize(("text", "held"), [("one two three", True), ("one two three four", False), ("", True), ("  a\n\tb  c ", True)])
def test_max_words(text: str, held: bool) -> None:
    assert check(Assertion.max_words(3), text).passed is held


def test_refusal_needs_the_structural_flag() -> None:
    assert check(Assertion.refusal(), "I can't help with that.", abstained=True).passed
    assert not check(Assertion.refusal(), "Here is the answer.", abstained=False).passed
    unflagged = check(Assertion.refusal(), "I can't help with that.")
    assert not unflagged.passed and unflagged.error == "answer carries no abstention flag"


def test_cites_any() -> None:
    cited = check(Assertion.cites_any(["policy#3.2", "handbook#1"]), "x", citations=[Citation("policy#3.2")])
    assert cited.passed and cited.name == "cited_expected_source"
    assert not check(Assertion.cites_any(["policy#3.2"]), "x", citations=[Citation("other#1")]).passed
    missing = check(Assertion.cites_any(["policy#3.2"]), "x")
    assert not missing.passed and missing.error == "answer carries no citations"


def test_a_named_assertion_reports_its_own_check_name() -> None:
    assert check(Assertion.contains("Paris", name="named_the_capital"), "Paris").name == "named_the_capital"


def test_unknown_kind_is_an_errored_check() -> None:
    result = check(Assertion(kind="nope", value=1), "x")
    assert not result.passed and "unknown assertion kind" in (result.error or "")


def test_citations_resolve_by_source_id_and_by_quote() -> None:
    from evalkit import Passage

    sent = [Passage("Receipts within 30 days.", "policy#3.2"), "Keep the\noriginal receipt."]
    resolve = Assertion.citations_resolve()
    assert resolve.check_name == "citations_resolve"
    assert check(resolve, "x", citations=["policy#3.2"], passages=sent).passed
    assert check(resolve, "x", citations=[{"passage": "keep"}, {"passage": "the original"}], passages=sent).detail is not None
    assert check(resolve, "x", citations=[{"passage": "Keep the original"}], passages=sent).passed
    assert check(resolve, "x", citations=[Citation("other", "the  original receipt")], passages=sent).passed
    failed = check(resolve, "x", citations=["policy#3.2", "policy#9", "policy#9", Citation(passage="")], passages=sent)
    assert not failed.passed and failed.error is None
    assert failed.detail == 'unresolved citations: policy#9, "" (passages sent: policy#3.2, "Keep the original receipt.")'
    assert check(resolve, "x", citations=[{"passage": "Receipts within"}], passages=sent[:1]).detail == (
        'unresolved citation: "Receipts within" (passages sent: policy#3.2)'
    )


def test_citations_resolve_needs_citations_and_passages() -> None:
    resolve = Assertion.citations_resolve()
    nothing_cited = check(resolve, "x", passages=["a"])
    assert (nothing_cited.passed, nothing_cited.detail, nothing_cited.error) == (False, "the answer cites no source", None)
    no_passages = check(resolve, "x", citations=["a"])
    assert not no_passages.passed
    assert no_passages.error == "answer carries no passages, so its citations cannot be resolved"


@pytest.mark.parametrize(
    ("passages", "expected"),
    [("one", (("one", None),)), (["a", {"text": "b", "source_id": "s"}, {"text": "c"}], (("a", None), ("b", "s"), ("c", None))),
     (None, ())],
)
def test_passages_keep_plain_strings_working(passages: object, expected: tuple) -> None:
    answer = Answer("x", passages=passages)
    assert tuple((p.text, p.source_id) for p in answer.passages) == expected


@pytest.mark.parametrize("bad", [[1], [{"source_id": "s"}], [{"text": "t", "source_id": 3}]])
def test_a_malformed_passage_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="a passage must be"):
        Answer("x", passages=bad)


@pytest.mark.parametrize("bad", [[1], [{"source_id": 3}], [{"passage": 4}]])
def test_a_malformed_citation_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="a citation must be"):
        Answer("x", citations=bad)


def test_citations_resolve_takes_no_value() -> None:
    assert list(BUILTIN_KINDS["citations_resolve"].validate("x")) == ["takes no value"]
    assert list(BUILTIN_KINDS["citations_resolve"].validate(None)) == []


SCHEMA_WITH_AGE = '{"type":"object","required":["name","age"],"properties":{"age":{"type":"integer"}}}'
NESTED = '{"type":"object","properties":{"items":{"type":"array","items":{"properties":{"n":{"type":"integer"}}}}}}'


def test_characters_outside_the_trim_set_are_content() -> None:
    assert not check(Assertion.exact("Paris"), "XParisX").passed


@pytest.mark.parametrize(
    ("assertion", "text", "detail"),
    [
        (Assertion.exact("a" * 40), "b", f"exact({'a' * 40}) did not hold"),
        (Assertion.exact("a" * 41), "b", f"exact({'a' * 37}...) did not hold"),
        (Assertion.contains_any(["café", "thé"]), "tea", 'contains_any(["café","thé"]) did not hold'.replace(",", ", ")),
        (Assertion.regex("/x/"), "y", "regex(/x/) did not hold"),
        (Assertion.contains_none(["Lyon", "Nice", "Paris"]), "lyon or NICE", "found 'Lyon', 'Nice'"),
        (Assertion.max_words(2), "one two three", "3 words, limit 2"),
        (Assertion.cites_any(["policy#1"]), "x", "cited a#1, b#2"),
        (Assertion.json_schema('{"type": "object"}'), "NaN", "answer is not JSON: NaN is not JSON"),
        (Assertion.json_schema('{"type": "array"}'), "[" * 100_000, "answer is not JSON: nested too deeply: line 1 column 501 (char 500)"),
        (Assertion.json_schema(SCHEMA_WITH_AGE), '{"name": "x", "age": "7"}', "'7' is not of type 'integer' at $['age']"),
        (Assertion.json_schema(SCHEMA_WITH_AGE), '{"name": "x"}', "'age' is a required property at $"),
        (Assertion.json_schema(NESTED), '{"items": [{"n": 1}, {"n": "2"}]}', "'2' is not of type 'integer' at $['items'][1]['n']"),
    ],
)
def test_a_failed_check_says_why_in_words(assertion: Assertion, text: str, detail: str) -> None:
    answer = {"citations": ["b#2", "a#1"]} if assertion.kind == "cites_any" else {}
    result = check(assertion, text, **answer)
    assert (result.passed, result.detail, result.error) == (False, detail, None)



def test_errored_checks_say_why_in_words() -> None:
    from evalkit.checks import AssertionKind

    assert check(Assertion("nope")).error == "unknown assertion kind 'nope'"

    def boom(value: object, answer: Answer) -> bool:
        raise ValueError("bad value")

    raised = evaluate(Assertion("boom", 1), Answer("x"), {"boom": AssertionKind("boom", boom)})
    assert (raised.name, raised.passed, raised.error) == ("boom", False, "boom check raised ValueError: bad value")
    remote = check(Assertion.json_schema({"$ref": "https://example.org/s.json"}), "{}")
    assert not remote.passed and remote.error is not None
    assert remote.error.endswith("Unresolvable: https://example.org/s.json")  # refused, never fetched


def test_the_regex_timeout_names_the_pattern() -> None:
    assert check(Assertion.regex(RUNAWAY), "a" * 40 + "b").error == "pattern timed out: regex /(a|a)+$/ did not finish in time (1 s)"


@pytest.mark.parametrize(
    ("kind", "value", "problems"),
    [
        ("regex", 5, ["must be a non-empty string"]),
        ("regex", "", ["must be a non-empty string"]),
        ("regex", "/a/U", ["unsupported PCRE modifier 'U' in '/a/U'"]),
        ("regex", "[0-9]", []),
        ("contains_any", "ok", ["must be a non-empty list of strings"]),
        ("contains_any", [], ["must be a non-empty list of strings"]),
        ("contains_any", ["ok", ""], ["every entry must be a non-empty string"]),
        ("contains_none", ["ok", 3], ["every entry must be a non-empty string"]),
        ("contains_any", ("ok",), []),
        ("cites_any", ["a#1"], []),
        ("max_words", 1, []),
        ("max_words", 0, ["must be a positive integer"]),
        ("max_words", 2.5, ["must be a positive integer"]),
        ("max_words", True, ["must be a positive integer"]),
        ("max_words", "3", ["must be a positive integer"]),
        ("json_schema", "[1]", ["must be a JSON object (or a boolean schema)"]),
        ("json_schema", True, []),
        ("json_schema", {"type": "nope"}, ["is not a valid JSON Schema: 'nope' is not valid under any of the given schemas"]),
        ("refusal", None, []),
        ("refusal", 1, ["takes no value"]),
        ("exact", "", ["must be a non-empty string"]),
    ],
)
def test_each_kind_validates_its_value(kind: str, value: object, problems: list[str]) -> None:
    assert list(BUILTIN_KINDS[kind].validate(value)) == problems


def test_the_json_schema_cache_keeps_equal_schemas_apart_from_different_ones() -> None:
    first = Assertion.json_schema({"type": "object", "required": ["a"]})
    second = Assertion.json_schema({"required": ["b"], "type": "object"})
    assert check(first, '{"a": 1}').passed and not check(second, '{"a": 1}').passed


@pytest.mark.parametrize(
    ("answer", "problems"),
    [
        (Answer("Paris", model="m", abstained=False, finish_reason="stop"), []),
        (Answer("Paris", abstained=None), []),
        (Answer(b"Paris"), ["text is bytes, not str"]),  # type: ignore[arg-type]
        (Answer("No.", abstained="no"), ["abstained must be True, False or None, got 'no'"]),  # truthy: would pass refusal
        (Answer("x", model=5, finish_reason=["stop"]), ["model must be text or None, got 5", "finish_reason must be text or None, got ['stop']"]),  # type: ignore[arg-type]
    ],
)
def test_answers_are_held_to_their_declared_types(answer: Answer, problems: list[str]) -> None:
    from evalkit.answers import answer_problems

    assert answer_problems(answer) == problems


def test_token_counts_are_whole_numbers_the_store_can_keep() -> None:
    from evalkit.answers import Usage, answer_problems

    assert answer_problems(Answer("x", usage=Usage(0, 2**63 - 1))) == []
    assert answer_problems(Answer("x", usage={"prompt_tokens": -1, "completion_tokens": 2**63})) == [
        "usage input_tokens must be a whole number from 0 or None, got -1",
        "usage output_tokens must be a whole number from 0 or None, got 9223372036854775808",
    ]
    assert answer_problems(Answer("x", usage={"prompt_tokens": "5"})) == ["usage input_tokens must be a whole number from 0 or None, got '5'"]


# --- Patterns on the regex module: what PCRE users write, JSON Schema patterns, limits in any thread ---


@pytest.mark.parametrize(
    ("pattern", "text", "held"),
    [(r"/^\p{Lu}\p{Ll}+$/u", "Émile", True), (r"/^\p{Lu}\p{Ll}+$/u", "émile", False), (r"^\p{L}+$", "Zürich", True),
     (r"/^(?>\d+)\d/", "123", False), (r"/^\d++\d/", "123", False), (r"/^\d++$/", "123", True)],
)
def test_regex_reads_unicode_properties_atomic_groups_and_possessive_quantifiers(pattern: str, text: str, held: bool) -> None:
    assert list(BUILTIN_KINDS["regex"].validate(pattern)) == []
    assert check(Assertion.regex(pattern), text).passed is held


def test_a_regex_whose_counted_repeats_ask_too_much_is_refused_at_validation() -> None:
    assert list(BUILTIN_KINDS["regex"].validate("/a{1000000000}/")) == [
        "regular expression '/a{1000000000}/' asks for 1,000,000,000 repetitions in its counted repeats "
        "({m}, {m,n}; nested ones multiplied), more than the 10,000 allowed"
    ]


NAMES = {"type": "object", "properties": {"name": {"type": "string", "pattern": r"^\p{Lu}\p{Ll}+$"}}}


def test_json_schema_patterns_read_unicode_properties() -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(NAMES)) == []
    assert check(Assertion.json_schema(NAMES), '{"name": "Émile"}').passed
    failed = check(Assertion.json_schema(NAMES), '{"name": "émile"}')
    assert (failed.passed, failed.error, failed.detail) == (False, None, "'émile' does not match '^\\\\p{Lu}\\\\p{Ll}+$' at $['name']")


@pytest.mark.parametrize(
    ("schema", "text", "detail"),
    [
        ({"patternProperties": {r"^\p{L}+$": {"type": "integer"}}}, '{"Zürich": "x"}', "'x' is not of type 'integer' at $['Zürich']"),
        ({"patternProperties": {r"^\p{L}+$": {}}, "additionalProperties": False}, '{"Zürich": 1, "a1": 2}',
         "'a1' does not match any of the regexes: '^\\\\p{L}+$' at $"),
        ({"properties": {"a": {}}, "additionalProperties": False}, '{"a": 1, "c": 2, "b": 3}',
         "Additional properties are not allowed ('b', 'c' were unexpected) at $"),
        ({"patternProperties": {"^x": {}}, "additionalProperties": {"type": "string"}}, '{"x1": 1, "y": 2}',
         "2 is not of type 'string' at $['y']"),
        ({"propertyNames": {"pattern": r"^\p{Ll}+$"}}, '{"ok": 1, "Nope": 2}', "'Nope' does not match '^\\\\p{Ll}+$' at $"),
    ],
)
def test_json_schema_pattern_keywords_say_what_jsonschema_says(schema: dict, text: str, detail: str) -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(schema)) == []
    result = check(Assertion.json_schema(schema), text)
    assert (result.passed, result.error, result.detail) == (False, None, detail)


@pytest.mark.parametrize(
    ("schema", "culprit"),
    [({"pattern": "a{1000000000}"}, "a{1000000000}"), ({"patternProperties": {"(unclosed": {}}}, "(unclosed"),
     ({"$schema": "http://json-schema.org/draft-07/schema#", "pattern": "[a-"}, "[a-")],
)
def test_a_schema_regex_the_regex_module_refuses_is_refused_at_validation(schema: dict, culprit: str) -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(schema)) == [f"is not a valid JSON Schema: {culprit!r} is not a 'regex'"]


def evaluated_off_the_main_thread(assertion: Assertion, text: str):
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(check(assertion, text)))
    thread.start()
    thread.join(120)
    assert not thread.is_alive() and len(outcome) == 1
    return outcome[0]


@pytest.mark.parametrize("where", ["main thread", "another thread"])
def test_a_runaway_pattern_is_stopped_in_any_thread(where: str) -> None:
    evaluated = check if where == "main thread" else evaluated_off_the_main_thread
    regex_check = evaluated(Assertion.regex(RUNAWAY), "a" * 40 + "b")
    assert (regex_check.passed, regex_check.error) == (False, "pattern timed out: regex /(a|a)+$/ did not finish in time (1 s)")
    schema = {"properties": {"name": {"pattern": "^(a|a)+$"}}}
    schema_check = evaluated(Assertion.json_schema(schema), '{"name": "' + "a" * 40 + '!"}')
    assert (schema_check.passed, schema_check.error) == (
        False, "pattern timed out: validating the answer against the schema's regexes took over 2 s"
    )


def test_the_regexes_of_one_validation_share_its_budget() -> None:
    from evalkit.schema_patterns import patterns_within, validator_class
    from jsonschema import Draft202012Validator

    validator = validator_class(Draft202012Validator)({"items": {"pattern": "^a$"}})
    with patterns_within(60):
        assert validator.is_valid(["a"] * 100) and not validator.is_valid(["a", "b"])
    with patterns_within(0), pytest.raises(TimeoutError):  # nothing left: even a quick match is not begun
        validator.is_valid(["a"])
    assert validator.is_valid(["a"])  # outside a budget, each match has its own limit


# --- Tool checks: over the tool calls of the answer's transcript; checks at a turn; rubric without a judge ---


def agent(*calls: tuple[str, object], reply: str = "done") -> Answer:
    """An answer whose transcript holds one assistant turn per tool call, each answered by its tool."""
    turns: list[Message] = [Message.user("go")]
    for number, (tool, arguments) in enumerate(calls, start=1):
        turns.append(Message.assistant(None, [ToolCall(tool, arguments, f"c{number}")]))
        turns.append(Message.tool(f"c{number}", "ok", tool))
    turns.append(Message.assistant(reply))
    return Answer(reply, transcript=turns)


def graded(assertion: Assertion, answer: Answer):
    result = evaluate(assertion, answer, BUILTIN_KINDS)
    return (result.passed, result.detail, result.error)


def test_tool_called_passes_on_any_call_of_the_tool_and_else_names_the_calls() -> None:
    both = agent(("search", {}), ("fetch", {}))
    assert graded(Assertion.tool_called("fetch"), both) == (True, None, None)
    assert graded(Assertion.tool_called("send"), both) == (False, "called search, fetch", None)
    assert graded(Assertion.tool_called("send"), agent()) == (False, "called no tool", None)


def test_tool_not_called_counts_the_calls_it_forbids() -> None:
    assert graded(Assertion.tool_not_called("send"), agent(("search", {}))) == (True, None, None)
    assert graded(Assertion.tool_not_called("send"), agent()) == (True, None, None)
    assert graded(Assertion.tool_not_called("send"), agent(("send", {}), ("search", {}))) == (False, "called send once", None)
    twice = agent(("send", {}), ("search", {}), ("send", {}))
    assert graded(Assertion.tool_not_called("send"), twice) == (False, "called send 2 times", None)


DAYS = {"type": "object", "required": ["days"], "properties": {"days": {"type": "integer"}}}


def test_tool_args_checks_every_call_of_the_tool_and_names_the_first_that_fails() -> None:
    good = agent(("forecast", {"days": 3}), ("search", {"q": 1}), ("forecast", {"days": 5}))
    assert graded(Assertion.tool_args("forecast", DAYS), good) == (True, None, None)
    second_bad = agent(("forecast", {"days": 3}), ("forecast", {"days": "5"}), ("forecast", {}))
    assert graded(Assertion.tool_args("forecast", DAYS), second_bad) == (
        False, "call 2 of forecast: '5' is not of type 'integer' at $['days']", None
    )
    first_bad = agent(("forecast", {}), ("forecast", {"days": 1}))
    assert graded(Assertion.tool_args("forecast", DAYS), first_bad) == (
        False, "call 1 of forecast: 'days' is a required property at $", None
    )
    assert graded(Assertion.tool_args("forecast", DAYS), agent(("search", {}))) == (
        False, "forecast was not called (called search)", None
    )
    assert graded(Assertion.tool_args("forecast", DAYS), agent()) == (False, "forecast was not called (called no tool)", None)


@pytest.mark.parametrize(
    ("calls", "wanted", "strict", "held"),
    [
        (["a", "x", "b", "c"], ["a", "b"], False, True),  # other calls between and around allowed
        (["b", "a"], ["a", "b"], False, False),  # order matters
        (["a", "b"], ["a", "b", "b"], False, False),  # each wanted call is a call of its own
        (["a", "b", "b"], ["a", "b", "b"], False, True),
        ([], ["a"], False, False),
        (["a", "b"], ["a", "b"], True, True),
        (["a", "b", "c"], ["a", "b"], True, False),  # strict: nothing else
        (["x", "a", "b"], ["a", "b"], True, False),
    ],
)
def test_tool_sequence_is_a_subsequence_or_strictly_the_sequence(calls: list[str], wanted: list[str], strict: bool, held: bool) -> None:
    answer = agent(*((name, {}) for name in calls))
    result = evaluate(Assertion.tool_sequence(wanted, strict=strict), answer, BUILTIN_KINDS)
    assert result.passed is held


def test_a_failed_tool_sequence_names_the_calls_and_the_expected_order() -> None:
    assert graded(Assertion.tool_sequence(["a", "b"]), agent(("b", {}), ("a", {}))) == (
        False, "called b, a; expected a → b", None
    )
    assert graded(Assertion.tool_sequence(["a"], strict=True), agent()) == (False, "called no tool; expected a", None)


def test_a_tool_sequence_without_strict_is_not_strict() -> None:
    answer = agent(("x", {}), ("a", {}))
    assert evaluate(Assertion("tool_sequence", {"names": ["a"]}), answer, BUILTIN_KINDS).passed


@pytest.mark.parametrize(("count", "held"), [(0, True), (2, True), (3, False)])
def test_max_tool_calls_counts_every_call(count: int, held: bool) -> None:
    answer = agent(*(("a", {}) for _ in range(count)))
    assert evaluate(Assertion.max_tool_calls(2), answer, BUILTIN_KINDS).passed is held


def test_a_failed_max_tool_calls_says_how_many() -> None:
    assert graded(Assertion.max_tool_calls(1), agent(("a", {}), ("b", {}), ("a", {}))) == (False, "3 tool calls, limit 1", None)
    assert graded(Assertion.max_tool_calls(0), agent(("a", {}))) == (False, "1 tool calls, limit 0", None)


@pytest.mark.parametrize(
    ("kind", "value", "problems"),
    [
        ("tool_called", "search", []),
        ("tool_called", "", ["must be a non-empty string (a tool name)"]),
        ("tool_not_called", 3, ["must be a non-empty string (a tool name)"]),
        ("tool_args", {"name": "f", "schema": {"type": "object"}}, []),
        ("tool_args", {"name": "f"}, ["must be {name: TOOL, schema: JSON_SCHEMA}"]),
        ("tool_args", {"name": "f", "schema": {}, "x": 1}, ["must be {name: TOOL, schema: JSON_SCHEMA}"]),
        ("tool_args", ["f", {}], ["must be {name: TOOL, schema: JSON_SCHEMA}"]),
        ("tool_args", {"name": "", "schema": "[1]"},
         ["must be a non-empty string (a tool name)", "schema must be a JSON object (or a boolean schema)"]),
        ("tool_sequence", {"names": ["a", "b"]}, []),
        ("tool_sequence", {"names": ["a"], "strict": True}, []),
        ("tool_sequence", {"names": ["a"], "strict": False}, []),
        ("tool_sequence", ["a", "b"], ["must be {names: [TOOL, ...], strict: false}"]),
        ("tool_sequence", {"strict": True}, ["must be {names: [TOOL, ...], strict: false}"]),
        ("tool_sequence", {"names": ["a"], "order": 1}, ["must be {names: [TOOL, ...], strict: false}"]),
        ("tool_sequence", {"names": []}, ["names: must be a non-empty list of strings"]),
        ("tool_sequence", {"names": ["a", ""], "strict": "yes"},
         ["names: every entry must be a non-empty string", "strict must be true or false"]),
        ("max_tool_calls", 0, []),
        ("max_tool_calls", 5, []),
        ("max_tool_calls", -1, ["must be a whole number of zero or more"]),
        ("max_tool_calls", False, ["must be a whole number of zero or more"]),
        ("max_tool_calls", 1.0, ["must be a whole number of zero or more"]),
        ("rubric", "The answer names the window.", []),
        ("rubric", " \n", ["must be a criterion in words (a string that is not blank)"]),
        ("rubric", 3, ["must be a criterion in words (a string that is not blank)"]),
    ],
)
def test_each_tool_and_rubric_kind_validates_its_value(kind: str, value: object, problems: list[str]) -> None:
    assert list(BUILTIN_KINDS[kind].validate(value)) == problems


@pytest.mark.parametrize(
    "assertion",
    [Assertion.tool_called("f"), Assertion.tool_not_called("f"), Assertion.tool_args("f", {"type": "object"}),
     Assertion.tool_sequence(["f", "g"])],
)
def test_a_tool_check_on_a_prompt_that_declares_no_tools_is_refused(assertion: Assertion) -> None:
    from evalkit import GoldenPrompt, GoldenPromptSet
    from evalkit.validation import prompt_set_problems

    golden = GoldenPromptSet(identifier="pkg.set", name="A set", prompts=[GoldenPrompt(id="p1", prompt="Weather?", assertions=[assertion])])
    assert prompt_set_problems(golden, BUILTIN_KINDS) == [
        f'set "pkg.set", prompt "p1": field assertions[1]: {assertion.kind} looks at tool calls, but the prompt declares no tools'
    ]


def scripted(*replies: str | None) -> Answer:
    """A scripted conversation's answer: one user turn per reply; ``None``, a reply never given
    (the model's last turn there was a tool call: it ran out of steps)."""
    turns: list[Message] = []
    for number, reply in enumerate(replies, start=1):
        turns.append(Message.user(f"question {number}"))
        if reply is None:
            turns.append(Message.assistant(None, [ToolCall("search", {}, f"c{number}")]))
        else:
            turns.append(Message.assistant(reply))
    return Answer(replies[-1] or "", transcript=turns)


def test_an_assertion_at_a_turn_reads_that_reply_only() -> None:
    answer = scripted("Hello there", "Paris is in France")
    assert graded(Assertion.contains("Hello").at_turn(1), answer) == (True, None, None)
    assert graded(Assertion.contains("Hello").at_turn(2), answer) == (False, "contains(Hello) did not hold", None)
    assert graded(Assertion.contains("Hello"), answer) == (False, "contains(Hello) did not hold", None)  # the final answer
    assert evaluate(Assertion.contains("Hello").at_turn(1), answer, BUILTIN_KINDS).name == "contains@turn1"


def test_a_turn_the_model_never_replied_to_fails_saying_how_many_replies_there_were() -> None:
    answer = scripted("Hello", None, "Bye")
    assert graded(Assertion.contains("Hello").at_turn(4), answer) == (False, "the model gave no reply 4 (replies: 2)", None)
    assert graded(Assertion.contains("x").at_turn(2), answer) == (False, "the model gave no reply 2 (replies: 2)", None)
    assert graded(Assertion.contains("Bye").at_turn(3), answer) == (True, None, None)
    plain = Answer("Hello")
    assert graded(Assertion.contains("Hello").at_turn(1), plain) == (True, None, None)  # a plain answer is its reply 1
    assert graded(Assertion.contains("Hello").at_turn(2), plain) == (False, "the model gave no reply 2 (replies: 1)", None)


@pytest.mark.parametrize("turn", [True, "1", 1.0])
def test_a_turn_that_is_no_whole_number_finds_no_reply(turn: object) -> None:
    result = evaluate(Assertion("contains", "Hello", turn=turn), scripted("Hello"), BUILTIN_KINDS)  # type: ignore[arg-type]
    assert (result.passed, result.detail) == (False, f"the model gave no reply {turn} (replies: 1)")


def test_a_rubric_check_without_a_judge_is_an_error_not_a_verdict() -> None:
    """The error is stored with the case and shown later by `evalkit show` or read by a Python
    caller alike, so it names no option of either (it said ``--judge NAME`` to both)."""
    result = check(Assertion.rubric("The answer is polite."), "Thank you!")
    assert (result.name, result.passed, result.detail) == ("rubric", False, None)
    assert result.error == (
        "a rubric check is decided by a judge, and this grading has none (the deterministic grader "
        "judges rubric checks with the judge the run names or the configuration's judge)"
    )
    assert "--" not in result.error


@pytest.mark.parametrize(
    ("schema", "problems"),
    [
        ({"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}, []),
        ({"$ref": "#/$defs/missing"},
         ["holds a $ref that cannot be resolved: '#/$defs/missing' (remote references are never retrieved)"]),
        ({"properties": {"a": {"$ref": "https://example.org/s.json"}, "b": {"$ref": "#/nowhere"}}},
         ["holds a $ref that cannot be resolved: 'https://example.org/s.json' (remote references are never retrieved)",
          "holds a $ref that cannot be resolved: '#/nowhere' (remote references are never retrieved)"]),
        ({"const": {"$ref": "#/nowhere"}}, []),  # data, not a reference
    ],
)
def test_a_schema_whose_refs_point_nowhere_is_refused_at_validation(schema: dict, problems: list[str]) -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(schema)) == problems


def test_a_tool_args_schema_whose_regex_runs_away_errors_the_check_as_timed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # no verdict on the arguments: an errored check (as a json_schema check's), not a failed one
    from evalkit import checks

    monkeypatch.setattr(checks, "SCHEMA_PATTERN_TIMEOUT_S", 0.05)  # the limit, shortened: the message names it
    schema = {"properties": {"q": {"pattern": "^(a|a)+$"}}}
    answer = agent(("search", {"q": "a" * 40 + "!"}), ("search", {"q": "fine"}))
    assert graded(Assertion.tool_args("search", schema), answer) == (
        False, None, "call 1 of search: pattern timed out: the schema's regexes took over 0.05 s"
    )
    # schema_matches (the canned results' matching) still answers with the text: not a match
    assert checks.schema_matches(schema, {"q": "a" * 40 + "!"}) == "pattern timed out: the schema's regexes took over 0.05 s"


def _deep_schema(levels: int) -> dict:
    schema: dict = {"type": "integer"}
    for _ in range(levels):
        schema = {"items": schema}
    return schema


@pytest.mark.parametrize(
    ("schema", "problems"),
    [
        # keys that are not text: jsonschema would take them, and every answer's check would then
        # error on the cache key (an int beside a str cannot be sorted)
        ({"type": "object", "properties": {"a": {}, 1: {}}},
         ["is no JSON Schema evalkit can check: it has a key that is not text (int 1); the keys of JSON objects are text"]),
        ({"properties": {("a", "b"): {}}},
         ["is no JSON Schema evalkit can check: it has a key that is not text (tuple ('a', 'b')); the keys of JSON objects are text"]),
        # deeper than check_schema's recursion can follow: refused before it walks, not a RecursionError
        (_deep_schema(400), ["is no JSON Schema evalkit can check: it is nested more than 64 lists and mappings deep"]),
        (_deep_schema(31), []),  # 62 levels: within the limit, checked by jsonschema
        # read as every JSON text evalkit reads (evalkit.jsonparse): where it goes wrong is named
        ("[" * 100_000 + "]" * 100_000, ["is not valid JSON: nested too deeply: line 1 column 501 (char 500)"]),
        ('{"const": ' + "9" * 5000 + "}", ["is not valid JSON: a number with more than 4,300 digits: line 1 column 11 (char 10)"]),
        # values JSON has not: they would fail every answer's check (or compare as NaN never does)
        ({"const": b"x"}, ["is not JSON: Object of type bytes is not JSON serializable"]),
        ({"enum": [{1, 2}]}, ["is not JSON: Object of type set is not JSON serializable"]),
        ({"enum": ["a", float("nan")]}, ["is not JSON: it holds NaN at enum[1], which is not a number JSON can carry"]),
        ({"properties": {"n": {"maximum": float("-inf")}}}, ["is not JSON: it holds -Infinity at properties.n.maximum, which is not a number JSON can carry"]),
    ],
)
def test_a_schema_that_no_check_could_use_is_refused_at_validation(schema: object, problems: list[str]) -> None:
    assert list(BUILTIN_KINDS["json_schema"].validate(schema)) == problems
    assert list(BUILTIN_KINDS["tool_args"].validate({"name": "t", "schema": schema})) == [f"schema {p}" for p in problems]


def test_a_plugin_kind_under_a_built_in_name_is_still_called_as_a_plugin() -> None:
    """The built-in text kinds skip the plugin call's guard only for their own evaluator: a plugin
    kind named ``contains`` whose evaluator returns a coroutine is refused as before."""
    from evalkit.checks import AssertionKind

    async def later(value: object, answer: Answer) -> bool:
        return True

    kinds = {**BUILTIN_KINDS, "contains": AssertionKind("contains", later)}
    check = evaluate(Assertion.contains("Paris"), Answer(text="Paris"), kinds)
    assert not check.passed and check.error is not None and "TypeError" in check.error


def test_a_built_in_kind_on_a_str_subclass_answer_or_value_goes_through_the_guard() -> None:
    """A value of a ``str`` subclass is no exact type: its own methods (a plugin's code) run under
    the guard, so what it raises past ``except Exception`` is carried into an errored check."""

    class Odd(str):
        def strip(self, chars: object = None) -> str:
            raise GeneratorExit

    check = evaluate(Assertion("exact", Odd("Paris")), Answer(text="Paris"), BUILTIN_KINDS)
    assert not check.passed and check.error is not None and "GeneratorExit" in check.error
