"""Contract checks for generators, graders and retrievers, driven through the kernel's own rules."""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..answers import Answer
from ..grading import Grading, grading_problems
from ..privacy import read_secrets
from ..prompts import Assertion, GoldenPrompt, GoldenPromptSet
from ..questions import GoldenQuestionSet
from ..shapes import finite_number
from ..wording import quoted
from .problems import ContractReport

__all__ = ["KIT_SET", "check_generator", "check_grader", "check_retriever"]

#: The prompts :func:`check_generator` sends unless given a set of its own.
KIT_SET = GoldenPromptSet(
    identifier="evalkit_testing.generator_contract",
    name="evalkit.testing generator contract",
    description="Three prompts sent to a generator under test; only the contract is checked, not the answers.",
    prompts=[
        GoldenPrompt(
            id="capital", prompt="What is the capital of France? Answer with the city only.", reference="Paris"
        ),
        GoldenPrompt(
            id="arithmetic",
            prompt="Compute 2 + 2 and reply with the digit only.",
            reference="4",
            system_prompt="You are a calculator.",
        ),
        GoldenPrompt(
            id="echo",
            prompt="Reply with exactly the word: ACKNOWLEDGED",
            assertions=[Assertion.contains("ACKNOWLEDGED")],
        ),
    ],
)


def _name(obj: Any) -> str:
    return getattr(obj, "__name__", None) or type(obj).__name__


def _create(factory: Any, options: Mapping[str, Any], report: ContractReport, what: str) -> Any:
    """The component built as evalkit builds it: ``options`` checked against the factory's
    ``Options`` and handed over by the contract it follows (:func:`evalkit.options.build_plugin`)."""
    from ..options import build_plugin

    ok, created = report.call(f"creating the {what} with {dict(options)!r}", build_plugin, factory, **dict(options))
    return created if ok else None


def check_generator(factory: Any, *, prompt_set: GoldenPromptSet | None = None, **options: Any) -> None:
    """Check a generator: create it with ``options`` and answer a small set through the real runner.

    The set (``prompt_set``, default :data:`KIT_SET`) runs with a configured-instance identity into
    a temporary SQLite store, exactly as ``evalkit run`` does; the check asks for the
    :class:`~evalkit.components.Generator` or ``AsyncGenerator`` protocol; the declarations a run
    refuses, by the kernel's own rules (:func:`~evalkit.components.concurrency_fault`,
    :func:`~evalkit.components.echoed_model_note_fault`, :func:`~evalkit.privacy.read_secrets`):
    a whole-number ``concurrency`` of at least 1, an ``echoed_model_note`` of printable text or
    ``None``, ``secret_values()`` of texts (``SecretHolder``) that never reach the store; no errored case, and answers that report their model so the run's serving
    identity is verified. Raises one ``AssertionError`` listing every problem.
    """
    from .. import components
    from ..run.library import evaluate_set

    report = ContractReport(f"generator {_name(factory)}")
    generator = _create(factory, options, report, "generator")
    if generator is None:
        report.raise_if_any()
    if not (
        components.offers(generator, components.Generator) or components.offers(generator, components.AsyncGenerator)
    ):
        report.add("it has neither generate(request) nor async agenerate(request)")
        report.raise_if_any()
    fault = components.async_method_fault(generator)
    if fault is not None:
        report.add(f"its {fault}")
    # the generator's declarations, each by the rule a run refuses it by (one function, used by both)
    concurrency = None  # the generator's own, unless the run would refuse it
    fault = components.concurrency_fault(components.declared(generator, "concurrency"))
    if fault is not None:
        report.add(f"it declares concurrency {fault}")
        concurrency = 1  # a run refuses it: the rest is still checked
    refused = []  # what a run refuses before it asks the generator anything
    fault = components.echoed_model_note_fault(components.declared(generator, "echoed_model_note"))
    if fault is not None:
        refused.append(f"it declares echoed_model_note {fault}")
    secrets: tuple[str, ...] = ()
    if components.offers(generator, components.SecretHolder):
        values, fault = read_secrets(generator)
        if fault is not None:
            refused.append(fault)
        secrets = tuple(v for v in values if v)
    if refused:
        report.extend(refused)
        report.raise_if_any()  # the runner would stop on the same refusal: nothing more to check
    alias = str(options.get("model") or "kit-model")
    bound = components.BoundGenerator(generator, "(under test)", "kit-instance", alias, True, None)
    with tempfile.TemporaryDirectory(prefix="evalkit-kit-") as folder:
        database = f"sqlite:///{Path(folder) / 'kit.db'}"
        with report.step("answering through the runner"):
            outcome = evaluate_set(
                prompt_set or KIT_SET,
                bound_generator=bound,
                config=_empty_config(),
                database=database,
                privacy="full",
                concurrency=concurrency,
            )
            for case in outcome.run.cases:
                if case.errored:
                    report.add(f"prompt {quoted(case.case_id)}: the generator failed: {case.error}")
            if outcome.run.identity is None and not any(c.errored for c in outcome.run.cases):
                report.add(f"the run's serving identity is not verified: {outcome.run.identity_note}")
            if secrets:
                stored = Path(folder, "kit.db").read_bytes()
                for value in secrets:
                    if value.encode() in stored:
                        report.add("a value from secret_values() reached the results store")
    report.raise_if_any()


def _empty_config() -> Any:
    from ..config import Config

    return Config()


def check_grader(factory: Any, **options: Any) -> None:
    """Check a grader: create it with ``options`` and grade a passing and a failing answer.

    Asks for the :class:`~evalkit.components.Grader` or ``AsyncGrader`` protocol and, for each
    grading: a :class:`~evalkit.Grading`; a finite score in 0..1; ``passed`` a bool; named boolean
    checks; one non-empty yardstick shared by every grading (runs are compared only under one
    yardstick); and a reference answer graded at least as well as a wrong one. Raises one
    ``AssertionError`` listing every problem.
    """
    from .. import components
    from ..event_loops import run_to_completion

    report = ContractReport(f"grader {_name(factory)}")
    grader = _create(factory, options, report, "grader")
    if grader is None:
        report.raise_if_any()
    if not (components.offers(grader, components.Grader) or components.offers(grader, components.AsyncGrader)):
        report.add("it has neither grade(prompt, answer) nor async agrade(prompt, answer)")
        report.raise_if_any()
    if components.offers(grader, components.ReadinessCheck):
        report.call("check_ready()", grader.check_ready)
    prompt = GoldenPrompt(
        id="capital",
        prompt="What is the capital of France?",
        reference="Paris",
        assertions=[Assertion.contains("Paris"), Assertion.max_words(5)],
    )

    def grade(answer: Answer) -> Any:
        if components.offers(grader, components.AsyncGrader) and inspect.iscoroutinefunction(grader.agrade):
            # on a loop of its own: an async test (a running loop) is not the grader's fault
            return run_to_completion(lambda: grader.agrade(prompt, answer))
        return grader.grade(prompt, answer)

    gradings = {}
    for label, answer in (
        ("the reference answer", Answer("Paris", model="kit")),
        ("a wrong answer", Answer("I think it is Lyon, or maybe Marseille.", model="kit")),
    ):
        ok, grading = report.call(f"grading {label}", grade, answer)
        if not ok:
            continue
        gradings[label] = grading
        report.extend([f"grading {label}: {p}" for p in grading_problems(grading)])
    yardsticks = {g.yardstick for g in gradings.values() if isinstance(g, Grading)}
    if len(yardsticks) > 1:
        report.add(
            f"the gradings carry different yardsticks {sorted(map(str, yardsticks))}; one grader must grade under one yardstick"
        )
    good, bad = gradings.get("the reference answer"), gradings.get("a wrong answer")
    if (
        isinstance(good, Grading)
        and isinstance(bad, Grading)
        and finite_number(good.score)
        and finite_number(bad.score)
    ):
        if good.score < bad.score:
            report.add(f"the reference answer scores {good.score} and a wrong answer {bad.score}")
    report.raise_if_any()


def _result_id(result: Any) -> Any:
    """The document id of one retrieved result: a plain id, an ``(id, score)`` pair or a ``ScoredDocument``."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return result[0]
    return getattr(result, "id", result)


def check_retriever(
    factory: Any, *, question_set: GoldenQuestionSet, k: int = 10, require_provenance: bool = True, **options: Any
) -> None:
    """Check a retriever: create it with ``options`` and ask every question of ``question_set``.

    Asks for the :class:`~evalkit.Retriever` protocol; a valid provenance declaration when it
    offers ``provenance()`` (checked with the kernel's rules, and the same on a second call);
    ``prepare()`` and ``close()`` working when offered; and for each question a list of at most
    ``limit`` non-empty string ids (plain, as ``(id, score)`` pairs with finite scores, or as
    ``ScoredDocument`` results), each question scored by the kernel's scoring. A retriever
    without ``provenance()`` is a problem unless ``require_provenance=False`` (its runs are stored
    but never compared). Raises one
    ``AssertionError`` listing every problem.
    """
    from .. import components
    from ..errors import RetrievalError
    from ..retrieval.contracts import ClosingRetriever, PreparedRetriever, RetrievalProvenanceProvider, Retriever
    from ..retrieval.provenance import validate_provenance
    from ..retrieval.ranking import read_ranking
    from ..retrieval.scoring import score_question
    from ..retrieval.validation import question_set_problems

    report = ContractReport(f"retriever {_name(factory)}")
    report.extend([f"the question set: {p}" for p in question_set_problems(question_set)])
    retriever = _create(factory, options, report, "retriever")
    if retriever is None:
        report.raise_if_any()
    if not components.offers(retriever, Retriever):
        report.add("it has no retrieve(question, limit) method")
        report.raise_if_any()
    if components.offers(retriever, RetrievalProvenanceProvider):
        ok, declared = report.call("provenance()", retriever.provenance)
        if ok:
            report.extend([f"provenance(): {p}" for p in validate_provenance(declared)])
            ok, again = report.call("a second provenance() call", retriever.provenance)
            if ok and again != declared:
                report.add(
                    "provenance() declares something else on a second call; a run asks once and must be able to trust it"
                )
    elif require_provenance:
        report.add("it declares no provenance() (RetrievalProvenanceProvider): its runs can never be compared")
    if components.offers(retriever, PreparedRetriever):
        report.call("prepare()", retriever.prepare)
    limit = max(k, 12)
    for question in question_set.questions:
        ok, ranked = report.call(
            f"retrieve() for question {quoted(question.id)}", retriever.retrieve, question.question, limit
        )
        if not ok:
            continue
        if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Sequence):
            report.add(
                f"question {quoted(question.id)}: retrieve() must return a list of document ids, got {type(ranked).__name__}"
            )
            continue
        ids = [_result_id(i) for i in ranked]
        wrong = [i for i in ids if not isinstance(i, str) or not i]
        if wrong:
            report.add(
                f"question {quoted(question.id)}: retrieve() returned ids that are not non-empty strings: {wrong[:3]!r}"
            )
            continue
        try:
            ranking, _ = read_ranking(ranked, len(ranked))
        except RetrievalError as exc:
            report.add(f"question {quoted(question.id)}: retrieve() returned something that is not a ranking: {exc}")
            continue
        if len(ranked) > limit:
            report.add(f"question {quoted(question.id)}: retrieve() returned {len(ranked)} ids for limit {limit}")
        with report.step(f"scoring question {quoted(question.id)}"):
            score_question(question, list(ranking.ids), k, 0.0)
    if components.offers(retriever, ClosingRetriever):
        report.call("close()", retriever.close)
    report.raise_if_any()
