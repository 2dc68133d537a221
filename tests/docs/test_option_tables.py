"""The docs' option tables are the plugins' Options classes: generated, checked, none missing."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from evalkit import registry
from evalkit.option_tables import main, marked_plugins, render_table, update
from evalkit.options import declared_options

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_option_table_is_what_its_class_declares(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert update(text) == text, f"regenerate: python -m evalkit.option_tables docs/{page.name}"


def test_every_built_in_plugin_with_options_has_its_table_in_the_docs() -> None:
    documented = {plugin for page in PAGES for plugin in marked_plugins(page.read_text(encoding="utf-8"))}
    for record in registry.scan():
        if record.distribution != "evalkit-golden":
            continue
        declared = declared_options(registry.load(record))
        if declared is not None and attrs.fields(declared):
            assert (record.group, record.name) in documented, f"no option table for {record.kind} {record.name} in docs/"


def test_a_table_that_drifts_from_its_class_is_found_and_regenerated(tmp_path: Path) -> None:
    table = render_table("evalkit.generators", "replay")
    assert table.splitlines()[2].startswith("| `path` | str, a path | **required** |  | JSONL file of recorded answers")
    page = tmp_path / "page.md"
    drifted = table.replace("**required**", "`answers.jsonl`")
    page.write_text(f"Intro.\n\n<!-- options: evalkit.generators replay -->\n{drifted}<!-- /options -->\n\nOutro.\n")
    assert main([str(page), "--check"]) == 1
    assert main([str(page)]) == 0
    assert page.read_text() == f"Intro.\n\n<!-- options: evalkit.generators replay -->\n{table}<!-- /options -->\n\nOutro.\n"
    assert main([str(page), "--check"]) == 0
