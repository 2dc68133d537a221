"""What the model said, where a person looks: each failing case's answer after the run's table
(on a terminal, or with --show-answers), in the set's order, secrets hidden, escapes visible."""

from __future__ import annotations

from pathlib import Path

from evalkit.cli.console import Output
from evalkit.cli.render import answer_excerpt, render_outcome
from evalkit.prompts import GoldenPrompt, GoldenPromptSet
from evalkit.run.outcome import Outcome
from evalkit.runs import CaseResult, Run
from evalkit.verdict import Verdict

from tests.cli.test_run_cmd import ARITH_GOOD, write_replay

SECRET = "sk-" + "A1b2C3d4" * 4  # the shape of an OpenAI key: scrubbed wherever it is printed


def failing_answers(project: Path) -> None:
    answers = dict(ARITH_GOOD)
    answers["add-7-5"] = f"thirteen, and my key is {SECRET}"
    answers["add-12-30"] = "\x1b[31mforty-one\x1b[0m\nsecond line"
    answers["add-99-1"] = "ninety-nine " * 100
    write_replay(project, answers)


def test_show_answers_prints_each_failing_answer_in_the_sets_order(evalkit_cli, project) -> None:
    failing_answers(project)
    result = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--show-answers")
    assert result.code == 0, result.stderr  # the first run is the baseline
    out = result.stdout
    assert "Answers of the failing cases (--no-show-answers leaves them out):" in out
    lines = [line for line in out.splitlines() if line.startswith("  add-")]
    assert [line.split(":")[0].strip() for line in lines] == ["add-7-5", "add-12-30", "add-99-1"]
    assert "  add-7-5: thirteen, and my key is ***" in out and SECRET not in out and SECRET[:12] not in out
    assert "  add-12-30: \\x1b[31mforty-one\\x1b[0m second line" in out and "\x1b" not in out
    long_line = next(line for line in lines if line.startswith("  add-99-1"))
    assert long_line.endswith("…") and len(long_line) <= len("  add-99-1: ") + 160


def test_answers_are_left_out_in_a_pipe_in_ci_and_when_asked(evalkit_cli, project) -> None:
    failing_answers(project)
    piped = evalkit_cli("run", "arith.basic", "--provider", "my-app")
    assert piped.code == 0 and "FAIL" in piped.stdout  # the table still names the failed checks
    assert "Answers of the failing cases" not in piped.stdout and "thirteen" not in piped.stdout
    refused = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--no-show-answers")
    assert "Answers of the failing cases" not in refused.stdout
    in_ci = evalkit_cli("run", "arith.basic", "--provider", "my-app", "--show-answers", env={"CI": "true"})
    assert "  add-7-5: thirteen" in in_ci.stdout, "asked explicitly, CI shows them too"


def test_a_secret_is_hidden_before_the_excerpt_is_cut() -> None:
    text = "x" * 150 + " " + SECRET + " " + "y" * 50  # unscrubbed, the cut at 160 would fall inside the key
    shown = answer_excerpt(text, limit=160)
    assert SECRET[:8] not in shown and shown.endswith("…")
    assert answer_excerpt(None) == "(no answer)" and answer_excerpt(" \n\t") == "(an empty answer)"


def test_the_table_is_in_the_sets_order_whatever_order_the_cases_finished_in() -> None:
    import io

    golden = GoldenPromptSet(
        identifier="s", name="s", prompts=[GoldenPrompt(id=name, prompt="p", assertions=[]) for name in ("first", "second", "third")]
    )
    finished = [CaseResult(case_id=name, passed=False, score=0.0, answer_text=name.upper()) for name in ("third", "first", "second")]
    run = Run(id="r1", set_identifier="s", grader="deterministic", cases=tuple(finished))
    stream = io.StringIO()
    render_outcome(Output(stream), Outcome(run=run, verdict=Verdict(state="baseline")), golden, show_answers=True)
    text = stream.getvalue()
    table = [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in ("first", "second", "third")]
    assert table == ["first", "second", "third"], text
    assert text.index("  first: FIRST") < text.index("  second: SECOND") < text.index("  third: THIRD")
