"""``evalkit view``: browse the results store in a local web page (read only).

The handler only checks the options and hands over to :mod:`evalkit.view` (the app factory and
the server); the web stack is imported when the command runs, and its absence is a usage error
naming the extra to install. What it prints passes the console: the address line on standard
output (flushed at once: a caller waits for it), the warning for another ``--host`` on standard error.
"""

from __future__ import annotations

import click

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .app import Arguments, EvalkitCommand, arguments
from .params import store_options

#: The environment variable a token can be given in instead of --token (kept out of `ps`).
TOKEN_ENV = "EVALKIT_VIEW_TOKEN"


class Port(click.ParamType):
    """A TCP port number from 0 (a free one) to 65535, refused at once otherwise."""

    name = "port"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """``value`` as an int, or a usage error quoting (the start of) it."""
        if isinstance(value, int):
            return value
        from ..shapes import whole_number

        text = str(value)
        port = whole_number(text, max_digits=5)
        if port is None or port > 65535:
            self.fail(f"must be a port number from 0 to 65535 (0: a free one), got {text[:20]!r}", param, ctx)
        return port


@click.command(
    "view",
    cls=EvalkitCommand,
    help=(
        "Serve a read-only web viewer over the results store: the sets and their trends, each run's cases with "
        "prompt, reference and answer (the baseline's answer beside a regressed or edited one), filters, "
        "search, and comparisons of any two runs of a set. It binds 127.0.0.1 unless --host says otherwise; "
        f"any other host needs --token (or ${TOKEN_ENV}). Needs the view extra: "
        'pip install "evalkit-golden[view]".'
    ),
)
@click.option(
    "--port", type=Port(), default=8765, metavar="N", help="port to listen on (default 8765; 0: a free one, printed)"
)
@click.option(
    "--host", default="127.0.0.1", metavar="HOST", help="address to bind (default 127.0.0.1, this machine only)"
)
@click.option("--open", "open_browser", is_flag=True, help="open the viewer in the default browser")
@click.option(
    "--token",
    metavar="TOKEN",
    help=f"require this token on every request (default ${TOKEN_ENV}; required with another --host)",
)
@store_options
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit view``."""
    return arguments(handle, params)


def _announce(text: str) -> None:
    """One line for people on standard output, written now: the address is what a caller waits for."""
    from .console import console
    from .stdout import stdout

    console().plain(text)
    stdout().flush()


def _warn(text: str) -> None:
    """One line for people on standard error."""
    from .console import console

    console(stderr=True).message(text)


def handle(args: Arguments) -> int:
    """Check the options, then serve until Ctrl-C (exit 0); 2 without the extra or for bad options."""
    from ..errors import UsageError
    from ..view import MISSING_EXTRA, missing_modules

    missing = missing_modules()
    if missing:
        raise UsageError(f"{MISSING_EXTRA} (missing: {', '.join(missing)})")
    from ..config import load_config
    from ..environment import variable
    from ..view.server import ServeOptions, is_loopback, serve
    from ..wording import word_named
    from .common import database_url
    from .resuming import store_words
    from .stored import require_existing_store

    token = (
        args.token
        if args.token is not None
        else variable(TOKEN_ENV, "a token someone could not guess", "serve without one")
    )
    if token is not None and not token.strip():
        raise UsageError("--token is empty: give a token someone could not guess (say, `openssl rand -hex 16`)")
    if not is_loopback(args.host):
        if token is None:
            raise UsageError(
                f"--host {word_named(args.host)} lets other machines connect: give --token TOKEN (or ${TOKEN_ENV}) so only those "
                "who have it can read the store"
            )
        _warn(
            f"evalkit view: warning: serving on {word_named(args.host)}, reachable from other machines; every request must carry the token"
        )
    config = load_config(args.config)
    url = database_url(args, config)
    require_existing_store(url, config, args.database)
    options = ServeOptions(
        url,
        host=args.host,
        port=args.port,
        token=token,
        open_browser=args.open_browser,
        config=config,
        announce=_announce,
        warn=_warn,
        store_options=store_words(args),
    )
    return serve(options)
