"""Provider tables the CLI tests write into a project's ``evalkit.toml``."""

from __future__ import annotations


def openai_provider_table(name: str, base_url: str, model: str) -> str:
    """A ``[providers.NAME]`` table for the ``openai`` adapter at ``base_url``: one attempt, no API key.

    The tests' local chat servers fail on purpose; one attempt keeps a fault from being retried.
    """
    return f"""[providers.{name}]
adapter = "openai"
base_url = "{base_url}"
model = "{model}"
max_attempts = 1
api_key_env = ""
"""
