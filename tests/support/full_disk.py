"""A real full disk for the tests of what evalkit does when a write finds no room: a tiny tmpfs
mounted in the test's folder and filled to its last byte (needs root and ``mount``; the test is
skipped where either is missing). /dev/full stands in only where a path may be a device."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def full_disk(folder: Path, size: str = "64k") -> Iterator[Path]:
    """Mount a ``size`` tmpfs at ``folder`` (made here), fill it until a write fails with ENOSPC,
    and yield it; unmounted on the way out."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        try:
            with open(folder / "filler", "wb") as filler:
                while True:
                    filler.write(b"\0" * 4096)
                    filler.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
