"""The engines behind the suite's ``cli`` and ``evalkit_process`` fixtures.

:class:`InProcessRunner` runs ``evalkit ARGS`` inside the test process through click's
``CliRunner`` (``CliRunner().invoke(evalkit, ARGS)``; the root group's ``main`` is evalkit's own
entry, :func:`evalkit.cli.main`): about 0.09 s a call where a ``python -m evalkit`` child costs
over a second. It gives tests what a child gave them — the exit code and everything written to
standard output and standard error, as text — and for the length of the call it recreates what a
fresh ``python -m evalkit`` would have found:

- the environment the suite runs commands in (:func:`command_environment`) with the test's
  overrides, the working directory, ``sys.argv``;
- ``sys.path`` as ``-m`` builds it: the working directory first, then the ``PYTHONPATH`` folders
  (tests install plugin distributions into folders and put them there); the plugin scan forgotten
  before and after, and every module imported from those folders forgotten afterwards, since
  test distributions reuse module names on purpose;
- standard input from ``/dev/null``; ``CliRunner`` captures ``sys.stdout`` and ``sys.stderr``,
  and around it fds 1 and 2 point at temporary files (with ``sys.__stdout__`` and
  ``sys.__stderr__`` new streams over them), so what a plugin or a library writes to the
  descriptors themselves (``os.write(1, …)``, a child process) is captured too;
- the interpreter's own warning filters (pytest's would record a warning a child prints), a
  root logger without handlers, no asyncio event loop running and asyncio's default policy;
- at the end, what an exiting interpreter does: non-daemon threads are waited for, standard output
  flushed.

Under ``CliRunner`` ``sys.stdout`` is not the process's own, so evalkit sends a plugin's
``print()`` to standard error at that level (core/evalkit/cli/stdout.py) and never writes to fd 1
itself: what reached fd 1 came from a plugin or a library while the command ran, which in a real
process is standard error's (evalkit points fd 1 there meanwhile). So what fds 1 and 2 received is
part of the result's stderr, ahead of what ``CliRunner`` captured (it was mostly written while
plugins loaded, before evalkit's own last words).

Whatever state the CLI itself keeps between calls is the kernel's to reset (``main()`` must be
reentrant): this module resets only what a test process has and a fresh child would not, and
fails a call that leaves a signal handler, the alarm timer or garbage collection changed.

:class:`ProcessRunner` spawns a real ``python -m evalkit``, for the tests where the process itself
is under test (signals, a killed run and its resume, closed or full standard streams, a terminal,
resource limits, several concurrent processes, fd 1 moved to standard error while a command runs).

Both take the same arguments and return the same :class:`CliResult`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import gc
import importlib
import importlib.util
import io
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import attrs

__all__ = ["CliResult", "InProcessRunner", "ProcessRunner", "command_environment"]

#: Taken out of the environment of every command a test runs: a developer's own store must never
#: be written by the suite.
REMOVED_VARIABLES = ("EVALKIT_DATABASE_URL",)
#: Set for every command a test runs: plain text, and lines as wide as the assertions expect.
SET_VARIABLES = {"NO_COLOR": "1", "COLUMNS": "200"}


@attrs.frozen(slots=False)
class CliResult:
    """What one ``evalkit`` command did: its exit code and what it wrote to standard output and
    standard error (as bytes; ``stdout`` and ``stderr`` are the text, as ``subprocess`` decodes it
    with ``text=True``: UTF-8, universal newlines)."""

    code: int
    stdout_bytes: bytes
    stderr_bytes: bytes

    @functools.cached_property
    def stdout(self) -> str:
        """Standard output as text."""
        return _text(self.stdout_bytes)

    @functools.cached_property
    def stderr(self) -> str:
        """Standard error as text."""
        return _text(self.stderr_bytes)

    def json(self) -> Any:
        """stdout parsed as JSON."""
        return json.loads(self.stdout)


class CliTimeout(subprocess.TimeoutExpired):
    """A command ran past the test's ``timeout`` (the same error a child's timeout raises)."""


#: What a test passes as ``env``: variables to set, or to remove (``None``, as click's ``CliRunner`` takes it).
Overrides = Mapping[str, "str | None"]


def command_environment(overrides: Overrides | None = None) -> dict[str, str]:
    """The environment a test's command runs in: the test process's, without
    :data:`REMOVED_VARIABLES`, with :data:`SET_VARIABLES`, then ``overrides`` (``None`` removes)."""
    environment = {k: v for k, v in os.environ.items() if k not in REMOVED_VARIABLES}
    environment.update(SET_VARIABLES)
    for name, value in (overrides or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


class ProcessRunner:
    """``python -m evalkit ARGS`` as a child process of the test."""

    def __init__(self, default_cwd: Path) -> None:
        self.default_cwd = default_cwd

    def command(self, *args: str) -> list[str]:
        """The command line of a child running ``evalkit ARGS``."""
        return [sys.executable, "-m", "evalkit", *args]

    def __call__(self, *args: str, env: Overrides | None = None, timeout: float = 120, cwd: Path | None = None) -> CliResult:
        """Run ``evalkit ARGS`` to its end in a child; its exit code, stdout and stderr."""
        done = self.run(*args, env=env, timeout=timeout, cwd=cwd, text=False)
        return CliResult(done.returncode, done.stdout, done.stderr)

    def run(self, *args: str, env: Overrides | None = None, timeout: float = 120, cwd: Path | None = None, **popen: Any) -> subprocess.CompletedProcess[Any]:
        """``subprocess.run`` of ``evalkit ARGS`` with :meth:`start`'s defaults (``popen`` overrides them)."""
        with self.start(*args, env=env, cwd=cwd, **popen) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                raise
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    def start(self, *args: str, env: Overrides | None = None, cwd: Path | None = None, **popen: Any) -> subprocess.Popen[Any]:
        """Start ``evalkit ARGS`` in a child and return at once: in the default folder, in the
        suite's command environment with ``env`` laid over it, standard input from ``/dev/null``,
        stdout and stderr pipes of text (``popen`` overrides any of these ``Popen`` arguments)."""
        options: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL, "text": True}
        options.update(popen)
        return subprocess.Popen(self.command(*args), cwd=cwd or self.default_cwd, env=command_environment(env), **options)


class InProcessRunner:
    """``evalkit ARGS`` called in the test process, with what a fresh child would have found."""

    def __init__(self, default_cwd: Path) -> None:
        self.default_cwd = default_cwd

    def __call__(
        self, *args: str, env: Overrides | None = None, timeout: float = 120, cwd: Path | None = None, terminal: bool = False
    ) -> CliResult:
        """Run ``evalkit ARGS`` to its end; its exit code, stdout and stderr. ``terminal`` (this
        runner's own): standard output and standard error say they are a terminal (``isatty()``),
        as a person's are, so what evalkit draws only there (a progress bar) is drawn and captured,
        control sequences and all — without the pseudo-terminal and the child process that
        :class:`ProcessRunner` needs for it."""
        environment = command_environment(env)
        folder = Path(cwd or self.default_cwd).resolve()
        import_folders = [str(folder), *_python_path(environment.get("PYTHONPATH", ""), folder)]
        with contextlib.ExitStack() as stack:
            stack.enter_context(_process_state_kept(args))
            stack.enter_context(_environment(environment))
            stack.enter_context(_working_directory(folder))
            stack.enter_context(_importable(import_folders))
            stack.enter_context(_arguments(args))
            stack.enter_context(_interpreter_warnings(environment.get("PYTHONWARNINGS", "")))
            stack.enter_context(_no_event_loop())
            stack.enter_context(_unconfigured_logging())
            streams = stack.enter_context(_captured_streams())
            at_exit = stack.enter_context(_exit_handlers(import_folders))
            code, stdout, stderr = _call_main(args, timeout, at_exit, terminal)
        return CliResult(code, stdout, streams.stdout + streams.stderr + stderr)


def _call_main(
    args: Sequence[str], timeout: float, at_exit: list[Callable[[], object]], terminal: bool = False
) -> tuple[int, bytes, bytes]:
    """``CliRunner().invoke(evalkit, args)`` as ``python -m evalkit`` ends: its exit status (a
    traceback and 1 for an exception that escapes it) and what it wrote to ``sys.stdout`` and
    ``sys.stderr``, once non-daemon threads are waited for, the exit handlers in ``at_exit`` run
    (last registered first) and stdout flushed; raises :class:`CliTimeout` past ``timeout``
    seconds (the command is interrupted as Ctrl-C would); ``terminal``: see :meth:`InProcessRunner.__call__`."""
    from click.testing import CliRunner
    from evalkit.cli.app import evalkit

    runner = _terminal_cli_runner() if terminal else CliRunner

    threads_before = set(threading.enumerate())
    watchdog = _Watchdog(timeout)
    stdout = stderr = b""
    try:
        with watchdog:
            try:
                result = runner().invoke(evalkit, list(args), prog_name="evalkit", catch_exceptions=False)
                code, stdout, stderr = result.exit_code, result.stdout_bytes, result.stderr_bytes
            except Exception:  # what the interpreter does with an exception that ends the program
                traceback.print_exc()
                code = 1
            _join_non_daemon_threads(threads_before, watchdog)
            while at_exit:
                try:
                    at_exit.pop()()
                except Exception:  # printed, as the interpreter prints a failing exit handler's
                    print("Exception ignored in atexit callback:", file=sys.stderr)
                    traceback.print_exc()
            try:
                sys.stdout.flush()
            except OSError as exc:  # as an exiting interpreter reports it
                print(f"Exception ignored on flushing sys.stdout:\n{type(exc).__name__}: {exc}", file=sys.stderr)
                code = 120
    except KeyboardInterrupt:
        if not watchdog.fired:
            raise
    if watchdog.fired:
        raise CliTimeout(["evalkit", *args], timeout)
    return code, stdout, stderr


def _terminal_cli_runner() -> type:
    """click's ``CliRunner`` made for :meth:`InProcessRunner.__call__`'s ``terminal`` (here, as
    click is imported here only when a command runs)."""
    from click.testing import CliRunner

    class TerminalCliRunner(CliRunner):
        """click's ``CliRunner``, whose ``sys.stdout`` and ``sys.stderr`` say they are a terminal."""

        @contextlib.contextmanager
        def isolation(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
            with super().isolation(*args, **kwargs) as streams:
                for stream in (sys.stdout, sys.stderr):
                    stream.isatty = lambda: True  # type: ignore[method-assign]
                yield streams

    return TerminalCliRunner


@contextlib.contextmanager
def _exit_handlers(folders: Sequence[str]) -> Iterator[list[Callable[[], object]]]:
    """Exit handlers that modules from ``folders`` register (``atexit.register``) during the call
    are collected in the list yielded, to run when the call ends, the end of their "process" (the
    modules are forgotten with it); every other module's go to the real ``atexit``, since they stay
    imported."""
    collected: list[Callable[[], object]] = []
    register, unregister = atexit.register, atexit.unregister

    def register_here(function: Callable[..., object], *args: object, **kwargs: object) -> Callable[..., object]:
        module = sys.modules.get(getattr(function, "__module__", None) or "")
        if module is not None and _loaded_from(module, folders):
            collected.append(functools.partial(function, *args, **kwargs))
            return function
        return register(function, *args, **kwargs)

    def unregister_here(function: Callable[..., object]) -> None:
        collected[:] = [handler for handler in collected if handler.func != function]  # type: ignore[attr-defined]
        unregister(function)

    atexit.register, atexit.unregister = register_here, unregister_here
    try:
        yield collected
    finally:
        atexit.register, atexit.unregister = register, unregister


def _join_non_daemon_threads(before: set[threading.Thread], watchdog: _Watchdog) -> None:
    """Wait for the non-daemon threads the command started, as the interpreter does at exit."""
    for thread in threading.enumerate():
        if thread not in before and not thread.daemon and thread is not threading.current_thread() and thread is not watchdog.timer:
            thread.join()


class _Watchdog:
    """Interrupts the main thread (SIGINT, as Ctrl-C) once ``timeout`` seconds have passed."""

    def __init__(self, timeout: float) -> None:
        self.fired = False
        self._done = False
        self._lock = threading.Lock()
        self._main = threading.main_thread().ident
        self.timer = threading.Timer(timeout, self._fire)
        self.timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done or self._main is None:
                return
            self.fired = True
            signal.pthread_kill(self._main, signal.SIGINT)

    def __enter__(self) -> _Watchdog:
        self.timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._done = True
        self.timer.cancel()


def _python_path(value: str, cwd: Path) -> list[str]:
    """The folders ``PYTHONPATH`` names, as a process started in ``cwd`` takes them (empty entries skipped)."""
    return [os.path.normpath(os.path.join(cwd, entry)) for entry in value.split(os.pathsep) if entry]


@contextlib.contextmanager
def _environment(environment: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` is ``environment`` inside; as it was afterwards."""
    saved = dict(os.environ)
    _replace_environment(environment)
    try:
        yield
    finally:
        _replace_environment(saved)


def _replace_environment(wanted: Mapping[str, str]) -> None:
    for name in [name for name in os.environ if name not in wanted]:
        del os.environ[name]
    for name, value in wanted.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


@contextlib.contextmanager
def _working_directory(folder: Path) -> Iterator[None]:
    saved = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _arguments(args: Sequence[str]) -> Iterator[None]:
    """``sys.argv`` as ``python -m evalkit ARGS`` sets it."""
    saved = sys.argv
    sys.argv = [_MAIN_FILE, *args]
    try:
        yield
    finally:
        sys.argv = saved


@contextlib.contextmanager
def _importable(folders: Sequence[str]) -> Iterator[None]:
    """``folders`` at the front of ``sys.path`` (as ``-m`` puts the working directory and then
    ``PYTHONPATH``), the modules they provide importable afresh, the plugin scan forgotten; on the
    way out the folders leave ``sys.path``, every module imported from them leaves ``sys.modules``,
    the modules they shadowed come back, and the scan is forgotten again."""
    names = _top_level_names(folders)
    shadowed = {name: module for name, module in sys.modules.items() if name.partition(".")[0] in names}
    for name in shadowed:
        del sys.modules[name]
    saved_path = list(sys.path)
    sys.path[:0] = folders
    importlib.invalidate_caches()
    _forget_plugin_scan()
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for folder in folders:
            sys.path_importer_cache.pop(folder, None)
        for name, module in list(sys.modules.items()):
            if name.partition(".")[0] in names or _loaded_from(module, folders):
                del sys.modules[name]
        sys.modules.update(shadowed)
        importlib.invalidate_caches()
        _forget_plugin_scan()


def _forget_plugin_scan() -> None:
    """Make the plugin registry look at ``sys.path`` again, as a new process would.

    Forgotten, not scanned again here: the next lookup scans (the command's own, or the next
    call's), once; an eager scan on the way in and out cost two reads of every distribution's
    metadata per call, a third of a short command's time."""
    from evalkit import registry

    registry.forget()


def _top_level_names(folders: Sequence[str]) -> set[str]:
    """The top-level modules and packages ``folders`` provide (standard library names left out: a
    folder does not shadow a module the interpreter imported at start-up)."""
    names: set[str] = set()
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                is_folder = entry.is_dir()
            except OSError:  # a loop of symbolic links (a hostile-input test makes one): no module
                continue
            if is_folder:
                module = name if os.path.exists(os.path.join(entry.path, "__init__.py")) else ""
            else:
                module = name.partition(".")[0] if name.endswith((".py", ".pyc", ".so")) else ""
            if module.isidentifier() and module not in sys.stdlib_module_names:
                names.add(module)
    return names


def _loaded_from(module: object, folders: Sequence[str]) -> bool:
    """True when ``module`` (or a namespace package's portion) lives under one of ``folders``."""
    places = [getattr(module, "__file__", None) or "", *(getattr(module, "__path__", None) or ())]
    return any(isinstance(place, str) and place.startswith(folder + os.sep) for place in places for folder in folders)


#: The interpreter's default warning filters (``python -W`` and ``PYTHONWARNINGS`` go first).
_DEFAULT_FILTERS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


@contextlib.contextmanager
def _interpreter_warnings(pythonwarnings: str) -> Iterator[None]:
    """Warning filters as a new interpreter has them, and a warning printed to stderr (pytest
    records warnings instead; a child prints them)."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_DEFAULT_FILTERS):
            warnings.filterwarnings(action, category=category, module=module or "")
        for option in [o for o in pythonwarnings.split(",") if o]:  # the last one given wins
            with contextlib.suppress(warnings._OptionError):  # type: ignore[attr-defined] - a bad option is ignored, as Python does
                warnings._setoption(option)  # type: ignore[attr-defined]
        warnings.showwarning = warnings._showwarning_orig  # type: ignore[attr-defined]
        yield


@contextlib.contextmanager
def _unconfigured_logging() -> Iterator[None]:
    """The root logger as in a new process: no handlers (a record of WARNING or above goes to
    stderr through logging's last resort), level WARNING; pytest's capturing handlers are put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


#: Process-wide settings a command may change while it runs and must give back (main() is
#: reentrant): each with how to read it and how to put it back.
_PROCESS_SETTINGS: dict[str, tuple[Callable[[], object], Callable[[Any], object]]] = {
    **{
        f"the {signal.Signals(number).name} handler": (
            functools.partial(signal.getsignal, number), functools.partial(signal.signal, number)
        )
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
    },
    "the SIGALRM timer": (
        lambda: signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0),
        lambda running: signal.setitimer(signal.ITIMER_REAL, 0),
    ),
    "garbage collection": (gc.isenabled, lambda enabled: gc.enable() if enabled else gc.disable()),
    "the garbage collector's thresholds": (gc.get_threshold, lambda thresholds: gc.set_threshold(*thresholds)),
}


@contextlib.contextmanager
def _process_state_kept(args: Sequence[str]) -> Iterator[None]:
    """Fails the call (AssertionError) when the command left a process-wide setting changed — a
    second ``main()`` in a process would not start as the first did — after putting it back, so
    the next test starts clean."""
    before = {name: read() for name, (read, _) in _PROCESS_SETTINGS.items()}
    yield
    changed = [name for name, (read, _) in _PROCESS_SETTINGS.items() if read() != before[name]]
    for name in changed:
        _PROCESS_SETTINGS[name][1](before[name])
    assert not changed, f"evalkit {' '.join(args)} left {', '.join(changed)} changed: main() must give them back"


@contextlib.contextmanager
def _no_event_loop() -> Iterator[None]:
    """No event loop running in this thread and asyncio's default policy, as in a new process (a
    fixture such as Playwright's synchronous API keeps a loop running in the test's thread)."""
    running = asyncio._get_running_loop()
    policy = asyncio.get_event_loop_policy()
    asyncio._set_running_loop(None)
    asyncio.set_event_loop_policy(None)
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(policy)
        asyncio._set_running_loop(running)


@attrs.define
class _Captured:
    """What fds 1 and 2 received during a call, once the call is over."""

    stdout: bytes = b""
    stderr: bytes = b""


@contextlib.contextmanager
def _captured_streams() -> Iterator[_Captured]:
    """Standard input from ``/dev/null``; fds 1 and 2 into temporary files, with ``sys.stdin``,
    ``sys.stdout``, ``sys.stderr`` (and their ``__std*__`` originals) new streams over fds 0-2
    made as the interpreter makes them for a pipe."""
    captured = _Captured()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved_objects = (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)
    with _TemporaryFile() as out, _TemporaryFile() as err:
        saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
        nothing = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(nothing, 0)
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            streams = _standard_streams()
            sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
            try:
                yield captured
            finally:
                for stream in streams:
                    with contextlib.suppress(Exception):  # written to, closed or detached by the command: nothing left
                        stream.close()
        finally:
            sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__ = saved_objects
            for fd, saved in zip((0, 1, 2), saved_fds, strict=True):
                os.dup2(saved, fd)
                os.close(saved)
            os.close(nothing)
        captured.stdout, captured.stderr = _read(out), _read(err)


def _standard_streams() -> tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper]:
    """New ``sys.stdin``, ``sys.stdout``, ``sys.stderr`` over fds 0-2, as Python opens them for
    pipes: UTF-8; stdout strict and block-buffered, stderr ``backslashreplace`` and line-buffered."""

    def stream(fd: int, mode: str, errors: str, line_buffering: bool) -> io.TextIOWrapper:
        binary = open(fd, mode + "b", closefd=False)  # noqa: SIM115 - closed by _captured_streams
        return io.TextIOWrapper(binary, encoding="utf-8", errors=errors, line_buffering=line_buffering)

    return stream(0, "r", "strict", False), stream(1, "w", "strict", False), stream(2, "w", "backslashreplace", True)


def _read(file: BinaryIO) -> bytes:
    file.seek(0)
    return file.read()


def _text(data: bytes) -> str:
    """Output as ``subprocess.run(text=True)`` decodes it: UTF-8 (strict), ``\\r\\n`` and ``\\r`` read as ``\\n``."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=None).read()


#: Bound at import: a test may make ``tempfile.TemporaryFile`` fail for the command it runs.
_TemporaryFile = tempfile.TemporaryFile
_MAIN_FILE = str(Path(importlib.util.find_spec("evalkit").origin).with_name("__main__.py"))
