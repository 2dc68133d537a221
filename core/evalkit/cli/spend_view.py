"""How a run's tokens and cost read: the summary lines, the history cell, the compare delta, and
the JSON form. An unknown amount reads ``unknown`` (``null`` in JSON), never 0."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

__all__ = ["cost_cell", "cost_delta_cells", "cost_delta_document", "spend_document", "spend_lines"]


def spend_document(run: Any) -> dict[str, Any] | None:
    """The run's stored spend as ``--json`` gives it (``None`` for a run stored before spend was kept)."""
    spend = run.spend
    return dict(spend) if isinstance(spend, dict) else None


def _tokens(tally: Any) -> str:
    """A tally's tokens in the replies its requests got (``requests``: a failed request and a
    transport retry are not among them), and how many of those are of unknown usage."""
    if not isinstance(tally, dict) or not tally.get("requests"):
        return ""
    from ..wording import counted, figure

    # counts read as evalkit plan's do (grouped; scientific from 10^15, as a cost is)
    text = f"{figure(tally.get('prompt_tokens', 0))} prompt + {figure(tally.get('completion_tokens', 0))} completion tokens in {counted(tally['requests'], 'reply')}"
    if tally.get("cached_prompt_tokens"):
        text += f" ({figure(tally['cached_prompt_tokens'])} prompt tokens cached by the endpoint)"
    if tally.get("usage_unreported"):
        text += f"; usage unknown for {tally['usage_unreported']}"
    return text


def spend_lines(run: Any) -> list[str]:
    """``Tokens: …`` and ``Cost: …`` lines for a run's summary (none for a run stored before)."""
    from ..costs import format_amount, spend_cost

    spend = run.spend
    if not isinstance(spend, dict):
        if run.kind.value != "prompts":
            return []
        if run.status.value == "running":  # the spend is written when the run ends
            return ["Cost:       unknown until the run ends (a run whose process stopped without ending it never says)"]
        return ["Cost:       unknown (stored before evalkit kept usage)"]
    lines = []
    generator = _tokens(spend.get("generator"))
    judge = _tokens(spend.get("judge"))
    if generator:
        lines.append(f"Tokens:     {generator}")
    if judge:
        lines.append(f"Judging:    {judge}")
    reused = []
    if spend.get("answers_from_cache"):
        reused.append(f"{spend['answers_from_cache']} from the answer cache")
    if spend.get("answers_reused"):
        reused.append(f"{spend['answers_reused']} from run {run.source_run_id}")
    if reused:
        lines.append(f"Reused:     {', '.join(reused)} (no request)")
    amount, currency = spend_cost(spend)
    line = f"Cost:       {format_amount(amount, currency)}"
    if amount is None:
        line += " (no price configured: price_per_million_input/output)" if currency is None else " (an endpoint reported no usage)"
    lines.append(line)
    return lines


def cost_cell(run: Any) -> str:
    """A run's cost in a table cell: ``0.0042 USD``, ``unknown``; ``-`` for a retrieval run (it pays
    for no generator)."""
    from ..costs import format_amount, spend_cost

    if run.kind.value != "prompts":
        return "-"
    amount, currency = spend_cost(run.spend)
    return format_amount(amount, currency)


def cost_delta_cells(run: Any, baseline: Any) -> tuple[str, str, str]:
    """The baseline's cost, the run's, and the difference (``+0.0009 USD``) as table cells; the
    difference is ``unknown`` when either cost is, or when they are in two currencies."""
    from ..costs import format_amount, spend_cost

    before, before_currency = spend_cost(baseline.spend)
    after, after_currency = spend_cost(run.spend)
    delta: Decimal | None = None
    if before is not None and after is not None and before_currency == after_currency:
        delta = after - before
    shown = "unknown" if delta is None else ("+" if delta >= 0 else "-") + format_amount(abs(delta), after_currency)
    return format_amount(before, before_currency), format_amount(after, after_currency), shown


def cost_delta_document(run: Any, baseline: Any) -> dict[str, Any]:
    """The cost delta as JSON: both costs and the delta as exact decimal strings (``null``: unknown)."""
    from ..costs import spend_cost

    before, before_currency = spend_cost(baseline.spend)
    after, after_currency = spend_cost(run.spend)
    delta = after - before if before is not None and after is not None and before_currency == after_currency else None
    return {
        "baseline": None if before is None else str(before),
        "run": None if after is None else str(after),
        "delta": None if delta is None else str(delta),
        "currency": after_currency or before_currency,
    }
