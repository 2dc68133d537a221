"""The openai generator's pace (evalkit_plugins._pacing): AIMD back-off on 429 and per-minute buckets,
on a fake clock (no timing assertions)."""

from __future__ import annotations

import asyncio

from evalkit_plugins import _pacing
from evalkit_plugins._pacing import MinuteBucket, Pacer


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_bucket_lets_its_capacity_through_then_waits_for_the_refill(monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(_pacing.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(_pacing.asyncio, "sleep", clock.sleep)
    bucket = MinuteBucket(2)

    async def take(times: int) -> None:
        for _ in range(times):
            await bucket.acquire()

    asyncio.run(take(2))
    assert clock.slept == [], "a full bucket lets its capacity through at once"
    asyncio.run(take(1))
    assert clock.slept == [30.0], "one more waits for one unit of refill: 60 s / 2"
    asyncio.run(bucket.acquire(10))
    assert sum(clock.slept) == 30.0 + 60.0, "more than the capacity takes the whole bucket"


def test_429s_halve_the_concurrency_once_per_wave_and_successes_bring_it_back() -> None:
    pacer = Pacer(8)
    pacer.rate_limited(retry_after=60)
    pacer.rate_limited(retry_after=60)  # the same wave
    assert pacer.limit == 4 and pacer.rate_limited_count == 2
    for _ in range(4):
        pacer.succeeded()
    assert pacer.limit == 5, "additive increase: one slot after as many successes as the limit"
    for _ in range(100):
        pacer.succeeded()
    assert pacer.limit == 8, "never above where it started"
    assert pacer.notes("http://x/v1") == ["concurrency lowered to 4 after 2 429s (http://x/v1); it recovered to 8 of 8"]
    assert Pacer(8).notes("http://x/v1") == []
