"""``evalkit list``: installed plugins (from metadata, nothing imported) and the sets they ship."""

from __future__ import annotations

from collections.abc import Callable

import click

from ..wording import quoted, word_named
from .app import Arguments, EvalkitCommand, arguments
from .params import Choice, global_options

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WHAT = ("plugins", "sets", "questions", "deployments", "providers")


@click.command(
    "list",
    cls=EvalkitCommand,
    help=(
        "`evalkit list` shows every plugin in every evalkit entry-point group with its distribution and "
        "version (and whether EVALKIT_DISABLE_PLUGINS disables it), without importing any plugin; one whose module cannot be "
        "found (looked for without running any plugin code) is marked `module \"NAME\" not found` and, unless disabled, "
        "named on stderr, exit 2. `evalkit list sets` loads the golden prompt set providers "
        "and shows their sets; `evalkit list questions` does the same for golden question sets (including the "
        "collections declared under [question_sets] in the configuration); `evalkit list deployments` shows each "
        "retrieval deployment, the retriever it runs and where it was defined, and names on stderr, exit 2, each that "
        "cannot run here, told without importing any retriever: no installed retriever has its id (with \"did you mean\"), "
        "EVALKIT_DISABLE_PLUGINS switches it off, or its module is not found (as `evalkit list` marks it); "
        "`evalkit list providers` shows each provider instance ([providers.NAME] in the configuration) and its adapter, "
        "and names on stderr, exit 2, each whose adapter cannot run here, told the same way without importing any adapter."
    ),
)
@click.argument(
    "what", required=False, default="plugins", type=Choice(WHAT), metavar="[plugins|sets|questions|deployments|providers]",
    help="what to list (default: plugins)",
)
@click.option(
    "--options", is_flag=True,
    help="with plugins: load each plugin and show the options it declares (name, type, default, what its validator allows, help)",
)
@global_options(
    config="configuration file, for sets declared in files and [question_sets] collections (default: $EVALKIT_CONFIG, "
    "else the nearest evalkit.toml or [tool.evalkit] in pyproject.toml, here or in a parent folder)",
    database=None,
    json="print JSON",
)
def command(**params: Any) -> Arguments:
    """Parsed ``evalkit list``."""
    return arguments(handle, params)


def handle(args: Arguments) -> int:
    """List, and return 2 when a provider failed, two sets clash, a plugin cannot be loaded (an
    entry point refused, one whose module is not found), a deployment cannot run
    (:func:`evalkit.retrieval.deployments.deployment_problems`) or a provider instance's adapter
    cannot (:func:`evalkit.set_checks.provider_problems`); everything else is still shown."""
    if args.what == "plugins":
        return _plugins(args)
    if args.options:
        from ..errors import UsageError

        raise UsageError(f"--options applies to `evalkit list plugins`, not to `evalkit list {args.what}`")
    if args.what == "deployments":
        return _deployments(args)
    if args.what == "providers":
        return _providers(args)
    return _sets(args)


def _plugins(args: Arguments) -> int:
    from .. import registry

    records = registry.scan()
    refused = registry.refused()  # an entry point whose name or value sprawls: named, not listed
    off = registry.disabled()
    options = {r: plugin_options(r) for r in records} if args.options else {}
    # an entry point that cannot load, told without importing it (its module is not found): marked,
    # and — unless EVALKIT_DISABLE_PLUGINS switches it off — an error, as `list sets` and `validate` say
    unloadable = registry.unloadable(records)
    broken = [registry.PluginFailure(r, reason) for r, reason in unloadable.items() if not registry.is_disabled(r, off)]
    failed = 2 if refused or broken or any(error for _, error in options.values()) else 0
    if args.json:
        from .json_output import print_json

        rows = []
        for r in records:
            row: dict[str, Any] = {
                "group": r.group, "name": r.name, "value": r.value, "distribution": r.distribution, "version": r.version,
                "disabled": registry.is_disabled(r, off), "refused": None, "unloadable": unloadable.get(r),
            }
            if args.options:
                row["options"], row["options_error"] = options[r]
            rows.append(row)
        for f in refused:  # its name and value cut: a row that names it, never one to find it by
            rows.append({
                "group": f.record.group, "name": f.record.name, "value": f.record.value, "distribution": f.record.distribution,
                "version": f.record.version, "disabled": False, "refused": f.error, "unloadable": None,
            })  # fmt: skip
        print_json(rows)
        return failed

    from .console import console

    out = console()
    for group in registry.GROUPS:
        members = [r for r in records if r.group == group]
        out.plain(f"{group}  ({registry.plural(registry.KIND_BY_GROUP[group])})")
        if not members:
            out.plain("  (none installed)")
        # a name as it is when it is one plain word, else quoted and escaped as every message quotes it:
        # a column cannot show where "my grader" or a name with a line break ends
        names = {record: word_named(record.name) for record in members}
        width = max((len(name) for name in names.values()), default=0)
        for record in members:
            note = f"  (disabled by {registry.DISABLE_ENV})" if registry.is_disabled(record, off) else ""
            if record in unloadable:
                note += f"  ({unloadable[record]})"
            out.plain(f"  {names[record].ljust(width)}  {record.distribution} {record.version}{note}")
            if args.options:
                for line in option_lines(*options[record]):
                    out.plain(f"      {line}")
    err = console(stderr=True)
    for f in (*refused, *broken):
        err.plain(f"error: {f.named()}")
    return failed


def plugin_options(record: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The options ``record``'s plugin declares (``None``: it declares none), or why it failed to load."""
    from .. import registry
    from ..errors import PluginError
    from ..options import declaration_problem, option_specs

    try:
        factory = registry.load(record)
    except PluginError as exc:
        return None, str(exc)
    if (problem := declaration_problem(factory)) is not None:  # a plugin no table can configure
        return None, f"{record.label} {problem}"
    specs = option_specs(factory)
    if specs is None:
        return None, None
    rows = [{"name": s.name, "type": s.type, "required": s.required, "default": s.default, "allowed": s.allowed, "help": s.help} for s in specs]
    return rows, None


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
        allowed = f", {spec['allowed']}" if spec.get("allowed") else ""  # what its validator allows: "must be …"
        lines.append(f"{spec['name']}: {spec['type']}, {default}{allowed}" + (f" — {spec['help']}" if spec["help"] else ""))
    return lines


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quoted(value)
    return str(value)


def _sets(args: Arguments) -> int:
    from ..catalog import prompt_set_catalog, question_set_catalog
    from ..config import load_config
    from ..errors import SetValidationError
    from ..shapes import MAX_NAME_CHARS, clipped, short_repr
    from ..validation import count_members, identifier_problem
    from .console import console
    from .json_output import print_json
    from .render import SetCheckDisplay

    config = load_config(args.config)
    catalog = prompt_set_catalog(config=config) if args.what == "sets" else question_set_catalog(config=config)
    count_attr = "prompts" if args.what == "sets" else "questions"
    rows = []
    problems = []
    # a stream that declares no count is read to count it: a million prompts take seconds
    counting = SetCheckDisplay(enabled=not args.json, verb="counting")
    try:
        for identifier, sourced in catalog.sets.items():
            count, failure = count_members(getattr(sourced.set, count_attr), counting, identifier)
            if failure is not None:  # a stream whose producer failed while it was counted
                problems.append(f'set {quoted(identifier)}: field {count_attr}: {failure}')
            problem = identifier_problem(identifier)
            rows.append({
                "identifier": identifier,
                # a set `run` refuses (a control character, whitespace, not NFC): listed, marked unusable
                "usable": problem is None,
                "unusable": None if problem is None else f"identifier {problem}",
                # the name is the plugin's and not checked here (`evalkit validate` does): cut past its bound
                "name": clipped(name, MAX_NAME_CHARS) if isinstance(name := sourced.set.name, str) else short_repr(name),
                "count": count,
                "distribution": sourced.record.distribution,
                "version": sourced.record.version,
                "provider": sourced.record.name,
            })  # fmt: skip
    finally:
        counting.stop()
    for failure in catalog.failures:
        if isinstance(failure.exception, SetValidationError):
            problems += [failure.named(problem) for problem in failure.exception.problems]
        else:
            problems.append(failure.named())
    problems += [f'set {quoted(identifier)} {catalog.clash(identifier)}' for identifier in catalog.duplicates]
    if args.json:
        print_json({"sets": rows, "problems": problems})
        return 2 if problems else 0
    from rich.table import Table

    out = console()
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("Identifier")
    table.add_column("Name")
    table.add_column(count_attr.capitalize(), justify="right")
    table.add_column("Distribution")
    for row in rows:
        count = "?" if row["count"] is None else str(row["count"])
        identifier, name = row["identifier"], row["name"]
        if not row["usable"]:  # escaped, so that it reads as the text it is, and said not runnable
            identifier, name = unusable_name(identifier), f"{name} — unusable: evalkit run refuses it ({row['unusable']})"
        table.add_row(identifier, name, count, f"{row['distribution']} {row['version']}")
    if rows:
        out.print(table)
    else:
        out.print(f"No {catalog.kind}s are installed.")
    err = console(stderr=True)
    for problem in problems:
        err.line("[red]error:[/red] {problem}", problem=problem)
    return 2 if problems else 0


def unusable_name(name: str) -> str:
    """A name a command would refuse, as ``ascii()`` writes it (``'outsider.cafe\\u0301'``, quotes
    included, cut to :data:`UNUSABLE_SHOWN_CHARS`): every character that is not plain ASCII — a
    control character, a combining mark, a look-alike — written out, and a space inside the quotes."""
    from ..shapes import clipped

    return clipped(ascii(name), UNUSABLE_SHOWN_CHARS)


#: How much of an unusable name ``evalkit list`` shows (escaped).
UNUSABLE_SHOWN_CHARS = 120


def _as_written(row: dict) -> Callable[[str], str]:
    """How the table names a retriever of ``row``: its id, and — when TOML read it from an unquoted
    dotted table — the names written (``outr (written outr.x: TOML reads an unquoted dotted name as
    nested tables; quote an id with dots: "outr.x")``)."""

    def shown(rid: str) -> str:
        meant = row["read_as_tables"].get(rid)
        if not meant:
            return rid
        quoted_ids = ", ".join(quoted(m) for m in meant)
        return f"{rid} (written {', '.join(meant)}: TOML reads an unquoted dotted name as nested tables; quote an id with dots: {quoted_ids})"

    return shown


def _deployments(args: Arguments) -> int:
    """Every deployment (configuration and question-set providers), its retriever and its origin;
    each that cannot run here is marked, and named on stderr (exit 2)."""
    from .. import registry
    from ..catalog import question_set_catalog
    from ..config import load_config
    from ..retrieval.deployments import (
        RETRIEVERS,
        deployment_name_problem,
        deployment_problems,
        known_deployments,
        read_as_tables,
    )

    config = load_config(args.config)
    catalog = question_set_catalog(config=config)
    problems = [f.named() for f in catalog.failures]
    deployments = known_deployments(config, catalog.sets.values())
    # why a deployment cannot run here, told without importing its retriever (no retriever
    # installed by that id, one whose module is not found): `evalkit validate` says the same
    cannot = deployment_problems(deployments)
    installed = {record.name for record in registry.enabled(RETRIEVERS)}
    rows = []
    for name, choice in sorted(deployments.items()):
        # a retriever TOML read from an unquoted dotted table ([deployments.a.retrievers.outr.x]
        # is a retriever "outr" holding a table "x"): what was written is shown beside it (an
        # installed retriever it was meant as is among the deployment's problems)
        unquoted = {rid: meant for rid in choice.retrievers if rid not in installed and (meant := read_as_tables(choice, rid))}
        problems += cannot.get(name, [])
        rows.append(
            {
                "name": name,
                # a provider's name --deployment never matches (not NFC, a hidden character): marked unusable
                "usable": (problem := deployment_name_problem(name)) is None,
                "unusable": problem,
                "retriever": choice.retriever,
                "retrievers": {rid: entry.source for rid, entry in choice.retrievers.items()},
                "read_as_tables": unquoted,
                "defined_in": list(choice.sources),
                "problems": cannot.get(name, []),
            }
        )

    def cells(out: Any) -> list[list[Any]]:
        shown = []
        for row in rows:
            named = row["name"] if row["usable"] else out.text("{}\n(unusable: {})", unusable_name(row["name"]), row["unusable"])
            if row["problems"]:
                named = out.text("{}\n({}: see below)", named, "error" if len(row["problems"]) == 1 else "errors")
            shown.append([
                named,
                row["retriever"] or "(none named: give RETRIEVER)",
                out.text(", ".join("{}" for _ in row["retrievers"]), *map(_as_written(row), row["retrievers"])) if row["retrievers"] else "-",
                out.text("\n".join("{}" for _ in row["defined_in"]), *row["defined_in"]),
            ])
        return shown

    return _table_or_json(
        args, {"deployments": rows, "problems": problems}, ("Deployment", "Retriever", "Options for", "Defined in"), cells,
        'No deployments: add [deployments.NAME] with retriever = "ID" to evalkit.toml.', problems,
    )  # fmt: skip


def _providers(args: Arguments) -> int:
    """Every configured provider instance, its adapter and model; each whose adapter cannot run
    here (no installed generator has its id, switched off, its module not found) is marked, and
    named on stderr (exit 2). No adapter is imported."""
    from ..config import load_config
    from ..set_checks import provider_problems

    config = load_config(args.config)
    cannot = provider_problems(config)
    rows = [
        {"name": name, "adapter": instance.adapter, "model": instance.model, "priority": instance.priority, "problem": cannot.get(name)}
        for name, instance in config.providers.items()
    ]
    problems = [{"provider": name, "reason": reason} for name, reason in sorted(cannot.items())]

    def cells(out: Any) -> list[list[Any]]:
        return [
            [
                out.text("{}\n(error: see below)" if row["problem"] else "{}", row["name"]),
                out.text("{}", row["adapter"]), out.text("{}", row["model"] or "-"), str(row["priority"]),
            ]
            for row in rows
        ]  # fmt: skip

    return _table_or_json(
        args, {"providers": rows, "problems": problems}, ("Provider", "Adapter", "Model", "Priority"), cells,
        'No provider instances: add [providers.NAME] with adapter = "ID" to evalkit.toml.',
        [problem["reason"] for problem in problems],
    )  # fmt: skip


def _table_or_json(
    args: Arguments, document: dict[str, Any], columns: tuple[str, ...], cells: Callable[[Any], list[list[Any]]],
    empty: str, problems: list[str],
) -> int:
    """``document`` with ``--json``; else a table of ``columns`` holding ``cells(console)`` (a list
    of cells a row), or ``empty`` when there is no row, and each of ``problems`` on stderr. 2 when
    there is a problem, else 0."""
    from .console import console
    from .json_output import print_json

    if args.json:
        print_json(document)
        return 2 if problems else 0
    from rich.table import Table

    out = console()
    rows = cells(out)
    if rows:
        table = Table(show_edge=False, pad_edge=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*row)
        out.print(table)
    else:
        out.print(empty)
    err = console(stderr=True)
    for problem in problems:
        err.line("[red]error:[/red] {problem}", problem=problem)
    return 2 if problems else 0
