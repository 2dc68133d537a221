"""``evalkit schema golden-set|question-set``: print the JSON Schema of set files, for editors and CI."""

from __future__ import annotations

import argparse

from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMAS = ("golden-set", "question-set")


def register(subparsers: Any) -> None:
    """Add the ``schema`` command."""
    parser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of golden-set or question-set files",
        description=(
            "Print the JSON Schema (draft 2020-12) that set files are checked against. The same files ship in "
            "the package (evalkit/schemas/*.schema.json); point your editor's YAML or JSON support at them."
        ),
    )
    parser.add_argument("kind", choices=SCHEMAS, help="which file format")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Print the schema file."""
    from ..setfiles.schemas import schema_text

    stdout().write(schema_text(args.kind))
    return 0
