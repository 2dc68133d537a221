"""Report test fixtures.

``reportkit.hostile`` has case ids that are markup in every report format (HTML, Markdown table
syntax, XML); each case passes when the answer contains "yes", so a test controls which cases
fail through a replay file. ``one-line`` is a third-party reporter; ``explodes`` raises.
"""

from __future__ import annotations

from evalkit import Assertion, GoldenPrompt, GoldenPromptSet

#: The case ids, in set order; the first one would run script if it were not escaped.
HOSTILE_IDS = (
    "<script>window.__evalkitInjected=1</script>",
    "pipe|cell*star*_[link](http://example.invalid)",
    'quote"amp&lt;',
    "plain-1",
    "plain-2",
    "plain-3",
)


class ReportSets:
    """Ships ``reportkit.hostile``."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The hostile set."""
        prompts = [
            GoldenPrompt(id=case_id, prompt=f"Answer yes ({number})", assertions=[Assertion.contains("yes")], reference="yes")
            for number, case_id in enumerate(HOSTILE_IDS)
        ]
        return [GoldenPromptSet(identifier="reportkit.hostile", name="Hostile report ids", description="Ids that are markup.", prompts=prompts)]


class OneLineReporter:
    """A third-party reporter: one line with the run id, the verdict and the case count."""

    def render(self, report):  # noqa: ANN001, ANN201 - a plugin need not import evalkit's types
        """``one-line RUN_ID VERDICT N``."""
        return f"one-line {report.run.id} {report.verdict_word} {len(report.run.cases)}"


class ExplodingReporter:
    """A reporter that always fails."""

    def render(self, report):  # noqa: ANN001, ANN201
        """Raise."""
        raise RuntimeError("the exploding reporter exploded on purpose")


class DescriptorReporter:
    """A reporter whose default destination is a number: ``open()`` would take it for a file
    descriptor (fd 1 or the store's) and write into it."""

    def render(self, report):  # noqa: ANN001, ANN201
        """One line."""
        return "a report"

    def default_destination(self, environ):  # noqa: ANN001, ANN201
        """A number, not a path."""
        return 1
