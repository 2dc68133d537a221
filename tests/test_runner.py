"""The runner's view of a set: its fingerprint and the cases a process answers, streamed or not."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream
from evalkit.runner import CaseSelection, SetDigest, Shard, select_cases, set_fingerprint

PROMPTS = tuple(
    GoldenPrompt(id=f"p{n}", prompt=f"Question {n}?", assertions=[Assertion.contains("x")], reference="x", tags=["t"])
    for n in range(50)
)
TUPLED = GoldenPromptSet(identifier="pkg.set", name="A set", description="d", prompts=PROMPTS, version="2")


class Producer:
    """Produces PROMPTS and counts the passes."""

    calls = 0

    def __call__(self) -> Iterator[GoldenPrompt]:
        self.calls += 1
        return iter(PROMPTS)


def test_a_streamed_set_has_the_fingerprint_of_the_same_prompts_in_a_tuple() -> None:
    producer = Producer()
    streamed = attrs.evolve(TUPLED, prompts=PromptStream(producer, count=len(PROMPTS)))
    assert set_fingerprint(streamed) == set_fingerprint(TUPLED)
    assert producer.calls == 1
    assert set_fingerprint(attrs.evolve(streamed, prompts=PromptStream(lambda: iter(PROMPTS[:-1])))) != set_fingerprint(TUPLED)


def test_the_digest_fed_a_prompt_at_a_time_is_the_fingerprint() -> None:
    digest = SetDigest(TUPLED)
    for prompt in PROMPTS:
        digest.add(prompt)
    assert digest.fingerprint() == set_fingerprint(TUPLED) == digest.fingerprint()


def test_the_fingerprint_is_the_digest_of_the_whole_json() -> None:
    import hashlib

    from evalkit.convert import dumps

    whole = "sha256:" + hashlib.sha256(dumps(TUPLED).encode()).hexdigest()[:32]
    assert set_fingerprint(TUPLED) == whole
    assert set_fingerprint(attrs.evolve(TUPLED, prompts=PromptStream(Producer()))) == whole


def test_selected_cases_are_filtered_lazily_and_counted_without_a_list() -> None:
    producer = Producer()
    stream = PromptStream(producer, count=len(PROMPTS))
    everything = select_cases(stream, None, set())
    assert isinstance(everything, CaseSelection) and producer.calls == 0
    assert len(everything) == 50 and producer.calls == 0  # nothing filtered: the set's own count
    shard, skip = Shard(2, 3), {"p1", "p4", "p7"}
    chosen = select_cases(stream, shard, skip)
    expected = [p.id for p in PROMPTS if shard.owns(p.id) and p.id not in skip]
    assert len(chosen) == len(expected) and producer.calls == 1
    assert len(chosen) == len(expected) and producer.calls == 1  # remembered
    assert [p.id for p in chosen] == expected and producer.calls == 2
    assert [p.id for p in select_cases(PROMPTS, shard, skip)] == expected


def test_the_shards_of_a_stream_partition_it() -> None:
    stream = PromptStream(Producer())
    ids = [p.id for index in (1, 2, 3) for p in select_cases(stream, Shard(index, 3), set())]
    assert sorted(ids) == sorted(p.id for p in PROMPTS)

