"""A kit for plugin authors: contract checks to call from a plugin's own test suite, and a pytest plugin.

::

    from evalkit.testing import check_generator, check_prompt_set_provider

    def test_my_sets_follow_the_contract():
        check_prompt_set_provider(MySets)

    def test_my_generator_follows_the_contract(tmp_path):
        check_generator(MyApp, base_url="http://127.0.0.1:8080")

Each check drives the kernel's own rules (set validation, provenance and identity rules, the
capability Protocols, the real runner and store) and raises one ``AssertionError`` listing every
problem it found. The pytest plugin (``-p evalkit``, or ``evalkit = true`` in the pytest ini
options) adds the ``evalkit_store`` and ``evalkit_run`` fixtures and ``--evalkit-set``.
"""

from __future__ import annotations

from .components import KIT_SET, check_generator, check_grader, check_retriever
from .providers import check_prompt_set_provider, check_question_set_provider
from .repository import check_repository

__all__ = [
    "KIT_SET",
    "check_generator",
    "check_grader",
    "check_prompt_set_provider",
    "check_question_set_provider",
    "check_repository",
    "check_retriever",
]
