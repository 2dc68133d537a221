"""A generator whose module raises at import, with ``$EVALKIT_RAISE_IN=import``."""

from evalkit_raising_plugins import raise_in

raise_in("import")


class Generator:
    """Never made: its module does not import."""
