"""The scriptable chat-completions test server itself, driven with the standard library's HTTP client."""

from __future__ import annotations

import asyncio
import http.client
import json
from urllib.parse import urlsplit

import aiohttp

from tests.support.chat_server import ChatServer, ChatServerProcess, Fault


def post(base_url: str, body: object, path: str = "/chat/completions", **headers: str) -> tuple[int, dict[str, str], bytes]:
    """POST ``body`` as JSON on a fresh connection; status, lower-cased headers, raw body."""
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    try:
        connection.request("POST", parts.path + path, json.dumps(body), {"Content-Type": "application/json", **headers})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


BODY = {"model": "gpt-a", "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "ping pong"}]}


def test_answers_like_chat_completions_and_records_the_request(chat_server: ChatServer) -> None:
    status, headers, raw = post(chat_server.base_url, BODY, authorization="Bearer k")
    completion = json.loads(raw)
    assert status == 200 and headers["content-type"] == "application/json"
    assert completion["object"] == "chat.completion" and completion["model"] == "gpt-a"
    assert completion["choices"] == [{"index": 0, "message": {"role": "assistant", "content": "ping pong"}, "finish_reason": "stop"}]
    assert completion["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    (seen,) = chat_server.requests
    assert (seen.number, seen.method, seen.path, seen.body) == (1, "POST", "/v1/chat/completions", BODY)
    assert seen.headers["authorization"] == "Bearer k"


def test_responder_model_and_the_unversioned_path(chat_server: ChatServer) -> None:
    chat_server.responder = lambda body: f"{len(body['messages'])} messages"
    chat_server.model = "gpt-test-2025-01-01"
    completion = json.loads(post(chat_server.base_url.removesuffix("/v1"), BODY)[2])
    assert completion["choices"][0]["message"]["content"] == "2 messages"
    assert completion["model"] == "gpt-test-2025-01-01"


def test_faults_by_number_and_queue_in_order(chat_server: ChatServer) -> None:
    chat_server.fail_at(2, Fault.other_model("gpt-elsewhere"))
    chat_server.fail_next(Fault.rate_limited(retry_after=7))
    chat_server.fail_next(Fault.http_error(502), count=2)
    chat_server.fail_next(Fault.empty_content())
    outcomes = [post(chat_server.base_url, BODY) for _ in range(6)]
    assert [status for status, _, _ in outcomes] == [429, 200, 502, 502, 200, 200]
    assert outcomes[0][1]["retry-after"] == "7"
    assert json.loads(outcomes[1][2])["model"] == "gpt-elsewhere"
    assert json.loads(outcomes[4][2])["choices"][0]["message"]["content"] == ""
    assert json.loads(outcomes[5][2])["choices"][0]["message"]["content"] == "ping pong"


def test_broken_bodies(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.garbage("<html>oops</html>"))
    chat_server.fail_next(Fault.no_choices())
    assert post(chat_server.base_url, BODY)[2] == b"<html>oops</html>"
    assert "choices" not in json.loads(post(chat_server.base_url, BODY)[2])


def test_drop_closes_without_a_response(chat_server: ChatServer) -> None:
    chat_server.fail_next(Fault.drop())
    try:
        post(chat_server.base_url, BODY)
    except http.client.RemoteDisconnected:
        pass
    else:
        raise AssertionError("the connection was not dropped")
    assert post(chat_server.base_url, BODY)[0] == 200


def test_every_request_counts_including_bad_ones(chat_server: ChatServer) -> None:
    assert post(chat_server.base_url, BODY, path="/models")[0] == 404
    assert post(chat_server.base_url, {"messages": []})[0] == 400
    assert chat_server.request_count == 2
    chat_server.reset()
    assert chat_server.request_count == 0 and chat_server.requests == []


def test_delays_overlap_across_concurrent_requests(chat_server: ChatServer) -> None:
    chat_server.delay = 0.2

    async def burst() -> list[int]:
        async def one(client: aiohttp.ClientSession) -> int:
            async with client.post(chat_server.base_url + "/chat/completions", json=BODY) as response:
                await response.read()
                return response.status

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=50)) as client:
            return list(await asyncio.gather(*(one(client) for _ in range(50))))

    assert asyncio.run(burst()) == [200] * 50
    assert chat_server.max_in_flight > 1  # the delays overlapped (counted, not timed: the machine may be loaded)


def test_standalone_process_prints_its_url_and_serves() -> None:
    with ChatServerProcess(model="gpt-standalone", text="fixed") as server:
        status, _, raw = post(server.base_url, BODY)
    completion = json.loads(raw)
    assert status == 200 and server.base_url.startswith("http://127.0.0.1:")
    assert (completion["model"], completion["choices"][0]["message"]["content"]) == ("gpt-standalone", "fixed")


def test_standalone_process_reports_its_figures_when_stopped() -> None:
    with ChatServerProcess(text="fixed") as server:
        for _ in range(3):
            assert post(server.base_url, BODY)[0] == 200
        assert server.stats == {}
    assert server.stats["requests"] == 3
    assert server.stats["max_in_flight"] == 1
    assert server.stats["connections"] >= 1
