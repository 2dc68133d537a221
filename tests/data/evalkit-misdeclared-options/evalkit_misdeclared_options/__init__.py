"""Plugins whose options declaration is broken, whatever the configuration says.

``Options`` that is a plain class (not attrs) used to be passed over as "declares no options", so
the factory was called without the object it asks for (a ``TypeError`` quoted as its own failure);
a default its own validator refuses was reported as if the user's table were wrong.
"""

import attrs
from evalkit import Answer, Grading
from evalkit.options import option, whole


@attrs.frozen
class CountOptions:
    """``count`` defaults to 0, which its validator refuses."""

    count: int = option("how many", default=0, validator=whole(at_least=1))


class PlainOptions:
    """Looks like an options class, but is not an attrs class."""

    count: int = 3


class BadDefaultGrader:
    """A grader whose only option's default fails its validator."""

    Options = CountOptions
    yardstick = "misdeclared:v1"

    def __init__(self, options: CountOptions):
        self.options = options

    def grade(self, prompt, answer):
        """Always passes."""
        return Grading(1.0, True, yardstick=self.yardstick)


class PlainOptionsGrader(BadDefaultGrader):
    """A grader whose ``Options`` is not an attrs class."""

    Options = PlainOptions

    def __init__(self, options):
        self.options = options


class PlainOptionsGenerator:
    """A generator whose ``Options`` is not an attrs class."""

    Options = PlainOptions

    def __init__(self, options):
        self.options = options

    def generate(self, request):
        """Never reached."""
        return Answer(text="x", model="m")


class BadDefaultRetriever:
    """A retriever whose option's default fails its validator."""

    Options = CountOptions

    def __init__(self, options: CountOptions):
        self.options = options

    def retrieve(self, question, limit):
        """Never reached."""
        return []


class BadDefaultSets:
    """A set provider whose option's default fails its validator."""

    Options = CountOptions

    def __init__(self, options: CountOptions):
        self.options = options

    def golden_prompt_sets(self):
        """Never reached."""
        return []


@attrs.frozen
class FolderOptions:
    """``folder`` is declared a string and defaults to a number."""

    folder: str = option("where the notes are", default=5)


class WrongTypeDefaultGrader(BadDefaultGrader):
    """A grader whose option's default is not of the option's declared type."""

    Options = FolderOptions
