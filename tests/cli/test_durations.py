"""Every length of time evalkit reads — options, configuration keys, environment variables — by
one rule (:mod:`evalkit.durations`): the same units, and a refusal naming what gave it and its
bounds."""

from __future__ import annotations

import pytest
from evalkit.durations import read_duration
from evalkit.errors import UsageError

UNITS = "a number of seconds, or one with a unit s, m, h, d or w: 90s, 30m, 2h, 1d"
TYPED = 'a number of seconds, or text with a unit s, m, h, d or w: 90, "90s", "30m", "1d"'


def test_the_two_wait_options_refuse_by_one_rule_naming_the_option_and_both_bounds(cli, project) -> None:
    """``--timeout 8d`` said "a duration must look like 90s, 30m or 2h" (days were no unit) while
    ``--poll 1e9s`` said "at most 7 days": two rules for the same option type, neither naming it."""
    assert cli("run", "evalkit.smoke").code == 0
    for option, value in (("--timeout", "8d"), ("--poll", "1e9s"), ("--timeout", "soon")):
        result = cli("report", "pipeline-1", "--wait", option, value)
        assert result.code == 2, result.stderr
        assert f'{option} must be a duration from 1 ms to 7 days ({UNITS}), got "{value}"' in result.stderr, (
            result.stderr
        )
    waited = cli("run", "evalkit.smoke", "--wait-ready", "8d")
    assert (
        waited.code == 2 and f'--wait-ready must be a duration from 1 ms to 7 days ({UNITS}), got "8d"' in waited.stderr
    )


def test_a_configuration_key_and_an_environment_variable_take_the_same_words(cli, project) -> None:
    """``grade_timeout = "10m"`` was refused as "not a number of seconds", ``EVALKIT_BUSY_TIMEOUT=2m``
    too, while ``--timeout 10m`` was taken: a key and a variable now read a duration as an option does."""
    (project / "evalkit.toml").write_text('grade_timeout = "10m"\nhook_timeout = 30\n')
    assert cli("run", "evalkit.smoke", env={"EVALKIT_BUSY_TIMEOUT": "2m"}).code == 0
    (project / "evalkit.toml").write_text('grade_timeout = "2d"\n')
    refused = cli("run", "evalkit.smoke")
    assert (
        refused.code == 2
        and f'grade_timeout must be a duration from 1 ms to 1 day ({TYPED}), got "2d"' in refused.stderr
    )
    (project / "evalkit.toml").write_text('grade_timeout = "60"\n')
    text = cli("run", "evalkit.smoke")  # a number written as text, refused as by every key
    assert text.code == 2 and f'grade_timeout must be a duration from 1 ms to 1 day ({TYPED}), got "60"' in text.stderr
    (project / "evalkit.toml").unlink()
    busy = cli("run", "evalkit.smoke", env={"EVALKIT_BUSY_TIMEOUT": "2d"})
    assert (
        busy.code == 2
        and f'EVALKIT_BUSY_TIMEOUT must be a duration from 1 ms to 1 day ({UNITS}), got "2d"' in busy.stderr
    )


def test_an_age_needs_its_unit_and_is_told_by_the_same_rule(cli, project) -> None:
    assert cli("run", "evalkit.smoke").code == 0
    bare = cli("db", "prune", "--older-than", "90")
    assert (
        bare.code == 2 and "--older-than must be a duration from 1 s to 50 years (a number with a unit" in bare.stderr
    )
    assert cli("db", "prune", "--older-than", "1.5d").code == 0


@pytest.mark.parametrize(
    "value",
    ["8x", "90 d", "", "nan", "infs", "-1s", "0", "1e-300", True, "٣s", "1_0s", "x" * 500, 10**400, float("nan")],
)
def test_what_is_no_duration(value) -> None:
    with pytest.raises(UsageError, match=r"^limit must be a duration from 1 ms to 1 day \("):
        read_duration(value, "limit", most=86400)


def test_a_typed_value_is_seconds_as_a_number_and_needs_its_unit_as_text() -> None:
    assert [read_duration(v, "key", most=86400, typed=True) for v in (60, 0.5, "10m", "2h")] == [60, 0.5, 600, 7200]
    with pytest.raises(
        UsageError, match=r"^key must be a duration from 1 ms to 1 day \(a number of seconds, or text with"
    ):
        read_duration("60", "key", most=86400, typed=True)


def test_what_a_duration_reads() -> None:
    read = [
        read_duration(v, "limit", most=7 * 86400) for v in ("90", "90s", "30M", "1.5h", "2d", "1w", 0.5, 60, " 5s ")
    ]
    assert read == [90, 90, 1800, 5400, 172800, 604800, 0.5, 60, 5]


@pytest.mark.parametrize(
    ("words", "flag"),
    [
        (("run", "evalkit.smoke", "--fail-on-regression"), "--wait-for-shards"),
        (("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "ci"), "--wait-for-shards"),
        (("report", "pipeline-1"), "--wait"),
    ],
    ids=["run", "retrieval", "report"],
)
def test_timeout_or_poll_without_the_flag_that_waits_is_refused_before_anything_runs(cli, project, words, flag) -> None:
    """A verdict job written `evalkit run SET --timeout 30m --fail-on-regression` (its --wait-for-shards
    lost) did not wait: --timeout was ignored and the job answered the whole set itself, paying for
    it, and gated its own run. --timeout and --poll only say how the flag waits: without it, exit 2."""
    result = cli(*words, "--timeout", "30m", "--poll", "1s")
    assert result.code == 2, result.stdout + result.stderr
    said = f"--timeout and --poll only say how {flag} waits, and {flag} is not given: nothing would wait"
    assert said in result.stderr, result.stderr
    assert not (project / ".evalkit").exists(), "nothing was stored"
    alone = cli(*words, "--poll", "2s")
    assert alone.code == 2 and f"--poll only says how {flag} waits" in alone.stderr, alone.stderr
