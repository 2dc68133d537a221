"""A real read-only folder for the tests of outputs that cannot be written: permission bits do not
stop root, so a tiny tmpfs is mounted read-only in the test's folder (needs root and ``mount``; the
test is skipped where either is missing)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """Mount an empty read-only tmpfs at ``folder`` (made here) and yield it; unmounted on the way out."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
