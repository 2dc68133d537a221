"""Calibrating a judge: ask it every item of a calibration set and measure it against people.

:func:`calibrate_judge` binds the judge a calibration set's grader uses (the configured provider
instance named by ``--judge`` or the configuration's ``judge``), checks that its scale is the
set's, asks every item ``repeats`` times (in parallel, within the judge instance's concurrency)
and returns a :class:`Calibration`: n, raw agreement, Cohen's κ (quadratic-weighted on an ordered
scale of more than two labels) with a seeded 95 % bootstrap interval, the confusion matrix,
precision and recall per label, the positive rates, and — asked more than once — the judge's
agreement with itself across repeats (Krippendorff's α).

The judge's label of an item is the label it gave most often across the repeats (the first asked
among equals). An item the judge could not label (an unusable reply twice, a failed call) is left
out of the figures and named; when none could be labelled, or the judge reports no model or
changes model on the way, the calibration fails (:class:`~evalkit.errors.CalibrationFailed`, exit 3)
and nothing is stored.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from .agreement import Agreement, KrippendorffAlpha, judge_agreement, krippendorff_alpha
from .calibration import CalibrationSet, calibration_set_problems
from .components import (
    BoundGenerator,
    aclosed,
    declared,
    grader_plugin,
    load_grader,
    offers,
    plugin_awaited,
    plugin_called,
    plugin_method,
)
from .config import Config
from .errors import CalibrationFailed, UsageError
from .event_loops import run_to_completion
from .judge_replies import (
    FailedRequest,
    judge_instance_of,
    judge_reply,
    judge_scale_of,
    prompt_version_of,
    yardstick_of,
)
from .judge_replies import asked as judge_asked
from .shapes import exception_text, short_repr
from .wording import quoted

__all__ = ["CALIBRATING_GRADER", "Calibration", "CalibratingGrader", "JudgeSettings", "calibrate_judge", "calibration_judge", "check_judge_ready"]

#: The grader (``evalkit.graders`` entry point) whose judge a calibration set of each kind measures.
CALIBRATING_GRADER: Mapping[str, str] = {
    "rubric": "deterministic",
    "decision": "decision",
    "groundedness": "groundedness",
    "relevance": "relevance",
}

#: The model under test while calibrating: none (so the judge is never refused as its own subject).
_NOBODY_UNDER_TEST = BoundGenerator(generator=None, adapter="", instance=None, alias=None, configured=False)


@runtime_checkable
class CalibratingGrader(Protocol):
    """A grader whose judge can be calibrated: it hands out the judge a calibration set of
    ``grader`` measures (``None`` when it has none for that grader)."""

    def calibration_judge(self, grader: str) -> Any:
        """An unbound judge with ``bind_judge``, ``check_ready``, ``judge_scale``, ``alabel``,
        ``yardstick_for`` and ``aclose`` (see :mod:`evalkit_plugins._judge`)."""
        ...


@attrs.frozen
class JudgeSettings:
    """Which judge is calibrated and how: the provider instance (``None``: the configuration's
    ``judge``), its sampling temperature, and how often each item is asked."""

    judge: str | None = None
    temperature: float = 0.0
    repeats: int = 1


@attrs.frozen
class Calibration:
    """A judge measured on a calibration set: who judged (instance, reported model, prompt
    version, temperature, and the yardstick its gradings carry), the agreement with people, its
    agreement with itself across repeats, and the items it could not label."""

    set_identifier: str
    grader: str
    judge_instance: str
    judge_model: str
    prompt_version: int
    temperature: float
    yardstick: str
    repeats: int
    agreement: Agreement
    self_agreement: KrippendorffAlpha | None
    unjudged: tuple[str, ...] = ()

    def record(self, calibrated_at: float | None = None) -> Any:
        """This calibration as a :class:`~evalkit.storage.values.CalibrationRecord` (now, unless
        ``calibrated_at`` says when)."""
        import time

        from .storage.values import CalibrationRecord

        interval = self.agreement.kappa.interval
        return CalibrationRecord(
            yardstick=self.yardstick, temperature=self.temperature, grader=self.grader,
            judge_instance=self.judge_instance, judge_model=self.judge_model, prompt_version=self.prompt_version,
            set_identifier=self.set_identifier, repeats=self.repeats, n=self.agreement.n,
            agreement=self.agreement.agreement, kappa=self.kappa,
            kappa_low=interval.low if interval is not None else None, kappa_high=interval.high if interval is not None else None,
            self_agreement=self.self_agreement.value if self.self_agreement is not None else None,
            calibrated_at=time.time() if calibrated_at is None else calibrated_at, report=self.as_dict(),
        )  # fmt: skip

    @property
    def kappa(self) -> float | None:
        """Cohen's κ (``None`` when undefined)."""
        return self.agreement.kappa.value

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` document (``n``, ``agreement``, ``kappa``, ``kappa_ci95``, ``confusion``,
        ``per_label``, ``self_agreement`` and the judge's identity)."""
        agreement = self.agreement
        interval = agreement.kappa.interval
        return {
            "set": self.set_identifier,
            "grader": self.grader,
            "judge": {
                "instance": self.judge_instance, "model": self.judge_model, "prompt_version": self.prompt_version,
                "temperature": self.temperature, "yardstick": self.yardstick,
            },
            "repeats": self.repeats,
            "n": agreement.n,
            "labels": list(agreement.labels),
            "agreement": agreement.agreement,
            "kappa": agreement.kappa.value,
            "kappa_weights": agreement.kappa.weights,
            "kappa_ci95": [interval.low, interval.high] if interval is not None else None,
            "confusion": [list(row) for row in agreement.confusion],
            "per_label": [
                {"label": p.label, "support": p.support, "predicted": p.predicted, "precision": p.precision, "recall": p.recall}
                for p in agreement.per_label
            ],
            "judge_positive_rate": agreement.judge_positive_rate,
            "human_positive_rate": agreement.human_positive_rate,
            "positive_labels": list(agreement.positive_labels),
            "self_agreement": self.self_agreement.value if self.self_agreement is not None else None,
            "unjudged": list(self.unjudged),
        }  # fmt: skip


def calibration_judge(grader: str, settings: JudgeSettings, config: Config) -> Any:
    """The bound judge a calibration set of ``grader`` measures; a :class:`UsageError` when no
    installed grader judges that kind or no judge is configured."""
    name = CALIBRATING_GRADER.get(grader)
    options: dict[str, Any] = {"temperature": settings.temperature}
    if settings.judge is not None:
        options["judge"] = settings.judge
    try:
        loaded, _ = load_grader(name or grader, **options)
    except UsageError:
        raise
    except Exception as exc:  # an unknown grader: no installed plugin judges this kind
        raise UsageError(f'no installed grader judges {quoted(grader)} calibration sets ({exc})') from None
    who = _grader_of(grader)
    judge = plugin_method(who, loaded, "calibration_judge", grader) if offers(loaded, CalibratingGrader) else None
    if judge is None:
        raise UsageError(f'the {quoted(name)} grader has no judge to calibrate on {quoted(grader)} items')
    plugin_method(who, judge, "bind_judge", config, _NOBODY_UNDER_TEST)
    return judge


def _grader_of(grader: str) -> Any:
    """Who a failure of the judge of ``grader`` (a calibration set's grader kind) names: the
    grader plugin whose judge it is (see :func:`~evalkit.components.plugin_called`)."""
    return grader_plugin(CALIBRATING_GRADER.get(grader) or grader)


def check_judge_ready(grader: str, judge: Any) -> None:
    """Ask the judge of ``grader`` (a calibration set's grader kind) whether it can run, before
    anything is asked: what it raises names the grader and its distribution
    (:func:`~evalkit.components.plugin_called`), an error of evalkit's own kind is raised as it is."""
    plugin_method(_grader_of(grader), judge, "check_ready")


def _scale(judge: Any, grader: str) -> list[Any]:
    """The labels the judge of ``grader`` answers with (its ``judge_scale()``, under the rule of a
    judge's values: :func:`~evalkit.judge_replies.judge_scale_of`)."""
    return list(judge_scale_of(_grader_of(grader), judge))


def _same_scale(scale: Sequence[Any], labels: Sequence[Any]) -> bool:
    return {(type(v), v) for v in scale} == {(type(v), v) for v in labels}


def _check_scale(judge: Any, calibration: CalibrationSet) -> Any:
    """The judge that answers on the set's scale: ``judge`` itself, or — when it offers
    ``judge_on_scale(labels)`` (the relevance judge meets binary labels) — the judge that method
    returns; a :class:`UsageError` when neither does."""
    grader = calibration.grader
    scale = _scale(judge, grader)
    if _same_scale(scale, calibration.labels):
        return judge
    who = _grader_of(grader)
    offered = declared(judge, "judge_on_scale")  # a property that raises offers none
    rescaled = plugin_called(who, "judge_on_scale", offered, calibration.labels) if offered is not None else None
    if rescaled is not None and _same_scale(_scale(rescaled, grader), calibration.labels):
        return rescaled
    raise UsageError(
        f'calibration set {quoted(calibration.identifier)} labels items {list(calibration.labels)!r}, but the '
        f"{calibration.grader} judge answers {short_repr(scale, 400)}: label the items on the judge's scale"
    )


def _modal(labels: Sequence[Any]) -> Any:
    counts = Counter((type(v), v) for v in labels)
    best = max(counts.values())
    return next(v for v in labels if counts[(type(v), v)] == best)


async def _ask_all(judge: Any, calibration: CalibrationSet, repeats: int) -> list[list[Any]]:
    """Every item asked ``repeats`` times; each answer a reply or a :class:`FailedRequest`."""

    async def ask(item: Any) -> Any:
        return await judge_asked(lambda: judge.alabel(item))

    try:
        asked = await asyncio.gather(*(ask(item) for item in calibration.items for _ in range(repeats)))
    finally:  # nothing is stored yet: a judge that cannot close is named, and the calibration not kept
        await plugin_awaited(_grader_of(calibration.grader), "aclose", aclosed(judge))
    return [asked[i * repeats : (i + 1) * repeats] for i in range(len(calibration.items))]


def calibrate_judge(calibration: CalibrationSet, settings: JudgeSettings, config: Config) -> Calibration:
    """Measure the judge of ``calibration.grader`` against the set's labels (see the module docstring)."""
    if settings.repeats < 1:
        raise UsageError(f"repeats must be at least 1, got {settings.repeats}")
    problems = calibration_set_problems(calibration)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise UsageError(f'calibration set {quoted(getattr(calibration, "identifier", "?"))} cannot be used: {shown}')
    judge = _check_scale(calibration_judge(calibration.grader, settings, config), calibration)
    check_judge_ready(calibration.grader, judge)
    answers = run_to_completion(lambda: _ask_all(judge, calibration, settings.repeats))
    who = _grader_of(calibration.grader)
    # every reply held to the rule before any is counted: a broken one is the plugin's, and nothing is kept
    wanted = f"one of the set's labels {list(calibration.labels)!r}"
    answers = [
        [o if isinstance(o, FailedRequest) else judge_reply(who, "alabel", o, calibration.labels, wanted) for o in outcomes]
        for outcomes in answers
    ]
    instance = judge_instance_of(who, judge)
    prompt_version = prompt_version_of(who, judge)
    human: list[Any] = []
    judged: list[Any] = []
    per_repeat: list[list[Any]] = []
    unjudged: list[str] = []
    models: set[Any] = set()
    first_failure: str | None = None
    for item, outcomes in zip(calibration.items, answers, strict=True):
        labels = [o[0] for o in outcomes if not isinstance(o, FailedRequest)]
        models.update(o[1] for o in outcomes if not isinstance(o, FailedRequest))
        failures = [o.error for o in outcomes if isinstance(o, FailedRequest)]
        if failures and first_failure is None:
            first_failure = exception_text(failures[0])
        if not labels:
            unjudged.append(item.id)
            continue
        human.append(item.label)
        judged.append(_modal(labels))
        per_repeat.append([o[0] if not isinstance(o, FailedRequest) else None for o in outcomes])
    if not judged:
        raise CalibrationFailed(f"the judge labelled none of the {len(calibration.items)} items; the first failure: {first_failure}")
    if None in models:
        raise CalibrationFailed(f"the judge {quoted(instance)} reported no model, so its calibration cannot be attributed")
    if len(models) > 1:
        raise CalibrationFailed(f"the judge model changed during the calibration ({', '.join(sorted(map(str, models)))})")
    (model,) = models
    ordered = calibration.ordered
    agreement = judge_agreement(human, judged, calibration.labels, weights="quadratic" if ordered else None)
    self_agreement = None
    if settings.repeats > 1:
        self_agreement = krippendorff_alpha(per_repeat, level="ordinal" if ordered else "nominal", labels=calibration.labels)
    return Calibration(
        set_identifier=calibration.identifier,
        grader=calibration.grader,
        judge_instance=instance,
        judge_model=model,
        prompt_version=prompt_version,
        temperature=float(settings.temperature),
        yardstick=yardstick_of(who, judge, model),
        repeats=settings.repeats,
        agreement=agreement,
        self_agreement=self_agreement,
        unjudged=tuple(unjudged),
    )
