""""Did you mean" hints for names a user mistyped: sets, plugins, deployments, commands."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["close_matches", "did_you_mean"]


def close_matches(word: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """The candidates closest to ``word``, best first (none when nothing is close)."""
    import difflib

    pool = [c for c in dict.fromkeys(candidates) if c]
    scored = sorted(
        ((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in pool), key=lambda pair: -pair[0]
    )
    best = scored[0][0] if scored else 0.0
    # only the near-best: one clear meaning beats a list of loosely similar names
    found = [c for ratio, c in scored if ratio >= 0.6 and ratio >= best - 0.05][:limit]
    if not found:  # a case slip or a prefix ("Myapp.FAQ", "evalkit.lex") is still a likely meaning
        lowered = word.lower()
        found = [c for c in pool if c.lower() == lowered or (len(word) >= 3 and c.lower().startswith(lowered))][:limit]
    return found


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` Did you mean "x"?`` (or ``"x" or "y"``), or an empty string when nothing is close."""
    found = close_matches(word, candidates)
    if not found:
        return ""
    return " Did you mean " + " or ".join(f'"{c}"' for c in found) + "?"
