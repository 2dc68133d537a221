"""Set providers with declared options: a folder of prompts, and named question sets.

``FolderPromptSets`` reads ``[set_providers."optsets.folder"]`` (the default table): ``folder``
(required, relative to the configuration file) holds one ``NAME.txt`` per prompt whose text is the
reference. ``NamedQuestionSets`` reads one table per set from ``[opt_questions.NAME]``.
"""

from __future__ import annotations

from pathlib import Path

import attrs
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet
from evalkit.options import option
from evalkit.questions import GoldenQuestion, GoldenQuestionSet


@attrs.frozen
class FolderOptions:
    """Where the prompts are, and the identifier prefix."""

    folder: str = option("folder with one NAME.txt per prompt (its text is the reference)")
    prefix: str = option("identifier prefix of the set", default="optsets")


class FolderPromptSets:
    """One set from the ``.txt`` files of ``folder``."""

    Options = FolderOptions
    path_options = ("folder",)

    def __init__(self, folder: str, prefix: str = "optsets") -> None:
        self.folder = Path(folder)
        self.prefix = prefix

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The set of the folder's files."""
        prompts = [
            GoldenPrompt(
                id=path.stem,
                prompt=f"Say: {path.read_text().strip()}",
                assertions=[Assertion.contains(path.read_text().strip())],
                reference=path.read_text().strip(),
            )
            for path in sorted(self.folder.glob("*.txt"))
        ]
        return [GoldenPromptSet(identifier=f"{self.prefix}.folder", name="Folder prompts", description="From files.", prompts=prompts)]


@attrs.frozen
class NamedSetOptions:
    """One named question set."""

    question: str = option("the one question of the set")
    relevant: tuple[str, ...] = option("ids of the relevant documents")


class NamedQuestionSets:
    """One question set per ``[opt_questions.NAME]`` table."""

    Options = NamedSetOptions
    config_table = "opt_questions.*"

    def __init__(self, instances: dict[str, NamedSetOptions] | None = None) -> None:
        self.instances = instances or {}

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """One set per table."""
        return [
            GoldenQuestionSet(
                identifier=f"optsets.{name}",
                name=name,
                description="From configuration.",
                questions=[GoldenQuestion(id="q1", question=options.question, expected_document_ids=options.relevant)],
            )
            for name, options in self.instances.items()
        ]
