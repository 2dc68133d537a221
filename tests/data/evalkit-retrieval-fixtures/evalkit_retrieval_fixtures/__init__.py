"""Retrieval test fixtures: the ``retrievalkit.tiny`` question set over a five-document corpus, and
retrievers whose behaviour a test scripts through deployment options.

The corpus the tests write (``CORPUS``) and the set's labels agree, so ``evalkit.lexical`` over
that corpus is a real retriever for the set.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from evalkit import GoldenQuestion, GoldenQuestionSet, QuestionForm, RetrievalProvenance

#: Documents a test writes as JSONL for ``evalkit.lexical``.
CORPUS = [
    {"id": "doc-json", "title": "json.loads", "text": "Deserialize a JSON document string into a Python object."},
    {"id": "doc-csv", "title": "csv.reader", "text": "Iterate over the rows of a comma separated values file."},
    {"id": "doc-sleep", "title": "time.sleep", "text": "Suspend execution of the calling thread for some seconds."},
    {"id": "doc-copy", "title": "shutil.copy", "text": "Copy the contents and permission bits of a file."},
    {"id": "doc-zip", "title": "zipfile", "text": "Read and write ZIP archive files."},
]

TINY = GoldenQuestionSet(
    identifier="retrievalkit.tiny",
    name="Tiny retrieval set",
    description="Four questions over the five fixture documents, one of which nothing answers.",
    questions=[
        GoldenQuestion("json", "deserialize a JSON document", QuestionForm.MATCH, ["doc-json"], "near-duplicate"),
        GoldenQuestion("csv", "read rows of a comma separated values file", QuestionForm.MATCH, ["doc-csv"], "normal"),
        GoldenQuestion("nap", "make the program wait a little", QuestionForm.GAP, ["doc-sleep"], "normal"),
        GoldenQuestion("nothing", "quantum chromodynamics lattice", QuestionForm.GAP, [], "out-of-scope"),
    ],
)

BROKEN = GoldenQuestionSet(
    identifier="retrievalkit.broken",
    name="",
    description="Breaks three rules.",
    questions=[
        GoldenQuestion("twice", "first", expected_document_ids=["a"]),
        GoldenQuestion("twice", "", expected_document_ids=["b", "b"]),
    ],
)


class QuestionSets:
    """Ships ``retrievalkit.tiny`` and ``retrievalkit.broken`` (invalid on purpose)."""

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """Both sets."""
        return [TINY, BROKEN]


class ScriptedRetriever:
    """Answers from a JSON file ``{question text: [ids]}``; unknown questions get ``[]``. Declares no provenance."""

    path_options = ("answers",)

    def __init__(self, answers: str) -> None:
        self.table: dict[str, Any] = json.loads(Path(answers).read_text(encoding="utf-8"))
        self.limits: list[int] = []

    def retrieve(self, question: str, limit: int) -> list[str]:
        """The scripted ids for ``question``."""
        self.limits.append(limit)
        return list(self.table.get(question, []))


class DeclaringRetriever(ScriptedRetriever):
    """A scripted retriever that declares the provenance its options give."""

    def __init__(
        self,
        answers: str,
        corpus_revision: str = "corpus-v1",
        model_revision: str = "not-applicable",
        chunking_identity: str = "whole-document",
        pipeline_identity: str = "scripted-v1",
        execution_revision: str | None = None,
    ) -> None:
        super().__init__(answers)
        self.declared = RetrievalProvenance(
            corpus_revision, model_revision, chunking_identity, pipeline_identity, execution_revision
        )

    def provenance(self) -> RetrievalProvenance:
        """What the options declared."""
        return self.declared


class RaisingRetriever:
    """Raises on questions containing ``fail_on`` (every question by default); otherwise returns ``["doc-json"]``."""

    def __init__(self, fail_on: str = "", fail_provenance: bool = False) -> None:
        self.fail_on = fail_on
        self.fail_provenance = fail_provenance

    def retrieve(self, question: str, limit: int) -> list[str]:
        """Fail, or answer."""
        if self.fail_on in question:
            raise ConnectionError("search backend unreachable")
        return ["doc-json"]

    def provenance(self) -> RetrievalProvenance:
        """A valid declaration, so only the failures decide the run (unless ``fail_provenance``)."""
        if self.fail_provenance:
            raise RuntimeError("revision service down")
        return RetrievalProvenance("corpus-v1", "not-applicable", "whole-document", "raising-v1")


class Touchy(str):
    """A document id of a ``str`` subclass whose ``==`` raises, as a careless wrapper type might."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("Touchy ids cannot be compared")

    __hash__ = str.__hash__


class GarbageRetriever:
    """Returns what ``mode`` says: ``non-string`` ids, a ``string``, a ``dict``, a ``set`` of ids, ``duplicates``,
    ``too-many`` ids, an ``endless`` generator of them, or ids (``touchy``) and scored ids
    (``touchy-scored``) of a ``str`` subclass whose ``==`` raises."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def retrieve(self, question: str, limit: int) -> Any:
        """Garbage of the chosen kind."""
        if self.mode == "non-string":
            return ["doc-json", 42]
        if self.mode == "string":
            return "doc-json"
        if self.mode == "dict":
            return {"doc-json": 1.0}
        if self.mode == "set":
            return {"doc-json", "doc-csv", "doc-sleep"}
        if self.mode == "duplicates":
            return ["doc-csv", "doc-csv", "", "doc-json", "doc-csv", "doc-sleep"]
        if self.mode == "too-many":
            return ["doc-json", "doc-csv", "doc-sleep"] + [f"filler-{i}" for i in range(limit + 5)]
        if self.mode == "touchy":
            return [Touchy("doc-json"), Touchy("doc-csv")]
        if self.mode == "touchy-scored":
            return [(Touchy("doc-json"), 2.0), (Touchy("doc-csv"), 1.0)]
        if self.mode == "endless":
            return (f"doc-{i}" for i in itertools.count())
        raise ValueError(f"unknown mode {self.mode}")


def not_a_retriever() -> object:
    """A factory whose product has no ``retrieve``."""
    return object()


class SlowRetriever(ScriptedRetriever):
    """A scripted retriever that appends each question to ``log`` and then takes ``delay`` seconds (a remote index).

    With ``hold``, it also waits while that file exists: a test holds a run in the middle of a
    question for as long as it needs, however slow the machine."""

    thread_safe = True

    def __init__(self, answers: str, log: str, delay: float = 0.0, hold: str | None = None) -> None:
        super().__init__(answers)
        self.log = Path(log)
        self.delay = float(delay)
        self.hold = Path(hold) if hold else None

    def retrieve(self, question: str, limit: int) -> list[str]:
        """Log the question, wait, answer from the script."""
        import time

        with self.log.open("a", encoding="utf-8") as handle:
            handle.write(question + "\n")
        time.sleep(self.delay)
        while self.hold is not None and self.hold.exists():
            time.sleep(0.05)
        return super().retrieve(question, limit)


class PreparingRetriever(ScriptedRetriever):
    """A scripted retriever whose ``prepare()`` (an index build) writes ``preparing`` to the file
    ``log`` and takes ``delay`` seconds; ``close()`` writes ``closed`` to it."""

    path_options = ("answers", "log")

    def __init__(self, answers: str, log: str, delay: float = 0.0) -> None:
        super().__init__(answers)
        self.log = Path(log)
        self.delay = float(delay)

    def prepare(self) -> None:
        """Build the index: say so, then wait."""
        import time

        self.log.write_text("preparing\n", encoding="utf-8")
        time.sleep(self.delay)

    def close(self) -> None:
        """Say it was closed."""
        with self.log.open("a", encoding="utf-8") as handle:
            handle.write("closed\n")
