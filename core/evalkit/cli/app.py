"""The ``evalkit`` command tree on click.

The root group imports a command's module only when that command is asked for (click's
"lazily loading subcommands" pattern): ``evalkit --help`` lists the commands from
:data:`COMMANDS` and ``evalkit list`` imports ``list_cmd`` alone. What every command shares:

- ``-h``/``--help``; help and the version are raised as :class:`Printed` for
  :func:`evalkit.cli.main` to print, so a full disk or a closed pipe is reported as for any output;
- a unique prefix of a long option taken for the option (``--trace`` for ``--traceback``), as
  argparse took it before evalkit moved to click;
- ``--config``, ``--database``, ``--json`` and ``--traceback`` before or after the command
  (:func:`arguments` merges the two places);
- a mistyped command answered with click's "did you mean" (:meth:`Evalkit.resolve_command`).

A command's callback does not run the command: it returns the :class:`Arguments` its handler
takes, and :func:`evalkit.cli.main` runs the handler (plugin output to stderr, errors and exit
codes), so a handler reads ``args.set`` and ``args.json`` as it did under argparse.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from click.shell_completion import CompletionItem

from .params import global_options

__all__ = ["COMMANDS", "Arguments", "EvalkitCommand", "EvalkitGroup", "Printed", "arguments", "evalkit", "given_twice"]

#: Every command: its name, the module (in this package) whose ``command`` it is, and its line of
#: help in ``evalkit --help`` (listed from here: listing a command must not import it).
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run_cmd", "run a golden prompt set against a generator and flag regressions"),
    "retrieval": ("retrieval_cmd", "measure a retriever against a golden question set and flag regressions"),
    "list": ("list_cmd", "list installed plugins, or the golden sets they ship"),
    "models": ("models_cmd", "rank the configured provider instances by measured quality"),
    "history": ("history_cmd", "list the stored runs of a set, newest first, with a pass-rate trend per series"),
    "show": ("show_cmd", "show one stored run with its cases and checks"),
    "compare": ("compare_cmd", "compare two stored runs of one set, case by case"),
    "db": ("db_cmd", "upgrade the results database schema, show its version, prune old runs"),
    "validate": ("validate_cmd", "check set files and installed sets without running them (exit 0 or 2)"),
    "schema": ("schema_cmd", "print the JSON Schema of golden-set, question-set or calibration-set files"),
    "init": ("init_cmd", "write a starter evalkit.toml, an example set file and recorded answers"),
    "import": ("import_cmd", "turn recorded traces into a set file and recorded answers to review"),
    "report": (
        "report_cmd",
        "render a stored run as HTML, JUnit XML, Markdown or JSON (optionally waiting for its shards)",
    ),
    "regrade": ("regrade_cmd", "grade a stored run's answers again with the current checks, without asking the model"),
    "cache": ("cache_cmd", "inspect or empty the answer cache of evalkit run --cache"),
    "baseline": ("baseline_cmd", "accept a run as the baseline of its scope, show the current baselines, or export one to a file"),
    "completion": ("shell_completion", "print a shell completion script (bash, zsh or fish)"),
    "flaky": ("flaky_cmd", "list the flaky cases of a set: outcomes that flip between runs or disagree among repeats"),
    "plan": ("plan_cmd", "say what a run of a set would ask and could detect, before anything is called"),
    "judge": ("judge_cmd", "measure a judge against people's labels (calibration sets)"),
    "view": ("view_cmd", "browse the results store in a local web page (read only)"),
}

#: The options taken before a command as well as after it (see :func:`global_options`).
GLOBAL_OPTIONS = ("config", "database", "json", "traceback")

EPILOG = """\b
exit codes: 0 done · 1 gate failed (regression, or not comparable under --fail-on-regression)
            2 bad usage or invalid input (nothing called, nothing stored) · 3 the run could not complete
            (or the output could not be written: a full disk)"""

#: What click's help option says (argparse's words, kept).
HELP_HELP = "show this help message and exit"
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 120}


class Printed(Exception):
    """The command line asked for text instead of a command — help, the version — with the exit
    code to end with (2 for a group named without its subcommand); :func:`evalkit.cli.main`
    prints it (on standard error when ``stderr``)."""

    def __init__(self, text: str, code: int = 0, *, stderr: bool = False) -> None:
        super().__init__(text)
        self.text, self.code, self.stderr = text, code, stderr


class Arguments(SimpleNamespace):
    """What a command line asked for, as its handler reads it: every parameter of the command by
    name (``args.set``, ``args.json``; the global options merged from before and after the
    command), the ``handler`` to call with it, ``collects_garbage_from_run_start``, and the
    third-party stores the command opened."""

    handler: Callable[[Arguments], int]
    collects_garbage_from_run_start: bool = False
    #: The third-party stores the command opened (:func:`evalkit.cli.stored.opened_for`): what
    #: raised through one of them is said as that store's failure.
    opened_stores: list[Any]
    #: The command's declared options (click's), in order: what a line that continues a run reads
    #: to repeat every option given (:func:`evalkit.cli.resuming.given_options`).
    declared_options: tuple[Any, ...] = ()

    def __init__(self, **params: Any) -> None:
        """The parameters by name; ``opened_stores`` starts empty unless given (a command run
        again per provider shares its list)."""
        params.setdefault("opened_stores", [])
        super().__init__(**params)


def arguments(handler: Callable[[Arguments], int], params: dict[str, Any], **extra: Any) -> Arguments:
    """The :class:`Arguments` for ``handler`` from the running command's ``params`` (its callback's
    keyword arguments), with the global options merged (:func:`merged_global_options`) and the
    command's declared options (:attr:`Arguments.declared_options`)."""
    ctx = click.get_current_context()
    declared = tuple(param for param in ctx.command.params if isinstance(param, click.Option))
    return Arguments(**{**params, **merged_global_options(ctx)}, handler=handler, declared_options=declared, **extra)


def merged_global_options(ctx: click.Context) -> dict[str, Any]:
    """``config``, ``database``, ``json`` and ``traceback`` as given before the command (on a
    group) and after it: either place, or both when both say the same; a usage error when they
    differ, and for ``--json`` before a command that prints no JSON document."""
    lineage = []
    current: click.Context | None = ctx
    while current is not None:
        lineage.insert(0, current)
        current = current.parent
    merged: dict[str, Any] = {}
    for name in GLOBAL_OPTIONS:
        given = [level.params[name] for level in lineage if name in level.params]
        early = given[0] if given else None
        for late in given[1:]:
            if late is None or late is False:  # not given at this level (an empty text is given: it is refused later)
                continue
            if early is not None and early is not False and early is not True and early != late:
                raise click.UsageError(given_twice(f"--{name}", early, late), ctx)
            early = late
        merged[name] = early
    if merged["json"] and "json" not in ctx.params:
        raise click.UsageError(f"--json does not apply to `{ctx.command_path}`: it prints no JSON document", ctx)
    return merged


def _help_asked(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        raise Printed(ctx.get_help())


def _version_asked(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from .. import __version__

        raise Printed(f"evalkit {__version__}")


def _takes_value(option: click.Option, following: Sequence[str]) -> bool:
    """Whether ``option`` takes the next argument as its value (an optional value only when the
    next argument does not look like an option, as click decides)."""
    if option.is_flag or option.count:
        return False
    if option._flag_needs_value:  # an optional value: --resume [RUN_ID]
        return bool(following) and not (following[0].startswith("-") and len(following[0]) > 1)
    return True


def unabbreviated(command: click.Command, ctx: click.Context, args: Sequence[str]) -> list[str]:
    """``args`` with each unique prefix of one of ``command``'s long options written out
    (``--trace`` → ``--traceback``, ``--data=x`` → ``--database=x``): argparse took those, and
    scripts written for it may use them. An ambiguous prefix is a usage error naming the options
    it could be; a group's arguments from its subcommand on are left to the subcommand."""
    options = {
        name: param
        for param in command.get_params(ctx)
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    out: list[str] = []
    seen: dict[str, str] = {}  # each single-valued option's value as given
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            out += [token, *args[index:]]
            break
        if not token.startswith("-") or len(token) == 1:
            out.append(token)
            if isinstance(command, click.Group):  # the subcommand: the rest is its own
                out += args[index:]
                break
            continue
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in options and name.startswith("--") and len(name) > 2:  # "--=x" abbreviates nothing
            matches = [option for option in options if option.startswith(name) and option.startswith("--")]
            if len(matches) == 1:
                name = matches[0]
            elif len(matches) > 1 and not ctx.resilient_parsing:
                raise click.UsageError(_ambiguous(name, matches), ctx)
        out.append(name + equals + value)
        option = options.get(name)
        given: str | None = value if equals else None
        if option is not None and not equals and _takes_value(option, args[index:]):
            out += args[index : index + 1]
            given = args[index] if index < len(args) else None
            index += 1
        if option is not None and given is not None and _single_valued(option):
            _refuse_a_second_value(option, name, given, seen, ctx)
    return out


def _ambiguous(name: str, matches: Sequence[str]) -> str:
    """The usage error of an option prefix ``name`` that begins several of the command's options:
    the word given quoted, as every usage error quotes what the user typed, and the options it
    could be. Raised as a plain usage error, not as click's "no such option" — that one's hints
    (``Did you mean``, an option of another command) said the options did not exist."""
    from ..wording import quoted

    could_be = ", ".join(matches[:-1]) + " or " + matches[-1]
    return f"option {quoted(name)} is ambiguous: it could be {could_be}; write more of its name"


def _single_valued(option: click.Option) -> bool:
    """Whether ``option`` holds one value that a second one given would silently replace."""
    return not (option.is_flag or option.count or option.multiple)


def _refuse_a_second_value(
    option: click.Option, name: str, value: str, seen: dict[str, str], ctx: click.Context
) -> None:
    """Remember ``value`` for ``option`` (given as ``name``); a usage error when it was given
    before with another value: click keeps the last, so `--privacy metadata … --privacy full`
    stored whole answers, and `run --config a.toml --config b.toml` read b.toml unsaid."""
    key = option.name or option.opts[0]
    earlier = seen.setdefault(key, value)
    if earlier != value and not ctx.resilient_parsing:
        raise click.UsageError(given_twice(name, earlier, value), ctx)


def given_twice(option: str, earlier: object, later: object) -> str:
    """The one usage error of a single-valued option given twice with different values, wherever
    the two stand (both after the command, or one before it and one after): ``--privacy is given
    twice with different values ("metadata" and "full"); give it once``. Each value is quoted as
    given, a ``--database`` URL with its passwords as ``***`` (:func:`evalkit.storage.urls.hide_password`)."""
    from ..wording import quoted

    def shown(value: object) -> str:
        if option == "--database":
            from ..storage.urls import hide_password

            return quoted(hide_password(f"{value}"))
        return quoted(value)

    return f"{option} is given twice with different values ({shown(earlier)} and {shown(later)}); give it once"


class _Shared:
    """What evalkit's commands and groups add to click's."""

    def add_reference_text(self) -> None:
        """Append to the help what the CLI reference (docs/cli.md, made by mkdocs-click) shows
        below the description and ``--help`` shows elsewhere: the positional arguments and the
        epilog, in Markdown, after click's ``\\f`` (``--help`` stops at it; mkdocs-click renders a
        command's help but neither its arguments nor its epilog)."""
        command: click.Command = self  # type: ignore[assignment]
        documented = [param for param in command.params if isinstance(param, click.Argument) and param.help]
        parts = []
        if documented:
            parts.append(
                "**Arguments:**\n\n"
                + "\n".join(f"- `{param.human_readable_name}`: {param.help}" for param in documented)
            )
        if command.epilog:
            epilog = command.epilog
            parts.append(
                f"```text\n{epilog.removeprefix(chr(8) + chr(10))}\n```" if epilog.startswith("\b\n") else epilog
            )
        if parts:
            command.help = f"{command.help or ''}\n\f\n" + "\n\n".join(parts)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        """click's help option, raising :class:`Printed` instead of printing (see the module)."""
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.callback, option.help = _help_asked, HELP_HELP
        return option

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """click's, after :func:`unabbreviated`; a usage error its parser raised without a context
        (``Option '--label' requires an argument.``) gets this command's, for its usage line."""
        try:
            return super().parse_args(ctx, unabbreviated(self, ctx, args))  # type: ignore[misc, arg-type]
        except click.UsageError as exc:
            if exc.ctx is None:
                exc.ctx = ctx
            raise


class EvalkitCommand(_Shared, click.Command):
    """An evalkit command (see the module for what it adds to click's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)
        self.add_reference_text()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """As :class:`_Shared`'s, naming each word left over quoted: click joins them with spaces in
        parentheses, so an empty one (``evalkit view ""``) read ``Got unexpected extra argument ()``."""
        allowed = ctx.allow_extra_args
        ctx.allow_extra_args = True
        try:
            rest = super().parse_args(ctx, args)
        finally:
            ctx.allow_extra_args = allowed
        if ctx.args and not allowed and not ctx.resilient_parsing:
            from ..wording import quoted

            words = " ".join(quoted(word) for word in ctx.args)
            raise click.UsageError(f"unexpected extra argument{'s' if len(ctx.args) > 1 else ''} {words}", ctx)
        return rest


class EvalkitGroup(_Shared, click.Group):
    """A group of evalkit commands (``db``, ``baseline``, ``models``), named without a subcommand:
    its help, exit 2."""

    command_class = EvalkitCommand

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        kwargs.setdefault("invoke_without_command", True)
        super().__init__(*args, **kwargs)
        self.add_reference_text()


def group_without_command(*, stderr: bool = False) -> None:
    """In a group's callback: when no subcommand follows, its help (exit 2), once the global
    options given before it are checked (``evalkit --json models`` is refused as for a command)."""
    ctx = click.get_current_context()
    if ctx.invoked_subcommand is None:
        merged_global_options(ctx)
        raise Printed(ctx.get_help(), 2, stderr=stderr)


class Evalkit(EvalkitGroup):
    """The root group: commands loaded lazily from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands, in the order ``evalkit --help`` lists them."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported now; ``None`` for no such command."""
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        from importlib import import_module

        command: click.Command = import_module(f"{__package__}.{entry[0]}").command
        command.short_help = command.short_help or entry[1]
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with every command (imported or not) among the possibilities of a mistyped one."""
        try:
            return super().resolve_command(ctx, args)
        except click.NoSuchCommand as exc:
            raise click.NoSuchCommand(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their lines of help, from :data:`COMMANDS` (nothing imported)."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, line) for name, (_, line) in COMMANDS.items()])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The commands starting with ``incomplete`` (nothing imported), or the root's options."""
        from click.shell_completion import CompletionItem

        found = [CompletionItem(name, help=line) for name, (_, line) in COMMANDS.items() if name.startswith(incomplete)]
        return found + click.Command.shell_complete(self, ctx, incomplete)

    def parse(self, argv: Sequence[str]) -> Arguments:
        """The :class:`Arguments` of the command ``argv`` names. Raises :class:`Printed` (help, the
        version), click's usage errors, and :class:`click.Abort` for an interrupt."""
        found = click.Group.main(self, list(argv), prog_name="evalkit", standalone_mode=False)
        assert isinstance(found, Arguments), found
        return found

    def main(self, args: Sequence[str] | None = None, *unused: Any, standalone_mode: bool = True, **extra: Any) -> Any:  # type: ignore[override]
        """``evalkit ARGS`` as the console script runs it (:func:`evalkit.cli.main`), for callers
        of click's entry point — ``CliRunner().invoke(evalkit, ARGS)`` — with its exit code (as
        ``SystemExit`` in click's standalone mode, as click does)."""
        from . import main

        code = main(sys.argv[1:] if args is None else args)
        if standalone_mode:
            sys.exit(code)
        return code


@click.group(
    "evalkit",
    cls=Evalkit,
    help="Evaluate LLM answers and retrieval against golden sets, store every run, flag regressions.",
    epilog=EPILOG,
    subcommand_metavar="COMMAND [ARGS]...",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version_asked,
    help="show program's version number and exit",
)
@global_options(
    database="results database URL (default: <project root>/.evalkit/results.db)",
    json="print one JSON document, for commands that can",
)
def evalkit(**params: Any) -> None:
    """The root: its options are merged into the command's (:func:`arguments`)."""
    ctx = click.get_current_context()
    if ctx.invoked_subcommand is None:
        raise Printed(ctx.get_help(), 2)
