"""Pieces the commands share (evalkit.cli.common) that no single command's tests pin down."""

from __future__ import annotations

import gc
from typing import Any

from evalkit.cli.common import run_started


def test_a_run_starts_with_what_is_already_built_frozen_out_of_garbage_collection() -> None:
    calls: list[tuple[Any, int]] = []
    start = run_started(lambda run, total: calls.append((run, total)))
    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        start("the run", 7)
        assert calls == [("the run", 7)]
        assert gc.get_freeze_count() > 0  # imported modules, plugins and configuration are frozen
    finally:
        gc.unfreeze()
