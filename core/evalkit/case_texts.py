"""Prompt, reference and question text from the installed sets, when it is the text a run answered
(for ``evalkit view``, the HTML report and ``evalkit show``).

The store keeps no prompt (and keeps answers only at the ``redacted`` and ``full`` privacy
levels). What a case was asked is read from the set installed here — and shown only when the
case's stored fingerprint (:mod:`evalkit.set_versions`) equals the installed case's: otherwise
the page says that the case has changed since the run. A case stored without a fingerprint (a
run from before fingerprints were kept) is shown with that caveat.

Sets are looked up through the same catalogs ``evalkit run`` and ``evalkit retrieval`` use
(entry points, and the set files of the configuration the viewer was started with), and kept
for :data:`SETS_KEPT_S` seconds, so an edited set file is seen on a later page.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .errors import PLUGIN_FAILURES
from .runs import RunKind

__all__ = ["CaseSource", "CaseText", "InstalledSet", "InstalledSets", "SETS_KEPT_S", "answered_texts"]

#: How long a loaded set is used before it is loaded again, in seconds.
SETS_KEPT_S = 30.0


@attrs.frozen
class CaseText:
    """What a case asks: its messages (role, text) — the system prompt and the prompt, or a
    conversation's turns as :func:`evalkit.conversations.transcript_lines` shows them (a scripted
    one's system turns only: its user turns are in the stored transcript) — its
    reference answer, or a question and the documents that answer it."""

    messages: tuple[tuple[str, str], ...] = ()
    reference: str | None = None
    expected_ids: tuple[str, ...] | None = None
    hard_class: str | None = None


@attrs.frozen
class CaseSource:
    """Whether a case's text can be shown, and the text. ``state`` is ``same`` (the installed case
    is the one answered), ``unchecked`` (the run kept no fingerprint to check it by), ``changed``,
    ``absent`` (no such case in the installed set) or ``not_installed``; ``note`` says so in words."""

    state: str
    text: CaseText | None = None
    note: str = ""

    @property
    def shown(self) -> bool:
        """True when the text is the one answered (or cannot be checked)."""
        return self.text is not None and self.state in ("same", "unchecked")


@attrs.frozen
class InstalledSet:
    """One installed set as loaded at ``loaded_at``: each case's place in the set and fingerprint, and its cases' text.

    ``cases`` holds the set's case objects by id unless the set streams them (then
    :meth:`texts` reads the stream again for the ids asked).
    """

    identifier: str
    kind: RunKind
    order: Mapping[str, int]
    fingerprints: Mapping[str, str]
    golden_set: Any
    cases: Mapping[str, Any] | None = None
    #: When it was loaded (``time.monotonic()``): what a list sorted in its order is kept under.
    loaded_at: float = attrs.field(factory=time.monotonic)

    def texts(self, case_ids: Iterable[str]) -> dict[str, CaseText]:
        """The text of each of ``case_ids`` the set has."""
        wanted = set(case_ids)
        if self.cases is not None:
            found = {case_id: self.cases[case_id] for case_id in wanted if case_id in self.cases}
        else:
            found = {}
            for item in _items(self.golden_set, self.kind):
                if item.id in wanted:
                    found[item.id] = item
                    if len(found) == len(wanted):
                        break
        return {case_id: _text(item, self.kind) for case_id, item in found.items()}

    def sources(self, fingerprints: Mapping[str, str | None]) -> dict[str, CaseSource]:
        """A :class:`CaseSource` per case id, from the fingerprint each case was stored with."""
        texts = self.texts(case_id for case_id, fingerprint in fingerprints.items() if self.fingerprints.get(case_id) and (
            fingerprint is None or fingerprint == self.fingerprints.get(case_id)))  # fmt: skip
        sources = {}
        for case_id, fingerprint in fingerprints.items():
            installed = self.fingerprints.get(case_id)
            if installed is None:
                sources[case_id] = CaseSource("absent", note="the installed set has no case with this id (removed since the run?)")
            elif fingerprint is None:
                sources[case_id] = CaseSource(
                    "unchecked", texts.get(case_id),
                    "from the installed set: the run kept no fingerprint, so the case may have changed since",
                )  # fmt: skip
            elif fingerprint != installed:
                sources[case_id] = CaseSource("changed", note="this case has changed since the run (the installed set holds another version)")
            else:
                sources[case_id] = CaseSource("same", texts.get(case_id))
        return sources


def _items(golden_set: Any, kind: RunKind) -> Iterable[Any]:
    return golden_set.questions if kind is RunKind.RETRIEVAL else golden_set.prompts


def _text(item: Any, kind: RunKind) -> CaseText:
    if kind is RunKind.RETRIEVAL:
        return CaseText(
            messages=(("question", str(item.question)),),
            expected_ids=tuple(str(e) for e in item.expected_document_ids),
            hard_class=item.hard_class,
        )
    messages = []
    if item.system_prompt:
        messages.append(("system", str(item.system_prompt)))
    turns = getattr(item, "messages", ())
    if turns:
        from .conversations import ConversationMode, transcript_lines

        # a scripted conversation's user turns are in the stored transcript, beside the replies
        if item.mode is ConversationMode.SCRIPTED:
            turns = [turn for turn in turns if turn.role == "system"]
        messages.extend(transcript_lines(turns))
    else:
        messages.append(("user", str(item.prompt)))
    return CaseText(messages=tuple(messages), reference=item.reference_text)


def _load(identifier: str, kind: RunKind, config: Any) -> InstalledSet:
    """The set from its catalog, its fingerprints computed; an :class:`~evalkit.errors.EvalkitError`
    (or whatever a provider raised) when it cannot be loaded."""
    from .catalog import prompt_set_catalog, question_set_catalog
    from .prompts import PromptStream
    from .set_versions import case_fingerprint, question_fingerprint

    catalog = (question_set_catalog if kind is RunKind.RETRIEVAL else prompt_set_catalog)(config=config)
    golden_set = catalog.get(identifier).set
    fingerprint = question_fingerprint if kind is RunKind.RETRIEVAL else case_fingerprint
    items = _items(golden_set, kind)
    streamed = isinstance(items, PromptStream)
    order: dict[str, int] = {}
    fingerprints: dict[str, str] = {}
    cases: dict[str, Any] = {}
    for position, item in enumerate(items):
        order.setdefault(item.id, position)
        fingerprints[item.id] = fingerprint(item)
        if not streamed:
            cases[item.id] = item
    return InstalledSet(identifier, kind, order, fingerprints, golden_set, None if streamed else cases)


class InstalledSets:
    """Installed sets by identifier and kind, each loaded once per :data:`SETS_KEPT_S` seconds;
    a set that cannot be loaded is remembered with the reason for as long."""

    def __init__(self, config: Any = None, kept_s: float = SETS_KEPT_S) -> None:
        """Look sets up with ``config`` (see :func:`evalkit.catalog.load_catalog`)."""
        self.config = config
        self.kept_s = kept_s
        self._found: dict[tuple[str, RunKind], tuple[float, InstalledSet | None, str]] = {}
        self._lock = threading.Lock()

    def get(self, identifier: str, kind: RunKind) -> tuple[InstalledSet | None, str]:
        """The set and ``""``, or ``None`` and why it is not installed here."""
        key = (identifier, kind)
        with self._lock:
            found = self._found.get(key)
            if found is not None and time.monotonic() - found[0] < self.kept_s:
                return found[1], found[2]
            try:
                loaded, reason = _load(identifier, kind, self.config), ""
            except PLUGIN_FAILURES as exc:
                loaded, reason = None, f"the set is not installed here ({' '.join(str(exc).split())[:300]})"
            self._found[key] = (time.monotonic(), loaded, reason)
            return loaded, reason

    def sources(self, identifier: str, kind: RunKind, fingerprints: Mapping[str, str | None]) -> dict[str, CaseSource]:
        """Each case's :class:`CaseSource` (see :meth:`InstalledSet.sources`)."""
        installed, reason = self.get(identifier, kind)
        if installed is None:
            return {case_id: CaseSource("not_installed", note=reason) for case_id in fingerprints}
        return installed.sources(fingerprints)


def answered_texts(run: Any, cases: Iterable[Any], config: Any = None) -> dict[str, CaseText]:
    """The text each of a prompt run's ``cases`` was asked, by case id: only where the installed
    case is the one answered (its fingerprint is the stored one). Empty for a retrieval run, or
    when the set is not installed here (looked up with ``config``; the working folder's without)."""
    if run.kind is RunKind.RETRIEVAL:
        return {}
    fingerprints = {case.case_id: case.fingerprint for case in cases}
    if not fingerprints:
        return {}
    sources = InstalledSets(config).sources(run.set_identifier, run.kind, fingerprints)
    return {case_id: source.text for case_id, source in sources.items() if source.shown and source.text is not None}
