"""A run's and a case's stored columns, to and from evalkit's values.

Written texts go through :mod:`..textcodec` (NUL and lone surrogates), are reduced to the run's
privacy level and have secrets scrubbed; read values are checked (a store another program wrote
can hold anything in a column) and decoded. The short texts most cases of a run share (checks,
token counts, serving identities) are parsed once and shared.
"""

from __future__ import annotations

import functools
import json
import math
import time
from typing import Any

import attrs

from ...answers import ServingIdentity, Usage
from ...conversations import Message, messages_of, transcript_data
from ...errors import StorageError
from ...grading import AGREEMENT_CHECK, Check
from ...jsontext import compact_text
from ...privacy import keeps_text, redacted_text, scrub
from ...runs import CaseResult, Run, RunKind, RunStatus
from ...shapes import short_repr
from ..stored_checks import stored_count, stored_number, stored_time, time_held
from ..textcodec import encode_text
from ..values import CaseMark

__all__ = [
    "CASE_COLUMNS",
    "RECORDED_COLUMNS",
    "case_from_columns",
    "case_mark",
    "case_values",
    "dump_json",
    "identity_values",
    "load_json",
    "run_from_row",
    "serving_identity",
    "stored_checks",
    "stored_enum",
    "stored_number",
    "stored_text",
    "stored_judge_usage",
    "stored_transcript",
    "stored_usage",
    "transcript_value",
    "usage_json",
]

def dump_json(value: Any) -> str | None:
    """``value`` as compact JSON text (``None`` stays ``None``; a NaN or an infinity in it is
    written ``null``, :func:`~evalkit.jsontext.compact_text`)."""
    return None if value is None else compact_text(value)


def stored_text(value: Any) -> Any:
    """A string as the store keeps it (:mod:`evalkit.storage.textcodec`); any other value as it is."""
    return encode_text(value) if isinstance(value, str) else value


#: The columns ``record_cases`` writes (:mod:`.runs`), in the order :func:`case_values` gives
#: them: every column of a case but its row id.
RECORDED_COLUMNS = (
    "run", "case_id", "passed", "score", "errored", "error", "checks", "latency_s", "provider_instance",
    "model_alias", "reported_model", "adapter", "yardstick", "answer_text", "detail", "measures", "usage",
    "finished_at", "fingerprint", "judge_usage", "answer_source", "prompt_digest", "transcript",
    "requests", "requests_sent",
)  # fmt: skip


@functools.lru_cache(maxsize=64)
def identity_values(identity: ServingIdentity) -> tuple[Any, Any, Any]:
    """A serving identity's three stored columns (a run's cases share one or a few identities)."""
    return stored_text(identity.provider_instance), stored_text(identity.model_alias), stored_text(identity.reported_model)


def _no_constant(name: str) -> None:
    """What ``NaN``, ``Infinity`` and ``-Infinity`` in stored JSON read as: ``None``. JSON has no
    such numbers (Python's json module writes and reads them), and a metric read back as NaN made
    ``--json`` output that no JSON parser reads."""
    return None


def load_json(text: str | None) -> Any:
    """Stored JSON text as a value (``NaN`` and the infinities as ``None``); ``None`` when there
    is none or it is not JSON."""
    if not text:
        return None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return None


def stored_mapping(text: str | None) -> dict[str, Any] | None:
    """A stored JSON object (a run's metrics, provenance, pricing or spend); ``None`` for none, for
    text that is not JSON, and for JSON that is no object (``-1`` made every reader's ``.get`` fail)."""
    value = load_json(text)
    return value if isinstance(value, dict) else None


def case_mark(
    case_id: str, passed: Any, score: float, checks: str | None, position: int, fingerprint: str | None, measures: str | None = None
) -> CaseMark:
    """A case's comparison mark from its stored columns; the checks are parsed only when their
    text names the judge-agreement check (nearly never), to tell whether the case is unstable;
    the measures (a retrieval question's, a repeated prompt's) once per distinct text."""
    if type(score) is not float or not math.isfinite(score):
        stored_number(score, f"case {short_repr(case_id)}", "score")
    unstable = False
    if checks and AGREEMENT_CHECK in checks:
        unstable = any(
            isinstance(c, list) and len(c) >= 2 and c[0] == AGREEMENT_CHECK and not c[1] for c in (load_json(checks) or [])
        )
    return CaseMark(bool(passed), score, unstable, position, fingerprint, stored_measures(measures) if measures else None)


def _parsed_measures(text: str) -> Any:
    value = load_json(text)
    return value if isinstance(value, dict) else None


#: Measures read back once per distinct text (a retrieval run's questions share a handful of
#: them); the dict is shared, and only read.
stored_measures = functools.lru_cache(maxsize=512)(_parsed_measures)


#: Stored texts at most this long are parsed once per distinct text (see :func:`stored_checks`);
#: a longer one (a plugin's check detail can hold anything) is parsed each time, never cached.
_CACHED_TEXT_CHARS = 2048


#: How a check's flags are stored: a fifth element, only when the check has one (``"j"`` judged,
#: ``"a"`` advisory), so the checks stored before flags existed read the same.
_JUDGED, _ADVISORY = "j", "a"


def _parsed_check(n: Any, p: Any, e: Any, d: Any, flags: Any = "") -> Check:
    flags = flags if isinstance(flags, str) else ""
    return Check(n, bool(p), e, d, judged=_JUDGED in flags, advisory=_ADVISORY in flags)


def _check_entry(stored: Any) -> bool:
    """Whether ``stored`` is one check as :func:`_stored_check` writes it."""
    return (
        isinstance(stored, list) and 4 <= len(stored) <= 5 and isinstance(stored[0], str)
        and all(part is None or isinstance(part, str) for part in stored[2:])
    )  # fmt: skip


def _parsed_checks(text: str | None) -> tuple[Check, ...]:
    entries = load_json(text) or []
    if not isinstance(entries, list) or not all(_check_entry(stored) for stored in entries):
        raise StorageError(
            f"a case in the store has checks {short_repr(text)}, not a list of [name, passed, error, detail] entries: "
            "the database was written by something else than evalkit"
        )
    return tuple(_parsed_check(*stored) for stored in entries)


def _stored_check(check: Check, detail: str | None) -> list[Any]:
    """One check as stored: ``[name, passed, error, detail]``, and its flags when it has any."""
    flags = (_JUDGED if check.judged else "") + (_ADVISORY if check.advisory else "")
    return [check.name, check.passed, check.error, detail, flags] if flags else [check.name, check.passed, check.error, detail]


_cached_checks = functools.lru_cache(maxsize=512)(_parsed_checks)


def stored_checks(text: str | None) -> tuple[Check, ...]:
    """A case's checks from their stored JSON text. Most cases of a run store the same text (every
    check held): a short text is parsed once, and the cases that store it share one (frozen) tuple."""
    if text is not None and len(text) > _CACHED_TEXT_CHARS:
        return _parsed_checks(text)
    return _cached_checks(text)


def _usage_of(counts: Any) -> Usage | None:
    """A :class:`Usage` from its stored list (two counts before schema 7, four since); ``None``
    for anything else (a hand-edited store)."""
    if not isinstance(counts, list) or not 1 <= len(counts) <= 4:
        return None
    if not all(c is None or (type(c) is int and c >= 0) for c in counts):
        return None
    return Usage(*counts)


@functools.lru_cache(maxsize=512)
def stored_usage(text: str | None) -> Usage | None:
    """A case's token counts from their stored JSON text (a few short texts per run, cached)."""
    return _usage_of(load_json(text))


@functools.lru_cache(maxsize=512)
def stored_judge_usage(text: str | None) -> tuple[Usage, ...]:
    """The token counts of a case's judge calls from their stored JSON text (``()``: none stored)."""
    calls = load_json(text)
    if not isinstance(calls, list):
        return ()
    return tuple(u for u in map(_usage_of, calls) if u is not None)


def usage_json(usage: Usage | None) -> str | None:
    """The stored text of one request's token counts."""
    return None if usage is None else dump_json(list(usage.counts()))


def judge_usage_json(calls: tuple[Usage, ...]) -> str | None:
    """The stored text of a case's judge calls' token counts (``None``: no judge call)."""
    return dump_json([list(u.counts()) for u in calls]) if calls else None


@functools.lru_cache(maxsize=64)
def serving_identity(instance: str | None, alias: str | None, reported: str | None) -> ServingIdentity | None:
    """The serving identity of three stored columns (``None`` unless all three are there; shared)."""
    if instance is None or alias is None or reported is None:
        return None
    return ServingIdentity(instance, alias, reported)


#: The case columns a :class:`~evalkit.runs.CaseResult` is built from, in the order
#: :func:`case_from_columns` takes them: every recorded column but the run's id.
CASE_COLUMNS = RECORDED_COLUMNS[1:]


def case_from_columns(
    case_id: str, passed: Any, score: float, errored: Any, error: str | None, checks: str | None, latency_s: float,
    instance: str | None, alias: str | None, reported: str | None, adapter: str | None, yardstick: str | None,
    answer_text: str | None, detail: str | None, measures: str | None, usage: str | None, finished_at: float,
    fingerprint: str | None, judge_usage: str | None = None, answer_source: str | None = None,
    prompt_digest: str | None = None, transcript: str | None = None, requests: Any = None, requests_sent: Any = None,
) -> CaseResult:  # fmt: skip
    """A case from its decoded stored columns (:data:`CASE_COLUMNS`)."""
    if type(score) is not float or type(latency_s) is not float or not time_held(finished_at) or not math.isfinite(score + latency_s):
        owner = f"case {short_repr(case_id)}"
        stored_number(score, owner, "score")
        stored_number(latency_s, owner, "latency_s")
        stored_time(finished_at, owner, "finished_at")
    return CaseResult(
        case_id=case_id,
        passed=bool(passed),
        score=score,
        checks=stored_checks(checks),
        latency_s=latency_s,
        error=error if errored else None,
        identity=serving_identity(instance, alias, reported),
        adapter=adapter,
        yardstick=yardstick,
        answer_text=answer_text,
        usage=stored_usage(usage),
        detail=load_json(detail),
        finished_at=finished_at,
        measures=_parsed_measures(measures) if measures else None,
        fingerprint=fingerprint,
        judge_usage=stored_judge_usage(judge_usage),
        answer_source=answer_source,
        prompt_digest=prompt_digest,
        transcript=stored_transcript(transcript),
        requests=stored_requests(requests),
        requests_sent=stored_requests(requests_sent),
    )


def stored_requests(value: Any) -> int | None:
    """A case's stored request count (``None``: not stored, or not a count evalkit writes)."""
    return value if type(value) is int and value >= 0 else None


def stored_transcript(text: str | None) -> tuple[Message, ...]:
    """A case's transcript from its stored JSON (empty when there is none, or it is not what
    evalkit writes: a list of turns with a role)."""
    turns = load_json(text)
    if not isinstance(turns, list):
        return ()
    try:
        return messages_of(turn for turn in turns if isinstance(turn, dict) and isinstance(turn.get("role"), str))
    except (TypeError, ValueError):
        return ()


def transcript_value(transcript: tuple[Message, ...], privacy: str) -> str | None:
    """A transcript as the privacy level keeps it (JSON): ``metadata`` the turns' roles and the
    names of the tools called, no text and no arguments; ``redacted`` each text and each call's
    arguments scrubbed and cut as an answer is; ``full`` everything. ``None`` for no transcript."""
    if not transcript:
        return None
    if privacy == "full":
        kept = transcript_data(transcript)
    elif keeps_text(privacy):
        kept = transcript_data(transcript, redacted_text)
    else:
        kept = transcript_data(transcript, lambda _text: None)
    for turn in kept:  # a tool's name is the set's or the model's word: no secret shape is kept
        for call in turn.get("tool_calls", ()):
            call["name"] = scrub(call["name"])
            if call["id"] is not None:
                call["id"] = scrub(call["id"])
    return dump_json(kept)


def stored_enum(kind: Any, value: Any, run_id: str, field: str) -> Any:
    """``kind(value)``, or a :class:`StorageError` naming the run when the store holds a value this
    evalkit does not know (written by a newer evalkit without a schema version, or by hand)."""
    try:
        return kind(value)
    except ValueError:
        raise StorageError(
            f"run {short_repr(run_id)} in the store has {field} {short_repr(value)}, which this evalkit does not know: "
            "it was written by a newer evalkit or by something else"
        ) from None


def case_values(stored_run_id: str, case: CaseResult, privacy: str) -> tuple[Any, ...]:
    """The stored values of ``case`` in :data:`RECORDED_COLUMNS` order, texts encoded (the
    statement bypasses the models' fields, see :mod:`evalkit.storage.textcodec`) and reduced to ``privacy``."""
    text_kept = keeps_text(privacy)
    verbatim = privacy == "full"

    def text(value: str | None) -> str | None:
        if value is None or not text_kept:
            return None
        return value if verbatim else redacted_text(value)

    checks = dump_json([_stored_check(c, text(c.detail)) for c in case.checks])
    identity = case.identity
    error = case.error
    detail = None if case.detail is None else text(dump_json(case.detail))
    measures = case.measures
    usage = case.usage
    return (
        stored_run_id,
        stored_text(case.case_id),
        case.passed,
        case.score,
        case.errored,
        encode_text(scrub(error)) if error else None,
        encode_text(checks),
        case.latency_s,
        *(identity_values(identity) if identity is not None else (None, None, None)),
        stored_text(case.adapter),
        stored_text(case.yardstick),
        stored_text(text(case.answer_text)),
        stored_text(detail),
        None if measures is None else encode_text(dump_json(dict(measures))),
        None if usage is None else encode_text(usage_json(usage)),  # type: ignore[arg-type]
        case.finished_at or time.time(),
        stored_text(case.fingerprint),
        None if not case.judge_usage else encode_text(judge_usage_json(case.judge_usage)),  # type: ignore[arg-type]
        stored_text(case.answer_source),
        stored_text(case.prompt_digest),
        stored_text(transcript_value(case.transcript, privacy)),
        case.requests,
        case.requests_sent,
    )


#: The count columns of a run row (:func:`run_from_row` checks each).
_RUN_COUNTS = ("case_count", "answered_count", "passed_count", "errored_count")


def run_from_row(row: Any) -> Run:
    """A run row as a :class:`Run` (no cases); a value the store should not hold is refused by name."""
    if not time_held(row.started_at) or (row.finished_at is not None and not time_held(row.finished_at)):
        stored_time(row.started_at, f"run {short_repr(row.id)}", "started_at")
        if row.finished_at is not None:
            stored_time(row.finished_at, f"run {short_repr(row.id)}", "finished_at")
    counts = [getattr(row, field) for field in _RUN_COUNTS]
    if any(type(count) is not int or count < 0 for count in counts):
        for field, count in zip(_RUN_COUNTS, counts, strict=True):
            stored_count(count, f"run {short_repr(row.id)}", field)
    if row.mean_score is not None and (type(row.mean_score) is not float or not math.isfinite(row.mean_score)):
        stored_number(row.mean_score, f"run {short_repr(row.id)}", "mean_score")
    identity = None
    if row.verified:
        identity = serving_identity(row.provider_instance, row.model_alias, row.reported_model)
        base_prompt = getattr(row, "base_prompt", "") or ""
        if identity is not None and base_prompt:
            identity = attrs.evolve(identity, base_prompt=base_prompt)
    return Run(
        id=row.id,
        set_identifier=row.set_identifier,
        grader=row.grader,
        kind=stored_enum(RunKind, row.kind, row.id, "kind"),
        status=stored_enum(RunStatus, row.status, row.id, "status"),
        started_at=row.started_at,
        finished_at=row.finished_at,
        case_count=row.case_count,
        set_fingerprint=row.set_fingerprint or "",
        identity=identity,
        identity_note=row.identity_note,
        provider_instance=row.provider_instance,
        adapter=row.adapter,
        model_alias=row.model_alias,
        retriever=row.retriever,
        deployment=row.deployment,
        benchmark_fingerprint=row.benchmark_fingerprint or "",
        variant_fingerprint=row.variant_fingerprint or "",
        provenance=stored_mapping(row.provenance),
        metrics=stored_mapping(row.metrics),
        label=row.label,
        privacy=row.privacy,
        fingerprints_kept=bool(row.fingerprints_kept),
        pricing=stored_mapping(row.pricing),
        spend=stored_mapping(row.spend),
        answers_reused=row.answers_reused,
        source_run_id=row.source_run_id,
        stored_passed_count=row.passed_count,
        stored_errored_count=row.errored_count,
        stored_answered_count=row.answered_count,
        stored_mean_score=row.mean_score,
    )
