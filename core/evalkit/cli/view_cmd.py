"""``evalkit view``: browse the results store in a local web page (read only).

The handler only checks the options and hands over to :mod:`evalkit.view` (the app factory and
the server); the web stack is imported when the command runs, and its absence is a usage error
naming the extra to install.
"""

from __future__ import annotations

import argparse
import os
import sys

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

from .common import add_store_options

#: The environment variable a token can be given in instead of --token (kept out of `ps`).
TOKEN_ENV = "EVALKIT_VIEW_TOKEN"


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5 and int(text) <= 65535):
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535 (0: a free one), got {text[:20]!r}")
    return int(text)


def register(subparsers: Any) -> None:
    """Add the ``view`` command."""
    parser = subparsers.add_parser(
        "view",
        help="browse the results store in a local web page (read only)",
        description=(
            "Serve a read-only web viewer over the results store: the sets and their trends, each run's cases with "
            "prompt, reference and answer (the baseline's answer beside a regressed or edited one), filters, "
            "search, and comparisons of any two runs of a set. It binds 127.0.0.1 unless --host says otherwise; "
            f"any other host needs --token (or ${TOKEN_ENV}). Needs the view extra: "
            'pip install "evalkit-golden[view]".'
        ),
    )
    parser.add_argument("--port", type=_port, default=8765, help="port to listen on (default 8765; 0: a free one, printed)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    parser.add_argument("--open", action="store_true", help="open the viewer in the default browser")
    parser.add_argument("--token", help=f"require this token on every request (default ${TOKEN_ENV}; required with another --host)")
    add_store_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Check the options, then serve until Ctrl-C (exit 0); 2 without the extra or for bad options."""
    from ..errors import UsageError
    from ..view import MISSING_EXTRA, missing_modules

    missing = missing_modules()
    if missing:
        raise UsageError(f"{MISSING_EXTRA} (missing: {', '.join(missing)})")
    from ..config import load_config
    from ..view.server import ServeOptions, is_loopback, serve
    from .common import database_url
    from .stdout import stdout
    from .stored import require_existing_store

    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    if token is not None and not token.strip():
        raise UsageError("--token is empty: give a token someone could not guess (say, `openssl rand -hex 16`)")
    if not is_loopback(args.host):
        if token is None:
            raise UsageError(
                f"--host {args.host} lets other machines connect: give --token TOKEN (or ${TOKEN_ENV}) so only those "
                "who have it can read the store"
            )
        print(
            f"evalkit view: warning: serving on {args.host}, reachable from other machines; every request must carry the token",
            file=sys.stderr,
        )
    config = load_config(args.config)
    url = database_url(args, config)
    require_existing_store(url, config, args.database)
    options = ServeOptions(url, host=args.host, port=args.port, token=token, open_browser=args.open, config=config, output=stdout())
    return serve(options)
