"""Real folders that refuse writes, for the tests of outputs that cannot be written: a tiny tmpfs
mounted in the test's folder, read-only (permission bits do not stop root) or filled to its last
byte (a full disk). Mounting needs root and ``mount``; the test is skipped where either is missing.
/dev/full stands in only where a path may be a device."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """Mount a tmpfs with ``options`` at ``folder`` (made here) and yield it; unmounted on the way out."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """An empty read-only tmpfs at ``folder``."""
    with mounted_tmpfs(folder, "ro,size=64k") as mounted:
        yield mounted


@contextlib.contextmanager
def full_disk(folder: Path, size: str = "64k") -> Iterator[Path]:
    """A ``size`` tmpfs at ``folder``, filled until a write fails with ENOSPC."""
    with mounted_tmpfs(folder, f"size={size}") as mounted:
        try:
            with open(mounted / "filler", "wb") as filler:
                while True:
                    filler.write(b"\0" * 4096)
                    filler.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        yield mounted
