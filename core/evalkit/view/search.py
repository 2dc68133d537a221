"""Searching a run's cases: plain text (case-insensitive) or a regular expression with a time limit.

A regular expression is compiled by the ``regex`` module (``re``'s syntax, version 0, as the
``regex`` assertion kind compiles patterns) and every
search is given the time the whole search has left (``regex``'s own ``timeout=``, which works in
any thread, where a request is answered): a pattern that backtracks catastrophically ends the
search with :class:`SearchTimeout` after :data:`SEARCH_TIME_LIMIT_S` instead of holding a thread.
Patterns longer than :data:`MAX_QUERY_CHARS` and counted repeats above :data:`MAX_REPEAT` are
refused before compiling (``regex`` builds a counted repeat out in full: ``a{1000000}`` takes
seconds and megabytes to compile).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

__all__ = ["MAX_QUERY_CHARS", "MAX_REPEAT", "SEARCH_TIME_LIMIT_S", "Query", "SearchError", "SearchTimeout"]

#: The longest search text or pattern taken.
MAX_QUERY_CHARS = 500
#: The largest count a pattern's ``{m}`` / ``{m,n}`` repeat may give.
MAX_REPEAT = 1000
#: How long one search of one run may take, in seconds.
SEARCH_TIME_LIMIT_S = 2.0


class SearchError(ValueError):
    """The search cannot run as given (too long, or a pattern that does not compile); the message says why."""


class SearchTimeout(Exception):
    """The pattern took longer than the search's time limit."""


@attrs.frozen
class Query:
    """What to look for: ``text``, taken literally (case-insensitive) or as a regular expression."""

    text: str
    regex: bool = False

    def matcher(self, time_limit_s: float = SEARCH_TIME_LIMIT_S) -> Callable[[str], bool]:
        """A function telling whether a text matches; :class:`SearchError` for a query that cannot
        run. A regular expression's function raises :class:`SearchTimeout` once its searches
        together have taken ``time_limit_s`` (the time spent reading cases between them does not
        count: a 100,000-case run takes seconds to read)."""
        if len(self.text) > MAX_QUERY_CHARS:
            raise SearchError(f"the search is {len(self.text):,} characters long; at most {MAX_QUERY_CHARS} are taken")
        if not self.regex:
            needle = self.text.casefold()
            return lambda text: needle in text.casefold()
        import regex

        _refuse_large_repeats(self.text)
        try:
            pattern = regex.compile(self.text, regex.V0)
        except (regex.error, ValueError, OverflowError, RecursionError) as exc:
            raise SearchError(f"the pattern does not compile: {exc}") from None
        spent = [0.0]

        def matches(text: str) -> bool:
            left = time_limit_s - spent[0]
            if left <= 0:
                raise SearchTimeout()
            started = time.monotonic()
            try:
                return pattern.search(text, timeout=left) is not None
            except TimeoutError:
                raise SearchTimeout() from None
            finally:
                spent[0] += time.monotonic() - started

        return matches


def _refuse_large_repeats(pattern: str) -> None:
    """Refuse a ``{m}``, ``{m,}`` or ``{m,n}`` repeat counting above :data:`MAX_REPEAT` (an
    escaped brace is refused too: cheaper than parsing the pattern, and no search needs one)."""
    import re

    for match in re.finditer(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}", pattern):
        counts = [int(group) for group in match.groups() if group]
        if any(count > MAX_REPEAT for count in counts):
            raise SearchError(f"the pattern repeats {max(counts):,} times ({match.group()}); at most {MAX_REPEAT:,} are taken")
