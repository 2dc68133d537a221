"""Plugins that raise what an ``except Exception`` does not catch, or what cannot cross into asyncio.

For the case (or question) ``$EVALKIT_RAISE_FOR`` names, each raises the exception
``$EVALKIT_RAISE`` names (:data:`RAISED`): ``StopIteration`` (a ``next()`` on an exhausted
iterator), ``GeneratorExit``, ``asyncio.CancelledError``, a ``BaseException`` of a framework's own
(pytest's ``skip()`` raises one), or an exception whose ``__str__`` raises. Every other case is
answered, graded or ranked as it should be. The plugins that are no per-case call raise where
``$EVALKIT_RAISE_IN`` says: ``listing`` (the set provider's ``golden_prompt_sets()``), ``stream``
(the second prompt of ``raising.stream``), ``import`` (``raising.at_import``), ``hook``
(``evalkit_case_graded``), ``close`` (the retriever's ``close()``), ``report`` (the reporter), ``concurrency`` (the
generator's), ``use_concurrency`` (the generator's ``use_concurrency()``), ``generator_close`` (its ``close()``), ``redacted_options`` (its), ``grader_close`` (the grader's ``aclose()``), ``kinds`` (the grader's ``use_assertion_kinds()``), ``secrets`` (the retriever's
``secret_values()``, asked when it is created), ``thread_safe`` (the retriever's), ``tools_refusal`` (``raising.toolless``'s), ``judge_temperature``,
``judge_instance``, ``bind_judge``, ``judge_ready`` (its ``check_ready()``) and ``rubric_judge`` (its
``with_rubric_judge()``, called for a set with rubric checks) (``raising.judge``'s; ``bind_judge read``,
``check_ready read`` and ``aclose read``: the attribute itself raises as it is read, a property or a
``__getattr__`` would), ``secrets_late`` (the same, asked again before its questions). ``ConfigError`` is evalkit's own error of exit
2, as a plugin refusing its configuration late raises it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator

from evalkit import (
    Assertion,
    GenerationRequest,
    GoldenPrompt,
    GoldenPromptSet,
    GoldenQuestion,
    GoldenQuestionSet,
    PromptStream,
    QuestionForm,
)
from evalkit.answers import Answer, Turn
from evalkit.errors import ConfigError
from evalkit.grading import Check, Grading


class Skipped(BaseException):
    """A framework's own ``BaseException`` (as pytest's ``skip()`` and ``fail()`` raise)."""


class Unprintable(Exception):
    """An exception whose ``__str__`` raises."""

    def __str__(self) -> str:
        raise ValueError("no text for you")


RAISED = {
    "StopIteration": lambda: StopIteration("the iterator was exhausted"),
    "GeneratorExit": lambda: GeneratorExit("closed"),
    "CancelledError": lambda: asyncio.CancelledError("cancelled by the plugin"),
    "Skipped": lambda: Skipped("skipped by the plugin"),
    "Unprintable": Unprintable,
    "ConfigError": lambda: ConfigError("the plugin refuses its configuration: no credentials for it"),
    "RuntimeError": lambda: RuntimeError("the plugin's own failure"),
    "KeyboardInterrupt": lambda: KeyboardInterrupt("raised by the plugin"),
}


def raise_for(case_id: str) -> None:
    """Raise ``$EVALKIT_RAISE`` when ``case_id`` is the one ``$EVALKIT_RAISE_FOR`` names."""
    if case_id == os.environ.get("EVALKIT_RAISE_FOR"):
        raise RAISED[os.environ["EVALKIT_RAISE"]]()


def raise_in(place: str, then: Callable[[], None] | None = None) -> None:
    """Where ``$EVALKIT_RAISE_IN`` is ``place``: raise ``$EVALKIT_RAISE`` (or call ``then``)."""
    if os.environ.get("EVALKIT_RAISE_IN") == place:
        if then is not None:
            then()
        else:
            raise RAISED[os.environ["EVALKIT_RAISE"]]()


def _streamed() -> Iterator[GoldenPrompt]:
    for number in (1, 2, 3):
        if number == 2:
            raise_in("stream")
        yield GoldenPrompt(id=f"s{number}", prompt="Say x", assertions=[Assertion.contains("x")])


class RaisingSets:
    """Ships ``raising.stream``, a streamed set; raises in its listing with ``$EVALKIT_RAISE_IN=listing``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """``raising.stream``, or the exception; with ``$EVALKIT_RAISE_IN=touchy`` also
        ``raising.touchy``, whose every text is a :class:`TouchyText`; with ``wrong_kind``, also
        ``raising.misplaced``, a question set, which is no prompt set."""
        raise_in("listing")
        sets = [GoldenPromptSet(identifier="raising.stream", name="A stream", prompts=PromptStream(_streamed, count=3))]
        if os.environ.get("EVALKIT_RAISE_IN") == "touchy":
            touchy = TouchyText
            prompts = [
                GoldenPrompt(
                    id=touchy(f"t{n}"), prompt=touchy("Say x"), system_prompt=touchy("Be brief."), tags=[touchy("tag")],
                    assertions=[Assertion.contains("x")], reference=touchy("x"),
                )
                for n in (1, 2)
            ]  # fmt: skip
            sets.append(GoldenPromptSet(identifier=touchy("raising.touchy"), name=touchy("Touchy"), description=touchy("d"), prompts=prompts))
        if os.environ.get("EVALKIT_RAISE_IN") == "wrong_kind":  # a question set, shipped as a prompt set by mistake
            questions = [GoldenQuestion("q1", "question 1", QuestionForm.MATCH, ["doc-1"])]
            sets.append(GoldenQuestionSet(identifier="raising.misplaced", name="Misplaced", questions=questions))
        return sets


class RaisingQuestionSets:
    """Ships ``raising.questions``: three questions, ``question 1`` to ``question 3``, each answered by ``doc-1``."""

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """``raising.questions``."""
        questions = [GoldenQuestion(f"q{n}", f"question {n}", QuestionForm.MATCH, ["doc-1"]) for n in (1, 2, 3)]
        return [GoldenQuestionSet(identifier="raising.questions", name="Questions", questions=questions)]


class RaisingReporter:
    """One line, or the exception with ``$EVALKIT_RAISE_IN=report``."""

    def render(self, report):  # noqa: ANN001, ANN201 - a plugin need not import evalkit's types
        """``raising RUN_ID``."""
        raise_in("report")
        return f"raising {report.run.id}"


class RaisingGenerator:
    """Answers ``x``, except for the case that raises; asked how many prompts it takes at once, it
    raises with ``$EVALKIT_RAISE_IN=concurrency``."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model
        self.reads = 0

    def __getattribute__(self, name: str) -> object:
        """The attribute, or the exception: with ``$EVALKIT_RAISE_IN=check_ready read`` as its
        ``check_ready`` is read, with ``agenerate reread`` as its ``agenerate`` is read the second
        time (a property answering differently, or a ``__getattr__`` whose client was torn down)."""
        if name == "check_ready":
            raise_in("check_ready read")
        elif name == "agenerate":
            self.reads = object.__getattribute__(self, "reads") + 1
            if self.reads == 2:
                raise_in("agenerate reread")
        return object.__getattribute__(self, name)

    def check_ready(self) -> None:
        """Nothing: it is ready (its free probe)."""

    @property
    def concurrency(self) -> int:
        """4, or the exception."""
        raise_in("concurrency")
        return 4

    def use_concurrency(self, requests: int) -> None:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=use_concurrency``."""
        raise_in("use_concurrency")

    def generate(self, request: GenerationRequest) -> Answer:
        """``x``, or the exception."""
        raise_for(request.case_id)
        return Answer(text="x", model="raising-model")

    def close(self) -> None:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=generator_close``."""
        raise_in("generator_close")

    def redacted_options(self) -> dict[str, object]:
        """Its options as shown (the answer cache keys an ad-hoc run by them), or the exception
        with ``$EVALKIT_RAISE_IN=redacted_options``."""
        raise_in("redacted_options")
        return {"model": self.model}


class ToollessChatGenerator(RaisingGenerator):
    """Takes conversations, says its model takes no tools (``supports_tools = False``), and says
    why with ``tools_refusal()`` — which raises with ``$EVALKIT_RAISE_IN=tools_refusal``."""

    supports_tools = False

    def tools_refusal(self) -> str:
        """Why, or the exception."""
        raise_in("tools_refusal")
        return "the raising model takes no tools"

    def chat(self, request: object) -> Turn:
        """``x``."""
        return Turn(text="x", model="raising-model")


class RaisingAsyncGenerator(RaisingGenerator):
    """``async`` twin of :class:`RaisingGenerator`."""

    async def agenerate(self, request: GenerationRequest) -> Answer:
        """``x``, or the exception."""
        return self.generate(request)


class RaisingGrader:
    """Passes every case, except the case that raises."""

    name = "raising.grader"

    def use_assertion_kinds(self, kinds: object) -> None:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=kinds``."""
        raise_in("kinds")

    async def aclose(self) -> None:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=grader_close``."""
        raise_in("grader_close")

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """A pass, or the exception."""
        raise_for(prompt.id)
        return Grading(score=1.0, passed=True, checks=[Check("fine", True)], yardstick="raising.grader")


class RaisingJudge(RaisingGrader):
    """A grader with a judge (it declares ``judge_temperature`` and ``judge_instance``, binds a
    judge and checks it is ready) that passes every case; each of these raises where
    ``$EVALKIT_RAISE_IN`` names it."""

    name = "raising.judge"

    def __getattribute__(self, name: str) -> object:
        """The attribute, or the exception with ``$EVALKIT_RAISE_IN=NAME read`` (``bind_judge``,
        ``check_ready``, ``aclose``): a method read through a property or ``__getattr__`` that raises."""
        if name in ("bind_judge", "check_ready", "aclose"):
            raise_in(name + " read")
        return object.__getattribute__(self, name)

    @property
    def judge_temperature(self) -> float:
        """0.0, or the exception."""
        raise_in("judge_temperature")
        return 0.0

    @property
    def judge_instance(self) -> str:
        """``judge``, or the exception with ``$EVALKIT_RAISE_IN=judge_instance``."""
        raise_in("judge_instance")
        return "judge"

    def secret_values(self) -> tuple[str, ...]:
        """None: its judge sends no credentials."""
        return ()

    def bind_judge(self, config: object, under_test: object) -> None:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=bind_judge``."""
        raise_in("bind_judge")

    def check_ready(self) -> None:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=judge_ready``."""
        raise_in("judge_ready")

    def with_rubric_judge(self, config: object, under_test: object, rubric_prompts: object) -> RaisingJudge:
        """Itself (it judges no rubric, it passes), or the exception with ``$EVALKIT_RAISE_IN=rubric_judge``."""
        raise_in("rubric_judge")
        return self


class RaisingAsyncGrader(RaisingGrader):
    """``async`` twin of :class:`RaisingGrader`."""

    name = "raising.async_grader"

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """A pass, or the exception."""
        raise_for(prompt.id)
        return Grading(score=1.0, passed=True, checks=[Check("fine", True)], yardstick="raising.async_grader")


class NoRetrieve:
    """What a broken retriever factory gives: no ``retrieve()``."""


class RaisingRetriever:
    """Ranks ``doc-1``, except for the question that raises (its text is the case id); its
    ``close()`` raises with ``$EVALKIT_RAISE_IN=close``; creating it raises with
    ``retriever_created``, and gives a :class:`NoRetrieve` with ``retriever_unusable``."""

    def __new__(cls) -> object:
        raise_in("retriever_created")
        if os.environ.get("EVALKIT_RAISE_IN") == "retriever_unusable":
            return NoRetrieve()
        return super().__new__(cls)

    @property
    def thread_safe(self) -> bool:
        """True, or the exception with ``$EVALKIT_RAISE_IN=thread_safe``."""
        raise_in("thread_safe")
        return True

    def retrieve(self, question: str, limit: int) -> list[str]:
        """``["doc-1"]``, or the exception."""
        raise_for(question)
        return ["doc-1"]

    def secret_values(self) -> tuple[str, ...]:
        """Nothing, or the exception with ``$EVALKIT_RAISE_IN=secrets``; with ``secrets_late``, the
        exception from the second call on (the run asks again once it is stored: a plugin whose
        credentials are fetched when first used)."""
        raise_in("secrets")
        self._asked = getattr(self, "_asked", 0) + 1
        if self._asked > 1:
            raise_in("secrets_late")
        return ()

    def close(self) -> None:
        """Nothing, or the exception."""
        raise_in("close")


class TouchyText(str):
    """Text that cannot be compared or printed: ``==`` and ``str()`` raise."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared a touchy text")

    def __ne__(self, other: object) -> bool:
        raise RuntimeError("compared a touchy text")

    def __str__(self) -> str:
        raise RuntimeError("printed a touchy text")

    __hash__ = str.__hash__


class TouchyGenerator:
    """Answers with a ``str`` subclass whose ``==`` and ``str()`` raise, as its text, model and finish reason."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """An answer made of touchy texts."""
        return Answer(text=TouchyText("x"), model=TouchyText("touchy-model"), finish_reason=TouchyText("stop"))
