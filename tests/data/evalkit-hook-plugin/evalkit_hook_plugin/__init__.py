"""A hook plugin: adds the ``uppercase`` assertion kind and appends lifecycle events to $HOOK_LOG."""

import os

from evalkit import Assertion, AssertionKind, GoldenPrompt, GoldenPromptSet, hookimpl


def _log(line):
    path = os.environ.get("HOOK_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def _uppercase(value, answer):
    return answer.text.strip() == answer.text.strip().upper()


@hookimpl
def evalkit_assertion_kinds():
    """The extra kind."""
    return [AssertionKind("uppercase", _uppercase)]


@hookimpl
def evalkit_run_started(run, total):
    """Log the start."""
    _log(f"started {run.set_identifier} {total}")


@hookimpl
def evalkit_case_graded(case):
    """Log each case."""
    _log(f"case {case.case_id} {case.passed}")


@hookimpl
def evalkit_run_finished(run):
    """Log the end."""
    _log(f"finished {run.id} {run.status.value}")


class ShoutSets:
    """A set that uses the plugin's assertion kind."""

    def golden_prompt_sets(self):
        """One set."""
        return [
            GoldenPromptSet(
                identifier="hook.shout",
                name="Shouting",
                prompts=[
                    GoldenPrompt(id="loud", prompt="Say hello loudly.", assertions=[Assertion(kind="uppercase")], reference="HELLO"),
                    GoldenPrompt(id="quiet", prompt="Say hello quietly.", assertions=[Assertion(kind="uppercase")], reference="hello"),
                ],
            )
        ]
