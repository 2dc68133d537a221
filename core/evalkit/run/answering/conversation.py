"""The one place a conversation is driven: scripted user turns, tool calls answered from canned
results, and ``max_steps``.

A chat-capable generator (:class:`~evalkit.components.ChatGenerator`) answers one model turn at a
time; :func:`converse` does the rest, the same for every adapter:

* the system message: the instance's base system prompt, then the prompt's own system prompt (or
  its conversation's system turns), joined into ONE system message (chat templates such as
  llama.cpp's accept one);
* ``fixed``: the history is sent as written and the model answers its last user turn;
  ``scripted``: each user turn is sent in order, the model's reply to it fed back before the next;
* each tool call the model makes is answered from the prompt's canned results — the first whose
  ``name`` is the tool's and whose ``arguments`` JSON Schema the call's arguments match; a call
  that none matches gets ``{"error": "no canned result for …"}`` and the conversation goes on —
  and the model is asked again, until it replies without a tool call or ``max_steps`` model turns
  answered one user turn (then the conversation stops there);
* the answer is the final reply, with the transcript of every turn after the fixed history, the
  sum of every turn's token counts and the loop's own checks (:func:`loop_checks`).

One call of :func:`converse` answers one case once: a run that answers each prompt several times
calls it once per answer.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from ...answers import Answer, ChatRequest, GenerationRequest, Turn, UsageSetAside, answer_problems, sum_usage
from ...checks import schema_matches
from ...conversations import DEFAULT_MAX_STEPS, CannedResult, ConversationMode, Message, ToolCall
from ...errors import GenerationError
from ...grading import Check, Grading
from ...jsontext import NotJsonNumber
from ...prompts import GoldenPrompt, handed_prompt
from ...shapes import clipped, value_fault

__all__ = [
    "CANNED_RESULTS_CHECK",
    "MAX_STEPS_CHECK",
    "Conversation",
    "TurnCall",
    "canned_result",
    "converse",
    "joined_system_prompt",
    "plain_request",
    "with_loop_checks",
]

#: The most tool calls evalkit takes from one model turn. Each is answered, sent back with every
#: later request of the conversation and stored: an endpoint that returned 100,000 calls in one turn
#: was answered 100,000 times, and `evalkit show --show-all` printed 200,000 lines for the case.
MAX_TOOL_CALLS_PER_TURN = 1_000

#: The check a conversation with tools fails when it stopped at ``max_steps`` without a reply.
MAX_STEPS_CHECK = "max_steps"
#: The check a conversation with tools fails when the model made a call no canned result matched.
CANNED_RESULTS_CHECK = "canned_results"

TurnCall = Callable[[ChatRequest], Awaitable[Any]]


def joined_system_prompt(base: str | None, own: str | None) -> str | None:
    """The one system message: the base system prompt, a blank line, the prompt's own; ``None``
    when neither has text. A prompt's own empty system prompt adds nothing."""
    parts = [text for text in (base, own) if text]
    return "\n\n".join(parts) if parts else None


def plain_request(prompt: GoldenPrompt, base: str | None, options: dict[str, Any]) -> GenerationRequest:
    """The request of a prompt that is no conversation: its text, and the base system prompt joined
    with its own. ``options`` are extra request fields (``model``, ``case_id``, …)."""
    system = joined_system_prompt(base, prompt.system_prompt)
    if system is None and prompt.system_prompt is not None:
        system = prompt.system_prompt  # "" stays a real (empty) system prompt, as before
    return GenerationRequest(prompt=prompt.prompt, system_prompt=system, **options)


@attrs.frozen
class Conversation:
    """A conversation answered: the answer (its final reply, the transcript, the summed usage),
    the loop's checks (empty for a conversation without tools) and the requests it took (one a
    model turn)."""

    answer: Answer
    checks: tuple[Check, ...] = ()
    requests: int = 1


def canned_result(prompt: GoldenPrompt, call: ToolCall) -> tuple[str, bool]:
    """The tool turn's text for ``call`` and whether a canned result matched it."""
    declared = {tool.name for tool in prompt.tools}
    candidates: list[CannedResult] = [c for c in prompt.tool_results if c.name == call.name]
    for canned in candidates:
        if schema_matches(canned.arguments, call.arguments) is None:
            try:
                return canned.content(), True
            except NotJsonNumber as exc:  # a set run without validation: never sent as NaN
                raise GenerationError(f"the canned result of {call.name} cannot be sent to the model: it {exc}") from None
    if call.name not in declared:
        error = f"no tool named {call.name!r} (tools: {', '.join(sorted(declared)) or 'none'})"
    elif isinstance(call.arguments, str):
        error = f"no canned result for {call.name}: its arguments are not JSON"
    else:
        error = f"no canned result for {call.name} with these arguments"
    return json.dumps({"error": error}, ensure_ascii=False), False


def _turn(value: Any) -> Turn:
    """A chat generator's reply as a :class:`Turn` the loop can use: a ``Turn`` checked (text or a
    tool call, each call named, at most :data:`MAX_TOOL_CALLS_PER_TURN`, what it reports beside
    them held to an answer's rule), a plain ``str`` as the turn's text (as ``generate()``'s str is
    the answer's); anything else, or an empty turn, is a :class:`GenerationError` (an errored case)."""
    if isinstance(value, Turn):
        if not isinstance(value.text, (str, type(None))) or not all(isinstance(c.name, str) and c.name for c in value.tool_calls):
            raise GenerationError("the generator returned a turn evalkit cannot use: text must be text or None, each tool call named")
        if not value.text and not value.tool_calls:
            raise GenerationError(f"the model's turn is empty: no text and no tool call (finish_reason {value.finish_reason!r})")
        if len(value.tool_calls) > MAX_TOOL_CALLS_PER_TURN:
            raise GenerationError(
                f"the model's turn calls {len(value.tool_calls):,} tools; evalkit takes at most "
                f"{MAX_TOOL_CALLS_PER_TURN:,} tool calls in one turn"
            )
        for number, call in enumerate(value.tool_calls, start=1):  # sent back to the model, stored, checked
            if (fault := value_fault(call.arguments)) is not None:
                raise GenerationError(f"the generator returned a turn evalkit cannot use: tool call {number} ({clipped(call.name, 64)}): the value of its arguments {fault.phrase()}")
        # what the turn reports beside its text is held to a plain answer's rule (model, usage, finish_reason)
        broken = answer_problems(Answer(text="", model=value.model, usage=value.usage, finish_reason=value.finish_reason))
        if broken:
            raise GenerationError(f"the generator returned a turn evalkit cannot use: {'; '.join(broken)}")
        return value
    if isinstance(value, str):  # as generate() takes a plain str as the answer's text: the turn's text
        if not value:  # held to a turn's rule: Turn(text="") is refused as empty too
            raise GenerationError("the model's turn is empty: chat() returned an empty str (a turn needs text or a tool call)")
        return Turn(text=value)
    raise GenerationError(
        f"the generator's chat() returned {type(value).__name__} {clipped(repr(value), 80)}, not an evalkit Turn "
        "(return a Turn, or a str as the turn's text)"
    )


@attrs.define
class _Loop:
    """The state of one conversation being answered."""

    prompt: GoldenPrompt
    call: TurnCall
    options: dict[str, Any]
    history: list[Message] = attrs.Factory(list)
    transcript: list[Message] = attrs.Factory(list)
    turns: list[Turn] = attrs.Factory(list)
    unmatched: list[ToolCall] = attrs.Factory(list)
    stopped: bool = False

    async def answer_user_turn(self) -> bool:
        """Ask the model until it replies without a tool call (``True``) or ``max_steps`` turns
        went by (``False``)."""
        limit = self.prompt.max_steps or DEFAULT_MAX_STEPS
        for _ in range(limit):
            request = ChatRequest(
                self.history, self.prompt.tools, step=len(self.turns), tool_choice=self.prompt.tool_choice, **self.options
            )
            turn = _turn(await self.call(request))
            self.turns.append(turn)
            calls = tuple(
                call if call.id else attrs.evolve(call, id=f"call_{len(self.turns)}_{number}")
                for number, call in enumerate(turn.tool_calls, start=1)
            )
            said = Message.assistant(turn.text, calls)
            self._add(said)
            if not calls:
                return True
            for call in calls:
                content, matched = canned_result(self.prompt, call)
                if not matched:
                    self.unmatched.append(call)
                self._add(Message.tool(call.id, content, call.name))
        return False

    def _add(self, message: Message) -> None:
        self.history.append(message)
        self.transcript.append(message)


async def converse(
    prompt: GoldenPrompt,
    call: TurnCall,
    base: str | None,
    options: dict[str, Any],
    usage_sums: UsageSetAside | None = None,
    received: list[Turn] | None = None,
) -> Conversation:
    """Answer the conversation of ``prompt`` (see the module docstring) with ``call``, which asks the
    generator for one turn; ``base`` is the instance's base system prompt and ``options`` the
    request fields every turn carries (``model``, ``case_id``, ``temperature``, ``max_tokens``);
    ``usage_sums`` keeps the problem of a summed usage set aside (:func:`~evalkit.answers.sum_usage`);
    ``received`` gets each turn as it is answered, so a caller whose conversation fails midway
    knows the replies it got (their requests and tokens were spent).

    Raises :class:`~evalkit.errors.GenerationError` when a turn is unusable, or the turns report
    different models (who answered is then unknown).
    """
    # the generator gets the tools' parameters and the history's tool-call arguments, JSON dicts:
    # one that changed them changed the prompt the grader then saw and the case's stored
    # fingerprint. Each conversation is built from its own copy, as each grading is.
    prompt = handed_prompt(prompt)
    own_system = [m.content or "" for m in prompt.messages if m.role == "system"]
    system = joined_system_prompt(base, "\n\n".join(own_system) if own_system else prompt.system_prompt)
    loop = _Loop(prompt, call, dict(options), turns=received if received is not None else [])
    if system is not None:
        loop.history.append(Message.system(system))
    turns = [m for m in prompt.messages if m.role != "system"] or [Message.user(prompt.prompt)]
    if prompt.mode is ConversationMode.SCRIPTED:
        for user in turns:
            loop._add(user)
            if not await loop.answer_user_turn():
                loop.stopped = True
                break
    else:
        loop.history.extend(turns)
        loop.stopped = not await loop.answer_user_turn()
    return Conversation(_answer(loop, usage_sums), _loop_checks(loop), len(loop.turns))


def _answer(loop: _Loop, usage_sums: UsageSetAside | None) -> Answer:
    models = list(dict.fromkeys(turn.model for turn in loop.turns if turn.model is not None))
    if len(models) > 1:
        raise GenerationError(f"the endpoint reported {len(models)} models in one conversation ({', '.join(m[:80] for m in models)}), so who answered is unknown")
    last = loop.turns[-1]
    return Answer(
        text="" if loop.stopped else last.text or "",
        model=models[0] if models else None,
        usage=sum_usage((turn.usage for turn in loop.turns), usage_sums),
        finish_reason="max_steps" if loop.stopped else last.finish_reason,
        transcript=tuple(loop.transcript),
    )


def _loop_checks(loop: _Loop) -> tuple[Check, ...]:
    """``max_steps`` and ``canned_results``, for a prompt with tools (or a model that called one
    unasked): the conversation reached a reply, and every call was answered by a canned result."""
    if not loop.prompt.tools and not any(turn.tool_calls for turn in loop.turns):
        return ()
    limit = loop.prompt.max_steps or DEFAULT_MAX_STEPS
    steps = Check(MAX_STEPS_CHECK, True)
    if loop.stopped:
        last = loop.turns[-1].tool_calls
        called = ", ".join(clipped(call.name, 64) for call in last[:5]) + (f" and {len(last) - 5} more" if len(last) > 5 else "")
        steps = Check(MAX_STEPS_CHECK, False, detail=f"no reply after {limit} model turns (max_steps {limit}); the last turn called {called}")
    canned = Check(CANNED_RESULTS_CHECK, True)
    if loop.unmatched:
        shown = "; ".join(f"{call.name}({_short(call.arguments_text())})" for call in loop.unmatched[:5])
        more = f" and {len(loop.unmatched) - 5} more" if len(loop.unmatched) > 5 else ""
        canned = Check(CANNED_RESULTS_CHECK, False, detail=f"no canned result matched {shown}{more}; the model was sent an error result")
    return steps, canned


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def with_loop_checks(grading: Grading, checks: tuple[Check, ...]) -> Grading:
    """``grading`` with the loop's checks added: a failed one fails the case, and the score is
    scaled by the share of loop checks that held (a grading that could not be made is left as it is)."""
    if not checks or grading.error is not None:
        return grading
    held = sum(1 for check in checks if check.passed)
    return attrs.evolve(
        grading,
        checks=(*grading.checks, *checks),
        passed=grading.passed and held == len(checks),
        score=grading.score * held / len(checks),
    )
