"""A retriever module in a namespace package (a folder without __init__.py)."""


class Retriever:
    """A retriever that finds nothing."""

    def retrieve(self, question, limit):  # noqa: ANN001, ANN201
        return []
