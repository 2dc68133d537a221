"""A generator that calls the application under test in process: "package.module:function"."""

import importlib

import attrs
from evalkit import Answer
from evalkit.errors import ConfigError, GenerationError
from evalkit.options import option, text


@attrs.frozen
class InProcessAppOptions:
    """The options of an example_app provider instance: one field each, declared once."""

    app: str = option('the function that answers, "package.module:function"', validator=text())
    model: str = option("the version the application reports (the serving identity's reported model)", validator=text())


class InProcessApp:
    """Answers each prompt by calling the application's own function.

    ``app`` names a function ``(prompt, system_prompt) -> dict`` with ``text`` and optionally
    ``abstained`` and ``sources``; ``model`` is the version the application reports, which evalkit
    records as the serving identity's reported model.
    """

    Options = InProcessAppOptions  # evalkit checks the instance's table against it, then passes it in
    concurrency = 4  # optional: how many prompts evalkit keeps in flight

    def __init__(self, options: InProcessAppOptions):
        module_name, _, function_name = options.app.partition(":")
        try:
            self.answer = getattr(importlib.import_module(module_name), function_name)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"example_app: cannot import app {options.app!r}: {exc}") from None
        self.model = options.model

    def generate(self, request):
        """One prompt in, one evalkit.Answer out; a failure of the application is a GenerationError."""
        try:
            reply = self.answer(request.prompt, request.system_prompt)
        except Exception as exc:
            raise GenerationError(f"the application failed: {type(exc).__name__}: {exc}") from exc
        return Answer(
            text=reply["text"],
            model=self.model,
            abstained=reply.get("abstained"),
            citations=reply.get("sources", ()),
        )


def office_assistant(prompt, system_prompt=None):
    """The example application: a rule-based office assistant."""
    text = prompt.lower()
    if "colleague" in text:
        return {"text": "I can't share other people's claims.", "abstained": True}
    if "receipt" in text:
        return {"text": "Within 30 days of the purchase.", "sources": ["expenses-policy#3.2"], "abstained": False}
    if "open" in text:
        return {"text": "Monday to Friday, 9am to 5pm.", "abstained": False}
    return {"text": "ACKNOWLEDGED" if "acknowledged" in text else "I don't know.", "abstained": False}
