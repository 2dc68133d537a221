"""Set providers with declared options: a folder of prompts, named question sets, and a greeting.

``FolderPromptSets`` reads ``[set_providers."optsets.folder"]`` (the default table): ``folder``
(required, relative to the configuration file) holds one ``NAME.txt`` per prompt whose text is the
reference. ``NamedQuestionSets`` reads one table per set from ``[opt_questions.NAME]``.
``GreetingPromptSets`` is written to the earlier contract (its options as keyword arguments),
which evalkit still honours.
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

    folder: str = option("folder with one NAME.txt per prompt (its text is the reference)", path=True)
    prefix: str = option("identifier prefix of the set", default="optsets")


class FolderPromptSets:
    """One set from the ``.txt`` files of ``folder``."""

    Options = FolderOptions

    def __init__(self, options: FolderOptions) -> None:
        self.folder = Path(options.folder)
        self.prefix = options.prefix

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


@attrs.frozen
class GreetingOptions:
    """What the one prompt says."""

    greeting: str = option("the word the one prompt asks for", default="Hello")


class GreetingPromptSets:
    """One prompt asking for ``greeting``; written to the earlier contract (keyword arguments)."""

    Options = GreetingOptions

    def __init__(self, greeting: str = "Hello") -> None:
        self.greeting = greeting

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The one set."""
        prompt = GoldenPrompt(id="greet", prompt=f"Say {self.greeting}", assertions=[Assertion.contains(self.greeting)], reference=self.greeting)
        return [GoldenPromptSet(identifier="optsets.greeting", name=f"Say {self.greeting}", description="Keyword arguments.", prompts=[prompt])]
