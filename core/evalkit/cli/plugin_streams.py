"""What plugins write to ``sys.stdout`` and ``sys.stderr`` while a command runs, made safe where it
leaves the program.

A plugin — or a library it uses — that prints while it is imported or called writes through the
standard streams: ``print()``, ``sys.stderr.write``, a ``logging.StreamHandler`` made meanwhile, a
warning. :mod:`evalkit.cli.stdout` already keeps that text off standard output; this module keeps
it from reaching the terminal raw. While a command runs (:func:`plugin_streams_made_safe`),
``sys.stdout`` and ``sys.stderr`` are :class:`MadeSafe` streams that pass every line through what
the console does to data (:mod:`evalkit.cli.console`): the secrets of the components built in this
process become ``***``, control, format and bidi characters and lone surrogates become visible
escapes (``\\x1b``, ``\\u202e``), a CI runner's command (``::set-env``, ``##vso[``) is defused —
and line breaks and tabs are kept, a plugin's lines being meant. Both forward to the real standard
error, which evalkit's own console writes to directly (:func:`stderr`), so its styling is its own.

What is written to the file descriptors themselves (``os.write(2, …)``, a C extension, a child
process, ``sys.__stderr__``) does not pass through Python's streams and is not made safe here.

A stream holds back a line until it ends (or is flushed), so a secret or a CI command split over
two writes is still found whole; a line held longer than :data:`HELD_CHARS` characters is written
as far as it goes. A command during which no plugin writes pays nothing per case.
"""

from __future__ import annotations

import codecs
import io
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

__all__ = ["HELD_CHARS", "MadeSafe", "made_safe", "plugin_streams_made_safe", "shown_above", "stderr"]

#: The longest unfinished line a stream holds back before writing it as it is (a plugin that
#: writes megabytes without a line break must not fill memory).
HELD_CHARS = 65_536

_real_stderr: TextIO | None = None
#: The streams standing in for ``sys.stdout`` and ``sys.stderr`` in the command running now.
_current: tuple[MadeSafe, ...] = ()


def stderr() -> TextIO:
    """The stream for evalkit's own text on standard error: the real standard error while a
    command runs (:func:`plugin_streams_made_safe`), else ``sys.stderr`` as it is."""
    return _real_stderr if _real_stderr is not None else sys.stderr


def made_safe(text: str) -> str:
    """``text`` as a plugin's output reaches the terminal: secrets → ``***``
    (:func:`evalkit.privacy.remove_secrets`), every hidden character but ``\\n`` and ``\\t`` as its
    escape and a CI runner's command defused (:func:`evalkit.printable.visible`)."""
    from ..printable import visible
    from ..privacy import remove_secrets, secrets_to_hide

    return visible(remove_secrets(text, secrets_to_hide()), keep="\n\t")


class MadeSafe(io.TextIOBase):
    """A text stream that writes what it is given, made safe (:func:`made_safe`), to ``target``,
    a line at a time. Thread-safe: plugins write from their own threads too."""

    def __init__(self, target: TextIO, name: str) -> None:
        self._target = target
        self._name = name
        self._held = ""
        self._lock = threading.Lock()
        self._bytes: _MadeSafeBytes | None = None

    @property
    def name(self) -> str:
        """The stream's name (``<stdout>``, ``<stderr>``), as Python's own are named."""
        return self._name

    @property
    def encoding(self) -> str:  # type: ignore[override]
        """The real stream's encoding (what the text is encoded in, in the end)."""
        return getattr(self._target, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        """How text the encoding cannot hold is written: as its escape."""
        return "backslashreplace"

    def writable(self) -> bool:
        """Always: it is written to."""
        return True

    def isatty(self) -> bool:
        """Whether the real stream is a terminal (a library asks before colouring its output)."""
        try:
            return bool(self._target.isatty())
        except (AttributeError, OSError, ValueError):
            return False

    def fileno(self) -> int:
        """The real stream's descriptor (``faulthandler``, a child process given this stream):
        what is written to it directly is not made safe."""
        return self._target.fileno()

    def write(self, text: str) -> int:
        """Take ``text``; write every line it completes, made safe. Its length."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:
            return 0
        with self._lock:
            held = self._held + text
            end = held.rfind("\n") + 1
            if not end and len(held) <= HELD_CHARS:
                self._held = held
                return len(text)
            end = end or len(held)
            self._held = held[end:]
            self._target.write(made_safe(held[:end]))
        return len(text)

    def flush(self) -> None:
        """Write the line held back, made safe, then flush the real stream."""
        with self._lock:
            self._write_held()
            self._target.flush()

    def reconfigure(self, **settings: Any) -> None:
        """Accepted and ignored (a library asks for UTF-8 or line buffering): the text is made
        safe here whatever it asks, and the real stream is evalkit's to configure."""

    @property
    def buffer(self) -> _MadeSafeBytes:
        """The binary layer (``sys.stdout.buffer.write(b"…")``): bytes are decoded — what is no
        valid text becomes escapes — and made safe as text is."""
        if self._bytes is None:
            self._bytes = _MadeSafeBytes(self)
        return self._bytes

    def retarget(self, target: TextIO) -> None:
        """Write what comes next to ``target``; the line held back goes to the stream written to until now."""
        with self._lock:
            self._write_held()
            self._target = target

    def _write_held(self) -> None:
        if self._held:
            held, self._held = self._held, ""
            self._target.write(made_safe(held))


class _MadeSafeBytes(io.RawIOBase):
    """The ``buffer`` of a :class:`MadeSafe` stream: bytes decoded in its encoding (a character
    split over two writes is joined; a byte that is no text is kept as a lone surrogate, which is
    then shown as its escape) and written to the text stream."""

    def __init__(self, text: MadeSafe) -> None:
        self._text = text
        self._decoder = codecs.getincrementaldecoder(text.encoding)(errors="surrogateescape")

    def writable(self) -> bool:
        """Always: it is written to."""
        return True

    def write(self, data: Any) -> int:
        """Decode ``data`` and write it as text; its length in bytes."""
        size = memoryview(data).nbytes
        self._text.write(self._decoder.decode(bytes(data)))
        return size

    def flush(self) -> None:
        """Flush the text stream."""
        self._text.flush()


@contextmanager
def plugin_streams_made_safe() -> Iterator[None]:
    """While inside, ``sys.stdout`` and ``sys.stderr`` are :class:`MadeSafe` streams over the real
    standard error, and :func:`stderr` is that real stream. On the way out — an error or Ctrl-C
    too — what they hold back is written and both are given back (``main()`` runs again in the
    same process: nothing is left in place)."""
    global _real_stderr, _current
    outer_stderr, outer_current = _real_stderr, _current
    real = stderr()  # a command run inside another's (a plugin calling main()) writes where it does
    saved = sys.stdout, sys.stderr
    streams = (MadeSafe(real, "<stdout>"), MadeSafe(real, "<stderr>"))
    _real_stderr, _current = real, streams
    sys.stdout, sys.stderr = streams
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        _real_stderr, _current = outer_stderr, outer_current
        for stream in streams:
            try:
                stream.flush()
            except (OSError, ValueError):  # no standard error left to say it on
                pass


@contextmanager
def shown_above(console: Any) -> Iterator[None]:
    """While inside, what plugins write goes — made safe — above ``console``'s live display (a
    progress bar), as rich's ``redirect_stdout`` would send it, instead of into the bar's lines.
    Used with the display's own redirection off: rich's would take ``sys.stdout`` and
    ``sys.stderr`` from these streams and print what plugins write unmade-safe."""
    from rich.file_proxy import FileProxy

    streams, real = _current, stderr()
    proxies = [FileProxy(console, real) for _ in streams]
    for stream, proxy in zip(streams, proxies, strict=True):
        stream.retarget(proxy)
    try:
        yield
    finally:
        for stream, proxy in zip(streams, proxies, strict=True):
            stream.retarget(real)
            proxy.flush()
