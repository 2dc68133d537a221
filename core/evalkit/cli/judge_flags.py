"""The rule for the judge flags (``--judge`` …): they apply to a grader that asks a judge, and a
command refuses them, naming the grader, for one that asks none (``evalkit run``, ``evalkit regrade``)."""

from __future__ import annotations


def refuse_judge_flags(grader: str, flags: str, *, repeats: bool = False) -> None:
    """Raise a :class:`~evalkit.errors.UsageError` when the grader ``grader`` (an entry point's
    name) asks no judge, or ``repeats`` (``--judge-repeats`` given) when it asks one only about a
    set's rubric checks. ``flags`` names the command's judge flags as the message says them
    (``--judge``, or ``--judge, --judge-repeats … and --allow-self-judge``)."""
    from .. import registry
    from ..components import JudgeGrader, RubricJudging
    from ..errors import UsageError
    from ..wording import quoted

    factory = registry.load(registry.find("evalkit.graders", grader))
    judges_cases = isinstance(factory, type) and issubclass(factory, JudgeGrader)
    judges_rubrics = isinstance(factory, type) and issubclass(factory, RubricJudging)
    if not judges_cases and repeats and judges_rubrics:
        raise UsageError(
            f"--judge-repeats applies to judge graders (decision, groundedness); {quoted(grader)} asks a judge only "
            "about a set's rubric checks, once per criterion"
        )
    if not (judges_cases or judges_rubrics):
        one = "," not in flags and " and " not in flags
        raise UsageError(f"{flags} {'applies' if one else 'apply'} to judge graders and rubric checks; {quoted(grader)} asks no judge")
