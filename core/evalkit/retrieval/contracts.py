"""What evalkit expects of retrievers and of question-set providers, as runtime-checkable protocols.

A retriever is whatever an ``evalkit.retrievers`` entry point's factory returns when called with
a deployment's options; only :class:`Retriever` is required. It returns document ids best first,
either plain (``["d1", "d2"]``), as ``(id, score)`` pairs or as :class:`ScoredDocument` results;
scores are kept with the run's rankings (``--json``, the store at ``full`` privacy, TREC run
files) and never change the order the retriever gave. The other protocols are optional
capabilities, each checked with ``isinstance``:

* :class:`RetrievalProvenanceProvider` — declares corpus, model, chunking and pipeline revisions,
  so runs can be compared (without it every run's baseline state is ``unknown``);
* :class:`PreparedRetriever` — builds or opens its index once before the first question, so that
  work is not timed as the first question's latency;
* :class:`ClosingRetriever` — releases files or connections after the run;
* :class:`ThreadSafeRetriever` — may be asked several questions at once (``--concurrency N``);
* :class:`DocumentTexts` — hands out the text of a document it returned, so a relevance judge can
  grade the documents people have not judged (``evalkit retrieval --judge-unjudged NAME``);
* :class:`evalkit.components.PathOptions` (on the factory) — names the options that are
  file-system paths, so relative paths in the project configuration are resolved against the
  configuration's folder (generators use the same capability).

A question-set provider may offer :class:`DeploymentDefaults`: deployments that work without any
configuration file (the packaged corpus of a demo set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from evalkit.questions import RetrievalProvenance

__all__ = [
    "ClosingRetriever",
    "DeploymentDefaults",
    "DocumentTexts",
    "PreparedRetriever",
    "RetrievalProvenanceProvider",
    "Retriever",
    "ScoredDocument",
    "ThreadSafeRetriever",
]


@attrs.frozen
class ScoredDocument:
    """One retrieved document with the retriever's score for it (higher is better)."""

    id: str
    score: float


@runtime_checkable
class Retriever(Protocol):
    """The retrieval step under test: a question in, ranked document ids out."""

    def retrieve(self, question: str, limit: int) -> Sequence[str | tuple[str, float] | ScoredDocument]:
        """At most ``limit`` documents, best first, in the identity scheme of the set's labels.

        Plain ids, ``(id, score)`` pairs or :class:`ScoredDocument` results, one kind per ranking.
        """
        ...


@runtime_checkable
class ThreadSafeRetriever(Protocol):
    """A retriever that declares whether ``retrieve`` may run in several threads at once.

    ``--concurrency N`` above 1 is refused for a retriever that does not declare
    ``thread_safe = True`` (a network client, a locked index); evalkit never guesses.
    """

    thread_safe: bool


@runtime_checkable
class RetrievalProvenanceProvider(Protocol):
    """A retriever that declares what it searches; asked once per run, before any question."""

    def provenance(self) -> RetrievalProvenance:
        """Corpus revision, model revision, chunking and pipeline identity (and execution revision)."""
        ...


@runtime_checkable
class PreparedRetriever(Protocol):
    """A retriever with set-up work (building an index) evalkit runs once, untimed, before the questions."""

    def prepare(self) -> object:
        """Get ready to answer; the return value is ignored."""
        ...


@runtime_checkable
class DocumentTexts(Protocol):
    """A retriever that can show what a document says (``--judge-unjudged`` needs it)."""

    def document_text(self, document_id: str) -> str | None:
        """The text of the document ``document_id`` (title and body), ``None`` when it has none."""
        ...


@runtime_checkable
class ClosingRetriever(Protocol):
    """A retriever holding files or connections, closed after the run."""

    def close(self) -> None:
        """Release what the retriever holds."""
        ...


@runtime_checkable
class DeploymentDefaults(Protocol):
    """A question-set provider that ships ready-made deployments for its sets.

    ``{deployment name: {retriever id: options}}``; a deployment that configures one retriever
    runs that retriever when none is named. A project deployment of the same name is merged
    with the provider's per retriever: the project's options for a retriever replace the
    provider's for that retriever, the provider's other retrievers stay.
    """

    def default_deployments(self) -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
        """The provider's deployments."""
        ...
