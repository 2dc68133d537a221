"""[gate] and [run] (issue 33, §3–§4): the configuration's schema is the one declaration of what
evalkit.toml may hold, the gate's keys resolve command line over file over defaults, and bad
values are refused naming where they came from."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from evalkit.config import load_config
from evalkit.config_schema import SCHEMA, check_schema
from evalkit.errors import ConfigError, UsageError
from evalkit.gate_settings import GATE_KEYS, GateSettings, gate_from


def write(tmp_path: Path, text: str, name: str = "evalkit.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_defaults_are_todays_gate() -> None:
    tolerances, settings = gate_from(None)
    assert (tolerances.max_pass_rate_drop, tolerances.max_mean_score_drop) == (Fraction(1, 10), Fraction(1, 10))
    assert settings == GateSettings("tolerance", 0.05, None, ())
    retrieval, _ = gate_from(None, kind="retrieval")
    assert (retrieval.max_mrr_drop, retrieval.max_recall_drop, retrieval.max_ndcg_drop) == (None, None, None)


def test_the_command_line_wins_over_the_file_over_the_defaults() -> None:
    table = {"method": "paired", "alpha": 0.01, "max_pass_rate_drop": 0.05, "max_regressed_cases": 2, "quarantine": ["a", "a", "b"]}
    tolerances, settings = gate_from(table)
    assert settings == GateSettings("paired", 0.01, 2, ("a", "b"))
    assert tolerances.max_pass_rate_drop == Fraction(1, 20) and tolerances.max_mean_score_drop == Fraction(1, 10)
    tolerances, settings = gate_from(table, {"method": "tolerance", "alpha": "0.1", "max_pass_rate_drop": "0.2", "max_regressed_cases": "0"})
    assert settings == GateSettings("tolerance", 0.1, 0, ("a", "b"))
    assert tolerances.max_pass_rate_drop == Fraction(1, 5)
    retrieval, _ = gate_from({"max_top1_drop": 0.03, "max_ndcg_drop": 0.02}, {"max_mrr_drop": "0.04"}, kind="retrieval")
    assert (retrieval.max_pass_rate_drop, retrieval.max_mrr_drop, retrieval.max_ndcg_drop) == (
        Fraction(3, 100), Fraction(1, 25), Fraction(1, 50)
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"method": "pairwise"}, '[gate] method must be "tolerance" or "paired", got \'pairwise\'. Did you mean "paired"?'),
        ({"alpha": 0.5}, "[gate] alpha must be a number from 1e-9 and below 0.5"),
        ({"alpha": True}, "[gate] alpha must be a number from 1e-9 and below 0.5"),
        # 1 - alpha rounds to 1: the normal quantile the power figures need does not exist
        ({"alpha": 1e-20}, "[gate] alpha must be a number from 1e-9 and below 0.5 (the one-sided level), got 1e-20"),
        ({"alpha": 5e-324}, "[gate] alpha must be a number from 1e-9 and below 0.5 (the one-sided level), got 5e-324"),
        ({"max_regressed_cases": -1}, "[gate] max_regressed_cases must be a whole number from 0 to 999,999,999, got -1"),
        # a TOML integer had no upper bound, where the command line stopped at nine digits
        ({"max_regressed_cases": 10**20}, "[gate] max_regressed_cases must be a whole number from 0 to 999,999,999, got 100000000000000000000"),
        ({"quarantine": "case-1"}, "[gate] quarantine must be a list of case ids"),
        ({"max_pass_rate_drop": 1.5}, "[gate] max_pass_rate_drop must be a finite number in 0..1, got 1.5"),
        ({"max_ndcg_drop": "x"}, "[gate] max_ndcg_drop must be a finite number in 0..1"),
    ],
)
def test_a_bad_gate_value_in_the_file_is_refused_naming_the_file(table, message) -> None:
    kind = "retrieval" if "max_ndcg_drop" in table else "prompts"
    with pytest.raises(ConfigError) as raised:
        gate_from(table, kind=kind, where="/p/evalkit.toml")
    assert str(raised.value).startswith("/p/evalkit.toml: ") and message in str(raised.value)


def test_a_bad_option_is_the_command_lines_usage_error() -> None:
    with pytest.raises(UsageError, match="--alpha must be a number from 1e-9 and below 0.5"):
        gate_from({}, {"alpha": "nan"})
    with pytest.raises(UsageError, match='--gate must be "tolerance" or "paired"'):
        gate_from({}, {"method": "both"})
    with pytest.raises(UsageError, match='"--max-pass-rate-drop" must be a finite number in 0..1'):
        gate_from({}, {"max_pass_rate_drop": "2"})


def test_every_gate_key_is_declared_once_in_the_schema() -> None:
    assert SCHEMA["gate"].keys is GATE_KEYS
    assert set(GATE_KEYS) == {
        "method", "alpha", "max_pass_rate_drop", "max_mean_score_drop", "max_regressed_cases", "quarantine", "min_judge_kappa",
        "max_top1_drop", "max_top3_drop", "max_mrr_drop", "max_recall_drop", "max_ndcg_drop",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[gatee]\nmethod = \"paired\"\n", 'unknown table [gatee] — evalkit does not read it. Did you mean "gate"?'),
        ("[gate]\nmethd = \"paired\"\n", "[gate] has no key 'methd'. Did you mean \"method\"?"),
        ("[gate]\nmax_pass_rate_dorp = 0.2\n", 'Did you mean "max_pass_rate_drop"?'),
        ("databse = \"sqlite:///x.db\"\n", "unknown key 'databse' — evalkit does not read it. Did you mean \"database\"?"),
        ("[run]\nrepeat = 3\n", "[run] has no key 'repeat'. Did you mean \"repeats\"?"),
        ("gate = 3\n", "[gate] must be a table, got int 3"),
        ("[run]\nrepeats = 0\n", "[run] repeats must be a whole number from 1 to 1000, got 0"),
        ("[gate]\nmethod = \"pairs\"\n", '[gate] method must be "tolerance" or "paired"'),
    ],
)
def test_what_evalkit_does_not_read_is_refused_when_the_configuration_loads(tmp_path, text, message) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(write(tmp_path, text))
    assert message in str(raised.value)


def test_every_mistake_is_named_at_once_and_pyproject_is_held_to_the_same_schema(tmp_path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(write(tmp_path, "[tool.evalkit.gatee]\nmethod = 1\n[tool.evalkit.gate]\nalfa = 0.1\n", "pyproject.toml"))
    text = str(raised.value)
    assert "holds what evalkit does not read" in text and "[gatee]" in text and "'alfa'" in text and 'Did you mean "alpha"?' in text


def test_plugin_tables_are_left_to_their_plugins_and_a_providers_own_table_is_allowed(tmp_path) -> None:
    config = load_config(write(tmp_path, (
        '[providers.p]\nadapter = "replay"\nwhatever = 1\n[set_providers."x.y"]\nanything = 2\n'
        '[question_sets."a.b"]\npath = "c"\n[sets]\npaths = []\n[gate]\nmethod = "paired"\n[run]\nrepeats = 3\n'
    )))  # fmt: skip
    assert config.gate == {"method": "paired"} and config.repeats == 3
    claimed = frozenset({"opt_questions"})
    check_schema({"opt_questions": {"a": {}}}, "evalkit.toml", lambda: claimed)  # a set provider's config_table
    with pytest.raises(ConfigError, match=r"unknown table \[opt_question\]"):
        check_schema({"opt_question": {}}, "evalkit.toml", lambda: claimed)


@pytest.mark.parametrize("fields", [{"alpha": "0.05"}, {"max_regressed_cases": "3"}])
def test_a_library_callers_gate_settings_take_numbers_not_text(fields) -> None:
    # GateSettings(alpha="0.05") was kept as the text "0.05", for the statistics to trip over later
    with pytest.raises(UsageError, match="which is text"):
        GateSettings(**fields)
