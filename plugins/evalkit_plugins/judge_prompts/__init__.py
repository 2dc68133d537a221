"""The judge prompts: one TOML file per grader and version, each pinned by the digest it was released with.

A judge prompt is part of the measuring instrument: changing one word changes what a score means,
so a released file never changes. A new wording is a new file, ``<grader>_v<N+1>.toml`` with
``version = N+1`` inside, and a new entry in :data:`RELEASED`; the version then appears in every
yardstick the grader reports, so runs judged with different prompts are never compared.
Loading a prompt whose text does not match its released digest fails, so an edited installation
cannot move a score silently either.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from typing import Any

import attrs
from evalkit.errors import PluginError, UsageError
from evalkit.wording import quoted

__all__ = ["JudgePrompt", "RELEASED", "digest", "load", "packaged_prompts", "render", "verify"]

#: The sha256 (see :func:`digest`) of every released prompt file, by grader and version.
RELEASED: Mapping[str, Mapping[int, str]] = {
    "decision": {1: "628bdfbc5ca6ccb108cd655626261c558784c33dfdcc316742dd6d839267a6f6"},
    "groundedness": {1: "cc3780ad586c7423b7a8d02c645d96e1d539801f9aec794447ddb2b6c30fe5b6"},
    "pairwise": {1: "7503486c6bf66e0a7cd3a1bfcecbbd0a3b2687f8c8e7c78e98a584d0de36f22e"},
    "relevance": {1: "0fc778873ef758c1cf978698bb105c1664db2c0665de705081ccf03894aab4d5"},
    "rubric": {1: "3c6894168bf7d6418c3f938c0e00367d7804ef9ac85f01dd5b3e22c068a216be"},
}

_FILE_NAME = re.compile(r"(?P<grader>[a-z][a-z0-9_]*)_v(?P<version>[1-9][0-9]*)\.toml")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def digest(text: str) -> str:
    """The sha256 of a prompt file's text (line endings normalised: a CRLF checkout is the same prompt)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


@attrs.frozen
class JudgePrompt:
    """One released judge prompt: its grader, version, digest and the fields of its TOML file."""

    grader: str
    version: int
    digest: str
    fields: Mapping[str, Any]

    @property
    def file_name(self) -> str:
        """``<grader>_v<version>.toml``."""
        return f"{self.grader}_v{self.version}.toml"

    def text(self, key: str) -> str:
        """The string field ``key``; a missing or non-string field is a broken prompt file."""
        value = self.fields.get(key)
        if not isinstance(value, str):
            raise PluginError(f'judge prompt {self.file_name} has no text field {quoted(key)}')
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        """The list-of-strings field ``key``."""
        value = self.fields.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise PluginError(f'judge prompt {self.file_name} needs {quoted(key)} as a list of non-empty strings')
        return tuple(value)


def verify(grader: str, version: int, text: str) -> JudgePrompt:
    """Parse ``text`` as version ``version`` of ``grader``'s prompt, refusing anything but the released text."""
    name = f"{grader}_v{version}.toml"
    actual = digest(text)
    released = RELEASED.get(grader, {}).get(version)
    if released is None:
        raise PluginError(
            f"judge prompt {name} is not released: register its sha256 {actual} as RELEASED"
            f'[{quoted(grader)}][{version}] in evalkit_plugins/judge_prompts/__init__.py'
        )
    if actual != released:
        raise PluginError(
            f"judge prompt {name} has changed since version {version} was released (sha256 {actual}, "
            f"released {released}). A changed prompt is a different measuring instrument: restore the "
            f"file, or put the new text in {grader}_v{version + 1}.toml with version = {version + 1} and register it"
        )
    try:
        fields = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or a number past Python's digit limit
        raise PluginError(f"judge prompt {name} is not valid TOML: {exc}") from None
    if fields.get("version") != version:
        raise PluginError(f"judge prompt {name} says version = {fields.get('version')!r}; its file name says {version}")
    return JudgePrompt(grader, version, actual, fields)


def packaged_prompts() -> dict[tuple[str, int], str]:
    """Every prompt file shipped in this package: ``{(grader, version): text}``."""
    found: dict[tuple[str, int], str] = {}
    for entry in resources.files(__name__).iterdir():
        match = _FILE_NAME.fullmatch(entry.name)
        if match is not None:
            found[(match["grader"], int(match["version"]))] = entry.read_text(encoding="utf-8")
    return found


def load(grader: str, version: int | None = None) -> JudgePrompt:
    """The released prompt of ``grader``: ``version``, or the newest released one."""
    versions = RELEASED.get(grader)
    if not versions:
        raise PluginError(f'no judge prompt is released for the {quoted(grader)} grader')
    chosen = max(versions) if version is None else version
    if chosen not in versions:
        known = ", ".join(str(v) for v in sorted(versions))
        raise UsageError(f'the {quoted(grader)} grader has no judge prompt version {version!r}; released: {known}')
    name = f"{grader}_v{chosen}.toml"
    try:
        text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise PluginError(f"judge prompt {name} is missing from the package ({exc.strerror})") from None
    return verify(grader, chosen, text)


def render(template: str, **values: str) -> str:
    """``template`` with each ``{name}`` of ``values`` replaced, in one pass.

    Braces inside the values and placeholders not in ``values`` (the JSON example in a prompt) are
    left as they are, so an answer containing ``{task}`` cannot inject text.
    """
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
