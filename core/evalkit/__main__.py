"""``python -m evalkit`` is ``evalkit``."""

from .cli import entry

entry()
