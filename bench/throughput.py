"""Throughput of `evalkit run` as a user measures it: a fresh process, wall from spawn to exit.

Every measurement spawns ``evalkit run bench.capitals --provider bench --concurrency C --json`` as a
child process against an OpenAI-compatible chat server in its own child process (fixed delay), in a
fresh project folder (SQLite store, no baseline). The set comes from a real installed provider:
tests/data/evalkit-bench-sets, pip-installed into a temporary folder put on ``PYTHONPATH``, sized by
``EVALKIT_BENCH_PROMPTS``; every prompt has three checks. Figures, per child process:

* wall: spawn to exit; CPU: user + system of the child (``os.wait4`` rusage); peak RSS: its max RSS;
* in flight: the most requests the server was answering at one moment;
* efficiency = N x delay / C / wall (1.0 is the physical limit);
* the same job through a bare asyncio HTTP/1.1 client (below, ~80 lines, also a child process),
  and evalkit's figures as ratios to it: absolute times move between machines, the ratio is the figure;
* the same job through one plain ``aiohttp.ClientSession`` ("aiohttp alone"): what the HTTP library
  costs by itself, so evalkit / bare splits into aiohttp / bare and evalkit / aiohttp;
* "the libraries' floor": aiohttp alone after importing every other library an ``evalkit run``
  loads (:data:`RUN_LIBRARIES`, which the design and issue 32 ask evalkit to use). No program built
  on those libraries can beat it, so it bounds from below what the issue's ratios can reach.

A scaling table runs 2,000 / 20,000 / 100,000 prompts at 1 ms server delay, then prints each stored
run again with ``evalkit show RUN_ID --json`` (wall and peak RSS of printing every case); "after last"
is how long the run's process took to exit once the server had written its last answer (the
verdict, the ``--json`` document, the exit: what a user waits for at the end). Each measurement is
repeated ``--repeats`` times (runs over 20,000 prompts once), the kinds compared taking turns (bare,
``--json``, terminal, bare, …) so that their figures come from the same minutes, and the best
(lowest) wall, CPU and RSS are printed: on a shared, loaded machine the best run is the one least
disturbed by others.

    python bench/throughput.py [--prompts 2000] [--delay 0.05] [--concurrency 16 64] [--repeats 3]
                               [--scale 2000 20000 100000] [--scale-delay 0.001] [--scale-concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ANSWER = "The capital of France is Paris."
KEY_VARIABLE = "EVALKIT_BENCH_KEY"


def request_body(number: int) -> bytes:
    """The chat completion both yardstick clients post for prompt ``number`` (evalkit's bench set asks the same)."""
    return json.dumps({
        "model": "bench-model",
        "messages": [{"role": "user", "content": f"Question number {number}: what is the capital of France?"}],
        "temperature": 0,
    }).encode()


_PARIS = re.compile(r"\bparis\b", re.IGNORECASE)


def passes(text: str) -> bool:
    """The bench set's three checks, applied by hand: contains "Paris", matches ``\\bparis\\b`` (any case), at most 20 words."""
    return "Paris" in text and _PARIS.search(text) is not None and len(text.split()) <= 20



def bare_client(base_url: str, prompts: int, concurrency: int) -> None:
    """The yardstick: the same job with a hand-rolled keep-alive HTTP/1.1 client, no framework.

    ``concurrency`` workers share a queue of prompts; each owns one connection, posts a chat
    completion, parses the JSON reply and applies the three checks. Prints the passed count.
    """
    host, _, rest = base_url.removeprefix("http://").partition(":")
    port, _, prefix = rest.partition("/")
    path = f"/{prefix}/chat/completions".encode()

    async def worker(queue: asyncio.Queue[int], passed: list[int]) -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        while not queue.empty():
            number = queue.get_nowait()
            body = request_body(number)
            writer.write(
                b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                b"Authorization: Bearer bench\r\n\r\n%s" % (path, host.encode(), len(body), body)
            )
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.decode("latin-1"))
            reply = json.loads(await reader.readexactly(length))
            text = reply["choices"][0]["message"]["content"]
            passed[0] += passes(text)
        writer.close()
        await writer.wait_closed()

    async def job() -> int:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for number in range(prompts):
            queue.put_nowait(number)
        passed = [0]
        await asyncio.gather(*(worker(queue, passed) for _ in range(concurrency)))
        return passed[0]

    print(json.dumps({"passed": asyncio.run(job())}))


#: The libraries besides aiohttp that ``evalkit run bench.capitals --json`` has imported when it
#: exits (read off ``sys.modules`` at exit at 5f0c3e6): the CLI, the domain types and their
#: converter, the store, the regex checks, the hooks and the plugin loading.
RUN_LIBRARIES = ("click", "attrs", "cattrs", "peewee", "sqlite3", "regex", "pluggy", "stevedore")


def aiohttp_client(base_url: str, prompts: int, concurrency: int, *, libraries: bool = False) -> None:
    """The library's own share: the same job as :func:`bare_client` through one plain
    ``aiohttp.ClientSession`` (the HTTP client evalkit uses), nothing else of evalkit.

    Printed beside the bare client so the ratio evalkit / bare splits into what aiohttp costs
    (aiohttp / bare) and what evalkit adds on top of it (evalkit / aiohttp). With ``libraries``,
    :data:`RUN_LIBRARIES` are imported first (and not used): the floor of any program built on
    them. Prints the passed count.
    """
    if libraries:
        import importlib

        for name in RUN_LIBRARIES:
            importlib.import_module(name)
    import aiohttp

    url = f"{base_url}/chat/completions"

    async def job() -> int:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for number in range(prompts):
            queue.put_nowait(number)
        passed = [0]
        connector = aiohttp.TCPConnector(limit=concurrency)
        headers = {"Authorization": "Bearer bench", "Content-Type": "application/json"}
        async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

            async def worker() -> None:
                while not queue.empty():
                    number = queue.get_nowait()
                    body = request_body(number)
                    async with session.post(url, data=body) as response:
                        if response.status != 200:
                            raise RuntimeError(f"HTTP {response.status}")
                        reply = json.loads(await response.read())
                    text = reply["choices"][0]["message"]["content"]
                    passed[0] += passes(text)

            await asyncio.gather(*(worker() for _ in range(concurrency)))
        return passed[0]

    print(json.dumps({"passed": asyncio.run(job())}))


def spawn(command: list[str], env: dict[str, str], cwd: Path, output: Path) -> dict[str, float]:
    """Run ``command`` as a child, output to ``output``; wall from spawn to exit, CPU and peak RSS from its rusage."""
    with output.open("wb") as sink:
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, cwd=cwd, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        exited_at = time.time()
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace") if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    if child.returncode != 0:
        raise RuntimeError(f"{command[:3]} exited {child.returncode}: {error[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024, "exited_at": exited_at}


class Spawner:
    """Runs every measured child from a small helper process, started before anything is measured.

    A child's peak RSS (``ru_maxrss``) also counts the process that forked it: Linux carries the
    forking process's high-water mark through fork (or vfork) and exec. This script parses the
    output of runs of up to 100,000 cases; a child forked from it reported this script's peak, not
    its own (a 100,000-prompt run "peaked" at 161 MiB, 74 MiB measured this way). The spawner
    only forks, waits and reports, so it stays small.
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--spawner"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def spawn(self, command: list[str], env: dict[str, str], cwd: Path, output: Path) -> dict[str, float]:
        """:func:`spawn`, run by the spawner process."""
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"command": command, "env": env, "cwd": str(cwd), "output": str(output)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def close(self) -> None:
        """Stop the spawner."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)


def serve_spawns() -> None:
    """The spawner's loop: one JSON request per line on stdin, one JSON reply per line on stdout."""
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = spawn(request["command"], request["env"], Path(request["cwd"]), Path(request["output"]))
        except RuntimeError as exc:
            reply = {"error": str(exc)}
        print(json.dumps(reply), flush=True)


#: The spawner every measurement uses (started by :func:`main`).
SPAWNER: Spawner | None = None


def run_child(command: list[str], env: dict[str, str], cwd: Path, output: Path) -> dict[str, float]:
    """A measured child: through the spawner when there is one, else forked from here."""
    if SPAWNER is not None:
        return SPAWNER.spawn(command, env, cwd, output)
    return spawn(command, env, cwd, output)


def write_project(project: Path, base_url: str) -> None:
    """The benchmark's ``evalkit.toml`` in ``project``: provider instance ``bench``, the openai
    generator against ``base_url``, its key in :data:`KEY_VARIABLE`."""
    (project / "evalkit.toml").write_text(
        f'[providers.bench]\nadapter = "openai"\nbase_url = "{base_url}"\nmodel = "bench-model"\n'
        f'api_key_env = "{KEY_VARIABLE}"\n'
    )


def measure(kind: str, *, plugins: Path, prompts: int, delay: float, concurrency: int, show: bool = False) -> dict[str, float]:
    """One measurement in a fresh project folder against a fresh server: ``kind`` is json, terminal,
    bare, aiohttp or floor (the yardsticks).

    ``show``: then print the stored run again with ``evalkit show RUN_ID --json`` (a fresh process
    too), and add its wall (``show_wall``) and peak RSS (``show_rss_mib``): printing every case."""
    from tests.support.chat_server import ChatServerProcess

    env = {**os.environ, "PYTHONPATH": str(plugins), "EVALKIT_BENCH_PROMPTS": str(prompts), KEY_VARIABLE: "bench"}
    env.pop("EVALKIT_CONFIG", None)
    # As on a user's machine, modules load from cached bytecode (written by the warm-up run):
    # with PYTHONDONTWRITEBYTECODE set (CI, tox) every run compiled ~70 modules, 0.13 CPU s each.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as folder, ChatServerProcess(delay=delay, text=ANSWER, quiet=True) as server:
        project = Path(folder)
        write_project(project, server.base_url)
        output = project / "output.txt"
        if kind in ("bare", "aiohttp", "floor"):
            env["PYTHONPATH"] = str(ROOT)
            command = [sys.executable, __file__, f"--{kind}", server.base_url, str(prompts), str(concurrency)]
        else:
            evalkit = str(Path(sys.executable).parent / "evalkit")
            command = [evalkit, "run", "bench.capitals", "--provider", "bench", "--concurrency", str(concurrency)]
            command += ["--json"] if kind == "json" else []
        figures = run_child(command, env, project, output)
        text = output.read_text()
        if kind == "terminal":
            figures["passed"] = prompts if f"({prompts}/{prompts})" in text else -1
            figures["output_bytes"] = len(text.encode())
        else:
            document = json.loads(text)
            figures["passed"] = document["passed"]
            if show:
                shown = run_child([command[0], "show", document["run_id"], "--json"], env, project, project / "shown.txt")
                if json.loads((project / "shown.txt").read_text())["answered"] != prompts:
                    raise RuntimeError("evalkit show did not print the run")
                figures["show_wall"], figures["show_rss_mib"] = shown["wall"], shown["rss_mib"]
            del document
    figures["in_flight"] = server.stats.get("max_in_flight", 0)
    # What the user waits for once the last answer is in: the verdict, the output, the exit.
    figures["after_last_answer"] = figures["exited_at"] - server.stats.get("last_answer_at", figures["exited_at"])
    if kind != "terminal" and figures["passed"] != prompts:
        raise RuntimeError(f"{kind}: only {figures['passed']} of {prompts} passed")
    return figures


def best_of(repeats: int, kinds: list[dict[str, object]], **common: object) -> list[dict[str, float]]:
    """``repeats`` rounds, each measuring every one of ``kinds`` (the keyword arguments of
    :func:`measure` that differ, e.g. ``{"kind": "bare"}``) in turn, so the figures compared are
    taken in the same minutes (the machine's speed drifts); per kind, the lowest wall, CPU and RSS
    and the highest in-flight count."""
    rounds = [[measure(**kind, **common) for kind in kinds] for _ in range(repeats)]  # type: ignore[arg-type]
    return [_best([measured[index] for measured in rounds]) for index in range(len(kinds))]


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    best = dict(runs[0])
    for key in ("wall", "cpu", "rss_mib", "show_wall", "show_rss_mib", "after_last_answer"):
        if key in best:
            best[key] = min(run[key] for run in runs)
    best["in_flight"] = max(run["in_flight"] for run in runs)
    return best


def install_plugins(folder: Path) -> Path:
    """pip-install the benchmark set's distribution into ``folder`` (like any third-party provider)."""
    from tests.support.distributions import install_into

    return install_into(folder / "plugins", "evalkit-bench-sets")


def main() -> None:
    """Install the set, measure evalkit and the bare client, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=int, nargs="*", default=[2000, 20000, 100000])
    parser.add_argument("--scale-delay", type=float, default=0.001)
    parser.add_argument("--scale-concurrency", type=int, default=64)
    parser.add_argument("--bare", nargs=3, metavar=("URL", "PROMPTS", "CONCURRENCY"), help=argparse.SUPPRESS)
    parser.add_argument("--aiohttp", nargs=3, metavar=("URL", "PROMPTS", "CONCURRENCY"), help=argparse.SUPPRESS)
    parser.add_argument("--floor", nargs=3, metavar=("URL", "PROMPTS", "CONCURRENCY"), help=argparse.SUPPRESS)
    parser.add_argument("--spawner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spawner:
        serve_spawns()
        return
    if args.bare:
        url, prompts, concurrency = args.bare
        bare_client(url, int(prompts), int(concurrency))
        return
    if args.aiohttp or args.floor:
        url, prompts, concurrency = args.aiohttp or args.floor
        aiohttp_client(url, int(prompts), int(concurrency), libraries=bool(args.floor))
        return

    global SPAWNER
    SPAWNER = Spawner()  # first, while this process is small (see Spawner)
    load = os.getloadavg()[0]
    print(f"{args.prompts:,} prompts x 3 checks, server delay {args.delay * 1000:g} ms, fresh process and SQLite store per run,")
    print(f"best of {args.repeats}; load average {load:.1f} on {os.cpu_count()} cores at the start")
    with tempfile.TemporaryDirectory() as folder:
        plugins = install_plugins(Path(folder))
        # One unmeasured run first: it writes the bytecode caches every measured run then reads.
        measure("json", plugins=plugins, prompts=20, delay=0.001, concurrency=4)
        print("bytecode cached by one unmeasured run first (as after a user's first run)")
        header = f"{'':<28}{'C':>4}{'wall s':>8}{'effic.':>8}{'CPU s/1k':>10}{'RSS MiB':>9}{'in flight':>10}"
        print(header)
        print("-" * len(header))
        for concurrency in args.concurrency:
            ideal = args.prompts * args.delay / concurrency
            common = {"plugins": plugins, "prompts": args.prompts, "delay": args.delay, "concurrency": concurrency}
            kinds = [{"kind": "bare"}, {"kind": "aiohttp"}, {"kind": "floor"}, {"kind": "json"}, {"kind": "terminal"}]
            bare, library, floor, as_json, terminal = best_of(args.repeats, kinds, **common)
            rows = [
                ("bare asyncio client", bare),
                ("aiohttp alone", library),
                ("the libraries' floor", floor),
                ("evalkit run --json", as_json),
                ("evalkit run (terminal)", terminal),
            ]
            for label, figures in rows:
                print(
                    f"{label:<28}{concurrency:>4}{figures['wall']:>8.2f}{ideal / figures['wall']:>8.3f}"
                    f"{figures['cpu'] / args.prompts * 1000:>10.3f}{figures['rss_mib']:>9.1f}{figures['in_flight']:>10}"
                )
            for label, figures in rows[1:]:
                print(
                    f"  {label} / bare: wall x{figures['wall'] / bare['wall']:.2f}, CPU x{figures['cpu'] / bare['cpu']:.2f},"
                    f" RSS x{figures['rss_mib'] / bare['rss_mib']:.2f}"
                    + ("" if figures is library else f"; / aiohttp alone: CPU x{figures['cpu'] / library['cpu']:.2f}")
                    + f"; efficiency x{bare['wall'] / figures['wall']:.3f}"
                )
        if args.scale:
            print()
            print(f"scaling: evalkit run --json, C={args.scale_concurrency}, server delay {args.scale_delay * 1000:g} ms, best of {args.repeats}")
            header = (
                f"{'prompts':>9}{'wall s':>9}{'CPU s/1k':>10}{'RSS MiB':>9}{'bare CPU s/1k':>15}{'after last s':>14}"
                f"{'show --json s':>15}{'show MiB':>10}"
            )
            print(header)
            print("-" * len(header))
            for prompts in args.scale:
                common = {"plugins": plugins, "prompts": prompts, "delay": args.scale_delay, "concurrency": args.scale_concurrency}
                repeats = args.repeats if prompts <= 20000 else 1
                figures, bare = best_of(repeats, [{"kind": "json", "show": True}, {"kind": "bare"}], **common)
                print(
                    f"{prompts:>9,}{figures['wall']:>9.2f}{figures['cpu'] / prompts * 1000:>10.3f}"
                    f"{figures['rss_mib']:>9.1f}{bare['cpu'] / prompts * 1000:>15.3f}{figures['after_last_answer']:>14.2f}"
                    f"{figures['show_wall']:>15.2f}{figures['show_rss_mib']:>10.1f}"
                )

    SPAWNER.close()


if __name__ == "__main__":
    main()
