"""OpenTelemetry GenAI spans into cases: files the SDK's own exporter wrote, and hostile ones."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from evalkit.errors import UsageError
from evalkit.importers import ImportTarget, import_otel
from evalkit.importers.otel import (
    NO_INPUT,
    OTHER_OPERATION,
    TOOL_CALLS_ONLY,
    UNREADABLE,
    Turn,
    cases_from_spans,
)
from evalkit.importers.otlp import MAX_VALUE_DEPTH, any_value, read_spans
from evalkit.setfiles import load_set_files

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
    found = cases_from_spans(read_spans(path).spans)
    assert found.cases == ()
    assert found.not_imported == {
        "spans holding images, audio or files, which a golden prompt cannot carry": 1,
        UNREADABLE: 1,
        NO_INPUT: 1,
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
    assert [p.prompt for p in golden.prompts] == ["When can I return a lamp?", "A-1234."]
    assert golden.prompts[0].system_prompt == "You are the shop's assistant."
    assert golden.prompts[0].tags == (f"trace:{outcome.found.cases[0].trace_id}", "provider:openai")
    assert [s.reason for s in loaded.skipped] == ["holds tool calls, which evalkit cannot send yet (imported from a trace; review it)"]
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
