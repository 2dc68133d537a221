"""Scoring a retrieval step: per-question ranks and hits, per-run rates, MRR@k, recall@k and nDCG@k.

Every metric is computed over the *distinct* ranking: the retriever's ids in rank order with
empty ids skipped and repeats collapsed onto their first occurrence (a retriever that returns one
id per chunk ranks documents, not chunks). A document is relevant when its id is one of the
question's expected ids (exact string equality) and its grade reaches the run's relevance
threshold (default 1; an ungraded expected id has grade 1, a grade of 0 or below is never
relevant). Graded questions (see :attr:`~evalkit.questions.GoldenQuestion.grades`) use the grade
as nDCG's gain, as trec_eval does: ``sum(grade / log2(rank + 1))`` over the positive grades in
the first ``k``, divided by the same sum for the grades sorted best first; the threshold plays
no part in nDCG (trec_eval's ``-l`` does not either).

For a question with expected ids, and ``r`` the 1-based distinct rank of the first expected id:

* ``hit_at_1`` / ``hit_at_3``: an expected id at distinct rank 1 / within the first 3;
* ``reciprocal_rank_at_k``: ``1 / r`` when ``r <= k``, 0.0 when no expected id is within the
  first ``k`` distinct ids (its mean over a run is MRR@k);
* ``recall_at_k``: expected ids within the first ``k`` distinct ids / number of expected ids;
* ``ndcg_at_k``: ``sum(1 / log2(rank + 1))`` over the expected ids within the first ``k``,
  divided by the same sum for an ideal ranking of ``min(len(expected), k)`` relevant ids.

These equal trec_eval's ``success_1``, ``success_3``, ``recall_k`` and ``ndcg_cut_k`` (with
``-l threshold``), and its ``recip_rank`` on the ranking cut at ``k``, for every question trec_eval can express. evalkit's rules decide the cases it
cannot: an empty ranking scores 0.0 everywhere (trec_eval drops the question), and a question
with no expected id ("nothing in the index answers this") scores 1.0 on every metric and a hit
on both hit flags when nothing came back, and 0.0 / miss otherwise — one rule, applied to all
five metrics alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import islice
from operator import attrgetter

import attrs

from evalkit.errors import RetrievalError, UsageError
from evalkit.questions import GoldenQuestion, QuestionForm
from evalkit.shapes import short_repr

__all__ = [
    "DEFAULT_K",
    "DEFAULT_RELEVANCE_THRESHOLD",
    "Breakdown",
    "QuestionScore",
    "RetrievalMetrics",
    "aggregate",
    "percentile",
    "rank_distinct",
    "score_question",
]

#: Cut-off of MRR@k, recall@k and nDCG@k when a run does not choose one.
DEFAULT_K = 10
#: The grade from which a judged document counts as relevant for the binary metrics (trec_eval's ``-l``).
DEFAULT_RELEVANCE_THRESHOLD = 1


def rank_distinct(raw_ids: Iterable[str]) -> tuple[str, ...]:
    """The distinct ids of a raw ranking, best first: empty ids skipped, repeats dropped.

    Raises :class:`RetrievalError` when ``raw_ids`` is not a list of strings.
    """
    if isinstance(raw_ids, (list, tuple)):
        ids = raw_ids
    elif isinstance(raw_ids, (str, bytes)) or not isinstance(raw_ids, Iterable):
        raise RetrievalError(f"a retriever must return a list of document ids, not {type(raw_ids).__name__}")
    else:
        ids = tuple(raw_ids)
    try:
        # str.join checks every element's type at C speed.
        "".join(ids)
    except TypeError:
        bad = next(i for i in ids if not isinstance(i, str))
        raise RetrievalError(f"a retriever returned a document id that is not a string: {short_repr(bad)}") from None
    distinct = dict.fromkeys(ids)
    distinct.pop("", None)
    return tuple(distinct)


@attrs.frozen
class QuestionScore:
    """How one question fared.

    ``ranked_ids`` are the distinct ids measured, best first, at most ``max(k, 3)`` of them.
    ``latency_s`` is the wall-clock time the retriever took, in seconds.
    """

    question_id: str
    form: QuestionForm
    hard_class: str | None
    ranked_ids: tuple[str, ...]
    hit_at_1: bool
    hit_at_3: bool
    reciprocal_rank_at_k: float
    recall_at_k: float
    ndcg_at_k: float
    latency_s: float


class _Cutoff:
    """Discounts and ideal DCGs for one ``k``, computed once per process."""

    __slots__ = ("k", "depth", "discount", "ideal")

    def __init__(self, k: int) -> None:
        self.k = k
        self.depth = max(k, 3)
        # 1.0 / log2(i + 2) is trec_eval's gain / log2(rank + 1) for gain 1, bit for bit.
        self.discount = tuple(1.0 / math.log2(i + 2) for i in range(k))
        ideal = [0.0]
        for d in self.discount:
            ideal.append(ideal[-1] + d)
        self.ideal = tuple(ideal)


_CUTOFFS: dict[int, _Cutoff] = {}


def _cutoff(k: int) -> _Cutoff:
    table = _CUTOFFS.get(k) if type(k) is int else None
    if table is None:
        if type(k) is not int or k < 1:
            raise UsageError(f"k must be a positive integer (got {k!r})")
        table = _CUTOFFS[k] = _Cutoff(k)
    return table


def score_question(
    question: GoldenQuestion,
    ranked: Sequence[str],
    k: int,
    latency_s: float,
    threshold: int = DEFAULT_RELEVANCE_THRESHOLD,
) -> QuestionScore:
    """Score one question against a retriever's ranking of string ids, best first.

    ``ranked`` may be the raw ranking (repeats and empty ids are handled here exactly as
    :func:`rank_distinct` handles them) or an already distinct one. Element types are not checked
    here: a runner passes a retriever's return through :func:`rank_distinct`, which rejects
    non-string ids. The question's expected ids are taken to be distinct, as
    :func:`~evalkit.retrieval.validation.question_set_problems` requires. ``k`` is the cut-off of
    the reciprocal rank, recall and nDCG; :class:`UsageError` when it is not a positive integer.
    ``threshold`` is the grade from which a judged id counts as relevant for hit@1, hit@3, MRR@k
    and recall.

    Only the first ``max(k, 3)`` distinct ids are read: nothing past them counts.
    """
    cut = _CUTOFFS.get(k) if type(k) is int else None
    if cut is None:
        cut = _cutoff(k)
    if not isinstance(ranked, (list, tuple)):
        ranked = list(ranked)
    depth = cut.depth
    head = ranked[:depth]
    seen = set(head)
    if len(seen) != len(head) or "" in seen:
        ranked = rank_distinct(ranked)
        head = ranked[:depth]
        seen = set(head)
    head = tuple(head)
    # From here on ``head`` is the distinct top-``depth``: a position in it is a distinct rank,
    # and every id past it ranks at ``depth`` or deeper, beyond every cut-off.
    expected = question.expected_document_ids
    if (question.grades is not None or threshold != 1) and expected:
        return _score_graded(question, head, ranked, cut, threshold, latency_s)

    if not expected:
        nothing = not head
        value = 1.0 if nothing else 0.0
        return QuestionScore(
            question.id, question.form, question.hard_class, head,
            nothing, nothing, value, value, value, latency_s,
        )  # fmt: skip

    found = seen.intersection(expected)
    if not found:
        return QuestionScore(
            question.id, question.form, question.hard_class, head, False, False, 0.0, 0.0, 0.0, latency_s
        )

    positions = sorted(map(head.index, found))
    first = positions[0]
    k = cut.k
    discount = cut.discount
    hits = 0
    dcg = 0.0
    for p in positions:
        if p >= k:
            break
        hits += 1
        dcg += discount[p]
    n = len(expected)
    return QuestionScore(
        question.id, question.form, question.hard_class, head,
        first == 0, first < 3, 1.0 / (first + 1) if first < k else 0.0, hits / n, dcg / cut.ideal[n if n < k else k],
        latency_s,
    )  # fmt: skip


def _score_graded(
    question: GoldenQuestion, head: tuple[str, ...], ranked: Sequence[str], cut: _Cutoff, threshold: int, latency_s: float
) -> QuestionScore:
    """Score a question whose judgements carry grades, or any question under a threshold other than 1."""
    if type(threshold) is not int or threshold < 1:
        raise UsageError(f"the relevance threshold must be a positive integer (got {threshold!r})")
    judged = question.judgements()
    relevant = [d for d, g in judged.items() if g >= threshold]
    k = cut.k
    positions = sorted(i for i, d in enumerate(head) if d in judged and judged[d] >= threshold)
    if positions:
        first = positions[0] + 1
    else:
        first = _first_past_head(relevant, ranked, cut.depth) if relevant else 0
    hits = sum(1 for p in positions if p < k)
    dcg = 0.0
    for i, d in enumerate(head[:k]):
        gain = judged.get(d, 0)
        if gain > 0:
            dcg += gain / math.log2(i + 2)
    ideal = 0.0
    for i, gain in enumerate(sorted((g for g in judged.values() if g > 0), reverse=True)[:k]):
        ideal += gain / math.log2(i + 2)
    return QuestionScore(
        question.id, question.form, question.hard_class, head,
        first == 1, 0 < first <= 3, 1.0 / first if 0 < first <= k else 0.0,
        hits / len(relevant) if relevant else 0.0, dcg / ideal if ideal > 0 else 0.0, latency_s,
    )  # fmt: skip


def _first_past_head(expected: Sequence[str], ranked: Sequence[str], depth: int) -> int:
    """The 1-based distinct rank of the best expected id past the head, 0 when none came back."""
    if len(ranked) <= depth:
        return 0
    found = frozenset(expected).intersection(islice(ranked, depth, None))
    if not found:
        return 0
    first = min(ranked.index(e, depth) for e in found)
    before = ranked[:first]
    return len(set(before)) - ("" in before) + 1


@attrs.frozen
class Breakdown:
    """The metrics of one slice of a run (one form, one hard class)."""

    questions: int
    top1_hit_rate: float
    top3_hit_rate: float
    mrr_at_k: float
    recall_at_k: float
    ndcg_at_k: float


@attrs.frozen
class RetrievalMetrics:
    """The metrics of a whole run.

    Rates and means are 0.0 for a run without questions, and so are the latency percentiles.
    ``by_form`` is keyed by form value and ``by_hard_class`` by hard class, both in order of first
    occurrence; questions without a hard class are not in ``by_hard_class``, and questions of form
    ``unspecified`` are not in ``by_form`` (a collection without wording labels has no form table).
    """

    k: int
    question_count: int
    top1_hits: int
    top3_hits: int
    top1_hit_rate: float
    top3_hit_rate: float
    mrr_at_k: float
    recall_at_k: float
    ndcg_at_k: float
    latency_p50_s: float
    latency_p95_s: float
    by_form: dict[str, Breakdown]
    by_hard_class: dict[str, Breakdown]


_hit1 = attrgetter("hit_at_1")
_hit3 = attrgetter("hit_at_3")
_rr = attrgetter("reciprocal_rank_at_k")
_recall = attrgetter("recall_at_k")
_ndcg = attrgetter("ndcg_at_k")
_latency = attrgetter("latency_s")


class _Sums:
    """Question count, hit counts and exact sums of the rank metrics of one group of scores."""

    __slots__ = ("n", "hit1", "hit3", "rr", "recall", "ndcg")

    def __init__(self, n: int, hit1: int, hit3: int, rr: float, recall: float, ndcg: float) -> None:
        self.n, self.hit1, self.hit3, self.rr, self.recall, self.ndcg = n, hit1, hit3, rr, recall, ndcg

    @classmethod
    def of(cls, scores: Sequence[QuestionScore]) -> _Sums:
        return cls(
            len(scores),
            sum(map(_hit1, scores)),
            sum(map(_hit3, scores)),
            math.fsum(map(_rr, scores)),
            math.fsum(map(_recall, scores)),
            math.fsum(map(_ndcg, scores)),
        )

    @classmethod
    def total(cls, parts: Sequence[_Sums]) -> _Sums:
        return cls(
            sum(p.n for p in parts),
            sum(p.hit1 for p in parts),
            sum(p.hit3 for p in parts),
            math.fsum(p.rr for p in parts),
            math.fsum(p.recall for p in parts),
            math.fsum(p.ndcg for p in parts),
        )

    def breakdown(self) -> Breakdown:
        n = self.n
        if not n:
            return Breakdown(0, 0.0, 0.0, 0.0, 0.0, 0.0)
        return Breakdown(n, self.hit1 / n, self.hit3 / n, self.rr / n, self.recall / n, self.ndcg / n)


def percentile(values: Sequence[float], fraction: float, *, presorted: bool = False) -> float:
    """The ``fraction`` quantile of ``values`` by linear interpolation between closest ranks.

    This is NumPy's default ("linear") method; 0.0 for no values.
    """
    if not values:
        return 0.0
    ordered = values if presorted else sorted(values)
    position = (len(ordered) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def aggregate(scores: Iterable[QuestionScore], k: int = DEFAULT_K) -> RetrievalMetrics:
    """Fold per-question scores into run metrics.

    ``k`` is the cut-off the scores were computed with; it is recorded, not re-applied. MRR@k,
    recall@k and nDCG@k are means over all questions (no-result questions included, by the rules
    in the module docstring), summed exactly (``math.fsum``); latency percentiles interpolate
    linearly (see :func:`percentile`).
    """
    _cutoff(k)
    scores = scores if isinstance(scores, (list, tuple)) else list(scores)
    forms: dict[QuestionForm | str, list[QuestionScore]] = {}
    classes: dict[str, list[QuestionScore]] = {}
    for s in scores:
        group = forms.get(s.form)
        if group is None:
            group = forms[s.form] = []
        group.append(s)
        if s.hard_class is not None:
            group = classes.get(s.hard_class)
            if group is None:
                group = classes[s.hard_class] = []
            group.append(s)
    # Every question has exactly one form, so the form groups add up to the run.
    form_sums = {(f.value if isinstance(f, QuestionForm) else str(f)): _Sums.of(g) for f, g in forms.items()}
    overall = _Sums.total(list(form_sums.values()))
    mean = overall.breakdown()
    latencies = sorted(map(_latency, scores))
    return RetrievalMetrics(
        k=k,
        question_count=overall.n,
        top1_hits=overall.hit1,
        top3_hits=overall.hit3,
        top1_hit_rate=mean.top1_hit_rate,
        top3_hit_rate=mean.top3_hit_rate,
        mrr_at_k=mean.mrr_at_k,
        recall_at_k=mean.recall_at_k,
        ndcg_at_k=mean.ndcg_at_k,
        latency_p50_s=percentile(latencies, 0.50, presorted=True),
        latency_p95_s=percentile(latencies, 0.95, presorted=True),
        by_form={form: sums.breakdown() for form, sums in form_sums.items() if form != QuestionForm.UNSPECIFIED.value},
        by_hard_class={name: _Sums.of(group).breakdown() for name, group in classes.items()},
    )
