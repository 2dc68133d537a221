"""``evalkit list``: installed plugins (from metadata, nothing imported) and the sets they ship."""

from __future__ import annotations

import argparse

from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WHAT = ("plugins", "sets", "questions", "deployments")


def register(subparsers: Any) -> None:
    """Add the ``list`` command."""
    parser = subparsers.add_parser(
        "list",
        help="list installed plugins, or the golden sets they ship",
        description=(
            "`evalkit list` shows every plugin in every evalkit entry-point group with its distribution and "
            "version (and whether EVALKIT_DISABLE_PLUGINS disables it), without importing any plugin. `evalkit list sets` loads the golden prompt set providers "
            "and shows their sets; `evalkit list questions` does the same for golden question sets (including the "
            "collections declared under [question_sets] in the configuration); `evalkit list deployments` shows each "
            "retrieval deployment, the retriever it runs and where it was defined."
        ),
    )
    parser.add_argument("what", nargs="?", choices=WHAT, default="plugins", help="what to list (default: plugins)")
    parser.add_argument(
        "--options", action="store_true",
        help="with plugins: load each plugin and show the options it declares (name, type, default, help)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--config", metavar="PATH", help="configuration file, for sets declared in files and [question_sets] collections (default: the nearest evalkit.toml or [tool.evalkit], here or in a parent folder)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """List, and return 2 when a provider failed or two sets clash (everything else is still shown)."""
    if args.what == "plugins":
        return _plugins(args)
    if args.options:
        from ..errors import UsageError

        raise UsageError(f"--options applies to `evalkit list plugins`, not to `evalkit list {args.what}`")
    if args.what == "deployments":
        return _deployments(args)
    return _sets(args)


def _plugins(args: argparse.Namespace) -> int:
    from .. import registry

    records = registry.scan()
    off = registry.disabled()
    options = {r: plugin_options(r) for r in records} if args.options else {}
    if args.json:
        from .common import print_json

        rows = []
        for r in records:
            row: dict[str, Any] = {
                "group": r.group, "name": r.name, "value": r.value, "distribution": r.distribution, "version": r.version,
                "disabled": r.name in off,
            }
            if args.options:
                row["options"], row["options_error"] = options[r]
            rows.append(row)
        print_json(rows)
        return 2 if any(error for _, error in options.values()) else 0

    from .render import literal

    write = stdout().write
    for group in registry.GROUPS:
        members = [r for r in records if r.group == group]
        write(f"{group}  ({registry.plural(registry.KIND_BY_GROUP[group])})\n")
        if not members:
            write("  (none installed)\n")
        # Names and versions come from installed metadata: shown literally.
        names = [literal(r.name, markup=False) for r in members]
        width = max((len(name) for name in names), default=0)
        for name, record in zip(names, members, strict=True):
            note = f"  (disabled by {registry.DISABLE_ENV})" if record.name in off else ""
            write(f"  {name.ljust(width)}  {literal(f'{record.distribution} {record.version}', markup=False)}{note}\n")
            if args.options:
                for line in option_lines(*options[record]):
                    write(f"      {literal(line, markup=False)}\n")
    return 2 if any(error for _, error in options.values()) else 0


def plugin_options(record: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The options ``record``'s plugin declares (``None``: it declares none), or why it failed to load."""
    from .. import registry
    from ..errors import PluginError
    from ..options import option_specs

    try:
        specs = option_specs(registry.load(record))
    except PluginError as exc:
        return None, str(exc)
    if specs is None:
        return None, None
    return [{"name": s.name, "type": s.type, "required": s.required, "default": s.default, "help": s.help} for s in specs], None


def option_lines(specs: list[dict[str, Any]] | None, error: str | None) -> list[str]:
    """Lines describing a plugin's options for the text listing and the CLI reference."""
    if error is not None:
        return [f"(could not load: {error})"]
    if specs is None:
        return ["(declares no options)"]
    if not specs:
        return ["(takes no options)"]
    lines = []
    for spec in specs:
        default = "required" if spec["required"] else f"default {_shown(spec['default'])}"
        lines.append(f"{spec['name']}: {spec['type']}, {default}" + (f" — {spec['help']}" if spec["help"] else ""))
    return lines


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _sets(args: argparse.Namespace) -> int:
    from ..catalog import prompt_set_catalog, question_set_catalog
    from ..config import load_config
    from ..errors import SetValidationError
    from .common import console, print_json

    config = load_config(args.config)
    catalog = prompt_set_catalog(config=config) if args.what == "sets" else question_set_catalog(config=config)
    count_attr = "prompts" if args.what == "sets" else "questions"
    rows = [
        {
            "identifier": identifier,
            "name": sourced.set.name,
            "count": len(getattr(sourced.set, count_attr)),
            "distribution": sourced.record.distribution,
            "version": sourced.record.version,
            "provider": sourced.record.name,
        }
        for identifier, sourced in catalog.sets.items()
    ]
    problems = []
    for failure in catalog.failures:
        where = f"{failure.record.kind} {failure.record.describe()}"
        if isinstance(failure.exception, SetValidationError):
            problems += [f"{where}: {problem}" for problem in failure.exception.problems]
        else:
            problems.append(f"{where}: {failure.error}")
    problems += [
        f'set "{identifier}" is shipped by more than one distribution: '
        + " and ".join(f"{r.distribution} {r.version}" for r in owners)
        for identifier, owners in catalog.duplicates.items()
    ]
    if args.json:
        print_json({"sets": rows, "problems": problems})
        return 2 if problems else 0
    from rich.table import Table

    from .render import literal

    out = console()
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("Identifier")
    table.add_column("Name")
    table.add_column(count_attr.capitalize(), justify="right")
    table.add_column("Distribution")
    for row in rows:
        table.add_row(
            literal(row["identifier"]), literal(row["name"]), str(row["count"]),
            literal(f"{row['distribution']} {row['version']}"),
        )
    if rows:
        out.print(table)
    else:
        out.print(f"No {literal(catalog.kind)}s are installed.")
    err = console(stderr=True)
    for problem in problems:  # a provider's words and the user's table names are data, not markup
        err.print(f"[red]error:[/red] {literal(problem)}")
    return 2 if problems else 0


def _deployments(args: argparse.Namespace) -> int:
    """Every deployment (configuration and question-set providers), its retriever and its origin."""
    from ..catalog import question_set_catalog
    from ..config import load_config
    from ..retrieval.deployments import known_deployments
    from .common import console, print_json

    config = load_config(args.config)
    catalog = question_set_catalog(config=config)
    problems = [f"{f.record.kind} {f.record.describe()}: {f.error}" for f in catalog.failures]
    deployments = known_deployments(config, catalog.sets.values())
    rows = [
        {
            "name": name,
            "retriever": choice.retriever,
            "retrievers": {rid: entry.source for rid, entry in choice.retrievers.items()},
            "defined_in": list(choice.sources),
        }
        for name, choice in sorted(deployments.items())
    ]
    if args.json:
        print_json({"deployments": rows, "problems": problems})
        return 2 if problems else 0
    from rich.table import Table

    from .render import literal

    out = console()
    if rows:
        table = Table(show_edge=False, pad_edge=False)
        for column in ("Deployment", "Retriever", "Options for", "Defined in"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(
                literal(row["name"]),
                literal(row["retriever"]) if row["retriever"] else "(none named: give RETRIEVER)",
                literal(", ".join(row["retrievers"]) or "-"),
                "\n".join(literal(source) for source in row["defined_in"]),
            )
        out.print(table)
    else:
        out.print('No deployments: add [deployments.NAME] with retriever = "ID" to evalkit.toml.')
    err = console(stderr=True)
    for problem in problems:
        err.print(f"[red]error:[/red] {literal(problem)}")
    return 2 if problems else 0
