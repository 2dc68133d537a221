"""Trace files written by the OpenTelemetry SDK's own OTLP JSON file exporter, for `evalkit import otel`.

Spans carry the GenAI semantic conventions' attributes, named by the constants of the
``opentelemetry-semantic-conventions`` package; the SDK encodes them and its
``FileSpanExporter`` writes OTLP/JSON Lines, as an instrumented application would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.trace import Tracer


def text(role: str, *contents: str) -> dict[str, Any]:
    """A message of text parts, in the conventions' shape."""
    return {"role": role, "parts": [{"type": "text", "content": c} for c in contents]}


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def tool_response(call_id: str, response: Any) -> dict[str, Any]:
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]}


@contextmanager
def trace_file(path: Path, *, batch: bool = False, resource: dict[str, Any] | None = None) -> Iterator[Tracer]:
    """A tracer whose spans the SDK's file exporter writes to ``path`` (flushed on exit)."""
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-assistant", **(resource or {})}))
    exporter = FileSpanExporter(path)
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    try:
        yield provider.get_tracer("shop.assistant")
    finally:
        provider.shutdown()


def model_call(
    tracer: Tracer,
    sent: Sequence[dict[str, Any]],
    answered: Sequence[dict[str, Any]],
    *,
    model: str = "gpt-4o-mini-2024-07-18",
    system: str | None = None,
    operation: str = "chat",
    structured: bool = False,
    extra: dict[str, Any] | None = None,
) -> None:
    """One chat span as an instrumentation records it: messages as JSON strings (or, ``structured``,
    as the conventions' structured attribute values)."""
    with tracer.start_as_current_span(f"{operation} {model}") as span:
        span.set_attribute(gen_ai.GEN_AI_OPERATION_NAME, operation)
        span.set_attribute(gen_ai.GEN_AI_PROVIDER_NAME, "openai")
        span.set_attribute(gen_ai.GEN_AI_REQUEST_MODEL, model.rsplit("-2024", 1)[0])
        span.set_attribute(gen_ai.GEN_AI_RESPONSE_MODEL, model)
        encode = (lambda v: v) if structured else json.dumps
        span.set_attribute(gen_ai.GEN_AI_INPUT_MESSAGES, encode(list(sent)))
        span.set_attribute(gen_ai.GEN_AI_OUTPUT_MESSAGES, encode(list(answered)))
        if system is not None:
            span.set_attribute(gen_ai.GEN_AI_SYSTEM_INSTRUCTIONS, json.dumps([{"type": "text", "content": system}]))
        for key, value in (extra or {}).items():
            span.set_attribute(key, value)


def answer(*contents: str, calls: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The output messages of one choice: text parts, then tool calls."""
    parts = [{"type": "text", "content": c} for c in contents] + list(calls)
    return [{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if calls else "stop"}]
