"""The prompts a run answers: one checked pass over a set, and each later pass held to it.

A run checks, counts and fingerprints a prompt set in one pass over its prompts (the set is never
held whole: a :class:`~evalkit.PromptStream` may yield 100,000 prompts), then answers them on
another: :class:`SetDigest` fingerprints the set a prompt at a time, :class:`PromptOrder` holds
every later pass to the ids the first one saw, and :class:`CaseSelection` is the slice this process
answers (its shard, minus what is stored), filtered lazily.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Collection, Iterable, Iterator, Sized

import attrs

from ...errors import PLUGIN_FAILURES, SetChangedError
from ...jsontext import scalar_texts
from ...prompts import GoldenPrompt, GoldenPromptSet
from ...set_versions import plain_assertion_texts
from ...shapes import exception_text
from ...wording import quoted
from ..placement import Shard

__all__ = ["CaseSelection", "PromptOrder", "SetDigest", "select_cases", "set_fingerprint"]


@attrs.define(eq=False)
class CaseSelection:
    """The prompts this process answers: its shard of the set, minus those already stored.

    Lazy and re-iterable: each pass filters the set's prompts as they come (a
    :class:`~evalkit.PromptStream` is never materialized). ``len()`` is the set's own count when
    nothing is filtered out, else counted in one pass (no list) and remembered.
    """

    prompts: Iterable[GoldenPrompt]
    shard: Shard | None = None
    skip: Collection[str] = frozenset()
    #: The order the set's check saw; each pass is held to it (see :class:`PromptOrder`).
    order: PromptOrder | None = None
    _count: int | None = attrs.field(default=None, init=False)

    def __iter__(self) -> Iterator[GoldenPrompt]:
        shard, skip = self.shard, self.skip
        for prompt in self.prompts if self.order is None else self.order.follow(self.prompts):
            if (shard is None or shard.owns(prompt.id)) and prompt.id not in skip:
                yield prompt

    def __len__(self) -> int:
        if self._count is None:
            if self.shard is None and not self.skip and isinstance(self.prompts, Sized):
                self._count = len(self.prompts)
            else:
                self._count = sum(1 for _ in self)
        return self._count


def select_cases(
    prompts: Iterable[GoldenPrompt], shard: Shard | None, skip: Collection[str], order: PromptOrder | None = None
) -> CaseSelection:
    """The prompts this process answers: its shard, minus those already stored (lazily: see
    :class:`CaseSelection`), held to ``order`` when given."""
    return CaseSelection(prompts, shard, skip, order)


@attrs.define
class PromptOrder:
    """The ids of a set's prompts, in the order one pass saw them, to hold a later pass to it.

    A run checks and fingerprints a set on one pass over its prompts and answers them on another;
    a :class:`~evalkit.PromptStream` must yield the same prompts, in the same order, each time.
    :meth:`see` each id of the first pass; :meth:`follow` then passes a later pass's prompts
    through, raising :class:`~evalkit.errors.SetChangedError` at the first checkpoint (prompts 1,
    2, 4, 8, …) where the ids so far differ, or at its end. Memory: one checkpoint per power of two.
    """

    set_identifier: str
    count: int = 0
    _crc: int = 0
    _checkpoints: dict[int, tuple[int, str]] = attrs.Factory(dict)  # position: (crc so far, id there)

    def see(self, prompt_id: str) -> None:
        """Take the next id of the first pass."""
        self._crc = _crc_with(self._crc, prompt_id)
        self.count += 1
        if self.count & (self.count - 1) == 0:
            self._checkpoints[self.count] = (self._crc, prompt_id)

    def follow(self, prompts: Iterable[GoldenPrompt]) -> Iterator[GoldenPrompt]:
        """``prompts``, each checked against the first pass before it is yielded."""
        crc = position = 0
        produced = iter(prompts)
        while True:
            try:
                prompt = next(produced)
            except StopIteration:
                break
            except PLUGIN_FAILURES as exc:  # the producer failed on this pass (it did not on the check's)
                self._changed(f"producing prompt #{position + 1:,} raised {exception_text(exc)}")
            crc = _crc_with(crc, getattr(prompt, "id", prompt))
            position += 1
            if position & (position - 1) == 0:
                checked = self._checkpoints.get(position)
                if checked is None or checked[0] != crc:
                    now = str(getattr(prompt, "id", prompt))
                    then = f'"{checked[1]}"' if checked is not None else "none"
                    shown = f' (#{position:,} is "{now}" now, {then} when checked)' if f'"{now}"' != then else ""
                    self._changed(f"{_differ(position // 2 + 1, position)}{shown}")
            yield prompt
        if position != self.count:
            self._changed(f"it yielded {position:,} prompt{'s' * (position != 1)} this time, {self.count:,} when checked")
        if crc != self._crc:
            self._changed(_differ(_last_power(position) + 1, position))

    def _changed(self, where: str) -> None:
        raise SetChangedError(
            f'set {quoted(self.set_identifier)} changed while it ran: its prompts are not the ones checked '
            f"before the run began ({where}); a PromptStream must yield the same prompts, in the same order, every time"
        )


def _crc_with(crc: int, prompt_id: object) -> int:
    text = prompt_id if isinstance(prompt_id, str) else repr(prompt_id)  # a stray on a later pass differs
    return zlib.crc32((text + "\x00").encode("utf-8", "surrogatepass"), crc)


def _differ(first: int, last: int) -> str:
    return f"prompt #{last:,} differs" if first == last else f"prompts #{first:,} to #{last:,} differ"


def _last_power(number: int) -> int:
    """The largest power of two not above ``number`` (``number`` ≥ 1)."""
    return 1 << (number.bit_length() - 1)


class SetDigest:
    """:func:`set_fingerprint` built a prompt at a time, so it can share a pass over the prompts.

    Feed it every prompt of the set, in order, with :meth:`add`; :meth:`fingerprint` gives the
    digest of those prompts under the set's other fields. Nothing is serialized before the first
    prompt is added, so a set that turns out to be invalid is refused by its checks first.
    """

    _MARKER = '"prompts":[]'

    def __init__(self, golden_set: GoldenPromptSet) -> None:
        from ...convert import dumps

        self._dumps = dumps
        self._set: GoldenPromptSet | None = golden_set
        self._digest = hashlib.sha256()
        self._added = 0
        self._tail = ""
        self._whole: GoldenPromptSet | None = None  # not the expected shape: the whole text is hashed

    def _start(self) -> None:
        golden_set, self._set = self._set, None
        if golden_set is None:
            return
        head, found, self._tail = self._dumps(attrs.evolve(golden_set, prompts=())).partition(self._MARKER)
        if found:
            self._digest.update((head + '"prompts":[').encode("utf-8", "surrogatepass"))
        else:
            self._whole = golden_set

    def add(self, prompt: GoldenPrompt) -> None:
        """Hash the next prompt of the set."""
        if self._set is not None:
            self._start()
        if self._whole is None:
            text = _plain_prompt_json(prompt) or self._dumps(prompt)
            self._digest.update(("," * bool(self._added) + text).encode("utf-8", "surrogatepass"))
            self._added += 1

    def fingerprint(self) -> str:
        """``sha256:`` and 32 hex digits of the set's compact JSON, the prompts added so far in it."""
        self._start()
        if self._whole is not None:
            return "sha256:" + hashlib.sha256(self._dumps(self._whole).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        digest = self._digest.copy()
        digest.update(("]" + self._tail).encode("utf-8", "surrogatepass"))
        return "sha256:" + digest.hexdigest()[:32]


def _plain_prompt_json(prompt: GoldenPrompt) -> str | None:
    """``evalkit.convert.dumps(prompt)`` written directly for the usual prompt (every field,
    assertion value and tag a plain scalar, the reference a string or nothing); ``None`` for any
    other, which goes through the converter. Both give the same text (tests pin it)."""
    assertions = plain_assertion_texts(prompt, ascii=False)
    if assertions is None:
        return None
    tags = scalar_texts(prompt.tags)
    fields = scalar_texts((prompt.id, prompt.prompt, prompt.reference, prompt.system_prompt))
    if tags is None or fields is None:
        return None
    case_id, text, reference, system = fields
    written = ",".join([f'{{"kind":{kind},"value":{value},"name":{name}}}' for kind, value, name in assertions])
    return (
        f'{{"id":{case_id},"prompt":{text},"assertions":[{written}],"reference":{reference},'
        f'"system_prompt":{system},"tags":[{",".join(tags)}]}}'  # type: ignore[arg-type]
    )


def set_fingerprint(golden_set: GoldenPromptSet) -> str:
    """A digest of the set's content, so history can tell when a set changed under its name.

    The digest of the set's compact JSON (:func:`evalkit.convert.dumps`), hashed a prompt at a
    time (:class:`SetDigest`): the JSON of a 100,000-prompt set is never built whole (it took
    150 MiB at its peak), and a :class:`~evalkit.PromptStream` gives the digest the same prompts
    in a tuple give.
    """
    digest = SetDigest(golden_set)
    for prompt in golden_set.prompts:
        digest.add(prompt)
    return digest.fingerprint()
