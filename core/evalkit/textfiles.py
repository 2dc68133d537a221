"""Writing a text file a user named: whole or not at all, and never over a device, pipe or link.

Reports and TREC files are CI artifacts: a reader must never see half of one, so a regular file
is written to a temporary file beside it and renamed over it at once. Renaming over anything
else would destroy it: ``-o /dev/full`` (as root) once put a regular file where the device was.
A symbolic link, a named pipe or a device is therefore written into as ``>`` would.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_text_file"]


def write_text_file(path: Path, chunks: Iterable[str]) -> None:
    """Write ``chunks`` to ``path`` (UTF-8, ``\\n`` line ends): a regular file or a new one is
    replaced whole (its folder is created); a link, pipe or device is written into. An
    ``OSError`` (a full disk, a folder where the file should be) leaves any earlier file as it was."""
    if path.is_symlink() or (path.exists() and not path.is_file() and not path.is_dir()):
        with open(path, "w", encoding="utf-8", newline="\n") as out:
            out.writelines(chunks)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(temporary, 0o666 & ~_umask())
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.writelines(chunks)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
