"""``evalkit run``'s spending options, declared in one place: ``--budget``, ``--max-requests``,
``--cache`` / ``--no-cache`` and ``--answers-from`` (see docs/costs.md); the library keywords they
feed say so (:mod:`evalkit.run.settings`, read by :mod:`evalkit.cli.run_keywords`)."""

from __future__ import annotations

import click

from .params import PositiveInt, option_group

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .app import Arguments

__all__ = ["Amount", "resume_args", "spending_option_group"]


class Amount(click.ParamType):
    """An amount of money as a user writes it (``2.50``): a finite decimal of zero or more."""

    name = "amount"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """``value`` as a :class:`~decimal.Decimal`, or a usage error quoting (the start of) it."""
        from decimal import Decimal

        from ..costs import parse_amount

        if isinstance(value, Decimal):
            return value
        text = str(value)
        if len(text) > 40:
            self.fail(f"{text[:20]!r}… is not an amount (write it like 2.50)", param, ctx)
        try:
            return parse_amount(text)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


#: The spending options of ``evalkit run``.
spending_option_group = option_group(
    click.option(
        "--budget", type=Amount(), metavar="AMOUNT",
        help="stop asking before the run would spend more than AMOUNT, in the currency of the instance's prices "
        "(the whole run: shared by its shards, counted over a resume); the run ends incomplete (exit 3) with the "
        "command that resumes it",
    ),
    click.option(
        "--max-requests", type=PositiveInt(), metavar="N",
        help="stop asking after N generator requests (each answer, each conversation turn, a failed request too; "
        "a transport retry is not counted) over the whole run; the run ends incomplete (exit 3)",
    ),
    click.option(
        "--cache/--no-cache", default=None,
        help="reuse the stored answer of an identical request (same instance, options and request body) and keep "
        "new answers for later runs; it stores full answer text, so below --privacy full it needs [cache] enabled = true "
        "(default: [cache] enabled)",
    ),
    click.option(
        "--answers-from", metavar="RUN_ID",
        help="reuse the answers of stored run RUN_ID (same set and instance, kept with --privacy full) for the prompts "
        "unchanged since, and ask the model for the rest",
    ),
)  # fmt: skip


def resume_args(args: Arguments) -> tuple[str, ...]:
    """The options a resume command repeats, as the user gave them: those of an interrupted run's
    resume line, in its order (:func:`~evalkit.cli.resuming.resumed_options`: ``--provider``,
    ``--repeats``, ``--cache``…, then the store's ``--config``, ``--database``)."""
    from .resuming import resumed_options, store_words

    # the words of the interrupted line (:func:`~evalkit.cli.resuming.resume_command`), in its order
    return (*(word for option in resumed_options(args) for word in option), *store_words(args))
