"""``evalkit run``'s spending options, declared in one place: ``--budget``, ``--max-requests``,
``--cache`` / ``--no-cache`` and ``--answers-from`` (see docs/costs.md)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_spending_options", "resume_args", "spending_options"]


def _amount(text: str) -> Any:
    from ..costs import parse_amount

    try:
        return parse_amount(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_spending_options(parser: argparse.ArgumentParser) -> None:
    """Add the spending options to ``evalkit run``."""
    from .common import positive_int

    group = parser.add_argument_group("spending (see docs/costs.md)")
    group.add_argument(
        "--budget", type=_amount, metavar="AMOUNT",
        help="stop asking before the run would spend more than AMOUNT, in the currency of the instance's prices "
        "(the whole run: shared by its shards, counted over a resume); the run ends incomplete (exit 3) with the command that resumes it",
    )
    group.add_argument(
        "--max-requests", type=positive_int, metavar="N",
        help="stop asking after N generator requests (the whole run); the run ends incomplete (exit 3)",
    )
    group.add_argument(
        "--cache", action=argparse.BooleanOptionalAction, default=None,
        help="reuse the stored answer of an identical request (same instance, options and request body) and keep "
        "new answers for later runs; it stores full answer text, so below --privacy full it needs [cache] enabled = true "
        "(default: [cache] enabled)",
    )
    group.add_argument(
        "--answers-from", metavar="RUN_ID",
        help="reuse the answers of stored run RUN_ID (same set and instance, kept with --privacy full) for the prompts "
        "unchanged since, and ask the model for the rest",
    )


def spending_options(args: argparse.Namespace) -> dict[str, Any]:
    """The spending options as :func:`evalkit.evaluate_set` keywords, with the options a resume
    command repeats."""
    return {
        "budget": args.budget,
        "max_requests": args.max_requests,
        "cache": args.cache,
        "answers_from": args.answers_from,
        "command_args": resume_args(args),
    }


def resume_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The options a resume command repeats, as the user gave them: ``--provider``, ``--model``,
    ``--grader``, ``--judge``, ``--config``, ``--database`` (the run keeps its privacy level)."""
    words: list[str] = []
    for option, value in (
        ("--provider", args.provider), ("--model", args.model),
        ("--grader", args.grader if args.grader != "deterministic" else None), ("--judge", getattr(args, "judge", None)),
        ("--config", args.config or getattr(args, "global_config", None)),
        ("--database", args.database or getattr(args, "global_database", None)),
    ):  # fmt: skip
        if value:
            words += [option, str(value)]
    if args.cache:
        words.append("--cache")
    return tuple(words)
