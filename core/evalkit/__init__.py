"""evalkit: golden-set evaluation for LLM features and their retrieval step.

The public names below are imported lazily, so ``import evalkit`` (and the CLI's start-up) stays
cheap; ``from evalkit import GoldenPromptSet`` works as usual.
"""

from __future__ import annotations

from .version import __version__

# typing is imported only for type checkers: `evalkit --help` must start fast.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_EXPORTS = {
    "Answer": "answers",
    "AssertionKind": "checks",
    "Assertion": "prompts",
    "Check": "grading",
    "Citation": "answers",
    "Passage": "answers",
    "Comparison": "verdict",
    "GenerationRequest": "answers",
    "GoldenPrompt": "prompts",
    "GoldenPromptSet": "prompts",
    "PromptStream": "prompts",
    "GoldenQuestion": "questions",
    "GoldenQuestionSet": "questions",
    "Grading": "grading",
    "QuestionForm": "questions",
    "Report": "reports",
    "Reporter": "reports",
    "Outcome": "run.outcome",
    "RetrievalOutcome": "retrieval.evaluation",
    "RetrievalProvenance": "questions",
    "RetrievalProvenanceProvider": "retrieval.contracts",
    "Retriever": "retrieval.contracts",
    "Run": "runs",
    "CaseResult": "runs",
    "RunOutcome": "evaluation",
    "ServingIdentity": "answers",
    "Tolerances": "tolerance",
    "Usage": "answers",
    "Verdict": "verdict",
    "evaluate_retrieval": "run.library",
    "evaluate_set": "run.library",
    "hookimpl": "hooks",
    "validate_prompt_set": "validation",
    "validate_question_set": "retrieval.validation",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .answers import Answer, Citation, GenerationRequest, Passage, ServingIdentity, Usage
    from .checks import AssertionKind
    from .evaluation import RunOutcome
    from .grading import Check, Grading
    from .hooks import hookimpl
    from .prompts import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream
    from .questions import GoldenQuestion, GoldenQuestionSet, QuestionForm, RetrievalProvenance
    from .retrieval.contracts import RetrievalProvenanceProvider, Retriever
    from .retrieval.evaluation import RetrievalOutcome
    from .retrieval.validation import validate_question_set
    from .run.library import evaluate_retrieval, evaluate_set
    from .run.outcome import Outcome
    from .runs import CaseResult, Run
    from .tolerance import Tolerances
    from .validation import validate_prompt_set
    from .verdict import Comparison, Verdict
