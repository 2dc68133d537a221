"""Helpers for the judge-grader tests: a config whose judge instance is the local chat server,
scripted judge replies, and grading on one event loop."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from evalkit.answers import Answer
from evalkit.components import BoundGenerator
from evalkit.config import Config, ProviderInstance
from evalkit.grading import Grading
from evalkit.prompts import GoldenPrompt

from tests.support.chat_server import ChatServer

JUDGE_ALIAS = "judge-alias"
JUDGE_MODEL = "judge-model-2025-01-01"

#: The model under test when a test needs one: the built-in reference instance.
UNDER_TEST = BoundGenerator(generator=object(), adapter="reference", instance="reference", alias="reference", configured=True)


def judge_instance(base_url: str, name: str = "judge", **options: Any) -> ProviderInstance:
    """An ``openai`` provider instance pointed at ``base_url`` without retries."""
    settings: dict[str, Any] = {"base_url": base_url, "model": JUDGE_ALIAS, "max_attempts": 1, "api_key_env": ""}
    settings.update(options)
    return ProviderInstance(name, "openai", settings)


def judge_config(server: ChatServer | str, *extra: ProviderInstance, judge: str | None = "judge") -> Config:
    """A config with the judge instance ``judge`` at ``server`` (a ChatServer or a base URL) and ``extra`` instances."""
    url = server if isinstance(server, str) else server.base_url
    providers = {"judge": judge_instance(url)}
    providers.update({p.name: p for p in extra})
    return Config(judge=judge, providers=providers)


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def decision_reply(level: int, reason: str = "Because.") -> str:
    """A well-formed decision reply."""
    return json.dumps({"level": level, "reason": reason})


def replies(*texts: str) -> Callable[[Mapping[str, Any]], str]:
    """A responder answering ``texts`` in order, then repeating the last one."""
    queue = list(texts)

    def respond(body: Mapping[str, Any]) -> str:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


def by_task(mapping: Mapping[str, str]) -> Callable[[Mapping[str, Any]], str]:
    """A responder choosing the reply by a marker found in the request's user message."""

    def respond(body: Mapping[str, Any]) -> str:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        for marker, reply in mapping.items():
            if marker in user:
                return reply
        raise AssertionError(f"no scripted reply for {user[:80]!r}")

    return respond


def grade(grader: Any, pairs: Iterable[tuple[GoldenPrompt, Answer]]) -> list[Grading]:
    """Grade every pair on one event loop, then close the judge's connections."""

    async def main() -> list[Grading]:
        try:
            return [await grader.agrade(prompt, answer) for prompt, answer in pairs]
        finally:
            await grader.aclose()

    return asyncio.run(main())


def grade_one(grader: Any, prompt: GoldenPrompt, answer: Answer) -> Grading:
    """Grade one pair."""
    (grading,) = grade(grader, [(prompt, answer)])
    return grading


def chat_bodies(server: ChatServer) -> list[dict[str, Any]]:
    """The JSON bodies of the chat-completion requests the server received, in order."""
    return [r.body for r in server.requests if r.method == "POST"]


def user_message(body: Mapping[str, Any]) -> str:
    """The user message of one request body."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def system_message(body: Mapping[str, Any]) -> str | None:
    """The system message of one request body, if any."""
    return next((m["content"] for m in body["messages"] if m["role"] == "system"), None)


def check_names(grading: Grading) -> Sequence[str]:
    """The names of a grading's checks, in order."""
    return [c.name for c in grading.checks]
