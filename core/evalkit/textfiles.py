"""Files a user named: written whole or not at all, never over a device, pipe or link; read only
when they are regular files of a bounded size.

Reports and TREC files are CI artifacts: a reader must never see half of one, so a regular file
is written to a temporary file beside it and renamed over it at once. Renaming over anything
else would destroy it: ``-o /dev/full`` (as root) once put a regular file where the device was.
A symbolic link, a named pipe or a device is therefore written into as ``>`` would.

A file read is a regular file, or for a file read whole a pipe too (``--config <(…)``), and a
file read whole has a size limit: ``/dev/zero`` or ``/dev/urandom`` named as a configuration, a
set file or a corpus never ends (evalkit read it until the system killed it), and opening a named
pipe without a writer blocked for ever. A device or a socket is refused with
:class:`NotARegularFile`, a file past its reader's limit with :class:`FileTooLarge`: ``OSError``s
whose ``strerror`` says why, so every reader's "cannot read X: …" names it.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

__all__ = ["FileTooLarge", "NotARegularFile", "open_regular_file", "read_whole_file", "write_text_file"]


class NotARegularFile(OSError):
    """A path to read names a device, a named pipe or a socket (``strerror`` says which)."""


class FileTooLarge(OSError):
    """A file to read whole is larger than its reader accepts (``strerror`` says the limit)."""


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISSOCK, "a socket"))  # fmt: skip


def open_regular_file(path: str | os.PathLike[str], mode: str = "rb", *, pipes: bool = False, **options: Any) -> IO[Any]:
    """Open ``path`` for reading (``mode`` ``"rb"`` or ``"r"``, ``options`` as :func:`open`'s) when,
    links followed, it is a regular file (or, with ``pipes``, a pipe); else :class:`NotARegularFile`,
    or ``IsADirectoryError`` for a folder. Opened without blocking, so a named pipe nobody writes
    is not waited on: it reads as empty."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode_bits = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode_bits):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not (stat.S_ISREG(mode_bits) or (pipes and stat.S_ISFIFO(mode_bits))):
            kind = next((name for test, name in _KINDS if test(mode_bits)), "not a file")
            raise NotARegularFile(errno.EINVAL, f"not a regular file but {kind}", str(path))
        os.set_blocking(descriptor, True)
        return open(descriptor, mode, **options)
    except BaseException:
        os.close(descriptor)
        raise


def read_whole_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file or pipe ``path`` (:func:`open_regular_file`), at most ``limit``
    of them; a longer one raises :class:`FileTooLarge` without being read past the limit."""
    with open_regular_file(path, pipes=True) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(errno.EFBIG, f"larger than the {limit:,} bytes it may hold", str(path))
    return data


def write_text_file(path: Path, chunks: Iterable[str]) -> None:
    """Write ``chunks`` to ``path`` (UTF-8, ``\\n`` line ends; a lone surrogate — a stored name
    that was not UTF-8 — as its escape ``\\udcff``, which JSON reads back): a regular file or a new one is
    replaced whole (its folder is created); a link, pipe or device is written into. An
    ``OSError`` (a full disk, a folder where the file should be) leaves any earlier file as it was."""
    if path.is_symlink() or (path.exists() and not path.is_file() and not path.is_dir()):
        with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as out:
            out.writelines(chunks)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(temporary, 0o666 & ~_umask())
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as out:
            out.writelines(chunks)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
