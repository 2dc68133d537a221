"""Hostile-storage fixtures: ids no text column takes as they are, and a retriever that never returns.

``hostilestore.ids`` is a prompt set whose case ids hold NUL, an undecodable byte (a lone
surrogate, as ``surrogateescape`` makes it) and U+FFFF; every prompt passes when the answer
contains ``ok``. ``hostilestore.questions`` is a question set with such question and document
ids; ``hostile.echo`` returns each question's expected ids (plus a hostile extra). The
``hostilestore.hang`` set has a question ``hostile.sleeper`` never answers.
"""

from __future__ import annotations

import threading

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, GoldenQuestion, GoldenQuestionSet, QuestionForm

#: Case ids (and question ids) the store must keep exactly.
HOSTILE_IDS = ("plain", "nul\x00inside", "bytes-\udcff-undecodable", "nonchar-\uffff0-escape")

IDS = GoldenPromptSet(
    identifier="hostilestore.ids",
    name="hostile ids",
    description="Case ids with NUL, an undecodable byte and U+FFFF.",
    prompts=[
        GoldenPrompt(id=case_id, prompt=f"Say ok ({number})", assertions=[Assertion.contains("ok")], reference="ok")
        for number, case_id in enumerate(HOSTILE_IDS)
    ],
)

QUESTIONS = GoldenQuestionSet(
    identifier="hostilestore.questions",
    name="hostile question ids",
    description="Question and document ids with NUL and undecodable bytes.",
    questions=[
        GoldenQuestion(question_id, f"question {number}", QuestionForm.MATCH, [f"doc-{question_id}"])
        for number, question_id in enumerate(HOSTILE_IDS)
    ],
)

HANG = GoldenQuestionSet(
    identifier="hostilestore.hang",
    name="a question nobody answers",
    description="The sleeper retriever never returns on the question that says so.",
    questions=[
        GoldenQuestion("first", "answer me", QuestionForm.MATCH, ["doc-a"]),
        GoldenQuestion("stuck", "never returns", QuestionForm.MATCH, ["doc-b"]),
        GoldenQuestion("last", "answer me too", QuestionForm.MATCH, ["doc-a"]),
    ],
)


class PromptSets:
    """Ships ``hostilestore.ids``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The hostile-id prompt set."""
        return [IDS]


class QuestionSets:
    """Ships ``hostilestore.questions`` and ``hostilestore.hang``."""

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """Both question sets."""
        return [QUESTIONS, HANG]


class EchoRetriever:
    """Returns the expected document id of ``question N`` first, then a hostile extra id."""

    def retrieve(self, question: str, limit: int) -> list[str]:
        """``doc-<id>`` for the question's id, then ``extra-\\x00-\\udc80``."""
        number = int(question.rsplit(" ", 1)[-1])
        return [f"doc-{HOSTILE_IDS[number]}", "extra-\x00-\udc80"]


class SleepingRetriever:
    """Answers ``["doc-a"]``, except on questions containing ``hang_on``: those never return.
    It holds no state, so it may be asked from several threads (``--concurrency``)."""

    thread_safe = True

    def __init__(self, hang_on: str = "never", times_out_in: str = "never") -> None:
        if hang_on == "factory":  # the factory itself never returns (a server that never answers)
            threading.Event().wait()
        if times_out_in == "factory":  # its own client's time-out, raised at once
            raise TimeoutError("the index server did not answer within 2 s")
        self.hang_on = hang_on
        self.times_out_in = times_out_in

    def retrieve(self, question: str, limit: int) -> list[str]:
        """Answer, or block forever."""
        if self.hang_on in question:
            threading.Event().wait()
        return ["doc-a"]

    def provenance(self) -> None:
        """Block forever when ``hang_on`` is ``"provenance()"``, raise a time-out of its own at once
        when ``times_out_in`` is; else declare nothing usable."""
        if self.hang_on == "provenance()":
            threading.Event().wait()
        if self.times_out_in == "provenance()":
            raise TimeoutError("the index server did not answer within 2 s")

    def close(self) -> None:
        """Block forever when ``hang_on`` is ``"close()"``."""
        if self.hang_on == "close()":
            threading.Event().wait()
