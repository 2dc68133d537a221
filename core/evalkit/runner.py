"""The run pipeline: answer every prompt concurrently, grade, persist as cases finish, decide identity.

The runner keeps at most ``concurrency`` prompts in flight, pulling them from one shared iterator
(never one task per case up front), so a 100,000-case set costs no more memory than a small one.
Each finished case is committed as it finishes (the cases finishing in one turn of the event loop
share a transaction), so a crash loses no finished case and ``--resume`` answers only what is
missing.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import secrets
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any

import attrs

from .answers import Answer, GenerationRequest, ServingIdentity, answer_problems
from .bounded import BoundedCalls
from .checks import AssertionKind
from .components import MAX_CONCURRENCY, AssertionKindsAware, AsyncGrader, BoundGenerator, SecretHolder, ServingEvidence
from .config import DEFAULT_GRADE_TIMEOUT_S
from .errors import PLUGIN_FAILURES, GenerationError
from .grading import Grading, grading_problems
from .identity import identity_problems
from .jsontext import scalar_texts
from .printable import visible
from .prompts import GoldenPrompt, GoldenPromptSet
from .runs import CaseResult, Run, RunStatus
from .set_versions import case_fingerprint, plain_assertion_texts
from .timeouts import TimeLimitExceeded, alarm_bounded, alarm_scope, alarms_reach_this_thread
from .wording import counted

__all__ = [
    "CaseSelection",
    "SetDigest",
    "Shard",
    "execute_prompts",
    "identity_from_counts",
    "new_run_id",
    "run_identity",
    "run_yardstick",
    "PromptOrder",
    "select_cases",
    "set_fingerprint",
]


def new_run_id(now: float | None = None) -> str:
    """A sortable, unique run id: UTC time to the second plus random hex."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(3)}"


@attrs.frozen
class Shard:
    """Slice ``index`` (1-based) of ``count`` deterministic slices of a set."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse ``I/N``."""
        from .errors import UsageError

        try:
            left, right = text.split("/")
            shard = cls(int(left), int(right))
        except ValueError:
            raise UsageError(f'--shard must look like I/N (e.g. 2/4), got "{text}"') from None
        if not 1 <= shard.index <= shard.count:
            raise UsageError(f"--shard {text}: I must be between 1 and N")
        return shard

    def owns(self, case_id: str) -> bool:
        """True when the case belongs to this slice (stable across processes and machines)."""
        return zlib.crc32(case_id.encode("utf-8", "surrogatepass")) % self.count == self.index - 1


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
                self._changed(f"producing prompt #{position + 1:,} raised {type(exc).__name__}: {exc}")
            crc = _crc_with(crc, getattr(prompt, "id", prompt))
            position += 1
            if position & (position - 1) == 0:
                checked = self._checkpoints.get(position)
                if checked is None or checked[0] != crc:
                    now = visible(str(getattr(prompt, "id", prompt)))
                    then = f'"{visible(checked[1])}"' if checked is not None else "none"
                    shown = f' (#{position:,} is "{now}" now, {then} when checked)' if f'"{now}"' != then else ""
                    self._changed(f"{_differ(position // 2 + 1, position)}{shown}")
            yield prompt
        if position != self.count:
            self._changed(f"it yielded {position:,} prompt{'s' * (position != 1)} this time, {self.count:,} when checked")
        if crc != self._crc:
            self._changed(_differ(_last_power(position) + 1, position))

    def _changed(self, where: str) -> None:
        from .errors import SetChangedError

        raise SetChangedError(
            f'set "{visible(self.set_identifier)}" changed while it ran: its prompts are not the ones checked '
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
        from .convert import dumps

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


def run_yardstick(cases: Iterable[CaseResult], requested: str) -> str:
    """The yardstick a run is stored under: the graders' common one, else the requested grader name."""
    yardsticks = {c.yardstick for c in cases if c.yardstick and not c.errored}
    return yardsticks.pop() if len(yardsticks) == 1 else requested


def run_identity(cases: Sequence[CaseResult], bound_configured: bool) -> tuple[ServingIdentity | None, str | None]:
    """The run's verified serving identity, or ``None`` and the reason (control characters visible).

    Verified only when the instance is configured, every answered case carries an identity, every
    identity is well formed (:func:`evalkit.identity.identity_problems`) and all of them agree.
    """
    if not bound_configured:
        return None, (
            "the generator is not a configured provider instance (ad-hoc run); "
            "configure [providers.NAME] in evalkit.toml for comparable runs"
        )
    if not cases:
        return None, "the run has no answered cases"
    counts: dict[ServingIdentity | None, int] = {}
    for case in cases:
        if case.errored:
            continue
        counts[case.identity] = counts.get(case.identity, 0) + 1
    return identity_from_counts(counts)


def identity_from_counts(counts: Mapping[ServingIdentity | None, int]) -> tuple[ServingIdentity | None, str | None]:
    """:func:`run_identity` from the answered cases counted per identity (``None``: the case
    carries none), for a configured instance whose run has cases — what a store's
    :class:`~evalkit.storage.CaseTally` gives without reading the cases back."""
    if not counts:
        return None, "no case was answered"
    malformed = [(i, n) for i, n in counts.items() if i is not None and identity_problems(i)]
    if malformed:
        bad_cases = sum(n for _, n in malformed)
        return None, (
            f"{counted(bad_cases, 'case')} {'carries' if bad_cases == 1 else 'carry'} a serving identity that is not well formed, so it is no evidence of "
            f"who answered: {'; '.join(identity_problems(malformed[0][0]))}"
        )
    if None in counts:
        return None, f"the endpoint reported no model for {counted(counts[None], 'case')}, so who answered is unknown"
    if len(counts) > 1:
        seen = ", ".join(
            visible(f"{i.reported_model} via {i.provider_instance}/{i.model_alias} ({n} cases)")
            for i, n in sorted(counts.items(), key=lambda kv: -kv[1])
            if i is not None
        )
        return None, f"the cases disagree on who answered — the endpoint switched models midway: {seen}"
    identity = next(iter(counts))
    return identity, None


#: The note shown when the reported model is just the alias the request sent.
ECHOED_MODEL_NOTE = "reported model is the alias sent; the server does not report its own"


def serving_metrics(bound: BoundGenerator, identity: ServingIdentity | None) -> dict[str, Any] | None:
    """What is known about who served beyond the identity: whether the reported model merely
    echoes the alias sent (never said of the reference self-check, which serves no model), and the
    generator's own free evidence (:class:`ServingEvidence`).

    ``None`` when there is nothing to say. Evidence a generator fails to give is left out.
    """
    serving: dict[str, Any] = {}
    # The reference self-check serves no model: its "reported model" is its name, not an echo.
    if identity is not None and identity.reported_model == identity.model_alias and not bound.is_reference_self_check:
        serving["reported_model_is_alias"] = True
        serving["note"] = ECHOED_MODEL_NOTE
    if isinstance(bound.generator, ServingEvidence):
        try:
            evidence = dict(bound.generator.serving_evidence())
        except PLUGIN_FAILURES:  # evidence is a bonus; a server that does not give it is not an error
            evidence = {}
        if evidence:
            serving["evidence"] = evidence
    return {"serving": serving} if serving else None


def redact_secrets(case: CaseResult, secrets: Sequence[str]) -> CaseResult:
    """``case`` with every exact credential value replaced by ``***`` in all of its text."""
    if not secrets:
        return case
    import json

    from .privacy import remove_secrets

    def clean(text: str | None) -> str | None:
        return None if text is None else remove_secrets(text, tuple(secrets))

    checks = tuple(attrs.evolve(c, error=clean(c.error), detail=clean(c.detail)) for c in case.checks)
    identity = case.identity
    if identity is not None:
        identity = attrs.evolve(
            identity,
            provider_instance=clean(identity.provider_instance),
            model_alias=clean(identity.model_alias),
            reported_model=clean(identity.reported_model),
        )
    detail = case.detail
    if detail is not None:
        detail = json.loads(clean(json.dumps(detail, ensure_ascii=False)) or "null")
    return attrs.evolve(
        case, answer_text=clean(case.answer_text), error=clean(case.error), checks=checks, detail=detail, identity=identity
    )


@attrs.define
class _Recorder:
    """Commits finished cases in groups, without the generator's credentials.

    A case that finishes when nothing was committed for :data:`COMMIT_WAIT_S` is committed at
    once (a slow generator gets a commit per case, as before); one that finishes sooner after a
    commit waits for the next, at most :data:`COMMIT_WAIT_S` after the last one, in one transaction
    with every case finishing meanwhile (at most :data:`COMMIT_BATCH`). A group costs about what one
    case's commit costs: at 64 in flight a run stores 2,000 cases in ~40 transactions instead of
    ~540, 0.3 s less CPU (``bench/throughput.py``). A hard kill therefore loses at most the cases
    that finished in the last :data:`COMMIT_WAIT_S` (a resume answers them again); every other way
    out of the run (the end, Ctrl-C, an error) commits what is pending first (:meth:`flush`). A
    commit that fails on the timer is raised by the next :meth:`commit` or :meth:`flush`, in a
    worker, so the run stops on it.
    """

    repository: Any
    run_id: str
    privacy: str
    secrets: tuple[str, ...] = ()
    #: Called after each commit with its cases as the store reads them back (see ``execute_prompts``).
    on_stored: Callable[[list[CaseResult]], None] | None = None
    pending: list[CaseResult] = attrs.Factory(list)
    _timer: asyncio.TimerHandle | None = None
    _failure: BaseException | None = None
    _committed_at: float = -math.inf

    def commit(self, case: CaseResult) -> None:
        """Commit ``case`` now, or with the group that is gathering (see the class docstring)."""
        if self._failure is not None:
            raise self._failure
        self.pending.append(redact_secrets(case, self.secrets))
        if self._timer is not None and len(self.pending) < COMMIT_BATCH:
            return
        waited = time.monotonic() - self._committed_at
        if waited >= COMMIT_WAIT_S or len(self.pending) >= COMMIT_BATCH:
            self.flush()
        else:
            self._timer = asyncio.get_running_loop().call_later(COMMIT_WAIT_S - waited, self._flush_due)

    def _flush_due(self) -> None:
        self._timer = None
        try:
            self.flush()
        except BaseException as exc:  # raised again by the next commit() or flush(), in a worker
            self._failure = exc

    def flush(self) -> None:
        """Commit what is pending (also on cancellation, so Ctrl-C keeps every finished case)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._failure is not None:
            raise self._failure
        if self.pending:
            batch, self.pending = self.pending, []
            record = self.repository.record_cases if self.on_stored is None else self.repository.record_cases_as_stored
            stored = record(self.run_id, batch, self.privacy)
            self._committed_at = time.monotonic()
            if stored is not None and self.on_stored is not None:
                self.on_stored(stored)


#: The longest a finished case waits for its group commit (see :class:`_Recorder`).
COMMIT_WAIT_S = 0.05
#: The most cases one group commit stores.
COMMIT_BATCH = 256


def _failed_grading(grader: Any, error: str) -> Grading:
    """A grading that raised or broke the rules (:func:`~evalkit.grading.grading_problems`) is no
    measurement: it fails, and its yardstick ``<grader>:failed`` keeps the run out of comparisons."""
    name = getattr(grader, "name", None)
    named = isinstance(name, str) and 0 < len(name) <= 200
    return Grading(0.0, False, yardstick=f"{name if named else 'grader'}:failed", error=error)


def _case_identity(bound: BoundGenerator, answer: Answer) -> ServingIdentity | None:
    if not bound.instance or not bound.alias or not answer.model:
        return None
    return ServingIdentity(bound.instance, bound.alias, answer.model)


def stored_answer(text: str, max_bytes: int | None) -> str:
    """``text`` as a case keeps it: whole up to ``max_bytes`` bytes of UTF-8, else cut there (on a
    character boundary) with a marker saying how long the answer was. Grading sees the whole text."""
    if max_bytes is None or len(text) * 4 <= max_bytes:
        return text  # cannot exceed the limit: no need to encode
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text
    kept = encoded[:max_bytes].decode("utf-8", "ignore")
    return f"{kept}\n… [truncated by evalkit: the answer was {len(encoded)} bytes; the first {max_bytes} are stored]"


def _coerce_answer(value: Any) -> Answer:
    if isinstance(value, Answer):
        broken = answer_problems(value)
        if broken:
            raise GenerationError(f"the generator returned an Answer evalkit cannot use: {'; '.join(broken)}")
        return value
    if isinstance(value, str):
        return Answer(text=value)
    raise GenerationError(f"the generator returned {type(value).__name__} {str(value)[:80]!r}, not an Answer")


async def execute_prompts(
    *,
    run: Run,
    prompts: Iterable[GoldenPrompt],
    bound: BoundGenerator,
    grader: Any,
    repository: Any,
    kinds: Mapping[str, AssertionKind],
    concurrency: int,
    privacy: str,
    request_options: Mapping[str, Any] | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
    max_answer_bytes: int | None = None,
    on_stored: Callable[[list[CaseResult]], None] | None = None,
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S,
) -> int:
    """Answer and grade ``prompts`` with at most ``concurrency`` in flight; commit each finished case.

    ``prompts`` is iterated once, as the workers pull from it (a :class:`CaseSelection` or a
    :class:`~evalkit.PromptStream` is never held whole); its ``len()``, when it has one, only caps
    the number of workers.

    Returns how many cases this call finished; the cases themselves are in the repository (memory
    stays flat however large the set), each with its prompt's fingerprint (errored ones too). A generator failure makes an errored case (never a pass,
    never dropped). Cancellation (Ctrl-C) commits what finished before it propagates. An answer
    longer than ``max_answer_bytes`` is graded whole and stored cut (see :func:`stored_answer`).
    Grading one answer may take ``grade_timeout`` seconds, then it is a failed grading: an async
    grader is cancelled, a synchronous one interrupted by ``SIGALRM`` (:func:`~evalkit.timeouts.alarm_bounded`;
    off the main thread, where no signal reaches it, a synchronous grader has no time limit).
    ``on_stored`` (with a repository that is :class:`~evalkit.storage.StoredCaseForms`) is called
    after each commit with the cases it stored, in stored order, as the store reads them back.
    """
    secrets = bound.secrets() + (tuple(grader.secret_values()) if isinstance(grader, SecretHolder) else ())
    # Only values long enough to be scrubbed are looked for (see evalkit.privacy.remove_secrets):
    # with none, a finished case is stored as it is, without copying it field by field.
    from .privacy import is_scrubbable

    secrets = tuple(s for s in secrets if isinstance(s, str) and is_scrubbable(s))
    if on_stored is not None:
        from .storage.protocols import StoredCaseForms

        on_stored = on_stored if isinstance(repository, StoredCaseForms) else None
    recorder = _Recorder(repository, run.id, privacy, secrets, on_stored=on_stored)
    finished = 0
    options = dict(request_options or {})
    grade_async = isinstance(grader, AsyncGrader) and asyncio.iscoroutinefunction(grader.agrade)
    if isinstance(grader, AssertionKindsAware):
        grader.use_assertion_kinds(kinds)
    wanted = min(concurrency, len(prompts)) if isinstance(prompts, Sized) else concurrency
    # A synchronous generator answers on daemon threads: one that never returns is abandoned at
    # its time limit (a thread of a concurrent.futures pool would be joined at exit, for ever).
    pool = None if bound.is_async else BoundedCalls(max(1, wanted), name="evalkit-gen")
    time_limit = bound.answer_timeout
    # Signals reach the main thread only: elsewhere (a library caller's thread) a synchronous
    # grader runs unguarded.
    guard_grading = not grade_async and alarms_reach_this_thread()
    queue = iter(prompts)

    async def answer(prompt: GoldenPrompt) -> CaseResult:
        request = GenerationRequest(
            prompt=prompt.prompt, system_prompt=prompt.system_prompt, model=bound.alias, case_id=prompt.id, **options
        )
        started = time.perf_counter()
        called = None
        try:
            async with asyncio.timeout(time_limit) as limit:
                if pool is None:
                    raw = await bound.generator.agenerate(request)
                else:
                    called = pool.submit(bound.generator.generate, request)
                    raw = await asyncio.wrap_future(called)
            reply = _coerce_answer(raw)
        except asyncio.CancelledError:
            raise
        except PLUGIN_FAILURES as exc:  # sys.exit() in a plugin ends its case, never the run (exit 0)
            if isinstance(exc, TimeoutError) and limit.expired():
                if called is not None:
                    pool.abandon(called)  # type: ignore[union-attr]
                error = (
                    f"no answer within {time_limit:g} s (the provider instance's answer_timeout); "
                    "the call was abandoned"
                )
            else:
                error = str(exc) if isinstance(exc, GenerationError) else f"{type(exc).__name__}: {exc}"
            return CaseResult(
                case_id=prompt.id,
                passed=False,
                score=0.0,
                latency_s=time.perf_counter() - started,
                error=error,
                adapter=bound.adapter,
                finished_at=time.time(),
                fingerprint=case_fingerprint(prompt),
            )
        latency = time.perf_counter() - started
        grading_limit = None
        try:
            if grade_async:
                async with asyncio.timeout(grade_timeout) as grading_limit:
                    grading = await grader.agrade(prompt, reply)
            elif guard_grading:
                grading = alarm_bounded(grader.grade, (prompt, reply), grade_timeout, TimeLimitExceeded)
            else:
                grading = grader.grade(prompt, reply)
        except asyncio.CancelledError:
            raise
        except (TimeLimitExceeded, *PLUGIN_FAILURES) as exc:
            if isinstance(exc, TimeLimitExceeded) or (grading_limit is not None and grading_limit.expired()):
                grading = _failed_grading(
                    grader, f"no grading within {grade_timeout:g} s (grade_timeout); the grader was {'cancelled' if grade_async else 'interrupted'}"
                )
            else:
                grading = _failed_grading(grader, f"{type(exc).__name__}: {exc}")
        else:
            try:
                broken = grading_problems(grading)
            except PLUGIN_FAILURES as exc:  # a grading built to break the check itself (a raising property)
                broken = [f"checking it raised {type(exc).__name__}: {exc}"]
            if broken:
                grading = _failed_grading(grader, f"the grader returned a grading evalkit cannot use: {'; '.join(broken)}")
        return CaseResult.from_grading(
            prompt.id,
            grading,
            latency_s=latency,
            identity=_case_identity(bound, reply),
            adapter=bound.adapter,
            answer_text=stored_answer(reply.text, max_answer_bytes),
            usage=reply.usage,
            finished_at=time.time(),
            fingerprint=case_fingerprint(prompt),
        )

    async def worker() -> None:
        nonlocal finished
        for prompt in queue:
            case = await answer(prompt)
            finished += 1
            recorder.commit(case)
            if on_case is not None:
                on_case(case)

    try:
        # One SIGALRM handler for the whole run: a grading that ends in time costs no system call.
        with alarm_scope():
            workers = [asyncio.ensure_future(worker()) for _ in range(max(1, wanted))]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
    finally:
        recorder.flush()
        if pool is not None:
            pool.close()
    return finished


def default_concurrency(bound: BoundGenerator, requested: int | None) -> int:
    """The run's effective concurrency: ``--concurrency``, else the instance's configured
    ``concurrency``, else ``$EVALKIT_CONCURRENCY``, else what the generator asks for, else 8.

    A ``$EVALKIT_CONCURRENCY`` that is not a whole number from 1 to :data:`MAX_CONCURRENCY`
    (``-5``, ``0``, ``abc``, ``1e3``) raises :class:`~evalkit.errors.UsageError`, whichever value
    wins: the environment is checked before anything is called or stored.
    """
    from_env = concurrency_from_environment()
    if requested:
        return requested
    if bound.configured_concurrency:
        return bound.configured_concurrency
    if from_env is not None:
        return from_env
    return bound.concurrency or 8


def concurrency_from_environment() -> int | None:
    """``$EVALKIT_CONCURRENCY`` as a whole number (``None`` when unset or empty), or a usage error."""
    from .errors import UsageError

    raw = os.environ.get("EVALKIT_CONCURRENCY", "").strip()
    if not raw:
        return None
    if len(raw) <= len(str(MAX_CONCURRENCY)) and raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_CONCURRENCY:
        return int(raw)
    shown = raw if len(raw) <= 20 else raw[:20] + "…"
    raise UsageError(f"EVALKIT_CONCURRENCY must be a whole number from 1 to {MAX_CONCURRENCY}, got {shown!r}")


def final_status(run: Run, stored: Run) -> RunStatus:
    """Complete when every case of the set is answered without error; still running while cases
    are missing (shards not all in), even when some stored case errored; incomplete otherwise."""
    if stored.answered_count < run.case_count:
        return RunStatus.RUNNING
    if stored.errored_count:
        return RunStatus.INCOMPLETE
    return RunStatus.COMPLETE
