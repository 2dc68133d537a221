"""Hostile strings for evalkit's hostile-input tests.

Every string a set, a retriever or a generator hands evalkit is data. These fixtures carry what a
terminal or rich would act on — rich markup (``[/]`` closes a tag that was never opened and made
rich raise), ANSI CSI and OSC sequences, carriage returns, NUL, C1 controls, bidirectional
overrides, emoji codes — so a test can check every command shows them literally.

Also here: sets that break the rules in ways that once reached a traceback (an assertion list
holding a plain string, a prompt of NUL characters only, a ``json_schema`` whose ``$ref`` points
nowhere, a ``pattern`` that backtracks catastrophically), and ``hostile.leaky``, a generator that
declares a secret and puts it in its answers and errors.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from evalkit import (
    Assertion,
    GenerationRequest,
    GoldenPrompt,
    GoldenPromptSet,
    GoldenQuestion,
    GoldenQuestionSet,
    QuestionForm,
)
from evalkit.answers import Answer
from evalkit.errors import GenerationError
from evalkit.grading import Check, Grading

#: Markup rich would interpret, or choke on.
MARKUP = "[/]"
#: ANSI: a colour (CSI), a screen clear, an OSC 8 hyperlink and an OSC window title.
ANSI_COLOUR = "\x1b[31mred\x1b[0m"
ANSI_CLEAR = "\x1b[2J"
OSC_LINK = "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07"
OSC_TITLE = "\x1b]0;pwned\x07"
#: Other controls: carriage return (overwrites the line), NUL, a one-byte C1 CSI, a bidi override.
CONTROLS = "cr\roverwrite nul\x00 c1\x9b31m bidi\u202eevil"

#: Case ids of ``hostile.markup``; every one passes with the answer "ok".
CASE_IDS = (
    "[bold]bold[/bold]",
    MARKUP,
    f"ansi-{ANSI_COLOUR}",
    f"clear-{ANSI_CLEAR}",
    f"link-{OSC_LINK}",
    "cr\rover",
    "c1\x9b2J",
    "bidi\u202edi",
    ":warning:",
)
#: The case whose check fails (its check name and value are hostile too).
FAILING_CASE = f"fails-{OSC_TITLE}"

#: The secret ``hostile.leaky`` declares; it puts it in every answer and error.
LEAKY_SECRET = "leaky-secret-7f3a9c2e"

_MARKUP_SET = GoldenPromptSet(
    identifier="hostile.markup",
    name=f"{MARKUP} {ANSI_COLOUR} [bold red]not bold[/]",
    description=f"{OSC_LINK} {CONTROLS}",
    prompts=[
        *(
            GoldenPrompt(id=case_id, prompt=f"Say ok ({number})", assertions=[Assertion.contains("ok")], reference="ok")
            for number, case_id in enumerate(CASE_IDS)
        ),
        GoldenPrompt(
            id=FAILING_CASE,
            prompt="Say ok (failing)",
            assertions=[Assertion.contains(f"{MARKUP}{ANSI_COLOUR}", name=f"[red]check[/red]{ANSI_CLEAR}")],
            reference="ok",
        ),
    ],
)

_PLAIN_STRING_ASSERTION = GoldenPromptSet(
    identifier="hostile.plain_string_assertion",
    name="An assertion list holding a plain string",
    prompts=[GoldenPrompt(id="p1", prompt="Say Paris", assertions=["contains Paris"], reference="Paris")],
)

_NUL_PROMPT = GoldenPromptSet(
    identifier="hostile.nul_prompt",
    name="A prompt of NUL characters only",
    prompts=[GoldenPrompt(id="p1", prompt="\x00\x00\x00", assertions=[Assertion.contains("x")], reference="x")],
)

_DANGLING_REF = GoldenPromptSet(
    identifier="hostile.dangling_ref",
    name="A json_schema whose $ref points nowhere",
    prompts=[
        GoldenPrompt(
            id="p1",
            prompt="Return {}",
            assertions=[Assertion.json_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})],
            reference="{}",
        )
    ],
)

def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


def _looped() -> dict[str, object]:
    schema: dict[str, object] = {"type": "object"}
    schema["properties"] = {"again": schema}
    return schema


def _fanned_out(levels: int) -> list[object]:
    """Nine references to nine references to ...: few objects, 9 ** levels lists when walked."""
    value: list[object] = ["x"] * 9
    for _ in range(levels):
        value = [value] * 9
    return value


def _one_prompt_set(identifier: str, name: str, **prompt: object) -> GoldenPromptSet:
    fields: dict[str, object] = {"id": "p1", "prompt": "Say x", "reference": "x", **prompt}
    return GoldenPromptSet(identifier=identifier, name=name, prompts=[GoldenPrompt(**fields)])  # type: ignore[arg-type]


#: Sets whose values no fingerprint, store or terminal could take: each is refused, naming why.
_SHAPES = [
    _one_prompt_set("hostile.deep_value", "An assertion value 5,000 lists deep", assertions=[Assertion.json_schema({"enum": [_nested(5000)]})]),
    _one_prompt_set("hostile.looped_value", "A JSON Schema that contains itself", assertions=[Assertion.json_schema(_looped())]),
    _one_prompt_set("hostile.fanned_value", "An assertion value of 43 million lists by reference", assertions=[Assertion.json_schema({"enum": _fanned_out(8)})]),
    _one_prompt_set("hostile.mixed_keys", "A JSON Schema whose keys mix a number with text", assertions=[Assertion.json_schema({"type": "object", "properties": {"a": {"type": "string"}, 1: {"type": "string"}}})]),
    _one_prompt_set("hostile.tag_not_string", "A tag that is a list holding itself", tags=[_nested(1)], assertions=[Assertion.contains("x")]),
    _one_prompt_set("hostile.tag_line_break", "A tag holding a line break", tags=["faq", "provider:a b\nc:d"], assertions=[Assertion.contains("x")]),
    _one_prompt_set("hostile.tag_bidi", "A tag holding a bidi override", tags=["geo", "North \u202eaciremA"], assertions=[Assertion.contains("x")]),
    _one_prompt_set("hostile.bytes_name", b"bytes\x1bname", assertions=[Assertion.contains("x")]),  # type: ignore[arg-type]
    _one_prompt_set("hostile.huge_id", "A 10 MB prompt id", id="i" * 10_000_000, assertions=[Assertion.contains("x")]),
]

_CATASTROPHIC_PATTERN = GoldenPromptSet(
    identifier="hostile.catastrophic_pattern",
    name="A json_schema pattern that backtracks for ever",
    prompts=[
        GoldenPrompt(
            id="pattern",
            prompt="Return the name",
            assertions=[
                Assertion.json_schema(
                    # ^(a+)+$ no longer: the regex module answers it at once
                    {"type": "object", "properties": {"name": {"type": "string", "pattern": "^(a|aa)+$"}}}
                )
            ],
            reference='{"name": "' + "a" * 60 + '!"}',
        ),
        GoldenPrompt(
            id="pattern_properties",
            prompt="Return the keys",
            assertions=[
                Assertion.json_schema({"type": "object", "patternProperties": {"^(a|a)+$": {"type": "integer"}}})
            ],
            reference='{"' + "a" * 40 + '!": 1}',
        ),
        GoldenPrompt(
            id="quick",
            prompt="Return ok",
            assertions=[Assertion.json_schema({"type": "object", "properties": {"v": {"pattern": "^ok$"}}})],
            reference='{"v": "ok"}',
        ),
    ],
)


#: ``hostile.sized``: one prompt whose answer passes only when graded whole (the marker is at its end).
END_MARKER = "THE-END"
_SIZED = GoldenPromptSet(
    identifier="hostile.sized",
    name="One prompt for answers of any size",
    prompts=[GoldenPrompt(id="big", prompt="Write a lot, then THE-END", assertions=[Assertion.contains(END_MARKER)], reference=END_MARKER)],
)


def _nan_values() -> GoldenPromptSet:
    """``hostile.nan_values``: floats a Python set can hold and JSON cannot carry, in each free-form
    value of a prompt: a canned tool result, an assertion's value and a history's tool-call arguments."""
    from evalkit.conversations import Message, ToolCall

    nan, inf = float("nan"), float("inf")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    history = [
        Message.user("Weather?"),
        Message.assistant(tool_calls=[ToolCall("get_weather", {"city": "Paris", "days": [1, -inf]}, "c1")]),
        Message.tool("c1", "18 C"),
        Message.user("And tomorrow?"),
    ]
    return GoldenPromptSet(
        identifier="hostile.nan_values",
        name="NaN and infinities in free-form values",
        prompts=[
            GoldenPrompt(
                id="result",
                prompt="Weather in Paris?",
                tools=tools,
                tool_results=[{"name": "get_weather", "result": {"temp_c": nan}}],
                assertions=[Assertion.tool_called("get_weather")],
            ),
            GoldenPrompt(id="value", prompt="Give JSON.", reference="{}", assertions=[Assertion.json_schema({"properties": {"n": {"maximum": inf}}})]),
            GoldenPrompt(id="history", messages=history, tools=tools, assertions=[Assertion.contains("x")]),
        ],
    )


class HostileSets:
    """Ships ``hostile.markup`` (hostile strings), eight sets that must be refused, one that must not
    hang and one for answers of any size; with ``$EVALKIT_HOSTILE_NAN``, also ``hostile.nan_values``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """Every hostile prompt set."""
        import os

        nan_values = [_nan_values()] if os.environ.get("EVALKIT_HOSTILE_NAN") else []
        return [_MARKUP_SET, _PLAIN_STRING_ASSERTION, _NUL_PROMPT, _DANGLING_REF, _CATASTROPHIC_PATTERN, _SIZED, *_SHAPES, _GRADED, *nan_values]


#: Question ids and document ids of ``hostile.questions``: ``HostileRetriever`` finds each question's document.
QUESTIONS = {MARKUP: f"doc-{ANSI_COLOUR}", f"q-{OSC_TITLE}": "doc-[/]", "cr\rq": "doc-\x9b"}


class HostileQuestionSets:
    """Ships ``hostile.questions``: question ids, hard classes and document ids with markup and controls."""

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """The hostile question set; with ``$EVALKIT_HOSTILE_ENDLESS_QUESTIONS``, also a set whose
        questions are a generator that never ends."""
        import os

        if os.environ.get("EVALKIT_HOSTILE_ENDLESS_QUESTIONS"):
            endless = (GoldenQuestion(f"q{n}", f"question {n}", QuestionForm.MATCH, ["d"]) for n in itertools.count())
            return [GoldenQuestionSet(identifier="hostile.endless_questions", name="Endless", questions=endless)]
        questions = [
            GoldenQuestion(qid, f"question {number}", QuestionForm.MATCH, [doc], hard_class=f"{MARKUP}{ANSI_CLEAR}")
            for number, (qid, doc) in enumerate(QUESTIONS.items())
        ]
        questions.append(GoldenQuestion("raises", "question that raises", QuestionForm.MATCH, ["doc-x"]))
        return [
            GoldenQuestionSet(
                identifier="hostile.questions", name=f"{MARKUP} questions {ANSI_COLOUR}", description=CONTROLS,
                questions=questions,
            )
        ]


#: The secret ``hostile.retriever`` declares; it quotes it in the error it raises.
RETRIEVER_SECRET = "retriever-secret-0042xy"


class HostileRetriever:
    """Returns each question's document first; raises with markup, ANSI and its declared secret in the
    message for "question that raises"."""

    def secret_values(self) -> tuple[str, ...]:
        """The credential this retriever sends to its backend."""
        return (RETRIEVER_SECRET,)

    def retrieve(self, question: str, limit: int) -> list[str]:
        """The hostile document id of ``question``."""
        if question == "question that raises":
            raise RuntimeError(f"backend said {MARKUP}{ANSI_COLOUR}{OSC_TITLE} to key {RETRIEVER_SECRET}")
        number = int(question.rsplit(" ", 1)[1])
        return [list(QUESTIONS.values())[number], "doc-other"]


class SprawlingRetriever:
    """Past the kernel's bounds on a ranking: ``question 0`` gets a document id of 1,001 characters,
    ``question 1`` a failure whose message is 50 million characters; the others their document."""

    def retrieve(self, question: str, limit: int) -> list[str]:
        """The sprawling ranking of ``question``."""
        if question == "question 0":
            return ["d" * 1_001, "doc-other"]
        if question == "question 1":
            raise RuntimeError("Y" * 50_000_000)
        return HostileRetriever().retrieve(question, limit) if question != "question that raises" else []


class LeakyGenerator:
    """A generator that declares ``secret`` (default :data:`LEAKY_SECRET`) and leaks it: in every answer,
    in the reported model, and in the error it raises for prompts containing "fail"."""

    def __init__(self, secret: str = LEAKY_SECRET, model: str = "leaky-model") -> None:
        self.secret = secret
        self.model = model

    def secret_values(self) -> tuple[str, ...]:
        """The credential this generator sends."""
        return (self.secret,)

    def generate(self, request: GenerationRequest) -> Answer:
        """An answer quoting the secret, or an error quoting it."""
        if "fail" in request.prompt:
            raise GenerationError(f"upstream rejected key {self.secret}")
        return Answer(text=f"ok, my key is {self.secret}", model=f"{self.model}")


def _looped_detail() -> dict[str, object]:
    detail: dict[str, object] = {"judge": "x"}
    detail["again"] = detail
    return detail


#: What ``hostile.broken_grading`` returns for each prompt id of ``hostile.markup``, in turn: each
#: breaks one rule a grading must follow (evalkit.grading.grading_problems); the last is fine.
BROKEN_GRADINGS = [
    lambda: Grading(score=float("nan"), passed=True),
    lambda: Grading(score=1.0, passed="no"),  # a truthy string must not count as a pass
    lambda: Grading(score=7.5, passed=True),
    lambda: Grading(score=1.0, passed=True, detail={"weights": object()}),
    lambda: Grading(score=1.0, passed=True, detail=_looped_detail()),
    lambda: Grading(score=1.0, passed=True, yardstick="y\x1b[31m" * 1_000_000),
    lambda: None,
    lambda: Grading(score=10**400, passed=True),  # past what a float holds: math.isfinite overflows
    lambda: Grading(score=1.0, passed=True, yardstick="judge:\u202elanimret"),  # reads as another yardstick
    lambda: Grading(score=1.0, passed=True, yardstick="caf\u0065\u0301"),  # prints as "café" yet never equals it
    lambda: Grading(score=1.0, passed=True, checks=[Check("fine", True)], yardstick="hostile.broken_grading"),
]


#: ``hostile.graded``: one prompt per entry of :data:`BROKEN_GRADINGS`, for ``hostile.broken_grading``.
_GRADED = GoldenPromptSet(
    identifier="hostile.graded", name="Prompts for a grader that breaks the rules",
    prompts=[GoldenPrompt(id=f"g{n}", prompt="Say x", reference="x") for n in range(1, len(BROKEN_GRADINGS) + 1)],
)


class BrokenGradingGrader:
    """Returns the gradings of :data:`BROKEN_GRADINGS`, one per call, in order (concurrency 1)."""

    name = "hostile.broken_grading"

    def __init__(self) -> None:
        self.calls = 0

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> object:
        """The next broken grading."""
        made = BROKEN_GRADINGS[self.calls % len(BROKEN_GRADINGS)]()
        self.calls += 1
        return made


class NamelessGrader:
    """Declares no ``name`` (as most plugin graders do) and returns a dict, never a ``Grading``: its
    failed gradings are stored under the name the run chose it by, not ``grader:failed``."""

    yardstick = "nameless:v1"

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> object:
        """Not a grading."""
        return {"score": 1.0, "passed": True}


#: What :class:`SprawlingGrader` returns (or raises) for each prompt of ``hostile.graded``: the
#: grader's texts and counts past every bound the kernel sets on a grading.
HUGE = 50_000_000


def _sprawling(case_id: str) -> Grading:
    fine = {"score": 1.0, "passed": True, "yardstick": "hostile.sprawling_grader"}
    if case_id == "g1":
        return Grading(**fine, checks=[Check(f"c{n}", True) for n in range(1_001)])
    if case_id == "g2":
        return Grading(**fine, checks=[Check("n" * 1_001, True)])
    if case_id == "g3":
        return Grading(**{**fine, "passed": False, "score": 0.0}, error="E" * HUGE)
    if case_id == "g4":
        return Grading(**{**fine, "passed": False, "score": 0.0}, checks=[Check("wrong", False, error="R" * HUGE)])
    if case_id == "g5":
        return Grading(**fine, checks=[Check("right", True, detail="D" * HUGE)])
    if case_id == "g6":
        return Grading(**fine, detail={"blob": "B" * 2_000_000})
    if case_id == "g7":
        return Grading(**fine, checks=[Check(f"c{n}", "yes") for n in range(1_000)])  # type: ignore[arg-type]
    if case_id == "g8":
        raise RuntimeError("X" * HUGE)
    return Grading(**fine, checks=[Check("fine", True)])


class SprawlingGrader:
    """Gradings whose checks, names and texts sprawl past the kernel's bounds (see :func:`_sprawling`)."""

    name = "hostile.sprawling_grader"

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """The sprawling grading of ``prompt``."""
        return _sprawling(prompt.id)


class SprawlingGenerator:
    """Answers ``hostile.graded``'s prompts past the kernel's bounds on an answer: ``g1`` raises with
    a 50-million-character message, ``g2`` reports a model name of 1,001 characters, ``g3`` a
    finish reason of 50 million; the others answer ``x``."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """The sprawling answer to ``request``."""
        if request.case_id == "g1":
            raise RuntimeError("X" * HUGE)
        if request.case_id == "g2":
            return Answer(text="x", model="m" * 1_001)
        if request.case_id == "g3":
            return Answer(text="x", finish_reason="f" * HUGE)
        return Answer(text="x")


class BytesGenerator:
    """Answers with bytes where the text belongs."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """An answer whose text is bytes."""
        return Answer(text=b"Paris")  # type: ignore[arg-type]


def _stuck_case() -> str | None:
    import os

    return os.environ.get("EVALKIT_HOSTILE_STUCK")


class StuckGenerator:
    """Never returns for the case ``$EVALKIT_HOSTILE_STUCK`` names (its thread blocks for ever);
    answers every other case at once."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """An answer, except for the stuck case."""
        if request.case_id == _stuck_case():
            import threading

            threading.Event().wait()
        return Answer(text="an answer", model="stuck-model")


class StuckAsyncGenerator:
    """``async`` twin of :class:`StuckGenerator`: awaits for ever on the stuck case."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    async def agenerate(self, request: GenerationRequest) -> Answer:
        """An answer, except for the stuck case."""
        if request.case_id == _stuck_case():
            import asyncio

            await asyncio.Event().wait()
        return Answer(text="an answer", model="stuck-model")


class BlockingAsyncGenerator:
    """An ``async`` generator that blocks the event loop on the stuck case (``time.sleep`` in
    :meth:`agenerate`, never awaiting) and swallows every ``Exception`` that interrupts it."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    async def agenerate(self, request: GenerationRequest) -> Answer:
        """An answer, except for the stuck case."""
        if request.case_id == _stuck_case():
            import time

            while True:
                try:
                    time.sleep(3600)
                except Exception:  # noqa: S112 - the hostile part
                    continue
        return Answer(text="an answer", model="stuck-model")


class ExitingGenerator:
    """Calls ``sys.exit(0)`` for the case ``$EVALKIT_HOSTILE_STUCK`` names: a library that "exits"
    on an error, inside a run whose exit code is a CI gate."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: GenerationRequest) -> Answer:
        """An answer, except for the case that exits."""
        if request.case_id == _stuck_case():
            import sys

            sys.exit(0)
        return Answer(text="an answer", model="exiting-model")


class ExitingAsyncGenerator(ExitingGenerator):
    """``async`` twin of :class:`ExitingGenerator`."""

    async def agenerate(self, request: GenerationRequest) -> Answer:
        """An answer, except for the case that exits."""
        return self.generate(request)


class HangingSets:
    """A set provider whose listing never returns while ``$EVALKIT_HOSTILE_HANG_SETS`` is set (a
    download that stalls), swallowing every ``Exception`` that interrupts it; no sets otherwise.
    Its factory never returns while ``$EVALKIT_HOSTILE_HANG_SETS_FACTORY`` is set (a connection
    opened at creation to a server that never answers), swallowing every ``Exception`` likewise.
    Its ``bind_config`` and ``refused_sets`` hooks never return while
    ``$EVALKIT_HOSTILE_HANG_BIND_CONFIG`` or ``$EVALKIT_HOSTILE_HANG_REFUSED_SETS`` is set."""

    def __init__(self) -> None:
        import os
        import threading

        while os.environ.get("EVALKIT_HOSTILE_HANG_SETS_FACTORY"):
            try:
                threading.Event().wait()
            except Exception:  # noqa: S112 - the hostile part
                continue

    def golden_prompt_sets(self) -> Iterable[GoldenPromptSet]:
        """Nothing, or never; with ``$EVALKIT_HOSTILE_ENDLESS_SETS``, a generator of sets that never ends;
        with ``$EVALKIT_HOSTILE_ENDLESS_PROMPTS``, a set whose prompts are such a generator."""
        import os
        import threading

        if os.environ.get("EVALKIT_HOSTILE_ENDLESS_PROMPTS"):  # a set built from a generator that never ends
            endless = (GoldenPrompt(id=f"p{n}", prompt="x", reference="x") for n in itertools.count())
            return [GoldenPromptSet(identifier="hostile.endless", name="Endless", prompts=endless)]
        if os.environ.get("EVALKIT_HOSTILE_ENDLESS_SETS"):
            return (
                GoldenPromptSet(identifier=f"hostile.endless{n}", name="Endless", prompts=[GoldenPrompt(id="a", prompt="x", reference="x")])
                for n in itertools.count()
            )
        while os.environ.get("EVALKIT_HOSTILE_HANG_SETS"):
            try:
                threading.Event().wait()
            except Exception:  # noqa: S112 - the hostile part
                continue
        return []

    def bind_config(self, config) -> None:
        """Nothing, or never while ``$EVALKIT_HOSTILE_HANG_BIND_CONFIG`` is set (a configuration
        read from a network share that stopped answering): it hung ``list``, ``validate`` and ``run``."""
        _hang_while("EVALKIT_HOSTILE_HANG_BIND_CONFIG")

    def refused_sets(self) -> list[str]:
        """No refusals, or never while ``$EVALKIT_HOSTILE_HANG_REFUSED_SETS`` is set."""
        _hang_while("EVALKIT_HOSTILE_HANG_REFUSED_SETS")
        return []


def _hang_while(variable: str) -> None:
    """Never return while ``$variable`` is set, swallowing every ``Exception`` that interrupts."""
    import os
    import threading

    while os.environ.get(variable):
        try:
            threading.Event().wait()
        except Exception:  # noqa: S112 - the hostile part
            continue


class StuckGrader:
    """Never returns when grading the case ``$EVALKIT_HOSTILE_STUCK`` names: it waits for ever and
    swallows every ``Exception`` that interrupts it (a retry loop); passes every other case."""

    name = "hostile.stuck_grader"

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """A pass, except for the stuck case."""
        if prompt.id == _stuck_case():
            import threading

            while True:
                try:
                    threading.Event().wait()
                except Exception:  # noqa: S112 - the hostile part
                    continue
        return Grading(score=1.0, passed=True, yardstick="hostile.stuck_grader")


class StuckAsyncGrader:
    """``async`` twin of :class:`StuckGrader`: awaits for ever on the stuck case."""

    name = "hostile.stuck_async_grader"

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """A pass, except for the stuck case."""
        if prompt.id == _stuck_case():
            import asyncio

            await asyncio.Event().wait()
        return Grading(score=1.0, passed=True, yardstick="hostile.stuck_async_grader")

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Not called: evalkit awaits :meth:`agrade`."""
        raise AssertionError("the synchronous grade() of an async grader was called")


class BlockingAsyncGrader:
    """An ``async`` grader that blocks the event loop on the stuck case (``time.sleep`` in
    :meth:`agrade`, never awaiting) and swallows every ``Exception`` that interrupts it."""

    name = "hostile.blocking_async_grader"

    async def agrade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """A pass, except for the stuck case."""
        if prompt.id == _stuck_case():
            import time

            while True:
                try:
                    time.sleep(3600)
                except Exception:  # noqa: S112 - the hostile part
                    continue
        return Grading(score=1.0, passed=True, yardstick="hostile.blocking_async_grader")

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """Not called: evalkit awaits :meth:`agrade`."""
        raise AssertionError("the synchronous grade() of an async grader was called")


class ExitingGrader:
    """Calls ``sys.exit(0)`` when grading the case ``$EVALKIT_HOSTILE_STUCK`` names."""

    name = "hostile.exiting_grader"

    def grade(self, prompt: GoldenPrompt, answer: Answer) -> Grading:
        """A pass, except for the case that exits."""
        if prompt.id == _stuck_case():
            import sys

            sys.exit(0)
        return Grading(score=1.0, passed=True, yardstick="hostile.exiting_grader")
