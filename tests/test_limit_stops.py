"""The spending limit that stopped a run or a shard, kept as data in its provenance
(:mod:`evalkit.run.limit_stops`): written per part, cleared when the part finishes again, and
read only when it has its shape (a third-party store's or an edited row is ignored)."""

from __future__ import annotations

from decimal import Decimal

import attrs
import pytest
from evalkit.run.limit_stops import (
    LIMIT_STOPS,
    limit_stop,
    provenance_after,
    reached_words,
    resume_limits,
    run_stopped_by,
    stops_of,
)
from evalkit.runs import Run

REQUESTS = limit_stop("max_requests", 2, None, ("--max-requests", "6"))
BUDGET = limit_stop("budget", Decimal("0.03"), "EUR", ("--budget", "0.08"))


def run_with(provenance) -> Run:  # noqa: ANN001
    return Run(id="r", set_identifier="s", grader="g", provenance=provenance)


def test_a_stop_is_kept_per_part_and_cleared_when_the_part_finishes_again() -> None:
    first = provenance_after({"grader_plugin": "deterministic"}, "1/2", REQUESTS)
    assert first == {"grader_plugin": "deterministic", LIMIT_STOPS: {"1/2": REQUESTS}}
    both = provenance_after(first, "2/2", BUDGET)
    assert set(both[LIMIT_STOPS]) == {"1/2", "2/2"}
    assert provenance_after(both, "2/2", BUDGET) is None  # nothing changes: nothing is written
    assert provenance_after({"grader_plugin": "deterministic"}, "1/2", None) is None
    cleared = provenance_after(provenance_after(both, "2/2", None), "1/2", None)
    assert cleared == {"grader_plugin": "deterministic"}
    # a whole-run finish (a --resume answers every slice) replaces every shard's
    assert provenance_after(both, "*", None) == {"grader_plugin": "deterministic"}
    assert provenance_after(both, "*", REQUESTS) == {"grader_plugin": "deterministic", LIMIT_STOPS: {"*": REQUESTS}}


def test_what_a_reader_makes_of_a_run_s_stops() -> None:
    run = run_with({LIMIT_STOPS: {"1/2": REQUESTS, "2/2": BUDGET}})
    assert reached_words(REQUESTS) == "the limit of 2 requests reached"
    assert reached_words(BUDGET) == "the budget of 0.03 EUR reached"
    assert run_stopped_by(run) == "the limit of 2 requests reached; the budget of 0.03 EUR reached"
    assert resume_limits(run, "1/2") == ("--max-requests", "6") and resume_limits(run, "*") == ()
    assert run_stopped_by(run_with(None)) is None and run_stopped_by(run_with({"grader_plugin": "x"})) is None


@pytest.mark.parametrize(
    "entry",
    [
        "max_requests",
        {"limit": "tokens", "value": "2"},
        {"limit": "max_requests", "value": 2},
        {"limit": "max_requests", "value": "NaN"},
        {"limit": "max_requests", "value": " 2"},
        {"limit": "budget", "value": "1", "currency": "E\u200bUR"},
        {"limit": "max_requests", "value": "2", "resume_limits": ["--max-requests", "6; rm -rf /"]},
        {"limit": "max_requests", "value": "2", "resume_limits": ["--database", "sqlite:///x"]},
        {"limit": "max_requests", "value": "2", "resume_limits": ["--max-requests"]},
        {"limit": "max_requests", "value": "2", "resume_limits": "--max-requests 6"},
    ],
)
def test_an_entry_not_of_its_shape_is_ignored(entry) -> None:  # noqa: ANN001
    run = run_with({LIMIT_STOPS: {"1/2": entry}})
    assert stops_of(run) == {} and run_stopped_by(run) is None and resume_limits(run, "1/2") == ()
    assert stops_of(run_with({LIMIT_STOPS: ["1/2"]})) == {}


def test_a_limit_that_is_none_is_refused() -> None:
    with pytest.raises(ValueError, match="no such limit"):
        limit_stop("tokens", 2, None, ())


def test_the_line_on_a_run_whose_shards_ended_tells_a_limit_from_a_kill() -> None:
    from evalkit.leases import RunLiveness
    from evalkit.run.continuing import gone_sentence, resume_hint, status_label, stopped_by_limit

    run = Run(id="r-1", set_identifier="arith.basic", grader="deterministic", provider_instance="prod",
              provenance={LIMIT_STOPS: {"1/3": REQUESTS}})  # fmt: skip
    stopped = RunLiveness(False, 100.0, 50.0, 3, (1,))
    assert stopped_by_limit(run, stopped) and status_label(run, stopped) == "running (stopped by a spending limit)"
    said = gone_sentence(run, stopped)
    assert "shard 1/3 of run r-1 was stopped by a spending limit (the limit of 2 requests reached), not killed" in said, said
    assert said.endswith("`evalkit run arith.basic --provider prod --shard 1/3 --run-id r-1 --max-requests 6`"), said
    # shard 2 killed beside it: the run is said killed, shard 1 stopped, each continued with its own limits
    both = RunLiveness(False, 100.0, 50.0, 3, (1, 2))
    assert not stopped_by_limit(run, both) and status_label(run, both) == "running (no live process)"
    said = gone_sentence(run, both)
    assert "(killed, its machine lost, or its results store out of reach as it stopped), and shard 1/3 of run r-1 was stopped by a spending limit" in said, said
    assert "--shard 1/3 --run-id r-1 --max-requests 6` and `" in said and said.endswith("--shard 2/3 --run-id r-1`"), said
    # a set built in code is continued by its library call, the limits as keywords
    in_code = attrs.evolve(run, provenance={"set_built_in_code": True, LIMIT_STOPS: {"1/3": REQUESTS}})
    assert "shard=Shard(1, 3), run_id=\"r-1\", max_requests=6)" in resume_hint(in_code, (1,), 3)
