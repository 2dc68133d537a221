"""The runner's view of a set: its fingerprint and the cases a process answers, streamed or not."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence

import attrs
import pytest
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet, PromptStream
from evalkit.answers import Answer, GenerationRequest
from evalkit.checks import BUILTIN_KINDS
from evalkit.components import BoundGenerator
from evalkit.errors import SetChangedError, StoreFailure
from evalkit.runner import (
    COMMIT_BATCH,
    COMMIT_WAIT_S,
    CaseSelection,
    PromptOrder,
    SetDigest,
    Shard,
    execute_prompts,
    select_cases,
    set_fingerprint,
)
from evalkit.runs import CaseResult, Run
from evalkit_plugins.deterministic import DeterministicGrader

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



class _TimedStore:
    """A repository that keeps each group commit (its cases and when it came); ``fail_at`` makes
    that commit (1-based) raise, as a store that breaks mid-run does."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.batches: list[tuple[float, list[str]]] = []
        self.fail_at = fail_at

    def record_cases(self, run_id: str, cases: Sequence[CaseResult], privacy: str) -> None:
        if self.fail_at is not None and len(self.batches) + 1 == self.fail_at:
            raise StoreFailure("the store went away")
        self.batches.append((time.monotonic(), [c.case_id for c in cases]))

    @property
    def stored(self) -> list[str]:
        return [case_id for _, ids in self.batches for case_id in ids]


class _Sleepy:
    """An async generator answering every prompt after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.started: list[tuple[float, str]] = []

    async def agenerate(self, request: GenerationRequest) -> Answer:
        self.started.append((time.monotonic(), request.case_id or ""))
        await asyncio.sleep(self.delay)
        return Answer(request.prompt, model="m")


def _answer_all(store: _TimedStore, generator: _Sleepy, size: int, concurrency: int, on_case=None) -> int:  # noqa: ANN001
    prompts = [GoldenPrompt(f"c{n:04d}", f"say {n}", reference=f"say {n}") for n in range(size)]
    return asyncio.run(
        execute_prompts(
            run=Run("r", "s", "deterministic"), prompts=prompts, bound=BoundGenerator(generator, "sleepy", "inst", "alias", True),
            grader=DeterministicGrader(), repository=store, kinds=BUILTIN_KINDS, concurrency=concurrency, privacy="metadata",
            on_case=on_case,
        )
    )


def test_a_slow_generator_gets_a_commit_per_case_before_the_next_request() -> None:
    store, generator = _TimedStore(), _Sleepy(COMMIT_WAIT_S * 2)
    assert _answer_all(store, generator, 4, concurrency=1) == 4
    assert [ids for _, ids in store.batches] == [["c0000"], ["c0001"], ["c0002"], ["c0003"]]
    for (committed, _), (asked, _) in zip(store.batches[:-1], generator.started[1:], strict=True):
        assert committed <= asked, "each case was committed before the next prompt was asked"


def test_a_fast_generator_gets_group_commits_and_every_case_once() -> None:
    store = _TimedStore()
    assert _answer_all(store, _Sleepy(0.001), 800, concurrency=16) == 800
    assert sorted(store.stored) == [f"c{n:04d}" for n in range(800)]
    assert len(store.batches) < 800 / 4, f"{len(store.batches)} commits for 800 cases"
    assert max(len(ids) for _, ids in store.batches) <= COMMIT_BATCH


def test_a_commit_that_fails_on_the_timer_stops_the_run_with_the_stores_error() -> None:
    store = _TimedStore(fail_at=2)
    with pytest.raises(StoreFailure, match="the store went away"):
        _answer_all(store, _Sleepy(0.001), 400, concurrency=8)
    assert len(store.batches) == 1, "nothing is committed after the store failed"


def test_cancelling_a_run_commits_every_case_that_finished() -> None:
    store, finished = _TimedStore(), []

    async def run_then_cancel() -> None:
        prompts = [GoldenPrompt(f"c{n:04d}", f"say {n}", reference=f"say {n}") for n in range(10_000)]
        task = asyncio.ensure_future(
            execute_prompts(
                run=Run("r", "s", "deterministic"), prompts=prompts,
                bound=BoundGenerator(_Sleepy(0.001), "sleepy", "inst", "alias", True), grader=DeterministicGrader(),
                repository=store, kinds=BUILTIN_KINDS, concurrency=8, privacy="metadata",
                on_case=lambda case: finished.append(case.case_id),
            )
        )
        while len(finished) < 50:
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run_then_cancel())
    assert sorted(store.stored) == sorted(finished), "every case that finished is committed, none twice"


HOSTILE = "nul\x00 lone\udcff escape\uffff0 bidi\u202e sep\u2028 \x1b[31m sk-" + "k" * 40


class _Hostile:
    """An async generator whose answers carry what a store and a terminal must survive, its API
    key among them (a secret it holds: the stored case has it scrubbed), and long enough to be cut
    by the ``redacted`` level."""

    def secret_values(self) -> list[str]:
        return ["secret-api-key-0123456789"]

    async def agenerate(self, request: GenerationRequest) -> Answer:
        await asyncio.sleep(0.0005)
        answer = f"{request.prompt} {HOSTILE} secret-api-key-0123456789 " + "long " * 200 * (request.case_id[-1] == "7")
        return Answer(answer, model="m")


@pytest.mark.parametrize("privacy", ["full", "redacted", "metadata"])
def test_on_stored_gets_each_commit_as_the_store_reads_it_back(tmp_path, privacy) -> None:  # noqa: ANN001
    """What ``on_stored`` is given — every commit's cases in commit order, as the store keeps them
    (secrets scrubbed, texts reduced to the privacy level, NUL and lone surrogates kept) — is exactly
    what reading the run back gives, case for case and in the same order."""
    from evalkit.storage import close_repository, open_repository

    repository = open_repository(f"sqlite:///{tmp_path / 'results.db'}")
    try:
        run = repository.begin_run(Run("r", "s", "deterministic", case_count=600))
        prompts = [
            GoldenPrompt(f"c{n:04d}-{HOSTILE}", f"say {n}", assertions=[Assertion.contains(str(n))]) for n in range(600)
        ]
        commits: list[list[CaseResult]] = []
        answered = asyncio.run(
            execute_prompts(
                run=run, prompts=prompts, bound=BoundGenerator(_Hostile(), "hostile", "inst", "alias", True),
                grader=DeterministicGrader(), repository=repository, kinds=BUILTIN_KINDS, concurrency=16,
                privacy=privacy, on_stored=commits.append,
            )
        )  # fmt: skip
        assert answered == 600 and len(commits) > 1
        given = [case for commit in commits for case in commit]
        assert given == list(repository.iter_cases("r"))
        assert all("secret-api-key" not in (case.answer_text or "") for case in given)
        assert any(case.answer_text for case in given) == (privacy != "metadata")
    finally:
        close_repository(repository)


def _prompts(*ids: str) -> list[GoldenPrompt]:
    return [GoldenPrompt(id=i, prompt="p", reference="r") for i in ids]


def _order(*ids: str) -> PromptOrder:
    order = PromptOrder("pkg.set")
    for prompt_id in ids:
        order.see(prompt_id)
    return order


def test_a_later_pass_with_the_same_ids_goes_through_whole() -> None:
    ids = [f"p{n}" for n in range(100)]
    assert [p.id for p in _order(*ids).follow(_prompts(*ids))] == ids


@pytest.mark.parametrize(
    ("later", "where", "yielded_before"),
    [
        (["x", "b", "c", "d", "e"], 'prompt #1 differs (#1 is "x" now, "a" when checked)', 0),
        (["a", "b", "x", "d", "e"], "prompts #3 to #4 differ", 3),  # found at the next checkpoint
        (["a", "b", "c", "d", "x"], "prompt #5 differs", 5),  # past the last checkpoint: at the end
        (["a", "b", "c", "d", "e", "f"], "it yielded 6 prompts this time, 5 when checked", 6),
        (["a", "b", "c", "d"], "it yielded 4 prompts this time, 5 when checked", 4),
        (["a", "b", "c", "e", "d"], 'prompts #3 to #4 differ (#4 is "e" now, "d" when checked)', 3),  # reordered
    ],
)
def test_a_later_pass_that_differs_raises_where_it_is_found(later: list[str], where: str, yielded_before: int) -> None:
    seen: list[str] = []
    with pytest.raises(SetChangedError) as raised:
        for prompt in _order("a", "b", "c", "d", "e").follow(_prompts(*later)):
            seen.append(prompt.id)
    assert len(seen) == yielded_before
    assert str(raised.value) == (
        f'set "pkg.set" changed while it ran: its prompts are not the ones checked before the run began ({where}); '
        "a PromptStream must yield the same prompts, in the same order, every time"
    )
    assert raised.value.exit_code == 3


def test_a_case_selection_holds_every_pass_to_the_order_before_filtering() -> None:
    order = _order("a", "b", "c")
    selection = select_cases(_prompts("a", "b", "c"), None, {"a"}, order)
    assert [p.id for p in selection] == ["b", "c"] and len(selection) == 2
    with pytest.raises(SetChangedError):
        list(select_cases(_prompts("a", "x", "c"), None, {"a"}, order))


def test_a_producer_that_fails_on_a_later_pass_is_a_changed_set() -> None:
    def failing() -> Iterator[GoldenPrompt]:
        yield from _prompts("a", "b")
        raise OSError("gone")

    with pytest.raises(SetChangedError, match=r"\(producing prompt #3 raised OSError: gone\)"):
        list(_order("a", "b", "c").follow(failing()))
