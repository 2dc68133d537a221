"""A word diff of two answers, for showing them side by side.

The texts are cut into words and the whitespace between them (so each side is rebuilt exactly)
and matched with :class:`difflib.SequenceMatcher`. Its cost grows with the product of the two
lengths, so texts of more than :data:`MAX_DIFF_TOKENS` tokens are not diffed (the page shows them
side by side and says why).
"""

from __future__ import annotations

import difflib
import re

import attrs

__all__ = ["MAX_DIFF_TOKENS", "Segment", "WordDiff", "word_diff"]

#: The most tokens (words and the spaces between them) either side may have to be diffed.
MAX_DIFF_TOKENS = 4000
_TOKENS = re.compile(r"\s+|[^\s]+")


@attrs.frozen
class Segment:
    """A run of text on one side: ``same`` on both sides, ``removed`` (old side only) or ``added`` (new side only)."""

    kind: str
    text: str


@attrs.frozen
class WordDiff:
    """The two sides of a diff, each a sequence of segments that rebuilds its text exactly."""

    old: tuple[Segment, ...]
    new: tuple[Segment, ...]

    @property
    def changed(self) -> bool:
        """True when a word was added or removed."""
        return any(s.kind != "same" for s in (*self.old, *self.new))


def word_diff(old: str, new: str) -> WordDiff | None:
    """The word diff of ``old`` and ``new``, or ``None`` when either is too long to diff."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    if len(a) > MAX_DIFF_TOKENS or len(b) > MAX_DIFF_TOKENS:
        return None
    old_side: list[Segment] = []
    new_side: list[Segment] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            old_side.append(Segment("same", "".join(a[i1:i2])))
            new_side.append(Segment("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            old_side.append(Segment("removed", "".join(a[i1:i2])))
        if j2 > j1:
            new_side.append(Segment("added", "".join(b[j1:j2])))
    return WordDiff(tuple(old_side), tuple(new_side))
