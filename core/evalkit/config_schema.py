"""What ``evalkit.toml`` (or ``[tool.evalkit]``) may hold: the one declaration of its keys and tables.

A key or table this module does not declare is refused, before anything runs, with a "did you
mean" (exit 2): a misspelled ``[gatee]`` once gated nothing, silently. Three kinds of entries:

* evalkit's own settings — top-level keys (``database``, ``privacy``, …) and tables whose every
  key is declared here (``[gate]``, ``[run]``);
* tables evalkit reads itself and checks where it reads them: ``[providers.NAME]`` and
  ``[deployments.NAME]`` (:mod:`evalkit.config`: their names are free), and the values of
  ``[sets]`` (:mod:`evalkit.setfiles`; its keys are declared here);
* plugins' option tables (``[set_providers."NAME"]``, ``[question_sets."ID"]``, and any table an
  installed set provider names with ``config_table``): checked against the plugin's declared
  ``Options`` when the plugin is loaded (:mod:`evalkit.options`), never twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from .errors import ConfigError
from .gate_settings import GATE_KEYS
from .project_files import allow_outside_problem
from .wording import did_you_mean, listed, table_key

__all__ = ["RUN_KEYS", "SCHEMA", "SETS_KEYS", "TableSchema", "check_schema"]

#: ``[run]``: how a prompt run is answered, by default.
RUN_KEYS: Mapping[str, str] = {
    "repeats": "how many times each prompt is answered, as independent requests (default 1)",
}

#: ``[sets]``: its keys are declared here too, so that a misspelled one is refused by every command,
#: not only by the file set provider (whose failure a run of an installed set passes over).
SETS_KEYS: Mapping[str, str] = {
    "paths": 'set files to read, as patterns relative to the project root (["evals/*.yaml"])',
    "allow_outside": "folders or globs outside the project that set files may lie in",
}


@attrs.frozen
class TableSchema:
    """One top-level entry of the configuration: its ``help``, and ``keys`` — the keys an own
    table takes (``None``: its entries are named freely and checked by whoever reads them)."""

    help: str
    keys: Mapping[str, str] | None = None
    table: bool = True


#: Every top-level key and table the configuration may hold.
SCHEMA: Mapping[str, TableSchema] = {
    "database": TableSchema("the results store's URL (sqlite:///… or postgresql://…)", table=False),
    "privacy": TableSchema("what answer text is stored: metadata, redacted or full", table=False),
    "judge": TableSchema("the provider instance judge graders ask", table=False),
    "max_answer_bytes": TableSchema("longer answers are stored cut (graded whole)", table=False),
    "grade_timeout": TableSchema("seconds grading one answer may take", table=False),
    "set_load_timeout": TableSchema("seconds a set provider may take to list its sets", table=False),
    "hook_timeout": TableSchema("seconds one observer hook call may take", table=False),
    "providers": TableSchema("[providers.NAME]: provider instances (adapter, model, the adapter's options)"),
    "deployments": TableSchema("[deployments.NAME]: a retriever and its options per deployment"),
    "set_providers": TableSchema('[set_providers."NAME"]: options of golden and question set providers'),
    "cache": TableSchema(
        "the answer cache (enabled = true: every prompt run reads and writes it; docs/costs.md)",
        {"enabled": "true or false"},
    ),
    "graders": TableSchema("[graders.NAME]: options of a grader (the command line's judge flags win over them)"),
    "question_sets": TableSchema('[question_sets."ID"]: standard collections as question sets'),
    "calibration_sets": TableSchema(
        '[calibration_sets."ID"]: a collection\'s human relevance judgments as calibration sets'
    ),
    "sets": TableSchema("golden sets declared in files (their values checked by evalkit.setfiles)", SETS_KEYS),
    "gate": TableSchema("how a comparison is gated", GATE_KEYS),
    "run": TableSchema("how a prompt run is answered", RUN_KEYS),
}


def check_schema(
    data: Mapping[str, Any], where: str, plugin_tables: Callable[[], frozenset[str]] | None = None
) -> None:
    """Refuse a key or table ``data`` holds that :data:`SCHEMA` does not declare (every one, with a
    "did you mean"), an own table that is not a table, and a key of an own table it does not take.

    ``plugin_tables`` gives the top-level tables installed set providers read their options from
    (``config_table``); it is asked only when an undeclared name turns up, since it loads the
    providers.
    """
    problems = []
    shapes: list[str] = []  # values of a known key in a shape evalkit cannot read
    unknown = [name for name in data if name not in SCHEMA]
    if unknown and plugin_tables is not None:
        claimed = plugin_tables()
        unknown = [name for name in unknown if name not in claimed]
    for name in unknown:
        kind = "table" if isinstance(data[name], Mapping) else "key"
        hint = did_you_mean(name, SCHEMA)
        problems.append(
            f"unknown {kind} [{table_key(name)}] — evalkit does not read it.{hint}"
            if kind == "table"
            else f"unknown key {name!r} — evalkit does not read it.{hint}"
        )
    for name, schema in SCHEMA.items():
        if name not in data or schema.keys is None:
            continue
        value = data[name]
        if not isinstance(value, Mapping):
            problems.append(f"[{name}] must be a table, got {type(value).__name__} {value!r}")
            continue
        for key in value:
            if key not in schema.keys:
                hint = did_you_mean(key, schema.keys)
                known = listed(schema.keys)
                problems.append(f"[{name}] has no key {key!r}.{hint} It takes: {known}.")
        if name == "sets":
            shapes.extend(_sets_value_problems(value))
    problems += shapes
    if problems:
        what = "does not read" if not shapes else "cannot read"
        lines = (
            [f"{where}: {problems[0]}"]
            if len(problems) == 1
            else [f"{where} holds what evalkit {what}:", *(f"  - {p}" for p in problems)]
        )
        raise ConfigError("\n".join(lines))


def _sets_value_problems(table: Mapping[str, Any]) -> list[str]:
    """What is wrong with the shape of ``[sets] paths`` and ``allow_outside``: said here, by every
    command, like a misspelled key. Left to the file set provider, `paths = "evals/*.yaml"` (text,
    not a list) made `evalkit run myapp.faq` say `Unknown golden prompt set "myapp.faq"`, the cause
    below it as a plugin's crash (`ConfigError in golden_prompt_sets()`), and a run of an installed
    set passed over it."""
    problems = []
    paths = table.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        problems.append(f'[sets] paths must be a list of file patterns, like ["evals/*.yaml"], got {_shape(paths)}')
    problem = allow_outside_problem(table.get("allow_outside", []))
    if problem is not None:
        problems.append(problem)
    return problems


def _shape(value: Any) -> str:
    """A value read from the configuration, said by its type (and a short text or number as it is)."""
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}, not all non-empty texts"
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and len(repr(value)) <= 60:
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


def installed_plugin_tables() -> frozenset[str]:
    """The top-level tables installed golden and question set providers name with ``config_table``
    (``"sets"``, ``"question_sets.*"``, a third party's ``"myapp"``): loads the providers, so it is
    asked only when the configuration holds a table evalkit does not declare. A provider that
    fails to load claims nothing (its own failure is reported when it is used)."""
    from . import registry
    from .errors import PLUGIN_FAILURES
    from .options import TableOptions, _split_table

    claimed = set()
    for group in ("evalkit.golden_sets", "evalkit.question_sets"):
        for record in registry.enabled(group):
            try:
                factory = registry.load(record)
            except (*PLUGIN_FAILURES, Exception):  # noqa: BLE001 - a broken plugin claims no table
                continue
            if isinstance(factory, TableOptions) and isinstance(factory.config_table, str):
                keys = _split_table(factory.config_table)
                if keys:
                    claimed.add(keys[0])
    return frozenset(claimed)
