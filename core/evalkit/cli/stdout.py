"""evalkit's standard output, kept apart from what plugins print.

A plugin that prints while it is imported or called (``print("loaded")``, a library's banner, an
``os.write(1, …)``) would otherwise land in the middle of ``evalkit run --json`` and break every
``| jq`` after it. While a command runs, file descriptor 1 points at standard error, so anything
written to ``sys.stdout`` or to fd 1 by anyone goes there; evalkit's own output goes to
:func:`stdout`, a stream over the real standard output, and fd 1 is given back at the end.

When ``sys.stdout`` is not the process's own descriptor (a library caller's ``StringIO``, pytest's
or click's capture) there is no descriptor to move: ``sys.stdout`` itself is pointed at
``sys.stderr`` while the command runs, and :func:`stdout` is the caller's stream.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["plugin_output_to_stderr", "stdout"]

_real_stdout: TextIO | None = None


def stdout() -> TextIO:
    """The stream for evalkit's own output: the real standard output while a command runs
    (:func:`plugin_output_to_stderr`), else ``sys.stdout`` as it is."""
    return _real_stdout if _real_stdout is not None else sys.stdout


class _StandardOutput(io.FileIO):
    """The real standard output under :func:`stdout`. Once its reader has gone (``EPIPE``:
    ``evalkit compare A B --fail-on-regression | head -1``), what is written is dropped: the
    command still finishes, stores what it stores and exits with its own code — a failed gate
    stays 1 — instead of ending at the first write that found no reader."""

    reader_left = False

    def write(self, data: Any) -> int:
        """Write ``data``; its length, written or dropped, once the reader has left."""
        if not self.reader_left:
            try:
                return super().write(data)
            except BrokenPipeError:
                self.reader_left = True
        return memoryview(data).nbytes


@contextmanager
def plugin_output_to_stderr() -> Iterator[None]:
    """While inside, fd 1 is standard error and :func:`stdout` writes to the real standard output.

    Fd 1 is moved when ``sys.stdout`` is the process's own and both streams have file
    descriptors; otherwise (a caller's StringIO, pytest's or click's capture) ``sys.stdout`` is
    ``sys.stderr`` inside and :func:`stdout` the caller's stream. The command flushes
    :func:`stdout` itself, to report a full disk; on the way out fd 1 (or ``sys.stdout``) is restored.
    """
    global _real_stdout
    try:
        usable = sys.stdout is sys.__stdout__ and sys.stdout.fileno() == 1 and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if not usable:
        callers = _real_stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            yield
        finally:
            _real_stdout = None
            sys.stdout = callers
        return
    sys.stdout.flush()
    saved = os.dup(1)
    real = io.TextIOWrapper(
        _StandardOutput(saved, "w", closefd=False),
        encoding=sys.stdout.encoding,
        errors="backslashreplace",
        line_buffering=os.isatty(saved),
        write_through=False,
    )
    os.dup2(sys.stderr.fileno(), 1)
    _real_stdout = real
    try:
        yield
    finally:
        _real_stdout = None
        try:
            real.flush()
        except OSError:
            pass  # the command flushes (and reports) its own output; this is only the rest
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
