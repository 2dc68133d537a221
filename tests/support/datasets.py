"""The public test collections (Cranfield, SciFact) some tests read: never shipped, never copied in.

Their licences keep them out of any distribution, so they live outside the repository, in a
``shared/datasets`` folder beside it or above it (the first found walking up from the repository),
or wherever ``EVALKIT_TEST_DATASETS`` points. A test that needs one skips when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def datasets_folder() -> Path | None:
    """The folder holding ``cranfield/`` and ``scifact/``, or ``None``."""
    named = os.environ.get("EVALKIT_TEST_DATASETS")
    if named:
        return Path(named) if Path(named).is_dir() else None
    for parent in ROOT.parents:
        candidate = parent / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return None


def dataset(name: str, *needed: str) -> Path:
    """The folder of the collection ``name`` (its ``needed`` files checked); skips the test when absent."""
    folder = datasets_folder()
    path = folder / name if folder is not None else None
    if path is None or not all((path / n).exists() for n in needed):
        pytest.skip(f"the {name} test collection is not here (a shared/datasets folder above the repository, or EVALKIT_TEST_DATASETS)")
    return path
