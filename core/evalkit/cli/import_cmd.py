"""``evalkit import otel FILE``: OpenTelemetry GenAI traces into a set file and recorded answers."""

from __future__ import annotations

import click

from .app import Arguments, EvalkitCommand, EvalkitGroup, arguments
from .params import global_options, non_empty, non_empty_path

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

#: The GenAI semantic-convention versions read (kept equal to evalkit.importers.otel.SEMCONV_VERSIONS;
#: a test checks it, so `evalkit import --help` imports nothing).
SEMCONV_VERSIONS = "v1.37-v1.44"


@click.group(
    "import",
    cls=EvalkitGroup,
    help="Turn what an application recorded into a golden set to review, with its answers as a replay file.",
    subcommand_metavar="SOURCE [ARGS]...",
    invoke_without_command=False,  # a source is required: `evalkit import` alone is a usage error
    no_args_is_help=False,
)
@global_options(config=None, database=None)
def command(**params: Any) -> None:
    """``evalkit import``: its source follows."""


@command.command(
    "otel",
    cls=EvalkitCommand,
    short_help="OpenTelemetry GenAI spans (OTLP/JSON) into a set file and a replay answers file",
    help=(
        f"Read the OpenTelemetry spans in FILE (OTLP/JSON: one export request, or JSON Lines of them as the "
        f"SDK's and the collector's file exporters write) and make a golden case of each model call, read from "
        f"the GenAI semantic conventions {SEMCONV_VERSIONS}: gen_ai.input.messages, gen_ai.output.messages, "
        "gen_ai.system_instructions, gen_ai.response.model / gen_ai.request.model and gen_ai.provider.name "
        "(or gen_ai.system). A call with one user turn becomes a prompt, a longer history a conversation "
        "(messages; with tool calls, kept but marked skip). Each case's reference and its one check "
        "(same_as_observed) are the observed answer, which also goes to a JSONL file the replay generator reads. "
        "Secrets and e-mail addresses are scrubbed, credentials found in attributes wherever they were echoed. "
        "Spans that are not model calls or lack the attributes are counted, not imported. Nothing is written "
        "over an existing file without --force; exit 2 when nothing could be imported."
    ),
)
@click.argument("file", metavar="FILE", help="an OTLP/JSON trace file (.json or .jsonl)", callback=non_empty_path)
@click.option("-o", "--output", metavar="PATH", help="the set file to write, .yaml (default: evals/<FILE's name>.yaml)", callback=non_empty_path)
@click.option("--answers", metavar="PATH", help="the replay answers file (default: <set file name>-answers.jsonl beside it)", callback=non_empty_path)
@click.option("--identifier", metavar="ID", help="the set's identifier (default: traces.<FILE's name>)", callback=non_empty("an identifier"))
@click.option("--name", metavar="TEXT", help="the set's name (default: Traces from <FILE's name>)")
@click.option("--force", is_flag=True, help="replace the set file and the answers file when they exist")
@global_options(config=None, database=None, json="print one JSON document")
def otel(**params: Any) -> Arguments:
    """Parsed ``evalkit import otel``."""
    # Collected rarely, as a run is until it starts (an import never starts one): what it builds
    # lives to its end, and each full collection walked all of it (a third of the CPU at 20,000 spans).
    return arguments(handle, params, collects_garbage_from_run_start=True)


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "imported"


def handle(args: Arguments) -> int:
    """Import, then say what was written and what to run next."""
    from pathlib import Path

    from ..errors import UsageError
    from ..importers import ImportTarget, import_otel
    from ..shapes import clipped
    from ..validation import IDENTIFIER_PATTERN

    source = Path(args.file)
    stem = source.name.split(".")[0] or "imported"
    set_file = Path(args.output) if args.output else Path("evals") / f"{_slug(stem)}.yaml"
    if set_file.suffix.lower() not in (".yaml", ".yml"):
        from ..wording import path_named

        raise UsageError(f"-o {path_named(set_file)}: evalkit import writes a YAML set file (.yaml or .yml)")
    answers = Path(args.answers) if args.answers else set_file.with_name(f"{set_file.stem}-answers.jsonl")
    identifier = args.identifier or f"traces.{_slug(stem)}"
    if not IDENTIFIER_PATTERN.fullmatch(identifier):
        from ..wording import quoted

        raise UsageError(f"--identifier {quoted(identifier)}: lowercase segments of a-z, 0-9 and _ joined by dots, like traces.prod")
    name = args.name if args.name is not None else f"Traces from {clipped(source.name)}"  # a blank one is the set check's to refuse
    target = ImportTarget(set_file, answers, identifier, name, source.name, args.force)
    outcome = import_otel(source, target)
    if args.json:
        from .json_output import print_json

        print_json(outcome.as_dict())
        return 0
    config = _config_in_force(getattr(args, "config", None))
    instance = target.identifier.rsplit(".", 1)[-1].replace("_", "-")
    lines = _sets_lines(set_file, config) + _provider_lines(instance, outcome, config)
    named = config.path.name if config is not None and config.path is not None else "evalkit.toml"
    if lines:
        next_step = f"Next: review the cases, then answer them from the recorded answers with a provider in {named}:"
    else:
        next_step = f"Next: review the cases, then answer them from the recorded answers ({_table(f'providers.{instance}', config)} in {named} replays them):"
    _print(outcome, instance, next_step, lines)
    return 0


def _config_in_force(config_path: str | None) -> Any:
    """The configuration `evalkit run` would read here, or ``None`` when it cannot be read (that is
    reported where it is used, not here)."""
    from ..config import load_config
    from ..errors import ConfigError

    try:
        return load_config(config_path)
    except ConfigError:
        return None


def _table(name: str, config: Any) -> str:
    """``[NAME]`` as the configuration file in force spells it: ``[tool.evalkit.NAME]`` in a pyproject.toml."""
    in_pyproject = config is not None and config.path is not None and config.path.name == "pyproject.toml"
    return f"[tool.evalkit.{name}]" if in_pyproject else f"[{name}]"


def _relative_to_config(path: Path, config: Any) -> str:
    """``path`` as the configuration names files: relative to its folder (the working directory
    when there is none), as a TOML string."""
    import os
    from pathlib import Path

    root = config.root if config is not None else Path.cwd()
    return _toml_string(Path(os.path.relpath(path.resolve(), root.resolve())).as_posix())


def _sets_lines(set_file: Path, config: Any) -> list[str]:
    """What the configuration needs for `evalkit run` to find ``set_file``: nothing when its
    ``[sets] paths`` already read it; else a ``[sets]`` table naming the file, or (when it has one)
    the path to add to it. Paths are relative to the configuration's folder, as ``[sets] paths``
    are."""
    from ..errors import ConfigError
    from ..setfiles import configured_patterns, expand_patterns
    from ..wording import path_named

    try:
        patterns = configured_patterns(config) if config is not None else ()
    except ConfigError:
        patterns = ()
    written = set_file.resolve()
    if patterns and written in {path.resolve() for path in expand_patterns(patterns, config.root)[0]}:
        return []
    shown = _relative_to_config(set_file, config)
    if config is not None and "sets" in config.raw:
        return [f"  add {shown} to the paths of {_table('sets', config)} in {path_named(config.path)}"]
    return [f"  {_table('sets', config)}", f"  paths = [{shown}]"]


def _provider_lines(instance: str, outcome: Any, config: Any) -> list[str]:
    """What the configuration needs for ``--provider INSTANCE`` to answer from the answers file:
    nothing when ``[providers.INSTANCE]`` already replays it (a re-import with ``--force``); what
    differs when a table of that name answers otherwise; else the table to add. Its ``path`` is
    relative to the configuration's folder, as a provider's paths are."""
    from pathlib import Path

    from ..wording import path_named

    answers = outcome.target.answers_file
    shown = _relative_to_config(answers, config)
    existing = config.providers.get(instance) if config is not None else None
    if existing is not None:
        where = f"{_table(f'providers.{instance}', config)} in {path_named(config.path)}"
        if existing.adapter != "replay":
            return [f"  {where} answers with adapter {_toml_string(existing.adapter)}, not from {shown}: "
                    f'give it adapter = "replay" and path = {shown}, or import with another --identifier']  # fmt: skip
        path = existing.options.get("path")
        if not isinstance(path, str) or not path:
            return [f"  {where} replays no file: give it path = {shown}"]
        if (config.root / Path(path).expanduser()).resolve() != answers.resolve():
            return [f"  {where} replays {_toml_string(path)}, not {shown}: give it path = {shown}"]
        return []
    lines = [f"  {_table(f'providers.{instance}', config)}", '  adapter = "replay"', f"  path = {shown}"]
    if outcome.model:
        lines.append(f"  model = {_toml_string(outcome.model)}")
    return lines


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's; the console shows the rest printable)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _print(outcome: Any, instance: str, next_step: str, config_lines: list[str]) -> None:
    import shlex

    from ..importers import unread_lines
    from ..wording import counted, path_named
    from .console import console

    found, target = outcome.found, outcome.target
    out = console()
    out.plain(f"read {counted(found.spans, 'span')} from {path_named(target.source)} (OpenTelemetry GenAI conventions {SEMCONV_VERSIONS})")
    cases = counted(len(found.cases), "case")
    skipped = f" ({outcome.skipped:,} kept but skipped: they hold tool calls)" if outcome.skipped else ""
    out.plain(f"imported {cases}: {counted(len(found.cases) - outcome.conversations, 'single prompt')}, {counted(outcome.conversations, 'conversation')}{skipped}")
    for why, count in found.not_imported.items():
        out.plain(f"not imported: {why}: {count:,}")
    for phrase in unread_lines(outcome.unreadable_lines, outcome.unreadable_reasons):
        out.plain(f"not read: {phrase}")
    out.plain(f"wrote {path_named(target.set_file)} and {path_named(target.answers_file)}")
    out.plain("")
    out.plain(next_step)
    for line in config_lines:
        out.plain(line)
    out.plain(f"  evalkit validate {shlex.quote(str(target.set_file))}")  # a command to paste: a path with a space is one word
    out.plain(f"  evalkit run {target.identifier} --provider {instance}")
