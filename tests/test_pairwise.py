"""The pairwise tally (evalkit.pairwise): a preference that flips with the order is a tie, the win
rate leaves ties out and carries Wilson's interval, and the position bias counts decisive judgements."""

from __future__ import annotations

import pytest
from evalkit.pairwise import LOSS, TIE, WIN, PairJudgement, case_outcome, pairwise_refusal, tally
from evalkit.runs import Run, RunKind
from evalkit.stats import wilson_interval
from evalkit.wording import arguments_named
from evalkit_plugins._judge import ReplyError
from evalkit_plugins.pairwise import parse_pairwise_reply


@pytest.mark.parametrize(
    ("base_first", "run_first", "outcome"),
    [
        ("B", "A", WIN),  # RUN's answer preferred in both orders
        ("A", "B", LOSS),  # BASE's answer preferred in both orders
        ("A", "A", TIE),  # always the first shown: the preference flips with the order
        ("B", "B", TIE),  # always the second shown
        ("TIE", "TIE", TIE),
        ("B", "TIE", TIE),  # one order only
        ("TIE", "A", TIE),
        (None, "A", TIE),  # an unparseable judgement
        (None, None, TIE),
    ],
)
def test_a_case_is_won_or_lost_only_when_both_orders_agree(base_first, run_first, outcome) -> None:
    assert case_outcome(base_first, run_first) == outcome
    assert PairJudgement("c", base_first, run_first).outcome == outcome


def test_flips_are_ties_and_counted_apart() -> None:
    figures = tally([PairJudgement("a", "A", "A"), PairJudgement("b", "B", "B"), PairJudgement("c", "TIE", "TIE")])
    assert (figures.wins, figures.ties, figures.losses, figures.flipped) == (0, 3, 0, 2)
    assert figures.win_rate is None and figures.win_rate_ci95 is None
    assert figures.position_bias == 0.5 and figures.decisive_judgements == 4


def test_a_judge_that_always_says_first_has_full_position_bias() -> None:
    figures = tally([PairJudgement(str(i), "A", "A") for i in range(5)])
    assert figures.position_bias == 1.0 and figures.first_preferred == 10 and figures.ties == 5


def test_an_unswayed_judge_has_position_bias_one_half() -> None:
    figures = tally([PairJudgement("w", "B", "A"), PairJudgement("l", "A", "B")])
    assert figures.position_bias == 0.5 and (figures.wins, figures.losses) == (1, 1)


def test_the_win_rate_leaves_ties_out_and_carries_wilsons_interval() -> None:
    judgements = [PairJudgement(f"w{i}", "B", "A") for i in range(6)]
    judgements += [PairJudgement(f"l{i}", "A", "B") for i in range(2)]
    judgements += [PairJudgement(f"t{i}", "TIE", "TIE") for i in range(4)]
    figures = tally(judgements)
    assert (figures.cases, figures.wins, figures.ties, figures.losses) == (12, 6, 4, 2)
    assert figures.win_rate == 6 / 8
    assert figures.win_rate_ci95 == wilson_interval(6, 8, 0.95)
    assert figures.win_rate_ci95.low < 0.75 < figures.win_rate_ci95.high


def test_unparseable_judgements_are_ties_counted_and_not_decisive() -> None:
    figures = tally([PairJudgement("a", None, "A"), PairJudgement("b", "B", "A")])
    assert (figures.ties, figures.wins, figures.unparseable) == (1, 1, 1)
    assert figures.decisive_judgements == 3 and figures.position_bias == pytest.approx(2 / 3)


def test_no_cases_make_no_figures() -> None:
    figures = tally([])
    assert figures.cases == 0 and figures.win_rate is None and figures.position_bias is None


def test_the_judges_reply_is_parsed_strictly() -> None:
    verdicts = ("A", "B", "TIE")
    assert parse_pairwise_reply(" A\n", verdicts) == "A"
    assert parse_pairwise_reply("TIE", verdicts) == "TIE"
    for reply in ("a", "A.", "tie", "Response A", "A B", "", '{"winner": "A"}'):
        with pytest.raises(ReplyError) as caught:
            parse_pairwise_reply(reply, verdicts)
        assert str(caught.value) == "the reply is not exactly one of A, B, TIE", "the message never quotes the reply"


def _run(privacy: str, kind: RunKind = RunKind.PROMPTS, set_identifier: str = "s") -> Run:
    return Run(id=f"r-{privacy}", set_identifier=set_identifier, grader="deterministic", kind=kind, privacy=privacy)


def test_only_runs_stored_in_full_may_be_judged() -> None:
    assert pairwise_refusal(_run("full"), _run("full")) is None
    redacted = pairwise_refusal(_run("full"), _run("redacted"))
    assert redacted is not None and 'RUN r-redacted stored its answers at privacy level "redacted" (scrubbed and cut)' in redacted
    # a Python caller's keyword, the command line's option (it said --privacy full to both)
    assert redacted.endswith('run them with privacy="full" (or privacy = "full" in evalkit.toml)'), redacted
    with arguments_named():
        said = pairwise_refusal(_run("full"), _run("redacted"))
    assert said is not None and said.endswith('run them with --privacy full (or privacy = "full" in evalkit.toml)'), said
    metadata = pairwise_refusal(_run("metadata"), _run("full"))
    assert metadata is not None and 'privacy level "metadata" (not kept)' in metadata
    retrieval = pairwise_refusal(_run("full", RunKind.RETRIEVAL), _run("full", RunKind.RETRIEVAL))
    assert retrieval is not None and "retrieval run" in retrieval
    other_set = pairwise_refusal(_run("full"), _run("full", set_identifier="t"))
    assert other_set is not None and "different sets" in other_set


def test_no_judge_is_refused_naming_the_settings_to_a_python_caller_and_the_option_on_the_command_line(tmp_path) -> None:
    """It said the judge grader's ``grader_options={"judge": NAME}`` (before, ``--judge NAME``): neither
    is how a pairwise comparison is given its judge."""
    from evalkit.config import load_config
    from evalkit.errors import UsageError
    from evalkit.pairwise import PairwiseSettings, pairwise_judge

    (tmp_path / "evalkit.toml").write_text("")
    config = load_config(cwd=tmp_path)  # found by looking: an empty one named on purpose is refused
    with pytest.raises(UsageError, match=r"with settings=PairwiseSettings\(judge=NAME\), or set judge = "):
        pairwise_judge(PairwiseSettings(), config)
    with arguments_named(), pytest.raises(UsageError, match=r"with --pairwise-judge NAME, or set judge = "):
        pairwise_judge(PairwiseSettings(), config)
