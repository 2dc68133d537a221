"""The ``reference`` generator: answers every prompt with the set's own declared reference."""

from __future__ import annotations

import attrs
from evalkit import Answer, GenerationRequest
from evalkit.errors import GenerationError
from evalkit.options import option, text


@attrs.frozen
class ReferenceOptions:
    """The options of a ``reference`` provider instance."""

    model: str = option("the model name reported for every answer", default="reference", validator=text())


class ReferenceGenerator:
    """Answers with each prompt's reference: a self-check that a set's assertions fit its references.

    The kernel hands it the set about to run through ``bind_set`` (the ``SetAware`` capability);
    :meth:`with_references` makes one for use outside a run.
    """

    concurrency = 1
    Options = ReferenceOptions

    def __init__(self, options: ReferenceOptions) -> None:
        self.model = options.model
        self._by_prompt: dict[str, str | Answer | None] = {}

    @classmethod
    def with_references(cls, references: dict[str, str], model: str = "reference") -> ReferenceGenerator:
        """A generator answering the prompts ``references`` maps ids of, outside a run."""
        generator = cls(ReferenceOptions(model))
        generator._by_prompt.update(references)
        return generator

    def bind_set(self, golden_set: object) -> None:
        """Learn the references of the set about to run (called by the kernel before the run)."""
        for prompt in getattr(golden_set, "prompts", ()):
            self._by_prompt[prompt.id] = prompt.reference

    def generate(self, request: GenerationRequest) -> Answer:
        """The reference of the prompt, or :class:`GenerationError` when it declares none."""
        reference = self._by_prompt.get(request.case_id or "")
        if isinstance(reference, Answer):
            return attrs.evolve(reference, model=self.model)
        if not reference:
            raise GenerationError("this prompt declares no reference, so the reference generator cannot answer it")
        return Answer(text=reference, model=self.model)
