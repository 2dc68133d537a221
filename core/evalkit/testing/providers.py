"""Contract checks for golden prompt set and golden question set providers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..answers import Answer
from ..components import offers
from ..prompts import GoldenPromptSet
from ..questions import GoldenQuestionSet
from ..wording import quoted
from .problems import ContractReport

__all__ = ["check_prompt_set_provider", "check_question_set_provider"]


def _provider(obj: Any, method: str, report: ContractReport) -> Any:
    """The provider: ``obj`` itself when it has ``method``, else what calling it (a class or factory) returns."""
    if callable(getattr(obj, method, None)) and not isinstance(obj, type):
        return obj
    if not callable(obj):
        report.add(f"{obj!r} has no {method}() method and is not a class or zero-argument factory")
        return None
    ok, provider = report.call("creating the provider with no arguments (how evalkit calls an entry point)", obj)
    if ok and not callable(getattr(provider, method, None)):
        report.add(f"the provider {type(provider).__name__} has no {method}() method")
        return None
    return provider if ok else None


def _shipped(provider: Any, method: str, kind: type, report: ContractReport) -> list[Any] | None:
    ok, returned = report.call(f"{method}()", getattr(provider, method))
    if not ok:
        return None
    if isinstance(returned, (str, bytes)) or not isinstance(returned, Iterable) or isinstance(returned, kind):
        report.add(f"{method}() must return an iterable of {kind.__name__}, got {type(returned).__name__}")
        return None
    items = list(returned)
    good = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, kind):
            report.add(f"{method}() item {number} is a {type(item).__name__}, not a {kind.__name__}")
        else:
            good.append(item)
    if not items:
        report.add(f"{method}() returned no sets")
    seen: set[str] = set()
    for item in good:
        if item.identifier in seen:
            report.add(f'{method}() returns set {quoted(item.identifier)} more than once')
        seen.add(item.identifier)
    return good


def _stable(provider: Any, method: str, first: list[Any], fingerprint: Any, report: ContractReport) -> None:
    """A second call must ship the same sets: runs are resumed, sharded and compared by fingerprint."""
    ok, again = report.call(f"a second {method}() call", getattr(provider, method))
    if not ok or again is None:
        return
    kind = type(first[0]) if first else object
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for item in first:
        before.setdefault(item.identifier, fingerprint(item))
    for item in again:
        if isinstance(item, kind):
            after.setdefault(item.identifier, fingerprint(item))
    for identifier, value in before.items():
        if after.get(identifier) != value:
            report.add(
                f'set {quoted(identifier)} changes between two {method}() calls; a set must be the same on every call '
                "(its fingerprint decides resume, shards and baselines)"
            )


def _kinds() -> dict[str, Any]:
    from ..hooks import assertion_kinds, plugin_manager

    manager, _ = plugin_manager()
    return assertion_kinds(manager)


def check_prompt_set_provider(obj: Any) -> None:
    """Check a golden prompt set provider (the entry point's class or factory, or an instance).

    Checks: it can be created with no arguments; ``golden_prompt_sets()`` returns
    :class:`~evalkit.GoldenPromptSet` objects with distinct identifiers; every set passes the kernel's
    validation (with the assertion kinds installed hook plugins add); a second call ships the same
    sets; and every reference answer satisfies its own prompt's assertions (so the no-provider
    self-check of the set passes). Raises one ``AssertionError`` listing every problem.
    """
    from ..checks import evaluate
    from ..run.answering.prompt_order import set_fingerprint
    from ..validation import prompt_set_problems

    report = ContractReport(f"golden prompt set provider {_name(obj)}")
    provider = _provider(obj, "golden_prompt_sets", report)
    sets = _shipped(provider, "golden_prompt_sets", GoldenPromptSet, report) if provider is not None else None
    if sets:
        kinds = _kinds()
        for golden_set in sets:
            problems = prompt_set_problems(golden_set, kinds)
            report.extend(problems)
            if problems:
                continue
            for prompt in golden_set.prompts:
                if prompt.reference is None or not prompt.assertions:
                    continue
                answer = prompt.reference if isinstance(prompt.reference, Answer) else Answer(prompt.reference)
                for assertion in prompt.assertions:
                    check = evaluate(assertion, answer, kinds)
                    if not check.passed:
                        why = check.error or check.detail or "it does not hold"
                        report.add(
                            f'set {quoted(golden_set.identifier)}, prompt {quoted(prompt.id)}: the reference fails its own check '
                            f"{check.name} ({why})"
                        )
        _stable(provider, "golden_prompt_sets", sets, set_fingerprint, report)
    report.raise_if_any()


def check_question_set_provider(obj: Any) -> None:
    """Check a golden question set provider (the entry point's class or factory, or an instance).

    Checks: it can be created with no arguments; ``golden_question_sets()`` returns
    :class:`~evalkit.GoldenQuestionSet` objects with distinct identifiers; every set passes the
    kernel's validation; a second call ships the same labels; and ``default_deployments()``, when
    offered, maps deployment names to ``{retriever id: options}`` tables. Raises one
    ``AssertionError`` listing every problem.
    """
    from ..retrieval.contracts import DeploymentDefaults
    from ..retrieval.provenance import labels_fingerprint
    from ..retrieval.validation import question_set_problems

    report = ContractReport(f"golden question set provider {_name(obj)}")
    provider = _provider(obj, "golden_question_sets", report)
    sets = _shipped(provider, "golden_question_sets", GoldenQuestionSet, report) if provider is not None else None
    if sets:
        for question_set in sets:
            report.extend(question_set_problems(question_set))
        _stable(provider, "golden_question_sets", sets, labels_fingerprint, report)
    if provider is not None and offers(provider, DeploymentDefaults):
        with report.step("default_deployments()"):
            deployments = provider.default_deployments()
            if not isinstance(deployments, dict) and not hasattr(deployments, "items"):
                raise AssertionError(f"must return a mapping, got {type(deployments).__name__}")
            for name, retrievers in deployments.items():
                if not isinstance(name, str) or not hasattr(retrievers, "items"):
                    report.add(f"default_deployments(): deployment {name!r} must map retriever ids to option tables")
                    continue
                for retriever, options in retrievers.items():
                    if not isinstance(retriever, str) or not hasattr(options, "items"):
                        report.add(f"default_deployments(): deployment {name!r}, retriever {retriever!r}: options must be a table")
    report.raise_if_any()


def _name(obj: Any) -> str:
    return getattr(obj, "__name__", None) or type(obj).__name__
