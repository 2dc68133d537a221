"""The pytest plugin (``pytest11`` entry point ``evalkit``), active only when asked.

Ask with ``pytest -p evalkit``, with ``evalkit = true`` in the pytest ini options, or by passing
``--evalkit-set`` or a set test's node id (``evalkit-set:SET::CASE``). Until then this module only declares its options: it imports nothing of
evalkit's kernel, so installing evalkit costs other test suites nothing. Once active,
:mod:`evalkit.testing.pytest_fixtures` is registered: the ``evalkit_store`` and ``evalkit_run``
fixtures, and one test per case of each ``--evalkit-set`` plus a final regression-gate test.
"""

from __future__ import annotations

import pytest  # already loaded: pytest is what imports this plugin

from .pytest_node_ids import SELECTED_NODE_IDS, selected_node_ids


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--evalkit-*`` options and the ``evalkit`` ini switch."""
    group = parser.getgroup("evalkit", "evalkit golden sets (active with -p evalkit or the evalkit ini option)")
    group.addoption(
        "--evalkit-set", action="append", default=[], metavar="SET",
        help="run this installed golden set: one test per case and a final regression-gate test (repeatable, each set once)",
    )
    group.addoption("--evalkit-provider", metavar="NAME", help="the configured provider instance that answers (default: as evalkit run)")
    group.addoption("--evalkit-model", metavar="ALIAS", help="model alias to send instead of the instance's")
    group.addoption("--evalkit-grader", default="deterministic", metavar="NAME", help="grader (default: deterministic)")
    group.addoption("--evalkit-database", metavar="URL", help="results store (default: as evalkit run); baselines live here")
    group.addoption("--evalkit-config", metavar="PATH", help="evalkit configuration file (default: ./evalkit.toml or pyproject.toml)")
    parser.addini("evalkit", type="bool", default=False, help="activate the evalkit pytest plugin (fixtures and --evalkit-set)")


def is_active(config: pytest.Config) -> bool:
    """True when the run asked for the plugin."""
    asked = [str(p) for p in (getattr(config.option, "plugins", None) or [])]
    try:
        switched_on = bool(config.getini("evalkit"))
    except (ValueError, pytest.UsageError) as exc:  # pytest's "invalid truth value 'maybe'" named no option
        raise pytest.UsageError(f"the pytest ini option evalkit: {exc}; give true or false") from None
    return switched_on or "evalkit" in asked or bool(config.getoption("evalkit_set")) or bool(selected_node_ids(config))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register the fixtures and the set collection when the plugin is active.

    The node ids of set tests given as arguments are taken out of ``config.args`` here, before any
    collection: pytest reads every argument as a path (``ERROR: file or directory not found:
    evalkit-set:SET::CASE``), and these tests have no file. The set collection selects them.
    """
    if is_active(config) and SELECTED_NODE_IDS not in config.stash:
        config.stash[SELECTED_NODE_IDS] = selected = selected_node_ids(config)
        config.args[:] = [arg for arg in config.args if arg not in selected]
    if is_active(config) and not config.pluginmanager.has_plugin("evalkit-active"):
        from evalkit.testing import pytest_fixtures

        config.pluginmanager.register(pytest_fixtures, "evalkit-active")
    elif not is_active(config) and not config.pluginmanager.has_plugin("evalkit-inactive"):
        config.pluginmanager.register(_FixturesOff(), "evalkit-inactive")


#: What a test that asks for evalkit's fixtures is told while the plugin is off.
FIXTURES_OFF = (
    "the evalkit pytest fixtures are off: run `pytest -p evalkit`, or add `evalkit = true` to the "
    "pytest ini options ([tool.pytest.ini_options] in pyproject.toml)"
)


class _FixturesOff:
    """Fixtures of evalkit's names that fail saying how to turn the plugin on — instead of pytest's
    "fixture 'evalkit_run' not found" — while the plugin is inactive."""

    @pytest.fixture
    def evalkit_store(self) -> None:
        """Fails: the plugin is off (see :data:`FIXTURES_OFF`)."""
        pytest.fail(FIXTURES_OFF, pytrace=False)

    @pytest.fixture
    def evalkit_run(self) -> None:
        """Fails: the plugin is off (see :data:`FIXTURES_OFF`)."""
        pytest.fail(FIXTURES_OFF, pytrace=False)
