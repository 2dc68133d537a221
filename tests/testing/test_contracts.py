"""evalkit.testing's contract checks: built-in plugins pass, broken ones fail with every problem listed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from evalkit import Answer, Assertion, GoldenPrompt, GoldenPromptSet, GoldenQuestion, GoldenQuestionSet, Grading
from evalkit.errors import GenerationError
from evalkit.testing import (
    check_generator,
    check_grader,
    check_prompt_set_provider,
    check_question_set_provider,
    check_retriever,
)


def problems_of(error: pytest.ExceptionInfo[AssertionError]) -> list[str]:
    return [line[4:] for line in str(error.value).splitlines()[1:]]


def test_the_builtin_and_contrib_providers_pass() -> None:
    from evalkit_plugins.smoke import SmokeSetProvider
    from evalkit_set_arith import ArithmeticSets
    from evalkit_set_stdlib import StdlibQuestionSets

    check_prompt_set_provider(SmokeSetProvider)
    check_prompt_set_provider(ArithmeticSets())
    check_question_set_provider(StdlibQuestionSets)


class SloppySets:
    """Breaks several rules at once."""

    calls = 0

    def golden_prompt_sets(self):
        SloppySets.calls += 1
        return [
            GoldenPromptSet("Sloppy Set", "", prompts=[GoldenPrompt("a", "hi", assertions=[Assertion.regex("(open")])]),
            GoldenPromptSet(
                "sloppy.refs",
                "Refs",
                prompts=[
                    GoldenPrompt(
                        "wrong-ref", "Capital of France?", assertions=[Assertion.contains("Paris")], reference="Lyon"
                    ),
                    GoldenPrompt("flaky", f"Call number {SloppySets.calls}", reference="x"),
                ],
            ),
            GoldenPromptSet("sloppy.refs", "Again", prompts=[GoldenPrompt("a", "b", reference="c")]),
            "not a set",
        ]


def test_a_sloppy_prompt_set_provider_gets_every_problem_in_one_error() -> None:
    with pytest.raises(AssertionError) as error:
        check_prompt_set_provider(SloppySets)
    problems = problems_of(error)
    assert str(error.value).startswith("golden prompt set provider SloppySets breaks the evalkit contract")
    assert "golden_prompt_sets() item 4 is a str, not a GoldenPromptSet" in problems
    assert 'golden_prompt_sets() returns set "sloppy.refs" more than once' in problems
    assert any("field identifier must be lowercase" in p for p in problems)
    assert any('set "Sloppy Set": field name must not be empty' in p for p in problems)
    assert any("invalid regular expression" in p for p in problems)
    assert any('prompt "wrong-ref": the reference fails its own check contains' in p for p in problems)
    assert any('set "sloppy.refs" changes between two golden_prompt_sets() calls' in p for p in problems)


def test_a_provider_that_cannot_be_created_or_raises_is_reported() -> None:
    class NeedsArguments:
        def __init__(self, folder):
            self.folder = folder

        def golden_prompt_sets(self):
            return []

    class Raises:
        def golden_question_sets(self):
            raise RuntimeError("dataset folder not found")

    with pytest.raises(AssertionError, match="creating the provider with no arguments"):
        check_prompt_set_provider(NeedsArguments)
    with pytest.raises(AssertionError, match=r"golden_question_sets\(\) raised RuntimeError: dataset folder not found"):
        check_question_set_provider(Raises)


def test_question_set_rules_and_default_deployments_are_checked() -> None:
    class Questions:
        def golden_question_sets(self):
            return [
                GoldenQuestionSet("q.set", "Q", questions=[GoldenQuestion("a", "", expected_document_ids=["d", "d"])])
            ]

        def default_deployments(self):
            return {"packaged": {"evalkit.lexical": "corpus.jsonl"}}

    with pytest.raises(AssertionError) as error:
        check_question_set_provider(Questions)
    problems = problems_of(error)
    assert any("field question must not be empty" in p for p in problems)
    assert any("repeats document id 'd'" in p for p in problems)
    assert any("deployment 'packaged', retriever 'evalkit.lexical': options must be a table" in p for p in problems)


def test_the_replay_generator_passes_through_the_real_runner(tmp_path: Path) -> None:
    from evalkit.testing import KIT_SET
    from evalkit_plugins.replay import ReplayGenerator

    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(json.dumps({"id": p.id, "text": "Paris", "model": "app-v2"}) + "\n" for p in KIT_SET.prompts)
    )
    check_generator(ReplayGenerator, path=str(answers))


class UnreliableGenerator:
    concurrency = 0

    def __init__(self, token="sk-secret-123"):
        self.token = token

    def secret_values(self):
        return (self.token,)

    def generate(self, request):
        if request.case_id == "arithmetic":
            raise GenerationError("upstream returned 502")
        return Answer(text=f"echo {self.token}")  # leaks the credential, reports no model


def test_a_generator_that_fails_leaks_and_reports_no_model_gets_every_problem() -> None:
    with pytest.raises(AssertionError) as error:
        check_generator(UnreliableGenerator)
    problems = problems_of(error)
    assert "it declares concurrency int 0, which must be a whole number of at least 1" in problems
    assert 'prompt "arithmetic": the generator failed: upstream returned 502' in problems
    assert not any("sk-secret-123" in p for p in problems) or any("reached the results store" in p for p in problems)


class Declaring:
    """Answers every prompt of the kit, reporting its model: only its declarations are under test."""

    def generate(self, request):
        return Answer(text="Paris 4 ACKNOWLEDGED", model="kit-model")


@pytest.mark.parametrize(
    ("note", "said"),
    [
        (5, "int 5"),
        ("first line\nsecond line", "str 'first line\\nsecond line'"),
        ("x" * 301, "str 'xxxxxxxxxxxxxxxxxxxxxxxx"),
        ("", "str ''"),
    ],
)
def test_a_generator_whose_echoed_model_note_a_run_refuses_is_refused_by_the_kit_in_the_same_words(note, said) -> None:
    """A run refuses an ``echoed_model_note`` that is not printable text of 1 to 300 characters,
    nor ``None`` (``components.echoed_model_note_fault``); the kit checked no such thing, and a
    plugin met it as "answering through the runner raised PluginError: provider instance
    "kit-instance" declares …". It is now the kit's own problem, by the kernel's rule."""
    from evalkit import components

    Noting = type("Noting", (Declaring,), {"echoed_model_note": note})
    with pytest.raises(AssertionError) as error:
        check_generator(Noting)
    fault = components.echoed_model_note_fault(note)
    assert fault is not None and fault.startswith(said)
    assert problems_of(error) == [f"it declares echoed_model_note {fault}"]
    with pytest.raises(Exception, match="declares echoed_model_note " + re.escape(fault)):
        components.BoundGenerator(Noting(), "(under test)", "x", None, True).echoed_model_note("default")


@pytest.mark.parametrize("note", [None, "the endpoint echoes the alias it is sent", "é" * 300])
def test_an_echoed_model_note_a_run_takes_passes_the_kit(note) -> None:
    check_generator(type("Noting", (Declaring,), {"echoed_model_note": note}))


def test_the_kit_reads_secret_values_and_concurrency_as_a_run_does() -> None:
    """The kit had rules of its own: ``secret_values()`` returning a set (a run takes it) was
    refused, one holding a non-text printed every value — the key — in the problem, and a
    ``concurrency`` property that raises (a run reads it as undeclared) crashed the check."""

    class Sets(Declaring):
        def secret_values(self):
            return {"sk-kept-out-123456"}

        @property
        def concurrency(self):
            raise RuntimeError("pool not set up")

    check_generator(Sets)

    class Mixed(Declaring):
        def secret_values(self):
            return ["sk-kept-out-123456", 5]

    with pytest.raises(AssertionError) as error:
        check_generator(Mixed)
    assert problems_of(error) == [
        "secret_values() returned a value of type int among its values, where each must be text (str)"
    ]
    assert "sk-kept-out" not in str(error.value)


def test_a_generator_without_a_model_is_not_verified() -> None:
    class NoModel:
        def generate(self, request):
            return Answer(text="ok")

    with pytest.raises(AssertionError, match="serving identity is not verified"):
        check_generator(NoModel)


def test_an_object_that_is_no_generator_is_refused() -> None:
    with pytest.raises(AssertionError, match="neither generate"):
        check_generator(lambda: object())


def test_the_deterministic_grader_passes() -> None:
    from evalkit_plugins.deterministic import DeterministicGrader

    check_grader(DeterministicGrader)


def test_an_async_grader_passes_when_checked_from_an_async_test() -> None:
    """Inside a running loop (an async test) the check's own ``asyncio.run()`` refused, and the
    grader was said to break the contract: "grading the reference answer raised RuntimeError"."""
    import asyncio

    class Async:
        async def agrade(self, prompt, answer):
            passed = "Paris" in answer.text
            return Grading(1.0 if passed else 0.0, passed, yardstick="async:1")

    async def test() -> None:
        check_grader(Async)

    asyncio.run(test())


def test_a_grader_breaking_the_grading_rules_gets_every_problem() -> None:
    class Moody:
        def __init__(self):
            self.calls = 0

        def grade(self, prompt, answer):
            self.calls += 1
            score = 1.5 if "Paris" not in answer.text else 0.0
            return Grading(score, "yes", yardstick=f"moody:{self.calls}")

    with pytest.raises(AssertionError) as error:
        check_grader(Moody)
    problems = problems_of(error)
    assert "grading a wrong answer: score must be a finite number in 0..1, got 1.5" in problems
    assert "grading the reference answer: passed must be True or False, got 'yes'" in problems
    assert any("different yardsticks" in p for p in problems)
    assert "the reference answer scores 0.0 and a wrong answer 1.5" in problems


def test_the_lexical_retriever_passes_with_the_stdlib_questions() -> None:
    from evalkit_plugins.lexical import LexicalRetriever
    from evalkit_set_stdlib import StdlibQuestionSets, corpus_path

    (questions,) = StdlibQuestionSets().golden_question_sets()
    check_retriever(LexicalRetriever, question_set=questions, corpus=str(corpus_path()))


def test_a_retriever_breaking_the_contract_gets_every_problem() -> None:
    from evalkit import RetrievalProvenance

    class Sloppy:
        def provenance(self):
            return RetrievalProvenance("https://user:pw@host/corpus", "m", "c", "not-applicable")

        def retrieve(self, question, limit):
            if "broken" in question:
                raise TimeoutError("index offline")
            return ["doc"] * (limit + 1) if "many" in question else ["doc", 7]

    questions = GoldenQuestionSet(
        "r.set",
        "R",
        questions=[
            GoldenQuestion("many", "many results", expected_document_ids=["doc"]),
            GoldenQuestion("typed", "typed ids", expected_document_ids=["doc"]),
            GoldenQuestion("broken", "broken index", expected_document_ids=[]),
        ],
    )
    with pytest.raises(AssertionError) as error:
        check_retriever(Sloppy, question_set=questions)
    problems = problems_of(error)
    assert any(p.startswith("provenance(): ") and "pw" not in p for p in problems)
    assert 'question "many": retrieve() returned 13 ids for limit 12' in problems
    assert any(
        p.startswith('question "typed": retrieve() returned ids that are not non-empty strings') for p in problems
    )
    assert 'retrieve() for question "broken" raised TimeoutError: index offline' in problems


def test_a_retriever_without_provenance_is_flagged_unless_allowed() -> None:
    class Plain:
        def retrieve(self, question, limit):
            return []

    questions = GoldenQuestionSet("r.set", "R", questions=[GoldenQuestion("none", "nothing", expected_document_ids=[])])
    with pytest.raises(AssertionError, match="declares no provenance"):
        check_retriever(Plain, question_set=questions)
    check_retriever(Plain, question_set=questions, require_provenance=False)


def test_a_kit_call_that_returns_a_coroutine_is_a_problem_saying_what_to_write() -> None:
    """The kit took an ``async def check_ready`` as passed and an ``async def grade``'s coroutine as
    "coroutine <coroutine object … at 0x…> is not an evalkit.Grading"; it refuses both as a run does."""

    class Grader:
        yardstick = "kit:v1"

        async def check_ready(self) -> None:
            raise RuntimeError("the judge is down")

        async def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
            return Grading(1.0, True, yardstick="kit:v1")

    with pytest.raises(AssertionError) as error:
        check_grader(Grader)
    assert problems_of(error) == [
        'check_ready(): check_ready() returned a coroutine of "test_a_kit_call_that_returns_a_coroutine_is_a_problem_saying_what_to_write.<locals>.Grader.check_ready", '
        "which evalkit does not await: check_ready() is never awaited, so run the asynchronous work to its end inside it (asyncio.run) and return the value",
        *(
            f'grading {label}: grade() returned a coroutine of "test_a_kit_call_that_returns_a_coroutine_is_a_problem_saying_what_to_write.<locals>.Grader.grade", '
            "which evalkit does not await: declare the method as async def agrade() (evalkit awaits that one), or return the value itself"
            for label in ("the reference answer", "a wrong answer")
        ),
    ]
