"""Rules a golden prompt set must follow, checked before any generator is called."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from . import prompts as prompt_types
from .checks import AssertionKind
from .conversation_rules import conversation_problems
from .errors import PLUGIN_FAILURES, SetTooLarge, SetValidationError, carried
from .grading import MAX_CHECKS
from .identity import hidden_problem
from .printable import has_visible_text, lone_surrogate, not_nfc
from .prompts import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream, prompt_limit_passed
from .shapes import (
    MAX_NAME_CHARS,
    MAX_PROBLEMS_KEPT,
    ProblemsNotKept,
    exception_message,
    exception_text,
    set_label,
    short_repr,
    too_long,
    value_path_text,
    value_shape_problem,
)
from .timeouts import alarm_scope
from .wording import counted, listed

__all__ = [
    "CHECK_CLOCK_EVERY",
    "CHECK_PROGRESS_EVERY",
    "CHECK_PROGRESS_SECONDS",
    "IDENTIFIER_PATTERN",
    "identifier_problem",
    "CheckProgress",
    "PromptSetSurvey",
    "count_members",
    "members_with_ids",
    "paced",
    "prompt_set_problems",
    "set_problems",
    "stream_failure",
    "survey_prompt_set",
    "validate_prompt_set",
]

#: Lowercase segments of ``[a-z0-9_]`` separated by single dots: ``package.set``.
IDENTIFIER_PATTERN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def check_label(label: object) -> None:
    """Raise :class:`~evalkit.errors.UsageError` unless ``label`` (a run's ``label``, the CLI's ``--label``) is
    ``None`` or text of at most :data:`MAX_NAME_CHARS` characters."""
    from .errors import UsageError

    if label is None:
        return
    if not isinstance(label, str):
        raise UsageError(f"a run label must be text, got {_describe(label)}")
    if len(label) > MAX_NAME_CHARS:
        from .wording import argument

        raise UsageError(f"{argument('label')} {_too_long(label)}")


def _is_answer(value: object) -> bool:
    from .answers import Answer

    return isinstance(value, Answer)


def set_problems(where: str, identifier: object, name: object, members: Sequence[Any], member: str) -> list[str]:
    """Problems shared by every kind of golden set: identifier, name, at least one member."""
    problems = _naming_problems(where, identifier, name)
    if not members:
        problems.append(_empty_problem(where, member))
    return problems


#: Why an identifier that is not :data:`IDENTIFIER_PATTERN` is refused.
IDENTIFIER_RULE = "must be lowercase segments of a-z, 0-9 and _ joined by dots (like package.set)"


def identifier_problem(identifier: object) -> str | None:
    """Why ``evalkit run`` (or ``retrieval``) refuses a set whose identifier is ``identifier``, as
    words following ``identifier``: too long, or not :data:`IDENTIFIER_PATTERN` (a control
    character, whitespace, a letter not NFC or not lowercase ASCII); ``None`` when it is usable.
    The one rule for the check of a set (:func:`set_problems`) and ``evalkit list sets``."""
    if isinstance(identifier, str) and len(identifier) > MAX_NAME_CHARS:
        return _too_long(identifier)
    if not isinstance(identifier, str) or not IDENTIFIER_PATTERN.fullmatch(identifier):
        return IDENTIFIER_RULE
    return None


def _naming_problems(where: str, identifier: object, name: object) -> list[str]:
    problems: list[str] = []
    if (problem := identifier_problem(identifier)) is not None:
        got = "" if isinstance(identifier, str) and len(identifier) > MAX_NAME_CHARS else f", got {short_repr(identifier)}"
        problems.append(f"{where}: field identifier {problem}{got}")
    if not isinstance(name, str):
        problems.append(f"{where}: field name must be text, got {_describe(name)}")
    elif not name.strip():
        problems.append(f"{where}: field name must not be empty")
    elif len(name) > MAX_NAME_CHARS:
        problems.append(f"{where}: field name {_too_long(name)}")
    return problems


def _too_long(text: str) -> str | None:
    return too_long(text, MAX_NAME_CHARS)


def _empty_problem(where: str, member: str) -> str:
    return f"{where}: field {member}s must hold at least one {member}"


def members_with_ids(where: str, members: Sequence[Any], member: str) -> Iterator[tuple[str, Any, list[str]]]:
    """Each member with its location (``set "x", prompt "p"``) and the problems with its ``id``."""
    seen: set[str | bytes] = set()
    for index, item in enumerate(members):
        at, problems = _located(where, member, item, index + 1, seen)
        yield at, item, problems


def _located(where: str, member: str, item: Any, number: int, seen: set[str | bytes]) -> tuple[str, list[str]]:
    """Member ``number``'s location (``set "x", prompt "p"``) and the problems with its ``id``;
    ``seen`` holds the ids before it and gets this one."""
    # An id of only whitespace or invisible characters is shown as a blank cell in every table and
    # names nothing a user can type: such a member is told by its place, as one with no id.
    named = isinstance(item.id, str) and has_visible_text(item.id)
    item_id = item.id if named else f"#{number}"
    at = f'{where}, {member} "{item_id if len(item_id) <= 60 else item_id[:57] + "..."}"'
    problems = []
    if not named:
        problems.append(f"{at}: field id must be a non-empty string (not only whitespace and control characters)")
    elif len(item.id) > MAX_NAME_CHARS:
        problems.append(f"{at}: field id {_too_long(item.id)}")
    elif (unnormalised := not_nfc(item.id)) is not None:  # two such ids print alike and never match
        problems.append(f"{at}: field id {unnormalised}")
    elif (key := _seen_key(item.id)) in seen:
        problems.append(f"{at}: field id is used by more than one {member}")
    else:
        seen.add(key)
    return at, problems


#: Ids longer than this are remembered by a 16-byte digest (a million ids of 1,000 characters
#: held whole would take a gigabyte); shorter ones as they are (their digest would be no smaller).
_SEEN_WHOLE_CHARS = 32


def _seen_key(item_id: str) -> str | bytes:
    """What the duplicate check remembers of ``item_id``: itself, or the digest of a long one."""
    if len(item_id) <= _SEEN_WHOLE_CHARS:
        return item_id
    import hashlib

    return hashlib.blake2b(item_id.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# MAX_PROBLEMS_KEPT (from evalkit.shapes, and read here when a check runs): how many problems one
# check of a prompt set keeps before it stops, saying so in one more line. A list of problems is
# kept to as many by the SetValidationError that carries it, so the check's list is never cut again.


def stream_failure(number: int, exc: BaseException) -> str:
    """What a stream's producer failing at prompt ``number`` (1-based) is called in a problem."""
    return f"producing prompt #{number} raised {exception_text(exc)}"


def count_members(
    members: Any,
    progress: Callable[[CheckProgress], None] | None = None,
    identifier: object = "",
    *,
    every: int | None = None,
    clock: Callable[[], float] | None = None,
) -> tuple[int | None, str | None]:
    """How many prompts or questions a set's ``members`` hold, or ``None`` and why a stream's pass
    failed, in a problem's words (``evalkit list`` counts a :class:`PromptStream` that declares no
    count by reading it: its producer is a plugin's code, and may raise, stall or never end).

    ``progress`` hears how far that reading has come, as a check's does (see
    :func:`survey_prompt_set`; ``identifier`` is the set's, for the :class:`CheckProgress`, whose
    ``total`` is ``None``): a million streamed prompts take seconds to count. Only a pass is
    reported on: members counted without one (a list, a declared count) are not."""
    every = _whole_every(every)
    if not isinstance(members, PromptStream):
        return len(members), None
    if (problem := members.count_problem()) is not None:
        return None, problem
    if members.count is not None:  # a valid declared count: len() does not read the stream
        return len(members), None
    failures: list[str] = []

    def produced() -> Iterator[Any]:
        # only the producer is in the try: what the listener raises (in paced) is the caller's
        made = 0
        prompts = iter(members)
        while True:
            try:
                item = next(prompts)
            except StopIteration:
                return
            except SetTooLarge as exc:  # a producer may raise it too, with a text of its own
                failures.append(exception_message(exc))
                return
            except PLUGIN_FAILURES as exc:
                failures.append(stream_failure(made + 1, exc))
                return
            made += 1
            yield item

    number = sum(1 for _ in paced(produced(), progress, identifier, every=every, clock=clock))
    return (None, failures[0]) if failures else (number, None)


#: How many prompts a check of a prompt set goes between two reports of its progress: an
#: integer comparison a prompt and a call every thousand cost nothing measurable beside the check
#: itself (~15 µs a prompt), and a terminal is redrawn a few times a second at most anyway.
CHECK_PROGRESS_EVERY = 1_000
#: The longest a check goes without a report, however slowly its prompts come (a stream from a
#: database or an API: at ten prompts a second, a report every 1,000 prompts was one every 100 s).
CHECK_PROGRESS_SECONDS = 0.25
#: The most prompts a check goes between two looks at the clock: a fast stream looks once every
#: 64 prompts (nothing measurable: ~60 ns a look, beside ~15 µs a prompt checked), a slow one as
#: often as it takes to report every :data:`CHECK_PROGRESS_SECONDS` (see :class:`_Pace`).
CHECK_CLOCK_EVERY = 64


@attrs.frozen
class CheckProgress:
    """How far one check of a prompt set has come (see :func:`survey_prompt_set`'s ``progress``).

    ``identifier`` is the set's identifier as given (its text; a stray value's short repr — it is
    checked, not trusted: clip and escape it to show it), ``checked`` the prompts reached so far,
    ``total`` how many there will be when that is known without a pass (the length of a list or a
    tuple, the count a :class:`~evalkit.PromptStream` declares; ``None`` otherwise), ``done`` true
    on the last report, once the pass has ended (whether the set is valid or not).
    """

    identifier: str
    checked: int
    total: int | None = None
    done: bool = False


@attrs.frozen
class PromptSetSurvey:
    """What one pass over a prompt set found: every problem with it and how many prompts it has."""

    problems: tuple[str, ...]
    count: int


def prompt_set_problems(
    golden_set: GoldenPromptSet,
    kinds: Mapping[str, AssertionKind],
    progress: Callable[[CheckProgress], None] | None = None,
) -> list[str]:
    """Every problem with ``golden_set``, each naming the set, the prompt id and the field
    (``progress``: see :func:`survey_prompt_set`)."""
    return list(survey_prompt_set(golden_set, kinds, progress=progress).problems)


def survey_prompt_set(
    golden_set: GoldenPromptSet,
    kinds: Mapping[str, AssertionKind],
    visit: Callable[[GoldenPrompt], None] | None = None,
    progress: Callable[[CheckProgress], None] | None = None,
    every: int | None = None,
    clock: Callable[[], float] | None = None,
) -> PromptSetSurvey:
    """Check ``golden_set`` in one pass over its prompts, counting them on the way.

    The prompts are only iterated, never held (a :class:`~evalkit.PromptStream` stays a stream):
    what is kept is the problems and the ids seen, to find duplicates. ``visit`` is called with
    each prompt, in order, as long as the set has shown no problem (another consumer's share of
    the same pass: the run fingerprints the set with it, and a set with problems is refused, so
    the consumer never sees a malformed prompt). A stream whose
    producer raises, or yields another number of prompts than the ``count`` it declares, is a
    problem too; so is a set past :data:`~evalkit.prompts.MAX_PROMPTS`. The check stops after
    :data:`MAX_PROBLEMS_KEPT` problems, saying so.

    ``progress`` hears how far the check has come, for a caller that shows it (the CLI, on a
    terminal): a :class:`CheckProgress` as the pass begins (0 prompts), every ``every`` prompts
    (default :data:`CHECK_PROGRESS_EVERY`), between them whenever :data:`CHECK_PROGRESS_SECONDS`
    have passed since the last report (a slow producer's check is heard from too; ``clock``, a
    function of no argument that returns seconds, default :func:`time.monotonic`, is what tells
    the time) and once more, ``done``, when the pass has ended — counts that only grow. A set
    refused before a prompt is made (a declared count that is no count) is not reported on. What
    ``progress`` raises is the caller's, and ends the check.
    """
    where = set_label(golden_set.identifier)
    problems = _naming_problems(where, golden_set.identifier, golden_set.name)
    strays: list[str] = []
    prompt_problems: list[str] = []
    stopped = ""  # why the check stopped early, past its problem limit
    seen: set[str | bytes] = set()
    count = 0
    declared = golden_set.prompts.count if isinstance(golden_set.prompts, PromptStream) else None
    if declared is not None and (problem := golden_set.prompts.count_problem()):  # refused before a prompt is made
        problems.append(f"{where}: field prompts: {problem}")
        return PromptSetSurvey(tuple(problems), 0)
    pace = _pace(
        golden_set.identifier, _known_total(golden_set.prompts, declared), progress, _whole_every(every), clock
    )
    # The loop compares one integer a prompt; without a listener it never matches (counts start at 1).
    next_look = pace.begin() if pace is not None else 0
    # A bounded stream's prompts (see PromptStream.time_limit) then cost no system call each.
    with alarm_scope():
        prompts = iter(golden_set.prompts)
        while True:
            try:
                item = next(prompts)
            except StopIteration:
                break
            except SetTooLarge as exc:  # a stream past the limit (the producer was not asked again)
                strays.append(f"{where}: field prompts: {exception_message(exc)}")
                break
            except PLUGIN_FAILURES as exc:  # a stream's producer failed: a problem of the set, not a crash
                strays.append(f"{where}: field prompts: {stream_failure(count + 1, exc)}")
                break
            count += 1
            if count == next_look:
                next_look = pace.reached(count)  # type: ignore[union-attr]  (never reached without a pace: next_look is 0)
            if declared is not None and count > declared:  # an endless producer is refused, not followed
                strays.append(
                    f"{where}: field prompts: the PromptStream declares {counted(declared, 'prompt')} but yields more"
                )
                break
            if count > prompt_types.MAX_PROMPTS:  # a list or tuple that long (a stream stops itself)
                strays.append(f"{where}: field prompts: {prompt_limit_passed('the set holds')}")
                break
            if len(problems) + len(strays or prompt_problems) >= MAX_PROBLEMS_KEPT:
                stopped = f"{where}: the check stopped before prompt #{count}, after {MAX_PROBLEMS_KEPT:,} problems: mend these first"
                break
            if not isinstance(item, GoldenPrompt):
                strays.append(f"{where}, prompt #{count}: must be an evalkit.GoldenPrompt, got {_describe(item)}")
                continue
            if strays:
                continue  # only the strays are reported once there is one
            prompt_problems.extend(_prompt_problems(where, count, item, seen, kinds))
            if visit is not None and not problems and not prompt_problems:
                visit(item)
    if pace is not None:
        pace.end(count)
    if not count and not strays:
        problems.append(_empty_problem(where, "prompt"))
    if declared is not None and declared != count and not strays and not stopped:
        problems.append(
            f"{where}: field prompts: the PromptStream declares {counted(declared, 'prompt')} but yields {count}"
        )
    found = problems + (strays or prompt_problems)
    if stopped:  # the last prompt checked may have added several: the limit is the list's
        # the prompts after it were never checked: how many problems they hold is not known
        found = [*found[:MAX_PROBLEMS_KEPT], ProblemsNotKept(stopped, len(found) - MAX_PROBLEMS_KEPT, exact=False)]
    return PromptSetSurvey(tuple(found), count)


def paced(
    items: Iterable[Any],
    progress: Callable[[CheckProgress], None] | None,
    identifier: object,
    total: int | None = None,
    *,
    every: int | None = None,
    clock: Callable[[], float] | None = None,
) -> Iterator[Any]:
    """``items``, one by one, with how far a pass over them has come reported to ``progress`` as a
    check's is (see :func:`survey_prompt_set`: at the start, every ``every`` prompts or
    :data:`CHECK_PROGRESS_SECONDS`, and ``done`` at the end; ``identifier`` is the set's, ``total``
    how many there will be when known): for a pass over a set's prompts other than its check
    (``evalkit plan``'s estimate). Without ``progress``, ``items`` as they are. A pass its
    consumer leaves early is not reported as done."""
    every = _whole_every(every)
    pace = _pace(identifier, total, progress, every, clock)
    if pace is None:
        yield from items
        return
    number = 0
    next_look = pace.begin()
    for item in items:
        yield item
        number += 1
        if number == next_look:  # one integer comparison an item, as the check's loop
            next_look = pace.reached(number)
    pace.end(number)


def _whole_every(every: object) -> int:
    """``every`` (prompts between two reports), :data:`CHECK_PROGRESS_EVERY` when ``None``;
    :class:`ValueError` unless it is a whole number from 1."""
    every = CHECK_PROGRESS_EVERY if every is None else every
    if type(every) is not int or every < 1:
        raise ValueError(f"every must be a whole number of prompts from 1, got {short_repr(every)}")
    return every


def _known_total(prompts: Any, declared: int | None) -> int | None:
    """How many prompts a check will reach, when that is known without a pass: ``declared`` (a
    stream's count) or the length of a list or tuple — never ``len()`` of a stream, which reads it."""
    if isinstance(prompts, PromptStream):
        return declared
    return len(prompts) if isinstance(prompts, tuple | list) else None


def _pace(
    identifier: object,
    total: int | None,
    progress: Callable[[CheckProgress], None] | None,
    every: int,
    clock: Callable[[], float] | None,
) -> _Pace | None:
    """The pace of the reports of a pass over set ``identifier``; ``None`` without a listener."""
    if progress is None:
        return None
    import time

    shown = identifier if isinstance(identifier, str) else short_repr(identifier)
    return _Pace(
        lambda checked, done: progress(CheckProgress(shown, checked, total, done)), every, clock or time.monotonic
    )


class _Pace:
    """When a pass over a set's prompts reports how far it has come: at its start, at every
    ``every`` prompts, whenever :data:`CHECK_PROGRESS_SECONDS` have passed since the last report,
    and at its end.

    The pass calls :meth:`reached` only at the count it was last given (one integer comparison a
    prompt), and only then is the clock read. The next such count is the next multiple of
    ``every`` or, sooner, the end of a stride: as many prompts as came in an eighth of
    :data:`CHECK_PROGRESS_SECONDS` at the pace of the last stride, from 1 to
    :data:`CHECK_CLOCK_EVERY` — so a fast stream reads the clock every 64 prompts, and a stream
    of a prompt a second reads it at each prompt, and is reported on as soon as the time is up (a
    stream that slows down is caught up with within two strides of its old pace).
    """

    __slots__ = ("_clock", "_every", "_looked", "_looked_at", "_next_count", "_report", "_reported", "_stride")

    def __init__(self, report: Callable[[int, bool], None], every: int, clock: Callable[[], float]) -> None:
        self._report = report
        self._every = every
        self._clock = clock
        self._next_count = every
        self._stride = 1  # the first look tells the pace
        self._looked = self._reported = 0.0
        self._looked_at = 0

    def begin(self) -> int:
        """Report the start (0 prompts); the count at which to call :meth:`reached` first."""
        self._report(0, False)
        self._looked = self._reported = self._clock()
        return min(self._next_count, self._stride)

    def reached(self, count: int) -> int:
        """The pass has reached ``count`` prompts: report it when it is due; the next count to
        call this at (always past ``count``)."""
        now = self._clock()
        if count >= self._next_count or now - self._reported >= CHECK_PROGRESS_SECONDS:
            self._report(count, False)
            self._reported = now
            while self._next_count <= count:
                self._next_count += self._every
        elapsed, came = now - self._looked, count - self._looked_at
        # the prompts that come in an eighth of the interval at this pace (a stride in no time: the most)
        fit = came * CHECK_PROGRESS_SECONDS / (8 * elapsed) if elapsed > 0 else CHECK_CLOCK_EVERY
        self._stride = CHECK_CLOCK_EVERY if fit >= CHECK_CLOCK_EVERY else max(1, int(fit))
        self._looked, self._looked_at = now, count
        return min(self._next_count, count + self._stride)

    def end(self, count: int) -> None:
        """Report the end of the pass, at ``count`` prompts."""
        self._report(count, True)


def _issues(kind: Any, value: Any) -> list[Any]:
    """What an assertion kind's validator says of ``value``, read whole."""
    return list(kind.validate(value))


def _prompt_problems(
    where: str, number: int, prompt: GoldenPrompt, seen: set[str | bytes], kinds: Mapping[str, AssertionKind]
) -> list[str]:
    """The problems of prompt ``number`` (1-based) of a set; ``seen`` holds the ids before it."""
    at, problems = _located(where, "prompt", prompt, number, seen)
    conversation = bool(prompt.messages) and isinstance(prompt.messages, tuple)
    if not isinstance(prompt.prompt, str) or (not conversation and not has_visible_text(prompt.prompt)):
        problems.append(f"{at}: field prompt must not be empty (or hold only whitespace and control characters)")
    reference_ok = prompt.reference is None or isinstance(prompt.reference, str) or _is_answer(prompt.reference)
    if not reference_ok:
        problems.append(f"{at}: field reference must be a string or an evalkit.Answer")
    if prompt.system_prompt is not None and not isinstance(prompt.system_prompt, str):
        problems.append(f"{at}: field system_prompt must be a string")
    sent = [("prompt", prompt.prompt), ("system_prompt", prompt.system_prompt)]
    if conversation:
        sent += [(f"messages[{n}].content", getattr(turn, "content", None)) for n, turn in enumerate(prompt.messages)]
    for field, text in sent:
        lone = _lone_surrogate(text)
        if lone is not None and (field != "prompt" or has_visible_text(prompt.prompt)):
            problems.append(
                f"{at}: field {field} holds a lone surrogate ({lone}), which is no Unicode text: it cannot be encoded "
                "as UTF-8, so no endpoint can be sent it"
            )
    problems.extend(_tag_problems(at, prompt.tags))
    if not prompt.assertions and reference_ok and not prompt.reference_text:
        problems.append(f"{at}: field assertions is empty and there is no reference; declare at least one")
    if len(prompt.assertions) > MAX_CHECKS:
        # Each assertion is one check of the case's grading, which holds at most MAX_CHECKS: the
        # grading of such a prompt was refused in every run, blamed on the grader.
        problems.append(
            f"{at}: field assertions holds {len(prompt.assertions):,} assertions, more than the {MAX_CHECKS:,} checks "
            "a case's grading may have; split the prompt, or merge its assertions (one contains_any or contains_none holds many words)"
        )
    for number, assertion in enumerate(prompt.assertions, start=1):
        if not isinstance(assertion, Assertion):
            problems.append(
                f"{at}: field assertions[{number}] must be an evalkit.Assertion (e.g. Assertion.contains(...)), "
                f"got {_describe(assertion)}"
            )
            continue
        kind = kinds.get(assertion.kind)
        field = f"assertions[{number}] ({assertion.kind})"
        shape = value_shape_problem(assertion.value)
        if shape is not None:
            problems.append(f"{at}: field {field}: its value {shape}")
            continue
        if kind is None:
            known = listed(sorted(kinds))
            problems.append(f"{at}: field {field}: unknown assertion kind; known kinds: {known}")
            continue
        try:
            issues = carried(_issues, kind, assertion.value)
        except PLUGIN_FAILURES as exc:  # a plugin's validator must not hide the other problems
            issues = [f"validator raised {exception_text(exc)}"]
        problems.extend(f"{at}: field {field} {issue}" for issue in issues)
    if not problems:
        problems.extend(f"{at}: field {_field_path(path)}: {reason}" for path, reason in conversation_problems(prompt))
    return problems


def _lone_surrogate(text: object) -> str | None:
    """``U+D800, character 4`` for the first lone surrogate in ``text`` (half of a pair, alone: what
    ``os.fsdecode`` makes of bytes that are not UTF-8, or a ``"\\ud800"`` escape), else ``None``. A
    prompt holding one passed every check and then errored at the endpoint in every run, exit 3."""
    if not isinstance(text, str):
        return None
    lone = lone_surrogate(text)
    return None if lone is None else f"U+{lone[0]:04X}, character {lone[1]}"


def _tag_problems(at: str, tags: Iterable[object]) -> list[str]:
    """The problem with a prompt's tags, if any: each must be a string, and one holding a control
    or invisible character (a line break, a bidi override) prints as other tags: it is refused,
    named by its place and shown escaped. A space is fine (``North America``)."""
    stray_tags = [tag for tag in tags if not isinstance(tag, str)]
    if stray_tags:
        return [f"{at}: field tags must hold strings, got {_describe(stray_tags[0])}"]
    for number, tag in enumerate(tags, start=1):
        if (hidden := hidden_problem(tag)) is not None:  # type: ignore[arg-type]  (every tag is a str here)
            return [f"{at}: field tags[{number}] {hidden}"]
    return []


def _field_path(path: tuple[Any, ...]) -> str:
    """``messages[3].content`` from ``("messages", 3, "content")``; assertions are numbered from 1,
    as the other problems number them."""
    text = ""
    for index, part in enumerate(path):
        if isinstance(part, int):
            text += f"[{part + 1 if path[index - 1] == 'assertions' else part}]"
        else:  # a key inside a free-form value may be anything: value_path_text brackets and cuts it
            shown = value_path_text((part,))
            text += f".{shown}" if text and not shown.startswith("[") else shown
    return text


def _describe(value: object) -> str:
    """``str 'contains Paris'``: a stray value's type and a short repr, for a problem message."""
    return f"{type(value).__name__} {short_repr(value)}"


def validate_prompt_set(
    golden_set: GoldenPromptSet,
    kinds: Mapping[str, AssertionKind] | None = None,
    visit: Callable[[GoldenPrompt], None] | None = None,
    progress: Callable[[CheckProgress], None] | None = None,
) -> int:
    """Raise :class:`SetValidationError` listing every problem with ``golden_set``; else return
    how many prompts it has. One pass over the prompts (``visit`` and ``progress``: see
    :func:`survey_prompt_set`). An argument of the wrong kind (a set identifier instead of the
    set) is a :class:`~evalkit.errors.UsageError` naming it."""
    from .arguments import CALLBACK, check_arguments, one_of, optional

    wanted = {
        "golden_set": one_of(GoldenPromptSet),
        "kinds": optional(Mapping),
        "visit": CALLBACK,
        "progress": CALLBACK,
    }
    check_arguments("validate_prompt_set", locals(), wanted)
    if kinds is None:
        from .checks import BUILTIN_KINDS

        kinds = BUILTIN_KINDS
    survey = survey_prompt_set(golden_set, kinds, visit, progress)
    if survey.problems:
        raise SetValidationError(list(survey.problems))
    return survey.count
