"""``evalkit schema golden-set|question-set``: print the JSON Schema of set files, for editors and CI."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, arguments
from .params import Choice, global_options
from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMAS = ("golden-set", "question-set")


@click.command(
    "schema",
    cls=EvalkitCommand,
    help=(
        "Print the JSON Schema (draft 2020-12) that set files are checked against. The same files ship in "
        "the package (evalkit/schemas/*.schema.json); point your editor's YAML or JSON support at them."
    ),
)
@click.argument("kind", type=Choice(SCHEMAS), metavar="{golden-set,question-set}", help="which file format")
@global_options(config=None, database=None)
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit schema``."""
    return arguments(handle, params)


def handle(args: Arguments) -> int:
    """Print the schema file."""
    from ..setfiles.schemas import schema_text

    stdout().write(schema_text(args.kind))
    return 0
