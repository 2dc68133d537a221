"""``evalkit completion bash|zsh|fish``: click's shell completion script for evalkit, and the
answer to the script's requests for candidates.

The script is click's: on Tab it runs ``evalkit`` with ``_EVALKIT_COMPLETE=SHELL_complete`` and
the words typed so far, and :func:`answer_completion_request` prints the candidates — commands
and options from the command tree, set identifiers, provider instances, graders, retrievers,
deployments and run ids from what is installed, configured and stored where the user completes
(:mod:`evalkit.cli.names`).
"""

from __future__ import annotations

import contextlib

import click

from .app import Arguments, EvalkitCommand, arguments
from .params import Choice, global_options

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

SHELLS = ("bash", "zsh", "fish")


@click.command(
    "completion",
    cls=EvalkitCommand,
    help=(
        "Print a completion script for SHELL. Install it with, for example: "
        "`evalkit completion bash > ~/.local/share/bash-completion/completions/evalkit`, "
        "`evalkit completion zsh > \"${fpath[1]}/_evalkit\"` or "
        "`evalkit completion fish > ~/.config/fish/completions/evalkit.fish` (or evaluate it in the shell's startup "
        "file: `eval \"$(evalkit completion bash)\"`). Set, provider, grader, retriever and deployment names and run "
        "ids are completed from the installed plugins, the configuration and the results store found where you "
        "complete."
    ),
)
@click.argument("shell", required=False, type=Choice(SHELLS), metavar="SHELL", help="bash, zsh or fish")
@global_options(config=None, database=None)
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit completion``."""
    return arguments(handle, params)


def handle(args: Arguments) -> int:
    """Print click's script for the shell."""
    from click.shell_completion import get_completion_class

    from . import COMPLETE_VAR
    from .app import evalkit
    from .stdout import stdout

    if not args.shell:
        from ..errors import UsageError

        raise UsageError("name a shell: evalkit completion bash, evalkit completion zsh or evalkit completion fish")
    completion = get_completion_class(args.shell)
    assert completion is not None
    stdout().write(completion(evalkit, {}, "evalkit", COMPLETE_VAR).source())
    return 0


def answer_completion_request(instruction: str) -> int:
    """Answer the completion script's request (``instruction``: ``bash_complete``,
    ``zsh_complete``, …; ``bash_source`` prints the script): the candidates on standard output and
    nothing else. Standard error is discarded meanwhile — a plugin's warning or a traceback must
    never land on the user's prompt — and a failure offers nothing (exit 1)."""
    from click.shell_completion import shell_complete

    from . import COMPLETE_VAR
    from .app import evalkit

    with _stderr_discarded():
        try:
            return shell_complete(evalkit, {}, "evalkit", COMPLETE_VAR, instruction)
        except BaseException:  # noqa: BLE001 - a plugin's failure (or sys.exit, or Ctrl-C) must not reach the shell
            return 1


@contextlib.contextmanager
def _stderr_discarded() -> Iterator[None]:
    """File descriptor 2 and ``sys.stderr`` on ``/dev/null`` while inside."""
    import os
    import sys

    sys.stderr.flush()
    saved, nothing = os.dup(2), open(os.devnull, "w")  # noqa: SIM115 - closed below
    stream = sys.stderr
    os.dup2(nothing.fileno(), 2)
    sys.stderr = nothing
    try:
        yield
    finally:
        sys.stderr = stream
        os.dup2(saved, 2)
        os.close(saved)
        nothing.close()
