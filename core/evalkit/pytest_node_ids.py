"""The set tests a pytest session names by node id on its command line (``pytest
'evalkit-set:SET::CASE'``, as ``-v`` prints them), read by the plugin's entry module
(:mod:`evalkit.pytest_plugin`), which takes them out of pytest's arguments, and by the set
collection (:mod:`evalkit.testing.pytest_fixtures`), which selects them. Imports nothing but pytest:
the entry module must stay that light.
"""

from __future__ import annotations

import pytest

__all__ = ["NODE_ID_PREFIX", "SELECTED_NODE_IDS", "selected_node_ids"]

#: How the node id of every test the plugin makes from a set begins: ``evalkit-set:SET::CASE``.
NODE_ID_PREFIX = "evalkit-set:"

#: The command-line arguments that named set tests by node id, taken out of ``config.args``.
SELECTED_NODE_IDS = pytest.StashKey[tuple[str, ...]]()


def _names_a_set_test(config: pytest.Config, arg: str) -> bool:
    """True when the command-line argument ``arg`` is the node id of a set's test (or of a whole
    set, ``evalkit-set:SET``), not a path: a file or folder of that name is left to pytest. A name
    the system cannot even look up (longer than a file name may be) is no file: its ``OSError``
    was pytest's INTERNALERROR."""
    if not arg.startswith(NODE_ID_PREFIX):
        return False
    try:
        return not (config.invocation_params.dir / arg.split("::", 1)[0]).exists()
    except (OSError, ValueError):
        return True


def selected_node_ids(config: pytest.Config) -> tuple[str, ...]:
    """The node ids of set tests given on the command line (``pytest 'evalkit-set:SET::CASE'``, as
    ``-v`` prints them), in the order given."""
    if SELECTED_NODE_IDS in config.stash:
        return config.stash[SELECTED_NODE_IDS]
    return tuple(arg for arg in config.args if _names_a_set_test(config, arg))
