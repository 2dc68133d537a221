"""Plugin options: declared as an attrs class, checked and structured before the plugin is built.

A plugin factory (a generator, retriever, grader, repository, hook, or golden/question set
provider) declares its options by pointing ``Options`` at an attrs class; each field is one option,
its type annotation the type, a field without a default a required option, and
``metadata={"help": "..."}`` (see :func:`option`) its one-line help::

    @attrs.frozen
    class ReplayOptions:
        path: str = option("JSONL file of recorded answers, relative to the config file")
        model: str | None = option("alias reported when a line names no model", default=None)

    class ReplayGenerator:
        Options = ReplayOptions
        def __init__(self, path: str, model: str | None = None) -> None: ...

Before the factory is called, evalkit checks the configuration table against the class — unknown
options are refused with a "did you mean", missing required ones name the plugin, the option and the
table to put it in, and values are structured with the project's cattrs converter (strict: a string
is not a number, a number is not a string) — then calls the factory with the options that were given,
as keyword arguments of the declared types. A factory that declares nothing gets the table as it is,
exactly as before.

Golden and question set providers read their options from ``[set_providers."ENTRY-POINT-NAME"]``
unless the provider names another table with ``config_table`` (a dotted path such as ``"sets"``).
A ``config_table`` ending in ``.*`` (``"question_sets.*"``) means "each sub-table is one instance":
every sub-table is checked against ``Options`` and the provider is called with
``instances={name: Options(...)}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from .errors import ConfigError

__all__ = [
    "DeclaresOptions",
    "OptionSpec",
    "SET_PROVIDER_TABLE",
    "TableOptions",
    "check_options",
    "declared_options",
    "option",
    "option_specs",
    "provider_table",
    "structure_options",
]

#: Where a set provider's options live unless it says otherwise (``config_table``).
SET_PROVIDER_TABLE = "set_providers"


@runtime_checkable
class DeclaresOptions(Protocol):
    """A plugin factory whose options are the fields of an attrs class."""

    Options: type


@runtime_checkable
class TableOptions(Protocol):
    """A set provider that reads its options from a table other than ``[set_providers."NAME"]``."""

    config_table: str


def option(help: str, **kwargs: Any) -> Any:  # noqa: A002 - the word the docs use
    """An attrs field with one line of ``help`` (shown by ``evalkit list plugins --options``)."""
    metadata = {**kwargs.pop("metadata", {}), "help": help}
    return attrs.field(metadata=metadata, **kwargs)


@attrs.frozen
class OptionSpec:
    """One declared option, as ``evalkit list plugins --options`` shows it."""

    name: str
    type: str
    required: bool
    default: Any
    help: str


def declared_options(factory: Any) -> type | None:
    """The attrs class ``factory`` declares its options with, or ``None``."""
    if not isinstance(factory, DeclaresOptions):
        return None
    cls = factory.Options
    if not (isinstance(cls, type) and attrs.has(cls)):
        return None
    return cls


def _type_text(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def option_specs(factory: Any) -> list[OptionSpec] | None:
    """The options ``factory`` declares (``None`` when it declares nothing)."""
    cls = declared_options(factory)
    if cls is None:
        return None
    specs = []
    for field in attrs.fields(cls):
        required = field.default is attrs.NOTHING
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory() if not default.takes_self else None
        specs.append(
            OptionSpec(field.name, _type_text(field.type), required, None if required else default, field.metadata.get("help", ""))
        )
    return specs


def _plugin_label(record: Any) -> str:
    return f'{record.kind} "{record.name}" ({record.distribution} {record.version})' if record is not None else "the plugin"


def structure_options(cls: type, given: Mapping[str, Any], *, plugin: str, table: str) -> Any:
    """``given`` checked against ``cls`` and structured into it; every problem in one ConfigError."""
    from .convert import options_converter
    from .wording import did_you_mean

    if not isinstance(given, Mapping):
        raise ConfigError(f"{table} must be a table of options for {plugin}")
    names = [f.name for f in attrs.fields(cls)]
    problems = []
    for key in given:
        if key not in names:
            hint = did_you_mean(key, names)
            known = ", ".join(names) or "none"
            secret = key.lower() in {"api_key", "apikey", "key", "token", "api_token", "password", "secret"}
            if secret:
                via = ' and name that variable with "api_key_env"' if "api_key_env" in names else ""
                hint += f" A secret is never an option: put it in an environment variable{via}."
            problems.append(f'{plugin} has no option "{key}" (in {table}).{hint} Its options: {known}.')
    for field in attrs.fields(cls):
        if field.default is attrs.NOTHING and field.name not in given:
            help_text = field.metadata.get("help")
            what = f" ({help_text})" if help_text else ""
            problems.append(f'{plugin} needs option "{field.name}"{what}: set {field.name} = … in {table}.')
    if not problems:
        attrs.resolve_types(cls)
        try:
            return options_converter.structure(dict(given), cls)
        except Exception as exc:  # cattrs' detailed validation: one line per field and problem
            import cattrs

            for line in cattrs.transform_error(exc, path="$"):
                message, _, where = line.rpartition(" @ ")
                name = where.removeprefix("$.").removeprefix("$") or "?"
                value = given.get(name.split(".")[0].split("[")[0], None)
                problems.append(f'{plugin} has a wrong value for option "{name}" in {table}: {message} (got {value!r}).')
    heading = "its options are wrong:" if plugin == "it" else f"the options of {plugin} are wrong:"
    raise ConfigError(problems[0] if len(problems) == 1 else "\n".join([heading, *problems]))


def check_options(
    record: Any, factory: Any, given: Mapping[str, Any], table: str, *, plugin: str | None = None
) -> dict[str, Any]:
    """The keyword arguments to call ``factory`` with: ``given`` checked and structured when the
    factory declares ``Options``, else ``given`` unchanged (plugins that declare nothing).
    ``plugin`` is how messages name it (default: kind, name and distribution)."""
    cls = declared_options(factory)
    if cls is None:
        return dict(given)
    structured = structure_options(cls, given, plugin=plugin or _plugin_label(record), table=table)
    return {name: getattr(structured, name) for name in given}


def provider_table(record: Any, factory: Any, config: Any) -> tuple[str, dict[str, Any]]:
    """A set provider's options table: its name for messages and the keyword arguments to call the
    provider with (empty when it declares nothing or the table is absent and nothing is required)."""
    path = factory.config_table if isinstance(factory, TableOptions) else f'{SET_PROVIDER_TABLE}."{record.name}"'
    raw = getattr(config, "raw", {}) if config is not None else {}
    keys = _split_table(path)
    per_instance = keys[-1:] == ["*"]
    if per_instance:
        keys = keys[:-1]
    data: Any = raw
    for key in keys:
        data = data.get(key, {}) if isinstance(data, Mapping) else {}
    where = _where(config)
    shown = ".".join(_quote(k) for k in keys)
    cls = declared_options(factory)
    if cls is None:
        if data:
            raise ConfigError(
                f"{_plugin_label(record)} takes no options, but [{shown}]{where} gives some; remove the table"
            )
        return shown, {}
    if per_instance:
        if not isinstance(data, Mapping):
            raise ConfigError(f"[{shown}]{where} must hold one table per instance")
        instances = {
            name: structure_options(cls, _resolved(table, factory, config), plugin="it", table=f"[{shown}.{_quote(name)}]{where}")
            for name, table in data.items()
        }
        return shown, {"instances": instances}
    return shown, check_options(record, factory, _resolved(data, factory, config), f"[{shown}]{where}", plugin="it")


def _resolved(table: Any, factory: Any, config: Any) -> Any:
    """``table`` with the factory's declared path options made absolute against the config's folder."""
    if getattr(config, "path", None) is None or not isinstance(table, Mapping):
        return table
    from .components import resolve_paths

    return resolve_paths(table, factory, config.root)


def _where(config: Any) -> str:
    path = getattr(config, "path", None)
    return f" of {path}" if path is not None else " of evalkit.toml"


def _split_table(path: str) -> list[str]:
    """``a."b.c".d`` → ``["a", "b.c", "d"]``."""
    keys, current, quoted = [], "", False
    for char in path:
        if char == '"':
            quoted = not quoted
        elif char == "." and not quoted:
            keys.append(current)
            current = ""
        else:
            current += char
    keys.append(current)
    return [k for k in keys if k]


def _quote(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else f'"{key}"'
