"""Real plugin distributions for tests, installed with pip into their own folders.

A test adds a folder to ``PYTHONPATH`` for one ``evalkit`` subprocess, so a deliberately broken or
clashing distribution is installed for real without touching the shared test environment.
The distributions declare ``dependencies = ["evalkit-golden"]`` like real plugins; they are
installed with ``--no-deps`` because the kernel under test is already installed, so nothing is
ever fetched from an index.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def install_into(target: Path, *names: str) -> Path:
    """pip-install the test distributions ``names`` (folders under tests/data) into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    paths = [str(DATA / name) for name in names]
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target), *paths],
        check=True,
        capture_output=True,
        text=True,
    )
    return target
