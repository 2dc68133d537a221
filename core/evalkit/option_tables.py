"""The option tables of the documentation, generated from the plugins' ``Options`` classes.

A page marks where a plugin's table goes; everything between the two markers is generated (field
name, type, default, the allowed values its validator states, and its help)::

    <!-- options: evalkit.generators openai -->
    | option | type | default | allowed | what it is |
    …
    <!-- /options -->

The marker ``<!-- options: library evaluate_set -->`` (or ``evaluate_retrieval``) marks the table of
a library call's keywords instead, generated from their declaration
(:data:`evalkit.run.settings.DECLARATIONS`): keyword, default, what it is.

Regenerate every marked table after changing an ``Options`` class or a keyword's declaration::

    python -m evalkit.option_tables docs/*.md

``--check`` rewrites nothing and exits 1 naming the pages whose tables differ from their classes
(the test suite runs it over docs/).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["MARKED", "marked_plugins", "render_table", "update"]

#: A generated table: the group and entry-point name in the opening marker, the table up to the closing one.
MARKED = re.compile(r"(<!-- options: (?P<group>\S+) (?P<name>\S+) -->\n)(?P<table>.*?)(<!-- /options -->)", re.S)


def _cell(text: str) -> str:
    """``text`` as one Markdown table cell: on one line, ``|`` escaped (it would end the cell) and
    ``<``, ``>``, ``&`` as entities (``qrels/<split>.tsv`` is no HTML tag)."""
    text = " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|")


def _default(field: Any) -> str:
    import attrs

    if field.default is attrs.NOTHING:
        return "**required**"
    value = field.default.factory() if isinstance(field.default, attrs.Factory) else field.default  # type: ignore[arg-type]
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def _keyword_table(call: str) -> str:
    """The Markdown table of the keywords of the library call ``call`` (``evaluate_set``), as
    :mod:`evalkit.run.settings` declares them."""
    import attrs

    from .run.settings import DECLARATIONS

    rows = ["| keyword | default | what it is |", "| --- | --- | --- |"]
    for field in attrs.fields(DECLARATIONS[call]):
        rows.append(f"| `{field.name}` | `{field.default!r}` | {_cell(field.metadata['help'])} |")
    return "\n".join(rows) + "\n"


def render_table(group: str, name: str) -> str:
    """The Markdown table of the options the installed plugin ``name`` of ``group`` declares (of
    the keywords of the library call ``name`` for the group ``library``)."""
    import attrs

    if group == "library":
        return _keyword_table(name)
    from . import registry
    from .options import _type_text, declared_options, requirement

    factory = registry.load(registry.find(group, name))
    cls = declared_options(factory)
    if cls is None:
        raise ValueError(f"{group} {name} declares no Options: there is no table to generate")
    rows = ["| option | type | default | allowed | what it is |", "| --- | --- | --- | --- | --- |"]
    for field in attrs.fields(cls):
        kind = _type_text(field.type) + (", a path" if field.metadata.get("path") else "")
        allowed = (requirement(field.validator) or "").removeprefix("must be ").removeprefix("must ")
        rows.append(
            f"| `{field.name}` | {_cell(kind)} | {_default(field)} | {_cell(allowed)} | {_cell(field.metadata.get('help', ''))} |"
        )
    return "\n".join(rows) + "\n"


def update(text: str) -> str:
    """``text`` with every marked table regenerated."""
    return MARKED.sub(lambda m: m.group(1) + render_table(m.group("group"), m.group("name")) + m.group(5), text)


def marked_plugins(text: str) -> list[tuple[str, str]]:
    """The ``(group, name)`` of every plugin whose table ``text`` marks."""
    return [(m.group("group"), m.group("name")) for m in MARKED.finditer(text)]


def main(arguments: Sequence[str]) -> int:
    """Regenerate the marked tables of the pages named (``--check``: only say which differ)."""
    check = "--check" in arguments
    drifted = []
    for page in (Path(a) for a in arguments if a != "--check"):
        text = page.read_text(encoding="utf-8")
        fresh = update(text)
        if fresh != text:
            drifted.append(str(page))
            if not check:
                page.write_text(fresh, encoding="utf-8")
    if check and drifted:
        print(f"option tables differ from their Options classes in: {', '.join(drifted)}", file=sys.stderr)
        print("regenerate them: python -m evalkit.option_tables docs/*.md", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
