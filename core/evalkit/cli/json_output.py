"""The ``--json`` boundary: every JSON document evalkit prints on standard output is written here.

The text is scrubbed of the secrets of the components built in this process (in every form
:func:`evalkit.privacy.remove_secrets` finds, JSON-escaped ones included), and the characters a
terminal would act on that JSON leaves raw (DEL, C1 controls, bidirectional overrides, line
separators, lone surrogates) are written as ``\\uXXXX`` escapes
(:func:`evalkit.printable.json_visible`): the document parses to the same data. A 100,000-case
document is written a batch at a time (:func:`print_json_streamed`), never held whole.
"""

from __future__ import annotations

import json

from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["COMPACT_JSON_CASES", "STREAMED_BATCH", "document_cut", "json_line", "print_json", "print_json_streamed", "prints_compact"]

#: A streamed document is being written: its head is out, its end not yet.
_streaming = False


def document_cut(*, forget: bool = False) -> bool:
    """Whether a streamed document (:func:`print_json_streamed`) was begun and never ended (an
    error cut it short); ``forget`` starts afresh, for the next command in this process."""
    global _streaming
    if forget:
        _streaming = False
    return _streaming


#: A ``--json`` document listing more cases than this is printed compact (one line, no
#: indentation): the indenting encoder is pure Python, about 100 times slower than the compact one.
COMPACT_JSON_CASES = 1000


def prints_compact(case_count: int) -> bool:
    """Whether a run of ``case_count`` cases prints its ``--json`` document compact, case by case
    (more than :data:`COMPACT_JSON_CASES`), rather than whole and indented."""
    return case_count > COMPACT_JSON_CASES


#: How many elements of a streamed list are encoded by one ``json.dumps`` call (one call per
#: element cost more than the encoding itself).
STREAMED_BATCH = 500


def print_json(document: Any, *, compact: bool = False) -> None:
    """Print one machine-readable JSON document on stdout, indented unless ``compact``.

    Strings are scrubbed of secrets (as every printed line is), and characters a terminal would
    act on that JSON leaves raw (DEL, C1 controls, bidirectional overrides, line separators, lone
    surrogates, zero-width characters) are written as ``\\uXXXX`` escapes: the document parses to
    the same data.
    """
    writer = _JsonWriter(compact)
    stdout().write(writer.text(document) + "\n")


def json_line(document: Any) -> str:
    """The line :func:`print_json` writes for ``document`` compact (scrubbed, escaped, ending in a
    newline), for a writer that cannot go through the stream."""
    return _JsonWriter(compact=True).text(document) + "\n"


def print_json_streamed(
    document: dict[str, Any], key: str, items: Any, *, encoded: bool = False, batch: int = STREAMED_BATCH
) -> None:
    """Print ``document`` compact, with ``document[key]`` a list written from the iterable
    ``items`` one element at a time (each scrubbed and escaped as :func:`print_json` does): a
    100,000-case ``--json`` never holds the whole list, nor the whole text, in memory.

    ``encoded``: each item is already the compact JSON text of its element (as ``json.dumps(item,
    separators=(",", ":"), ensure_ascii=False)`` writes it), or of several joined by commas; it is
    scrubbed and escaped the same way. ``batch``: how many items one write takes.
    """
    writer = _JsonWriter(compact=True)
    marker = "@evalkit:streamed-list@"
    head, separator, tail = writer.text({**document, key: marker}).partition(json.dumps(marker))
    if not separator:  # a secret or an escape changed the marker: print the list whole
        elements = [json.loads(item) for item in items] if encoded else list(items)
        print_json({**document, key: elements}, compact=True)
        return
    import itertools

    global _streaming
    out = stdout()
    _streaming = True
    out.write(head + "[")
    separator = ""
    items = iter(items)
    while group := list(itertools.islice(items, batch)):
        out.write(separator + (writer.encoded_text(",".join(group)) if encoded else writer.text(group)[1:-1]))
        separator = ","
    out.write("]" + tail + "\n")
    _streaming = False


class _JsonWriter:
    """JSON text of one value, scrubbed of secrets and with what a terminal acts on escaped."""

    def __init__(self, compact: bool) -> None:
        from ..privacy import is_scrubbable, secrets_to_hide

        self.compact = compact
        self.secrets = [secret for secret in secrets_to_hide() if isinstance(secret, str) and is_scrubbable(secret)]
        self.escaped = [json.dumps(secret, ensure_ascii=False)[1:-1] for secret in self.secrets]

    def dumped(self, value: Any) -> str:
        from ..jsontext import document_text

        return document_text(value, indent=None if self.compact else 2)

    def scrubbed(self, value: Any) -> Any:
        from ..privacy import remove_secrets

        if isinstance(value, str):
            return remove_secrets(value, self.secrets)
        if isinstance(value, dict):
            return {self.scrubbed(k): self.scrubbed(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrubbed(v) for v in value]
        return value

    def text(self, value: Any) -> str:
        """``value`` as JSON text, scrubbed and escaped."""
        from ..printable import json_visible

        text = self.dumped(value)
        # A secret inside a string shows in the text as its JSON-escaped form; only when one does is
        # the value walked and scrubbed string by string (a walk in Python, slow on 100,000 cases).
        if any(secret in text for secret in self.escaped):
            text = self.dumped(self.scrubbed(value))
        # json.dumps already escapes the C0 controls; the rest of what a terminal acts on is escaped here.
        return json_visible(text)

    def encoded_text(self, text: str) -> str:
        """JSON text of compact elements joined by commas (what this writer's compact
        :meth:`dumped` wrote for them: :func:`~evalkit.cli.render.case_json`, whose text is
        :func:`~evalkit.jsontext.document_text`'s, null for NaN included), scrubbed and escaped as
        :meth:`text` does."""
        if any(secret in text for secret in self.escaped):
            return self.text(json.loads(f"[{text}]"))[1:-1]
        from ..printable import json_visible

        return json_visible(text)
