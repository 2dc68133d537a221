"""OpenTelemetry GenAI spans into cases: files the SDK's own exporter wrote, and hostile ones."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
import yaml
from evalkit.errors import UsageError
from evalkit.importers import ImportTarget, import_otel
from evalkit.importers.otel import (
    BROKEN_INPUT,
    NO_INPUT,
    OTHER_OPERATION,
    TOOL_CALLS_ONLY,
    UNREADABLE,
    ImportedCase,
    Turn,
    cases_from_spans,
)
from evalkit.importers.otlp import MAX_VALUE_DEPTH, any_value, read_spans
from evalkit.setfiles import load_set_files
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.otel_traces import answer, model_call, text, tool_call, tool_response, trace_file


def recorded(path: Path, **options: object) -> Path:
    """A trace file of four model calls and two other spans, written by the SDK's exporter."""
    with trace_file(path, **options) as tracer:  # type: ignore[arg-type]
        model_call(tracer, [text("user", "When can I return a lamp?")], answer("Within 30 days."), system="You are the shop's assistant.")
        model_call(tracer, [text("user", "I bought a lamp."), text("assistant", "Which order?"), text("user", "A-1234.")],
                   answer("Order A-1234 can be returned until May 3."), structured=True)  # fmt: skip
        model_call(tracer, [text("user", "Weather in Paris?")], answer(calls=[tool_call("call_1", "get_weather", {"city": "Paris"})]))
        model_call(
            tracer,
            [text("user", "Weather in Paris?"), {"role": "assistant", "parts": [tool_call("call_1", "get_weather", {"city": "Paris"})]},
             tool_response("call_1", {"temp_c": 18})],
            answer("It is 18 °C in Paris."),
        )  # fmt: skip
        with tracer.start_as_current_span("execute_tool get_weather") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
        with tracer.start_as_current_span("GET /orders"):
            pass
    return path


def test_the_sdks_json_lines_become_one_case_per_model_call(tmp_path: Path) -> None:
    reading = read_spans(recorded(tmp_path / "t.jsonl"))
    assert len(reading.spans) == 6 and reading.unreadable_lines == ()
    found = cases_from_spans(reading.spans)
    assert found.not_imported == {TOOL_CALLS_ONLY: 1, OTHER_OPERATION: 1, NO_INPUT: 1}
    single, conversation, agent = found.cases
    assert single.turns == (Turn("system", "You are the shop's assistant."), Turn("user", "When can I return a lamp?"))
    assert single.single_prompt and single.answer == "Within 30 days." and single.model == "gpt-4o-mini-2024-07-18"
    assert single.provider == "openai"
    assert [t.role for t in conversation.turns] == ["user", "assistant", "user"] and not conversation.single_prompt
    assert agent.uses_tools
    assert agent.turns[1] == Turn("assistant", None, ({"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},))
    assert agent.turns[2] == Turn("tool", '{"temp_c": 18}', tool_call_id="call_1")
    assert all(len(case.id) == 16 for case in found.cases) and all(len(case.trace_id) == 32 for case in found.cases)


def test_one_export_request_a_file_is_read_too(tmp_path: Path) -> None:
    lines = recorded(tmp_path / "t.jsonl", batch=True).read_text().splitlines()
    spans = [span for line in lines for span in json.loads(line)["resourceSpans"]]
    whole = tmp_path / "request.json"
    whole.write_text(json.dumps({"resourceSpans": spans}, indent=2))
    assert len(read_spans(whole).spans) == 6


def test_secrets_in_the_content_are_scrubbed_with_the_credentials_the_attributes_hold(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with trace_file(path, resource={"deployment.api_key": "shopkey-9f8e7d6c5b4a"}) as tracer:
        model_call(
            tracer,
            [text("user", "My key is shopkey-9f8e7d6c5b4a and tok-77aa88bb99cc, mail ann@example.com")],
            answer("Noted sk-abcdefghijklmnopqrstu and tok-77aa88bb99cc."),
            extra={"http.request.header.authorization": ["Bearer tok-77aa88bb99cc"]},
        )
    (case,) = cases_from_spans(read_spans(path).spans).cases
    assert case.turns[0].content == "My key is *** and ***, mail ***"
    assert case.answer == "Noted *** and ***."


def test_a_span_with_images_or_malformed_messages_is_counted_not_imported(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with trace_file(path) as tracer:
        image = {"role": "user", "parts": [{"type": "text", "content": "What is this?"}, {"type": "blob", "modality": "image", "content": "aGk="}]}
        model_call(tracer, [image], answer("A cat."))
        model_call(tracer, [{"role": "narrator", "parts": []}], answer("x"))
        with tracer.start_as_current_span("chat broken") as span:
            span.set_attribute("gen_ai.input.messages", "[{not json")
            span.set_attribute("gen_ai.output.messages", "[]")
            broken = format(span.get_span_context().span_id, "016x")
        with tracer.start_as_current_span("chat not a list") as span:
            span.set_attribute("gen_ai.input.messages", '{"role": "user"}')
            span.set_attribute("gen_ai.output.messages", "[]")
    found = cases_from_spans(read_spans(path).spans)
    assert found.cases == ()
    # Messages that are there but not JSON were counted as missing ("spans without
    # gen_ai.input.messages"): a truncated attribute looked like an uninstrumented span.
    assert found.not_imported == {
        "spans holding images, audio or files, which a golden prompt cannot carry": 1,
        UNREADABLE: 2,
        f"{BROKEN_INPUT} (first: {broken}: Expecting property name enclosed in double quotes at line 1, column 3)": 1,
    }


def test_hostile_files_are_refused_or_counted_never_a_traceback(tmp_path: Path) -> None:
    not_utf8 = tmp_path / "latin.jsonl"
    not_utf8.write_bytes(b'{"resourceSpans": []}\n\xff\n')
    with pytest.raises(UsageError, match="is not UTF-8 text"):
        read_spans(not_utf8)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n" + '{"resourceSpans": []}\n{"x": 1}\nnot json\n')
    assert read_spans(deep).unreadable_lines == (1, 3, 4)
    with pytest.raises(UsageError, match="cannot be read: not a regular file but a character device"):
        read_spans(Path("/dev/zero"))
    nested: dict = {"stringValue": "bottom"}
    for _ in range(MAX_VALUE_DEPTH + 5):
        nested = {"arrayValue": {"values": [nested]}}
    assert any_value(nested) is not None  # cut, not a RecursionError
    assert any_value({"kvlistValue": {"values": [{"key": "a", "value": {"intValue": "12"}}, {"key": 3}]}}) == {"a": 12}
    assert any_value({"intValue": "9" * 5000}) is None


def test_a_huge_trace_file_is_refused_naming_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.importers import otlp

    monkeypatch.setattr(otlp, "MAX_TRACE_FILE_BYTES", 100)
    with pytest.raises(UsageError, match="cannot be read: larger than the 100 bytes it may hold"):
        read_spans(recorded(tmp_path / "t.jsonl"))


def test_the_written_set_file_loads_with_its_conversations_and_skips(tmp_path: Path) -> None:
    source = recorded(tmp_path / "prod.jsonl")
    target = ImportTarget(tmp_path / "evals" / "prod.yaml", tmp_path / "evals" / "prod-answers.jsonl", "traces.prod", "Prod", "prod.jsonl")
    outcome = import_otel(source, target)
    assert (len(outcome.found.cases), outcome.conversations, outcome.skipped) == (3, 2, 1)
    loaded = load_set_files([target.set_file], root=tmp_path)
    assert loaded.problems == ()
    (golden,) = loaded.prompt_sets
    assert [p.prompt for p in golden.prompts] == ["When can I return a lamp?", ""]
    assert [m.content for m in golden.prompts[1].messages if m.role == "user"][-1] == "A-1234."
    assert golden.prompts[0].system_prompt == "You are the shop's assistant."
    assert golden.prompts[0].tags == (f"trace:{outcome.found.cases[0].trace_id}", "provider:openai")
    assert [s.reason for s in loaded.skipped] == ["holds tool calls: declare its tools and their canned results, then remove skip (imported from a trace; review it)"]
    answers = [json.loads(line) for line in target.answers_file.read_text().splitlines()]
    assert [a["text"] for a in answers] == ["Within 30 days.", "Order A-1234 can be returned until May 3.", "It is 18 °C in Paris."]
    assert {a["id"] for a in answers} == {c.id for c in outcome.found.cases}


def test_nothing_is_written_over_an_existing_file_or_when_nothing_can_be_imported(tmp_path: Path) -> None:
    source = recorded(tmp_path / "prod.jsonl")
    target = ImportTarget(tmp_path / "prod.yaml", tmp_path / "prod-answers.jsonl", "traces.prod", "Prod", "prod.jsonl")
    target.answers_file.write_text("mine\n")
    with pytest.raises(UsageError, match="writes nothing: .*prod-answers.jsonl already exists"):
        import_otel(source, target)
    assert target.answers_file.read_text() == "mine\n" and not target.set_file.exists()
    import_otel(source, attrs.evolve(target, force=True))
    assert target.answers_file.read_text() != "mine\n" and target.set_file.exists()
    empty = tmp_path / "empty.jsonl"
    with trace_file(empty) as tracer, tracer.start_as_current_span("GET /"):
        pass
    other = ImportTarget(tmp_path / "e.yaml", tmp_path / "e-answers.jsonl", "traces.e", "E", "empty.jsonl")
    with pytest.raises(UsageError, match=f"holds no model call to import: {NO_INPUT}: 1"):
        import_otel(empty, other)
    assert not other.set_file.exists() and not other.answers_file.exists()


#: Texts a YAML writer must quote, escape or keep whole for them to load back as they were.
AWKWARD_TEXTS = [
    "yes", "no", "~", "null", "=", "<<", "1e3", "0x1F", "012", "2024-01-01", "&a", "*a", "!tag x", "- x", ": x", "#x", "x #y",
    "'", '"', "\\", "{a: 1}", "[1]", "%YAML", "---", "...", "\t tab", " lead", "trail ", "a\n b\n\n  c\n", "\n\n", " \n ",
    "cr\rlf\r\n", "nel\x85ls\u2028ps\u2029", "\ufeffbom", "bidi \u202e\u2066x\u2069", "zw\u200bj\u200d", "esc \x1b[2J bell\x07",
    "del\x7f c1\x9b", "emoji 🦜 ñ 中文", "x" * 300, ("word " * 60).strip(), "\u00a0nbsp\u00a0", "a: b # c",
]  # fmt: skip


def test_what_an_import_writes_loads_back_as_it_was_checked(tmp_path: Path) -> None:
    """The set is checked in memory, not read back (:func:`evalkit.importers.writing.writable_cases`):
    that holds only while the text written loads back as the data checked. Texts YAML treats
    specially, in every field an import writes, are read back unchanged and validate."""
    path = tmp_path / "t.jsonl"
    with trace_file(path) as tracer:
        for awkward in AWKWARD_TEXTS:
            model_call(tracer, [text("user", f"q {awkward}")], answer(awkward if awkward.strip() else f"a{awkward}"), system=awkward,
                       extra={"gen_ai.provider.name": f"p{awkward}"})  # fmt: skip
            model_call(tracer, [text("user", "go"), {"role": "assistant", "parts": [tool_call(awkward, awkward, {awkward: [awkward]})]},
                                tool_response(awkward, awkward)], answer(f"a {awkward}"))  # fmt: skip
    target = ImportTarget(tmp_path / "s.yaml", tmp_path / "s-answers.jsonl", "traces.s", "S", "t.jsonl")
    outcome = import_otel(path, target)
    assert len(outcome.found.cases) == 2 * len(AWKWARD_TEXTS)
    loaded = load_set_files([target.set_file])
    assert loaded.problems == ()
    from evalkit.importers.writing import set_document

    written = yaml.load(target.set_file.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    assert written == set_document(outcome.found.cases, target)


def test_an_import_checks_its_set_without_reading_the_file_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The set file was written to a temporary file and read back whole to be checked: at 20,000
    # spans that took more than the rest of the import together (7 s became 18 s).
    from evalkit import setfiles

    def no_reading(path: object) -> None:
        raise AssertionError(f"the import read the set file {path} back")

    monkeypatch.setattr(setfiles, "read_document", no_reading)
    source = recorded(tmp_path / "prod.jsonl")
    target = ImportTarget(tmp_path / "prod.yaml", tmp_path / "prod-answers.jsonl", "traces.prod", "Prod", "prod.jsonl")
    assert len(import_otel(source, target).found.cases) == 3
    monkeypatch.undo()
    assert load_set_files([target.set_file]).problems == ()


def test_a_set_file_larger_than_a_set_file_may_be_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.setfiles import documents

    monkeypatch.setattr(documents, "MAX_SET_FILE_BYTES", 500)
    source = recorded(tmp_path / "prod.jsonl")
    target = ImportTarget(tmp_path / "prod.yaml", tmp_path / "prod-answers.jsonl", "traces.prod", "Prod", "prod.jsonl")
    with pytest.raises(UsageError, match=r"writes nothing: the set file would be [\d,]+ bytes, larger than the 500 a set file may hold"):
        import_otel(source, target)
    assert not target.set_file.exists() and not target.answers_file.exists()


def test_a_document_made_in_memory_gets_the_readers_checks_of_its_data(tmp_path: Path) -> None:
    from evalkit.setfiles.documents import MAX_NESTING, FileSyntaxError, made_document

    with pytest.raises(FileSyntaxError, match="the key 3 is not text"):
        made_document(tmp_path / "s.yaml", {"prompts": [{"id": "a", "metadata": {3: "x"}}]})
    deep: object = "x"
    for _ in range(MAX_NESTING + 1):
        deep = [deep]
    with pytest.raises(FileSyntaxError, match="nested more than 64"):
        made_document(tmp_path / "s.yaml", {"prompts": deep})
    assert made_document(tmp_path / "s.yaml", {"prompts": []}).data == {"prompts": []}


def test_hidden_characters_are_written_as_escapes_and_read_back_as_they_were(tmp_path: Path) -> None:
    # A bidi override in a recorded prompt was written raw into the set file (and the answers
    # file): a reviewer's editor showed other words than the ones the case sends.
    import unicodedata

    path = tmp_path / "t.jsonl"
    sneaky = "Refund order \u202e4321-A\u202c now\u200b"
    with trace_file(path) as tracer:
        model_call(tracer, [text("user", sneaky)], answer(f"Done: {sneaky}"), extra={"gen_ai.provider.name": "op\u2066en\u2069ai"})
        model_call(tracer, [text("user", "go"), {"role": "assistant", "parts": [tool_call("c\u200d", "f", {sneaky: sneaky})]},
                            tool_response("c\u200d", sneaky)], answer("ok \U000e0041"))  # fmt: skip
        model_call(tracer, [text("user", "Plain: café 中文 🦜")], answer("Plain."))
    target = ImportTarget(tmp_path / "s.yaml", tmp_path / "s-answers.jsonl", "traces.s", "S", "t.jsonl")
    outcome = import_otel(path, target)
    for written in (target.set_file, target.answers_file):
        content = written.read_text(encoding="utf-8")
        assert [c for c in content if unicodedata.category(c) == "Cf"] == [], written
        assert "café 中文 🦜" in content or written == target.answers_file  # other text stays as it is (an emoji too)
    from evalkit.importers.writing import set_document

    assert yaml.load(target.set_file.read_text(encoding="utf-8"), Loader=yaml.SafeLoader) == set_document(outcome.found.cases, target)
    answers = [json.loads(line) for line in target.answers_file.read_text(encoding="utf-8").splitlines()]
    assert [a["text"] for a in answers] == [f"Done: {sneaky}", "ok \U000e0041", "Plain."]
    assert load_set_files([target.set_file]).problems == ()


def test_the_set_file_writes_wide_characters_as_they_are_and_hidden_ones_as_escapes(tmp_path: Path) -> None:
    # libyaml wrote every character past U+FFFF as an escape ("\U0001F99C"), whatever allow_unicode
    # said: a set file of emoji was unreadable as written. A line separator (U+2028) was left raw in
    # a single-quoted scalar, where an editor breaks the line or shows nothing.
    from evalkit.importers.writing import set_document, set_file_text

    target = ImportTarget(tmp_path / "s.yaml", tmp_path / "s-answers.jsonl", "traces.s", "S 🦜", "t.jsonl")
    said = "🦜 parrot 𠀋 C:\\U0001F99C \ue000 a\u2028b \U000e0041"  # a backslash-U typed, a private-use character
    cases = [ImportedCase("a", "", (Turn("user", said),), "Hi 🦜", answer_tool_calls=()),
             ImportedCase("b", "", (Turn("user", "q"), Turn("assistant", "x"), Turn("user", "🦜:\n- 🦜")), "🦜\t🦜")]  # fmt: skip
    written = set_file_text(cases, target)
    assert 'prompt: "🦜 parrot 𠀋 C:\\\\U0001F99C \ue000 a\\Lb \\U000E0041"' in written, written  # hidden: escaped
    assert "reference: Hi 🦜" in written and "name: S 🦜" in written and r'"🦜\t🦜"' in written
    assert "\u2028" not in written and "\U000e0041" not in written
    assert yaml.load(written, Loader=yaml.SafeLoader) == set_document(cases, target)


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=12), min_size=1, max_size=6))
@example(["a\u2028b 🦜", "\U000e0041\u202e"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_recorded_text_is_written_hiding_nothing_and_loads_back_exactly(tmp_path: Path, texts: list[str]) -> None:
    from evalkit.importers.writing import set_document, set_file_text
    from evalkit.printable import is_hidden

    target = ImportTarget(tmp_path / "s.yaml", tmp_path / "s-answers.jsonl", "traces.s", "S", "t.jsonl")
    cases = [ImportedCase(f"c{n}", "", (Turn("user", text + "x"),), text, answer_tool_calls=({"name": "f", "arguments": {text: text}},))
             for n, text in enumerate(texts)]  # fmt: skip
    written = set_file_text(cases, target)
    assert [c for c in written if c not in "\n" and is_hidden(c)] == []
    assert all(c in written for c in "".join(texts) if ord(c) > 0xFFFF and not is_hidden(c))  # readable as written
    assert yaml.load(written, Loader=yaml.SafeLoader) == set_document(cases, target)
