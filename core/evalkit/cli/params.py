"""The options several commands share, declared once as click decorators, and the value types
that refuse a bad value while the command line is parsed (a usage error, exit 2, nothing called).

Each decorator adds a group of options to a command (``@store_options``, ``@tolerance_options(…)``);
a command's own options are declared in its module. A decorator's options appear in the
command's help in the order they are declared here.
"""

from __future__ import annotations

import functools

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    Decorated = TypeVar("Decorated", bound=Callable[..., Any])

__all__ = [
    "MAX_COUNT",
    "MAX_REPEATS",
    "Choice",
    "Duration",
    "PositiveInt",
    "Temperature",
    "baseline_option",
    "global_options",
    "listed",
    "option_group",
    "placement_options",
    "report_option",
    "store_options",
    "tolerance_options",
    "wait_options",
]

#: The largest whole number a count option takes; longer text is refused before it is parsed.
MAX_COUNT = 1_000_000

#: Help of the options evalkit takes before a command and every command after it.
CONFIG_HELP = "configuration file (default: $EVALKIT_CONFIG, else the nearest evalkit.toml or [tool.evalkit] in pyproject.toml, here or in a parent folder)"
DATABASE_HELP = "results database URL (default: EVALKIT_DATABASE_URL, the config's database, or .evalkit/results.db in the project root)"
TRACEBACK_HELP = "show the full traceback on errors"


class PositiveInt(click.ParamType):
    """A whole number from 1 to ``maximum`` (:data:`MAX_COUNT` unless the option takes fewer, as
    ``--repeats`` does), refused at once otherwise."""

    name = "integer"

    def __init__(self, maximum: int = MAX_COUNT) -> None:
        self.maximum = maximum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """``value`` as an int, or a usage error quoting (the start of) it."""
        if isinstance(value, int):
            return value
        from ..shapes import whole_number

        text = str(value)
        shown = text if len(text) <= 20 else text[:20] + "…"
        number = whole_number(text.strip(), max_digits=len(str(self.maximum)))
        if number is None or not 1 <= number <= self.maximum:
            self.fail(f"must be a whole number from 1 to {self.maximum}, got {shown!r}", param, ctx)
        return number


#: The most answers per prompt ``--repeats`` takes, and judge calls per answer or item
#: (``--judge-repeats``, ``judge calibrate --repeats``): :data:`evalkit.config.MAX_REPEATS`, written
#: here so that parsing the command line imports no configuration code (a test keeps them equal).
MAX_REPEATS = 1_000


class Duration(click.ParamType):
    """A length of time as :func:`evalkit.waiting.parse_duration` reads it (``90``, ``90s``, ``30m``,
    ``1.5h``, ``2d``; 1 ms to 7 days: :mod:`evalkit.durations`' one rule), refused at once otherwise,
    naming the option (``--timeout must be a duration from 1 ms to 7 days (…), got "8x"``): checked where it was
    used, after the store was opened, a bad ``--timeout`` left a new store behind, was ignored
    without the flag that waits, and its message named no option. The value stays the text given
    (messages repeat it as written); its reader parses it again, and cannot fail."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """``value``, once it reads as a duration, or a usage error naming the option and quoting
        (the start of) the value."""
        from ..errors import UsageError
        from ..waiting import parse_duration
        from ..wording import argument

        text = str(value)
        try:
            parse_duration(text, argument(param.name) if param is not None and param.name else "a duration")
        except UsageError as exc:
            raise click.UsageError(str(exc), ctx) from None
        return text


class Temperature(click.ParamType):
    """A sampling temperature: a plain decimal number from 0 to 2."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """``value`` as a float in 0..2, or a usage error quoting it."""
        if isinstance(value, float):
            return value
        text = str(value)
        if len(text) > 16:
            self.fail(f"must be a number from 0 to 2, got {text[:16]!r}…", param, ctx)
        from ..shapes import decimal_text

        try:
            if not decimal_text(text):
                raise ValueError(text)
            number = float(text)
        except ValueError:
            self.fail(f"must be a number from 0 to 2, got {text!r}", param, ctx)
        if not 0.0 <= number <= 2.0:  # also refuses nan
            self.fail(f"must be a number from 0 to 2, got {text!r}", param, ctx)
        return number


class Choice(click.Choice):  # type: ignore[type-arg]  (typing is not imported at run time here)
    """click's choice, with a close one suggested as click suggests a mistyped option."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        """click's message, then ``Did you mean "x"?`` when a choice is close."""
        from ..wording import did_you_mean

        return super().get_invalid_choice_message(value, ctx) + did_you_mean(str(value), map(str, self.choices))


def listed(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str] | None:
    """A repeatable option's values as a list, ``None`` when it was not given (as handlers read them)."""
    return list(value) or None


def non_empty(what: str) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A callback refusing an option's or argument's value that is empty or only spaces (``-o "$REPORT"``,
    ``--run-id "$CI_RUN"`` with the variable unset), asking for ``what`` instead: read as not
    given, a report went to standard output, a file to its default place, a job began a run of its
    own instead of joining the one named; and a blank path made a file named by spaces."""

    def refuse_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        from .names import refuse_blank

        refuse_blank(ctx, param, value, what)
        return value

    return refuse_empty


#: The callback of a path option (``-o/--output``).
non_empty_path = non_empty("a path")

#: What click hands over for ``--resume`` given without a value: a NUL, which no command-line
#: argument can hold (each ends at one), so the bare flag is told apart from ``--resume ""``.
RESUME_ALONE = "\0"


def resume_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--resume``'s callback: ``None`` when not given, ``""`` given alone (the newest unfinished
    run), else the run id given. An empty or blank id (``--resume "$RUN_ID"`` with the variable
    unset) is refused, as for ``--run-id``: it resumed the newest unfinished run, perhaps another."""
    if value == RESUME_ALONE:
        return ""
    return _resume_id(ctx, param, value)


_resume_id = non_empty("a run id (--resume alone: the newest unfinished run)")


_run_id_given = non_empty("the run's id")


def shard_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--shard``'s callback: the slice as given, refused when empty or not ``I/N``, ``auto`` or
    ``auto/N`` — before the store is chosen: ``--shard x`` was told that its SQLite store is no
    shared one, and only once a shared store was set up that ``x`` is no slice."""
    refuse_blank_shard(ctx, param, value)
    if value is not None and not ctx.resilient_parsing:
        from ..errors import UsageError

        try:
            if value.startswith("auto"):
                from ..ci import parse_auto

                parse_auto(value)
            else:
                from ..run.plan import Shard

                Shard.parse(value)
        except UsageError as exc:
            raise click.UsageError(str(exc), ctx) from None
    return value


refuse_blank_shard = non_empty("a slice, I/N or auto")


def run_id_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--run-id``'s callback: the id as given, refused (a usage error naming the option) when
    empty or not 1 to 64 letters, digits, ``.``, ``_``, ``:`` or ``-``
    (:func:`evalkit.run.placement.check_run_id`): checked where the run began, after the store
    was opened, ``--run-id "bad id"`` left a new store behind."""
    value = _run_id_given(ctx, param, value)
    if value is not None:
        from ..errors import UsageError
        from ..run.placement import check_run_id

        try:
            check_run_id(value)
        except UsageError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None
    return value


def option_group(*decorators: Callable[[Decorated], Decorated]) -> Callable[[Decorated], Decorated]:
    """One decorator applying ``decorators`` so that their options are listed in the order given."""

    def decorate(function: Decorated) -> Decorated:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


def global_options(
    *, config: str | None = CONFIG_HELP, database: str | None = DATABASE_HELP, json: str | None = None
) -> Callable[[Decorated], Decorated]:
    """``--config PATH``, ``--database URL``, ``--json`` and ``--traceback``: the options evalkit
    takes before a command as well as after it (:func:`evalkit.cli.app.arguments` merges the two
    places). Each is the command's with its help text here, or not the command's with ``None``;
    ``--traceback`` is every command's."""
    decorators = []
    if config is not None:
        decorators.append(click.option("--config", metavar="PATH", help=config))
    if database is not None:
        decorators.append(click.option("--database", metavar="URL", help=database))
    if json is not None:
        decorators.append(click.option("--json", is_flag=True, help=json))
    decorators.append(click.option("--traceback", is_flag=True, help=TRACEBACK_HELP))
    return option_group(*decorators)


def store_options(function: Decorated) -> Decorated:
    """``--config``, ``--database`` and ``--traceback`` (a command that reads or writes the store
    but prints no JSON document)."""
    return global_options()(function)


def tolerance_options(first: str, second: str, what: tuple[str, str]) -> Callable[[Decorated], Decorated]:
    """Two tolerance options (kept as raw text so they are validated exactly; unset, ``[gate]`` or
    the default decides, see :mod:`.gate_options`) and the gate flags."""
    return option_group(
        click.option(
            f"--{first}", default=None, metavar="X",
            help=f"largest accepted absolute drop of the {what[0]}, a finite number in 0..1 "
            f"(default: [gate] {first.replace('-', '_')}, else 0.1; a drop equal to it passes)",
        ),
        click.option(
            f"--{second}", default=None, metavar="X",
            help=f"largest accepted absolute drop of the {what[1]}, a finite number in 0..1 "
            f"(default: [gate] {second.replace('-', '_')}, else 0.1)",
        ),
        click.option("--fail-on-regression", is_flag=True, help="exit 1 on a regression, and when the run cannot be compared (for CI)"),
        click.option(
            "--fail-on-new-failures", is_flag=True,
            help="exit 1 also when a case added to the set, or edited since the baseline, fails",
        ),
    )  # fmt: skip


def baseline_option(function: Decorated) -> Decorated:
    """``--baseline RUN_ID``: compare with a chosen stored run of the same scope; ``--baseline-file
    PATH``: with a baseline exported to a file (``evalkit baseline export``)."""
    from .names import RunId

    return option_group(
        click.option(
            "--baseline",
            metavar="RUN_ID",
            type=RunId(),
            help="compare with this stored run instead of the scope's accepted baseline (refused, exit 2, when it is of another scope)",
        ),
        click.option(
            "--baseline-file",
            metavar="PATH",
            help="compare with the baseline in this file (written by `evalkit baseline export`, e.g. committed to the "
            "repository) instead of the store's: CI without a shared database still gates. Refused (exit 2) when it "
            "was changed after export or is of another scope",
        ),
    )(function)


def report_option(function: Decorated | None = None, *, failing: str = "does not change the exit code") -> Any:
    """``--report FORMAT[:PATH]``, repeatable (checked when the command runs, before anything is
    called). ``failing`` says what a reporter that fails does to the command's exit code: nothing
    where the report sits beside a verdict (``run``), exit 3 where the reports are the command's job."""

    def decorate(function: Decorated) -> Decorated:
        return click.option(
            "--report",
            multiple=True,
            callback=listed,
            metavar="FORMAT[:PATH]",
            help="also write a report: junit, markdown, html, json or an installed reporter (see `evalkit list`); "
            'repeatable; PATH "-" is standard output; without a path markdown is appended to $GITHUB_STEP_SUMMARY '
            f"when set, other formats print. A failing reporter is named on stderr and {failing}",
        )(function)

    return decorate(function) if function is not None else decorate


def wait_options(flag: str, what: str) -> Callable[[Decorated], Decorated]:
    """The waiting flag (read as ``args.wait``), ``--timeout DURATION`` and ``--poll DURATION``.

    ``--timeout`` or ``--poll`` given without the flag is refused (a usage error naming both): it
    was ignored, so a verdict job that lost its ``--wait-for-shards`` answered the whole set itself
    instead of waiting, and ``evalkit run SET --timeout 30m`` bounded nothing."""
    options = option_group(
        click.option(flag, "wait", is_flag=True, help=what),
        click.option(
            "--timeout",
            default="30m",
            type=Duration(),
            metavar="DURATION",
            help="how long to wait: 90s, 30m, 2h (default 30m)",
        ),
        click.option(
            "--poll",
            default="5s",
            type=Duration(),
            metavar="DURATION",
            help="how often to look at the store while waiting (default 5s)",
        ),
    )

    def decorate(function: Decorated) -> Decorated:
        @functools.wraps(function)
        def checked(**params: Any) -> Any:
            from click.core import ParameterSource

            ctx = click.get_current_context(silent=True)
            if ctx is not None and not params.get("wait"):
                given = [
                    f"--{name}" for name in ("timeout", "poll")
                    if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)
                ]  # fmt: skip
                if given:
                    raise click.UsageError(
                        f"{' and '.join(given)} only {'say' if len(given) > 1 else 'says'} how {flag} waits, and "
                        f"{flag} is not given: nothing would wait; add {flag}, or leave {' and '.join(given)} out",
                        ctx,
                    )
            return function(**params)

        return options(checked)  # type: ignore[return-value]

    return decorate


def placement_options(*, resume: str, scope: str) -> Callable[[Decorated], Decorated]:
    """``--resume [RUN_ID]``, ``--shard I/N|auto``, ``--run-id ID`` and ``--wait-for-shards`` (with
    its ``--timeout`` and ``--poll``): the same for ``evalkit run`` and ``evalkit retrieval``.
    ``resume`` is what ``--resume`` does; ``scope`` names what a derived run id is made of."""
    from .names import RunId

    return option_group(
        # given alone, --resume is "" (the newest unfinished run); not given, None; see resume_value
        click.option(
            "--resume", is_flag=False, flag_value=RESUME_ALONE, default=None, type=RunId(), callback=resume_value,
            metavar="[RUN_ID]", help=resume,
        ),
        click.option(
            "--shard", metavar="I/N", callback=shard_value,
            help="answer only slice I of N deterministic slices of the set; auto: from the CI's parallel-job variables "
            "(GitLab CI_NODE_INDEX/CI_NODE_TOTAL, CircleCI CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL, Buildkite "
            "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT) or job array (Slurm SLURM_ARRAY_TASK_ID/"
            "SLURM_ARRAY_TASK_COUNT; Kubernetes JOB_COMPLETION_INDEX and AWS Batch AWS_BATCH_JOB_ARRAY_INDEX, "
            "with auto/N or EVALKIT_SHARD_COUNT for N). A shared store only: SQLite is refused unless --database names it",
        ),
        click.option(
            "--run-id", metavar="ID", callback=run_id_value,
            help="the run's id; an existing run of that id is joined (shards). With --shard or --wait-for-shards it "
            "defaults to one derived from the CI pipeline id (GitLab, GitHub Actions, CircleCI, Buildkite) and the "
            f"{scope}",
        ),
        wait_options(
            "--wait-for-shards",
            "answer nothing: wait until every shard of the run is in, then print its verdict, write the reports "
            "and exit with its code (the final job of a sharded CI run)",
        ),
    )  # fmt: skip
