"""A team's retrieval-augmented app, as evalkit sees it: a generator that retrieves passages with
``evalkit.lexical`` over the standard-library corpus, asks a chat-completions endpoint to answer
from them, and returns the answer with the passages it was given (so the groundedness judge can
check the answer against exactly those passages). ``rag.stdlib`` asks two of the stdlib questions
through it; ``stdlib.asked`` asks the first 50 stdlib questions of any generator, without passages
(bench/realmodel.py uses it to set evalkit's overhead against a real model's own time).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from evalkit import Answer, Assertion, GenerationRequest, GoldenPrompt, GoldenPromptSet
from evalkit_plugins.lexical import LexicalOptions, LexicalRetriever
from evalkit_plugins.openai import OpenAIGenerator, OpenAIOptions
from evalkit_set_stdlib import corpus_path, question_set

QUESTIONS = ("parse-json-string", "read-json-file")


class RagSets:
    """Ships ``rag.stdlib``: stdlib questions answered from retrieved passages."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        asked = {q.id: q for q in question_set().questions if q.id in QUESTIONS}
        prompts = [
            GoldenPrompt(
                id=question_id,
                prompt=asked[question_id].question,
                system_prompt="Answer from the passages you are given, in one or two sentences.",
                assertions=[Assertion.max_words(120)],
            )
            for question_id in QUESTIONS
        ]
        asked_plainly = [
            GoldenPrompt(id=q.id, prompt=q.question, assertions=[Assertion.max_words(150)]) for q in question_set().questions[:50]
        ]
        return [
            GoldenPromptSet(identifier="rag.stdlib", name="RAG over stdlib docs", description="Stdlib questions, answered from retrieved passages.", prompts=prompts),
            GoldenPromptSet(identifier="stdlib.asked", name="Stdlib questions", description="The first 50 stdlib questions, asked plainly.", prompts=asked_plainly),
        ]


class RagApp:
    """Retrieve ``top_k`` passages, then ask the endpoint at ``base_url`` to answer from them."""

    concurrency = 1

    def __init__(self, *, base_url: str, model: str, top_k: int = 3, index_dir: str | None = None, max_tokens: int = 96) -> None:
        self.top_k = top_k
        self._retriever = LexicalRetriever(LexicalOptions(corpus=str(corpus_path()), index_dir=index_dir))
        self._documents = _documents()
        self._chat = OpenAIGenerator(
            OpenAIOptions(base_url=base_url, model=model, api_key_env="EVALKIT_RAG_APP_KEY", temperature=0, max_tokens=max_tokens)
        )

    def generate(self, request: GenerationRequest) -> Answer:
        """Answer ``request.prompt`` from the passages the retriever finds for it."""
        ranked = self._retriever.retrieve(request.prompt, self.top_k)
        ids = [item[0] if isinstance(item, tuple) else getattr(item, "id", item) for item in ranked]
        passages = [f"{doc_id}: {self._documents[doc_id]}" for doc_id in ids if doc_id in self._documents]
        listed = "\n\n".join(f"[{i}] {text}" for i, text in enumerate(passages, start=1))
        prompt = f"Passages:\n{listed}\n\nQuestion: {request.prompt}\nAnswer using only the passages."
        answer = self._chat.generate(GenerationRequest(prompt=prompt, system_prompt=request.system_prompt))
        return attrs.evolve(answer, passages=tuple(passages))


def _documents() -> dict[str, Any]:
    with corpus_path().open(encoding="utf-8") as lines:
        return {doc["id"]: doc["text"][:600] for doc in map(json.loads, lines)}
