"""How ``evalkit compare --pairwise-judge`` prints a pairwise comparison for people."""

from __future__ import annotations

from typing import Any

from ..wording import counted, quoted


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def render_pairwise(out: Any, comparison: Any) -> None:
    """The figures of a :class:`~evalkit.pairwise.PairwiseComparison`, then the cases RUN lost
    or tied and the cases left out (every string goes through the console as data)."""
    from ..pairwise import LOSS, TIE, left_out_counts

    figures = comparison.tally
    models = ", ".join(comparison.judge_models) or "model not reported"
    out.print(
        f"Pairwise judge {quoted(comparison.judge_instance)} ({models}, prompt v{comparison.prompt_version}): "
        f"RUN's answers against BASE's on {counted(figures.cases, 'case')}, each shown in both orders"
    )
    out.print(f"Wins / ties / losses (RUN):  {figures.wins} / {figures.ties} / {figures.losses}")
    notes = []
    if figures.flipped:
        notes.append(f"{counted(figures.flipped, 'tie')} where the preference flipped with the order")
    if figures.unparseable:
        notes.append(f"{counted(figures.unparseable, 'judgement')} not in the fixed format (A, B or TIE), counted as ties")
    if notes:
        out.print("  of the ties: " + "; ".join(notes), style="yellow" if figures.unparseable else None)
    if figures.win_rate is None:
        out.print("Win rate:  undefined — every case is a tie")
    else:
        interval = figures.win_rate_ci95
        out.print(
            f"Win rate:  {_share(figures.win_rate)} of {counted(figures.wins + figures.losses, 'decided case')} "
            f"(95% Wilson CI {_share(interval.low)} to {_share(interval.high)}); ties are not counted"
        )
    if figures.position_bias is None:
        out.print("Position bias:  n/a — the judge gave no decisive judgement")
    else:
        out.print(
            f"Position bias:  {_share(figures.position_bias)} of {counted(figures.decisive_judgements, 'decisive judgement')} "
            "preferred the answer shown first (50% is none)"
        )
    for outcome, title in ((LOSS, "Lost by RUN"), (TIE, "Tied")):
        ids = [j.case_id for j in comparison.judgements if j.outcome == outcome]
        if ids:
            out.print(f"{title}: {len(ids)}")
            for case_id in ids:
                out.print(f"  - {case_id}")
    if comparison.left_out:
        reasons = ", ".join(f"{reason}: {count}" for reason, count in left_out_counts(comparison).items())
        out.print(f"Not judged: {counted(len(comparison.left_out), 'case')} ({reasons})")
