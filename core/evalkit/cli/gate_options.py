"""The gate's command-line options, one group per command kind, and how they meet ``[gate]``.

Each option has the name of its ``[gate]`` key (``--max-regressed-cases`` is
``max_regressed_cases``) and overrides it; what neither gives takes the default
(:func:`evalkit.gate_settings.gate_from`). ``--repeats`` overrides ``[run] repeats``.
"""

from __future__ import annotations

import argparse

from .common import positive_int

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["add_gate_options", "add_repeats_option", "gate_of", "repeats_of"]

#: The retrieval metrics beyond hit@1 and hit@3 a retrieval run can gate on, with their words.
_RETRIEVAL_EXTRA = (("max-mrr-drop", "MRR@k"), ("max-recall-drop", "recall@k"), ("max-ndcg-drop", "nDCG@k"))


def add_gate_options(parser: argparse.ArgumentParser, kind: str = "prompts") -> None:
    """``--gate``, ``--alpha``, ``--max-regressed-cases``, ``--fail-on-inconclusive`` and, for
    retrieval runs, ``--max-mrr-drop``, ``--max-recall-drop``, ``--max-ndcg-drop``."""
    parser.add_argument(
        "--gate", choices=("tolerance", "paired"), default=None,
        help='how the comparison is decided: "tolerance" (a drop beyond the tolerance regresses) or "paired" '
        "(regressed only when the drop is significant and beyond the tolerance; no regression when the interval "
        "shows it within; otherwise inconclusive). Default: [gate] method, else tolerance",
    )
    parser.add_argument(
        "--alpha", metavar="A", default=None,
        help="the paired test's one-sided significance level, above 0 and below 0.5 (default: [gate] alpha, else 0.05)",
    )
    parser.add_argument(
        "--max-regressed-cases", metavar="N", default=None,
        help="fail the gate when more than N cases passed in the baseline and fail now (0: any; default: [gate], else no cap)",
    )
    parser.add_argument(
        "--fail-on-inconclusive", action="store_true",
        help="exit 1 when the paired gate cannot tell a drop beyond the tolerance from noise (default: exit 0 with a line saying so)",
    )
    if kind == "retrieval":
        for option, words in _RETRIEVAL_EXTRA:
            parser.add_argument(
                f"--{option}", metavar="X", default=None,
                help=f"largest accepted absolute drop of {words}, 0..1; gates on {words} (default: [gate], else reported, not gated)",
            )


def add_repeats_option(parser: argparse.ArgumentParser) -> None:
    """``--repeats N``: every prompt answered N times."""
    parser.add_argument(
        "--repeats", type=positive_int, metavar="N", default=None,
        help="answer every prompt N times as independent requests and grade each answer; a case's result is its pass "
        "fraction, compared in pairs (default: [run] repeats, else 1)",
    )


def gate_of(args: argparse.Namespace, config: Any, kind: str = "prompts") -> tuple[Any, Any]:
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


def repeats_of(args: argparse.Namespace, config: Any) -> int:
    """``--repeats``, else ``[run] repeats``, else 1."""
    given = getattr(args, "repeats", None)
    if given is not None:
        return int(given)
    configured = getattr(config, "repeats", None)
    return int(configured) if configured is not None else 1
