"""A grader, a retriever and a generator module that exists (its package raises at import)."""


class Grader:
    """Never created: its package raises first."""


class Retriever:
    """Never created: its package raises first."""


class Generator:
    """Never created: its package raises first."""
