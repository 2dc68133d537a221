"""A retriever that ranks help pages by shared words, and declares what it searches (provenance)."""

import hashlib
import json
import re

import attrs
from evalkit import RetrievalProvenance
from evalkit.options import option
from evalkit.questions import NOT_APPLICABLE

WORD = re.compile(r"[a-z0-9]+")


@attrs.frozen
class KeywordOptions:
    """A deployment's options for this retriever."""

    # path=True: relative to evalkit.toml, and it must lie inside the project.
    pages: str = option("JSON lines of help pages (id, title, text)", path=True)


class KeywordRetriever:
    """Ranks the pages of ``pages`` (JSON lines with id, title, text) by words shared with the question."""

    Options = KeywordOptions

    def __init__(self, options: KeywordOptions):
        with open(options.pages, "rb") as fh:
            raw = fh.read()
        self.revision = "sha256:" + hashlib.sha256(raw).hexdigest()[:16]
        self.pages = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
        self.words = {p["id"]: set(WORD.findall((p["title"] + " " + p["text"]).lower())) for p in self.pages}

    def provenance(self):
        """Asked once per run: the corpus revision and the pipeline make runs comparable."""
        return RetrievalProvenance(
            corpus_revision=self.revision,        # changes when the pages change
            model_revision=NOT_APPLICABLE,        # no embedding model
            chunking_identity="whole-page:v1",
            pipeline_identity="shared-words:v1",  # bump when the ranking changes
        )

    def retrieve(self, question, limit):
        """At most ``limit`` page ids, best first; nothing when no word is shared."""
        asked = set(WORD.findall(question.lower()))
        scored = [(len(asked & words), page_id) for page_id, words in self.words.items()]
        ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [page_id for _, page_id in ranked[:limit]]
