"""Set rules, checked before any generator call; every message names the set, the prompt and the field."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from evalkit import Answer, Assertion, GoldenPrompt, GoldenPromptSet, PromptStream, validate_prompt_set
from evalkit.checks import BUILTIN_KINDS
from evalkit.errors import SetValidationError, UsageError
from evalkit.evaluation import evaluate_set
from evalkit.validation import PromptSetSurvey, check_label, prompt_set_problems, survey_prompt_set
from evalkit.wording import arguments_named


def one_prompt_set(identifier: str = "pkg.set", **prompt: object) -> GoldenPromptSet:
    fields = {"id": "p1", "prompt": "Say hi", "assertions": [Assertion.contains("hi")], **prompt}
    return GoldenPromptSet(identifier=identifier, name="A set", prompts=[GoldenPrompt(**fields)])


@pytest.mark.parametrize("identifier", ["nr_ai_search.chat", "test", "a.b.c", "x_1.y_2"])
def test_valid_identifiers(identifier: str) -> None:
    validate_prompt_set(one_prompt_set(identifier))


@pytest.mark.parametrize("identifier", ["", "NrAiSearch.chat", ".chat", "chat.", "nr ai search", "a..b", "pkg.set\n"])
def test_invalid_identifiers(identifier: str) -> None:
    problems = prompt_set_problems(one_prompt_set(identifier), BUILTIN_KINDS)
    assert len(problems) == 1 and "field identifier" in problems[0]


def test_lists_are_kept_as_tuples() -> None:
    golden = one_prompt_set()
    assert isinstance(golden.prompts, tuple) and isinstance(golden.prompts[0].assertions, tuple)


def test_every_problem_is_reported_with_set_prompt_and_field() -> None:
    golden = GoldenPromptSet(
        identifier="pkg.bad",
        name="",
        prompts=[
            GoldenPrompt(id="r", prompt="x", assertions=[Assertion.regex("/(unclosed/")]),
            GoldenPrompt(id="s", prompt="x", assertions=[Assertion.json_schema('{"type": 12}')]),
            GoldenPrompt(id="j", prompt="x", assertions=[Assertion.json_schema("{not json")]),
            GoldenPrompt(id="n", prompt="x"),
            GoldenPrompt(id="n", prompt="y", reference="ok"),
            GoldenPrompt(id="e", prompt="x", assertions=[Assertion.contains(""), Assertion.max_words(0), Assertion.contains_any([])]),
            GoldenPrompt(id="k", prompt="x", assertions=[Assertion(kind="no_such_kind", value="v")]),
            GoldenPrompt(id="", prompt=""),
        ],
    )
    with pytest.raises(SetValidationError) as caught:
        validate_prompt_set(golden)
    problems = caught.value.problems
    text = "\n".join(problems)
    assert all(p.startswith('set "pkg.bad"') for p in problems)
    assert "field name must not be empty" in text
    assert 'prompt "r": field assertions[1] (regex) invalid regular expression' in text
    assert 'prompt "s": field assertions[1] (json_schema) is not a valid JSON Schema' in text
    assert 'prompt "j": field assertions[1] (json_schema) is not valid JSON' in text
    assert 'prompt "n": field assertions is empty and there is no reference' in text
    assert 'prompt "n": field id is used by more than one prompt' in text
    assert 'prompt "e": field assertions[1] (contains) must be a non-empty string' in text
    assert 'prompt "e": field assertions[2] (max_words) must be a positive integer' in text
    assert 'prompt "e": field assertions[3] (contains_any) must be a non-empty list of strings' in text
    assert 'prompt "k": field assertions[1] (no_such_kind): unknown assertion kind' in text
    assert 'prompt "#8": field id must be a non-empty string (not only whitespace and control characters)' in text
    assert 'prompt "#8": field prompt must not be empty' in text


def test_reference_only_prompts_are_valid_and_whitespace_reference_counts() -> None:
    validate_prompt_set(one_prompt_set(assertions=[], reference="Paris"))
    validate_prompt_set(one_prompt_set(assertions=[], reference=" "))
    validate_prompt_set(one_prompt_set(assertions=[], reference=Answer(text="I can't", abstained=True)))
    with pytest.raises(SetValidationError):
        validate_prompt_set(one_prompt_set(assertions=[], reference=""))


def test_a_set_needs_prompts() -> None:
    with pytest.raises(SetValidationError, match="field prompts must hold at least one prompt"):
        validate_prompt_set(GoldenPromptSet(identifier="pkg.empty", name="Empty"))


def test_unsupported_pcre_modifier_is_refused() -> None:
    with pytest.raises(SetValidationError, match="unsupported PCRE modifier"):
        validate_prompt_set(one_prompt_set(assertions=[Assertion.regex("/a+/U")]))


def test_each_problem_word_for_word() -> None:
    from evalkit.checks import AssertionKind

    def broken(value: object) -> list[str]:
        raise RuntimeError("no idea")

    kinds = {**BUILTIN_KINDS, "flaky": AssertionKind("flaky", lambda value, answer: True, broken)}
    golden = GoldenPromptSet(
        identifier="Bad Id",
        name=" ",
        prompts=[
            GoldenPrompt(id="a", prompt="x", reference=42, system_prompt=7),  # type: ignore[arg-type]
            GoldenPrompt(id="b", prompt="x", assertions=[Assertion(kind="flaky"), Assertion(kind="nope")]),
        ],
    )
    assert prompt_set_problems(golden, kinds) == [
        'set "Bad Id": field identifier must be lowercase segments of a-z, 0-9 and _ joined by dots (like package.set), '
        "got 'Bad Id'",
        'set "Bad Id": field name must not be empty',
        'set "Bad Id", prompt "a": field reference must be a string or an evalkit.Answer',
        'set "Bad Id", prompt "a": field system_prompt must be a string',
        'set "Bad Id", prompt "b": field assertions[1] (flaky) validator raised RuntimeError: no idea',
        'set "Bad Id", prompt "b": field assertions[2] (nope): unknown assertion kind; known kinds: '
        + ", ".join(sorted(kinds)),
    ]


def test_a_string_system_prompt_and_an_answer_reference_are_fine() -> None:
    validate_prompt_set(one_prompt_set(system_prompt="", reference=Answer("hi")))


def streamed(golden: GoldenPromptSet, count: int | None = None) -> GoldenPromptSet:
    """``golden`` with its prompts behind a :class:`PromptStream` (produced anew on each pass)."""
    prompts = tuple(golden.prompts)
    return attrs.evolve(golden, prompts=PromptStream(lambda: iter(prompts), count=count))


def test_a_streamed_set_gets_the_same_problems_word_for_word_in_one_pass() -> None:
    golden = GoldenPromptSet(
        identifier="pkg.bad",
        name="",
        prompts=[
            GoldenPrompt(id="n", prompt="x"),
            GoldenPrompt(id="n", prompt="y", reference="ok"),
            GoldenPrompt(id="e", prompt="x", assertions=[Assertion.contains(""), Assertion.max_words(0)]),
            GoldenPrompt(id="", prompt=""),
        ],
    )
    passes = []
    stream = PromptStream(lambda: passes.append(1) or iter(golden.prompts))
    survey = survey_prompt_set(attrs.evolve(golden, prompts=stream), BUILTIN_KINDS)
    assert list(survey.problems) == prompt_set_problems(golden, BUILTIN_KINDS) and survey.count == 4
    assert len(passes) == 1
    assert len(stream) == 4 and len(passes) == 1  # the complete pass counted it


def test_a_stray_in_a_stream_is_named_by_its_position_and_only_strays_are_reported() -> None:
    golden = GoldenPromptSet(
        identifier="pkg.strays",
        name="Strays",
        prompts=[GoldenPrompt(id="a", prompt=""), "What is 2 + 2?", GoldenPrompt(id="b", prompt="x"), 42],
    )
    expected = [
        'set "pkg.strays", prompt #2: must be an evalkit.GoldenPrompt, got str \'What is 2 + 2?\'',
        'set "pkg.strays", prompt #4: must be an evalkit.GoldenPrompt, got int 42',
    ]
    assert prompt_set_problems(golden, BUILTIN_KINDS) == expected
    assert prompt_set_problems(streamed(golden), BUILTIN_KINDS) == expected


def test_an_empty_stream_a_wrong_count_and_a_failing_producer_are_problems() -> None:
    good = one_prompt_set()
    assert prompt_set_problems(streamed(good, count=1), BUILTIN_KINDS) == []
    empty = attrs.evolve(good, prompts=PromptStream(lambda: iter(())))
    assert prompt_set_problems(empty, BUILTIN_KINDS) == ['set "pkg.set": field prompts must hold at least one prompt']
    assert prompt_set_problems(streamed(good, count=3), BUILTIN_KINDS) == [
        'set "pkg.set": field prompts: the PromptStream declares 3 prompts but yields 1'
    ]

    def failing() -> Iterator[GoldenPrompt]:
        yield from good.prompts
        raise OSError("the prompts file went away")

    assert prompt_set_problems(attrs.evolve(good, prompts=PromptStream(failing)), BUILTIN_KINDS) == [
        'set "pkg.set": field prompts: producing prompt #2 raised OSError: the prompts file went away'
    ]


def test_a_set_past_the_prompt_limit_is_a_problem_however_it_holds_its_prompts(monkeypatch) -> None:
    """A list that long, a stream that yields more (its pass stops there: the producer is not asked
    again) and a declared count above the limit (no prompt is asked for)."""
    import evalkit.prompts
    from evalkit.errors import SetTooLarge
    from evalkit.validation import count_members

    monkeypatch.setattr(evalkit.prompts, "MAX_PROMPTS", 3)
    prompts = [GoldenPrompt(id=f"p{n}", prompt="x", assertions=[Assertion.contains("x")]) for n in range(4)]
    golden = GoldenPromptSet(identifier="pkg.four", name="Four", prompts=prompts)
    assert prompt_set_problems(golden, BUILTIN_KINDS) == [
        'set "pkg.four": field prompts: the set holds more than 3 prompts, the most evalkit takes in one set'
    ]
    asked: list[str] = []

    def produce() -> Iterator[GoldenPrompt]:
        for prompt in prompts:
            asked.append(prompt.id)
            yield prompt

    stream = PromptStream(produce)
    assert prompt_set_problems(attrs.evolve(golden, prompts=stream), BUILTIN_KINDS) == [
        'set "pkg.four": field prompts: the PromptStream yields more than 3 prompts, the most evalkit takes in one '
        "set (a producer that never ends?)"
    ]
    assert asked == ["p0", "p1", "p2", "p3"]
    with pytest.raises(SetTooLarge):
        len(stream)
    assert count_members(stream)[0] is None
    assert count_members(PromptStream(produce, count=3)) == (3, None)
    declared = PromptStream(produce, count=4)
    asked.clear()
    assert prompt_set_problems(attrs.evolve(golden, prompts=declared), BUILTIN_KINDS) == [
        'set "pkg.four": field prompts: the PromptStream declares 4 prompts, which is more than 3 prompts, the most '
        "evalkit takes in one set"
    ]
    assert count_members(declared)[0] is None
    assert survey_prompt_set(attrs.evolve(golden, prompts=declared), BUILTIN_KINDS).count == 0  # none was read
    assert asked == []
    # a stream that declares exactly the limit, and yields it, is a set like any other
    exact = PromptStream(lambda: iter(prompts[:3]), count=3)
    assert survey_prompt_set(attrs.evolve(golden, prompts=exact), BUILTIN_KINDS) == PromptSetSurvey((), 3)


@pytest.mark.parametrize("count", ["10", -1, 1.5, True, float("nan")], ids=["str", "negative", "float", "bool", "nan"])
def test_a_declared_count_that_is_no_whole_number_from_0_is_a_problem_not_a_crash(count: object) -> None:
    """A plugin's count="10" ended the check (and `evalkit list sets`) in an internal error; -1 made
    len() raise, True read as 1. The stream is refused before a prompt is made, and counted no
    other way."""
    from evalkit.validation import count_members

    made: list[int] = []
    golden = one_prompt_set()
    stream = PromptStream(lambda: made.append(1) or iter(golden.prompts), count=count)  # type: ignore[arg-type]
    problem = f"the PromptStream's count must be a whole number from 0 or None, got {count!r}"
    assert prompt_set_problems(attrs.evolve(golden, prompts=stream), BUILTIN_KINDS) == [f'set "pkg.set": field prompts: {problem}']
    assert count_members(stream) == (None, problem)
    assert made == []
    assert len(stream) == 1 and made == [1]  # len() counts by reading, as for a stream that declares none


def test_the_check_keeps_the_first_problems_and_says_where_it_stopped(monkeypatch) -> None:
    import evalkit.validation

    monkeypatch.setattr(evalkit.validation, "MAX_PROBLEMS_KEPT", 2)
    blank = [GoldenPrompt(id=f"p{n}", prompt=" ", assertions=[Assertion.contains("x")]) for n in range(5)]
    survey = survey_prompt_set(GoldenPromptSet(identifier="pkg.blank", name="Blank", prompts=blank), BUILTIN_KINDS)
    assert survey.problems == (
        'set "pkg.blank", prompt "p0": field prompt must not be empty (or hold only whitespace and control characters)',
        'set "pkg.blank", prompt "p1": field prompt must not be empty (or hold only whitespace and control characters)',
        'set "pkg.blank": the check stopped before prompt #3, after 2 problems: mend these first',
    )
    strays = PromptStream(lambda: iter(range(5)))
    survey = survey_prompt_set(GoldenPromptSet(identifier="pkg.strays", name="Strays", prompts=strays), BUILTIN_KINDS)
    assert len(survey.problems) == 3
    assert survey.problems[-1] == 'set "pkg.strays": the check stopped before prompt #3, after 2 problems: mend these first'


def test_the_checks_list_is_its_limit_and_one_line_however_its_problems_came(monkeypatch) -> None:
    """The set's own problems (its name) count toward the limit, a prompt with several problems
    does not take the list past it, and a stream stopped early is not said to yield too few: so
    the list fits what the SetValidationError carrying it keeps (bounded_problems), uncut."""
    import evalkit.validation

    monkeypatch.setattr(evalkit.validation, "MAX_PROBLEMS_KEPT", 3)
    blank = [GoldenPrompt(id="same", prompt=" ", assertions=[Assertion.contains("x")]) for _ in range(5)]  # 2 problems from #2 on
    stream = PromptStream(lambda: iter(blank), count=5)
    survey = survey_prompt_set(GoldenPromptSet(identifier="pkg.blank", name=" ", prompts=stream), BUILTIN_KINDS)
    assert len(survey.problems) == 4 and survey.problems[0].startswith('set "pkg.blank": field name')
    assert survey.problems[-1] == 'set "pkg.blank": the check stopped before prompt #3, after 3 problems: mend these first'
    assert not any("declares" in problem for problem in survey.problems)
    with pytest.raises(SetValidationError) as refused:
        validate_prompt_set(GoldenPromptSet(identifier="pkg.blank", name=" ", prompts=blank), BUILTIN_KINDS)
    assert refused.value.problems == survey.problems


def numbered_set(size: int, identifier: str = "pkg.many") -> GoldenPromptSet:
    """A valid set of ``size`` prompts, as a tuple."""
    prompts = [GoldenPrompt(id=f"p{n}", prompt="x", assertions=[Assertion.contains("x")]) for n in range(size)]
    return GoldenPromptSet(identifier=identifier, name="Many", prompts=prompts)


def test_the_check_reports_growing_counts_as_it_goes_and_once_when_it_ends(monkeypatch) -> None:
    """Reported as the pass begins, every ``every`` prompts and once ``done``; the total is what is
    known without a pass: a tuple's length, a stream's declared count, else None (len() of an
    uncounted stream would read it). Time stands still here (see the tests of the time rule)."""
    import evalkit.validation
    from evalkit.validation import CheckProgress

    monkeypatch.setattr(evalkit.validation, "CHECK_PROGRESS_SECONDS", float("inf"))  # for validate_prompt_set's real clock
    golden = numbered_set(25)
    for shipped, total in ((golden, 25), (streamed(golden, count=25), 25), (streamed(golden), None)):
        heard: list[CheckProgress] = []
        survey = survey_prompt_set(shipped, BUILTIN_KINDS, progress=heard.append, every=10, clock=lambda: 0.0)
        assert survey == PromptSetSurvey((), 25)
        assert [(r.checked, r.done) for r in heard] == [(0, False), (10, False), (20, False), (25, True)]
        assert {(r.identifier, r.total) for r in heard} == {("pkg.many", total)}
    # the run's entry point passes it down, with the visitor, in the same one pass
    heard = []
    seen: list[str] = []
    assert validate_prompt_set(streamed(golden), visit=lambda p: seen.append(p.id), progress=heard.append) == 25
    assert len(seen) == 25 and [r.checked for r in heard] == [0, 25]  # default every: more than 25
    assert heard[-1].done


def test_another_pass_over_the_prompts_is_reported_as_the_check_is() -> None:
    """paced (the estimate's pass in `evalkit plan`): every item passed through, reported at the
    start, every ``every`` items and ``done`` at the end; nothing without a listener, and no
    ``done`` for a pass its consumer leaves early."""
    from evalkit.validation import CheckProgress, paced

    golden = numbered_set(25)
    heard: list[CheckProgress] = []
    items = list(paced(streamed(golden).prompts, heard.append, "pkg.many", 25, every=10, clock=lambda: 0.0))
    assert [p.id for p in items] == [p.id for p in golden.prompts]
    assert [(r.identifier, r.checked, r.total, r.done) for r in heard] == [
        ("pkg.many", 0, 25, False), ("pkg.many", 10, 25, False), ("pkg.many", 20, 25, False), ("pkg.many", 25, 25, True),
    ]  # fmt: skip
    assert [p.id for p in paced(golden.prompts, None, "pkg.many")] == [p.id for p in golden.prompts]
    heard.clear()
    for _ in zip(range(12), paced(golden.prompts, heard.append, "pkg.many", every=10, clock=lambda: 0.0), strict=False):
        pass
    assert [(r.checked, r.done) for r in heard] == [(0, False), (10, False)]
    with pytest.raises(ValueError, match="every must be a whole number of prompts from 1"):
        list(paced(golden.prompts, heard.append, "pkg.many", every=0))


def test_a_set_with_problems_still_ends_its_report_and_a_refused_count_reports_nothing() -> None:
    from evalkit.validation import CheckProgress

    heard: list[CheckProgress] = []
    broken = attrs.evolve(numbered_set(3), identifier=["not", "text"])  # a stray identifier, shown by its repr
    assert prompt_set_problems(broken, BUILTIN_KINDS, heard.append)
    assert [(r.identifier, r.checked, r.done) for r in heard] == [("['not', 'text']", 0, False), ("['not', 'text']", 3, True)]
    heard.clear()
    refused = attrs.evolve(numbered_set(3), prompts=PromptStream(lambda: iter(()), count=-1))
    assert prompt_set_problems(refused, BUILTIN_KINDS, heard.append) and heard == []


@pytest.mark.parametrize("every", [0, -5, 2.5, True], ids=["zero", "negative", "float", "bool"])
def test_a_reporting_interval_that_is_no_whole_number_from_1_is_refused(every: object) -> None:
    from evalkit.validation import count_members

    with pytest.raises(ValueError, match="^every must be a whole number of prompts from 1, got "):
        survey_prompt_set(numbered_set(3), BUILTIN_KINDS, progress=lambda r: None, every=every)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^every must be a whole number of prompts from 1, got "):
        count_members(streamed(numbered_set(3)).prompts, lambda r: None, "pkg.many", every=every)  # type: ignore[arg-type]


class PacedClock:
    """A clock for the time rule: it tells ``now`` (moved on by the stream it is given to, as if
    each prompt took ``step`` seconds to produce) and counts how often it is read."""

    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def stream(self, golden: GoldenPromptSet, step: float, count: int | None = None) -> GoldenPromptSet:
        """``golden`` streamed, each prompt ``step`` seconds after the one before."""
        prompts = tuple(golden.prompts)

        def produce() -> Iterator[GoldenPrompt]:
            for prompt in prompts:
                self.now += step
                yield prompt

        return attrs.evolve(golden, prompts=PromptStream(produce, count=count))


def test_a_reporting_interval_of_1_reports_every_prompt_and_a_report_is_not_done_unless_said() -> None:
    from evalkit.validation import CheckProgress

    heard: list[CheckProgress] = []
    survey_prompt_set(numbered_set(3), BUILTIN_KINDS, progress=heard.append, every=1, clock=PacedClock())
    assert [(r.checked, r.done) for r in heard] == [(0, False), (1, False), (2, False), (3, False), (3, True)]
    assert CheckProgress("pkg.set", 5) == CheckProgress("pkg.set", 5, None, False)  # a report is of a pass going on


def test_the_clock_is_read_at_the_start_at_prompt_1_and_every_64_prompts_of_a_fast_stream() -> None:
    """A fast stream (no time passes): the clock is read as the pass begins, at prompt 1 (to tell
    the pace) and then every 64 prompts — 129 prompts: at 0, 1, 65 and 129."""
    clock = PacedClock()
    survey_prompt_set(clock.stream(numbered_set(129), step=0.0), BUILTIN_KINDS, progress=lambda r: None, clock=clock)
    assert clock.reads == 4


def test_the_pace_is_told_by_the_time_between_two_looks_not_by_the_clocks_reading() -> None:
    """A steady stream of a prompt every 0.1 ms on a clock that reads 1,000 s: 64 prompts fit in an
    eighth of the quarter second, so the clock is read every 64 prompts, as at 0 s."""
    clock = PacedClock()
    clock.now = 1_000.0
    survey_prompt_set(clock.stream(numbered_set(1_000), step=0.0001), BUILTIN_KINDS, progress=lambda r: None, clock=clock)
    assert clock.reads <= 2 + 1_000 // 64 + 3
    # a prompt every 1.5 ms: 20 of them fit in an eighth of the quarter second, so the clock is read
    # at 0, 1, then every 20 or so prompts of 200 (the report at the quarter second among them)
    clock = PacedClock()
    survey_prompt_set(clock.stream(numbered_set(200), step=0.0015), BUILTIN_KINDS, progress=lambda r: None, clock=clock)
    assert clock.reads == 11


def test_a_slow_stream_is_reported_on_every_quarter_second_not_every_thousand_prompts() -> None:
    """Eight prompts a second (a stream from an API): a report every 1,000 prompts was one every
    two minutes. The clock is read at each prompt at that pace, and a report made once 0.25 s have
    passed since the last: every second prompt here (0.125 s each; binary fractions, exact)."""
    from evalkit.validation import CheckProgress

    clock = PacedClock()
    heard: list[CheckProgress] = []
    golden = clock.stream(numbered_set(20), step=0.125)
    assert survey_prompt_set(golden, BUILTIN_KINDS, progress=heard.append, clock=clock) == PromptSetSurvey((), 20)
    assert [(r.checked, r.done) for r in heard] == [(0, False), *((n, False) for n in range(2, 21, 2)), (20, True)]
    # the count rule still holds between them: every 5 prompts, and every 0.25 s
    clock, heard = PacedClock(), []
    survey_prompt_set(clock.stream(numbered_set(12), step=0.125), BUILTIN_KINDS, progress=heard.append, every=5, clock=clock)
    assert [r.checked for r in heard] == [0, 2, 4, 5, 7, 9, 10, 12, 12]  # 0.25 s from the last report, whichever rule made it


def test_a_fast_stream_reads_the_clock_once_every_64_prompts_and_reports_by_count_alone() -> None:
    """A stream that takes no time (as a fast producer's, to the clock's eye): what the time rule
    costs is a clock read every :data:`CHECK_CLOCK_EVERY` prompts, and the reports are the count's."""
    from evalkit.validation import CHECK_CLOCK_EVERY, CheckProgress

    clock = PacedClock()
    heard: list[CheckProgress] = []
    golden = clock.stream(numbered_set(3_000), step=0.0)
    survey_prompt_set(golden, BUILTIN_KINDS, progress=heard.append, clock=clock)
    assert [r.checked for r in heard] == [0, 1_000, 2_000, 3_000, 3_000]
    assert clock.reads <= 2 + 3_000 // CHECK_CLOCK_EVERY + 3  # the first look (at prompt 1), the strides, the count's
    # a pace that slows down is caught up with: 64 fast prompts, then one every 0.125 s
    clock, heard = PacedClock(), []
    slowing = numbered_set(100)

    def produce() -> Iterator[GoldenPrompt]:
        for number, prompt in enumerate(slowing.prompts):
            clock.now += 0.0 if number < CHECK_CLOCK_EVERY else 0.125
            yield prompt

    survey_prompt_set(attrs.evolve(slowing, prompts=PromptStream(produce)), BUILTIN_KINDS, progress=heard.append, clock=clock)
    counts = [r.checked for r in heard]
    # the first report after the fast part within two strides of it; from then on, every 0.25 s (2 prompts)
    assert counts[0] == 0 and CHECK_CLOCK_EVERY + 2 <= counts[1] <= 2 * CHECK_CLOCK_EVERY + 1, counts
    assert {later - earlier for earlier, later in zip(counts[1:-2], counts[2:-1], strict=True)} == {2} and heard[-1].checked == 100, counts


def test_without_a_listener_the_clock_is_never_read() -> None:
    from evalkit.validation import count_members

    clock = PacedClock()
    survey_prompt_set(clock.stream(numbered_set(200), step=1.0), BUILTIN_KINDS, clock=clock)
    count_members(clock.stream(numbered_set(200), step=1.0).prompts, clock=clock)
    assert clock.reads == 0


def test_counting_a_stream_for_evalkit_list_reports_as_a_check_does() -> None:
    """``count_members`` reads a stream that declares no count (``evalkit list sets``): it reports
    its start, every ``every`` prompts, every 0.25 s and its end, with no total; members counted
    without a pass (a tuple, a declared count) report nothing."""
    from evalkit.validation import CheckProgress, count_members

    heard: list[CheckProgress] = []
    golden = numbered_set(25)
    assert count_members(streamed(golden).prompts, heard.append, "pkg.many", every=10, clock=lambda: 0.0) == (25, None)
    assert heard == [CheckProgress("pkg.many", n, None, n == 25) for n in (0, 10, 20, 25)]
    heard.clear()
    assert count_members(golden.prompts, heard.append, "pkg.many") == (25, None)
    assert count_members(streamed(golden, count=25).prompts, heard.append, "pkg.many") == (25, None)
    assert heard == []
    # slowly: by the time rule
    clock = PacedClock()
    assert count_members(clock.stream(numbered_set(6), step=0.125).prompts, heard.append, "pkg.slow", clock=clock) == (6, None)
    assert [(r.checked, r.done) for r in heard] == [(0, False), (2, False), (4, False), (6, False), (6, True)]


def test_counting_a_failing_stream_ends_its_report_and_a_listeners_error_is_not_the_streams() -> None:
    from evalkit.validation import CheckProgress, count_members

    def failing() -> Iterator[GoldenPrompt]:
        yield from numbered_set(12).prompts
        raise ConnectionError("the prompt database went away")

    heard: list[CheckProgress] = []
    assert count_members(PromptStream(failing), heard.append, "pkg.failing", every=5, clock=lambda: 0.0) == (
        None, "producing prompt #13 raised ConnectionError: the prompt database went away"
    )  # fmt: skip
    assert [(r.checked, r.done) for r in heard] == [(0, False), (5, False), (10, False), (12, True)]

    def listener(report: CheckProgress) -> None:
        if report.checked == 10:
            raise KeyError("the listener's own")

    with pytest.raises(KeyError, match="the listener's own"):
        count_members(streamed(numbered_set(12)).prompts, listener, "pkg.many", every=5, clock=lambda: 0.0)


def test_validate_prompt_set_returns_the_count_and_shows_each_prompt_to_visit_once() -> None:
    golden = GoldenPromptSet(
        identifier="pkg.two", name="Two",
        prompts=[GoldenPrompt(id=i, prompt="x", assertions=[Assertion.contains("x")]) for i in ("a", "b")],
    )
    seen: list[str] = []
    assert validate_prompt_set(streamed(golden), visit=lambda p: seen.append(p.id)) == 2
    assert seen == ["a", "b"]


def test_visit_stops_at_the_first_problem_so_it_never_sees_a_malformed_prompt() -> None:
    golden = GoldenPromptSet(
        identifier="pkg.three", name="Three",
        prompts=[
            GoldenPrompt(id="a", prompt="x", assertions=[Assertion.contains("x")]),
            GoldenPrompt(id="b", prompt="x", assertions=["contains x"]),  # type: ignore[list-item]
            GoldenPrompt(id="c", prompt="x", assertions=[Assertion.contains("x")]),
        ],
    )
    seen: list[str] = []
    survey = survey_prompt_set(streamed(golden), BUILTIN_KINDS, visit=lambda p: seen.append(p.id))
    assert seen == ["a"] and survey.count == 3
    assert survey.problems == (
        'set "pkg.three", prompt "b": field assertions[1] must be an evalkit.Assertion (e.g. Assertion.contains(...)), '
        "got str 'contains x'",
    )


def nested(depth: int, container: type = list) -> object:
    value: object = "x"
    for _ in range(depth):
        value = container([value]) if container is not dict else {"k": value}
    return value


@pytest.mark.parametrize("container", [list, tuple, dict])
def test_an_assertion_value_may_nest_up_to_the_limit_and_no_deeper(container: type) -> None:
    from evalkit.shapes import MAX_VALUE_NESTING

    assert prompt_set_problems(one_prompt_set(assertions=[Assertion("json_schema", {"enum": [nested(MAX_VALUE_NESTING - 1, container)]})]), BUILTIN_KINDS) == []
    (problem,) = prompt_set_problems(one_prompt_set(assertions=[Assertion("json_schema", {"enum": [nested(MAX_VALUE_NESTING, container)]})]), BUILTIN_KINDS)
    assert problem == 'set "pkg.set", prompt "p1": field assertions[1] (json_schema): its value is nested more than 64 lists and mappings deep'


def test_a_value_referenced_twice_is_fine_and_one_containing_itself_is_not() -> None:
    shared = ["a", "b"]
    assert prompt_set_problems(one_prompt_set(assertions=[Assertion("json_schema", {"enum": [shared, shared]})]), BUILTIN_KINDS) == []
    looped: list[object] = ["a"]
    looped.append({"again": looped})
    (problem,) = prompt_set_problems(one_prompt_set(assertions=[Assertion("json_schema", {"enum": looped})]), BUILTIN_KINDS)
    assert problem.endswith("field assertions[1] (json_schema): its value contains itself, so it would never end")


def test_a_value_that_fans_out_by_reference_is_refused_without_walking_it_all() -> None:
    fanned: object = ["x"] * 9
    for _ in range(8):  # 9 ** 8 = 43 million lists when walked
        fanned = [fanned] * 9
    (problem,) = prompt_set_problems(one_prompt_set(assertions=[Assertion("json_schema", {"enum": fanned})]), BUILTIN_KINDS)
    assert "its value holds more than 100,000 lists and mappings" in problem


def test_ids_names_and_identifiers_longer_than_1000_characters_are_refused_shown_short() -> None:
    assert prompt_set_problems(one_prompt_set(id="i" * 1_000), BUILTIN_KINDS) == []
    (problem,) = prompt_set_problems(one_prompt_set(id="i" * 1_001), BUILTIN_KINDS)
    assert problem == f'set "pkg.set", prompt "{"i" * 57}...": field id is 1,001 characters long, more than the 1,000 allowed'
    (problem,) = prompt_set_problems(one_prompt_set("a" * 2_000), BUILTIN_KINDS)
    assert problem.endswith("field identifier is 2,000 characters long, more than the 1,000 allowed")
    long_name = GoldenPromptSet(identifier="pkg.set", name="N" * 5_000, prompts=[GoldenPrompt(id="p1", prompt="hi", reference="x")])
    (problem,) = prompt_set_problems(long_name, BUILTIN_KINDS)
    assert problem == 'set "pkg.set": field name is 5,000 characters long, more than the 1,000 allowed'


def test_tags_must_be_strings() -> None:
    (problem,) = prompt_set_problems(one_prompt_set(tags=["ok", 3]), BUILTIN_KINDS)
    assert problem == 'set "pkg.set", prompt "p1": field tags must hold strings, got int 3'


def test_a_stray_value_that_cannot_be_shown_is_still_named() -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    (first,) = prompt_set_problems(one_prompt_set(tags=[10**5000]), BUILTIN_KINDS)
    assert first.endswith("field tags must hold strings, got int (not shown: repr() raised ValueError)")
    (second,) = prompt_set_problems(one_prompt_set(assertions=[Unprintable()]), BUILTIN_KINDS)
    assert "must be an evalkit.Assertion (e.g. Assertion.contains(...)), got Unprintable (not shown: repr() raised RuntimeError)" in second


def test_long_ids_are_told_apart_and_repeated_ones_found_by_their_digest() -> None:
    from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, validate_prompt_set
    from evalkit.errors import SetValidationError

    stem = "x" * 900

    def prompt(prompt_id: str) -> GoldenPrompt:
        return GoldenPrompt(id=prompt_id, prompt="p", assertions=[Assertion.contains("a")])

    distinct = GoldenPromptSet(identifier="t.long", name="t", prompts=[prompt(stem + "a"), prompt(stem + "b"), prompt("a")])
    validate_prompt_set(distinct)  # 900 shared characters, one that differs: no duplicate
    repeated = GoldenPromptSet(identifier="t.long", name="t", prompts=[prompt(stem + "a"), prompt(stem + "b"), prompt(stem + "a")])
    with pytest.raises(SetValidationError) as raised:
        validate_prompt_set(repeated)
    (problem,) = raised.value.problems
    assert problem.startswith('set "t.long", prompt "xxxx') and problem.endswith("field id is used by more than one prompt")


def test_an_identifier_and_a_name_of_exactly_1000_characters_are_fine() -> None:
    golden = GoldenPromptSet(identifier="a" * 1_000, name="N" * 1_000, prompts=[GoldenPrompt(id="p", prompt="hi", reference="x")])
    assert prompt_set_problems(golden, BUILTIN_KINDS) == []
    longer = GoldenPromptSet(identifier="a" * 1_001, name="N" * 1_001, prompts=[GoldenPrompt(id="p", prompt="hi", reference="x")])
    # the label shows the identifier cut to 200 characters (evalkit.shapes.set_label)
    shown = f'set "{"a" * 200}… (1,001 characters)"'
    assert prompt_set_problems(longer, BUILTIN_KINDS) == [
        f"{shown}: field identifier is 1,001 characters long, more than the 1,000 allowed",
        f"{shown}: field name is 1,001 characters long, more than the 1,000 allowed",
    ]


def test_an_identifier_of_exactly_1000_characters_is_still_held_to_the_identifier_rule() -> None:
    """The length rule gives way at 1,000 characters, the pattern does not: an identifier of exactly
    1,000 upper-case letters is refused for its letters, showing what was given (the "too long"
    wording, which omits it, is kept for what is longer)."""
    golden = GoldenPromptSet(identifier="A" * 1_000, name="n", prompts=[GoldenPrompt(id="p", prompt="hi", reference="x")])
    (problem,) = prompt_set_problems(golden, BUILTIN_KINDS)
    assert "field identifier must be lowercase segments of a-z, 0-9 and _ joined by dots" in problem, problem
    assert ", got 'AAAA" in problem, problem


@pytest.mark.parametrize("label", [None, "", "nightly", "L" * 1_000])
def test_a_run_label_of_text_up_to_1000_characters_is_accepted(label: object) -> None:
    check_label(label)


@pytest.mark.parametrize(
    ("label", "message"),
    [("L" * 1_001, "label is 1,001 characters long, more than the 1,000 allowed"),
     (7, "a run label must be text, got int 7"), (b"nightly", "a run label must be text, got bytes b'nightly'")],
)
def test_a_run_label_that_is_no_text_or_too_long_is_refused(label: object, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        check_label(label)
    assert str(caught.value) == message


def test_a_too_long_label_is_named_as_its_caller_gave_it() -> None:
    """A Python caller's ``label=`` is named as the keyword (it was ``--label`` to everyone);
    `evalkit run --label` still reads "--label …" (tests/test_hostile_input.py)."""
    with pytest.raises(UsageError, match=r"^label is 1,001 characters long"):
        evaluate_set("evalkit.smoke", label="L" * 1_001, database="sqlite:///:memory:")
    with arguments_named(), pytest.raises(UsageError, match=r"^--label is 1,001 characters long"):
        check_label("L" * 1_001)


def test_an_id_of_60_characters_is_shown_whole_and_a_longer_one_cut() -> None:
    def twice(prompt_id: str) -> GoldenPromptSet:
        prompts = [GoldenPrompt(id=prompt_id, prompt="hi", reference="x") for _ in range(2)]
        return GoldenPromptSet(identifier="pkg.set", name="A set", prompts=prompts)

    assert prompt_set_problems(twice("i" * 60), BUILTIN_KINDS) == [
        f'set "pkg.set", prompt "{"i" * 60}": field id is used by more than one prompt'
    ]
    assert prompt_set_problems(twice("i" * 61), BUILTIN_KINDS) == [
        f'set "pkg.set", prompt "{"i" * 57}...": field id is used by more than one prompt'
    ]


def test_long_ids_holding_lone_surrogates_are_compared_too() -> None:
    # what os.fsdecode makes of bytes that are not UTF-8; a long id is remembered by its digest
    stray = "x" * 40 + "\udcff"
    prompts = [GoldenPrompt(id=i, prompt="hi", reference="x") for i in (stray, stray + "y", stray)]
    (problem,) = prompt_set_problems(GoldenPromptSet(identifier="pkg.set", name="A set", prompts=prompts), BUILTIN_KINDS)
    assert problem.endswith("field id is used by more than one prompt")


@pytest.mark.parametrize("text", ["\ud800", " \u200b\n", "\x00\t", "\u2028\u2029"])
def test_a_prompt_of_only_surrogates_format_controls_or_separators_is_empty(text: str) -> None:
    golden = GoldenPromptSet(identifier="pkg.set", name="A set", prompts=[GoldenPrompt(id="p1", prompt=text, reference="x")])
    assert prompt_set_problems(golden, BUILTIN_KINDS) == [
        'set "pkg.set", prompt "p1": field prompt must not be empty (or hold only whitespace and control characters)'
    ]


def test_conversation_problems_name_the_field_by_its_path_assertions_counted_from_1() -> None:
    from evalkit.conversations import Message, Tool

    def problems(**fields: object) -> list[str]:
        prompt = GoldenPrompt(**{"id": "p1", "prompt": "Say hi", "assertions": [Assertion.contains("hi")], **fields})
        return prompt_set_problems(GoldenPromptSet(identifier="pkg.set", name="A set", prompts=[prompt]), BUILTIN_KINDS)

    at = 'set "pkg.set", prompt "p1": field '
    assert problems(assertions=[Assertion.contains("hi"), Assertion.contains("x").at_turn(0)]) == [
        at + "assertions[2].turn: must be a whole number of at least 1 (the model's N-th reply)"
    ]
    assert problems(prompt="", messages=[Message.user("hi"), Message("robot", "x"), Message.user("go")]) == [
        at + "messages[1].role: must be one of system, user, assistant, tool, got 'robot'"  # messages count from 0
    ]
    tools = [Tool("f", "d", {"type": "object"}), Tool("f", "d", {"type": "object"})]
    assert problems(tools=tools, assertions=[Assertion.tool_called("f")]) == [
        at + "tools[1].function.name: the tool 'f' is already declared at tools[0]"
    ]


def test_a_stream_yielding_more_prompts_than_it_declares_is_refused_without_being_followed() -> None:
    import itertools

    from evalkit import PromptStream

    endless = PromptStream(lambda: (GoldenPrompt(id=f"p{n}", prompt="hi", reference="x") for n in itertools.count()), count=2)
    survey = survey_prompt_set(GoldenPromptSet(identifier="pkg.set", name="A set", prompts=endless), BUILTIN_KINDS)
    assert survey.problems == ('set "pkg.set": field prompts: the PromptStream declares 2 prompts but yields more',)
    assert survey.count == 3  # stopped at the first prompt past the declared count


def test_the_message_of_a_set_validation_error_quotes_five_problems_and_counts_the_rest() -> None:
    """str() of the error joined every problem kept (up to 1,000 of 12,000 characters: 12 MB) for
    a library caller printing it; it quotes the first five and says how many more, and
    ``problems`` still holds those kept."""
    problems = [f"problem {number}" for number in range(5_000_000)]
    error = SetValidationError(problems)
    assert len(error.problems) == 1_001
    assert str(error) == "; ".join(problems[:5]) + "; and 4,999,995 more problems"
    assert str(SetValidationError(problems[:6])) == "; ".join(problems[:5]) + "; and 1 more problem"
    assert str(SetValidationError(problems[:5])) == "; ".join(problems[:5])
    blank = [GoldenPrompt(id=f"p{n}", prompt=" ", reference="x") for n in range(2_000)]
    stopped = survey_prompt_set(GoldenPromptSet(identifier="t.blank", name="Blank", prompts=blank), BUILTIN_KINDS)
    assert str(SetValidationError(list(stopped.problems))).endswith("; and at least 995 more problems")


@pytest.mark.parametrize("field", ["prompt", "system_prompt"])
def test_a_plugin_prompt_holding_a_lone_surrogate_is_refused_not_sent_and_errored(field: str) -> None:
    # a set provider's text with half a surrogate pair (os.fsdecode of bytes that are not UTF-8):
    # valid until the endpoint was sent it — "surrogates not allowed", every case errored, exit 3
    fields = {"prompt": "Say hi", field: "caf\udcc3 open?"}
    golden = GoldenPromptSet(identifier="pkg.set", name="A set", prompts=[GoldenPrompt(id="p1", reference="x", **fields)])
    assert prompt_set_problems(golden, BUILTIN_KINDS) == [
        f'set "pkg.set", prompt "p1": field {field} holds a lone surrogate (U+DCC3, character 4), which is no Unicode '
        "text: it cannot be encoded as UTF-8, so no endpoint can be sent it"
    ]


def test_a_conversation_turn_holding_a_lone_surrogate_is_refused_too() -> None:
    from evalkit.conversations import Message

    prompt = GoldenPrompt(id="p1", prompt="", messages=[Message.user("caf\udcc3")], assertions=[Assertion.contains("x")])
    assert prompt_set_problems(GoldenPromptSet(identifier="pkg.set", name="A set", prompts=[prompt]), BUILTIN_KINDS) == [
        'set "pkg.set", prompt "p1": field messages[0].content holds a lone surrogate (U+DCC3, character 4), which is '
        "no Unicode text: it cannot be encoded as UTF-8, so no endpoint can be sent it"
    ]
