"""docs/cli.md is made from the commands themselves (mkdocs-click, when the site is built): every
command and option is in it, and its section on the built-in plugins' options is current."""

from __future__ import annotations

import re
from pathlib import Path

import click
import markdown
from evalkit import registry
from evalkit.cli.app import COMMANDS, evalkit
from evalkit.cli.list_cmd import option_lines, plugin_options

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _commands(group: click.Group, ctx: click.Context) -> list[click.Command]:
    """Every command below ``group``, groups included."""
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        found.append(command)
        if isinstance(command, click.Group):
            found += _commands(command, ctx)
    return found


def test_the_reference_is_generated_from_the_root_group() -> None:
    directive = re.search(r"^::: mkdocs-click\n((?:    :\w+: .*\n)+)", DOC.read_text(), re.MULTILINE)
    assert directive is not None, "docs/cli.md renders the commands with the mkdocs-click directive"
    options = dict(re.findall(r":(\w+): (.*)", directive.group(1)))
    assert (options["module"], options["command"], options["prog_name"]) == ("evalkit.cli.app", "evalkit", "evalkit")


def test_every_command_option_and_argument_is_in_the_built_reference() -> None:
    html = markdown.markdown(DOC.read_text(), extensions=["attr_list", "mkdocs-click"])
    text = re.sub(r"<[^>]+>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    with click.Context(evalkit, info_name="evalkit") as ctx:
        commands = [evalkit, *_commands(evalkit, ctx)]
        paths = {command: f"evalkit {command.name}" for command in commands}
        assert set(COMMANDS) <= {command.name for command in commands}
        for command in commands:
            assert command.name in text
            for param in command.get_params(ctx):
                if isinstance(param, click.Option):
                    for name in param.opts:
                        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (paths[command], name)
                    if param.help:
                        assert " ".join(param.help.split()[:4]) in " ".join(text.split()), (paths[command], param.help)
                else:
                    assert f"{param.human_readable_name}: {param.help}".replace("`", "") in text, (paths[command], param.name)
    assert "exit codes: 0 done · 1 gate failed" in text


def test_the_built_in_plugins_options_are_current() -> None:
    expected = [
        "## Options of the built-in plugins",
        "",
        "What `evalkit list plugins --options` prints for the plugins evalkit ships; it shows installed",
        "third-party plugins' options the same way. Where each table lives: docs/plugins.md.",
        "",
    ]
    for record in registry.scan():
        if record.distribution == "evalkit-golden":
            expected += [f"### {record.kind} `{record.name}`", "", "```text", *option_lines(*plugin_options(record)), "```", ""]
    section = DOC.read_text().partition("## Options of the built-in plugins")
    assert section[1] + section[2] == "\n".join(expected), "docs/cli.md: paste the plugins' options as `evalkit list plugins --options` shows them"


#: Arguments that click takes as optional but the command refuses to go without, with its own message
#: (``evalkit completion`` names the shells): their usage shows them as required, which they are.
REFUSED_WHEN_MISSING = {("completion", "shell")}


def test_an_optional_argument_is_shown_in_brackets_in_the_usage_line() -> None:
    # `evalkit retrieval SET` (the deployment names the retriever) and `evalkit list` (plugins) run,
    # but --help and docs/cli.md said "Usage: evalkit retrieval [OPTIONS] SET RETRIEVER" and
    # "evalkit list [OPTIONS] {plugins,sets,questions,deployments}", as if each had to be given
    ctx = click.Context(evalkit)
    wrong = []
    for command in _commands(evalkit, ctx):
        usage = " ".join(command.collect_usage_pieces(click.Context(command, info_name=command.name)))
        for param in command.params:
            if isinstance(param, click.Argument) and not param.required:
                if (command.name, param.name) in REFUSED_WHEN_MISSING:
                    continue
                if not param.make_metavar(click.Context(command)).startswith("["):
                    wrong.append(f"evalkit {command.name} {usage}")
    assert not wrong, wrong


def test_a_commands_summary_names_what_it_offers() -> None:
    # `evalkit --help` summed up `schema` as "golden-set or question-set files" (it prints
    # calibration-set too) and `baseline` as "accept … or show" (it exports one too)
    ctx = click.Context(evalkit)
    summary = {name: COMMANDS[name][1] for name in COMMANDS}
    schema = evalkit.get_command(ctx, "schema")
    (formats,) = [param for param in schema.params if isinstance(param, click.Argument)]
    assert all(choice in summary["schema"] for choice in formats.type.choices), summary["schema"]
    baseline = evalkit.get_command(ctx, "baseline")
    assert all(verb in summary["baseline"] for verb in baseline.list_commands(ctx)), summary["baseline"]
