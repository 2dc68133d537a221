"""Labelled questions over the example application's help pages, with the pages themselves."""

import json
from importlib import resources

from evalkit import GoldenQuestion, GoldenQuestionSet, QuestionForm


def corpus_path():
    """The help pages as JSON lines ({"id", "title", "text"}), shipped in the package."""
    return str(resources.files(__name__).joinpath("pages.jsonl"))


class DocsQuestions:
    """evalkit calls DocsQuestions() and then golden_question_sets()."""

    def golden_question_sets(self):
        """One set; an empty expected list means nothing in the pages answers the question."""
        return [
            GoldenQuestionSet(
                identifier="example_docs.help",
                name="Help pages",
                description="Questions users ask, labelled with the pages that answer them.",
                questions=[
                    GoldenQuestion("reset", "How do I reset my password?", expected_document_ids=["account/password"]),
                    GoldenQuestion(
                        "locked-out", "I can't get into my account any more", form=QuestionForm.GAP,
                        expected_document_ids=["account/password"], hard_class="paraphrase",
                    ),
                    GoldenQuestion("invoice", "Where do I download an invoice?", expected_document_ids=["billing/invoices"]),
                    GoldenQuestion("weather", "What is the weather tomorrow?", expected_document_ids=[]),
                ],
            )
        ]

    def default_deployments(self):
        """A deployment that works without configuration: the example retriever over the shipped pages."""
        return {"packaged": {"example.keywords": {"pages": corpus_path()}}}


def pages():
    """The pages as dicts (for tests and the retriever example)."""
    with open(corpus_path(), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
