"""A run's runaway patterns end at their limit as failed checks, whichever thread calls evaluate_set.

Signals reach the main thread only; the regex module stops a match itself, so a library caller
running evaluate_set in a worker thread gets the same limits as the CLI.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, evaluate_set

RUNAWAY_SET = GoldenPromptSet(
    identifier="limits.runaway",
    name="Patterns that backtrack for ever, and one that does not",
    prompts=[
        GoldenPrompt(id="regex", prompt="x", reference="a" * 40 + "b", assertions=[Assertion.regex(r"/(a|a)+$/")]),
        GoldenPrompt(
            id="schema",
            prompt="x",
            reference='{"name": "' + "a" * 40 + '!"}',
            assertions=[Assertion.json_schema({"properties": {"name": {"pattern": "^(a|a)+$"}}})],
        ),
        GoldenPrompt(id="quick", prompt="x", reference="Émile", assertions=[Assertion.regex(r"/^\p{Lu}\p{Ll}+$/u")]),
    ],
)


def run_in(where: str, tmp_path: Path):
    def run():
        return evaluate_set(RUNAWAY_SET, database=f"sqlite:///{tmp_path / 'results.db'}", cwd=tmp_path)

    if where == "main thread":
        return run()
    outcome: list[object] = []
    thread = threading.Thread(target=lambda: outcome.append(run()), name="library-caller")
    thread.start()
    thread.join(300)
    assert not thread.is_alive() and len(outcome) == 1
    return outcome[0]


@pytest.mark.parametrize("where", ["main thread", "another thread"])
def test_runaway_patterns_fail_their_checks_as_timed_out(where: str, tmp_path: Path) -> None:
    outcome = run_in(where, tmp_path)
    cases = {case.case_id: case for case in outcome.run.cases}
    assert [(c.name, c.passed, c.error) for c in cases["regex"].checks] == [
        ("matches_pattern", False, "pattern timed out: regex /(a|a)+$/ did not finish in time (1 s)")
    ]
    assert [(c.name, c.passed, c.error) for c in cases["schema"].checks] == [
        ("schema_valid", False, "pattern timed out: validating the answer against the schema's regexes took over 2 s")
    ]
    assert cases["quick"].passed and not cases["regex"].error and not cases["schema"].error  # failed checks, not errored cases
