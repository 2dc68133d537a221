"""Golden prompt sets' types: a :class:`PromptStream` is kept as a stream, produced anew on each
pass, counted once; lists and tuples are kept as tuples as before."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream
from evalkit.convert import dumps


def prompts(size: int) -> Iterator[GoldenPrompt]:
    for number in range(size):
        yield GoldenPrompt(id=f"p{number}", prompt=f"Question {number}?", assertions=[Assertion.contains("x")])


class Producer:
    """A producer that counts how often it is asked for the prompts."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.calls = 0

    def __call__(self) -> Iterator[GoldenPrompt]:
        self.calls += 1
        return prompts(self.size)


def test_a_set_keeps_a_stream_as_it_is_and_each_pass_produces_the_prompts_again() -> None:
    producer = Producer(3)
    stream = PromptStream(producer)
    golden = GoldenPromptSet(identifier="pkg.set", name="A set", prompts=stream)
    assert golden.prompts is stream and producer.calls == 0
    assert [p.id for p in golden.prompts] == ["p0", "p1", "p2"]
    assert [p.id for p in golden.prompts] == ["p0", "p1", "p2"]
    assert producer.calls == 2


def test_len_is_the_declared_count_else_counted_once_and_remembered() -> None:
    declared = Producer(3)
    assert len(PromptStream(declared, count=3)) == 3 and declared.calls == 0
    counted = Producer(4)
    stream = PromptStream(counted)
    assert len(stream) == 4 and len(stream) == 4 and counted.calls == 1
    passed = Producer(2)
    walked = PromptStream(passed)
    assert sum(1 for _ in walked) == 2 and len(walked) == 2 and passed.calls == 1  # a complete pass counts
    partly = Producer(5)
    broken_off = PromptStream(partly)
    next(iter(broken_off))
    assert len(broken_off) == 5 and partly.calls == 2  # a pass broken off counts nothing


def test_a_complete_pass_wins_over_a_wrong_declared_count() -> None:
    stream = PromptStream(Producer(2), count=7)
    assert len(stream) == 7
    list(stream)
    assert len(stream) == 2


def test_truth_does_not_walk_the_whole_stream() -> None:
    taken: list[int] = []

    def produce() -> Iterator[GoldenPrompt]:
        for prompt in prompts(1000):
            taken.append(1)
            yield prompt

    assert PromptStream(produce) and len(taken) == 1
    assert not PromptStream(lambda: iter(()))
    assert not PromptStream(Producer(0), count=0)


def test_repr_and_equality_do_not_produce_the_prompts() -> None:
    producer = Producer(3)
    stream = PromptStream(producer, count=3)
    golden = GoldenPromptSet(identifier="pkg.set", name="A set", prompts=stream)
    assert "PromptStream(" in repr(golden) and "3 prompts" in repr(golden) and producer.calls == 0
    assert golden == GoldenPromptSet(identifier="pkg.set", name="A set", prompts=stream)
    assert golden != GoldenPromptSet(identifier="pkg.set", name="A set", prompts=PromptStream(producer, count=3))
    assert hash(golden) == hash(GoldenPromptSet(identifier="pkg.set", name="A set", prompts=stream))
    assert producer.calls == 0


def test_lists_and_iterables_are_still_kept_as_tuples() -> None:
    assert isinstance(GoldenPromptSet(identifier="a.b", name="n", prompts=list(prompts(2))).prompts, tuple)
    assert isinstance(GoldenPromptSet(identifier="a.b", name="n", prompts=prompts(2)).prompts, tuple)
    assert GoldenPromptSet(identifier="a.b", name="n").prompts == ()


def test_a_streamed_set_has_the_json_of_the_same_prompts_in_a_tuple() -> None:
    streamed = GoldenPromptSet(identifier="a.b", name="n", prompts=PromptStream(Producer(3)))
    tupled = GoldenPromptSet(identifier="a.b", name="n", prompts=prompts(3))
    assert dumps(streamed) == dumps(tupled)


def test_a_stream_with_a_time_limit_interrupts_a_producer_that_stalls_at_its_start_or_later() -> None:
    import time

    def stalls_later():  # noqa: ANN202
        yield GoldenPrompt(id="a", prompt="p", assertions=[Assertion.contains("x")])
        time.sleep(60)
        yield GoldenPrompt(id="b", prompt="p", assertions=[Assertion.contains("x")])

    def stalls_at_start():  # noqa: ANN202
        time.sleep(60)
        return []

    for produce, yielded in ((stalls_later, ["a"]), (stalls_at_start, [])):
        stream = PromptStream(produce)
        stream.time_limit = 0.2
        seen: list[str] = []
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"no prompt within 0\.2 s \(set_load_timeout\); the producer was interrupted"):
            seen.extend(prompt.id for prompt in stream)
        assert seen == yielded and time.monotonic() - started < 10
    unlimited = PromptStream(lambda: [GoldenPrompt(id="a", prompt="p", assertions=[Assertion.contains("x")])])
    assert unlimited.time_limit is None and [p.id for p in unlimited] == ["a"] and len(unlimited) == 1


def test_an_outer_limit_that_passes_while_a_stream_produces_is_the_outer_ones() -> None:
    import time

    from evalkit.timeouts import TimeLimitExceeded, alarm_bounded

    def slow():  # noqa: ANN202
        time.sleep(10)
        yield GoldenPrompt(id="a", prompt="p", assertions=[Assertion.contains("x")])

    stream = PromptStream(slow)
    stream.time_limit = 30  # its own limit is far: the outer one (a grading's) passes first
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded) as raised:
        alarm_bounded(list, (stream,), 0.2, TimeLimitExceeded)
    assert type(raised.value) is TimeLimitExceeded and time.monotonic() - started < 5


def test_prompts_given_as_an_iterator_are_read_up_to_the_limit_and_no_further(monkeypatch) -> None:
    import evalkit.prompts
    from evalkit.errors import SetTooLarge

    from tests.support.members import numbered

    monkeypatch.setattr(evalkit.prompts, "MAX_PROMPTS", 3)
    made: list[int] = []

    def prompts(count: int | None):
        return numbered(lambda n: GoldenPrompt(id=f"p{n}", prompt="x", reference="x"), count, made)

    assert [p.id for p in GoldenPromptSet(identifier="a.b", name="n", prompts=prompts(3)).prompts] == ["p0", "p1", "p2"]
    made.clear()
    with pytest.raises(SetTooLarge, match="hold more than 3 prompts, the most evalkit takes in one set"):
        GoldenPromptSet(identifier="a.b", name="n", prompts=prompts(None))
    assert made == [0, 1, 2, 3]
    # a list is kept whole: the check names its size as a problem of the set
    assert len(GoldenPromptSet(identifier="a.b", name="n", prompts=list(prompts(5))).prompts) == 5


def test_handing_prompts_to_a_grader_asks_attrs_about_each_class_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: every case's prompt is walked before a grader gets its copy (is anything in it
    mutable?). A frozen class's field names are worked out once per class, not again for every
    value of every case (``attrs.has`` raised and caught an AttributeError inside for each)."""
    import attrs
    from evalkit.prompts import handed_prompt

    def prompt(number: int) -> GoldenPrompt:
        return GoldenPrompt(id=f"p{number}", prompt="Q?", assertions=[Assertion.contains("A"), Assertion.max_words(5)], reference="A")

    handed_prompt(prompt(0))
    asked: list[type] = []
    real = attrs.has
    monkeypatch.setattr(attrs, "has", lambda kind: asked.append(kind) or real(kind))
    first, second = prompt(1), prompt(2)
    for original in (first, second):
        handed = handed_prompt(original)
        assert handed == original and handed is not original
        assert handed.assertions is original.assertions  # nothing mutable in it: a shallow copy
    assert asked == []


def test_a_prompt_holding_a_mutable_value_is_still_copied_deep() -> None:
    """What the walk decides is unchanged: a list inside a frozen assertion is copied, not shared."""
    from evalkit.prompts import handed_prompt

    original = GoldenPrompt(id="p1", prompt="Q?", assertions=[Assertion("contains_any", ["A", "B"])])
    for _ in range(2):  # the second walk uses the class's field names worked out by the first
        handed = handed_prompt(original)
        assert handed == original
        assert handed.assertions[0].value is not original.assertions[0].value



def test_a_prompt_holding_an_object_whose_class_cannot_be_hashed_is_handed_as_a_copy() -> None:
    """The walk looked each value's class up in a set of plain types, and a class whose metaclass
    sets ``__hash__ = None`` (a library caller's object in an assertion) raised ``TypeError`` out of
    the grading of its case."""
    from evalkit.prompts import handed_prompt

    class Unhashable(type):
        __hash__ = None  # type: ignore[assignment]

    class Odd(metaclass=Unhashable):
        pass

    odd = Odd()
    prompt = GoldenPrompt(id="p1", prompt="Q?", assertions=[Assertion("contains", odd)])
    handed = handed_prompt(prompt)
    # copy.deepcopy looks the class up too and fails: handed as it is, in a shallow copy
    assert handed is not prompt and handed == prompt and handed.assertions[0].value is odd
