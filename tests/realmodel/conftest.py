"""The real-model fixtures (see llama_support.py)."""

from tests.realmodel.llama_support import llama_server, llama_tools_server  # noqa: F401  (fixtures, used by name)
