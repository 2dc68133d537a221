"""Loading a plugin from its record: the object the entry point names, or an error naming the plugin."""

from __future__ import annotations

import json
import sys

import pytest
from evalkit import registry
from evalkit.errors import PluginError
from evalkit.registry import PluginRecord


def _record(value: str) -> PluginRecord:
    return PluginRecord("evalkit.graders", "example", value, "evalkit-example", "1.0")


def test_load_imports_the_named_object() -> None:
    assert registry.load(_record("json:dumps")) is json.dumps


def test_load_follows_dotted_attributes_and_ignores_extras() -> None:
    assert registry.load(_record("evalkit.registry:PluginRecord.describe [fast, extra]")) is PluginRecord.describe
    assert registry.load(_record("  evalkit.errors : PluginError ")) is PluginError


def test_load_of_a_bare_module_returns_the_module() -> None:
    assert registry.load(_record("evalkit.wording")) is sys.modules["evalkit.wording"]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("evalkit_no_such_module:thing", "ModuleNotFoundError: No module named 'evalkit_no_such_module'"),
        ("json:no_such_attribute", "AttributeError: module 'json' has no attribute 'no_such_attribute'"),
        ("json:dumps.__nothing__", "AttributeError"),
    ],
)
def test_a_plugin_that_cannot_be_imported_is_named(value: str, reason: str) -> None:
    with pytest.raises(PluginError) as caught:
        registry.load(_record(value))
    message = str(caught.value)
    assert message.startswith("grader \"example\" (evalkit-example 1.0) failed to load: ")
    assert reason in message


@pytest.mark.parametrize("value", ["", ":dumps", "json:", "json:du mps", "json;dumps", "../evil:x", "json:dumps()"])
def test_an_entry_point_that_is_not_module_attribute_is_refused(value: str) -> None:
    with pytest.raises(PluginError, match=r"failed to load: its entry point .* is not module:attribute"):
        registry.load(_record(value))
