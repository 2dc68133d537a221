"""Building measured runs for routing tests through the real repository on a real SQLite file."""

from __future__ import annotations

import json
import time
from pathlib import Path

import attrs
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, ServingIdentity, evaluate_set
from evalkit.config import Config, load_config
from evalkit.grading import Check
from evalkit.runs import CaseResult, Run, RunStatus
from evalkit.storage import open_repository


def golden_set(identifier: str, size: int) -> GoldenPromptSet:
    """A set of ``size`` prompts, each passing exactly when the answer says "yes"."""
    return GoldenPromptSet(
        identifier=identifier,
        name=identifier,
        description="routing test set",
        prompts=[GoldenPrompt(id=f"p{i}", prompt=f"question {i}", assertions=[Assertion.contains("yes")]) for i in range(size)],
    )


@attrs.define
class Lab:
    """A scratch project: an ``evalkit.toml`` naming replay instances and a SQLite results file."""

    root: Path
    database: str
    config: Config | None = None

    def configure(self, providers: str) -> Config:
        """Write ``evalkit.toml`` with ``providers`` (TOML tables) and load it; relative replay
        paths are made absolute under the lab's folder."""
        providers = providers.replace('path = "', f'path = "{self.root}/')
        (self.root / "evalkit.toml").write_text(f'database = "{self.database}"\n\n{providers}', encoding="utf-8")
        self.config = load_config(self.root / "evalkit.toml")
        return self.config

    def measure(self, instance: str, set_identifier: str, passes: list[bool], *, reported: str = "served-model") -> Run:
        """Run a set through ``instance`` (a replay instance reading ``<instance>.jsonl``) with
        ``passes[i]`` deciding whether prompt i passes; the run is verified and complete."""
        assert self.config is not None
        lines = [json.dumps({"id": f"p{i}", "text": "yes" if ok else "no", "model": reported}) for i, ok in enumerate(passes)]
        (self.root / f"{instance}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        outcome = evaluate_set(
            golden_set(set_identifier, len(passes)), provider=instance, config=self.config, database=self.database
        )
        assert outcome.run.status is RunStatus.COMPLETE and outcome.run.verified, outcome.run.identity_note
        return outcome.run

    def repository(self):  # noqa: ANN201 - the SqlRepository
        """The real repository over the lab's database."""
        return open_repository(self.database)


def replay_instance(name: str, alias: str, *, folder: Path | None = None, **extra: object) -> str:
    """A ``[providers.NAME]`` table for a replay instance reading ``NAME.jsonl`` (in ``folder``
    when given, else relative to the working directory)."""
    path = str(folder / f"{name}.jsonl") if folder else f"{name}.jsonl"
    lines = [f"[providers.{name}]", 'adapter = "replay"', f"path = {json.dumps(path)}", f'model = "{alias}"']
    for key, value in extra.items():
        lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n\n"


def store_run(
    repository,  # noqa: ANN001
    set_identifier: str,
    instance: str,
    alias: str,
    scores: list[float],
    *,
    grader: str = "deterministic",
    status: RunStatus = RunStatus.COMPLETE,
    verified: bool = True,
    run_id: str | None = None,
    finished_at: float | None = None,
) -> Run:
    """Store a run directly through begin_run / record_cases / finish_run."""
    now = finished_at if finished_at is not None else time.time()
    identity = ServingIdentity(instance, alias, "served-model")
    run = Run(
        id=run_id or f"run-{set_identifier}-{instance}-{time.monotonic_ns()}",
        set_identifier=set_identifier,
        grader=grader,
        started_at=now - 1,
        case_count=len(scores),
        provider_instance=instance,
        adapter="replay",
        model_alias=alias,
    )
    repository.begin_run(run)
    cases = [
        CaseResult(f"p{i}", score == 1.0, score, (Check("c", score == 1.0),), identity=identity, yardstick=grader, finished_at=now)
        for i, score in enumerate(scores)
    ]
    repository.record_cases(run.id, cases, "metadata")
    return repository.finish_run(run.id, status.value, now, grader=grader, identity=identity if verified else None)
