"""The gate's command-line options, one group per command kind, and how they meet ``[gate]``.

Each option has the name of its ``[gate]`` key (``--max-regressed-cases`` is
``max_regressed_cases``) and overrides it; what neither gives takes the default
(:func:`evalkit.gate_settings.gate_from`). ``--repeats`` overrides ``[run] repeats``.
"""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .params import Decorated

from .params import MAX_REPEATS, Choice, PositiveInt, option_group

__all__ = ["GATE_METHODS", "gate_of", "gate_options", "repeats_of", "repeats_option"]

#: The gate's methods, as ``--gate`` and ``[gate] method`` name them.
GATE_METHODS = ("tolerance", "paired")

#: The retrieval metrics beyond hit@1 and hit@3 a retrieval run can gate on, with their words.
_RETRIEVAL_EXTRA = (("max-mrr-drop", "MRR@k"), ("max-recall-drop", "recall@k"), ("max-ndcg-drop", "nDCG@k"))


def gate_options(kind: str = "prompts") -> Callable[[Decorated], Decorated]:
    """``--gate``, ``--alpha``, ``--max-regressed-cases``, ``--fail-on-inconclusive`` and, for
    retrieval runs, ``--max-mrr-drop``, ``--max-recall-drop``, ``--max-ndcg-drop`` (kept as raw
    text: :func:`gate_of` validates them with the configuration's values, a usage error)."""
    decorators = [
        click.option(
            "--gate", type=Choice(GATE_METHODS), default=None, metavar="{tolerance,paired}",
            help='how the comparison is decided: "tolerance" (a drop beyond the tolerance regresses) or "paired" '
            "(regressed only when the drop is significant and beyond the tolerance; no regression when the interval "
            "shows it within; otherwise inconclusive). Default: [gate] method, else tolerance",
        ),
        click.option(
            "--alpha", metavar="A", default=None,
            help="the paired test's one-sided significance level, from 1e-9 and below 0.5 (default: [gate] alpha, else 0.05)",
        ),
        click.option(
            "--max-regressed-cases", metavar="N", default=None,
            help="fail the gate when more than N cases passed in the baseline and fail now (0: any; default: [gate], else no cap)",
        ),
        click.option(
            "--fail-on-inconclusive", is_flag=True,
            help="exit 1 when the paired gate cannot tell a drop beyond the tolerance from noise (default: exit 0 with a line saying so)",
        ),
    ]  # fmt: skip
    if kind == "retrieval":
        decorators += [
            click.option(
                f"--{option}", metavar="X", default=None,
                help=f"largest accepted absolute drop of {words}, 0..1; gates on {words} (default: [gate], else reported, not gated)",
            )
            for option, words in _RETRIEVAL_EXTRA
        ]
    return option_group(*decorators)


def repeats_option(function: Decorated) -> Decorated:
    """``--repeats N``: every prompt answered N times."""
    return click.option(
        "--repeats", type=PositiveInt(MAX_REPEATS), metavar="N", default=None,
        help="answer every prompt N times as independent requests and grade each answer; a case's result is its pass "
        "fraction, compared in pairs (default: [run] repeats, else 1)",
    )(function)  # fmt: skip


def gate_of(args: Any, config: Any, kind: str = "prompts") -> tuple[Any, Any]:
    """The tolerances and gate settings of this command: its options over the configuration's
    ``[gate]`` over the defaults; a bad option is a usage error (exit 2) before anything runs."""
    from ..gate_settings import PROMPT_TOLERANCE_KEYS, RETRIEVAL_TOLERANCE_KEYS, gate_from

    keys = PROMPT_TOLERANCE_KEYS if kind == "prompts" else RETRIEVAL_TOLERANCE_KEYS
    overrides: dict[str, object] = {key: getattr(args, key, None) for key in keys}
    overrides.update(
        method=getattr(args, "gate", None),
        alpha=getattr(args, "alpha", None),
        max_regressed_cases=getattr(args, "max_regressed_cases", None),
    )
    where = str(config.path) if getattr(config, "path", None) is not None else "evalkit.toml"
    return gate_from(getattr(config, "gate", None), overrides, kind=kind, where=where)


def repeats_of(args: Any, config: Any) -> int:
    """``--repeats``, else ``[run] repeats``, else 1."""
    given = getattr(args, "repeats", None)
    if given is not None:
        return int(given)
    configured = getattr(config, "repeats", None)
    return int(configured) if configured is not None else 1
