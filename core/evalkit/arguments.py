"""The kinds of the library entry points' arguments, checked before anything else happens.

``evaluate_set(42)``, ``provider=my_generator``, ``database=Path(…)``, ``hook_plugins=None`` or
``on_case=5`` reached code that assumed a string, a mapping or a callable: an ``AttributeError``
from a string helper, ``TypeError: 'Gen' object is not iterable`` from the "did you mean" of an
unknown name, or — for a callback or a shard — an error after the run was stored, reported as an
evalkit bug. :func:`check_arguments` refuses each as a :class:`~evalkit.errors.UsageError` (exit 2,
nothing called, nothing stored) naming the argument, what it takes and what it got.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any

from .errors import UsageError
from .shapes import short_repr

__all__ = [
    "DATABASE", "FOLDER", "OPTIONAL_NAME", "OPTIONAL_OPTIONS", "OPTIONAL_TEXT", "SECONDS", "TEXT", "WORDS", "check_arguments", "one_of", "optional",
]  # fmt: skip

#: An argument's kind: what the message says it takes, and the test of a value.
Kind = tuple[str, Callable[[Any], bool]]

TEXT: Kind = ("text (a str)", lambda value: isinstance(value, str))
OPTIONAL_TEXT: Kind = ("text (a str) or None", lambda value: value is None or isinstance(value, str))
#: A name (a model alias, a privacy level, a judge): ``""`` or blanks are refused, as the command
#: line refuses ``--model ""``: given to the library they silently meant "the default".
OPTIONAL_NAME: Kind = (
    "non-empty text (a str) or None",
    lambda value: value is None or (isinstance(value, str) and value.strip() != ""),
)
FLAG: Kind = ("True or False", lambda value: isinstance(value, bool))
CALLBACK: Kind = ("a callable or None", lambda value: value is None or callable(value))
#: A duration (``wait_ready``): a number of seconds or text with a unit; its value is read by the
#: command line's rule after this (:func:`evalkit.components.read_wait_ready`).
SECONDS: Kind = (
    'a duration (a number of seconds, or text with a unit: 60, "90s", "2m")',
    lambda value: isinstance(value, (int, float, str)) and not isinstance(value, bool),
)
#: Command-line words (a resume command repeats them): a list or tuple of text.
WORDS: Kind = (
    "a list or tuple of text (str)",
    lambda value: isinstance(value, (list, tuple)) and all(isinstance(word, str) for word in value),
)
#: A store's URL: ``""`` (or blanks) is refused: it silently meant the default ``.evalkit/results.db``.
DATABASE: Kind = (
    'a database URL (a non-empty str such as "sqlite:///results.db") or None',
    lambda value: value is None or (isinstance(value, str) and value.strip() != ""),
)


def _is_folder(value: Any) -> bool:
    """Whether ``value`` is ``None`` or names a folder that exists (a ``cwd`` with a typo made
    its folders, and a store in them, where nothing was: ``cwd="/nonexistent/x"`` ran)."""
    if value is None:
        return True
    if not isinstance(value, (str, PurePath)) or str(value) == "":
        return False
    try:
        return Path(value).is_dir()
    except (OSError, ValueError):  # a NUL in the text, a name too long
        return False


#: The folder a call works from (``cwd``): one that exists, as text or a path.
FOLDER: Kind = ("an existing folder (a str or a PurePath) or None", _is_folder)
#: Options passed on as keywords (a grader's): a mapping whose keys are text.
OPTIONAL_OPTIONS: Kind = (
    "a mapping (a dict) of option names (str) to values, or None",
    lambda value: value is None or (isinstance(value, Mapping) and all(isinstance(key, str) for key in value)),
)


def _is_hook_plugin(value: Any) -> bool:
    """Whether ``value`` has an ``@evalkit.hookimpl`` function (``None``, ``5`` or ``object()``
    were registered with nothing to call, silently)."""
    if value is None:
        return False
    for name in dir(value):
        try:
            if hasattr(getattr(value, name), "evalkit_impl"):  # what evalkit.hookimpl marks
                return True
        except Exception:  # noqa: BLE001 - a property that raises is not a hook
            continue
    return False


#: Hook plugins: each item has an ``@evalkit.hookimpl`` function (an iterator is not looked into).
PLUGINS: Kind = (
    "a list or tuple of plugin objects (each with @evalkit.hookimpl functions)",
    lambda value: isinstance(value, Iterable)
    and not isinstance(value, (str, bytes, Mapping))
    and (not isinstance(value, Collection) or all(_is_hook_plugin(plugin) for plugin in value)),
)


def one_of(*types: type) -> Kind:
    """The kind of a value of one of ``types``."""
    return (" or ".join(f"a {t.__name__}" if t is not str else "text (a str)" for t in types), lambda value: isinstance(value, types))


def optional(*types: type) -> Kind:
    """The kind of ``None`` or a value of one of ``types``."""
    wanted, test = one_of(*types)
    return (f"{wanted} or None", lambda value: value is None or test(value))


def check_arguments(call: str, arguments: Mapping[str, Any], kinds: Mapping[str, Kind]) -> None:
    """Refuse the first of ``arguments`` (by name) that is not of its kind in ``kinds``."""
    for name, (wanted, test) in kinds.items():
        value = arguments[name]
        if not test(value):
            raise UsageError(f"{call}: {name} must be {wanted}, got {type(value).__name__} {short_repr(value)}")
