"""evalkit.options: one declaration per plugin — validators, path and secret markers, and the one
place that decides how a factory is called."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from evalkit import registry
from evalkit.errors import ConfigError, UsageError
from evalkit.options import (
    OptionError,
    OptionsError,
    build_plugin,
    check_options,
    number,
    one_of,
    option,
    path_options,
    receives_options,
    structure_options,
    text,
    whole,
)


@attrs.frozen
class Knobs:
    """Options of the test factories."""

    corpus: str = option("a file", path=True)
    level: int = option("how much", default=1, validator=whole(at_least=1, at_most=9))
    ratio: float = option("a share", default=0.5, validator=number(above=0, at_most=1))
    mode: str = option("how", default="fast", validator=one_of("fast", "slow"))
    header: str | None = option("a credential", default=None, secret=True, validator=attrs.validators.optional(text()))


class TakesTheObject:
    Options = Knobs

    def __init__(self, options: Knobs) -> None:
        self.options = options


class TakesItUnannotated:
    Options = Knobs

    def __init__(self, options):  # noqa: ANN001 - the unannotated form of the contract
        self.options = options


class TakesKeywords:
    """Written to the earlier contract: its options as keyword arguments."""

    Options = Knobs

    def __init__(self, corpus: str, level: int = 1, **rest: object) -> None:
        self.corpus, self.level, self.rest = corpus, level, rest


class DeclaresNothing:
    path_options = ("pages",)

    def __init__(self, **table: object) -> None:
        self.table = table


@attrs.frozen
class Wrapped:
    options: dict[str, str] | None = option("passed through to a library", default=None)


class OptionNamedOptions:
    """Its one option is called ``options``: a keyword argument, not the object."""

    Options = Wrapped

    def __init__(self, options=None):  # noqa: ANN001
        self.options = options


def make_with_object(options: Knobs) -> TakesTheObject:
    return TakesTheObject(options)


make_with_object.Options = Knobs  # type: ignore[attr-defined]
RECORD = registry.PluginRecord("evalkit.retrievers", "knobs", "tests:Knobs", "tests-dist", "1.0")


def test_the_contract_is_read_from_the_factory_in_one_place() -> None:
    assert receives_options(TakesTheObject) == "options"
    assert receives_options(TakesItUnannotated) == "options"
    assert receives_options(make_with_object) == "options"
    assert receives_options(TakesKeywords) is None
    assert receives_options(DeclaresNothing) is None
    assert receives_options(OptionNamedOptions) is None


def test_each_contract_is_called_as_it_expects() -> None:
    given = {"corpus": "c.jsonl", "level": 3}
    built = check_options(RECORD, TakesTheObject, given, "[t]")
    assert built == {"options": Knobs("c.jsonl", level=3)}
    assert check_options(RECORD, TakesKeywords, given, "[t]") == given, "only the options given, so the factory's defaults apply"
    assert check_options(RECORD, DeclaresNothing, {"pages": 5}, "[t]") == {"pages": 5}
    assert check_options(RECORD, OptionNamedOptions, {"options": {"a": "b"}}, "[t]") == {"options": {"a": "b"}}
    assert registry.build(RECORD, TakesTheObject, given, "[t]").options.level == 3
    assert registry.build(RECORD, TakesKeywords, given, "[t]").level == 3


def test_validators_name_the_option_and_the_allowed_values() -> None:
    with pytest.raises(OptionError) as refused:
        Knobs("c", level=0)
    assert str(refused.value) == 'wrong value for option "level": level must be a whole number from 1 to 9 (got 0)'
    assert isinstance(refused.value, ConfigError) and isinstance(refused.value, UsageError) and isinstance(refused.value, ValueError)
    for field, bad, requirement in (
        ("level", True, "must be a whole number from 1 to 9"),
        ("ratio", 0, "must be a number above 0 and at most 1"),
        ("ratio", float("nan"), "must be a number above 0 and at most 1"),
        ("ratio", "0.5", "must be a number above 0 and at most 1"),
        ("mode", "medium", 'must be "fast" or "slow"'),
        ("header", "", "must be a non-empty string"),
    ):
        with pytest.raises(OptionError, match=f"{field} {requirement}"):
            Knobs("c", **{field: bad})
    with pytest.raises(OptionError) as secret:
        Knobs("c", header="")
    assert "got" not in str(secret.value), "a secret option's value is never shown"
    assert "must be a finite number" in str(pytest.raises(OptionError, number(), None, attrs.fields(Knobs).ratio, float("inf")).value)


def test_numbers_past_what_a_float_or_a_store_holds_are_refused_at_the_boundary() -> None:
    # TOML reads 1 followed by 400 zeros as an int: float() of it raises OverflowError, which a
    # plugin met in the middle of a run (a per-minute limit) or cattrs reported as "unknown error".
    huge = 10**400

    @attrs.frozen
    class Limits:
        per_minute: int | None = option("a limit", default=None, validator=attrs.validators.optional(whole(at_least=1)))
        seed: int = option("a seed", default=0, validator=whole(at_least=0))
        wait: float = option("seconds", default=1.0, validator=number(above=0))

    assert Limits(seed=2**63 - 1).seed == 2**63 - 1
    with pytest.raises(OptionError, match=r"per_minute must be a whole number of at least 1, at most 2\*\*63 - 1 \(9,223,372,036,854,775,807\)"):
        Limits(per_minute=2**63)
    with pytest.raises(OptionError, match=r"wait must be a number above 0 that a float holds \(up to about 1.8e308\)"):
        Limits(wait=huge)
    with pytest.raises(OptionsError) as refused:
        structure_options(Limits, {"per_minute": huge, "wait": huge}, plugin="P", table="[t]")
    lines = str(refused.value).splitlines()
    assert any(line.startswith('P has a wrong value for option "per_minute" in [t]: per_minute must be a whole number of at least 1, at most 2**63 - 1') for line in lines), lines
    assert any(line.startswith('P has a wrong value for option "wait" in [t]: a number past what a float holds (about 1.8e308) (got 1000') for line in lines), lines
    assert "unknown error" not in str(refused.value)


def test_every_problem_of_a_table_is_reported_at_once_naming_plugin_option_and_table() -> None:
    with pytest.raises(OptionsError) as refused:
        structure_options(Knobs, {"corpus": "c", "level": 12, "ratio": "half", "header": ["sk-secret-1"], "mdoe": "x"}, plugin="P", table="[t]")
    lines = str(refused.value).splitlines()
    assert lines[0] == "the options of P are wrong:"
    assert 'P has no option "mdoe" (in [t]). Did you mean "mode"? Its options: corpus, level, ratio, mode, header.' in lines
    assert 'P has a wrong value for option "level" in [t]: level must be a whole number from 1 to 9 (got 12).' in lines
    assert any(line.startswith('P has a wrong value for option "ratio" in [t]: ') and "'half'" in line for line in lines)
    assert any('option "header"' in line and "value not shown" in line for line in lines)
    assert "sk-secret-1" not in str(refused.value)


def test_a_check_across_options_is_reported_too() -> None:
    @attrs.frozen
    class Range:
        low: int = option("from", default=0)
        high: int = option("to", default=1)

        def __attrs_post_init__(self) -> None:
            if self.low > self.high:
                raise ValueError("low must not exceed high")

    with pytest.raises(OptionsError, match=r"P cannot take the options in \[t\]: low must not exceed high"):
        structure_options(Range, {"low": 5}, plugin="P", table="[t]")


def test_build_plugin_checks_keywords_as_a_configuration_table_would() -> None:
    built = build_plugin(TakesTheObject, corpus=Path("data/c.jsonl"), mode="slow")
    assert built.options == Knobs("data/c.jsonl", mode="slow"), "a Path for a path option is its string"
    with pytest.raises(OptionsError, match=r'TakesTheObject needs option "corpus" \(a file\): set corpus = … in the options given'):
        build_plugin(TakesTheObject)
    assert build_plugin(DeclaresNothing, pages=1).table == {"pages": 1}


def test_path_options_are_the_marked_fields_or_the_listed_names() -> None:
    assert path_options(TakesTheObject) == ("corpus",)
    assert path_options(DeclaresNothing) == ("pages",)
    assert path_options(OptionNamedOptions) == ()


def test_one_of_names_each_choice_quoted_with_its_escapes() -> None:
    """A plugin's choices were written between quotes by hand: a choice holding a '"' or a line
    break ended early or printed a line of its own. Each is named through wording.quoted."""
    assert one_of("fast", 'a"b', "x\nevalkit: ok").requirement == 'must be "fast", "a\\"b" or "x\\x0aevalkit: ok"'
