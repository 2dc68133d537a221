"""Throughput and client CPU of the ``openai`` generator alone, against the test chat server.

The server runs in a child process, so ``time.process_time()`` here is the generator's CPU only::

    PYTHONPATH=core:plugins:. python bench/generator_openai.py --requests 2000 --concurrency 64 --delay 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from evalkit.answers import GenerationRequest
from evalkit_plugins.openai import OpenAIGenerator

from tests.support.chat_server import ChatServerProcess


async def _run(base_url: str, requests: int, concurrency: int) -> tuple[float, float, float]:
    generator = OpenAIGenerator(base_url=base_url, model="gpt-test", concurrency=concurrency, api_key_env="EVALKIT_BENCH_KEY")
    prompts = iter([GenerationRequest(f"Prompt number {i}: what is the capital of France?", system_prompt="Be brief.") for i in range(requests)])

    async def worker() -> None:
        for request in prompts:
            answer = await generator.agenerate(request)
            assert answer.text

    wall, cpu, kernel = time.perf_counter(), time.process_time(), os.times().system
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu, kernel = time.perf_counter() - wall, time.process_time() - cpu, os.times().system - kernel
    await generator.aclose()
    return wall, cpu, kernel


def main() -> None:
    """Print wall time, requests per second and CPU seconds (user + system) per 1,000 requests."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with ChatServerProcess(delay=args.delay) as server:
        for _ in range(args.repeat):
            wall, cpu, kernel = asyncio.run(_run(server.base_url, args.requests, args.concurrency))
            floor = args.requests / args.concurrency * args.delay
            print(
                f"{args.requests} requests at concurrency {args.concurrency}, {args.delay * 1000:g} ms server delay: "
                f"wall {wall:.2f} s (floor {floor:.2f} s, {args.requests / wall:.0f} req/s), "
                f"client CPU {cpu:.2f} s = {cpu / args.requests * 1000:.3f} s per 1,000 requests"
                f" ({kernel / args.requests * 1000:.3f} s of it in the OS)"
            )


if __name__ == "__main__":
    main()
