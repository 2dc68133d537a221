"""Pairwise comparison of two stored runs by a judge: which run's answer to each case is better.

:func:`compare_pairwise` takes two stored runs of one prompt set (BASE and RUN, as ``evalkit
compare`` names them), pairs their *unchanged* cases as :func:`evalkit.verdict.compare` does (the
same case id in both runs, the same case fingerprint — a case stored without one counts as
unchanged), keeps those whose answers both runs stored, and asks the judge about each twice: BASE's
answer shown first (as ``A``), then RUN's answer shown first. A judge asked about the same pair
in both orders undoes its own position bias; a judge whose preference follows the position says so
by flipping.

Per case, from RUN's side:

* **win** — RUN's answer preferred in both orders; **loss** — BASE's preferred in both orders;
* **tie** — anything else: ``TIE`` in both orders, a preference that flips with the order, a
  preference in one order and ``TIE`` in the other, or a reply the judge could not give in the
  fixed format (``A``, ``B`` or ``TIE``) twice — an *unparseable* judgement, counted as a tie and
  reported apart.

Figures (:func:`tally`): the win rate is ``wins / (wins + losses)`` — ties are reported beside it,
never counted in it — with the Wilson score interval at 95 % (:func:`evalkit.stats.wilson_interval`),
undefined when every case is a tie; the judge's position bias is the share of its decisive
judgements (``A`` or ``B``, over both orders of every case) that preferred the answer shown first:
0.5 for a judge the order does not sway, 1.0 for one that always prefers the first answer.

Answers are judged only when both runs stored them in full (``privacy = "full"``): at
``redacted`` they are scrubbed and cut, so a judge would compare the redactions; at ``metadata``
there are none. The judge is a configured provider instance used through the judge machinery of
the built-in plugins (the ``deterministic`` grader's ``pairwise_judge``). A judge whose endpoint
cannot be reached is refused before anything is asked (:class:`~evalkit.errors.GraderUnavailableError`,
exit 2, as a run's judge is); a failed call ends the comparison
(:class:`~evalkit.errors.PairwiseJudgingFailed`, exit 3), and nothing is reported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from .components import BoundGenerator, aclosed, grader_plugin, load_grader, offers, plugin_awaited, plugin_method
from .config import Config
from .errors import PairwiseJudgingFailed, UsageError
from .event_loops import run_to_completion
from .judge_replies import FailedRequest, judge_instance_of, judge_reply, prompt_version_of
from .judge_replies import asked as judge_asked
from .runs import CaseResult, Run, RunKind
from .shapes import exception_text
from .stats.intervals import Interval, wilson_interval
from .wording import argument, quoted

__all__ = [
    "LOSS",
    "TIE",
    "WIN",
    "LeftOutCase",
    "PairJudgement",
    "PairwiseComparison",
    "PairwiseJudging",
    "PairwiseSettings",
    "PairwiseTally",
    "case_outcome",
    "compare_pairwise",
    "left_out_counts",
    "pairwise_judge",
    "pairwise_refusal",
    "tally",
]

WIN, TIE, LOSS = "win", "tie", "loss"

#: The verdicts a pairwise judge gives: the answer shown first, the second, neither.
FIRST, SECOND, NEITHER = "A", "B", "TIE"

#: What a pairwise judge's reply may give as its verdict: ``None`` when its reply was unusable twice.
_VERDICTS = (FIRST, SECOND, NEITHER, None)

#: The privacy level at which a run keeps its answers whole.
FULL = "full"

#: The judge has no model under test to refuse as its own subject.
_NOBODY_UNDER_TEST = BoundGenerator(generator=None, adapter="", instance=None, alias=None, configured=False)


@runtime_checkable
class PairwiseJudging(Protocol):
    """A grader that hands out a pairwise judge (the built-in ``deterministic`` grader does)."""

    def pairwise_judge(self) -> Any:
        """An unbound judge with ``bind_judge``, ``check_ready``, ``task``, ``aprefer``,
        ``judge_instance``, ``prompt`` and ``aclose`` (see :mod:`evalkit_plugins.pairwise`)."""
        ...


@attrs.frozen
class PairwiseSettings:
    """Which judge compares and how: the configured provider instance (``None``: the
    configuration's ``judge``) and its sampling temperature."""

    judge: str | None = None
    temperature: float = 0.0


@attrs.frozen
class PairJudgement:
    """The judge's two verdicts on one case: ``base_first`` with BASE's answer shown first,
    ``run_first`` with RUN's answer shown first; each ``A`` (the first shown), ``B`` or ``TIE``,
    or ``None`` when the judge's reply was unusable twice."""

    case_id: str
    base_first: str | None
    run_first: str | None

    @property
    def outcome(self) -> str:
        """``win``, ``tie`` or ``loss`` for RUN (see :func:`case_outcome`)."""
        return case_outcome(self.base_first, self.run_first)

    @property
    def unparseable(self) -> bool:
        """True when either verdict could not be read."""
        return self.base_first is None or self.run_first is None

    @property
    def flipped(self) -> bool:
        """True when the judge preferred the first-shown answer in both orders, or the second in
        both: its preference followed the position, not the answer."""
        decisive = (FIRST, SECOND)
        return self.base_first in decisive and self.base_first == self.run_first


@attrs.frozen
class LeftOutCase:
    """A case of the two runs that was not judged, and why (``edited``, ``only in BASE``,
    ``only in RUN``, ``no stored answer``, ``text not installed``)."""

    case_id: str
    reason: str


@attrs.frozen
class PairwiseTally:
    """The figures of a pairwise comparison (see the module docstring).

    ``win_rate`` is ``wins / (wins + losses)`` with its Wilson 95 % interval (both ``None`` when
    no case was decided); ``position_bias`` the share of ``decisive_judgements`` that preferred the
    first-shown answer (``None`` when there were none); ``flipped`` the ties whose preference
    followed the order; ``unparseable`` the judgements the judge could not give in the fixed format.
    """

    cases: int
    wins: int
    ties: int
    losses: int
    flipped: int
    unparseable: int
    decisive_judgements: int
    first_preferred: int
    win_rate: float | None
    win_rate_ci95: Interval | None
    position_bias: float | None


def case_outcome(base_first: str | None, run_first: str | None) -> str:
    """RUN's outcome on one case from the judge's verdicts in both orders: ``win`` when RUN's
    answer was preferred in both, ``loss`` when BASE's was, ``tie`` otherwise."""
    # With BASE shown first RUN's answer is B; with RUN shown first it is A.
    first = {SECOND: "run", FIRST: "base"}.get(base_first or "")
    second = {FIRST: "run", SECOND: "base"}.get(run_first or "")
    if first == second == "run":
        return WIN
    if first == second == "base":
        return LOSS
    return TIE


def tally(judgements: Iterable[PairJudgement], confidence: float = 0.95) -> PairwiseTally:
    """Count wins, ties and losses and measure the judge's position bias (see :class:`PairwiseTally`)."""
    listed = list(judgements)
    outcomes = [j.outcome for j in listed]
    wins, ties, losses = outcomes.count(WIN), outcomes.count(TIE), outcomes.count(LOSS)
    verdicts = [v for j in listed for v in (j.base_first, j.run_first)]
    decisive = [v for v in verdicts if v in (FIRST, SECOND)]
    first_preferred = decisive.count(FIRST)
    decided = wins + losses
    return PairwiseTally(
        cases=len(listed), wins=wins, ties=ties, losses=losses,
        flipped=sum(1 for j in listed if j.flipped), unparseable=sum(1 for v in verdicts if v is None),
        decisive_judgements=len(decisive), first_preferred=first_preferred,
        win_rate=wins / decided if decided else None,
        win_rate_ci95=wilson_interval(wins, decided, confidence) if decided else None,
        position_bias=first_preferred / len(decisive) if decisive else None,
    )  # fmt: skip


@attrs.frozen
class PairwiseComparison:
    """Two stored runs compared case by case by a judge: who judged (instance, the model(s) the
    endpoint reported, prompt version), each judged case's two verdicts, the figures, and the
    cases left out with the reason."""

    set_identifier: str
    base_id: str
    run_id: str
    judge_instance: str
    judge_models: tuple[str, ...]
    prompt_version: int
    temperature: float
    judgements: tuple[PairJudgement, ...]
    tally: PairwiseTally
    left_out: tuple[LeftOutCase, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` document."""
        figures = self.tally
        interval = figures.win_rate_ci95
        return {
            "set": self.set_identifier,
            "base": self.base_id,
            "run": self.run_id,
            "judge": {
                "instance": self.judge_instance, "models": list(self.judge_models),
                "prompt_version": self.prompt_version, "temperature": self.temperature,
            },
            "cases": figures.cases,
            "wins": figures.wins,
            "ties": figures.ties,
            "losses": figures.losses,
            "flipped": figures.flipped,
            "unparseable": figures.unparseable,
            "win_rate": figures.win_rate,
            "win_rate_ci95": interval.as_list() if interval is not None else None,
            "win_rate_interval": "wilson",
            "ties_in_win_rate": False,
            "position_bias": figures.position_bias,
            "decisive_judgements": figures.decisive_judgements,
            "per_case": [
                {"case_id": j.case_id, "outcome": j.outcome, "base_first": j.base_first, "run_first": j.run_first}
                for j in self.judgements
            ],
            "left_out": [{"case_id": c.case_id, "reason": c.reason} for c in self.left_out],
        }  # fmt: skip


def pairwise_refusal(base: Run, run: Run) -> str | None:
    """Why the answers of ``base`` and ``run`` cannot be judged side by side, or ``None``."""
    if base.set_identifier != run.set_identifier:
        return (
            f'runs {base.id} and {run.id} are of different sets ({quoted(base.set_identifier)} and {quoted(run.set_identifier)}); '
            "compare two runs of one set"
        )
    for which, stored in (("BASE", base), ("RUN", run)):
        if stored.kind is RunKind.RETRIEVAL:
            return f"{which} {stored.id} is a retrieval run: a pairwise judge compares the answers of prompt runs"
        if stored.privacy != FULL:
            kept = "scrubbed and cut" if stored.privacy == "redacted" else "not kept"
            full = argument("privacy", '"full"', option="--privacy full")
            return (
                f'{which} {stored.id} stored its answers at privacy level {quoted(stored.privacy)} ({kept}); a pairwise '
                f'judge needs both runs\' answers whole: run them with {full} (or privacy = "full" in evalkit.toml)'
            )
    return None


def _paired(base: Run, run: Run) -> tuple[list[tuple[CaseResult, CaseResult]], list[LeftOutCase]]:
    """The unchanged cases with an answer in both runs (in RUN's order), and the cases left out."""
    before = {case.case_id: case for case in base.cases}
    after = {case.case_id: case for case in run.cases}
    pairs: list[tuple[CaseResult, CaseResult]] = []
    left_out: list[LeftOutCase] = []
    for case_id, now in after.items():
        then = before.get(case_id)
        if then is None:
            left_out.append(LeftOutCase(case_id, "only in RUN"))
        elif then.fingerprint is not None and now.fingerprint is not None and then.fingerprint != now.fingerprint:
            left_out.append(LeftOutCase(case_id, "edited between the runs"))
        elif then.answer_text is None or now.answer_text is None:
            left_out.append(LeftOutCase(case_id, "no stored answer"))
        else:
            pairs.append((then, now))
    left_out.extend(LeftOutCase(case_id, "only in BASE") for case_id in before if case_id not in after)
    return pairs, left_out


def pairwise_judge(settings: PairwiseSettings, config: Config) -> Any:
    """The bound pairwise judge; a :class:`UsageError` when none is configured or the named
    instance is not."""
    if settings.judge is None and not config.judge:  # the judge grader's own refusal names its grader options
        named = argument("settings", "PairwiseSettings(judge=NAME)", option="--pairwise-judge NAME")
        raise UsageError(f'a pairwise comparison asks a judge model: name a configured provider instance with {named}, or set judge = "NAME" in evalkit.toml')
    options: dict[str, Any] = {"temperature": settings.temperature}
    if settings.judge is not None:
        options["judge"] = settings.judge
    grader, _ = load_grader("deterministic", **options)
    if not offers(grader, PairwiseJudging):
        raise UsageError('the installed "deterministic" grader has no pairwise judge')
    judge = plugin_method(_pairwise_grader, grader, "pairwise_judge")
    plugin_method(_pairwise_grader, judge, "bind_judge", config, _NOBODY_UNDER_TEST)
    return judge


def _pairwise_grader() -> Any:
    """Who a failure of the pairwise judge names: the installed ``deterministic`` grader and its
    distribution (see :func:`~evalkit.components.plugin_called`)."""
    return grader_plugin("deterministic")


async def _ask_all(judge: Any, asked: Sequence[tuple[str, str, str]]) -> list[Any]:
    """The judge's reply for each ``(task, first, second)``, or a :class:`FailedRequest` (what it
    raised, as it was called or awaited: that request fails alone)."""
    async def prefer(task: str, first: str, second: str) -> Any:
        return await judge_asked(lambda: judge.aprefer(task, first, second))

    try:
        return await asyncio.gather(*(prefer(task, first, second) for task, first, second in asked))
    finally:  # nothing is stored yet: a judge that cannot close is named, and the comparison not shown
        await plugin_awaited(_pairwise_grader, "aclose", aclosed(judge))


def _task(judge: Any, messages: Sequence[tuple[str, str]]) -> str:
    system = next((text for role, text in messages if role == "system"), None)
    prompt = "\n\n".join(text for role, text in messages if role != "system")
    return plugin_method(_pairwise_grader, judge, "task", prompt, system)


def compare_pairwise(base: Run, run: Run, settings: PairwiseSettings, config: Config) -> PairwiseComparison:
    """Judge RUN's answers against BASE's, case by case in both orders (see the module docstring).

    ``base`` and ``run`` carry their cases. Refused (:class:`UsageError`, nothing asked) when the
    runs are of different sets, not both prompt runs stored with ``privacy = "full"``, when no judge
    is configured, or when no case can be judged; a judge that cannot be reached or fails a call
    raises :class:`PairwiseJudgingFailed`.
    """
    from .case_texts import answered_texts

    problem = pairwise_refusal(base, run)
    if problem is not None:
        raise UsageError(problem)
    pairs, left_out = _paired(base, run)
    texts = answered_texts(run, [now for _, now in pairs], config)
    judged: list[tuple[CaseResult, CaseResult]] = []
    for then, now in pairs:
        if now.case_id in texts:
            judged.append((then, now))
        else:
            left_out.append(LeftOutCase(now.case_id, "text not installed"))
    if not judged:
        raise UsageError(
            f"runs {base.id} and {run.id} have no unchanged case with stored answers and the set's text installed "
            f"to judge ({len(left_out)} left out)"
        )
    judge = pairwise_judge(settings, config)
    # GraderUnavailableError (exit 2) before anything is asked, as for a run's judge; what else it raises names it
    plugin_method(_pairwise_grader, judge, "check_ready")
    asked = []
    for then, now in judged:
        task = _task(judge, texts[now.case_id].messages)
        asked.append((task, then.answer_text, now.answer_text))  # BASE shown first
        asked.append((task, now.answer_text, then.answer_text))  # RUN shown first
    replies = run_to_completion(lambda: _ask_all(judge, asked))
    instance = judge_instance_of(_pairwise_grader, judge)
    failures = [r.error for r in replies if isinstance(r, FailedRequest)]
    if failures:
        first = failures[0]
        raise PairwiseJudgingFailed(
            f"the pairwise judge {quoted(instance)} failed {len(failures)} of {len(replies)} requests, "
            f"so nothing is reported; the first failure: {exception_text(first)}"
        )
    # every reply held to the rule before any is counted: a broken one is the plugin's, and nothing is shown
    replies = [judge_reply(_pairwise_grader, "aprefer", r, _VERDICTS, "A, B, TIE or None (unusable twice)") for r in replies]
    prompt_version = prompt_version_of(_pairwise_grader, judge)
    judgements = tuple(
        PairJudgement(now.case_id, replies[2 * i][0], replies[2 * i + 1][0]) for i, (_, now) in enumerate(judged)
    )
    models = tuple(sorted({model for _, model in replies if model is not None}))
    return PairwiseComparison(
        set_identifier=run.set_identifier,
        base_id=base.id,
        run_id=run.id,
        judge_instance=instance,
        judge_models=models,
        prompt_version=prompt_version,
        temperature=float(settings.temperature),
        judgements=judgements,
        tally=tally(judgements),
        left_out=tuple(left_out),
    )


def left_out_counts(comparison: PairwiseComparison) -> Mapping[str, int]:
    """How many cases were left out for each reason."""
    counts: dict[str, int] = {}
    for case in comparison.left_out:
        counts[case.reason] = counts.get(case.reason, 0) + 1
    return counts
