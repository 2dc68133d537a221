"""Project configuration: ``evalkit.toml`` or ``[tool.evalkit]`` in ``pyproject.toml``.

The file is found the way pytest finds its rootdir: ``--config`` wins, then ``$EVALKIT_CONFIG``;
otherwise the current directory and then each parent is searched, and in each the first of
``evalkit.toml`` or a ``pyproject.toml`` holding a ``[tool.evalkit]`` table is used — unless
someone else could have written it, which is refused (:mod:`evalkit.config_trust`). The folder
holding that file is the project root: relative paths in the file, and the default SQLite store
``<root>/.evalkit/``, are resolved against it.

::

    database = "sqlite:///.evalkit/results.db"   # or postgresql://…; EVALKIT_DATABASE_URL wins
    privacy = "metadata"                           # metadata | redacted | full
    max_answer_bytes = 1048576                     # longer answers are stored cut (graded whole)
    grade_timeout = 600                            # seconds grading one answer may take
    set_load_timeout = 300                         # seconds a set provider may take to list its sets, or a stream a prompt
    hook_timeout = 60                              # seconds one observer hook call may take
    judge = "judge-gpt"                            # provider instance used by judge graders

    [providers.prod-gpt]
    adapter = "openai"                             # an evalkit.generators entry point
    model = "gpt-4o-mini"                          # the alias sent
    base_url = "https://…/v1"                      # every other key goes to the adapter

    [deployments.staging]
    retriever = "evalkit.lexical"                  # what `evalkit retrieval SET --deployment staging` runs

    [deployments.staging.retrievers."evalkit.lexical"]
    corpus = "docs/corpus.jsonl"

    [question_sets."beir.scifact"]                 # a standard collection as a question set
    path = "data/scifact"                          # BEIR folder (format = "trec": topics, qrels, corpus)
    split = "test"

    [gate]                                         # how a comparison is gated (evalkit.gate_settings)
    method = "paired"

    [run]
    repeats = 3                                    # answer each prompt 3 times

What the file may hold is declared once, in :mod:`evalkit.config_schema`: anything else is refused.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from .durations import read_duration
from .environment import variable
from .errors import ConfigError
from .printable import not_nfc
from .shapes import finite_number, written_value
from .wording import argument, close_matches, did_you_mean, listed, path_named, quoted, table_key

__all__ = [
    "Config",
    "ProviderInstance",
    "find_config",
    "load_config",
    "DEFAULT_MAX_ANSWER_BYTES",
    "PRIVACY_LEVELS",
    "ROUTING_KEYS",
    "DEFAULT_ANSWER_TIMEOUT_S",
    "CONFIG_NAMES",
    "CONFIG_VARIABLE",
    "named_config",
]

#: The file names looked for in each folder, in order of preference.
CONFIG_NAMES = ("evalkit.toml", "pyproject.toml")

PRIVACY_LEVELS = ("metadata", "redacted", "full")


def privacy_refusal(level: object) -> str | None:
    """Why ``level`` is no privacy level (``privacy must be one of …, got 'ful'. Did you mean
    "full"?``), or ``None`` for one: the configuration's ``privacy`` and a library caller's
    ``privacy=`` are told alike, with the level meant (the command line's choice said it already)."""
    if level in PRIVACY_LEVELS:
        return None
    hint = did_you_mean(level, PRIVACY_LEVELS) if isinstance(level, str) else ""
    return f"privacy must be one of {', '.join(PRIVACY_LEVELS)}, got {level!r}" + (f".{hint}" if hint else "")


#: Provider-instance keys that are evalkit's (routing, the answer time limit, the prices, the base
#: system prompt), not the adapter's.
ROUTING_KEYS = (
    "adapter",
    "priority",
    "cost_per_1k_tokens",
    "capabilities",
    "answer_timeout",
    "price_per_million_input",
    "price_per_million_output",
    "currency",
    "system_prompt",
    "system_prompt_file",
)
#: How long one answer may take (seconds) unless the instance's ``answer_timeout`` says otherwise.
DEFAULT_ANSWER_TIMEOUT_S = 600.0
#: The longest ``answer_timeout`` (and ``grade_timeout``) accepted: a day.
MAX_ANSWER_TIMEOUT_S = 86_400
#: How long grading one answer may take (seconds) unless ``grade_timeout`` says otherwise.
DEFAULT_GRADE_TIMEOUT_S = 600.0
#: How long a set provider may take to return its sets (seconds) unless ``set_load_timeout`` says otherwise.
DEFAULT_SET_LOAD_TIMEOUT_S = 300.0
#: How long one call of an observer hook may take (seconds) unless ``hook_timeout`` says otherwise.
DEFAULT_HOOK_TIMEOUT_S = 60.0
#: The largest configuration file read (``evalkit.toml`` or ``pyproject.toml``), in bytes.
MAX_CONFIG_BYTES = 16 * 1024 * 1024
#: Answers longer than this many bytes (UTF-8) are stored cut, with a marker; they are graded whole.
DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024


@attrs.frozen
class ProviderInstance:
    """A configured endpoint: the adapter that talks to it and the options it gets."""

    name: str
    adapter: str
    options: Mapping[str, Any]
    priority: int = 0
    cost_per_1k_tokens: float | None = None
    capabilities: tuple[str, ...] = ("chat",)
    #: Seconds one answer may take; a generator that outlives it errs that case, the run goes on.
    answer_timeout: float = DEFAULT_ANSWER_TIMEOUT_S
    #: What the instance charges (:class:`evalkit.costs.Price`): ``price_per_million_input`` and
    #: ``price_per_million_output``, else the older ``cost_per_1k_tokens``; ``None``: unpriced (unknown cost).
    price: Any = None
    #: The base system prompt put before every request's own (``system_prompt``), or the file that
    #: holds it (``system_prompt_file``, relative to the configuration file), as written.
    system_prompt: str | None = None
    system_prompt_file: str | None = None

    @property
    def model(self) -> str | None:
        """The alias this instance sends unless a run overrides it."""
        value = self.options.get("model")
        return str(value) if value is not None else None


@attrs.frozen
class Config:
    """Everything read from the configuration file (empty when there is none)."""

    path: Path | None = None
    #: Where the search started when no file was given (the working directory).
    start: Path | None = None
    database: str | None = None
    privacy: str = "metadata"
    judge: str | None = None
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    #: Seconds grading one answer may take; a grader that outlives it fails that case's grading.
    grade_timeout: float = DEFAULT_GRADE_TIMEOUT_S
    #: Seconds a set provider may take to return its sets; one that outlives it is a failed provider.
    set_load_timeout: float = DEFAULT_SET_LOAD_TIMEOUT_S
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT_S
    #: ``[gate] min_judge_kappa``: a judge whose newest calibration κ is below it is advisory
    #: (``None``, the default: every judge gates, see :mod:`evalkit.judge_gate`).
    min_judge_kappa: float | None = None
    providers: Mapping[str, ProviderInstance] = attrs.Factory(dict)
    deployments: Mapping[str, Mapping[str, Mapping[str, Any]]] = attrs.Factory(dict)
    raw: Mapping[str, Any] = attrs.Factory(dict)
    #: ``[deployments.NAME] retriever = "ID"``: the retriever each deployment names, when it names one.
    deployment_retrievers: Mapping[str, str] = attrs.Factory(dict)
    #: ``[question_sets."ID"]`` tables, read by the built-in collection provider (paths as written).
    question_sets: Mapping[str, Mapping[str, Any]] = attrs.Factory(dict)
    #: ``[gate]`` as written (its values checked): see :func:`evalkit.gate_settings.gate_from`.
    gate: Mapping[str, Any] = attrs.Factory(dict)
    #: ``[run] repeats``: how many times each prompt is answered (``None``: not set, once).
    repeats: int | None = None
    #: ``[cache] enabled = true``: every prompt run reads and writes the answer cache (it stores
    #: full answer text whatever the privacy level; see docs/costs.md).
    cache_enabled: bool = False

    @property
    def root(self) -> Path:
        """The project root: the configuration file's folder, else the folder the search started in."""
        if self.path is not None:
            return self.path.parent
        return self.start if self.start is not None else Path.cwd()

    def searched(self) -> tuple[Path, ...]:
        """The folders looked in for a configuration file, nearest first (empty when one was given)."""
        if self.path is not None:
            return ()
        start = (self.start or Path.cwd()).resolve()
        return (start, *start.parents)

    def describe_search(self) -> str:
        """Where a configuration file was looked for, for messages when none was found."""
        folders = self.searched()
        if not folders:
            return f"the configuration is {self.path}"
        first = folders[0]
        if len(folders) == 1:
            return f"looked for evalkit.toml and [tool.evalkit] in pyproject.toml in {first}"
        return f"looked for evalkit.toml and [tool.evalkit] in pyproject.toml in {first} and its parents up to {folders[-1]}"


def _provider(name: str, table: Any, where: str) -> ProviderInstance:
    if (unnormalised := not_nfc(name)) is not None:  # it would print as another instance, never match it
        raise ConfigError(f"{where}: the provider instance name {unnormalised}")
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [providers.{table_key(name)}] must be a table")
    adapter = table.get("adapter")
    if not isinstance(adapter, str) or not adapter:
        # `adaptr = "replay"` was told only that adapter is missing, the key written never named
        written = "adapter" not in table and next((key for key in table if close_matches(key, ("adapter",))), None)
        hint = f" ({quoted(written)} is no key of it: did you mean adapter?)" if written else ""
        raise ConfigError(
            f'{where}: [providers.{table_key(name)}] needs adapter = "<generator name>", e.g. "openai"{hint}'
        )
    priority = table.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ConfigError(f"{where}: [providers.{table_key(name)}] priority must be an integer")
    cost = table.get("cost_per_1k_tokens")
    if cost is not None and not (finite_number(cost) and cost >= 0):
        raise ConfigError(
            f"{where}: [providers.{table_key(name)}] cost_per_1k_tokens must be a finite number of zero or more, got {written_value(cost)}"
        )
    capabilities = table.get("capabilities", ["chat"])
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        raise ConfigError(f"{where}: [providers.{table_key(name)}] capabilities must be a list of strings")
    answer_timeout = _seconds(
        table.get("answer_timeout", DEFAULT_ANSWER_TIMEOUT_S), f"{where}: [providers.{table_key(name)}] answer_timeout"
    )
    system_prompt, system_prompt_file = table.get("system_prompt"), table.get("system_prompt_file")
    for key, value in (("system_prompt", system_prompt), ("system_prompt_file", system_prompt_file)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}: [providers.{table_key(name)}] {key} must be text, got {written_value(value)}")
    if system_prompt is not None and system_prompt_file is not None:
        raise ConfigError(
            f"{where}: [providers.{table_key(name)}] has both system_prompt and system_prompt_file; keep one"
        )
    if system_prompt_file == "":
        raise ConfigError(f"{where}: [providers.{table_key(name)}] system_prompt_file must name a file")
    options = {k: v for k, v in table.items() if k not in ROUTING_KEYS}
    price = _price(table, cost, f"{where}: [providers.{table_key(name)}]")
    return ProviderInstance(
        name,
        adapter,
        options,
        priority,
        cost,
        tuple(capabilities),
        answer_timeout,
        price,
        system_prompt,
        system_prompt_file,
    )


def _price(table: Mapping[str, Any], cost_per_1k: float | None, where: str) -> Any:
    """The instance's :class:`~evalkit.costs.Price`: both ``price_per_million_*`` keys, else the
    older ``cost_per_1k_tokens`` (one price both ways), else ``None``; ``currency`` default USD."""
    from .costs import DEFAULT_CURRENCY, Price

    currency = table.get("currency", DEFAULT_CURRENCY)
    if not isinstance(currency, str) or not currency.strip() or len(currency) > 16 or not currency.isprintable():
        raise ConfigError(f'{where} currency must be a short name such as "USD" or "EUR", got {written_value(currency)}')
    given = {key: table[key] for key in ("price_per_million_input", "price_per_million_output") if key in table}
    for key, value in given.items():
        if not (finite_number(value) and value >= 0):
            raise ConfigError(f"{where} {key} must be a finite number of zero or more, got {written_value(value)}")
    if len(given) == 1:
        missing = ({"price_per_million_input", "price_per_million_output"} - set(given)).pop()
        raise ConfigError(
            f"{where} gives {next(iter(given))} without {missing}: give both (0 for a direction that is free)"
        )
    if given:
        return Price(given["price_per_million_input"], given["price_per_million_output"], currency)
    if cost_per_1k is not None:
        per_million = Price(cost_per_1k, cost_per_1k, currency).input * 1000
        return Price(per_million, per_million, currency)
    return None


def _seconds(value: Any, what: str) -> float:
    """``value`` as a time limit in seconds, from :data:`~evalkit.shapes.MIN_SECONDS` (1 ms) to
    :data:`MAX_ANSWER_TIMEOUT_S` (a day): a number of seconds or text with a unit (``"10m"``),
    by :mod:`evalkit.durations`' one rule; a :class:`ConfigError` naming the key otherwise."""
    return read_duration(value, what, most=MAX_ANSWER_TIMEOUT_S, typed=True, error=ConfigError)


def _min_judge_kappa(table: Any, where: str) -> float | None:
    """``[gate] min_judge_kappa``: a number from -1 to 1, or absent (the table's keys are checked by
    the configuration's schema)."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [gate] must be a table")
    value = table.get("min_judge_kappa")
    if value is None:
        return None
    if not (finite_number(value) and -1 <= value <= 1):
        raise ConfigError(
            f"{where}: [gate] min_judge_kappa must be a number from -1 to 1 (Cohen's κ), got {written_value(value)}"
        )
    return float(value)


def _deployments(table: Any, where: str) -> tuple[dict[str, dict[str, Mapping[str, Any]]], dict[str, str]]:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [deployments] must be a table")
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    named: dict[str, str] = {}
    for name, deployment in table.items():
        if (unnormalised := not_nfc(name)) is not None:  # it would print as another deployment, never match it
            raise ConfigError(f"{where}: the deployment name {unnormalised}")
        retrievers = deployment.get("retrievers", {}) if isinstance(deployment, Mapping) else None
        if not isinstance(retrievers, Mapping) or not all(isinstance(v, Mapping) for v in retrievers.values()):
            raise ConfigError(
                f'{where}: [deployments.{table_key(name)}.retrievers."<retriever id>"] must hold option tables'
            )
        assert isinstance(deployment, Mapping)
        unknown = sorted(set(deployment) - {"retriever", "retrievers"})
        if unknown:
            raise ConfigError(
                f'{where}: [deployments.{table_key(name)}] takes retriever = "ID" and [deployments.{table_key(name)}.retrievers."ID"] '
                f"option tables; unknown {'key' if len(unknown) == 1 else 'keys'}: {listed(unknown)}"
            )
        retriever = deployment.get("retriever")
        if retriever is not None:
            if not isinstance(retriever, str) or not retriever:
                raise ConfigError(
                    f'{where}: [deployments.{table_key(name)}] retriever must name a retriever, e.g. "evalkit.lexical"'
                )
            named[name] = retriever
        out[name] = {rid: dict(options) for rid, options in retrievers.items()}
    return out, named


def _question_sets(table: Any, where: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(table, Mapping) or not all(isinstance(v, Mapping) for v in table.values()):
        raise ConfigError(f'{where}: [question_sets."<set identifier>"] must be tables (path = "…", split = "test")')
    return {identifier: dict(options) for identifier, options in table.items()}


def _read(file: Path, named_by: str = "") -> Mapping[str, Any]:
    """The settings of the configuration ``file`` (``[tool.evalkit]`` of a ``pyproject.toml``);
    :class:`ConfigError` naming it (and ``named_by``: `` (named by EVALKIT_CONFIG)``) and why it
    cannot be read (what :func:`~evalkit.textfiles.read_whole_file` says of it: a device, a pipe
    nothing writes into, a loop of links), is not UTF-8 or not TOML."""
    from .textfiles import read_whole_file, utf8_text

    path = path_named(file)  # as messages name it: a line break in it would start a line
    try:
        data = tomllib.loads(utf8_text(read_whole_file(file, MAX_CONFIG_BYTES)))
    except OSError as exc:
        raise ConfigError(f"cannot read configuration {path}{named_by}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except ValueError as exc:  # tomllib converts integers itself: one of 5,000 digits raises this
        from .jsonparse import TOO_MANY_DIGITS, too_many_digits

        if not too_many_digits(exc):
            raise
        raise ConfigError(f"{path} is not valid TOML: {TOO_MANY_DIGITS}") from None
    except RecursionError:
        raise ConfigError(f"{path} is not valid TOML: arrays or inline tables nested too deeply") from None
    if file.name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    if not isinstance(tool, Mapping):
        raise ConfigError(
            f"{path}: tool must be a table ([tool.evalkit] holds evalkit's configuration), got {_kind(tool)}"
        )
    if "evalkit" not in tool:  # only a pyproject.toml named on purpose gets here: discovery passes over one
        raise ConfigError(
            f"{path} holds no [tool.evalkit] table, so it configures nothing.{_misspelled_tool_table(data)} "
            "Put evalkit's settings under [tool.evalkit], or name an evalkit.toml"
        )
    table = tool["evalkit"]
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}: [tool] evalkit must be a table ([tool.evalkit]), got {_kind(table)}")
    return table


def _refuse_an_empty_named_file(file: Path, by: str) -> None:
    """Refuse (:class:`ConfigError`) a configuration file named on purpose (``--config``,
    ``$EVALKIT_CONFIG``) that holds no setting — empty, or only comments: it was read as no
    settings, silently, so a run meant to be configured went to the default store on the default
    tolerances (a file a template left empty, a YAML file's comments). One found by looking is a
    project's root marker, and may be empty."""
    named_by = f" (named by {by})" if by == CONFIG_VARIABLE else ""
    instead = f"unset {by}" if by == CONFIG_VARIABLE else f"leave {by} out"
    raise ConfigError(
        f"configuration file {path_named(file)}{named_by} holds no settings (it is empty, or only comments), so "
        f"nothing in it would apply; name the file that holds evalkit's settings, or {instead} to look for one"
    )


def _misspelled_tool_table(data: Mapping[str, Any]) -> str:
    """`` Did you mean [tool.evalkt]?`` for a table of a pyproject.toml that looks like a misspelled
    ``[tool.evalkit]`` (``[tool.evalkt]``, ``[tools.evalkit]``); empty when none does."""
    import difflib

    tool = data.get("tool")
    names = (
        [f"[tool.{name}]" for name in difflib.get_close_matches("evalkit", [str(k) for k in tool], n=1, cutoff=0.7)]
        if isinstance(tool, Mapping)
        else []
    )
    if not names:
        names = [
            f"[{key}.evalkit]"
            for key, value in data.items()
            if key != "tool" and isinstance(value, Mapping) and "evalkit" in value
        ]
    return f" Did you mean {names[0]}?" if names else ""


def _kind(value: Any) -> str:
    """What a TOML value is, for a message that must not quote it: ``an integer``, ``a string``."""
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array"}
    return next((name for type_, name in kinds.items() if isinstance(value, type_)), "a date or time")


def _declares_evalkit(pyproject: Path) -> bool:
    """True when ``pyproject`` has a ``[tool.evalkit]`` table (a cheap text test, then TOML)."""
    from .textfiles import read_whole_file, utf8_text

    try:
        raw = read_whole_file(pyproject, MAX_CONFIG_BYTES)
    except OSError:
        return False
    if b"tool.evalkit" not in raw and b"[tool]" not in raw:
        return False
    try:
        data = tomllib.loads(utf8_text(raw))
    except (ValueError, RecursionError):  # not UTF-8, not TOML, a number past Python's digit limit
        return b"[tool.evalkit" in raw  # let the real read report what is wrong with it
    tool = data.get("tool")
    return isinstance(tool, Mapping) and "evalkit" in tool


def find_config(cwd: Path | None = None) -> Path | None:
    """The configuration file for ``cwd``: the nearest folder, walking up, with ``evalkit.toml`` or a
    ``pyproject.toml`` holding ``[tool.evalkit]`` (``evalkit.toml`` first in the same folder).

    A file found that someone else could have written (another owner, or writable by others) is
    refused with :class:`~evalkit.config_trust.UntrustedConfigError` before anything reads it as a
    configuration: see :mod:`evalkit.config_trust`."""
    from .config_trust import check_trusted

    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if name == "evalkit.toml" and not candidate.is_file() and os.path.lexists(candidate):
                raise ConfigError(_not_a_config_file(candidate))
            if candidate.is_file() and (name == "evalkit.toml" or _declares_evalkit(candidate)):
                check_trusted(candidate)
                return candidate
    return None


def _not_a_config_file(path: Path) -> str:
    """Why the ``evalkit.toml`` found at ``path``, which is no regular file, is refused: passed
    over, the search went on to the folders above (someone else's configuration, or none: the
    defaults, another store) while the user meant this one — a link whose target was moved, most
    often."""
    import stat

    try:
        mode = path.stat().st_mode
        what = (
            "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device"
        )  # fmt: skip
    except FileNotFoundError:
        what = f"a link to {path_named(os.readlink(path))}, which does not exist" if path.is_symlink() else "not a file"
    except OSError as exc:
        what = f"a path that cannot be looked up ({exc.strerror})"
    return (
        f"{path_named(path)} is no configuration file: it is {what}. Passed over, a configuration further up (or none) "
        f"would be used instead; make it the file, remove it, or name the configuration with {argument('path', 'PATH', option='--config PATH')}"
    )


#: The environment variable naming the configuration file, as ``--config`` does (``--config`` wins).
CONFIG_VARIABLE = "EVALKIT_CONFIG"


def named_config(
    path: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
) -> tuple[Path, str] | None:
    """The configuration named explicitly, and by what: ``path`` (``--config``), else
    ``$EVALKIT_CONFIG``; ``None`` when neither names one (then it is discovered)."""
    if path is not None:
        named_by = argument("path", option="--config")  # load_config's path, the command line's --config
        if not str(path).strip():  # `--config "$CONFIG"` with the variable unset: never "look for one" silently
            raise ConfigError(
                f"{named_by} is empty; name the configuration file, or leave the option out to look for one"
            )
        return Path(path), named_by
    value = variable(CONFIG_VARIABLE, "the configuration file", "look for one", environ=environ, error=ConfigError)
    if value is None:
        return None
    return Path(value), CONFIG_VARIABLE


def load_config(path: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Config:
    """Read ``path`` (``--config``), else ``$EVALKIT_CONFIG``, else the file :func:`find_config`
    finds from ``cwd`` (refusing one someone else could have written); an empty :class:`Config`
    when there is none."""
    base = cwd or Path.cwd()
    named = named_config(path)
    named_by = ""  # what a message adds after the file's name: the variable that named it
    if named is not None:
        chosen, by = named
        if by == CONFIG_VARIABLE:
            named_by = f" (named by {by})"
        if chosen.is_dir():
            raise ConfigError(f"{by} names the folder {chosen}; give the file (evalkit.toml or pyproject.toml)")
        if not os.path.lexists(chosen):  # a link to nothing, a loop of links: reading it says which
            raise ConfigError(f"configuration file {path_named(chosen)}{named_by} does not exist")
    else:
        found = find_config(base)
        if found is None:
            return Config(start=base)
        chosen = found
    data = _read(chosen, named_by)
    if named is not None and not data and chosen.name != "pyproject.toml":
        _refuse_an_empty_named_file(chosen, named[1])
    where = path_named(chosen)  # a line break in the path would start a line in every message
    from .config_schema import check_schema, installed_plugin_tables

    check_schema(data, where, installed_plugin_tables)
    privacy = data.get("privacy", "metadata")
    if (refused := privacy_refusal(privacy)) is not None:
        raise ConfigError(f"{where}: {refused}")
    providers_table = data.get("providers", {})
    if not isinstance(providers_table, Mapping):
        raise ConfigError(f"{where}: [providers] must be a table of provider instances")
    providers = {name: _provider(name, table, where) for name, table in providers_table.items()}
    database = data.get("database")
    if database is not None and not isinstance(database, str):
        raise ConfigError(f"{where}: database must be a URL string")
    judge = data.get("judge")
    if judge is not None and not isinstance(judge, str):
        raise ConfigError(f"{where}: judge must name a provider instance")
    if judge is not None and (unnormalised := not_nfc(judge)) is not None:
        raise ConfigError(f"{where}: judge names the provider instance {unnormalised}")
    max_answer_bytes = data.get("max_answer_bytes", DEFAULT_MAX_ANSWER_BYTES)
    if isinstance(max_answer_bytes, bool) or not isinstance(max_answer_bytes, int) or max_answer_bytes < 1024:
        raise ConfigError(
            f"{where}: max_answer_bytes must be a whole number of bytes, at least 1024, got {written_value(max_answer_bytes)}"
        )
    grade_timeout = _seconds(data.get("grade_timeout", DEFAULT_GRADE_TIMEOUT_S), f"{where}: grade_timeout")
    set_load_timeout = _seconds(data.get("set_load_timeout", DEFAULT_SET_LOAD_TIMEOUT_S), f"{where}: set_load_timeout")
    hook_timeout = _seconds(data.get("hook_timeout", DEFAULT_HOOK_TIMEOUT_S), f"{where}: hook_timeout")
    deployments, deployment_retrievers = _deployments(data.get("deployments", {}), where)
    gate = _gate(data.get("gate", {}), where)
    repeats = _repeats(data.get("run", {}), where)
    cache_enabled = _cache_enabled(data.get("cache", {}), where)
    return Config(
        path=chosen.resolve(),
        start=base,
        database=database,
        privacy=privacy,
        judge=judge,
        max_answer_bytes=max_answer_bytes,
        grade_timeout=grade_timeout,
        set_load_timeout=set_load_timeout,
        hook_timeout=hook_timeout,
        min_judge_kappa=_min_judge_kappa(data.get("gate", {}), where),
        providers=providers,
        deployments=deployments,
        raw=data,
        deployment_retrievers=deployment_retrievers,
        question_sets=_question_sets(data.get("question_sets", {}), where),
        gate=gate,
        repeats=repeats,
        cache_enabled=cache_enabled,
    )


#: The most answers per prompt ``repeats`` (and ``--repeats``) takes, and the most judge calls per
#: answer a judge grader's ``repeats`` (``--judge-repeats``) takes.
MAX_REPEATS = 1_000


def _gate(table: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``[gate]``, its values checked for both kinds of run (its keys were checked by the schema)."""
    from .gate_settings import gate_from

    gate_from(table, kind="prompts", where=where)
    gate_from(table, kind="retrieval", where=where)
    return dict(table)


def _repeats(table: Mapping[str, Any], where: str) -> int | None:
    """``[run] repeats``: a whole number from 1 to :data:`MAX_REPEATS`, or ``None`` when not set."""
    value = table.get("repeats")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEATS:
        raise ConfigError(f"{where}: [run] repeats must be a whole number from 1 to {MAX_REPEATS}, got {written_value(value)}")
    return value


def _cache_enabled(table: Any, where: str) -> bool:
    """``[cache] enabled = true|false`` (the table's only key)."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [cache] must be a table (enabled = true)")
    unknown = sorted(set(table) - {"enabled"})
    if unknown:
        raise ConfigError(f"{where}: [cache] takes only enabled = true|false; unknown: {listed(unknown)}")
    enabled = table.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{where}: [cache] enabled must be true or false, got {written_value(enabled)}")
    return enabled
