"""Saying what is wrong with a command line: the one place a usage error is printed (exit 2).

click raises the error (an unknown option or command, a missing or bad value); this prints it as
evalkit prints every error — the command's usage, then ``evalkit COMMAND: error: …`` — with the
suggestion click found (``Did you mean "--provider"?``), the hint a missing SET or RUN_ID carries
(the sets installed here, where run ids are listed), and, for an option given before the command
that belongs after it, which commands take it. The words quoted back come from the command line
(a pasted escape sequence, a NUL): control characters are shown as escapes, long lines cut.
"""

from __future__ import annotations

import click

from ..wording import quoted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["usage_failed"]


def usage_failed(exc: click.UsageError, argv: Sequence[str]) -> int:
    """Print ``exc`` on stderr (see the module), recorded for ``--json``'s error object
    (:mod:`evalkit.cli.error_json`); the exit code, 2."""
    from . import error_json
    from .console import console

    ctx = exc.ctx
    lines = []
    if ctx is not None:
        lines += [ctx.get_usage(), f"Try '{ctx.command_path} --help' for help.", ""]
    where = ctx.command_path if ctx is not None else "evalkit"
    lines.append(f"{where}: error: {_message(exc, argv)}")
    console(stderr=True).message("\n".join(line.rstrip() for line in "\n".join(lines).split("\n")))
    error_json.said(lines[-1])
    return 2


def _message(exc: click.UsageError, argv: Sequence[str]) -> str:
    """What is wrong, with the close names click found (the nearest of them, in evalkit's words),
    or the hint that fits better."""
    from ..wording import did_you_mean

    if isinstance(exc, click.NoSuchOption):
        if exc.ctx is not None and exc.ctx.parent is None and exc.option_name.startswith("-"):
            return exc.message + _misplaced_hint(exc.ctx, exc.option_name, argv)
        return exc.message + did_you_mean(exc.option_name, exc.possibilities or ())
    if isinstance(exc, click.NoSuchCommand):
        return exc.message + did_you_mean(exc.command_name, exc.possibilities or ())
    return exc.format_message()


def _misplaced_hint(root: click.Context, option: str, argv: Sequence[str]) -> str:
    """Why an option before the command failed: it is a command's option (they go after the
    command), or no option at all (with the nearest ones)."""
    from ..wording import close_matches

    command = _command_word(root, argv)
    owners = _commands_taking(root, option)
    if owners:
        takers = " and ".join(f'"evalkit {name}"' for name in owners)
        where = next((name for name in owners if name.split()[0] == command), owners[0])
        return f'\n{option} is an option of {takers}, not of evalkit itself: put it after the command ("evalkit {where} … {option}")'
    found = close_matches(option, _all_options(root, command))
    if not found:
        return f"\nno command takes the option {option} (see evalkit --help, or evalkit {command or 'COMMAND'} --help)"
    hints = []
    for name in found:
        takers = _commands_taking(root, name)
        hints.append(quoted(name) + (f" (an option of {' and '.join(f'evalkit {t}' for t in takers)}, after the command)" if takers else ""))
    return f"\nunknown option {option} before the command. Did you mean {' or '.join(hints)}?"


def _command_word(root: click.Context, argv: Sequence[str]) -> str | None:
    """The first word of ``argv`` that names a command, not counting the values of ``--config``
    and ``--database`` (``evalkit --config run show RUN`` names ``show``)."""
    group = root.command
    assert isinstance(group, click.Group)
    names = set(group.list_commands(root))
    valued = False
    for token in argv:
        if valued:
            valued = False
        elif token in ("--config", "--database"):
            valued = True
        elif token in names:
            return token
    return None


def _options_of(command: click.Command, ctx: click.Context) -> list[str]:
    return [name for param in command.get_params(ctx) if isinstance(param, click.Option) for name in (*param.opts, *param.secondary_opts)]


def _subcommands(root: click.Context, prefix: str = "", group: click.Group | None = None) -> list[tuple[str, click.Command]]:
    """Every command below ``group`` (the root's by default), as (``db prune``, command)."""
    group = group or root.command  # type: ignore[assignment]
    assert isinstance(group, click.Group)
    found = []
    for name in group.list_commands(root):
        command = group.get_command(root, name)
        if command is None:
            continue
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _subcommands(root, f"{prefix}{name} ", command)
    return found


def _commands_taking(root: click.Context, option: str) -> list[str]:
    """The commands (``db prune`` for a subcommand's) that take ``option``; none when evalkit
    itself takes it, before any command."""
    if option in _options_of(root.command, root):
        return []
    return [path for path, command in _subcommands(root) if option in _options_of(command, root)]


def _all_options(root: click.Context, command: str | None) -> list[str]:
    """evalkit's own options and those of ``command`` (and its subcommands), or of every command
    when the command line names none: `evalkit --tolerance run` must not suggest another
    command's ``--older-than``."""
    found = _options_of(root.command, root)
    for path, sub in _subcommands(root):
        if command is None or path.split()[0] == command:
            found += _options_of(sub, root)
    return found
