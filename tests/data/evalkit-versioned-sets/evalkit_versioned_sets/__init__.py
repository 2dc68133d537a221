"""Sets whose content a test changes between runs: ``versioned.prompts`` and ``versioned.questions``.

Both are read from the JSON file named by ``EVALKIT_VERSIONED_SETS`` each time the provider is
asked, so a test edits that file to add, edit or remove cases between two ``evalkit`` runs::

    {"prompts": [{"id": "p1", "prompt": "Say alpha", "contains": "alpha", "system_prompt": null}],
     "questions": [{"id": "q1", "question": "…", "expected": ["doc-json"], "form": "match"}]}

Without the variable (or with a key missing) the provider ships no such set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, GoldenQuestion, GoldenQuestionSet

ENV = "EVALKIT_VERSIONED_SETS"


def _content() -> dict[str, Any]:
    path = os.environ.get(ENV)
    if not path:
        return {}
    return json.loads(Path(path).read_text(encoding="utf-8"))


class VersionedPromptSets:
    """``versioned.prompts``: each prompt passes when the answer contains its ``contains`` text."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The prompt set as the file describes it now."""
        prompts = _content().get("prompts")
        if prompts is None:
            return []
        return [
            GoldenPromptSet(
                identifier="versioned.prompts",
                name="Versioned prompt set",
                description="Rewritten by the test between runs.",
                prompts=[
                    GoldenPrompt(
                        id=p["id"], prompt=p["prompt"], assertions=[Assertion.contains(p["contains"])],
                        system_prompt=p.get("system_prompt"), tags=tuple(p.get("tags", ())),
                    )  # fmt: skip
                    for p in prompts
                ],
            )
        ]


class VersionedQuestionSets:
    """``versioned.questions``: questions with their expected ids and form."""

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """The question set as the file describes it now."""
        questions = _content().get("questions")
        if questions is None:
            return []
        return [
            GoldenQuestionSet(
                identifier="versioned.questions",
                name="Versioned question set",
                description="Rewritten by the test between runs.",
                questions=[
                    GoldenQuestion(
                        q["id"], q["question"], q.get("form", "match"), q["expected"], q.get("hard_class")
                    )
                    for q in questions
                ],
            )
        ]
