"""A grader: the share of the reference answer's key words that the answer repeats."""

import re

from evalkit import Check, Grading

WORD = re.compile(r"[a-z0-9]+")
STOP = {"a", "an", "and", "the", "to", "of", "in", "on", "is", "it", "for", "or"}


class KeywordCoverageGrader:
    """Scores 0..1 by keyword coverage of the reference; passes at ``threshold`` (default 0.6).

    ``yardstick`` names the measuring instrument: runs are compared only under one yardstick, so it
    changes whenever the way of scoring changes (here: the version and the threshold).
    """

    def __init__(self, threshold=0.6):
        if not 0 < float(threshold) <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
        self.threshold = float(threshold)
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
