"""A plugin's synchronous method that returns an awaitable is refused at the boundary of every
synchronous plugin call (evalkit.errors.carried), saying what to write instead, its coroutine closed."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from evalkit.errors import carried, carried_async


class Plugin:
    async def generate(self, request: object) -> str:
        return "never awaited"

    async def check_ready(self) -> None:
        raise RuntimeError("not ready, but nobody awaited me")

    async def aclose(self) -> None:
        return None


def test_a_generate_written_async_is_told_to_be_agenerate_and_its_coroutine_is_closed() -> None:
    """It was taken as a value: "the generator returned coroutine '<coroutine object … at 0x…>',
    not an Answer", and Python printed "coroutine … was never awaited" from evalkit's modules."""
    made = []
    plugin = Plugin()

    def generate(request: object) -> object:
        made.append(plugin.generate(request))
        return made[-1]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError) as refused:
            carried(generate, "a request")
    assert made[0].cr_frame is None  # closed: nothing left to warn about
    assert str(refused.value) == (
        'generate() returned a coroutine of "Plugin.generate", which evalkit does not await: '
        "declare the method as async def agenerate() (evalkit awaits that one), or return the value itself"
    )


def test_a_check_ready_written_async_is_refused_not_passed_over() -> None:
    """A coroutine is truthy and raised nothing: an ``async def check_ready`` refused nothing."""
    with pytest.raises(TypeError, match=r"^check_ready\(\) returned a coroutine of \"Plugin.check_ready\", which evalkit does not "
                       r"await: check_ready\(\) is never awaited, so run the asynchronous work to its end inside it"):  # fmt: skip
        carried(Plugin().check_ready)
    with pytest.raises(TypeError, match=r"^use_it\(\) returned a coroutine"):
        carried(lambda: Plugin().check_ready(), method="use_it")
    with pytest.raises(TypeError, match=r"^the plugin's call returned a coroutine"):
        carried(lambda: Plugin().check_ready())


def test_a_caller_that_awaits_what_it_calls_gets_the_awaitable() -> None:
    closing = carried(Plugin().aclose, awaits=True)
    assert closing.cr_frame is not None
    closing.close()


def test_an_awaited_call_that_gives_an_awaitable_is_refused_and_its_coroutine_closed() -> None:
    """``await agenerate(…)`` gave another coroutine, taken as the value (and never awaited)."""
    made = []

    async def inner() -> str:
        return "never awaited"

    async def agenerate() -> object:
        made.append(inner())
        return made[-1]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r'^agenerate\(\) returned a coroutine of "test_an_awaited_call.*inner", which evalkit '
                           r"does not await: evalkit awaits agenerate\(\) once, so await what it returned inside it"):  # fmt: skip
            asyncio.run(carried_async(agenerate()))
    assert made[0].cr_frame is None
    assert asyncio.run(carried_async(inner())) == "never awaited"


def test_a_plain_value_a_call_returns_skips_the_awaitable_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: most plugin calls (a check's verdict, a validator's list of issues) return a plain
    built-in value, which no awaitable is: it is told apart by its type, without
    ``inspect.isawaitable``'s ABC check on every call of every case. Anything else is still checked."""
    import evalkit.awaitables as awaitables

    checked: list[object] = []
    real = awaitables.inspect.isawaitable
    monkeypatch.setattr(awaitables.inspect, "isawaitable", lambda value: checked.append(value) or real(value))
    for value in (True, 3, 2.5, "text", b"bytes", None, ["issue"], ("a",), {"k": 1}):
        assert carried(lambda value=value: value) == value
    assert checked == []
    other = object()
    assert carried(lambda: other) is other
    assert checked == [other]


def test_a_str_subclass_that_is_awaitable_is_still_refused() -> None:
    """The plain-value shortcut matches exact types: a ``str`` subclass with ``__await__`` is an awaitable."""

    class AwaitableText(str):
        def __await__(self):  # type: ignore[no-untyped-def]
            yield from ()

    with pytest.raises(TypeError, match="returned a AwaitableText"):
        carried(lambda: AwaitableText("x"), method="grade")
