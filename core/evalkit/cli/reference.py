"""Render the CLI reference (``docs/cli.md``) from the parser itself, so it cannot drift.

    python -m evalkit.cli.reference > docs/cli.md
"""

from __future__ import annotations

import argparse
import os

from . import EPILOG, build_parser

__all__ = ["render_reference"]


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((name, sub))
    return found


def render_reference() -> str:
    """The Markdown reference of every command and subcommand."""
    os.environ["COLUMNS"] = "100"
    parser = build_parser()
    parts = [
        "# CLI reference",
        "",
        "Generated from the argument parser by `python -m evalkit.cli.reference`; a test keeps it current.",
        "",
        "```text",
        EPILOG,
        "```",
        "",
    ]

    def add(prefix: str, sub: argparse.ArgumentParser) -> None:
        parts.extend([f"## `{prefix}`", "", "```text", sub.format_help().rstrip(), "```", ""])
        for name, nested in _subcommands(sub):
            add(f"{prefix} {name}", nested)

    for name, sub in _subcommands(parser):
        add(f"evalkit {name}", sub)
    parts.extend(_builtin_plugin_options())
    return "\n".join(parts)


def _builtin_plugin_options() -> list[str]:
    """The options the built-in plugins declare, as ``evalkit list plugins --options`` shows them."""
    from .. import registry
    from .list_cmd import option_lines, plugin_options

    parts = [
        "## Options of the built-in plugins",
        "",
        "What `evalkit list plugins --options` prints for the plugins evalkit ships; it shows installed",
        "third-party plugins' options the same way. Where each table lives: docs/plugins.md.",
        "",
    ]
    for record in registry.scan():
        if record.distribution != "evalkit-golden":
            continue
        parts.extend([f"### {record.kind} `{record.name}`", "", "```text", *option_lines(*plugin_options(record)), "```", ""])
    return parts


if __name__ == "__main__":
    print(render_reference(), end="")
