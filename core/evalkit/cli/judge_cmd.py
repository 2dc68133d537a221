"""``evalkit judge calibrate``: measure a judge against people's labels."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .names import ProviderName
from .params import CONFIG_HELP, PositiveInt, Temperature, global_options

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@click.group("judge", cls=EvalkitGroup, help="Measure judges against people's labels. See `evalkit judge SUBCOMMAND --help`.", subcommand_metavar="SUBCOMMAND [ARGS]...")
@global_options(config=None, database=None)
def command(**params: Any) -> None:
    """``evalkit judge`` alone: its help."""
    group_without_command()


@command.command(
    "calibrate",
    cls=EvalkitCommand,
    short_help="ask a judge every item of a calibration set and measure its agreement with people",
    help=(
        "Ask the judge every item of a calibration set (kind: calibration) and report its agreement with the "
        "people's labels: n, raw agreement, Cohen's kappa (quadratic-weighted on a scale of more than two "
        "labels) with a 95% bootstrap interval, the confusion matrix, precision and recall per label, the "
        "judge's positive rate beside the people's and, with --repeats, its agreement with itself "
        "(Krippendorff's alpha). Exit 2 when the set or the judge cannot be used (nothing is asked), 3 when "
        "the judge labelled nothing."
    ),
)
@click.option("--set", "set_identifier", required=True, metavar="SET", help="the calibration set's identifier")
@click.option(
    "--judge", metavar="NAME", type=ProviderName(),
    help='the configured provider instance that judges (default: the config\'s judge = "NAME")',
)
@click.option("--repeats", type=PositiveInt(), default=1, metavar="N", help="ask the judge N times per item and report its self-agreement (default 1)")
@click.option("--judge-temperature", type=Temperature(), metavar="T", help="the judge's sampling temperature (default 0)")
@global_options(config=CONFIG_HELP, database=None, json="print one JSON document")
def calibrate(**params: Any) -> Arguments:
    """Parsed ``evalkit judge calibrate``."""
    return arguments(_calibrate, params)


def _calibrate(args: Arguments) -> int:
    """Calibrate, print, return 0."""
    from ..calibration import calibration_set_catalog
    from ..config import load_config
    from ..judge_calibration import JudgeSettings, calibrate_judge

    config = load_config(args.config)
    calibration = calibration_set_catalog(config=config).get(args.set_identifier).set
    settings = JudgeSettings(args.judge, args.judge_temperature or 0.0, args.repeats)
    result = calibrate_judge(calibration, settings, config)
    if args.json:
        from .json_output import print_json

        print_json(result.as_dict())
    else:
        _print(result)
    return 0


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _print(result: Any) -> None:
    """The figures as a few lines and two tables."""
    from rich.table import Table

    from .console import console

    out = console()
    agreement = result.agreement
    kappa = agreement.kappa
    out.line(
        "[bold]Judge {instance}[/bold] ({model}, prompt v{version}) on calibration set {set}",
        instance=result.judge_instance, model=result.judge_model, version=result.prompt_version, set=result.set_identifier,
    )  # fmt: skip
    out.print(f"Yardstick:  {result.yardstick}")
    out.print(f"Items:      {agreement.n} labelled by the judge" + (f", {len(result.unjudged)} not (left out)" if result.unjudged else ""))
    out.print(f"Agreement:  {_share(agreement.agreement)} of items with the people's label")
    weights = f", {kappa.weights}-weighted" if kappa.weights else ""
    interval = f" (95% CI {kappa.interval.low:.3f} to {kappa.interval.high:.3f})" if kappa.interval is not None else ""
    out.print(f"Kappa:      {_number(kappa.value)}{interval}{weights}")
    positive = ", ".join(str(label) for label in agreement.positive_labels)
    out.print(f"Positive:   the judge says {positive} for {_share(agreement.judge_positive_rate)}, people for {_share(agreement.human_positive_rate)}")
    if result.self_agreement is not None:
        out.print(f"Self:       Krippendorff's alpha {_number(result.self_agreement.value)} across {result.repeats} repeats")
    if result.unjudged:
        out.print(f"Unjudged:   {', '.join(result.unjudged)}")
    confusion = Table(title="Confusion (rows: people, columns: judge)", title_justify="left")
    confusion.add_column("people \\ judge")
    for label in agreement.labels:
        confusion.add_column(str(label), justify="right")
    for label, row in zip(agreement.labels, agreement.confusion, strict=True):
        confusion.add_row(str(label), *(str(cell) for cell in row))
    out.print(confusion)
    per_label = Table(title="Per label", title_justify="left")
    for name in ("label", "people", "judge", "precision", "recall"):
        per_label.add_column(name, justify="left" if name == "label" else "right")
    for row in agreement.per_label:
        per_label.add_row(str(row.label), str(row.support), str(row.predicted), _share(row.precision), _share(row.recall))
    out.print(per_label)
