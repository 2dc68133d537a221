"""Quality-aware model selection over runs stored through the real repository on a SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit.config import ProviderInstance
from evalkit.errors import ToleranceError, UsageError
from evalkit.routing import (
    COST_CEILING_PER_1K,
    POLICIES,
    Candidate,
    ModelSelection,
    SelectionCriteria,
    cost_signal,
    parse_policy,
)
from evalkit.runs import RunStatus
from evalkit.storage import GeneratorScopedResults, ProviderModelQualityScores

from tests.routing.routing_support import Lab, replay_instance, store_run


@pytest.fixture
def lab(tmp_path: Path, sqlite_url: str) -> Lab:
    """A scratch project with a real SQLite results file."""
    return Lab(tmp_path, sqlite_url)


def names(ranking) -> list[str]:  # noqa: ANN001
    """Instance names in ranked order."""
    return [e.candidate.name for e in ranking.entries]


def entry(ranking, name: str):  # noqa: ANN001, ANN201
    """The ranked or excluded entry of an instance."""
    return next(e for e in (*ranking.entries, *ranking.excluded) if e.candidate.name == name)


# -- the multi-instance and zero-quality oracles --------------------------------------------------


def test_two_instances_of_one_alias_are_scored_separately_and_the_unscoped_read_is_ambiguous(lab: Lab) -> None:
    config = lab.configure(replay_instance("instance-b", "shared-alias") + replay_instance("instance-a", "shared-alias"))
    run_a = lab.measure("instance-a", "tests.set_a", [True, True])
    run_b = lab.measure("instance-b", "tests.set_a", [False, False])
    repository = lab.repository()

    assert repository.mean_quality_for_provider_model("instance-a", "shared-alias") == 1.0
    assert repository.mean_quality_for_provider_model("instance-b", "shared-alias") == 0.0
    assert repository.mean_quality_for_model("shared-alias") is None

    ranking = ModelSelection(config, repository, "quality").rank()
    assert names(ranking) == ["instance-a", "instance-b"]
    assert [e.quality.value for e in ranking.entries] == [1.0, 0.0]
    assert [e.score for e in ranking.entries] == [1.0, 0.0]
    assert entry(ranking, "instance-a").run_ids == (run_a.id,)
    assert entry(ranking, "instance-b").run_ids == (run_b.id,)
    assert ranking.selected.name == "instance-a"
    assert ModelSelection(config, repository, "quality").select() == ranking.selected


def test_a_measured_zero_ranks_below_an_unmeasured_candidate_which_is_neutral(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("zero", "m-zero") + replay_instance("unmeasured", "m-new") + replay_instance("half", "m-half")
    )
    lab.measure("zero", "tests.set_a", [False, False])
    lab.measure("half", "tests.set_a", [True, False, True, False])
    ranking = ModelSelection(config, lab.repository(), "quality").rank()

    zero, unmeasured = entry(ranking, "zero"), entry(ranking, "unmeasured")
    assert zero.quality.value == 0.0 and zero.score == 0.0
    assert unmeasured.quality.value is None and unmeasured.score == 0.5
    # a measured 0.5 and the neutral 0.5 tie exactly: configuration order decides
    assert names(ranking) == ["unmeasured", "half", "zero"]
    assert "a measured zero counts as zero" in zero.reason
    assert "neutral" in unmeasured.reason


# -- policy ordering ------------------------------------------------------------------------------


def test_provider_priority_is_the_default_and_ignores_measurements(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("low", "m1", priority=1)
        + replay_instance("high", "m2", priority=5)
        + replay_instance("also-low", "m3", priority=1)
    )
    lab.measure("low", "tests.set_a", [True])
    lab.measure("high", "tests.set_a", [False])
    lab.measure("also-low", "tests.set_a", [True])
    selection = ModelSelection(config, lab.repository())

    assert selection.policy == "provider_priority"
    ranking = selection.rank()
    assert names(ranking) == ["high", "low", "also-low"]
    assert {e.score for e in ranking.entries} == {0.5}
    assert all(e.quality.value is None and e.run_ids == () for e in ranking.entries)  # nothing read
    assert "priority 5 > 1" in ranking.entries[0].reason
    assert "later in the configuration" in ranking.entries[2].reason

    explained = selection.rank(explain=True)
    assert names(explained) == ["high", "low", "also-low"]
    assert [e.quality.value for e in explained.entries] == [0.0, 1.0, 1.0]
    assert {e.score for e in explained.entries} == {0.5}
    assert "shown only" in explained.entries[0].reason


@pytest.mark.parametrize("policy", ["balanced", "quality", "economy"])
def test_priority_outranks_every_measurement_in_every_policy(lab: Lab, policy: str) -> None:
    config = lab.configure(
        replay_instance("best", "m1", priority=0, cost_per_1k_tokens=0.0)
        + replay_instance("preferred", "m2", priority=3, cost_per_1k_tokens=0.5)
    )
    lab.measure("best", "tests.set_a", [True, True])
    lab.measure("preferred", "tests.set_a", [False, False])
    ranking = ModelSelection(config, lab.repository(), policy).rank(SelectionCriteria(prefer_lowest_cost=True))

    assert names(ranking) == ["preferred", "best"]
    assert entry(ranking, "preferred").score < entry(ranking, "best").score
    assert "priority outranks every measurement" in entry(ranking, "best").reason


def test_equal_priority_orders_by_score_then_configuration_order(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("c-good", "m1")
        + replay_instance("a-poor", "m2")
        + replay_instance("b-good", "m3")
        + replay_instance("d-best", "m4")
    )
    lab.measure("c-good", "tests.set_a", [True, False])
    lab.measure("a-poor", "tests.set_a", [False, False, False, True])
    lab.measure("b-good", "tests.set_a", [False, True])
    lab.measure("d-best", "tests.set_a", [True, True])
    ranking = ModelSelection(config, lab.repository(), "quality").rank()

    assert names(ranking) == ["d-best", "c-good", "b-good", "a-poor"]
    assert [e.rank for e in ranking.entries] == [1, 2, 3, 4]
    assert "score 0.5000 < 1.0000" in entry(ranking, "c-good").reason
    assert "same priority and score, later in the configuration" in entry(ranking, "b-good").reason


def test_balanced_uses_cost_only_when_the_criteria_prefer_the_lowest_cost(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("dear", "m1", cost_per_1k_tokens=0.1) + replay_instance("cheap", "m2", cost_per_1k_tokens=0.0)
    )
    lab.measure("dear", "tests.set_a", [True, True, True, True])
    lab.measure("cheap", "tests.set_a", [True, True, True, False])
    selection = ModelSelection(config, lab.repository(), "balanced")

    plain = selection.rank()
    assert names(plain) == ["dear", "cheap"]
    assert [e.score for e in plain.entries] == [1.0, 0.75]

    frugal = selection.rank(SelectionCriteria(prefer_lowest_cost=True))
    # dear: (0.4·1.0 + 0.2·0.0)/0.6; cheap: (0.4·0.75 + 0.2·1.0)/0.6
    assert entry(frugal, "dear").score == pytest.approx(0.4 / 0.6)
    assert entry(frugal, "cheap").score == pytest.approx(0.5 / 0.6)
    assert names(frugal) == ["cheap", "dear"]
    assert "weighted mean of quality 0.7500 (weight 0.4) and cost signal 1.0000 (weight 0.2)" in entry(frugal, "cheap").reason


def test_economy_always_weighs_cost_and_an_unpriced_instance_has_no_cost_signal(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("unpriced", "m0")
        + replay_instance("pricey", "m1", cost_per_1k_tokens=0.08)
        + replay_instance("budget", "m2", cost_per_1k_tokens=0.01)
    )
    for name in ("unpriced", "pricey", "budget"):
        lab.measure(name, "tests.set_a", [True, True])
    ranking = ModelSelection(config, lab.repository(), "economy").rank()

    assert entry(ranking, "unpriced").cost_signal is None
    assert entry(ranking, "unpriced").score == 1.0  # quality alone: absent cost is no signal, not a zero
    assert entry(ranking, "budget").score == pytest.approx((0.1 * 1.0 + 0.6 * 0.9) / 0.7)
    assert entry(ranking, "pricey").score == pytest.approx((0.1 * 1.0 + 0.6 * 0.2) / 0.7)
    assert names(ranking) == ["unpriced", "budget", "pricey"]
    assert "no cost configured" in entry(ranking, "unpriced").reason


def test_prefer_lowest_cost_breaks_score_ties_cheapest_first_and_unpriced_last(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("unpriced", "m0")
        + replay_instance("dear", "m1", cost_per_1k_tokens=0.03)
        + replay_instance("cheap", "m2", cost_per_1k_tokens=0.01)
    )
    ranking = ModelSelection(config, lab.repository(), "quality").rank(SelectionCriteria(prefer_lowest_cost=True))

    assert {e.score for e in ranking.entries} == {0.5}
    assert names(ranking) == ["cheap", "dear", "unpriced"]
    assert "unpriced instance comes last" in entry(ranking, "unpriced").reason


def test_quality_is_the_latest_run_per_set_averaged(lab: Lab) -> None:
    config = lab.configure(replay_instance("solo", "m1"))
    lab.measure("solo", "tests.set_a", [True, True])
    latest_a = lab.measure("solo", "tests.set_a", [False, False])
    set_b = lab.measure("solo", "tests.set_b", [True, False])
    repository = lab.repository()

    ranking = ModelSelection(config, repository, "quality").rank()
    solo = entry(ranking, "solo")
    assert solo.quality.value == 0.25
    assert set(solo.run_ids) == {latest_a.id, set_b.id}
    assert {(r.set_identifier, r.mean_score) for r in solo.quality.runs} == {("tests.set_a", 0.0), ("tests.set_b", 0.5)}
    assert repository.mean_quality_for_provider_model("solo", "m1") == 0.25
    assert repository.mean_quality_for_model("m1") == 0.25


def test_only_deterministic_verified_complete_runs_feed_routing(lab: Lab) -> None:
    config = lab.configure(replay_instance("one", "m1") + replay_instance("two", "m2"))
    measured = lab.measure("one", "tests.set_a", [False, True])
    repository = lab.repository()
    store_run(repository, "tests.set_a", "one", "m1", [1.0, 1.0], grader="decision")
    store_run(repository, "tests.set_b", "one", "m1", [1.0], status=RunStatus.INCOMPLETE)
    store_run(repository, "tests.set_c", "one", "m1", [1.0], verified=False)
    store_run(repository, "tests.set_a", "two", "m2", [1.0], grader="decision")

    ranking = ModelSelection(config, repository, "quality").rank()
    assert entry(ranking, "one").quality.value == 0.5
    assert entry(ranking, "one").run_ids == (measured.id,)
    assert entry(ranking, "two").quality.value is None
    assert entry(ranking, "two").score == 0.5
    assert repository.mean_quality_for_provider_model("one", "m1", "decision") == 1.0


# -- where quality comes from ---------------------------------------------------------------------


class BaseOnlyRepository:
    """Only the base ResultRepository members of a real repository."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self._inner = inner

    def begin_run(self, run):  # noqa: ANN001, ANN201
        return self._inner.begin_run(run)

    def record_cases(self, run_id, cases, privacy):  # noqa: ANN001, ANN201
        return self._inner.record_cases(run_id, cases, privacy)

    def finish_run(self, run_id, status, finished_at):  # noqa: ANN001, ANN201
        return self._inner.finish_run(run_id, status, finished_at)

    def get_run(self, run_id, with_cases=True):  # noqa: ANN001, ANN201
        return self._inner.get_run(run_id, with_cases)


class AliasOnlyRepository(BaseOnlyRepository):
    """Base members plus only the alias-wide quality read."""

    def mean_quality_for_model(self, model_alias, grader="deterministic"):  # noqa: ANN001, ANN201
        return self._inner.mean_quality_for_model(model_alias, grader)


def test_a_repository_without_quality_capabilities_gives_no_signal(lab: Lab) -> None:
    config = lab.configure(replay_instance("poor", "m1") + replay_instance("good", "m2"))
    lab.measure("poor", "tests.set_a", [False])
    lab.measure("good", "tests.set_a", [True])
    plain = BaseOnlyRepository(lab.repository())
    assert not isinstance(plain, GeneratorScopedResults) and not isinstance(plain, ProviderModelQualityScores)

    ranking = ModelSelection(config, plain, "quality").rank()
    assert names(ranking) == ["poor", "good"]
    assert {e.score for e in ranking.entries} == {0.5}
    assert "offers no quality reads" in ranking.entries[0].reason
    assert ModelSelection(config, None, "quality").rank().entries[0].quality.value is None


def test_the_alias_wide_read_is_used_without_the_scoped_capability_and_is_ambiguous_across_instances(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("x", "shared") + replay_instance("y", "shared") + replay_instance("z", "own")
    )
    lab.measure("x", "tests.set_a", [False])
    lab.measure("y", "tests.set_a", [True])
    lab.measure("z", "tests.set_a", [True, False])
    alias_only = AliasOnlyRepository(lab.repository())
    assert isinstance(alias_only, ProviderModelQualityScores) and not isinstance(alias_only, GeneratorScopedResults)

    ranking = ModelSelection(config, alias_only, "quality").rank()
    assert entry(ranking, "x").quality.value is None
    assert entry(ranking, "y").quality.value is None
    assert entry(ranking, "z").quality.value == 0.5 and entry(ranking, "z").quality.source == "model"
    assert "several instances" in entry(ranking, "x").reason


# -- candidates -----------------------------------------------------------------------------------


def test_candidates_are_the_configured_instances_filtered_by_capability(lab: Lab) -> None:
    config = lab.configure(
        replay_instance("chat-only", "m1")
        + replay_instance("embedder", "m2", capabilities=["embeddings"])
        + replay_instance("both", "m3", capabilities=["chat", "embeddings"])
    )
    selection = ModelSelection(config, lab.repository(), "quality")

    assert names(selection.rank()) == ["chat-only", "embedder", "both"]
    chat = selection.rank(SelectionCriteria(["chat"]))
    assert names(chat) == ["chat-only", "both"]
    excluded = entry(chat, "embedder")
    assert excluded.excluded and excluded.score is None and excluded.rank is None
    assert "does not offer chat" in excluded.reason
    assert names(selection.rank(SelectionCriteria(["chat", "embeddings"]))) == ["both"]
    nothing = selection.rank(SelectionCriteria(["vision"]))
    assert nothing.entries == () and nothing.selected is None


def test_candidates_carry_no_adapter_options() -> None:
    instance = ProviderInstance("prod", "openai", {"model": "gpt", "api_key": "sk-secret"}, 2, 0.01, ("chat",))
    candidate = Candidate.from_instance(instance, 0)
    assert candidate == Candidate("prod", "openai", "gpt", 2, 0.01, ("chat",), 0)
    assert "sk-secret" not in str(candidate.as_dict())


def test_duplicate_candidate_names_are_refused() -> None:
    instance = ProviderInstance("same", "replay", {"model": "m"})
    with pytest.raises(UsageError, match="same"):
        ModelSelection([instance, instance])


# -- select_by_quality ----------------------------------------------------------------------------


def quality_lab(lab: Lab):  # noqa: ANN201
    """Five instances: priority plays no part here; qualities 0.5, none, 1.0, 0.5, none, 0.0."""
    config = lab.configure(
        replay_instance("half-1", "m1", priority=9)
        + replay_instance("unmeasured-1", "m2", priority=8)
        + replay_instance("full", "m3")
        + replay_instance("half-2", "m4")
        + replay_instance("unmeasured-2", "m5")
        + replay_instance("zero", "m6")
    )
    lab.measure("half-1", "tests.set_a", [True, False])
    lab.measure("full", "tests.set_a", [True])
    lab.measure("half-2", "tests.set_b", [False, True])
    lab.measure("zero", "tests.set_a", [False])
    return ModelSelection(config, lab.repository(), "provider_priority")


def test_select_by_quality_puts_measured_first_and_keeps_the_order_of_ties_and_unmeasured(lab: Lab) -> None:
    ranking = quality_lab(lab).select_by_quality(SelectionCriteria(["chat"]))

    assert names(ranking) == ["full", "half-1", "half-2", "zero", "unmeasured-1", "unmeasured-2"]
    assert [e.quality.value for e in ranking.entries] == [1.0, 0.5, 0.5, 0.0, None, None]
    assert ranking.selected.name == "full"
    assert ranking.excluded == ()
    assert "tied with half-1" in entry(ranking, "half-2").reason
    assert "behind the measured candidates" in entry(ranking, "unmeasured-1").reason
    assert "below half-2: quality 0.0000 (a measured zero)" in entry(ranking, "zero").reason


def test_select_by_quality_min_quality_is_inclusive_and_excludes_the_unmeasured(lab: Lab) -> None:
    ranking = quality_lab(lab).select_by_quality(None, 0.5)

    assert names(ranking) == ["full", "half-1", "half-2"]
    assert {e.candidate.name for e in ranking.excluded} == {"zero", "unmeasured-1", "unmeasured-2"}
    assert "below the minimum 0.5" in entry(ranking, "zero").reason
    assert "needs a measurement" in entry(ranking, "unmeasured-1").reason
    assert ranking.min_quality == 0.5

    only_full = quality_lab(lab).select_by_quality(None, "1.0")
    assert names(only_full) == ["full"]
    scientific = quality_lab(lab).select_by_quality(None, "1e0")
    assert names(scientific) == ["full"]


def test_select_by_quality_with_a_minimum_of_zero_filters_nothing(lab: Lab) -> None:
    selection = quality_lab(lab)
    assert names(selection.select_by_quality(None, 0)) == names(selection.select_by_quality(None))
    assert len(selection.select_by_quality(None, "-0.0").entries) == 6


def test_select_by_quality_returns_nothing_when_no_candidate_qualifies(lab: Lab) -> None:
    config = lab.configure(replay_instance("weak", "m1"))
    lab.measure("weak", "tests.set_a", [True, False, False, False])
    ranking = ModelSelection(config, lab.repository()).select_by_quality(None, 0.3)
    assert ranking.entries == () and ranking.selected is None
    assert entry(ranking, "weak").quality.value == 0.25


@pytest.mark.parametrize("bad", ["nan", "NAN", "inf", "1.01", "-0.1", "abc", "", "0x1", "1_0", "1e309", True, float("nan")])
def test_select_by_quality_refuses_a_minimum_that_is_not_a_finite_number_in_0_1(bad: object) -> None:
    with pytest.raises(ToleranceError, match="min-quality"):
        ModelSelection([]).select_by_quality(None, bad)


# -- policies and small pieces --------------------------------------------------------------------


def test_policy_weights_are_those_of_the_reference() -> None:
    assert {name: (p.quality, p.health, p.cost, p.cost_always) for name, p in POLICIES.items()} == {
        "provider_priority": (0, 0, 0, False),
        "balanced": (0.4, 0.4, 0.2, False),
        "quality": (0.7, 0.3, 0.0, False),
        "economy": (0.1, 0.3, 0.6, True),
    }


def test_policy_names_are_trimmed_and_unknown_ones_refused() -> None:
    assert parse_policy("  quality ") == "quality"
    assert ModelSelection([], policy=" economy").policy == "economy"
    with pytest.raises(UsageError, match="providerPriority"):
        parse_policy("providerPriority")
    with pytest.raises(UsageError, match='"--policy"'):
        parse_policy("fast", "policy")


def test_cost_signal_normalisation() -> None:
    assert cost_signal(None) is None
    assert cost_signal(0.0) == 1.0
    assert cost_signal(COST_CEILING_PER_1K / 2) == 0.5
    assert cost_signal(COST_CEILING_PER_1K) == 0.0
    assert cost_signal(7.0) == 0.0
