"""The backend behind an alias, as part of who answered: the evidence an endpoint gives of the model
actually serving, compared between a run and its baseline.

A gateway serves an alias from whatever backend it is told to (LiteLLM's ``x-litellm-model-name``
names it on every reply); a llama.cpp server echoes the alias it was sent and names the file it
loaded in ``/props``, and its ``/v1/models`` entry carries the model's own metadata. A generator
that can say so stores this evidence with the run (``metrics["serving"]["evidence"]``, see
:class:`~evalkit.components.ServingEvidence`). Two runs whose identity evidence differs were not
answered by the same model, whatever alias and reported model they share: such a run is not
compared with that baseline (the reason names what differed), and accepting it on purpose
(``evalkit baseline accept``) makes the new backend the baseline.

Identity evidence is the routed model, the model file, the ``/v1/models`` entry's ``owned_by``
and its ``meta.*`` figures (parameters, size, context length); the server's slots and build are
not the model and are left out. Evidence missing on one side — a baseline stored before evidence
was kept, a gateway that stopped naming its backend — does not stop the comparison: it is said
beside it, so an upgrade does not lose every scope's baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .printable import visible

__all__ = ["EvidenceCheck", "compare_evidence", "identity_evidence"]

#: Evidence keys that name the model serving (``meta.*`` keys too); others describe the server.
IDENTITY_KEYS = ("routed_model", "model_file", "owned_by")


def identity_evidence(metrics: Mapping[str, Any] | None) -> dict[str, str]:
    """The identity evidence a stored run carries (empty when none), values as text."""
    serving = (metrics or {}).get("serving") if isinstance(metrics, Mapping) else None
    evidence = serving.get("evidence") if isinstance(serving, Mapping) else None
    if not isinstance(evidence, Mapping):
        return {}
    return {
        str(key): str(value)
        for key, value in evidence.items()
        if isinstance(key, str) and (key in IDENTITY_KEYS or key.startswith("meta.")) and isinstance(value, (str, int, float))
        and not isinstance(value, bool)
    }


@attrs.frozen
class EvidenceCheck:
    """What the two runs' identity evidence says: ``differences`` (a sentence per key whose value
    differs: the runs were answered by different backends) and ``notes`` (evidence present on one
    side only: said beside the comparison)."""

    differences: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def same_backend(self) -> bool:
        """False when some identity evidence differs."""
        return not self.differences


def _shown(evidence: Mapping[str, str]) -> str:
    return ", ".join(f"{key} {visible(value)!r}" for key, value in sorted(evidence.items()))


def compare_evidence(run_metrics: Mapping[str, Any] | None, baseline_metrics: Mapping[str, Any] | None, baseline_id: str) -> EvidenceCheck:
    """Compare the identity evidence of a run with its baseline's (``baseline_id``, for messages)."""
    mine, theirs = identity_evidence(run_metrics), identity_evidence(baseline_metrics)
    if not mine and not theirs:
        return EvidenceCheck()
    if not theirs:
        return EvidenceCheck(notes=(
            f"The baseline run {baseline_id} was stored without evidence of the backend serving the alias; this run's "
            f"({_shown(mine)}) is not checked against it.",
        ))  # fmt: skip
    if not mine:
        return EvidenceCheck(notes=(
            f"This run's endpoint gave no evidence of the backend serving the alias; the baseline run {baseline_id}'s "
            f"({_shown(theirs)}) is not checked.",
        ))  # fmt: skip
    differences = tuple(
        f"{key} {visible(theirs[key])!r} (baseline run {baseline_id}) → {visible(mine[key])!r} (this run)"
        for key in sorted(set(mine) & set(theirs))
        if mine[key] != theirs[key]
    )
    one_sided = sorted(set(mine) ^ set(theirs))
    notes = ()
    if one_sided and not differences:
        only = ", ".join(f"{key} ({'this run' if key in mine else 'the baseline'} only)" for key in one_sided)
        notes = (f"Backend evidence given on one side only: {only}.",)
    return EvidenceCheck(differences, notes)
