"""A grader module that exists (its package raises at import)."""


class Grader:
    """Never created: its package raises first."""
