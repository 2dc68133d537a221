"""Whether an entry point's module is there, told without importing it (`evalkit.plugin_modules`)."""

from __future__ import annotations

import sys

import pytest
from evalkit.plugin_modules import entry_point_target, missing_module, missing_modules


def test_the_first_missing_part_is_named_and_what_is_there_is_found() -> None:
    assert missing_module("no_such_module_here.sub") == "no_such_module_here"
    assert missing_module("json.no_such_part") == "json.no_such_part"
    assert missing_module("json.decoder.deeper") == "json.decoder.deeper"  # json.decoder is no package
    for there in ("json", "email.mime.text", "os.path", "sys"):  # os.path: a module already imported, not a file in os
        assert missing_module(there) is None, there


def test_no_package_on_the_way_is_imported(tmp_path, monkeypatch) -> None:
    package = tmp_path / "loud_pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("raise SystemExit('imported')\n")
    (package / "inner" / "leaf.py").write_text("raise SystemExit('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = missing_modules(["loud_pkg.inner.leaf", "loud_pkg.inner.gone", "loud_pkg.gone"])
    assert found == {"loud_pkg.inner.leaf": None, "loud_pkg.inner.gone": "loud_pkg.inner.gone", "loud_pkg.gone": "loud_pkg.gone"}
    assert "loud_pkg" not in sys.modules


def test_a_finder_that_fails_cannot_tell_so_nothing_is_called_missing(monkeypatch) -> None:
    class Raising:
        @staticmethod
        def find_spec(name, path, target=None):  # noqa: ANN001, ANN205
            raise RuntimeError("a broken import hook")

    monkeypatch.setattr(sys, "meta_path", [Raising(), *sys.meta_path])
    assert missing_module("no_such_module_here") is None


@pytest.mark.parametrize(
    ("value", "target"),
    [("pkg.mod:Thing.make [extra]", ("pkg.mod", ["Thing", "make"])), ("pkg.hooks", ("pkg.hooks", [])), ("pkg-x:Thing", None), ("pkg:", None)],
)
def test_an_entry_point_value_is_read_once_for_loading_and_listing(value, target) -> None:
    assert entry_point_target(value) == target
