"""``evalkit view`` as a real child process, for the tests about the server process and the browser."""

from __future__ import annotations

import selectors
import signal
import subprocess
import time


class Served:
    """``evalkit view`` running in a child process, and the address it printed."""

    def __init__(self, process: subprocess.Popen, url: str) -> None:
        self.process = process
        self.url = url

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str]:
        """Ctrl-C (or ``signum``), then its exit code and what it wrote on stderr."""
        self.process.send_signal(signum)
        try:
            _, stderr = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
        return self.process.returncode, stderr


def serve(evalkit_process, *args: str, env: dict[str, str] | None = None) -> Served:  # noqa: ANN001 - the suite's runner
    """Start ``evalkit view ARGS`` and wait (up to a minute) for the line with its address."""
    process = evalkit_process.start("view", "--port", "0", *args, env=env)
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + 60
    line = ""
    while "http://" not in line:
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise AssertionError(f"evalkit view did not start: {line!r} {process.stderr.read()}")
        if selector.select(timeout=1):
            line = process.stdout.readline()
    return Served(process, line.split(" at ", 1)[1].strip())
