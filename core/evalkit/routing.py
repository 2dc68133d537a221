"""Quality-aware model selection: which configured provider instance an application should call.

Candidates are the configured provider instances (``[providers.NAME]``), filtered by the
capabilities the caller needs. :meth:`ModelSelection.rank` orders them under a policy mode:

==================== ======= ====== ==== ==========================================
policy               quality health cost cost used when
==================== ======= ====== ==== ==========================================
``provider_priority`` 0      0      0    never (the default; no measurement is used)
``balanced``         0.4     0.4    0.2  only when the criteria prefer the lowest cost
``quality``          0.7     0.3    0    (weight 0)
``economy``          0.1     0.3    0.6  always
==================== ======= ====== ==== ==========================================

A candidate's score is the weighted mean over the signals that have data and a positive weight;
with no such signal it is 0.5 (neutral). Unknown quality is never a zero, a measured 0.0 is.
evalkit has no health signal, so health never has data and only shifts nothing. Ordering is
provider priority first (an operator's instruction outranks every measurement), then score, then —
when the criteria prefer the lowest cost — cost per 1k tokens (unpriced last), then configuration
order.

Quality is the mean of the latest verified, complete, deterministic-grader run per golden set,
scoped to the instance and the alias it sends, read through the repository's optional capabilities
(:class:`~evalkit.storage.GeneratorScopedResults`, else the alias-wide
:class:`~evalkit.storage.ProviderModelQualityScores`, which gives nothing for an alias measured
through several instances). A repository with neither gives no quality signal.

:meth:`ModelSelection.select_by_quality` ignores the policy: it re-ranks the candidates, in
configuration order, by measured quality alone, measured before unmeasured, and can demand a
minimum quality.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .components import answered_by
from .config import Config, ProviderInstance
from .errors import UsageError
from .runs import Run
from .shapes import short_repr
from .storage.protocols import capabilities
from .tolerance import parse_tolerance
from .wording import counted, did_you_mean, quoted

__all__ = [
    "COST_CEILING_PER_1K",
    "DEFAULT_POLICY",
    "NEUTRAL_SCORE",
    "POLICIES",
    "ROUTING_GRADER",
    "Candidate",
    "MeasuredRun",
    "ModelSelection",
    "PolicyWeights",
    "QualityReading",
    "RankedCandidate",
    "Ranking",
    "SelectionCriteria",
    "cost_signal",
    "parse_min_quality",
    "parse_policy",
]

#: Only deterministic-grader results feed routing; judge-graded runs never do.
ROUTING_GRADER = "deterministic"
#: The score of a candidate without any usable signal.
NEUTRAL_SCORE = 0.5
#: The price per 1k tokens (input + output, in the currency of the configuration) at and above
#: which the cost signal is 0: ``cost signal = 1 - min(1, cost_per_1k_tokens / 0.1)``.
COST_CEILING_PER_1K = 0.1
#: Float noise allowed when a measured quality is compared with ``min_quality`` (equal stays).
_QUALITY_EPSILON = 1e-9


@attrs.frozen
class PolicyWeights:
    """How much each signal weighs under a policy mode, and when cost counts at all.

    ``cost_always`` false means cost counts only when the criteria set ``prefer_lowest_cost``.
    """

    name: str
    quality: float
    health: float
    cost: float
    cost_always: bool
    summary: str

    def uses_cost(self, criteria: SelectionCriteria) -> bool:
        """True when the cost signal takes part in the score for these criteria."""
        return self.cost > 0 and (self.cost_always or criteria.prefer_lowest_cost)

    def as_dict(self) -> dict[str, float]:
        """The three weights."""
        return {"quality": self.quality, "health": self.health, "cost": self.cost}


#: The policy modes of the reference study, keyed by name.
POLICIES: Mapping[str, PolicyWeights] = {
    p.name: p
    for p in (
        PolicyWeights(
            "provider_priority",
            0.0,
            0.0,
            0.0,
            False,
            "provider priority, then configuration order; no measurement is used",
        ),
        PolicyWeights(
            "balanced",
            0.4,
            0.4,
            0.2,
            False,
            "provider priority, then quality 0.4 · health 0.4 · cost 0.2 (cost only with prefer-lowest-cost)",
        ),
        PolicyWeights("quality", 0.7, 0.3, 0.0, False, "provider priority, then quality 0.7 · health 0.3"),
        PolicyWeights("economy", 0.1, 0.3, 0.6, True, "provider priority, then quality 0.1 · health 0.3 · cost 0.6"),
    )
}
DEFAULT_POLICY = "provider_priority"


def parse_policy(value: object, option: str | None = None) -> str:
    """The policy mode named by ``value`` (surrounding whitespace ignored), or :class:`UsageError`
    (naming the command-line ``option`` when given)."""
    name = value.strip() if isinstance(value, str) else value
    if not isinstance(name, str) or name not in POLICIES:
        where = f'Option "--{option}": unknown' if option else "Unknown"
        hint = did_you_mean(name, POLICIES) if isinstance(name, str) else ""
        raise UsageError(
            f"{where} routing policy {value!r}; choose one of {', '.join(POLICIES)}" + (f".{hint}" if hint else "")
        )
    return name


def parse_min_quality(raw: object, option: str = "min-quality") -> float | None:
    """A minimum quality: ``None`` stays ``None``; otherwise a finite number in 0..1, parsed with the
    exact tolerance grammar (no ``nan``, ``inf``, hex or underscores), else
    :class:`~evalkit.errors.ToleranceError` naming ``option``."""
    if raw is None:
        return None
    return float(parse_tolerance(raw, option))


def cost_signal(cost_per_1k_tokens: float | None) -> float | None:
    """``1 - min(1, cost / COST_CEILING_PER_1K)``; ``None`` (no signal) for an unpriced instance.

    A configured price of 0 is a real price (a free, e.g. local, model) and scores 1.
    """
    if cost_per_1k_tokens is None:
        return None
    return 1.0 - min(1.0, cost_per_1k_tokens / COST_CEILING_PER_1K)


def _capabilities(value: Iterable[str] | str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(dict.fromkeys(value))


@attrs.frozen
class SelectionCriteria:
    """Hard constraints and preferences of a selection.

    ``capabilities``: every one must be offered by a candidate (eligibility, decided before any
    ranking). ``prefer_lowest_cost``: cost joins the ``balanced`` score and breaks ties.
    """

    capabilities: tuple[str, ...] = attrs.field(default=(), converter=_capabilities)
    prefer_lowest_cost: bool = False

    def missing(self, candidate: Candidate) -> tuple[str, ...]:
        """The required capabilities ``candidate`` does not offer."""
        return tuple(c for c in self.capabilities if c not in candidate.capabilities)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"capabilities": list(self.capabilities), "prefer_lowest_cost": self.prefer_lowest_cost}


@attrs.frozen
class Candidate:
    """A configured provider instance as routing sees it (no adapter options, so no secrets).

    ``position`` is its place in the configuration, the order of last resort.
    """

    name: str
    adapter: str
    model: str | None
    priority: int = 0
    cost_per_1k_tokens: float | None = None
    capabilities: tuple[str, ...] = ("chat",)
    position: int = 0

    @classmethod
    def from_instance(cls, instance: ProviderInstance, position: int) -> Candidate:
        """The candidate for a configured instance."""
        return cls(
            instance.name,
            instance.adapter,
            instance.model,
            instance.priority,
            instance.cost_per_1k_tokens,
            tuple(instance.capabilities),
            position,
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "instance": self.name,
            "adapter": self.adapter,
            "model": self.model,
            "priority": self.priority,
            "cost_per_1k_tokens": self.cost_per_1k_tokens,
            "capabilities": list(self.capabilities),
        }


def _candidates(value: Any) -> tuple[Candidate, ...]:
    if isinstance(value, Config):
        value = value.providers
    if isinstance(value, Mapping):
        value = value.values()
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise UsageError(
            "ModelSelection: candidates must be an evalkit.config.Config (load_config()) or a list of its "
            f"ProviderInstance or Candidate, got {type(value).__name__} {short_repr(value)}"
        )
    out: list[Candidate] = []
    for position, item in enumerate(value):
        if isinstance(item, Candidate):
            out.append(attrs.evolve(item, position=position))
        elif isinstance(item, ProviderInstance):
            out.append(Candidate.from_instance(item, position))
        else:
            raise UsageError(
                f"ModelSelection: a routing candidate must be a ProviderInstance or Candidate, got {type(item).__name__} {short_repr(item)}"
            )
    names = [c.name for c in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(f"routing candidates must have distinct names; repeated: {', '.join(duplicates)}")
    return tuple(out)


@attrs.frozen
class MeasuredRun:
    """One stored run a quality score was averaged from."""

    run_id: str
    set_identifier: str
    mean_score: float
    finished_at: float | None

    @classmethod
    def from_run(cls, run: Run) -> MeasuredRun:
        """The facts of a stored run that explain a score."""
        return cls(run.id, run.set_identifier, run.mean_score, run.finished_at)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "run_id": self.run_id,
            "set": self.set_identifier,
            "mean_score": self.mean_score,
            "finished_at": self.finished_at,
        }


@attrs.frozen
class QualityReading:
    """What the repository says about a candidate's quality.

    ``value`` is ``None`` when unknown. ``source`` is ``provider_model`` (scoped to instance and
    alias), ``model`` (the alias-wide read) or ``none`` (no read possible); ``note`` says why
    there is no value.
    """

    value: float | None
    source: str
    runs: tuple[MeasuredRun, ...] = ()
    note: str | None = None

    def describe(self) -> str:
        """A short human description."""
        if self.value is None:
            return self.note or "no quality measured"
        text = f"quality {self.value:.4f}"
        if self.value == 0.0:
            text += " (a measured zero)"
        if self.runs:
            text += f" from {counted(len(self.runs), 'run')}"
        if self.source == "model":
            text += " (alias-wide read: the repository has no instance-scoped read)"
        return text


_NOT_READ = QualityReading(None, "none", (), "quality not read")


@attrs.frozen
class RankedCandidate:
    """A candidate's place in a ranking and why it is there.

    ``rank`` (1-based) and ``score`` are ``None`` for an excluded candidate; ``quality`` is
    ``None`` when unknown or not read; ``runs`` are the stored runs the quality came from.
    """

    candidate: Candidate
    rank: int | None
    score: float | None
    quality: QualityReading
    cost_signal: float | None
    reason: str

    @property
    def excluded(self) -> bool:
        """True when the candidate is not in the ranking."""
        return self.rank is None

    @property
    def run_ids(self) -> tuple[str, ...]:
        """Ids of the runs the quality came from."""
        return tuple(r.run_id for r in self.quality.runs)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "rank": self.rank,
            **self.candidate.as_dict(),
            "quality": self.quality.value,
            "quality_source": self.quality.source,
            "run_ids": list(self.run_ids),
            "runs": [r.as_dict() for r in self.quality.runs],
            "score": self.score,
            "cost_signal": self.cost_signal,
            "reason": self.reason,
        }


@attrs.frozen
class Ranking:
    """An ordered list of candidates, the ones left out, and how the order was made.

    ``method`` is ``policy`` (:meth:`ModelSelection.rank`) or ``select_by_quality``.
    """

    method: str
    policy: str | None
    criteria: SelectionCriteria
    entries: tuple[RankedCandidate, ...]
    excluded: tuple[RankedCandidate, ...] = ()
    min_quality: float | None = None

    @property
    def selected(self) -> Candidate | None:
        """The first candidate, or ``None`` when nothing qualifies."""
        return self.entries[0].candidate if self.entries else None

    def describe(self) -> str:
        """One line saying how the order was made."""
        if self.method == "select_by_quality":
            text = "measured quality alone (latest run per set, averaged), measured before unmeasured, then configuration order"
            if self.min_quality is not None and self.min_quality > 0:
                text += f"; minimum quality {self.min_quality:g} (equal stays, unmeasured excluded)"
            elif self.min_quality is not None:
                text += "; a minimum quality of 0 filters nothing"
            return text
        weights = POLICIES[self.policy or DEFAULT_POLICY]
        text = weights.summary
        if weights.name != DEFAULT_POLICY:
            text += "; evalkit has no health signal, and a candidate without any signal scores 0.5"
        return text

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        weights = POLICIES[self.policy] if self.policy else None
        return {
            "method": self.method,
            "policy": self.policy,
            "weights": weights.as_dict() if weights else None,
            "cost_used": weights.uses_cost(self.criteria) if weights else False,
            "criteria": self.criteria.as_dict(),
            "min_quality": self.min_quality,
            "description": self.describe(),
            "selected": self.selected.name if self.selected else None,
            "candidates": [e.as_dict() for e in self.entries],
            "excluded": [e.as_dict() for e in self.excluded],
        }


def _weighted_mean(parts: list[tuple[float, float]]) -> float:
    """Weighted mean of ``(weight, value)`` pairs; a single signal is its own score, exactly."""
    if not parts:
        return NEUTRAL_SCORE
    if len(parts) == 1:
        return parts[0][1]
    return math.fsum(w * v for w, v in parts) / math.fsum(w for w, _ in parts)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _repository(value: Any) -> Any:
    """A results store, or ``None``; a URL or a path is refused: read as a store it has none of
    the quality reads, so every candidate was silently unmeasured."""
    import os

    if isinstance(value, (str, bytes, os.PathLike)):
        raise UsageError(
            "ModelSelection: repository must be an open results store "
            f"(evalkit.storage.open_repository(url)) or None, not a URL or path: got {type(value).__name__} {short_repr(value)}"
        )
    return value


def _criteria(value: Any) -> SelectionCriteria:
    """``value``, or the empty criteria for ``None``; anything else is refused by name."""
    if value is None:
        return SelectionCriteria()
    if not isinstance(value, SelectionCriteria):
        raise UsageError(
            'criteria must be an evalkit.routing.SelectionCriteria (SelectionCriteria(["chat"])) or None, '
            f"got {type(value).__name__} {short_repr(value)}"
        )
    return value


@attrs.frozen
class ModelSelection:
    """Ranks configured provider instances under a policy, from measured quality.

    ``candidates`` accepts a :class:`~evalkit.config.Config`, a mapping or iterable of
    :class:`~evalkit.config.ProviderInstance` (or :class:`Candidate`), kept in that order.
    ``repository`` is any results store; quality is read only through its optional capability
    protocols, so a store without them gives no quality signal. ``policy`` is one of
    :data:`POLICIES` (default ``provider_priority``).
    """

    candidates: tuple[Candidate, ...] = attrs.field(converter=_candidates)
    repository: Any = attrs.field(default=None, converter=_repository)
    policy: str = attrs.field(default=DEFAULT_POLICY, converter=parse_policy)

    @property
    def weights(self) -> PolicyWeights:
        """The weights of the configured policy."""
        return POLICIES[self.policy]

    def find_candidates(self, criteria: SelectionCriteria | None = None) -> tuple[Candidate, ...]:
        """The candidates that meet ``criteria``, in configuration order."""
        criteria = _criteria(criteria)
        return tuple(c for c in self.candidates if not criteria.missing(c))

    def quality_of(self, candidate: Candidate) -> QualityReading:
        """The measured quality of ``candidate`` (deterministic grader only), with the runs behind it."""
        if not candidate.model:
            return QualityReading(None, "none", (), "no quality: the instance configures no model alias")
        store = capabilities(self.repository)
        if store.scoped is not None:
            value = store.scoped.mean_quality_for_provider_model(candidate.name, candidate.model, ROUTING_GRADER)
            runs = tuple(
                MeasuredRun.from_run(r)
                for r in store.scoped.quality_runs_for_provider_model(candidate.name, candidate.model, ROUTING_GRADER)
            )
            note = (
                None
                if value is not None
                else (
                    f"no quality measured: no verified complete {ROUTING_GRADER} run of "
                    f"{answered_by(candidate.name, None, candidate.model)}"
                )
            )
            return QualityReading(None if value is None else float(value), "provider_model", runs, note)
        if store.alias_quality is not None:
            value = store.alias_quality.mean_quality_for_model(candidate.model, ROUTING_GRADER)
            note = (
                None
                if value is not None
                else (
                    f"no quality: the alias-wide read for {quoted(candidate.model)} gave none "
                    "(no data, or the alias was measured through several instances)"
                )
            )
            return QualityReading(None if value is None else float(value), "model", (), note)
        return QualityReading(None, "none", (), "no quality: the results repository offers no quality reads")

    def _excluded_by_capability(self, criteria: SelectionCriteria) -> list[RankedCandidate]:
        out = []
        for candidate in self.candidates:
            missing = criteria.missing(candidate)
            if missing:
                offers = ", ".join(candidate.capabilities) or "nothing"
                reason = f"not a candidate: does not offer {', '.join(missing)} (offers {offers})"
                out.append(RankedCandidate(candidate, None, None, _NOT_READ, None, reason))
        return out

    def rank(self, criteria: SelectionCriteria | None = None, *, explain: bool = False) -> Ranking:
        """Order the eligible candidates under the policy.

        Under ``provider_priority`` no measurement is read unless ``explain`` asks for it (to show
        it); either way every candidate then scores 0.5 and the order is priority, then
        configuration order.
        """
        criteria = _criteria(criteria)
        weights = self.weights
        uses_cost = weights.uses_cost(criteria)
        read_quality = weights.quality > 0 or explain
        scored = []
        for candidate in self.find_candidates(criteria):
            quality = self.quality_of(candidate) if read_quality else _NOT_READ
            cost = cost_signal(candidate.cost_per_1k_tokens)
            parts = []
            if weights.quality > 0 and quality.value is not None:
                parts.append((weights.quality, quality.value))
            if uses_cost and cost is not None:
                parts.append((weights.cost, cost))
            scored.append((candidate, _weighted_mean(parts), quality, cost))

        def key(item: tuple[Candidate, float, QualityReading, float | None]) -> tuple[Any, ...]:
            candidate, score, _, _ = item
            cost_key: tuple[Any, ...] = ()
            if criteria.prefer_lowest_cost:
                price = candidate.cost_per_1k_tokens
                cost_key = (price is None, price or 0.0)
            return (-candidate.priority, -score, *cost_key, candidate.position)

        scored.sort(key=key)
        entries = []
        for index, (candidate, score, quality, cost) in enumerate(scored):
            reason = "; ".join(
                (
                    self._position_reason(scored, index, criteria),
                    self._score_reason(score, quality, cost, uses_cost),
                )
            )
            entries.append(RankedCandidate(candidate, index + 1, score, quality, cost, reason))
        return Ranking("policy", self.policy, criteria, tuple(entries), tuple(self._excluded_by_capability(criteria)))

    def select(self, criteria: SelectionCriteria | None = None) -> Candidate | None:
        """The first candidate of :meth:`rank`, or ``None`` when none is eligible."""
        return self.rank(criteria).selected

    @staticmethod
    def _position_reason(scored: list[Any], index: int, criteria: SelectionCriteria) -> str:
        candidate, score = scored[index][0], scored[index][1]
        if len(scored) == 1:
            return "the only eligible candidate"
        if index == 0:
            other, other_score = scored[1][0], scored[1][1]
            prefix = "first"
        else:
            other, other_score = scored[index - 1][0], scored[index - 1][1]
            prefix = f"below {other.name}"
        if candidate.priority != other.priority:
            return (
                f"{prefix}: priority {candidate.priority} {'>' if index == 0 else '<'} {other.priority} "
                "(priority outranks every measurement)"
            )
        if score != other_score:
            return f"{prefix}: same priority {candidate.priority}, score {_fmt(score)} {'>' if index == 0 else '<'} {_fmt(other_score)}"
        if criteria.prefer_lowest_cost and candidate.cost_per_1k_tokens != other.cost_per_1k_tokens:
            mine, theirs = candidate.cost_per_1k_tokens, other.cost_per_1k_tokens
            cheaper = index == 0
            what = "cheaper" if cheaper else "dearer"
            if (mine if not cheaper else theirs) is None:
                what += " (an unpriced instance comes last)"
            return f"{prefix}: same priority and score, {what} per 1k tokens than {other.name}"
        if index == 0:
            return f"first: same priority and score as {other.name}, earlier in the configuration"
        return f"{prefix}: same priority and score, later in the configuration"

    def _score_reason(self, score: float, quality: QualityReading, cost: float | None, uses_cost: bool) -> str:
        weights = self.weights
        if weights.name == DEFAULT_POLICY:
            text = "score 0.5 for every candidate (provider_priority uses no measurement)"
            if quality is not _NOT_READ:
                text += f"; {quality.describe()}, shown only"
            return text
        used = []
        if weights.quality > 0 and quality.value is not None:
            used.append(f"quality {quality.value:.4f} (weight {weights.quality:g})")
        if uses_cost and cost is not None:
            used.append(f"cost signal {cost:.4f} (weight {weights.cost:g})")
        if len(used) > 1:
            text = f"score {_fmt(score)} = weighted mean of {' and '.join(used)}"
        elif used:
            text = f"score {_fmt(score)} = {used[0]}, the only signal with data"
        else:
            text = "score 0.5 (neutral: no signal with data)"
        notes = []
        if quality.value is None:
            notes.append(quality.describe())
        elif quality.value == 0.0:
            notes.append("a measured zero counts as zero")
        if quality.runs:
            notes.append(f"quality from {counted(len(quality.runs), 'run')}")
        if uses_cost and cost is None:
            notes.append("no cost configured (no cost signal)")
        notes.append("health: no signal in evalkit")
        return text + " — " + ", ".join(notes)

    def select_by_quality(self, criteria: SelectionCriteria | None = None, min_quality: object = None) -> Ranking:
        """Re-rank the eligible candidates by measured quality alone (the policy plays no part).

        Start from the candidates in configuration order; measured ones come first, higher quality
        first, exact ties keeping their order; unmeasured ones follow in configuration order. With
        ``min_quality`` above 0, candidates below it or unmeasured are excluded (a quality equal to
        the minimum stays). ``Ranking.selected`` is the choice, ``None`` when nothing qualifies.
        """
        criteria = _criteria(criteria)
        minimum = parse_min_quality(min_quality)
        filtering = minimum is not None and minimum > 0
        readings = [(c, self.quality_of(c)) for c in self.find_candidates(criteria)]
        kept, dropped = [], []
        for candidate, quality in readings:
            if filtering and quality.value is None:
                reason = f"excluded: {quality.describe()}, and a minimum quality of {minimum:g} needs a measurement"
                dropped.append(RankedCandidate(candidate, None, None, quality, None, reason))
            elif filtering and quality.value < minimum - _QUALITY_EPSILON:  # type: ignore[operator]
                reason = f"excluded: quality {quality.value:.4f} is below the minimum {minimum:g}"
                dropped.append(RankedCandidate(candidate, None, None, quality, None, reason))
            else:
                kept.append((candidate, quality))
        measured = sorted((item for item in kept if item[1].value is not None), key=lambda item: -item[1].value)
        unmeasured = [item for item in kept if item[1].value is None]
        ordered = measured + unmeasured
        entries = []
        for index, (candidate, quality) in enumerate(ordered):
            reason = self._quality_reason(ordered, index, bool(measured), minimum if filtering else None)
            entries.append(RankedCandidate(candidate, index + 1, quality.value, quality, None, reason))
        excluded = tuple(self._excluded_by_capability(criteria)) + tuple(dropped)
        return Ranking("select_by_quality", None, criteria, tuple(entries), excluded, minimum)

    @staticmethod
    def _quality_reason(ordered: list[Any], index: int, any_measured: bool, minimum: float | None) -> str:
        candidate, quality = ordered[index]
        value = quality.value
        if value is None:
            text = f"{quality.describe()}: kept in configuration order"
            if any_measured:
                text += " behind the measured candidates"
            return text
        previous = ordered[index - 1] if index else None
        runs = f" from {counted(len(quality.runs), 'run')}" if quality.runs else ""
        zero = " (a measured zero)" if value == 0.0 else ""
        if previous is None:
            text = f"highest measured quality {value:.4f}{zero}{runs}"
            if len(ordered) > 1 and ordered[1][1].value == value:
                text += f", tied with {ordered[1][0].name} and earlier in the configuration"
        elif previous[1].value == value:
            text = f"tied with {previous[0].name} at quality {value:.4f}{zero}{runs}, later in the configuration"
        else:
            text = f"below {previous[0].name}: quality {value:.4f}{zero}{runs} < {previous[1].value:.4f}"
        if minimum is not None:
            text += f"; meets the minimum {minimum:g}"
        return text
