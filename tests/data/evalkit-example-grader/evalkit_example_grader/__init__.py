"""A grader: the share of the reference answer's key words that the answer repeats."""

import re

import attrs
from evalkit import Check, Grading
from evalkit.options import number, option

WORD = re.compile(r"[a-z0-9]+")
STOP = {"a", "an", "and", "the", "to", "of", "in", "on", "is", "it", "for", "or"}


@attrs.frozen
class CoverageOptions:
    """The grader's options; the validator refuses a threshold outside (0, 1] before it is built."""

    threshold: float = option("the keyword coverage from which an answer passes", default=0.6, validator=number(above=0, at_most=1))


class KeywordCoverageGrader:
    """Scores 0..1 by keyword coverage of the reference; passes at ``threshold`` (default 0.6).

    ``yardstick`` names the measuring instrument: runs are compared only under one yardstick, so it
    changes whenever the way of scoring changes (here: the version and the threshold).
    """

    Options = CoverageOptions

    def __init__(self, options: CoverageOptions):
        self.threshold = float(options.threshold)
        self.yardstick = f"keyword-coverage:v1:{self.threshold:g}"

    def grade(self, prompt, answer):
        """One evalkit.Grading for one answer."""
        expected = {w for w in WORD.findall((prompt.reference_text or "").lower()) if w not in STOP}
        if not expected:
            return Grading(0.0, False, yardstick=self.yardstick, error="the prompt has no reference answer")
        found = expected & set(WORD.findall(answer.text.lower()))
        score = len(found) / len(expected)
        passed = score >= self.threshold
        return Grading(score, passed, checks=[Check("covered_the_reference", passed)], yardstick=self.yardstick)
