"""What evalkit expects of retrievers and of question-set providers, as runtime-checkable protocols.

A retriever is whatever an ``evalkit.retrievers`` entry point's factory returns when called with
a deployment's options; only :class:`Retriever` is required. The other protocols are optional
capabilities, each checked with ``isinstance``:

* :class:`RetrievalProvenanceProvider` — declares corpus, model, chunking and pipeline revisions,
  so runs can be compared (without it every run's baseline state is ``unknown``);
* :class:`PreparedRetriever` — builds or opens its index once before the first question, so that
  work is not timed as the first question's latency;
* :class:`ClosingRetriever` — releases files or connections after the run;
* :class:`evalkit.components.PathOptions` (on the factory) — names the options that are
  file-system paths, so relative paths in the project configuration are resolved against the
  configuration's folder (generators use the same capability).

A question-set provider may offer :class:`DeploymentDefaults`: deployments that work without any
configuration file (the packaged corpus of a demo set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from evalkit.questions import RetrievalProvenance

__all__ = [
    "ClosingRetriever",
    "DeploymentDefaults",
    "PreparedRetriever",
    "RetrievalProvenanceProvider",
    "Retriever",
]


@runtime_checkable
class Retriever(Protocol):
    """The retrieval step under test: a question in, ranked document ids out."""

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        """At most ``limit`` document ids, best first, in the identity scheme of the set's labels."""
        ...


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
class ClosingRetriever(Protocol):
    """A retriever holding files or connections, closed after the run."""

    def close(self) -> None:
        """Release what the retriever holds."""
        ...


@runtime_checkable
class DeploymentDefaults(Protocol):
    """A question-set provider that ships ready-made deployments for its sets.

    ``{deployment name: {retriever id: options}}``; a deployment of the same name in the project
    configuration replaces the provider's.
    """

    def default_deployments(self) -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
        """The provider's deployments."""
        ...
