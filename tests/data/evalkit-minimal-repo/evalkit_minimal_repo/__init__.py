"""A third-party results repository that offers only evalkit's base ``ResultRepository`` protocol.

It keeps every run in one JSON file named by the URL (``minimal:///abs/path/store.json``) and has
none of the optional capabilities: no scoped baseline read, no quality reads, no history listing,
no resume lookup, no verdicts. evalkit must still run and store with it, and say why it does not
compare.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from evalkit import CaseResult, Run, ServingIdentity
from evalkit.convert import structure, unstructure
from evalkit.runs import RunStatus

__all__ = ["MinimalRepository"]


class MinimalRepository:
    """Runs and their cases in one JSON file; the base protocol and nothing more."""

    def __init__(self, url: str) -> None:
        """Open (or start) the store file the URL names."""
        scheme, _, rest = url.partition("://")
        if scheme != "minimal" or not rest.startswith("/"):
            raise ValueError(f"expected minimal:///absolute/path, got {url!r}")
        self.path = Path(rest)

    def _load(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        return json.loads(self.path.read_text(encoding="utf-8"))

    def _save(self, data: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(json.dumps(data), encoding="utf-8")
        os.replace(scratch, self.path)

    def begin_run(self, run: Run) -> Run:
        """Store the run header, or return the stored one of that id."""
        data = self._load()
        if run.id not in data:
            header = attrs.evolve(run, status=RunStatus.RUNNING, cases=())
            data[run.id] = {"run": unstructure(header), "cases": {}}
            self._save(data)
        return self.get_run(run.id, with_cases=False)  # type: ignore[return-value]

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        """Add cases; an already stored case id is kept unless it is errored."""
        data = self._load()
        stored = data[run_id]["cases"]
        for case in cases:
            if case.case_id not in stored or stored[case.case_id]["error"] is not None:
                kept = case if privacy == "full" else attrs.evolve(case, answer_text=None, detail=None)
                stored[case.case_id] = unstructure(kept)
        self._save(data)

    def finish_run(
        self,
        run_id: str,
        status: str,
        finished_at: float,
        *,
        grader: str | None = None,
        identity: ServingIdentity | None = None,
        identity_note: str | None = None,
        metrics: Mapping[str, Any] | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> Run:
        """Set the status and what the run learned; aggregates come from the stored cases on read."""
        data = self._load()
        record = data[run_id]["run"]
        # a run left running (a shard in, others to come) has no finish time
        record.update(status=status, finished_at=None if status == "running" else finished_at, identity_note=identity_note)
        record["identity"] = unstructure(identity) if identity is not None else None
        if grader is not None:
            record["grader"] = grader
        if metrics is not None:
            record["metrics"] = dict(metrics)
        if provenance is not None:
            record["provenance"] = dict(provenance)
        self._save(data)
        return self.get_run(run_id)  # type: ignore[return-value]

    def get_run(self, run_id: str, with_cases: bool = True) -> Run | None:
        """One run (with its cases unless ``with_cases`` is false), or ``None``."""
        entry = self._load().get(run_id)
        if entry is None:
            return None
        run = structure(entry["run"], Run)
        if with_cases:
            run = run.with_cases(structure(c, CaseResult) for c in entry["cases"].values())
        return run
