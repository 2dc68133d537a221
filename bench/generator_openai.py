"""Throughput and client CPU of the ``openai`` generator against the HTTP clients it could use.

The same job — POST a chat completion, read the JSON answer — with at most C requests in flight,
against the test chat server in a child process, through:

* ``evalkit``: the ``openai`` generator itself (aiohttp through ``evalkit_plugins/_http.py``: one
  ``ClientSession`` per endpoint, the body read in chunks within ``max_response_bytes``, a total
  timeout per request), as a run uses it;
* ``aiohttp``: one plain ``aiohttp.ClientSession`` with a ``TCPConnector(limit=C)``, the body read
  whole: what the generator's own bookkeeping costs on top of aiohttp;
* ``httpx``: one ``httpx.AsyncClient`` with its own pool (httpcore), HTTP/1.1,
  ``Limits(max_connections=C, max_keepalive_connections=C)`` — httpx is no longer a dependency, so
  this client runs only where it is installed (``pip install httpx``);
* ``bare``: a hand-rolled asyncio client, one keep-alive connection per worker (the floor).

Each client runs in a fresh child process; its CPU (user + system) and peak RSS come from the
child's rusage, so imports count as they do for a user. A client whose library is not installed
is reported as such (``pip install httpx``), not skipped silently::

    PYTHONPATH=core:plugins:. python bench/generator_openai.py --requests 2000 --concurrency 16 64 --delay 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ("evalkit", "aiohttp", "httpx", "bare")
BODY = {"model": "gpt-test", "messages": [{"role": "system", "content": "Be brief."}]}


def _payload(number: int) -> bytes:
    messages = [*BODY["messages"], {"role": "user", "content": f"Prompt number {number}: what is the capital of France?"}]
    return json.dumps({**BODY, "messages": messages}).encode()


def _text(body: bytes) -> str:
    text = json.loads(body)["choices"][0]["message"]["content"]
    assert text
    return text


async def _workers(concurrency: int, requests: int, one: object) -> None:
    numbers = iter(range(requests))

    async def worker() -> None:
        for number in numbers:
            await one(number)  # type: ignore[operator]

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def run_evalkit(base_url: str, requests: int, concurrency: int) -> None:
    from evalkit.answers import GenerationRequest
    from evalkit_plugins.openai import OpenAIGenerator, OpenAIOptions

    generator = OpenAIGenerator(
        OpenAIOptions(base_url=base_url, model="gpt-test", concurrency=concurrency, api_key_env="EVALKIT_BENCH_KEY")
    )

    async def one(number: int) -> None:
        answer = await generator.agenerate(
            GenerationRequest(f"Prompt number {number}: what is the capital of France?", system_prompt="Be brief.")
        )
        assert answer.text

    await _workers(concurrency, requests, one)
    await generator.aclose()


async def run_aiohttp(base_url: str, requests: int, concurrency: int) -> None:
    import aiohttp

    url = f"{base_url}/chat/completions"
    headers = {"content-type": "application/json", "authorization": "Bearer bench"}
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(number: int) -> None:
            async with session.post(url, data=_payload(number)) as response:
                body = await response.read()
                assert response.status == 200
                _text(body)

        await _workers(concurrency, requests, one)


async def run_httpx(base_url: str, requests: int, concurrency: int) -> None:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"content-type": "application/json", "authorization": "Bearer bench"}
    async with httpx.AsyncClient(limits=limits, headers=headers, http2=False, timeout=httpx.Timeout(30.0, pool=None)) as client:
        url = f"{base_url}/chat/completions"

        async def one(number: int) -> None:
            response = await client.post(url, content=_payload(number))
            assert response.status_code == 200
            _text(response.content)

        await _workers(concurrency, requests, one)


async def run_bare(base_url: str, requests: int, concurrency: int) -> None:
    host, _, rest = base_url.removeprefix("http://").partition(":")
    port, _, prefix = rest.partition("/")
    path = f"/{prefix}/chat/completions".encode()
    numbers = iter(range(requests))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        for number in numbers:
            body = _payload(number)
            writer.write(
                b"POST " + path + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer bench\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
            _text(await reader.readexactly(length))
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def child(client: str, base_url: str, requests: int, concurrency: int) -> None:
    """Run one client's job in this (child) process and print its wall time as JSON."""
    started = time.perf_counter()
    asyncio.run(globals()[f"run_{client}"](base_url, requests, concurrency))
    print(json.dumps({"wall": time.perf_counter() - started}))


def available(client: str) -> str | None:
    """``None`` when the client can run here, else why not."""
    if client in ("aiohttp", "httpx") and importlib.util.find_spec(client) is None:
        return f"{client} is not installed here (pip install {client})"
    return None


def measure(client: str, base_url: str, requests: int, concurrency: int) -> dict[str, float]:
    """One child process: wall of the job, CPU and peak RSS of the whole process (rusage)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT / "plugins"), str(ROOT)]), "EVALKIT_BENCH_KEY": "bench"}
    command = [sys.executable, __file__, "--child", client, base_url, str(requests), str(concurrency)]
    child_process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child_process.pid, 0)
    out = child_process.stdout.read() if child_process.stdout else b""
    err = child_process.stderr.read() if child_process.stderr else b""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{client} failed: {err.decode(errors='replace')[-1500:]}")
    return {"wall": json.loads(out)["wall"], "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def main() -> None:
    """Print, per concurrency, each client's wall, efficiency, CPU per 1,000 requests and peak RSS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        client, url, requests, concurrency = args.child
        child(client, url, int(requests), int(concurrency))
        return
    sys.path[:0] = [str(ROOT / "core"), str(ROOT / "plugins"), str(ROOT)]
    from tests.support.chat_server import ChatServerProcess

    print(
        f"{args.requests:,} chat completions, server delay {args.delay * 1000:g} ms, each client in a fresh process, "
        f"best of {args.repeat}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start"
    )
    header = f"{'client':<10}{'C':>4}{'wall s':>8}{'effic.':>8}{'CPU s/1k':>10}{'RSS MiB':>9}"
    print(header)
    print("-" * len(header))
    with ChatServerProcess(delay=args.delay, quiet=True) as server:
        for concurrency in args.concurrency:
            ideal = args.requests * args.delay / concurrency
            for client in args.clients:
                missing = available(client)
                if missing is not None:
                    print(f"{client:<10}{concurrency:>4}  not measured: {missing}")
                    continue
                runs = [measure(client, server.base_url, args.requests, concurrency) for _ in range(args.repeat)]
                wall = min(r["wall"] for r in runs)
                cpu = min(r["cpu"] for r in runs)
                rss = min(r["rss"] for r in runs)
                print(f"{client:<10}{concurrency:>4}{wall:>8.2f}{ideal / wall:>8.3f}{cpu / args.requests * 1000:>10.3f}{rss:>9.1f}")


if __name__ == "__main__":
    main()
