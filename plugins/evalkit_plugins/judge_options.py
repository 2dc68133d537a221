"""The options every judge grader takes (:class:`JudgeOptions`). Its own module so that the
``deterministic`` grader can offer them without loading the judge machinery
(:mod:`evalkit_plugins._judge`), which a run whose set has no rubric checks never uses."""

from __future__ import annotations

import attrs
from evalkit.config import MAX_REPEATS
from evalkit.options import number, option, text, whole

__all__ = ["JudgeOptions"]


@attrs.frozen
class JudgeOptions:
    """The options every judge grader takes (``--judge``, ``--judge-repeats``, ``--allow-self-judge``)."""

    judge: str | None = option(
        "the configured provider instance that judges (default: the config's judge)", default=None,
        validator=attrs.validators.optional(text()),
    )
    repeats: int = option(
        "how often the judge is asked per case (its self-agreement is reported)", default=1,
        validator=whole(at_least=1, at_most=MAX_REPEATS),
    )  # fmt: skip
    allow_self_judge: bool = option("let the instance under test judge itself", default=False)
    prompt_version: int | None = option(
        "pin an older released judge prompt (default: the newest)", default=None, validator=attrs.validators.optional(whole(at_least=1))
    )
    temperature: float = option(
        "the judge's sampling temperature, 0 to 2 (above 0, repeats measure its stability)", default=0.0,
        validator=number(at_least=0, at_most=2),
    )
