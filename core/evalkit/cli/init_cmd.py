"""``evalkit init``: a starter configuration, an example set file and recorded answers that run green."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, arguments
from .params import global_options, non_empty

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Package file → where it goes in the project.
STARTER_FILES = (
    ("evalkit.toml", "evalkit.toml"),
    ("example.yaml", "evals/example.yaml"),
    ("example-answers.jsonl", "recorded/example-answers.jsonl"),
)
NEXT_COMMANDS = (
    ("evalkit validate", "check the set files"),
    ("evalkit run starter.faq --provider recorded", "answer, grade and store the example set"),
    ("evalkit history starter.faq", "the stored runs of the set"),
)


@click.command(
    "init",
    cls=EvalkitCommand,
    help=(
        "Write evalkit.toml, evals/example.yaml and recorded/example-answers.jsonl into DIR (default: the "
        "current directory): a golden set in a file and a replay provider that answers it, so that "
        "`evalkit run starter.faq --provider recorded` passes. Existing files are never overwritten."
    ),
)
@click.argument(
    "directory",
    required=False,
    default=".",
    metavar="[DIR]",
    callback=non_empty("a folder"),
    help="the project folder (default: .)",
)
@global_options(config=None, database=None)
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit init``."""
    return arguments(handle, params)


def handle(args: Arguments) -> int:
    """Refuse if any starter file exists, else write them all and print the next commands."""
    import contextlib
    from importlib import resources
    from pathlib import Path

    from ..errors import UsageError, write_failed
    from ..textfiles import output_refusal
    from ..wording import path_named

    root = Path(args.directory)
    targets = [(source, root / target) for source, target in STARTER_FILES]
    starter = resources.files("evalkit.starter")
    written: list[Path] = []
    made: list[Path] = []  # folders init made, outermost first
    try:
        if root.exists() and not root.is_dir():
            raise UsageError(f"evalkit init writes into a folder, and {path_named(root)} is not one")
        dangling = [path_named(path) for _, path in targets if path.is_symlink() and not path.exists()]
        if dangling:  # open(path, "x") would fail with a bare "File exists" for a link to nothing
            one = len(dangling) == 1
            raise UsageError(
                f"evalkit init writes nothing: {', '.join(dangling)} {'is a link' if one else 'are links'} "
                f"to a missing file; remove {'it' if one else 'them'} or choose another DIR"
            )
        existing = [path_named(path) for _, path in targets if path.exists()]
        if existing:
            one = len(existing) == 1
            raise UsageError(
                f"evalkit init writes nothing: {', '.join(existing)} already {'exists' if one else 'exist'}; "
                f"move {'it' if one else 'them'} away or choose another DIR"
            )
        for _, path in targets:  # `recorded` a file: "cannot write into .: File exists", evals/ left made
            if (refusal := output_refusal(path)) is not None:
                in_the_way = any(folder.exists() and not folder.is_dir() for folder in path.parents)
                advice = "move the file away or choose another DIR" if in_the_way else "choose another DIR"
                raise UsageError(f"evalkit init writes nothing: {path_named(path)} {refusal}; {advice}")
        for source, path in targets:
            made.extend(reversed([folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]))
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as fh:
                written.append(path)
                fh.write(starter.joinpath(source).read_text(encoding="utf-8"))
    except OSError as exc:  # a name too long, DIR unwritable, a full disk: nothing is left half-written
        for path in written:
            path.unlink(missing_ok=True)
        for folder in reversed(made):  # the folders it made, deepest first: they hold nothing now
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise write_failed(f"evalkit init cannot write into {path_named(root)}: {exc.strerror}", exc) from None
    from .console import console

    out = console()
    for _, path in targets:
        out.plain(f"wrote {path_named(path)}")
    out.plain("")
    out.plain("Next:" if root == Path(".") else f"Next, in {path_named(root)}:")
    width = max(len(command) for command, _ in NEXT_COMMANDS)
    for command, why in NEXT_COMMANDS:
        out.plain(f"  {command.ljust(width)}  # {why}")
    return 0
