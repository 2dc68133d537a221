"""A set provider and a generator that write hostile text through Python's standard streams, as a
careless plugin or a library it uses would: at import, when asked for their sets, and for every
answer — ``print()``, ``sys.stderr.write``, a ``logging.StreamHandler`` made while answering, bytes
through ``sys.stdout.buffer``, a line written in two parts — and the generator prints its own key."""

from __future__ import annotations

import logging
import sys

from evalkit import Answer, Assertion, GenerationRequest, GoldenPrompt, GoldenPromptSet

#: What a terminal or a CI runner acts on: a window title (OSC 0), a screen clear, an OSC 8
#: hyperlink, a bidi override, a carriage return that overwrites the line, a GitHub Actions and
#: an Azure Pipelines command, and a lone surrogate (an undecodable byte).
HOSTILE = "\x1b]0;title\x07\x1b[2J\x1b]8;;http://evil.invalid\x07link\x1b]8;;\x07 \u202egnp.exe\rover \udcff"
#: How it is shown once made safe.
SHOWN = "\\x1b]0;title\\x07\\x1b[2J\\x1b]8;;http://evil.invalid\\x07link\\x1b]8;;\\x07 \\u202egnp.exe\\x0dover \\udcff"
#: A CI runner's commands, each at the start of a line.
COMMANDS = "::set-env name=PATH::/tmp/evil\n##vso[task.setvariable variable=x]y"
#: The key :class:`LoudGenerator` declares as its secret, and prints.
KEY = "sk-loud-0123456789abcdef0123"

print(f"loud: imported {HOSTILE}")  # noqa: T201
sys.stderr.write(f"loud: stderr at import\n{COMMANDS}\n")


class LoudSets:
    """Ships ``loud.set``, printing when asked."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """``loud.set``: two prompts the loud generator passes."""
        print(f"loud: listing sets {HOSTILE}")  # noqa: T201
        return [
            GoldenPromptSet(
                identifier="loud.set", name="A set from a loud package",
                prompts=[GoldenPrompt(id=f"l{i}", prompt="Say Paris", assertions=[Assertion.contains("Paris")]) for i in (1, 2)],
            )
        ]


class LoudGenerator:
    """Answers "Paris", writing hostile text and its own key through every stream it finds."""

    def __init__(self, model: str | None = None, key: str = KEY) -> None:
        self.model = model
        self.key = key

    def secret_values(self) -> tuple[str, ...]:
        """The credential it sends."""
        return (self.key,)

    def generate(self, request: GenerationRequest) -> Answer:
        """"Paris", with noise on every stream."""
        print(f"loud: answering {request.case_id}\twith key {self.key}")  # noqa: T201
        sys.stderr.write(f"loud: half a line, {self.key[:10]}")
        sys.stderr.write(f"{self.key[10:]} and its end\n")
        sys.stdout.buffer.write(f"loud: bytes {HOSTILE}\n".encode("utf-8", "surrogateescape"))
        handler = logging.StreamHandler()  # made now: it writes to sys.stderr as it is meanwhile
        logger = logging.getLogger(f"loud.{request.case_id}")  # one handler a logger: cases run at once
        logger.addHandler(handler)
        try:
            logger.warning("loud: logged %s", HOSTILE)
        finally:
            logger.removeHandler(handler)
        return Answer(text="Paris", model="loud-model")
