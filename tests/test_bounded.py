"""A plugin's call outside a case, bounded: one rule and wording for a factory and a set
provider's hook (evalkit.bounded.plugin_call_within), where registry.instantiate_within and
catalog._hook_within each wrapped call_within with its own exception and message."""

from __future__ import annotations

import threading

import pytest
from evalkit.bounded import plugin_call_within
from evalkit.errors import PluginCallAbandoned


def test_a_call_that_outlives_its_limit_is_abandoned_in_the_one_wording() -> None:
    released = threading.Event()
    try:
        with pytest.raises(PluginCallAbandoned) as abandoned:
            plugin_call_within(released.wait, (0.05, "set_load_timeout"), "bind_config()", "evalkit-bind_config")
    finally:
        released.set()
    assert str(abandoned.value) == "bind_config() did not return within 0.05 s (set_load_timeout); the call was abandoned"


def test_what_the_call_returns_or_raises_itself_is_handed_over_as_it_is() -> None:
    assert plugin_call_within(lambda: 42, (5.0, "the deployment's timeout"), "its factory", "evalkit-create") == 42

    def own_time_out() -> None:
        raise TimeoutError("the plugin's HTTP client gave up")

    with pytest.raises(TimeoutError, match="HTTP client") as raised:
        plugin_call_within(own_time_out, (5.0, "the deployment's timeout"), "its factory", "evalkit-create")
    assert not isinstance(raised.value, PluginCallAbandoned)
