"""``evalkit judge calibrate|show``: measure a judge against people's labels, and list the records."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments, group_without_command
from .console import console
from .names import ProviderName
from .params import MAX_REPEATS, PositiveInt, Temperature, global_options

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
        "(Krippendorff's alpha). The result is stored as the judge's calibration record, keyed by its identity "
        "(yardstick: grader, instance, reported model, prompt version; and temperature). Exit 2 when the set or "
        "the judge cannot be used (nothing is asked), 3 when the judge labelled nothing (nothing is stored)."
    ),
)
@click.option("--set", "set_identifier", required=True, metavar="SET", help="the calibration set's identifier")
@click.option(
    "--judge", metavar="NAME", type=ProviderName(),
    help='the configured provider instance that judges (default: the config\'s judge = "NAME")',
)
@click.option("--repeats", type=PositiveInt(MAX_REPEATS), default=1, metavar="N", help="ask the judge N times per item and report its self-agreement (default 1)")
@click.option("--judge-temperature", type=Temperature(), metavar="T", help="the judge's sampling temperature (default 0)")
@global_options(json="print one JSON document")
def calibrate(**params: Any) -> Arguments:
    """Parsed ``evalkit judge calibrate``."""
    return arguments(_calibrate, params)


def _calibrate(args: Arguments) -> int:
    """Calibrate, print, return 0."""
    from ..catalog import calibration_set_catalog
    from ..config import load_config
    from ..judge_calibration import JudgeSettings, calibrate_judge

    config = load_config(args.config)
    calibration = calibration_set_catalog(config=config).get(args.set_identifier).set
    settings = JudgeSettings(args.judge, args.judge_temperature or 0.0, args.repeats)
    result = calibrate_judge(calibration, settings, config)
    stored = _store(args, config, result)
    if args.json:
        from .json_output import print_json

        print_json({**result.as_dict(), "stored": stored})
    else:
        _print(result)
        if not stored:
            console(stderr=True).plain("note: this store keeps no calibration records; the calibration was not stored")
    return 0


def _store(args: Arguments, config: Any, result: Any) -> bool:
    """Store ``result`` as a calibration record; False when the store keeps none."""
    from ..storage import capabilities, close_repository
    from .common import database_url
    from .stored import opened_for

    repository = opened_for(args, database_url(args, config))
    try:
        keeper = capabilities(repository).calibrations
        if keeper is None:
            return False
        keeper.record_calibration(result.record())
        return True
    finally:
        close_repository(repository)


@command.command(
    "show",
    cls=EvalkitCommand,
    short_help="list the stored calibration records, newest first",
    help=(
        "List the judges' stored calibration records, newest first: the judge's yardstick (grader, instance, "
        "reported model, prompt version) and temperature, the calibration set, n, kappa with its interval and the "
        "self-agreement. A judge whose model or prompt changed has no record until it is calibrated again."
    ),
)
@global_options(json="print one JSON document")
def show(**params: Any) -> Arguments:
    """Parsed ``evalkit judge show``."""
    return arguments(_show, params)


def _show(args: Arguments) -> int:
    """Print the records, return 0."""
    from ..storage import capabilities, close_repository
    from .stored import format_date, open_store

    repository = open_store(args)
    try:
        keeper = capabilities(repository).calibrations
        records = keeper.calibrations() if keeper is not None else []
    finally:
        close_repository(repository)
    if args.json:
        from .json_output import print_json

        print_json([_record_document(r) for r in records])
        return 0
    out = console()
    if not records:
        out.plain("no judge is calibrated in this store (see `evalkit judge calibrate --help`)")
        return 0
    from rich.table import Table

    table = Table()
    for name in ("calibrated", "judge (yardstick)", "temperature", "set", "n", "kappa", "95% CI", "self"):
        table.add_column(name)
    for record in records:
        interval = f"{record.kappa_low:.3f} to {record.kappa_high:.3f}" if record.kappa_low is not None and record.kappa_high is not None else "—"
        table.add_row(
            format_date(record.calibrated_at), record.yardstick, f"{record.temperature:g}", record.set_identifier,
            str(record.n), _number(record.kappa), interval, _number(record.self_agreement) if record.self_agreement is not None else "—",
        )  # fmt: skip
    out.print(table)
    return 0


def _record_document(record: Any) -> dict[str, Any]:
    return {
        "yardstick": record.yardstick, "temperature": record.temperature, "grader": record.grader,
        "judge_instance": record.judge_instance, "judge_model": record.judge_model,
        "prompt_version": record.prompt_version, "set": record.set_identifier, "repeats": record.repeats,
        "n": record.n, "agreement": record.agreement, "kappa": record.kappa,
        "kappa_ci95": [record.kappa_low, record.kappa_high] if record.kappa_low is not None else None,
        "self_agreement": record.self_agreement, "calibrated_at": record.calibrated_at,
    }  # fmt: skip


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _print(result: Any) -> None:
    """The figures as a few lines and two tables."""
    from rich.table import Table

    from ..wording import quoted

    out = console()
    agreement = result.agreement
    kappa = agreement.kappa
    out.line(
        "[bold]Judge {instance}[/bold] ({model}, prompt v{version}) on calibration set {set}",
        instance=quoted(result.judge_instance), model=result.judge_model, version=result.prompt_version, set=result.set_identifier,
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
