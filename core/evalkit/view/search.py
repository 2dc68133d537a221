"""Searching a run's cases: plain text (case-insensitive) or a regular expression with a time limit.

A regular expression is compiled as the ``regex`` assertion kind compiles its patterns
(:func:`evalkit.pcre.compile_pattern`: ``re``'s syntax on the ``regex`` module, PCRE's delimited
form ``/word/i`` too, counted repeats beyond :data:`~evalkit.pcre.MAX_REPETITIONS` refused), and
every match is given the time the whole search has left (``regex``'s own ``timeout=``, which works
in any thread, where a request is answered): a pattern that backtracks catastrophically ends the
search with :class:`SearchTimeout` (after :data:`MATCH_TIME_LIMIT_S` on one text, or
:data:`SEARCH_TIME_LIMIT_S` over all) instead of holding a thread.
A search longer than :data:`MAX_QUERY_CHARS` is refused. A pattern is matched in multi-line mode
(a case is searched as one text, a line per field: ``^`` and ``$`` mean a line's start and end).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

__all__ = ["MATCH_TIME_LIMIT_S", "MAX_QUERY_CHARS", "SEARCH_TIME_LIMIT_S", "Query", "SearchError", "SearchTimeout"]

#: The longest search text or pattern taken.
MAX_QUERY_CHARS = 500
#: How long the matches of one search of one run may take together, in seconds (a benign pattern
#: over a 100,000-case run takes about one).
SEARCH_TIME_LIMIT_S = 5.0
#: How long one match may take, in seconds (the ``regex`` assertion kind's limit).
MATCH_TIME_LIMIT_S = 1.0


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
        run. A regular expression's function raises :class:`SearchTimeout` when one match takes
        :data:`MATCH_TIME_LIMIT_S`, or its matches together ``time_limit_s`` (the time spent reading
        cases between them does not count: a 100,000-case run takes seconds to read)."""
        if len(self.text) > MAX_QUERY_CHARS:
            raise SearchError(f"the search is {len(self.text):,} characters long; at most {MAX_QUERY_CHARS} are taken")
        if not self.regex:
            needle = self.text.casefold()
            return lambda text: needle in text.casefold()
        import regex

        from ..pcre import PatternError, compile_pattern

        try:
            checked = compile_pattern(self.text)
        except PatternError as exc:
            raise SearchError(str(exc)) from None
        # A case is searched as one text, a line per field: ^ and $ mean a line's start and end.
        pattern = regex.compile(checked.pattern, checked.flags | regex.MULTILINE)
        spent = [0.0]

        def matches(text: str) -> bool:
            left = min(time_limit_s - spent[0], MATCH_TIME_LIMIT_S)
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
