"""What a judge plugin gives the judge commands, held to one rule.

``evalkit judge calibrate``, ``evalkit compare --pairwise-judge`` and ``evalkit retrieval
--judge-unjudged`` ask a judge that a grader plugin hands out, and read what it gives back: each
reply's ``(value, model)`` pair (``alabel``, ``aprefer``, ``agrade_document``), and the judge's
identity — its ``judge_instance``, its ``prompt.version`` and the yardstick ``yardstick_for(model)``
names. What breaks the rule is the plugin's contract broken, a
:class:`~evalkit.errors.PluginError` naming the grader, its distribution and what it gave
(:func:`~evalkit.components.plugin_gave_unusable`, exit 2), never an internal error nor a value
stored or printed as it came:

* a reply is a ``(value, model)`` tuple; its value one the command asks for (compared by type
  first, so a plugin's ``__eq__`` is never called); its model ``None`` or a name a run's serving
  identity would take (:func:`evalkit.identity.model_problem`: text of at most 150 characters,
  no control character, no URL);
* ``judge_instance`` a name: text of 1 to :data:`~evalkit.shapes.MAX_NAME_CHARS` characters,
  with no control or invisible character, in Unicode NFC;
* ``prompt.version`` a whole number from 1 to :data:`MAX_PROMPT_VERSION`;
* the yardstick one a grading may carry (:func:`evalkit.grading.yardstick_problem`).

Attributes are read with :func:`~evalkit.components.declared` (one that raises reads as absent),
calls made with :func:`~evalkit.components.plugin_called`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .components import declared, plugin_called, plugin_gave_unusable
from .errors import PLUGIN_FAILURES, carried_async
from .shapes import short_repr

__all__ = [
    "MAX_PROMPT_VERSION", "MAX_SCALE", "FailedRequest", "asked", "grade_scale_of", "judge_instance_of", "judge_reply", "judge_scale_of", "model_reply_problem",
    "prompt_version_of", "yardstick_of",
]

#: The largest prompt version a judge may name (the store keeps it as a 32-bit number).
MAX_PROMPT_VERSION = 2**31 - 1
#: The most labels a judge's scale may have.
MAX_SCALE = 1_000


@attrs.frozen
class FailedRequest:
    """A request of a judge that raised (``error``: what it raised, a
    :data:`~evalkit.errors.PLUGIN_FAILURES`), told apart from a reply: an exception object the
    judge *returns* is a reply, held to the rule of :func:`judge_reply` — never a failed request,
    never raised."""

    error: BaseException


async def asked(call: Callable[[], Any]) -> Any:
    """The reply of one request of a judge (``call()``: its ``alabel(…)``, ``aprefer(…)``,
    ``agrade_document(…)``, awaited), or a :class:`FailedRequest` when it raised, as it was called
    or as it was awaited; what is no plugin failure (an interrupt) goes on as it is."""
    try:
        return await carried_async(call())
    except PLUGIN_FAILURES as exc:
        return FailedRequest(exc)


def _one_of(value: Any, choices: Sequence[Any]) -> tuple[bool, Any]:
    """``(True, the choice)`` when ``value`` is one of ``choices`` of the very same type, else
    ``(False, None)``: the type is compared first, so only a choice's own ``__eq__`` is called."""
    for choice in choices:
        if type(value) is type(choice) and choice == value:
            return True, choice
    return False, None


def model_reply_problem(model: object) -> str | None:
    """Why ``model``, the model a judge's reply names, cannot be kept (``None`` when it can):
    ``None`` or a well-formed model name (:func:`evalkit.identity.model_problem`)."""
    from .identity import model_problem

    if model is None:
        return None
    if type(model) is not str:
        return f"its model must be text or None, got {short_repr(model)}"
    problem = model_problem(model)
    return None if problem is None else f"its model {problem}"


def judge_reply(who: Any, method: str, reply: object, choices: Sequence[Any], wanted: str) -> tuple[Any, str | None]:
    """``(value, model)`` of one reply of a judge's ``method`` (``alabel``, ``aprefer``,
    ``agrade_document``): ``value``
    the one of ``choices`` it gave (``wanted`` says them in words), ``model`` ``None`` or a
    well-formed name; a :class:`~evalkit.errors.PluginError` naming ``who`` and ``method`` when the
    reply breaks the rule (see the module docstring)."""
    what = f"a reply from {method}()"
    if not isinstance(reply, tuple) or tuple.__len__(reply) != 2:
        raise plugin_gave_unusable(who, what, f"it must be a (value, model) pair, got {short_repr(reply)}")
    value, model = tuple.__getitem__(reply, 0), tuple.__getitem__(reply, 1)
    found, choice = _one_of(value, choices)
    if not found:
        raise plugin_gave_unusable(who, what, f"its value must be {wanted}, got {short_repr(value)}")
    if (problem := model_reply_problem(model)) is not None:
        raise plugin_gave_unusable(who, what, problem)
    return choice, model


def judge_instance_of(who: Any, judge: Any) -> str:
    """The judge's ``judge_instance``, a name (see the module docstring), or a
    :class:`~evalkit.errors.PluginError` naming ``who``."""
    from .identity import hidden_problem
    from .printable import not_nfc
    from .problem_texts import too_long
    from .shapes import MAX_NAME_CHARS

    instance = declared(judge, "judge_instance")
    if type(instance) is not str or not instance:
        problem = f"it must be the name of a provider instance, got {short_repr(instance)}"
    else:
        long = too_long(instance, MAX_NAME_CHARS)
        problem = f"it {long}" if long else hidden_problem(instance) or not_nfc(instance)
    if problem is not None:
        raise plugin_gave_unusable(who, "a judge_instance", problem)
    return instance


def prompt_version_of(who: Any, judge: Any) -> int:
    """The judge's ``prompt.version``, a whole number from 1 to :data:`MAX_PROMPT_VERSION`, or a
    :class:`~evalkit.errors.PluginError` naming ``who``."""
    version = declared(declared(judge, "prompt"), "version")
    if type(version) is not int or not 1 <= version <= MAX_PROMPT_VERSION:
        raise plugin_gave_unusable(
            who, "a prompt.version", f"it must be a whole number from 1 to {MAX_PROMPT_VERSION:,}, got {short_repr(version)}"
        )
    return version


def yardstick_of(who: Any, judge: Any, model: str) -> str:
    """The yardstick the judge names for ``model`` (its ``yardstick_for(model)``, under
    :func:`~evalkit.components.plugin_called`), one a grading may carry, or a
    :class:`~evalkit.errors.PluginError` naming ``who``."""
    from .grading import yardstick_problem

    yardstick = plugin_called(who, "yardstick_for", lambda: judge.yardstick_for(model))
    if (problem := yardstick_problem(yardstick)) is not None:
        raise plugin_gave_unusable(who, "a yardstick from yardstick_for()", f"the yardstick {problem}")
    return yardstick


def judge_scale_of(who: Any, judge: Any) -> tuple[str | int, ...]:
    """The labels a judge answers with (its ``judge_scale()``, under
    :func:`~evalkit.components.plugin_called`): 1 to :data:`MAX_SCALE` labels, each a string or an
    integer (a calibration set's rule), or a :class:`~evalkit.errors.PluginError` naming ``who``.
    Read as it came, a scale that was no iterable was an internal error, and one of a million
    labels was printed whole in the refusal of a set labelled otherwise."""
    from .shapes import read_up_to

    scale = plugin_called(who, "judge_scale", lambda: read_up_to(judge.judge_scale(), MAX_SCALE))
    if not 1 <= len(scale) <= MAX_SCALE or not all(type(label) in (str, int) for label in scale):
        raise plugin_gave_unusable(
            who, "a judge_scale()", f"it must be 1 to {MAX_SCALE:,} labels, each a string or an integer, got {short_repr(scale)}"
        )
    return scale


def grade_scale_of(who: Any, judge: Any) -> tuple[int, ...]:
    """The grades a relevance judge gives (its :func:`judge_scale_of`), each a whole number from 0
    to 2,147,483,647 (a question's grade), or a :class:`~evalkit.errors.PluginError` naming ``who``."""
    scale = judge_scale_of(who, judge)
    if not all(type(grade) is int and 0 <= grade <= 2**31 - 1 for grade in scale):
        raise plugin_gave_unusable(
            who, "a judge_scale()", f"its grades must be whole numbers from 0 to 2,147,483,647, got {short_repr(scale)}"
        )
    return scale  # type: ignore[return-value]
