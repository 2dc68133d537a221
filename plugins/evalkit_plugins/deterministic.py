"""The ``deterministic`` grader: evaluates a prompt's assertions with no model call and no tokens —
except its ``rubric`` checks, which the run's judge decides (see :mod:`evalkit_plugins.rubric`).

The judge machinery (:mod:`evalkit_plugins.rubric`, :mod:`evalkit_plugins.pairwise` and the
:mod:`evalkit_plugins._judge` they build on) is imported by the methods that hand out a judge, so a
run whose set has no rubric checks never loads it (its modules cost every run ~2 % of its start-up)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.components import BoundGenerator
from evalkit.config import Config

from evalkit_plugins._assertions import AssertionGrader, DeterministicOptions
from evalkit_plugins.judge_options import JudgeOptions

__all__ = ["DeterministicGrader", "DeterministicOptions"]


class DeterministicGrader(AssertionGrader):
    """Score = fraction of assertions that hold; passed = all hold (:class:`AssertionGrader`). A set
    with rubric checks is graded by :meth:`with_rubric_judge`'s grader, which asks the judge about them.
    """

    def with_rubric_judge(self, config: Config, under_test: BoundGenerator, rubric_prompts: Sequence[str]) -> Any:
        """This grader with the run's judge bound to decide the rubric checks of ``rubric_prompts``
        (refused, naming them, when no judge is configured)."""
        from evalkit_plugins.rubric import with_rubric_judge

        return with_rubric_judge(self, config, under_test, rubric_prompts)

    def calibration_judge(self, grader: str) -> Any:
        """The judge of rubric checks, unbound, for a calibration set of ``rubric``."""
        if grader != "rubric":
            return None
        from evalkit_plugins.rubric import RubricJudge

        return RubricJudge(self.options.judge_options())

    def pairwise_judge(self) -> Any:
        """The judge of two answers to one task, unbound (``evalkit compare --pairwise-judge``):
        the judge instance and temperature of these options, the newest pairwise prompt."""
        from evalkit_plugins.pairwise import PairwiseJudge

        return PairwiseJudge(JudgeOptions(judge=self.options.judge, temperature=self.options.temperature))
