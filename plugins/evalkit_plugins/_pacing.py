"""How fast the ``openai`` generator asks one endpoint: a concurrency that backs off on 429 and
recovers, and the instance's per-minute limits.

* **Back-off (AIMD)**: requests in flight start at the run's concurrency. A 429 (or any answer
  carrying ``Retry-After``) halves the limit — at most once per wave: 429s answered within the
  same ``Retry-After`` window count as one — down to 1; every ``limit`` successful answers since
  the last change raise it by one again, up to where it started (additive increase,
  multiplicative decrease, as TCP does). What happened is kept for the run's notes
  (:meth:`Pacer.notes`: "concurrency lowered to 12 after 429s").
* **Per-minute limits**: ``max_requests_per_minute`` and ``max_tokens_per_minute`` are honoured
  from the first request, each a token bucket over 60 seconds (:class:`MinuteBucket`: full at the
  start, refilled evenly). A request's tokens are estimated before it is sent: its body's length
  over 4, plus its ``max_tokens``. (A dozen lines here rather than ``aiolimiter``: the same
  algorithm, and one dependency fewer for every install.)
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import Any

__all__ = ["MinuteBucket", "Pacer"]


class MinuteBucket:
    """``capacity`` units per ``period`` seconds: full at the start, refilled evenly; taking more
    than is there waits until it is."""

    def __init__(self, capacity: int, period: float = 60.0) -> None:
        self.capacity = capacity
        self.rate = capacity / period
        self.level = float(capacity)
        self.stamp = time.monotonic()

    async def acquire(self, amount: int = 1) -> None:
        """Take ``amount`` units (at most the capacity), waiting for them when they are not there."""
        amount = min(amount, self.capacity)
        while True:
            now = time.monotonic()
            self.level = min(float(self.capacity), self.level + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.level >= amount:
                self.level -= amount
                return
            await asyncio.sleep((amount - self.level) / self.rate)


class Pacer:
    """One endpoint's pace for one event loop (see the module docstring)."""

    def __init__(self, ceiling: int, requests_per_minute: int | None = None, tokens_per_minute: int | None = None) -> None:
        self.ceiling = self.limit = max(1, ceiling)
        self.lowest = self.limit
        self.in_use = 0
        self.rate_limited_count = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._since_change = 0
        self._quiet_until = 0.0
        self._requests: Any = None
        self._tokens: Any = None
        if requests_per_minute:
            self._requests = MinuteBucket(requests_per_minute)
        if tokens_per_minute:
            self._tokens = MinuteBucket(tokens_per_minute)

    async def acquire(self, tokens: int = 0) -> None:
        """Wait for a slot under the current limit, then for the per-minute buckets."""
        while self.in_use >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if not waiter.cancelled() and waiter.done():
                    self._wake()  # pass the wake-up on
                raise
        self.in_use += 1
        try:
            if self._requests is not None:
                await self._requests.acquire()
            if self._tokens is not None and tokens:
                await self._tokens.acquire(tokens)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Give the slot back."""
        self.in_use -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def succeeded(self) -> None:
        """An answer came: after ``limit`` of them since the last change, one more slot."""
        if self.limit >= self.ceiling:
            return
        self._since_change += 1
        if self._since_change >= self.limit:
            self.limit += 1
            self._since_change = 0
            self._wake()

    def rate_limited(self, retry_after: float | None) -> None:
        """A 429: halve the limit, once per wave (429s within the same ``Retry-After`` window)."""
        self.rate_limited_count += 1
        now = time.monotonic()
        if now < self._quiet_until:
            return
        self._quiet_until = now + max(retry_after or 0.0, 0.05)
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self._since_change = 0

    def notes(self, where: str) -> list[str]:
        """What the run's notes say of this endpoint's pace (nothing when it never backed off)."""
        if not self.rate_limited_count:
            return []
        line = f"concurrency lowered to {self.lowest} after {self.rate_limited_count} 429s ({where})"
        if self.lowest < self.ceiling:
            line += f"; it recovered to {self.limit} of {self.ceiling}"
        return [line]
