"""What the kernel may import: the house rules the design states, checked over every module of
``core/evalkit`` by its import statements (each one, at any depth: a function's lazy import too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parent.parent / "core" / "evalkit"


def _imported(path: Path) -> set[str]:
    """The top-level names of the packages every import statement of ``path`` names."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


MODULES = sorted(KERNEL.rglob("*.py"))


def test_the_kernel_has_modules_to_check() -> None:
    assert len(MODULES) > 100


@pytest.mark.parametrize("package", ["evalkit_plugins", "evalkit_set_arith", "evalkit_set_stdlib"])
def test_no_kernel_module_imports_a_plugin_distribution(package: str) -> None:
    """Built-ins register through the entry points as any third party does: a kernel that imported
    one (the viewer drew its trend chart with the HTML reporter's module) would break with the
    built-ins switched off (EVALKIT_DISABLE_PLUGINS) or not installed."""
    importing = [str(path.relative_to(KERNEL)) for path in MODULES if package in _imported(path)]
    assert importing == []


def test_only_storage_knows_peewee() -> None:
    """Domain types are attrs classes; nothing outside ``evalkit.storage`` knows Peewee."""
    outside = [
        str(path.relative_to(KERNEL))
        for path in MODULES
        if {"peewee", "playhouse"} & _imported(path) and path.relative_to(KERNEL).parts[0] != "storage"
    ]
    assert outside == []
