"""``evaluate_set`` called as a library user calls it: from inside a running event loop (a Jupyter
cell, an async web handler) and with arguments of the wrong kind — each ends in a stored run or a
documented error with nothing stored, never an "evalkit bug"."""

from __future__ import annotations

import _signal
import asyncio
import contextlib
import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from evalkit.errors import UsageError
from evalkit.storage import close_repository, open_repository

if TYPE_CHECKING:
    from tests.support.chat_server import ChatServer


def _runs(url: str) -> list:
    repository = open_repository(url)
    try:
        return repository.recent_runs()
    finally:
        close_repository(repository)


@pytest.fixture
def slow_endpoint(tmp_path: Path) -> Iterator[ChatServer]:
    """A chat server that answers each request after 5 s (its ``delay`` may be changed), asked by
    provider instance ``slow`` of ``tmp_path``'s ``evalkit.toml`` (one attempt, a 120 s timeout)."""
    from tests.support.chat_server import ChatServer

    with ChatServer(delay=5.0) as server:
        (tmp_path / "evalkit.toml").write_text(
            f'[providers.slow]\nadapter = "openai"\nbase_url = "{server.base_url}"\nmodel = "m"\napi_key_env = ""\n'
            "max_attempts = 1\ntimeout = 120\n"
        )
        yield server


@pytest.fixture
def stuck_grader(tmp_path: Path, plugin_dists, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Grader ``hostile.stuck_grader`` installed, stuck on case ``two-plus-two``, run under a 1 s
    ``grade_timeout`` by ``tmp_path``'s ``evalkit.toml``, whose instance ``self`` answers with the
    references."""
    from evalkit import registry

    monkeypatch.syspath_prepend(plugin_dists("evalkit-hostile-sets"))
    registry.scan(refresh=True)  # an earlier test's scan did not see it
    monkeypatch.setenv("EVALKIT_HOSTILE_STUCK", "two-plus-two")
    (tmp_path / "evalkit.toml").write_text(
        'grade_timeout = 1\n[providers.self]\nadapter = "reference"\nmodel = "ref"\n'
    )


def test_a_run_inside_a_running_event_loop_completes(tmp_path: Path) -> None:
    """A Jupyter cell runs inside the kernel's loop: the run answered there, not "asyncio.run()
    cannot be called from a running event loop" after an empty run was stored as interrupted."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"

    async def cell() -> object:
        return evaluate_set("evalkit.smoke", database=url, cwd=tmp_path)

    outcome = asyncio.run(cell())
    assert outcome.run.status.value == "complete"
    assert outcome.exit_code(True) == 0
    assert [run.status.value for run in _runs(url)] == ["complete"]


def test_a_run_inside_a_running_event_loop_keeps_an_in_memory_store_whole(tmp_path: Path) -> None:
    """The whole call leaves the loop's thread, not only its answering: an in-memory SQLite store
    is one connection's, and cases written from another thread went to an empty database."""
    from evalkit import evaluate_set

    async def handler() -> object:
        return evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=tmp_path)

    outcome = asyncio.run(handler())
    assert outcome.run.status.value == "complete" and outcome.run.cases


def test_a_retrieval_run_inside_a_running_event_loop_completes(tmp_path: Path) -> None:
    """``evaluate_retrieval`` leaves the loop's thread too (its relevance judge asks on a loop)."""
    from evalkit import evaluate_retrieval

    async def cell() -> object:
        return evaluate_retrieval(
            "evalkit_stdlib.docs", "evalkit.lexical", deployment="demo", database="sqlite:///:memory:", cwd=tmp_path
        )

    assert asyncio.run(cell()).run.status.value == "complete"


@pytest.mark.parametrize("bad", [-1, 0, "4", 2.5, True, 10**7])
def test_a_concurrency_that_is_no_whole_number_in_range_is_refused_before_anything_is_stored(
    bad: object, tmp_path: Path
) -> None:
    """``concurrency="4"`` and ``2.5`` were internal errors ("an evalkit bug") after an empty run
    was stored as interrupted; ``-1`` and ``0`` ran as if they were a number of workers."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    with pytest.raises(UsageError, match=r"concurrency must be a whole number from 1 to 1,000,000, got ") as caught:
        evaluate_set("evalkit.smoke", concurrency=bad, database=url, cwd=tmp_path)
    assert caught.value.exit_code == 2
    assert not (tmp_path / "results.db").exists() or _runs(url) == []


@pytest.mark.parametrize("callback", ["on_start", "on_case", "on_stored"])
def test_a_callback_that_raises_is_the_callers_error_not_an_evalkit_bug(callback: str, tmp_path: Path) -> None:
    """The caller's own exception comes back, named as the callback's, and the run is marked
    interrupted; it was "internal error (an evalkit bug) during run …: ZeroDivisionError"."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"

    def broken(*_: object) -> None:
        raise ZeroDivisionError("the caller's own")

    with pytest.raises(ZeroDivisionError, match="the caller's own") as caught:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, keep_cases=False, **{callback: broken})
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    (note,) = caught.value.__notes__
    assert note.startswith(
        f"evalkit: raised by the {callback} callback during run {run.id}, which is marked interrupted"
    )


@pytest.mark.parametrize("callback", ["on_start", "on_case"])
def test_a_callback_that_calls_sys_exit_is_the_callers_exit_not_a_plugins(callback: str, tmp_path: Path) -> None:
    """``on_case=lambda case: sys.exit(1)`` (stop at the first failure) came back as RunInterrupted
    "interrupted by SystemExit: 1, which a plugin raised": the caller's exit, its code lost."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"

    def leave(*_: object) -> None:
        raise SystemExit(4)

    with pytest.raises(SystemExit) as caught:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, **{callback: leave})
    assert caught.value.code == 4
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    (note,) = caught.value.__notes__
    assert note.startswith(
        f"evalkit: raised by the {callback} callback during run {run.id}, which is marked interrupted"
    )


def test_an_evalkit_error_raised_after_the_lease_marks_the_run_interrupted_and_says_so(tmp_path: Path) -> None:
    """A generator refusing its configuration once it learns the run's concurrency (a ConfigError,
    evalkit's own kind) came back as it was, with the run left "running" and not a word of it."""
    from evalkit import evaluate_set
    from evalkit.components import BoundGenerator
    from evalkit.errors import ConfigError

    class Refusing:
        def generate(self, request: object) -> None:
            return None

        def use_concurrency(self, requests: int) -> None:
            raise ConfigError(f"a pool of 2 cannot take {requests} requests in flight")

    url = f"sqlite:///{tmp_path / 'results.db'}"
    bound = BoundGenerator(Refusing(), "refusing", "refusing", "m", True)
    with pytest.raises(ConfigError, match="a pool of 2 cannot take") as caught:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, bound_generator=bound, run_id="refused-1")
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    (note,) = caught.value.__notes__
    assert note.startswith(
        "evalkit: raised during run refused-1: 0 cases committed before it are kept, the run is marked interrupted; "
    )
    # a generator bound in code that no installed provider names: the call again, not `--provider refusing`
    assert note.endswith(
        'continue it with `evalkit.evaluate_set("evalkit.smoke", <the same arguments>, run_id="refused-1", resume=True)`'
    )


class _Generator:
    def generate(self, request: object) -> None:
        return None


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"set_identifier": 42}, "set_identifier"),
        ({"set_identifier": None}, "set_identifier"),
        ({"provider": _Generator()}, "provider"),
        ({"grader": None}, "grader"),
        ({"grader_options": [1]}, "grader_options"),
        ({"grader_options": {1: "judge-gpt"}}, "grader_options"),
        ({"config": "evalkit.toml"}, "config"),
        ({"database": Path("results.db")}, "database"),
        ({"hook_plugins": None}, "hook_plugins"),
        ({"hook_plugins": [None]}, "hook_plugins"),
        ({"hook_plugins": [5]}, "hook_plugins"),
        ({"hook_plugins": [object()]}, "hook_plugins"),
        ({"database": ""}, "database"),
        ({"database": "  "}, "database"),
        ({"run_id": 5}, "run_id"),
        ({"resume": "yes"}, "resume"),
        ({"shard": "1/2", "run_id": "ci-1"}, "shard"),
        ({"baseline": 5}, "baseline"),
        ({"on_case": 5}, "on_case"),
        ({"on_start": "print"}, "on_start"),
        ({"wait_ready": "30x"}, "wait_ready"),
        ({"wait_ready": None}, "wait_ready"),
        ({"wait_ready": -1}, "wait_ready"),
        ({"command_args": "--cache"}, "command_args"),
        ({"command_args": ["--repeats", 3]}, "command_args"),
        ({"baseline_file": "baseline.json"}, "baseline_file"),
        ({"model": ""}, "model"),
        ({"model": "  "}, "model"),
        ({"privacy": ""}, "privacy"),
    ],
)
def test_an_argument_of_the_wrong_kind_is_refused_by_name_before_anything_is_stored(
    arguments: dict, named: str, tmp_path: Path
) -> None:
    """They were AttributeErrors from string helpers, "'Gen' object is not iterable" from the
    "did you mean" of an unknown name, and (``on_case=5``, ``shard="1/2"``) errors after the run
    was stored."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    given = {"set_identifier": "evalkit.smoke", "database": url, "cwd": tmp_path, **arguments}
    with pytest.raises(UsageError, match=rf"^evaluate_set: {named} must be .*, got ") as caught:
        evaluate_set(**given)
    assert caught.value.exit_code == 2
    assert not (tmp_path / "results.db").exists() or _runs(url) == []


@pytest.mark.parametrize(("arguments", "named"), [({"question_set": 5}, "question_set"), ({"retriever": object()}, "retriever"),
                                                  ({"deployment": 5}, "deployment"), ({"baseline_file": "baseline.json"}, "baseline_file"),
                                                  ({"privacy": ""}, "privacy"), ({"judge_unjudged": ""}, "judge_unjudged")])  # fmt: skip
def test_a_retrieval_argument_of_the_wrong_kind_is_refused_by_name(arguments: dict, named: str, tmp_path: Path) -> None:
    from evalkit import evaluate_retrieval

    given = {
        "question_set": "evalkit_stdlib.docs",
        "retriever": "evalkit.lexical",
        "database": "sqlite:///:memory:",
        "cwd": tmp_path,
        **arguments,
    }
    with pytest.raises(UsageError, match=rf"^evaluate_retrieval: {named} must be .*, got "):
        evaluate_retrieval(**given)


@pytest.mark.parametrize("wait", [float("nan"), float("inf")])
def test_a_readiness_wait_that_is_no_number_of_seconds_is_refused_not_waited_forever(
    wait: float, tmp_path: Path
) -> None:
    """``wait_ready=float("nan")`` with a server that is not up asked it again every 5 s forever:
    no deadline is ever passed by NaN. Refused by name, before the generator is asked."""
    from evalkit import evaluate_set
    from evalkit.components import BoundGenerator

    class Down:
        def generate(self, request: object) -> str:
            return "never asked"

        def check_ready(self) -> None:
            raise ConnectionError("connection refused")

    bound = BoundGenerator(Down(), "local", "local", "m", True)
    with pytest.raises(UsageError, match=r"^evaluate_set: wait_ready must be a duration from 1 ms to 7 days .*, got (nan|inf)"):
        evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=tmp_path, bound_generator=bound, wait_ready=wait)


def test_wait_ready_is_read_by_the_rule_of_the_command_lines_wait_ready(evalkit_cli, tmp_path: Path) -> None:
    """``evaluate_set(wait_ready=…)`` had a rule of its own: any number from 0 (``1e12`` asked a
    server that never came up for 31,000 years) and no unit (``"90s"`` refused), where
    ``--wait-ready`` takes a duration from 1 ms to 7 days, with a unit or without. Both read it by
    one rule (``evalkit.components.read_wait_ready``), refusing in the same words; 0 asks once."""
    from evalkit import evaluate_set
    from evalkit.components import BoundGenerator
    from evalkit.errors import GeneratorUnavailableError

    class Down:
        def generate(self, request: object) -> str:
            return "never asked"

        def check_ready(self) -> None:
            raise ConnectionError("connection refused")

    given = {"database": "sqlite:///:memory:", "cwd": tmp_path}
    rule = "wait_ready must be a duration from 1 ms to 7 days (a number of seconds, or one with a unit s, m, h, d or w: 90s, 30m, 2h, 1d), got "
    for wait, shown in ((1e12, "1000000000000.0"), (0.0001, "0.0001")):
        with pytest.raises(UsageError) as caught:  # the run went ahead (no probe to wait for)
            evaluate_set("evalkit.smoke", wait_ready=wait, **given)
        assert str(caught.value) == f"evaluate_set: {rule}{shown}"
    given["bound_generator"] = BoundGenerator(Down(), "local", "local", "m", True)
    cli = evalkit_cli("run", "evalkit.smoke", "--database", "sqlite:///:memory:", "--wait-ready", "1e12")
    assert cli.code == 2 and f'--{rule.replace("_", "-")}"1e12"' in cli.stderr, cli.stderr
    with pytest.raises(GeneratorUnavailableError, match="is not ready after waiting 0.5 s"):
        evaluate_set("evalkit.smoke", wait_ready="0.5s", **given)
    with pytest.raises(GeneratorUnavailableError, match="is not ready, so nothing was run"):
        evaluate_set("evalkit.smoke", wait_ready=0, **given)


def test_cwd_may_be_given_as_text(tmp_path: Path) -> None:
    from evalkit import evaluate_set

    outcome = evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=str(tmp_path))
    assert outcome.run.status.value == "complete"


@pytest.mark.parametrize("call", ["evaluate_set", "evaluate_retrieval"])
@pytest.mark.parametrize("where", ["missing/deeper", "a-file"])
def test_a_cwd_that_is_no_folder_is_refused_and_nothing_is_made_there(call: str, where: str, tmp_path: Path) -> None:
    """``evaluate_set(cwd="/nonexistent/x")`` ran, and made ``/nonexistent/x/.evalkit/results.db``:
    a typo in ``cwd`` built folders and a store where nothing was."""
    import evalkit

    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    cwd = tmp_path / where
    first = {"evaluate_set": ("evalkit.smoke",), "evaluate_retrieval": ("evalkit_stdlib.docs", "evalkit.lexical")}[call]
    extra = {"deployment": "demo"} if call == "evaluate_retrieval" else {}
    with pytest.raises(UsageError, match=rf"^{call}: cwd must be an existing folder .*, got PosixPath ") as caught:
        getattr(evalkit, call)(*first, cwd=cwd, **extra)
    assert caught.value.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


NOTEBOOK_CELL = """\
import asyncio, sys
from evalkit import evaluate_set
from evalkit.errors import RunInterrupted

async def cell():
    return evaluate_set("evalkit.smoke", provider="slow", database=sys.argv[1])

loop = asyncio.new_event_loop()  # a notebook kernel's loop: Ctrl-C raises KeyboardInterrupt in the cell
try:
    loop.run_until_complete(cell())
    print("returned")
except RunInterrupted as interrupted:
    print("RunInterrupted:", interrupted)
"""


def test_ctrl_c_in_a_running_event_loop_stops_the_run_and_says_how_to_resume_it(
    tmp_path: Path, slow_endpoint: ChatServer
) -> None:
    """A real process: Ctrl-C reaches the main thread only, while the run goes on in its worker.
    Interrupting the cell must stop the run (marked interrupted, the resume command given), not
    leave it answering unwatched in the background."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "cell.py").write_text(NOTEBOOK_CELL)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    server = slow_endpoint
    server.delay = 60.0
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EVALKIT_")}
    child = subprocess.Popen([sys.executable, "cell.py", url], cwd=tmp_path, env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not any(r.path.endswith("/chat/completions") for r in server.requests) and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    output, _ = child.communicate(timeout=60)
    assert "RunInterrupted: interrupted: run " in output and "--resume" in output, output
    assert [run.status.value for run in _runs(url)] == ["interrupted"]


# --- The host program's own SIGALRM time limit ------------------------------------------------------


class HostTimeout(Exception):
    """What a host's ``@timeout`` decorator (a SIGALRM handler of its own) raises."""


@contextlib.contextmanager
def host_timeout(seconds: float) -> Iterator[Callable[..., None]]:
    """A host program's signal-based time limit: its handler raises :class:`HostTimeout`; the timer
    is set when the run begins (the ``on_start`` callback this yields), so it falls due inside it."""

    def expired(signum: int, frame: object) -> None:
        raise HostTimeout(f"the host's own {seconds:g} s limit")

    def start(*_: object) -> None:
        signal.setitimer(signal.ITIMER_REAL, seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    try:
        yield start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _host_timed_out(
    call: Callable[[Callable[..., None]], object], url: str, options: str = "", seconds: float = 0.3, after: str = ""
) -> None:
    """The host's exception out of ``call(on_start)``, with evalkit's note on it (its line ending
    with ``options``: the ``--provider`` and ``--grader`` the call gave, then its ``--database``, then
    ``after``: the ``--concurrency`` it gave); the run stored as interrupted; the host's
    handler in place again. ``seconds``: the host's limit."""
    with host_timeout(seconds) as on_start:
        with pytest.raises(HostTimeout, match="the host's own") as raised:
            call(on_start)
        assert signal.getsignal(signal.SIGALRM).__name__ == "expired"
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    assert raised.value.__notes__ == [
        f"evalkit: raised by the host's own SIGALRM handler during run {run.id}, which is marked interrupted; "
        f"continue it with `evalkit run evalkit.smoke{options} --database {url}{after} --resume {run.id}`"
    ]


@pytest.mark.usefixtures("stuck_grader")
def test_a_hosts_own_alarm_during_a_time_limited_grading_reaches_the_host_not_the_case(tmp_path: Path) -> None:
    """A host's ``@timeout`` that falls due while a grader runs under evalkit's own grade_timeout:
    evalkit held the host's timer back and set it again at 1 µs when the grading ended, so the
    host's exception was raised inside the grading's boundary and stored as that case's failed
    grading, and the run went on, complete. It must reach the host, the run marked interrupted."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    _host_timed_out(
        lambda on_start: evaluate_set(
            "evalkit.smoke",
            provider="self",
            grader="hostile.stuck_grader",
            concurrency=1,
            database=url,
            cwd=tmp_path,
            on_start=on_start,
        ),
        url,
        f" --provider self --grader hostile.stuck_grader --config {(tmp_path / 'evalkit.toml').resolve()}",
        after=" --concurrency 1",
    )


@pytest.mark.usefixtures("slow_endpoint")
def test_a_hosts_own_alarm_while_the_generator_answers_is_the_hosts_not_an_evalkit_bug(tmp_path: Path) -> None:
    """Falling due while the run waits for a slow endpoint, the host's exception came out of the
    event loop and was reported as "internal error (an evalkit bug)"."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    _host_timed_out(
        lambda on_start: evaluate_set(
            "evalkit.smoke", provider="slow", concurrency=1, database=url, cwd=tmp_path, on_start=on_start
        ),
        url,
        f" --provider slow --config {(tmp_path / 'evalkit.toml').resolve()}",
        after=" --concurrency 1",
    )


@pytest.mark.usefixtures("slow_endpoint")
def test_a_hosts_own_alarm_around_a_run_inside_a_running_event_loop_stops_the_run(tmp_path: Path) -> None:
    """Inside a running loop the run answers in a worker thread while the host's alarm rings in the
    caller's: the host's exception must stop the worker's run too (marked interrupted), not leave it
    answering unwatched in the background."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    with host_timeout(0.3) as on_start:

        async def handler() -> object:
            return evaluate_set(
                "evalkit.smoke", provider="slow", concurrency=1, database=url, cwd=tmp_path, on_start=on_start
            )

        with pytest.raises(HostTimeout, match="the host's own") as raised:
            asyncio.run(handler())
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    (note,) = raised.value.__notes__
    assert note.startswith(f"evalkit: interrupted: run {run.id}") and f"--resume {run.id}" in note, note


@pytest.mark.parametrize("committed", [False, True], ids=["before-its-commit", "after-its-commit"])
def test_a_hosts_own_alarm_inside_begin_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, committed: bool) -> None:
    """The host's alarm met inside begin_run (the one guard around it, _Lifecycle._store_header):
    before its commit nothing is stored and the host's exception is raised as it is, without a note
    naming a run; after it the run is stored, so it is marked interrupted and the note says so."""
    from evalkit import evaluate_set
    from evalkit.errors import HostAlarm
    from evalkit.storage.sql import runs

    real = runs.RunsAndCases.begin_run

    def stopped(self, run):  # noqa: ANN001, ANN202
        if committed:
            real(self, run)
        raise HostAlarm(HostTimeout("the host's own limit"))

    monkeypatch.setattr(runs.RunsAndCases, "begin_run", stopped)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    with pytest.raises(HostTimeout, match="the host's own limit") as raised:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path)
    if not committed:
        assert _runs(url) == [] and not getattr(raised.value, "__notes__", None)
        return
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    assert raised.value.__notes__ == [
        f"evalkit: raised by the host's own SIGALRM handler during run {run.id}, which is marked interrupted; "
        f"continue it with `evalkit run evalkit.smoke --database {url} --resume {run.id}`"
    ]


@contextlib.contextmanager
def host_timeout_set_during_the_run(seconds: float, install: str = "signal.signal") -> Iterator[Callable[..., None]]:
    """:func:`host_timeout`, but the host installs its handler during the run (from ``on_start``,
    with ``install``), not before it: evalkit did not see it when the run began."""

    def expired(signum: int, frame: object) -> None:
        raise HostTimeout(f"the host's own {seconds:g} s limit")

    def start(*_: object) -> None:
        (signal.signal if install == "signal.signal" else _signal.signal)(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, seconds)

    previous = signal.getsignal(signal.SIGALRM)
    try:
        yield start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.usefixtures("stuck_grader")
@pytest.mark.parametrize("install", ["signal.signal", "_signal.signal"])
def test_a_hosts_alarm_handler_installed_during_the_run_still_reaches_the_host(install: str, tmp_path: Path) -> None:
    """A host that installs its ``SIGALRM`` handler during the run (from a callback) replaced
    nothing evalkit had wrapped: its exception, falling due while a grader ran under grade_timeout,
    was stored as that case's failed grading and the run went on, complete. It reaches the host as
    a handler installed before the run does, and the host's handler is its own again after. Set
    through ``signal.signal`` it is wrapped as it is set; through the C function (or a reference to
    ``signal.signal`` taken before evalkit was imported), when the grading's limit takes the alarm."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    with host_timeout_set_during_the_run(0.3, install) as on_start:
        with pytest.raises(HostTimeout, match="the host's own") as raised:
            evaluate_set(
                "evalkit.smoke", provider="self", grader="hostile.stuck_grader", concurrency=1, database=url, cwd=tmp_path,
                on_start=on_start,
            )  # fmt: skip
        assert signal.getsignal(signal.SIGALRM).__name__ == "expired"
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    # Set around signal.signal, the handler is found only when a limit takes the alarm: by whom, evalkit cannot tell.
    by = (
        "the host's own SIGALRM handler"
        if install == "signal.signal"
        else "a SIGALRM handler set outside the caller's callbacks"
    )
    assert raised.value.__notes__[0].startswith(f"evalkit: raised by {by}"), raised.value.__notes__
    assert f" during run {run.id}, which is marked interrupted" in raised.value.__notes__[0]


@pytest.mark.usefixtures("slow_endpoint")
def test_a_hosts_alarm_handler_installed_during_the_run_while_the_generator_answers(tmp_path: Path) -> None:
    """Falling due while the run waits for a slow endpoint, outside any time limit of evalkit's."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    with host_timeout_set_during_the_run(0.3) as on_start:
        with pytest.raises(HostTimeout, match="the host's own") as raised:
            evaluate_set(
                "evalkit.smoke", provider="slow", concurrency=1, database=url, cwd=tmp_path, on_start=on_start
            )
        assert signal.getsignal(signal.SIGALRM).__name__ == "expired"
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    assert raised.value.__notes__[0].startswith(
        f"evalkit: raised by the host's own SIGALRM handler during run {run.id}"
    )


@pytest.mark.parametrize("callback", ["on_case", "on_stored"])
@pytest.mark.parametrize("call", ["signal.signal", "signal.setitimer", "signal.alarm"])
def test_a_hosts_alarm_set_from_a_callback_while_evalkits_limits_hold_sigalrm_is_refused_aloud(
    callback: str, call: str, tmp_path: Path
) -> None:
    """``on_case`` and ``on_stored`` are called while the run answers, where evalkit's time limits
    hold ``SIGALRM``: the host's handler and timer set there were quietly not applied (its own time
    limit never rang, and ``signal.signal`` returned evalkit's private handler). Refused aloud:
    :class:`~evalkit.errors.AlarmHeld` naming the call and the callback, raised in the callback, so
    the run stops, marked interrupted, as for any callback that raises."""
    from evalkit import evaluate_set
    from evalkit.errors import AlarmHeld

    def expired(signum: int, frame: object) -> None:
        raise HostTimeout("the host's own limit")

    calls = {
        "signal.signal": lambda: signal.signal(signal.SIGALRM, expired),
        "signal.setitimer": lambda: signal.setitimer(signal.ITIMER_REAL, 0.2),
        "signal.alarm": lambda: signal.alarm(1),
    }
    url = f"sqlite:///{tmp_path / 'results.db'}"
    previous = signal.getsignal(signal.SIGALRM)
    try:
        with pytest.raises(AlarmHeld, match=rf"^{call}\(.*\) in the {callback} callback was not applied: ") as raised:
            evaluate_set(
                "evalkit.smoke", database=url, cwd=tmp_path, concurrency=1, **{callback: lambda *_: calls[call]()}
            )
        assert signal.getsignal(signal.SIGALRM) is previous and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    (run,) = _runs(url)
    assert run.status.value == "interrupted"
    assert "set it before calling evalkit, or from on_start" in str(raised.value)
    assert raised.value.__notes__[0].startswith(f"evalkit: raised by the {callback} callback during run {run.id}")


def _alarmist_grader(folder: Path, install: str, grading_s: float = 0.1) -> Path:
    """A distribution whose grader ``alarmist.grader`` sets up ``SIGALRM`` for itself as it is made
    (outside any time limit of evalkit's): ``install`` is ``handler`` (its own handler, raising
    ``PluginAlarm``, and a 0.2 s timer) or ``stop`` (``signal.alarm(0)``: it stops the timer); each
    grading takes ``grading_s``."""
    from tests.support.distributions import write_distribution

    source = f"""
import signal, time
from evalkit import Grading

class PluginAlarm(Exception):
    pass

def rang(signum, frame):
    raise PluginAlarm("the plugin's own alarm")

class Grader:
    yardstick = "alarmist:v1"

    def __init__(self):
        if {install!r} == "handler":
            signal.signal(signal.SIGALRM, rang)
            signal.setitimer(signal.ITIMER_REAL, 0.2)
        else:
            signal.alarm(0)

    def grade(self, prompt, answer):
        time.sleep({grading_s!r})
        return Grading(1.0, True, yardstick=self.yardstick)
"""
    module = f"alarmist_{install}"  # a module of its own: one imported by an earlier test is not imported again
    entry = {"evalkit.graders": {"alarmist.grader": f"{module}:Grader"}}
    return write_distribution(folder, "alarmist-grader", "1.0", entry, {f"{module}.py": source})


def test_a_plugins_own_alarm_handler_during_a_library_run_is_not_taken_for_the_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grader that installs its own ``SIGALRM`` handler and timer as it is made (outside evalkit's
    time limits) had its handler adopted as the host's: its exception stopped the run and reached
    the host "raised by the host's own SIGALRM handler" (under ``evalkit run``, "internal error (an
    evalkit bug)"), and its handler stayed the host process's after the run. A plugin call's
    ``signal.signal``, ``setitimer`` and ``alarm`` for ``SIGALRM`` are not applied during a run, as
    inside evalkit's limits: the run completes, the host's handler is its own."""
    from evalkit import evaluate_set, registry

    monkeypatch.syspath_prepend(str(_alarmist_grader(tmp_path / "site", "handler")))
    registry.scan(refresh=True)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    previous = signal.getsignal(signal.SIGALRM)
    try:
        outcome = evaluate_set("evalkit.smoke", grader="alarmist.grader", concurrency=1, database=url, cwd=tmp_path)
        assert signal.getsignal(signal.SIGALRM) is previous and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert outcome.run.status.value == "complete"
    assert [(case.passed, case.error) for case in outcome.run.cases] == [(True, None)] * 7


def test_a_plugin_that_stops_the_timer_during_a_library_run_leaves_the_hosts_limit_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grader that calls ``signal.alarm(0)`` as it is made switched the host's own time limit off:
    the run went on past it, complete. The host's limit still falls due, its exception the host's."""
    from evalkit import evaluate_set, registry

    # The host's timer starts before the call: it must fall due after the run is stored, however
    # long a loaded machine takes to get there (a 0.3 s limit fell due before it, under load), and
    # before the run's 7 gradings of 1 s end.
    monkeypatch.syspath_prepend(str(_alarmist_grader(tmp_path / "site", "stop", grading_s=1.0)))
    registry.scan(refresh=True)
    url = f"sqlite:///{tmp_path / 'results.db'}"

    def started_before_the_call(on_start: Callable[..., None]) -> object:
        on_start()  # the host's timer runs before evalkit is called, as a @timeout's does
        return evaluate_set("evalkit.smoke", grader="alarmist.grader", concurrency=1, database=url, cwd=tmp_path)

    _host_timed_out(started_before_the_call, url, " --grader alarmist.grader", seconds=3.0, after=" --concurrency 1")


def test_a_hosts_alarm_set_from_on_check_while_the_checks_limits_hold_sigalrm_is_refused_aloud(
    tmp_path: Path, plugin_dists, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``on_check`` hears the check of a streamed set from inside its time limits (each prompt is
    produced within set_load_timeout): a handler it set there was quietly not applied either."""
    from evalkit import evaluate_set, registry
    from evalkit.errors import AlarmHeld

    monkeypatch.syspath_prepend(plugin_dists("evalkit-streamed-sets"))
    registry.scan(refresh=True)
    monkeypatch.setenv("EVALKIT_STREAMED_PROMPTS", "2000")
    previous = signal.getsignal(signal.SIGALRM)

    def heard(progress: object) -> None:
        if progress.checked == 1000:  # type: ignore[attr-defined]  (a CheckProgress)
            signal.signal(signal.SIGALRM, lambda *_: None)

    url = f"sqlite:///{tmp_path / 'results.db'}"
    with pytest.raises(AlarmHeld, match=r"^signal\.signal\(SIGALRM, …\) in the on_check callback was not applied: "):
        evaluate_set("streamed.capitals", database=url, cwd=tmp_path, on_check=heard)
    assert signal.getsignal(signal.SIGALRM) is previous
    assert not (tmp_path / "results.db").exists() or _runs(url) == []  # refused at the check: nothing stored


def test_a_callback_that_blocks_every_signal_around_a_thread_start_is_not_refused_aloud(tmp_path: Path) -> None:
    """Blocking every signal while a thread starts (so the thread inherits the mask) is common code,
    not a time limit of the caller's: from ``on_case`` it is not an :class:`~evalkit.errors.AlarmHeld`;
    the mask keeps SIGALRM out while evalkit's limits hold it, and the run completes."""
    from evalkit import evaluate_set

    blocked: list[bool] = []

    def on_case(case: object) -> None:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        try:
            blocked.append(signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, []))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    outcome = evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=tmp_path, on_case=on_case)
    assert outcome.run.status.value == "complete"
    assert blocked == [False] * 7
    assert signal.SIGALRM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_a_failed_shard_is_continued_as_that_shard_not_resumed(tmp_path: Path) -> None:
    """A shard's notes and errors said `--resume RUN_ID`, which answers the whole run and is
    refused while another shard answers it; the CLI's own line gave the shard's command. Through
    the library, the command names the shard and the run again (call again with them)."""
    from evalkit import evaluate_set
    from evalkit.errors import RunInterrupted
    from evalkit.run.plan import Shard

    url = f"sqlite:///{tmp_path / 'results.db'}"

    def broken(*_: object) -> None:
        raise ZeroDivisionError("the caller's own")

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(ZeroDivisionError) as caught:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, shard=Shard(1, 2), run_id="ci-1", on_case=broken)
    assert caught.value.__notes__[0].endswith(
        f"continue it with `evalkit run evalkit.smoke --database {url} --shard 1/2 --run-id ci-1`"
    )
    with pytest.raises(RunInterrupted) as interrupted:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, shard=Shard(2, 2), run_id="ci-2", on_case=ctrl_c)
    assert str(interrupted.value).endswith(
        f"continue it with `evalkit run evalkit.smoke --database {url} --shard 2/2 --run-id ci-2`"
    )
    stopped = evaluate_set(
        "evalkit.smoke", database=url, cwd=tmp_path, shard=Shard(1, 2), run_id="ci-3", max_requests=1
    )
    (note,) = [n for n in stopped.notes if "reached after" in n]
    assert f"resume it with: evalkit run evalkit.smoke --database {url} --shard 1/2 --run-id ci-3 --max-requests " in note, note


def test_a_run_whose_lease_another_process_took_over_stops_and_leaves_it_to_that_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process whose heartbeat went stale (suspended, a store locked past the stale limit) has its
    lease taken over; it went on answering every case and closed the run the other process held.
    It stops at its next case, with the run's status left to the process that holds it."""
    import sqlite3
    import time

    from evalkit import evaluate_set
    from evalkit.errors import RunTakenOver
    from evalkit.leases import LeaseKeeper

    monkeypatch.setattr(LeaseKeeper.__init__, "__defaults__", (0.05,))  # a heartbeat every 50 ms
    path = tmp_path / "results.db"
    seen: list[str] = []

    def taken_over_after_the_first(case: object) -> None:
        seen.append(case.case_id)  # type: ignore[attr-defined]
        if len(seen) == 1:  # another process takes the lease over, as it would a stale one
            with sqlite3.connect(path) as connection:
                connection.execute(
                    "UPDATE evalkit_run_lease SET owner_host = 'other-host', owner_pid = 1, owner_token = 'other'"
                )
            time.sleep(0.5)

    with pytest.raises(RunTakenOver, match=r"another process took over run lost-1 \(the whole run\)") as caught:
        evaluate_set(
            "evalkit.smoke",
            database=f"sqlite:///{path}",
            cwd=tmp_path,
            run_id="lost-1",
            on_case=taken_over_after_the_first,
        )
    assert caught.value.exit_code == 3
    assert len(seen) == 1, "no case is answered for a run this process no longer holds"
    (run,) = _runs(f"sqlite:///{path}")
    assert run.status.value == "running"
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT owner_token FROM evalkit_run_lease").fetchall() == [("other",)]


def test_a_plugins_answer_or_turn_with_more_cached_than_prompt_tokens_is_set_aside_with_a_note(tmp_path: Path) -> None:
    """An endpoint's reply reporting 50 cached of 10 prompt tokens has its usage set aside with a
    note (evalkit.answers.reported_usage); a generator plugin's Answer or Turn reporting the same
    was stored as it was, its cost counted from counts that cannot both be true."""
    from evalkit import Answer, Assertion, GoldenPrompt, GoldenPromptSet, Usage, evaluate_set
    from evalkit.answers import Turn
    from evalkit.components import BoundGenerator

    from tests.test_conversations import agent

    impossible = Usage(input_tokens=10, output_tokens=2, total_tokens=12, cached_input_tokens=50)

    class Plugin:
        def generate(self, request: object) -> Answer:
            return Answer(text="hello", model="m-1", usage=impossible)

        def chat(self, request: object) -> Turn:
            return Turn(text="hello", model="m-1", usage=impossible)

    said = Assertion.contains("hello")
    golden = GoldenPromptSet(
        identifier="t.usage",
        name="U",
        prompts=[GoldenPrompt(id="plain", prompt="Say hello.", assertions=[said]), agent(said)],
    )
    outcome = evaluate_set(
        golden,
        database="sqlite:///:memory:",
        cwd=tmp_path,
        bound_generator=BoundGenerator(Plugin(), "local", "local", "m", True),
    )
    assert outcome.run.status.value == "complete"
    assert [(case.case_id, case.passed, case.usage) for case in outcome.run.cases] == [
        ("plain", True, None),
        ("agent", True, None),
    ]
    assert (
        '2 replies from provider instance "local" reported a usage evalkit cannot count (the first: cached_prompt_tokens 50, '
        "more than its prompt_tokens 10): each such reply's usage is counted as unreported"
    ) in "\n".join(outcome.notes)


def _faq(tmp_path: Path) -> Path:
    path = tmp_path / "faq.yaml"
    path.write_text(
        "identifier: myapp.faq\nname: FAQ\nprompts:\n  - id: a\n    prompt: Say hello.\n    assertions: [{contains: hello}]\n"
    )
    return path


@pytest.mark.parametrize(
    ("call", "arguments", "named"),
    [
        ("validate_prompt_set", lambda faq: ("myapp.faq",), "golden_set"),
        ("validate_prompt_set", lambda faq: (None,), "golden_set"),
        ("validate_prompt_set", lambda faq: (faq, "contains"), "kinds"),
        ("validate_prompt_set", lambda faq: (faq, None, None, 5), "progress"),
        ("validate_question_set", lambda faq: (faq,), "question_set"),
        ("validate_question_set", lambda faq: (None,), "question_set"),
    ],
)
def test_the_validation_calls_refuse_an_argument_of_the_wrong_kind_by_name(
    call: str, arguments: Callable, named: str, tmp_path: Path
) -> None:
    """They were AttributeErrors ("'str' object has no attribute 'identifier'") and TypeErrors
    ("'int' object is not callable") from inside the survey."""
    import evalkit
    from evalkit.setfiles import load_set_files

    (faq,) = load_set_files([_faq(tmp_path)]).prompt_sets
    with pytest.raises(UsageError, match=rf"^{call}: {named} must be .*, got "):
        getattr(evalkit, call)(*arguments(faq))


@pytest.mark.parametrize("given", ["faq.yaml", Path("faq.yaml"), None, [5]])
def test_load_set_files_refuses_what_is_not_a_list_of_paths(
    given: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load_set_files("faq.yaml")`` read one file per character (``f``, ``a``, ``q``…) and said
    none of them existed; a ``Path`` or ``None`` was a raw TypeError."""
    from evalkit.setfiles import load_set_files

    _faq(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"^load_set_files: files must be a list of paths \(str or Path\)"):
        load_set_files(given)  # type: ignore[arg-type]
    assert [s.identifier for s in load_set_files(p for p in ["faq.yaml"]).prompt_sets] == ["myapp.faq"]


def test_a_stopped_run_of_a_set_built_in_code_says_the_library_call_that_continues_it(tmp_path: Path) -> None:
    """A run of a GoldenPromptSet built in Python (no entry point, no set file) said "continue it
    with `evalkit run mine.inline --resume ID`", a command that cannot find the set (exit 2,
    Unknown golden prompt set). It names the library call, with the run id and resume=True (a
    shard's shard= and run_id=, a stopped budget's higher max_requests=), and that call finishes it."""
    import evalkit
    from evalkit import evaluate_set
    from evalkit.errors import RunInterrupted
    from evalkit.run.plan import Shard

    url = f"sqlite:///{tmp_path / 'results.db'}"
    inline = _inline_set(6)

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as interrupted:
        evaluate_set(inline, database=url, cwd=tmp_path, run_id="in-1", on_case=ctrl_c)
    call = 'evalkit.evaluate_set(<the in-code set "mine.inline">, <the same arguments>, run_id="in-1", resume=True)'
    assert str(interrupted.value).endswith(f"continue it with `{call}`"), str(interrupted.value)
    assert "evalkit run" not in str(interrupted.value)
    assert (
        evalkit.evaluate_set(inline, database=url, cwd=tmp_path, run_id="in-1", resume=True).run.status.value
        == "complete"
    )

    with pytest.raises(RunInterrupted) as interrupted:
        evaluate_set(inline, database=url, cwd=tmp_path, shard=Shard(1, 2), run_id="in-2", on_case=ctrl_c)
    assert str(interrupted.value).endswith(
        '(<the in-code set "mine.inline">, <the same arguments>, shard=Shard(1, 2), run_id="in-2")`'
    )
    stopped = evaluate_set(inline, database=url, cwd=tmp_path, run_id="in-3", max_requests=1)
    (note,) = [n for n in stopped.notes if "reached after" in n]
    assert note.endswith(
        'resume it with: evalkit.evaluate_set(<the in-code set "mine.inline">, <the same arguments>, run_id="in-3", resume=True, max_requests=6)'
    ), note
    # an installed set keeps the CLI's command
    with pytest.raises(RunInterrupted) as interrupted:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="in-4", on_case=ctrl_c)
    assert str(interrupted.value).endswith(
        f"continue it with `evalkit run evalkit.smoke --database {url} --resume in-4`"
    )


@pytest.mark.parametrize("stop", ["ctrl-c", "max-requests"])
def test_a_stopped_library_run_of_the_configured_repeats_is_continued_with_them_by_the_same_arguments(
    tmp_path: Path, stop: str
) -> None:
    """``[run] repeats = 3``, ``evaluate_set`` called without ``repeats=`` and interrupted (or stopped
    by ``max_requests``): its line said ``evalkit.evaluate_set(<the in-code set …>, <the same
    arguments>, run_id=…, resume=True)``; once the configuration said otherwise, the same arguments
    answered another number of times and were refused ("use --repeats 3"). A call that gives no
    repeats continues a run with its own; another number given is still refused."""
    import re

    from evalkit import evaluate_set
    from evalkit.errors import RunInterrupted

    url = f"sqlite:///{tmp_path / 'results.db'}"
    config = tmp_path / "evalkit.toml"
    config.write_text("[run]\nrepeats = 3\n")
    inline = _inline_set(6)

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    if stop == "ctrl-c":
        with pytest.raises(RunInterrupted) as interrupted:
            evaluate_set(inline, database=url, cwd=tmp_path, run_id="rp-1", on_case=ctrl_c)
        said = str(interrupted.value)
    else:
        (said,) = [
            n
            for n in evaluate_set(inline, database=url, cwd=tmp_path, run_id="rp-1", max_requests=3).notes
            if "reached after" in n
        ]
    assert '<the same arguments>, run_id="rp-1", resume=True' in said, said
    again = {name: int(value) for name, value in re.findall(r"(max_requests)=(\d+)", said)}
    config.write_text("[run]\nrepeats = 1\n")
    with pytest.raises(
        UsageError, match="run rp-1 answered each prompt with repeats=3; this process would answer with repeats=1"
    ):
        evaluate_set(inline, database=url, cwd=tmp_path, run_id="rp-1", resume=True, repeats=1, **again)
    resumed = evaluate_set(inline, database=url, cwd=tmp_path, run_id="rp-1", resume=True, **again)
    assert resumed.run.status.value == "complete"
    assert {case.answers for case in resumed.run.cases} == {3}
    assert (
        "Each prompt is answered 3 times, as the run continued was (repeats=3), not 1 as the configuration now says."
        in resumed.notes
    )


def test_a_run_another_thread_of_this_process_answers_is_refused_naming_this_process(tmp_path: Path) -> None:
    """Two threads of one program calling evaluate_set on one run: the second was told the run "is
    being answered by another process", held by its own pid, and that a lease with no heartbeat for
    90 s is taken over (it never is: this process beats it). It says another call of this process."""
    import os
    import threading

    from evalkit import evaluate_set
    from evalkit.storage.values import RunBusyError

    url = f"sqlite:///{tmp_path / 'results.db'}"
    answering, release = threading.Event(), threading.Event()

    def hold(_: object) -> None:
        answering.set()
        release.wait(30)

    first = threading.Thread(
        target=lambda: evaluate_set(
            "evalkit.smoke", database=url, cwd=tmp_path, run_id="busy-1", on_case=hold, concurrency=1
        )
    )
    first.start()
    try:
        assert answering.wait(30)
        with pytest.raises(RunBusyError) as refused:
            evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="busy-1", resume=True)
    finally:
        release.set()
        first.join(30)
    said = str(refused.value)
    assert said.startswith("run busy-1 is being answered by another call in this process (another thread): "), said
    assert f"held by this process, pid {os.getpid()} on host " in said and "another process" not in said
    assert "taken over" not in said
    assert [run.status.value for run in _runs(url)] == ["complete"]


@pytest.mark.parametrize(
    ("call", "arguments", "named"),
    [
        ("estimate_set", {"database": ""}, "database"),
        ("estimate_set", {"database": Path("results.db")}, "database"),
        ("estimate_set", {"set_identifier": 42}, "set_identifier"),
        ("estimate_set", {"grader": None}, "grader"),
        ("estimate_set", {"provider": object()}, "provider"),
        ("estimate_set", {"grader_options": [1]}, "grader_options"),
        ("estimate_set", {"config": "evalkit.toml"}, "config"),
        ("estimate_set", {"cwd": 5}, "cwd"),
        ("estimate_set", {"on_check": 5}, "on_check"),
        ("estimate_set", {"on_estimate": 5}, "on_estimate"),
        ("regrade_run", {"database": ""}, "database"),
        ("regrade_run", {"database": "  "}, "database"),
        ("regrade_run", {"run_id": None}, "run_id"),
        ("regrade_run", {"grader": 5}, "grader"),
        ("regrade_run", {"grader_options": [1]}, "grader_options"),
        ("regrade_run", {"config": "evalkit.toml"}, "config"),
        ("regrade_run", {"cwd": 5}, "cwd"),
        ("regrade_run", {"on_case": 5}, "on_case"),
        ("regrade_run", {"on_start": "print"}, "on_start"),
        ("regrade_run", {"on_check": 5}, "on_check"),
        ("regrade_run", {"command_args": "--grader"}, "command_args"),
        ("regrade_run", {"command_args": ["--grader", 5]}, "command_args"),
    ],
)
def test_the_estimate_and_regrade_calls_refuse_an_argument_of_the_wrong_kind_as_evaluate_set_does(
    call: str, arguments: dict, named: str, tmp_path: Path
) -> None:
    """They checked nothing first: ``database=""`` estimated from (and re-graded into) the default
    ``.evalkit/results.db`` — a re-grade made it, empty, to say the run was not in it —,
    ``command_args="--grader"`` made a resume command of its characters, and the rest were
    AttributeErrors and TypeErrors from inside. Refused by name as ``evaluate_set`` refuses them,
    nothing made or stored."""
    from evalkit import evaluate_set
    from evalkit.run.estimate import estimate_set
    from evalkit.run.regrade import regrade_run

    url = f"sqlite:///{tmp_path / 'results.db'}"
    source = evaluate_set("evalkit.smoke", privacy="full", database=url, cwd=tmp_path).run.id
    first = {"estimate_set": {"set_identifier": "evalkit.smoke"}, "regrade_run": {"run_id": source}}[call]
    given = {**first, "database": url, "cwd": tmp_path, **arguments}
    with pytest.raises(UsageError, match=rf"^{call}: {named} must be .*, got ") as caught:
        {"estimate_set": estimate_set, "regrade_run": regrade_run}[call](**given)
    assert caught.value.exit_code == 2
    assert [run.id for run in _runs(url)] == [source] and not (tmp_path / ".evalkit").exists()


#: A refusal of ``evaluate_set``: its arguments, the ``evalkit run`` options that meet the same
#: refusal, how the library begins it and how the command line does.
_NAMED_REFUSALS = [
    ({"resume": True}, "--resume", "resume: there is no store at ", "--resume: there is no store at "),
    ({"baseline": "nope"}, "--baseline nope", "baseline: there is no store at ", "--baseline: there is no store at "),
    ({"answers_from": "nope"}, "--answers-from nope", "answers_from: there is no store at ", "--answers-from: there is no store at "),
    ({"resume": True, "run_id": "nope"}, "--resume nope", 'resume: there is no run "nope"', '--resume: there is no run "nope"'),
    ({"resume": True}, "--resume", 'resume: no unfinished run of "evalkit.smoke"', '--resume: no unfinished run of "evalkit.smoke"'),
    ({"baseline": "nope"}, "--baseline nope", 'baseline: there is no run "nope"', '--baseline: there is no run "nope"'),
    ({"answers_from": "nope"}, "--answers-from nope", 'answers_from: there is no run "nope"', '--answers-from: there is no run "nope"'),
    ({"cache": True, "privacy": "redacted"}, "--cache --privacy redacted", "cache keeps full answer text", "--cache keeps full answer text"),
    ({"budget": "1"}, "--budget 1", 'budget needs the prices of provider instance "reference"', '--budget needs the prices of provider instance "reference"'),
    ({"model": "m" * 1001}, "--model " + "m" * 1001, "model: the model alias is 1,001 characters long", "--model: the model alias is 1,001 characters long"),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "options", "library", "command_line"), _NAMED_REFUSALS)
def test_a_library_refusal_names_the_callers_argument_and_the_command_line_its_option(
    arguments: dict, options: str, library: str, command_line: str, tmp_path: Path, cli: Callable
) -> None:
    """``evaluate_set(resume=True)`` was told ``--resume: there is no store …``, ``cache=True``
    "run with --privacy full": options a Python caller has no way to give. The library names its
    own arguments (``evalkit.wording.argument``: ``resume``, ``privacy=full``); the command line,
    calling the same code, still names its options — and a command run before in the same process
    leaves no trace on the next library call."""
    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'store.db'}"
    if "no store" not in library:
        assert evaluate_set("evalkit.smoke", database=url, cwd=tmp_path).run.status.value == "complete"
    command = cli("run", "evalkit.smoke", "--database", url, *options.split(" "))
    assert command.code == 2 and command.stderr.startswith(f"evalkit: error: {command_line}"), command.stderr[-2000:]
    with pytest.raises(UsageError) as caught:
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, **arguments)
    assert str(caught.value).startswith(library) and " --" not in f" {caught.value}", caught.value
    assert caught.value.exit_code == 2


def test_a_library_shard_names_shard_and_run_id_not_the_command_lines_options(tmp_path: Path) -> None:
    """``evaluate_set(shard=Shard(1, 2))`` without ``run_id`` said ``--shard needs --run-id``."""
    from evalkit import evaluate_set
    from evalkit.run.plan import Shard

    with pytest.raises(
        UsageError, match=r'^shard needs run_id: every shard joins one run \(e\.g\. run_id="\$CI_PIPELINE_ID"\)$'
    ):
        evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=tmp_path, shard=Shard(1, 2))


def test_load_config_names_its_path_argument_and_the_command_line_its_config_option(
    tmp_path: Path, cli: Callable
) -> None:
    """``load_config("")`` said ``--config is empty``, ``load_config(folder)`` ``--config names the folder``."""
    from evalkit.config import load_config
    from evalkit.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^path is empty; name the configuration file"):
        load_config("")
    with pytest.raises(ConfigError, match=rf"^path names the folder {tmp_path}; give the file"):
        load_config(tmp_path)
    assert cli("history", "x", "--config", str(tmp_path)).stderr.startswith(
        f"evalkit: error: --config names the folder {tmp_path}"
    )


def _killed(url: str, run_id: str) -> None:
    """Leave stored run ``run_id`` as a ``kill -9`` on machine ci-7 leaves it: running, a lease no one renews."""
    from evalkit.leases import STALE_AFTER_S, LeaseOwner

    repo = open_repository(url)
    try:
        repo.mark_status(run_id, "running")
        repo.acquire_lease(run_id, "*", LeaseOwner("ci-7", 4242, "token"))
        then = repo._store_now() - STALE_AFTER_S - 5
        repo.Lease.update({repo.Lease.heartbeat_at: then, repo.Lease.acquired_at: then}).where(
            repo.Lease.run == run_id
        ).execute()
    finally:
        close_repository(repo)


def test_a_killed_run_of_a_set_built_in_code_is_shown_with_the_library_call_that_continues_it(
    evalkit_cli, project: Path
) -> None:
    """`evalkit history` and `evalkit show` said a killed run of a GoldenPromptSet built in Python
    is continued with `evalkit run mine.inline --resume ID`, a command that cannot find the set: the
    store did not keep that the set was built in code. It names evaluate_set again, as the run
    stopped in the library call says; an installed set's run keeps the CLI's command."""
    from evalkit import evaluate_set
    from evalkit.errors import RunInterrupted

    url = f"sqlite:///{project / 'results.db'}"
    inline = _inline_set(3)

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    for set_given, run_id in ((inline, "in-1"), ("evalkit.smoke", "cli-1")):
        with pytest.raises(RunInterrupted):
            evaluate_set(set_given, database=url, cwd=project, run_id=run_id, on_case=ctrl_c)
        _killed(url, run_id)
    call = 'continue it with `evalkit.evaluate_set(<the in-code set "mine.inline">, <the same arguments>, run_id="in-1", resume=True)`'
    shown = evalkit_cli("show", "in-1", "--database", url)
    assert shown.code == 0, shown.stderr
    assert call in " ".join(shown.stdout.split()) and "evalkit run" not in shown.stdout
    history = evalkit_cli("history", "mine.inline", "--database", url)
    assert call in " ".join(history.stdout.split()) and "evalkit run" not in history.stdout
    shown = " ".join(evalkit_cli("show", "cli-1", "--database", url).stdout.split())
    assert f"continue it with `evalkit run evalkit.smoke --database {url} --resume cli-1`" in shown  # the store it read


def test_the_missing_shards_of_a_killed_run_of_a_set_built_in_code_are_each_a_library_call() -> None:
    from evalkit.run.continuing import resume_hint
    from evalkit.run.placement import in_code_provenance
    from evalkit.runs import Run

    run = Run(
        id="r-1",
        set_identifier="mine.inline",
        grader="deterministic",
        provider_instance="app",
        provenance=in_code_provenance(None, True),
    )
    call = (
        'evalkit.evaluate_set(<the in-code set "mine.inline">, <the same arguments>, shard=Shard({}, 3), run_id="r-1")'
    )
    assert resume_hint(run, (2, 3), 3) == f"`{call.format(2)}` and `{call.format(3)}`"
    assert (
        resume_hint(run)
        == '`evalkit.evaluate_set(<the in-code set "mine.inline">, <the same arguments>, run_id="r-1", resume=True)`'
    )
    assert resume_hint(
        Run(id="r-1", set_identifier="mine.set", grader="deterministic", provenance={"set_built_in_code": "yes"})
    ) == ("`evalkit run mine.set --resume r-1`"), "only the flag evalkit stores counts"


def test_a_refused_continuation_of_a_stored_run_names_the_callers_arguments(tmp_path: Path, cli: Callable) -> None:
    """``evaluate_set(run_id=…)`` of a complete run said "choose a new --run-id", one answered by
    another model "use the same --provider and --model", and ``regrade_run`` of a run stored below
    ``privacy="full"`` "only a run stored with --privacy full can be": options a Python caller has
    no way to give. Each names the argument; the command line's messages keep the options."""
    from evalkit import evaluate_set
    from evalkit.run.regrade import regrade_run

    url = f"sqlite:///{tmp_path / 'store.db'}"
    evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="r1")
    evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="m1", privacy="metadata")
    refusals = [
        (lambda: evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="r1"),
         "run r1 is already complete (its cases and verdict are kept); choose a new run_id",
         ("run", "evalkit.smoke", "--run-id", "r1"), "choose a new --run-id"),
        (lambda: evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="r1", model="other"),
         'this process would answer with "reference/other" — use the same provider and model',
         ("run", "evalkit.smoke", "--run-id", "r1", "--model", "other"), "use the same --provider and --model"),
        (lambda: regrade_run("m1", grader="deterministic", database=url),
         "so they cannot be graded again (only a run stored with privacy=full can be)",
         ("regrade", "m1", "--grader", "deterministic"), "(only a run stored with --privacy full can be)"),
    ]  # fmt: skip
    for call, library, command, command_line in refusals:
        with pytest.raises(UsageError) as caught:
            call()
        assert library in str(caught.value) and " --" not in f" {caught.value}", caught.value
        done = cli(*command, "--database", url)
        assert done.code == 2 and command_line in done.stderr, done.stderr


def test_a_refused_configuration_or_store_names_the_callers_arguments(tmp_path: Path, cli: Callable) -> None:
    """``load_config`` of a discovered ``evalkit.toml`` that is a folder said "name the configuration
    with --config PATH", of one others can write "name it (--config …)", and ``evaluate_set`` of a
    configured store outside the project "Name a store elsewhere with --database": each names the
    argument (``path=PATH``, ``database``); the command line's messages keep the options."""
    import os

    from evalkit import evaluate_set
    from evalkit.config import load_config
    from evalkit.errors import EvalkitError

    folder, writable, outside = (tmp_path / name for name in ("folder", "writable", "outside"))
    for project in (folder, writable, outside):
        project.mkdir()
    (folder / "evalkit.toml").mkdir()
    (writable / "evalkit.toml").write_text("")
    os.chmod(writable / "evalkit.toml", 0o666)
    (outside / "evalkit.toml").write_text(f'database = "sqlite:///{tmp_path / "elsewhere.db"}"\n')
    refusals = [
        (lambda: load_config(cwd=folder), folder, "or name the configuration with path=PATH", "or name the configuration with --config PATH"),
        (lambda: load_config(cwd=writable), writable, f"name it (path={writable / 'evalkit.toml'}, or EVALKIT_CONFIG=",
         f"name it (--config {writable / 'evalkit.toml'}, or EVALKIT_CONFIG="),
        (lambda: evaluate_set("evalkit.smoke", config=load_config(cwd=outside), cwd=outside), outside,
         "Name a store elsewhere with database or EVALKIT_DATABASE_URL", "Name a store elsewhere with --database or EVALKIT_DATABASE_URL"),
    ]  # fmt: skip
    for call, project, library, command_line in refusals:
        with pytest.raises(EvalkitError) as caught:
            call()
        assert library in str(caught.value) and " --" not in f" {caught.value}", caught.value
        done = cli("history", "evalkit.smoke", cwd=project)
        assert done.code == 2 and command_line in done.stderr, done.stderr
    assert not (tmp_path / "elsewhere.db").exists()


def test_a_finished_shard_or_re_grade_run_names_run_id_to_a_python_caller(tmp_path: Path, cli: Callable) -> None:
    """A later attempt of a finished sharded run noted "Pass --run-id to start a new run", and a
    complete re-grade run given as ``run_id`` was refused with "choose a new --run-id"."""
    from evalkit import evaluate_set
    from evalkit.run.plan import Shard
    from evalkit.run.regrade import regrade_run

    url = f"sqlite:///{tmp_path / 'store.db'}"
    evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="s1", shard=Shard(1, 1), privacy="full")
    again = evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id="s1", shard=Shard(1, 1))
    assert [note for note in again.notes if note.startswith("Run s1 is already complete")][0].endswith(
        ". Pass a new run_id to start a new run."
    )
    command = cli("run", "evalkit.smoke", "--database", url, "--run-id", "s1", "--shard", "1/1")
    assert command.code == 0 and "Pass a new --run-id to start a new run." in command.stdout + command.stderr
    regraded = regrade_run("s1", grader="deterministic", database=url).run.id
    with pytest.raises(UsageError, match=r"and is complete; no other run joins it: choose a new run_id$"):
        evaluate_set("evalkit.smoke", database=url, cwd=tmp_path, run_id=regraded)
    refused = cli("run", "evalkit.smoke", "--database", url, "--run-id", regraded)
    assert refused.code == 2 and "no other run joins it: choose a new --run-id" in refused.stderr, refused.stderr


def test_a_retriever_or_generator_without_its_options_names_the_callers_arguments(
    tmp_path: Path, cli: Callable
) -> None:
    """``evaluate_retrieval`` with no retriever said "name a RETRIEVER, or choose a deployment that
    names one (--deployment NAME …)", one with options only a deployment gives "choose one with
    --deployment NAME", and ``evaluate_set(provider="replay")`` without its ``path`` "set path = …
    in the ad-hoc --provider replay run", and ``provider="nope"`` listed the adapters "usable as
    --provider for an ad-hoc run"."""
    from evalkit import evaluate_retrieval, evaluate_set
    from evalkit.config import load_config
    from evalkit.errors import EvalkitError

    url = f"sqlite:///{tmp_path / 'store.db'}"
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "evalkit.toml").write_text(
        '[deployments.staging.retrievers."evalkit.lexical"]\ncorpus = "corpus.jsonl"\n'
    )
    refusals = [
        (lambda: evaluate_retrieval("evalkit_stdlib.docs", database=url, cwd=tmp_path),
         "name retriever, or choose a deployment that names one (deployment=NAME or EVALKIT_DEPLOYMENT;"),
        (lambda: evaluate_retrieval("evalkit_stdlib.docs", "evalkit.lexical", database=url, config=load_config(cwd=configured)),
         "none was chosen, so the retriever gets no options: choose one with deployment=NAME (configured: staging; "),
        (lambda: evaluate_set("evalkit.smoke", provider="replay", database=url, cwd=tmp_path),
         "set path = … in the ad-hoc provider=replay run"),
        (lambda: evaluate_set("evalkit.smoke", provider="nope", database=url, cwd=tmp_path),
         "Adapters (evalkit.generators, usable as provider for an ad-hoc run) are"),
    ]  # fmt: skip
    for call, library in refusals:
        with pytest.raises(EvalkitError) as caught:
            call()
        outside_commands = re.sub(
            r"`[^`]*`", "", str(caught.value)
        )  # `evalkit list plugins --options` is a command to type
        assert library in str(caught.value) and " --" not in f" {outside_commands}", caught.value
    command = cli("run", "evalkit.smoke", "--provider", "replay", "--database", url)
    assert command.code == 2 and "set path = … in the ad-hoc --provider replay run" in command.stderr, command.stderr
    command = cli("run", "evalkit.smoke", "--provider", "nope", "--database", url)
    assert (
        command.code == 2
        and "Adapters (evalkit.generators, usable as --provider for an ad-hoc run) are" in command.stderr
    )
    command = cli("retrieval", "evalkit_stdlib.docs", "--database", url)
    assert (
        command.code == 2
        and "name a RETRIEVER, or choose a deployment that names one (--deployment NAME or" in command.stderr
    )


def _inline_set(size: int):  # noqa: ANN202 - a GoldenPromptSet
    """A set built in code, ``mine.inline``, of ``size`` prompts each answered right by "x"."""
    from evalkit import Assertion, GoldenPrompt, GoldenPromptSet

    return GoldenPromptSet(
        identifier="mine.inline", name="Inline",
        prompts=[GoldenPrompt(id=f"p{i}", prompt="Say x", reference="x", assertions=[Assertion(kind="contains", value="x")]) for i in range(size)],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("model", "chosen"),
    [(None, "--provider my-app"), ("my-app-mini", "--provider my-app --model my-app-mini")],
    ids=["configured", "model"],
)
def test_a_stopped_library_run_of_an_installed_set_says_the_generator_that_continues_it(
    project: Path, cli: Callable, model: str | None, chosen: str
) -> None:
    """``evaluate_set("arith.basic", provider="my-app", …)`` stopped by ``max_requests`` (or Ctrl-C)
    said ``evalkit run arith.basic --resume lib-1 --max-requests 12``: pasted, that answered with the
    default generator and was refused, where the CLI's line says the ``--provider`` it was given.
    A library caller's line names the generator (and a ``--model`` other than the configured one)
    as the line ``history`` and ``show`` print for the stored run does; pasted, it finishes the run."""
    import shlex

    from evalkit import evaluate_set
    from evalkit.errors import RunInterrupted

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    chosen_model = {"model": model} if model else {}
    stopped = evaluate_set(
        "arith.basic", provider="my-app", **chosen_model, cwd=project, run_id="lib-1", max_requests=1
    )
    (note,) = [n for n in stopped.notes if "reached after" in n]
    line = note.split("resume it with: ", 1)[1]
    config = (project / "evalkit.toml").resolve()  # the configuration cwd= found: said, for a line pasted elsewhere
    assert line == f"evalkit run arith.basic {chosen} --config {config} --resume lib-1 --max-requests 6", note

    def ctrl_c(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as interrupted:
        evaluate_set("arith.basic", provider="my-app", **chosen_model, cwd=project, run_id="lib-2", on_case=ctrl_c)
    assert str(interrupted.value).endswith(f"continue it with `evalkit run arith.basic {chosen} --config {config} --resume lib-2`"), str(
        interrupted.value
    )
    for pasted in (line, f"evalkit run arith.basic --resume lib-2 {chosen}"):
        resumed = cli(*shlex.split(pasted)[1:], "--json")
        assert resumed.code == 0, resumed.stderr
        assert resumed.json()["status"] == "complete"


@pytest.mark.parametrize("limit", [1, 3])
def test_the_request_limit_a_stopped_library_run_suggests_finishes_it(tmp_path: Path, limit: int) -> None:
    """``repeats=2, max_requests=3``: the third request was the first of a case's two, stored
    errored with its request counted. The note said ``max_requests=12`` (6 cases times 2), but the
    resume's count starts at the 3 requests spent and asks that case again whole: called with it,
    the run stopped at the limit again, incomplete. The limit suggested is enough, as the CLI's is
    (one rule: :func:`evalkit.run.answering.spending.budget_args`)."""
    import re

    from evalkit import evaluate_set

    url = f"sqlite:///{tmp_path / 'results.db'}"
    inline = _inline_set(6)
    stopped = evaluate_set(inline, database=url, cwd=tmp_path, run_id="rq-2", repeats=2, max_requests=limit)
    (note,) = [n for n in stopped.notes if "reached after" in n]
    (again,) = re.findall(r"max_requests=(\d+)\)$", note)
    resumed = evaluate_set(inline, database=url, cwd=tmp_path, run_id="rq-2", resume=True, max_requests=int(again))
    assert resumed.run.status.value == "complete", resumed.notes
    assert {case.answers for case in resumed.run.cases} == {2}


def test_a_stopped_library_run_says_the_grader_judge_configuration_and_store_that_continue_it(
    cli: Callable, project: Path
) -> None:
    """``evaluate_set("evalkit.smoke", grader="decision", grader_options={"judge": …},
    config=load_config("ci/evalkit.toml"), database=URL)`` stopped by ``max_requests`` said
    ``evalkit run evalkit.smoke --resume lib-j --provider sut --max-requests 7``: pasted, it found
    no configuration (``Unknown provider "sut"``), and with it would have looked in the default
    store and graded with ``deterministic``. Its line names the grader and the judge options the
    run was stored with, and the caller's configuration file and store; pasted, it finishes the
    run. A stored run's line (``history``, ``show``) says the grader and judge too."""
    import shlex

    from evalkit import evaluate_set
    from evalkit.config import load_config
    from evalkit.run.continuing import resume_hint
    from evalkit.storage import close_repository, open_repository

    from tests.cli.test_judges import verdicts, write_project
    from tests.plugins.judge_support import JUDGE_MODEL, decision_reply
    from tests.support.chat_server import ChatServer

    with ChatServer() as judge:
        judge.model = JUDGE_MODEL
        judge.responder = verdicts(decision_reply(4))
        write_project(project, judge.base_url)
        (project / "ci").mkdir()
        (project / "answers.jsonl").rename(project / "ci" / "answers.jsonl")
        text = (project / "evalkit.toml").read_text().replace(f"{project.as_posix()}/answers.jsonl", "answers.jsonl")
        (project / "ci" / "evalkit.toml").write_text(text)
        (project / "evalkit.toml").unlink()
        url = f"sqlite:///{project / 'elsewhere.db'}"
        stopped = evaluate_set(
            "evalkit.smoke", provider="sut", grader="decision", grader_options={"judge": "judge", "allow_self_judge": True},
            config=load_config(project / "ci" / "evalkit.toml"), database=url, cwd=project, max_requests=1, run_id="lib-j",
        )  # fmt: skip
        (note,) = [n for n in stopped.notes if "reached after" in n]
        line = note.split("resume it with: ", 1)[1]
        assert shlex.split(line) == [
            "evalkit", "run", "evalkit.smoke", "--provider", "sut", "--grader", "decision",
            "--judge", "judge", "--allow-self-judge", "--config", str(project / "ci" / "evalkit.toml"),
            "--database", url, "--resume", "lib-j", "--max-requests", "7",
        ], line  # fmt: skip
        repository = open_repository(url)
        try:
            stored = repository.get_run("lib-j", with_cases=False)
        finally:
            close_repository(repository)
        assert resume_hint(stored).startswith(
            "`evalkit run evalkit.smoke --provider sut --grader decision --judge judge --allow-self-judge --resume lib-j"
        ), resume_hint(stored)
        resumed = cli(*shlex.split(line)[1:], "--json")
        assert resumed.code == 0, resumed.stderr
        assert resumed.json()["status"] == "complete"


def test_a_stopped_library_run_of_a_generator_bound_in_code_says_the_call_not_a_provider_no_command_knows(
    project: Path, cli: Callable
) -> None:
    """``evaluate_set("arith.basic", bound_generator=BoundGenerator(mine, "(under test)",
    "kit-instance", …), max_requests=1)``: its line said ``evalkit run arith.basic --resume ID
    --provider kit-instance`` — a provider no command knows (``Unknown provider``). A generator
    bound in code that no installed provider names is continued by the library call again, as a set
    built in code is (the stored run's line too); one an installed provider names keeps the command."""
    from evalkit import evaluate_set
    from evalkit.answers import Answer
    from evalkit.components import BoundGenerator, bind_generator
    from evalkit.config import load_config
    from evalkit.run.continuing import resume_hint

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)

    class Mine:
        def generate(self, request: object) -> Answer:
            return Answer(text="4")

    for bound, given in (
        (BoundGenerator(Mine(), "(under test)", "kit-instance", "m", True, None), "kit-instance"),
        (BoundGenerator(Mine(), "mine", None, "m", False, None), "mine"),
    ):
        stopped = evaluate_set("arith.basic", bound_generator=bound, cwd=project, max_requests=1, run_id=f"b-{given}")
        (note,) = [n for n in stopped.notes if "reached after" in n]
        call = f'evalkit.evaluate_set("arith.basic", <the same arguments>, run_id="b-{given}", resume=True, max_requests=6)'
        assert note.endswith(f"resume it with: {call}"), note
        assert f"--provider {given}" not in note
        assert resume_hint(stopped.run) == f"`{call}`"
        resumed = evaluate_set(
            "arith.basic", bound_generator=bound, cwd=project, max_requests=6, run_id=f"b-{given}", resume=True
        )
        assert resumed.run.status.value == "complete", resumed.notes
    installed = bind_generator(load_config(cwd=project), "my-app", None)
    stopped = evaluate_set("arith.basic", bound_generator=installed, cwd=project, max_requests=1, run_id="b-app")
    (note,) = [n for n in stopped.notes if "reached after" in n]
    config = (project / "evalkit.toml").resolve()
    assert note.endswith(f"resume it with: evalkit run arith.basic --provider my-app --config {config} --resume b-app --max-requests 6")
    assert cli("run", "arith.basic", "--resume", "b-app", "--provider", "my-app", "--max-requests", "6").code == 0


def test_a_stopped_library_run_says_its_concurrency_and_the_configuration_its_cwd_found(
    cli: Callable, project: Path, tmp_path: Path
) -> None:
    """``evaluate_set("arith.basic", provider="my-app", cwd=PROJECT, concurrency=2, max_requests=1)``
    said ``evalkit run arith.basic --resume ID --provider my-app --max-requests 6``: pasted anywhere
    but PROJECT it found no configuration (``Unknown provider``), and it answered 8 at a time. The
    line says the configuration ``cwd`` found and the concurrency, the higher limit once; pasted in
    another folder, it completes the run."""
    import shlex

    from evalkit import evaluate_set

    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    database = f"sqlite:///{project / 'lib.db'}"
    stopped = evaluate_set(
        "arith.basic", provider="my-app", cwd=project, database=database, concurrency=2, max_requests=1, run_id="lib-c"
    )
    (note,) = [n for n in stopped.notes if "reached after" in n]
    words = shlex.split(note.split("resume it with: ", 1)[1])
    assert words[words.index("--config") + 1] == str((project / "evalkit.toml").resolve()), words
    assert words[words.index("--concurrency") + 1] == "2", words
    assert words.count("--max-requests") == 1, words
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = cli(*words[1:], "--json", cwd=elsewhere)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert resumed.json()["status"] == "complete"


def test_a_stopped_library_run_given_grader_options_no_flag_says_is_continued_by_the_call() -> None:
    """``evaluate_set(..., grader="decision", grader_options={"judge": "j", "pass_threshold": 0.9})``:
    its line said ``--grader decision --judge j``, and pasted graded the rest at the default
    threshold. Grader options no flag says make the line the library call, as a generator bound in
    code does; the judge's alone keep the command."""
    from evalkit.run.placement import continued_in_code, prompt_run_provenance, unsaid_grader_options

    assert unsaid_grader_options({"judge": "j", "repeats": 2, "allow_self_judge": True}) == []
    assert unsaid_grader_options({"judge": "j", "pass_threshold": 0.9}) == ["pass_threshold"]
    said = prompt_run_provenance(False, "decision", grader_options={"judge": "j"})
    unsaid = prompt_run_provenance(False, "decision", grader_options={"judge": "j", "pass_threshold": 0.9})

    class Stored:
        def __init__(self, provenance: object) -> None:
            self.provenance = provenance

    assert not continued_in_code(Stored(said))
    assert continued_in_code(Stored(unsaid))
HOSTILE = "\x1b[2Jgone\nevalkit: error: forged"


class _Litter:
    def __del__(self) -> None:
        raise RuntimeError(HOSTILE)


def _work() -> None:
    raise ValueError(HOSTILE)


def test_an_exception_python_reports_itself_is_an_evalkit_warning_for_a_library_caller(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A ``__del__`` that raised, or a thread that ended raising, during a library call had Python
    print it raw on stderr (the terminal cleared, a forged ``evalkit: error:`` line), once per
    case: the rule making it one escaped warning was the CLI's alone. A library caller now gets
    each as one :class:`~evalkit.errors.EvalkitWarning` (its filters decide), the repeats counted."""
    import sys
    import threading
    import warnings

    from evalkit import evaluate_set
    from evalkit.errors import EvalkitWarning

    def on_case(case: object) -> None:
        _Litter()
        helper = threading.Thread(target=_work, name="acme-helper")
        helper.start()
        helper.join()

    hooks = (sys.unraisablehook, threading.excepthook)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=tmp_path, on_case=on_case)
    assert outcome.run.status.value == "complete"
    assert (sys.unraisablehook, threading.excepthook) == hooks
    said = [str(w.message) for w in caught if issubclass(w.category, EvalkitWarning)]
    escaped = r"\x1b[2Jgone\x0aevalkit: error: forged"
    assert said == [
        f'"_Litter.__del__" of module "tests.test_library_calls" raised RuntimeError: {escaped}, where nothing can catch it '
        "(Python ignores it); evalkit went on",
        f'"_work" of module "tests.test_library_calls" raised ValueError: {escaped}, which ended thread "acme-helper"; evalkit went on',
        '"_Litter.__del__" of module "tests.test_library_calls" raised RuntimeError 7 times in all (the first shown above)',
        '"_work" of module "tests.test_library_calls" raised ValueError 7 times in all (the first shown above)',
    ], said
    assert "\x1b" not in capfd.readouterr().err


def test_stray_errors_of_overlapping_library_calls_in_two_threads_are_warned_until_the_last_ends(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The hooks are the process's: a library call in one thread, ending while a second thread's
    call still ran, restored them, and the second call's stray errors were printed raw by Python
    (the terminal cleared, a forged ``evalkit: error:`` line). They stay evalkit's until the last
    call open ends, which restores the caller's own hooks."""
    import sys
    import threading
    import warnings

    from evalkit import evaluate_set
    from evalkit.errors import EvalkitWarning

    second_started, first_ended = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def first_case(case: object) -> None:
        assert second_started.wait(60)

    def second_case(case: object) -> None:
        if not second_started.is_set():
            second_started.set()
            assert first_ended.wait(60)
            _Litter()
            helper = threading.Thread(target=_work, name="acme-helper")
            helper.start()
            helper.join()

    def call(on_case: Callable[[object], None], name: str) -> None:
        try:
            outcome = evaluate_set("evalkit.smoke", database="sqlite:///:memory:", cwd=tmp_path / name, on_case=on_case)
            assert outcome.run.status.value == "complete"
        except BaseException as exc:  # noqa: BLE001 — said by the test's thread
            failures.append(exc)
        finally:
            if name == "first":
                first_ended.set()

    raw: list[object] = []  # what reached the caller's own hooks: Python's raw report
    hooks = (raw.append, raw.append)
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    before = (sys.unraisablehook, threading.excepthook)
    sys.unraisablehook, threading.excepthook = hooks
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            threads = [threading.Thread(target=call, args=(first_case, "first")),
                       threading.Thread(target=call, args=(second_case, "second"))]  # fmt: skip
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
        assert (sys.unraisablehook, threading.excepthook) == hooks
    finally:
        sys.unraisablehook, threading.excepthook = before
    assert raw == []
    assert failures == []
    said = [str(w.message) for w in caught if issubclass(w.category, EvalkitWarning)]
    escaped = r"\x1b[2Jgone\x0aevalkit: error: forged"
    assert said == [
        f'"_Litter.__del__" of module "tests.test_library_calls" raised RuntimeError: {escaped}, where nothing can catch it '
        "(Python ignores it); evalkit went on",
        f'"_work" of module "tests.test_library_calls" raised ValueError: {escaped}, which ended thread "acme-helper"; evalkit went on',
    ], said
    assert "\x1b" not in capfd.readouterr().err
