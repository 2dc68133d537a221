"""A generator whose module changes the working directory at import, to ``$EVALKIT_CHDIR_TO``."""

import os

from evalkit.answers import Answer

if os.environ.get("EVALKIT_CHDIR_TO"):
    os.chdir(os.environ["EVALKIT_CHDIR_TO"])


class Generator:
    """Answers ``x``."""

    def __init__(self, model: str | None = None) -> None:
        self.model = model

    def generate(self, request: object) -> Answer:
        """``x``."""
        return Answer(text="x", model="wanderer")
