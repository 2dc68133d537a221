"""The real-model fixtures (see llama_support.py)."""

from tests.realmodel.llama_support import llama_server  # noqa: F401  (a fixture, used by name)
