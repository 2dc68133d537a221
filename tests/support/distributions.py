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


def write_distribution(
    folder: Path, name: str, version: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str] | None = None
) -> Path:
    """Lay out an installed distribution by hand in ``folder`` (a ``sys.path`` entry): its
    ``NAME-VERSION.dist-info`` with ``METADATA`` and ``entry_points.txt``, and ``modules``
    (file name → source) beside it. Quicker than pip for tests that need several versions of one
    distribution, or a plugin module that misbehaves at import. Returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA test distribution.\n")
    sections = [f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in members.items()) for group, members in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(sections))
    for filename, source in (modules or {}).items():
        (folder / filename).write_text(source)
    return folder
