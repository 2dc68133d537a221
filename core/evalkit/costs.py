"""Tokens and money: the prices of a provider instance, what a request costs, what a run spent.

Prices are per provider instance, per million tokens (``price_per_million_input``,
``price_per_million_output``, with a ``currency``, default ``USD``); the older
``cost_per_1k_tokens`` is read as one price for both directions (times 1,000 per million).
Every amount is a :class:`~decimal.Decimal` made from the price as written (``0.15`` stays
``0.15``, never the float nearest to it), and sums are exact: a thousand requests add up to what
one multiplication says. A price that is not configured is *unknown* — ``None``, printed
``unknown`` and written ``null`` — never 0; so is the cost of a request whose endpoint did not
report its token counts.

Cached prompt tokens (``cached_input_tokens``, where an endpoint reports them) are counted, and
priced as prompt tokens: providers' discounts for them differ and change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

import attrs

from .answers import Usage
from .shapes import decimal_text

__all__ = [
    "CaseUsage",
    "DEFAULT_CURRENCY",
    "MILLION",
    "Price",
    "SCIENTIFIC_FROM",
    "RunSpend",
    "TokenTally",
    "add_costs",
    "cost_of",
    "format_amount",
    "parse_amount",
    "price_from_mapping",
    "run_spend",
    "limited_requests",
    "stored_replies",
]

DEFAULT_CURRENCY = "USD"
MILLION = Decimal(1_000_000)


def _decimal(value: Any) -> Decimal:
    """A price as written: a TOML integer or float read through its shortest repr (``0.15`` is
    ``Decimal("0.15")``), a decimal string as it is."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value)


@attrs.frozen
class Price:
    """What one provider instance charges, per million prompt (``input``) and completion
    (``output``) tokens, in ``currency``."""

    input: Decimal = attrs.field(converter=_decimal)
    output: Decimal = attrs.field(converter=_decimal)
    currency: str = DEFAULT_CURRENCY

    def as_mapping(self) -> dict[str, str]:
        """The stored form: amounts as decimal strings (exact)."""
        return {"input_per_million": str(self.input), "output_per_million": str(self.output), "currency": self.currency}

    def request_cost(self, input_tokens: int, output_tokens: int) -> Decimal:
        """The cost of one request of these token counts."""
        return (self.input * input_tokens + self.output * output_tokens) / MILLION


def price_from_mapping(value: Any) -> Price | None:
    """A price from its stored form (:meth:`Price.as_mapping`); ``None`` for none or a malformed one."""
    if not isinstance(value, Mapping):
        return None
    try:
        return Price(value["input_per_million"], value["output_per_million"], str(value.get("currency") or DEFAULT_CURRENCY))
    except (KeyError, TypeError, ValueError, InvalidOperation):
        return None


def cost_of(usage: Usage | None, price: Price | None) -> Decimal | None:
    """What one request cost: ``None`` (unknown) without a price, or when the endpoint did not
    report both its prompt and completion tokens."""
    if price is None or usage is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    return price.request_cost(usage.input_tokens, usage.output_tokens)


def add_costs(amounts: Iterable[Decimal | None]) -> Decimal | None:
    """The exact sum, or ``None`` when any part is unknown."""
    total = Decimal(0)
    for amount in amounts:
        if amount is None:
            return None
        total += amount
    return total


def parse_amount(text: str) -> Decimal:
    """An amount of money as a user writes it (``--budget 2.50``): a finite decimal of zero or more;
    ``ValueError`` otherwise."""
    try:
        if not decimal_text(text):
            raise InvalidOperation(text)
        amount = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"{text!r} is not an amount (write it like 2.50)") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{text!r} is not an amount of zero or more")
    return amount


#: From this size on an amount is printed in scientific notation, to six significant digits
#: (``1.8E+304 USD``): a price or a token count may be as large as a float or 2**63, and the
#: plain form of such a product runs to hundreds of digits.
SCIENTIFIC_FROM = Decimal("1e15")


def format_amount(amount: Decimal | None, currency: str | None) -> str:
    """``0.0042 USD``, ``1.8E+20 USD`` from :data:`SCIENTIFIC_FROM` on; ``unknown`` for an unknown
    amount (never ``0``)."""
    if amount is None:
        return "unknown"
    if abs(amount) >= SCIENTIFIC_FROM:
        mantissa, _, exponent = f"{amount:.5E}".partition("E")
        return f"{mantissa.rstrip('0').rstrip('.')}E{exponent} {currency or DEFAULT_CURRENCY}"
    shown = amount.normalize() if amount == amount.to_integral_value() else amount
    text = f"{shown:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".") or "0"
    return f"{text} {currency or DEFAULT_CURRENCY}"


@attrs.define
class TokenTally:
    """Requests and their token counts, summed; ``unreported`` counts requests whose usage is
    unknown (their tokens are not in the sums, and their cost is unknown): one whose endpoint
    reported none, and each request of a case whose summed usage is unknown
    (:func:`~evalkit.answers.sum_usage`: a conversation's turns, a prompt's repeated answers)."""

    requests: int = 0
    unreported: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_input_tokens: int = 0
    cost: Decimal | None = Decimal(0)

    def add(self, usage: Usage | None, price: Price | None, requests: int = 1) -> None:
        """Count ``requests`` requests (one answer's, a conversation's turns, a case's repeats)
        whose token counts add up to ``usage``; when it is unknown, each of them counts as unreported."""
        self.requests += requests
        if usage is None or usage.input_tokens is None or usage.output_tokens is None:
            self.unreported += requests
        if usage is not None:
            self.input_tokens += usage.input_tokens or 0
            self.output_tokens += usage.output_tokens or 0
            self.total_tokens += usage.total_tokens if usage.total_tokens is not None else (usage.input_tokens or 0) + (usage.output_tokens or 0)
            self.cached_input_tokens += usage.cached_input_tokens or 0
        if self.cost is not None:
            cost = cost_of(usage, price)
            self.cost = None if cost is None else self.cost + cost

    def document(self, currency: str | None) -> dict[str, Any]:
        """The JSON form: counts, and the cost as an exact decimal string (``null``: unknown)."""
        return {
            "requests": self.requests,
            "usage_unreported": self.unreported,
            "prompt_tokens": self.input_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cached_prompt_tokens": self.cached_input_tokens,
            "cost": None if self.cost is None or currency is None else str(self.cost),
            "currency": currency,
        }


@attrs.define
class RunSpend:
    """What a run spent: the generator's requests and the judge's, and how many answers were
    reused instead of asked (from the answer cache, or a stored run's)."""

    generator: TokenTally = attrs.Factory(TokenTally)
    judge: TokenTally = attrs.Factory(TokenTally)
    from_cache: int = 0
    reused: int = 0
    #: The cases whose answer was asked of the generator (``generator.requests`` counts requests:
    #: several a case under ``--repeats`` or in a conversation).
    asked: int = 0
    generator_price: Price | None = None
    judge_price: Price | None = None

    @classmethod
    def priced(cls, pricing: Mapping[str, Any] | None) -> RunSpend:
        """An empty tally priced as a run's stored ``pricing`` says."""
        pricing = pricing or {}
        spend = cls(generator_price=price_from_mapping(pricing.get("generator")), judge_price=price_from_mapping(pricing.get("judge")))
        if spend.generator_price is None:
            spend.generator.cost = None
        if spend.judge_price is None:
            spend.judge.cost = None
        return spend

    def add_case(
        self, usage: Usage | None, judge_usage: Iterable[Usage], answer_source: str | None, asked: bool = True, requests: int = 1
    ) -> None:
        """Count one stored case: its generator ``requests`` (none when its answer was reused or
        the case never got one: ``asked`` false) and each of its judge calls."""
        if answer_source == "cache":
            self.from_cache += 1
        elif answer_source:
            self.reused += 1
        elif asked:
            self.asked += 1
            self.generator.add(usage, self.generator_price, requests)
        for call in judge_usage:
            self.judge.add(call, self.judge_price)

    @property
    def currency(self) -> str | None:
        """The currency of the run's amounts (the generator's price, else the judge's)."""
        price = self.generator_price or self.judge_price
        return price.currency if price is not None else None

    @property
    def cost(self) -> Decimal | None:
        """The run's total cost; unknown when a part is, or when generator and judge are priced
        in two currencies (no rate is assumed). A judge never asked adds nothing."""
        parts = [self.generator.cost if self.generator.requests else Decimal(0)]
        if self.judge.requests:
            if self.generator_price and self.judge_price and self.generator_price.currency != self.judge_price.currency:
                return None
            parts.append(self.judge.cost)
        return add_costs(parts)

    def document(self) -> dict[str, Any]:
        """The stored and ``--json`` form (see docs/costs.md)."""
        currency = self.currency
        cost = self.cost
        return {
            "cost": None if cost is None or currency is None else str(cost),
            "currency": currency,
            "generator": self.generator.document(self.generator_price.currency if self.generator_price else None),
            "judge": self.judge.document(self.judge_price.currency if self.judge_price else None),
            "answers_from_cache": self.from_cache,
            "answers_reused": self.reused,
        }


def spend_cost(spend: Mapping[str, Any] | None) -> tuple[Decimal | None, str | None]:
    """A stored spend document's total cost and currency (``None``, ``None``: unknown)."""
    if not isinstance(spend, Mapping):
        return None, None
    raw = spend.get("cost")
    currency = spend.get("currency")
    if not isinstance(raw, str) or not isinstance(currency, str):
        return None, currency if isinstance(currency, str) else None
    try:
        return Decimal(raw), currency
    except InvalidOperation:
        return None, currency


def spend_tokens(spend: Mapping[str, Any] | None) -> int | None:
    """A stored spend document's total tokens, generator and judge (``None``: not stored)."""
    if not isinstance(spend, Mapping):
        return None
    total = 0
    for part in ("generator", "judge"):
        tally = spend.get(part)
        if isinstance(tally, Mapping) and type(tally.get("total_tokens")) is int:
            total += tally["total_tokens"]
    return total


class CaseUsage(NamedTuple):
    """One stored case as a run's spend and its limits count it (a row of
    :meth:`~evalkit.storage.RunSpending.case_usage`; :func:`run_spend` sums them): its generator ``usage``, its judge calls'
    ``judge_usage``, its ``answer_source``, whether it ``errored``, the generator ``requests`` that
    got a reply (``None``: not stored) and the ``requests_sent``, a failed one included (``None``:
    not stored — a case stored before they were counted, or a store written before this field).

    A tuple, so a store may yield plain tuples: one of the first four fields, or five (written
    before ``requests_sent``), reads the missing ones as not stored (:meth:`of`)."""

    usage: Any
    judge_usage: tuple[Any, ...] = ()
    answer_source: str | None = None
    errored: bool = False
    requests: int | None = None
    requests_sent: int | None = None

    @classmethod
    def of(cls, row: Any) -> CaseUsage:
        """``row`` as a :class:`CaseUsage`: one as it is, a store's plain tuple (four to six values)
        with the fields it does not give read as not stored."""
        return row if isinstance(row, cls) else cls(*row)

    @classmethod
    def rows(cls, rows: Iterable[Any]) -> Iterator[CaseUsage]:
        """Each of a store's ``case_usage`` rows as a :class:`CaseUsage` (:meth:`of`)."""
        return (cls.of(row) for row in rows)


def run_spend(pricing: Mapping[str, Any] | None, rows: Iterable[Any]) -> RunSpend:
    """A run's spend from its cases' stored usage (``rows``: a store's
    :class:`CaseUsage` rows, see :class:`~evalkit.storage.RunSpending`), priced as
    its stored ``pricing`` says. A case stored before its requests were counted (``None``) counts
    one, as it did then."""
    spend = RunSpend.priced(pricing)
    for row in CaseUsage.rows(rows):
        replies = stored_replies(row.usage, row.errored, row.requests)
        spend.add_case(row.usage, row.judge_usage, row.answer_source, asked=replies > 0, requests=replies)
    return spend


def stored_replies(usage: Usage | None, errored: bool, requests: int | None) -> int:
    """The generator requests a stored case counts (a :class:`~evalkit.storage.RunSpending` row's):
    its ``requests``; for a case stored before they were counted (``None``) one, unless it errored
    with no usage — it never got an answer (a failed request), and nothing was reported."""
    if requests is None:
        return 0 if errored and usage is None else 1
    return requests


def limited_requests(case: CaseUsage) -> int:
    """The generator requests ``--max-requests`` counts for a case (a :class:`CaseUsage`
    row): the requests it sent (``requests_sent``: each answer and model turn asked, a failed one
    included; a transport retry is not counted). The running process counts each answer by it as
    it settles, and every shard (a resume too) counts the run's stored cases by it, so they agree:
    a second answer of ``--repeats 2`` that failed was counted by its shard and not read back, and
    a conversation's turn that failed midway was counted nowhere.

    A case stored before the requests it sent were kept (``None``) counts as it did then: its
    replies (:func:`stored_replies`), and one for a case asked of the model that errored with none;
    none for a reused answer."""
    sent = case.requests_sent
    if type(sent) is int and sent >= 0:
        return sent
    if case.answer_source:
        return 0
    replies = stored_replies(case.usage, case.errored, case.requests)
    return max(1, replies) if case.errored else replies
