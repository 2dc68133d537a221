"""The one run lifecycle, for prompt runs and retrieval runs alike.

=================================== =========================================================
module                              what it holds
=================================== =========================================================
:mod:`~evalkit.run.library`         the entry points ``evaluate_set`` and ``evaluate_retrieval``:
                                    arguments → a plan → the lifecycle
:mod:`~evalkit.run.settings`        the entry points' keywords, declared once (their defaults,
                                    kinds and help; any other is refused)
:mod:`~evalkit.run.plan`            :class:`RunPlan`: what answers, which run and part
                                    (:class:`Placement`, :class:`Shard`), how it is judged
                                    (:class:`Gate`), who observes it (:class:`Observing`)
:mod:`~evalkit.run.lifecycle`       begin / resume, lease and heartbeat, store a case (group
                                    commit), finish, interrupt
:mod:`~evalkit.run.answering`       the answering interface; ``prompts`` (generator + grader, the
                                    async runner) and ``questions`` (retriever + scoring)
:mod:`~evalkit.run.decide`          baseline, comparability, comparison, verdict, acceptance
:mod:`~evalkit.run.outcome`         :class:`Outcome` and the one exit-code rule
:mod:`~evalkit.run.stored_runs`     which runs the running command has in the store (what an
                                    error that ends it outside the lifecycle names)
=================================== =========================================================

The names below are imported lazily: ``import evalkit.run`` costs nothing until one is used.
"""

from __future__ import annotations

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_EXPORTS = {
    "Gate": "plan",
    "Observing": "plan",
    "Outcome": "outcome",
    "Placement": "plan",
    "RunPlan": "plan",
    "Shard": "plan",
    "evaluate_retrieval": "library",
    "evaluate_set": "library",
    "execute": "lifecycle",
}

__all__ = ["Gate", "Observing", "Outcome", "Placement", "RunPlan", "Shard", "evaluate_retrieval", "evaluate_set", "execute"]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'evalkit.run' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .library import evaluate_retrieval, evaluate_set
    from .lifecycle import execute
    from .outcome import Outcome
    from .plan import Gate, Observing, Placement, RunPlan, Shard
