"""Plugins of an outsider: what a third-party distribution hands evalkit that its authors had not seen.

``outsider.treacherous_text`` grades each prompt of ``outsider.graded`` with a grading whose text
is a ``str`` subclass that raises when it is printed (``str()``), compared or hashed, in one field
per prompt: the grading's ``error``, a check's ``error``, ``detail`` or ``name``, the yardstick.
Such a text was stored as it came, then ended ``evalkit run`` in an internal error as it printed
the case (exit 3 after the run was stored).
"""

from evalkit import Assertion, Check, GoldenPrompt, GoldenPromptSet, Grading


class TreacherousText(str):
    """Text that raises when printed, compared or hashed: only ``str``'s own methods read it."""

    def __str__(self) -> str:
        raise RuntimeError("treacherous __str__")

    def __format__(self, spec: str) -> str:
        raise RuntimeError("treacherous __format__")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("treacherous __eq__")

    def __hash__(self) -> int:
        raise RuntimeError("treacherous __hash__")


#: The grading ``outsider.treacherous_text`` gives each prompt id of ``outsider.graded``.
GRADINGS = {
    "grading-error": lambda: Grading(0.0, False, yardstick="outsider:v1", error=TreacherousText("the grader gave up")),
    "check-error": lambda: Grading(0.0, False, yardstick="outsider:v1", checks=[Check("c", False, error=TreacherousText("no time"))]),
    "check-detail": lambda: Grading(0.0, False, yardstick="outsider:v1", checks=[Check("c", False, detail=TreacherousText("too long"))]),
    "check-name": lambda: Grading(0.0, False, yardstick="outsider:v1", checks=[Check(TreacherousText("named"), False)]),
    "yardstick": lambda: Grading(1.0, True, yardstick=TreacherousText("outsider:v1"), checks=[Check("c", True)]),
}


class OutsiderSets:
    """``outsider.graded``: one prompt per entry of :data:`GRADINGS`."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The sets."""
        prompts = [GoldenPrompt(id=case_id, prompt="Say x", reference="x", assertions=[Assertion.contains("x")]) for case_id in GRADINGS]
        return [GoldenPromptSet(identifier="outsider.graded", name="Prompts for a treacherous grader", prompts=prompts)]


#: Set identifiers ``evalkit run`` refuses, each shipped by :class:`UnusableNameSets`: a control
#: character, whitespace, an accent written as ``e`` and a combining mark (not NFC), upper case.
UNUSABLE_IDENTIFIERS = ("outsider.\x1b[2Jcleared", "outsider.two words", "outsider.cafe\u0301", "Outsider.Upper")
#: A deployment name not in Unicode normal form NFC (``--deployment`` is read in NFC: it never matches).
UNUSABLE_DEPLOYMENT = "stag\u0301ing"


class UnusableNameSets:
    """With ``$OUTSIDER_UNUSABLE_NAMES`` set: a prompt set under each of :data:`UNUSABLE_IDENTIFIERS`
    and one usable (``outsider.usable``), a question set whose provider ships the deployment
    :data:`UNUSABLE_DEPLOYMENT` and ``production``. ``evalkit list`` showed each as runnable, the
    identifier raw. Ships nothing without the variable."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """The sets (none without ``$OUTSIDER_UNUSABLE_NAMES``)."""
        import os

        if not os.environ.get("OUTSIDER_UNUSABLE_NAMES"):
            return []
        prompts = [GoldenPrompt(id="a", prompt="Say x", reference="x")]
        return [GoldenPromptSet(identifier=i, name="An outsider's set", prompts=prompts) for i in (*UNUSABLE_IDENTIFIERS, "outsider.usable")]

    def golden_question_sets(self) -> list:
        """One question set (none without ``$OUTSIDER_UNUSABLE_NAMES``)."""
        import os

        from evalkit.questions import GoldenQuestion, GoldenQuestionSet

        if not os.environ.get("OUTSIDER_UNUSABLE_NAMES"):
            return []
        return [GoldenQuestionSet(identifier="outsider.questions", name="Q", questions=[GoldenQuestion(id="q", question="q?", expected_document_ids=("d",))])]

    def default_deployments(self) -> dict:
        """A deployment whose name is not NFC, and one that is."""
        return {UNUSABLE_DEPLOYMENT: {"evalkit.lexical": {}}, "production": {"evalkit.lexical": {}}}


class TreacherousTextGrader:
    """Grades each prompt with its entry of :data:`GRADINGS`."""

    yardstick = "outsider:v1"

    def grade(self, prompt, answer) -> Grading:
        """The prompt's grading."""
        return GRADINGS[prompt.id]()


class Shapeless:
    """A factory that builds the wrong thing: no ``generate``, ``grade``, ``retrieve`` nor
    ``begin_run`` — what a plugin author meets when the entry point names a helper class instead
    of the component (``outsider.shapeless`` as a generator, a grader and a repository)."""

    def __init__(self, options=None, url=None) -> None:
        """Takes whatever evalkit passes."""
        self.options, self.url = options, url


class UnreadableStore:
    """A results store (``outsiderdisk://…``) whose disk is gone: every method raises ``OSError``,
    as a third-party store's own client does. Met outside a run (``evalkit show``, ``compare``,
    ``report``), that was said as evalkit's internal error, with a traceback."""

    def __init__(self, url: str) -> None:
        """Opens nothing."""
        self.url = url

    def _gone(self, *args, **kwargs):
        raise OSError(5, "Input/output error", self.url)

    begin_run = record_cases = finish_run = get_run = _gone


class MisshapenStore:
    """A results store (``outsidermisshapen://…``) that gives back what is no ``Run``:
    ``begin_run`` returns ``None`` (it forgot the ``return``), ``get_run`` the run's record as a
    dict. ``evalkit run`` ended in an internal error (``TypeError: exceptions must derive from
    BaseException``), ``evalkit show`` in one (``'dict' object has no attribute …``)."""

    def __init__(self, url: str) -> None:
        """Opens nothing."""
        self.url = url

    def begin_run(self, run):
        """Keeps nothing, returns nothing."""

    def record_cases(self, run_id, cases, privacy) -> None:
        """Keeps nothing."""

    def finish_run(self, run_id, status, finished_at, **what):
        """Keeps nothing, returns nothing."""

    def get_run(self, run_id, with_cases=True):
        """The run as a dict."""
        return {"id": run_id}


class SlottedMisshapenStore:
    """:class:`MisshapenStore` with ``__slots__`` (``outsiderslotted://…``): its instance takes no
    attribute, so evalkit, which once replaced the methods of a store's instance to check what
    they give back, left it unchecked, and ``evalkit show`` ended in an internal error
    (``'dict' object has no attribute …``), ``evalkit run`` in one (``TypeError: exceptions
    must derive from BaseException``)."""

    __slots__ = ("url",)

    def __init__(self, url: str) -> None:
        """Opens nothing."""
        self.url = url

    def begin_run(self, run):
        """Keeps nothing, returns nothing."""

    def record_cases(self, run_id, cases, privacy) -> None:
        """Keeps nothing."""

    def finish_run(self, run_id, status, finished_at, **what):
        """Keeps nothing, returns nothing."""

    def get_run(self, run_id, with_cases=True):
        """The run as a dict."""
        return {"id": run_id}


#: What the forging plugins raise: printed with its line break, it reads as a line of evalkit's own.
FORGED = "the app is down\nevalkit: ok, every case passed\x1b[32m"


class ForgingGenerator:
    """A generator that cannot be created, and says why in two lines (:data:`FORGED`): the second
    was printed as a line of its own under ``evalkit: error: generator … raised RuntimeError when
    created: the app is down``."""

    def __init__(self, options=None) -> None:
        """Fails."""
        raise RuntimeError(FORGED)


class ForgingSets:
    """A set provider whose listing fails with :data:`FORGED` when ``$OUTSIDER_FORGE`` is set (the
    ``provider failed:`` line under an unknown set printed its line break)."""

    def golden_prompt_sets(self) -> list[GoldenPromptSet]:
        """No sets, or the failure."""
        import os

        if os.environ.get("OUTSIDER_FORGE"):
            raise RuntimeError(FORGED)
        return []


class QuotedConcurrencyGenerator:
    """A generator that declares ``concurrency = "4"`` (read from its own configuration file, as
    text): a run passed it over for 8 prompts in flight, unsaid."""

    concurrency = "4"

    def __init__(self, **table) -> None:
        """Takes its table as it is (it declares no ``Options``)."""

    def generate(self, request):
        """Answers "x"."""
        from evalkit import Answer

        return Answer(text="x", model="m")


#: The notes ``outsider.odd_note`` declares, by its ``note`` option: none a run can show.
ODD_NOTES = {"newline": "served by the replay\nevalkit: ok", "number": 5, "huge": "n" * 100_000}


class OddNoteGenerator:
    """A generator whose ``echoed_model_note`` (what the run says when the reported model equals
    the alias sent) is one of :data:`ODD_NOTES`, by its ``note`` option: each was passed over for
    the default note, unsaid."""

    def __init__(self, note="newline", **table) -> None:
        """Declares the note its ``note`` option names."""
        self.echoed_model_note = ODD_NOTES[note]

    def generate(self, request):
        """Answers "x", reporting the model it was asked for."""
        from evalkit import Answer

        return Answer(text="x", model="m")


class OddSecretsGenerator:
    """A generator whose ``secret_values()`` is of a shape evalkit cannot use, by its ``secrets``
    option: ``[5]`` (no text), ``5`` (no iterable), or its key as one ``str`` (read letter by
    letter): the first was accepted unsaid, the last kept the key in sight."""

    def __init__(self, secrets="list", **table) -> None:
        """Declares the secrets its ``secrets`` option names."""
        self.shape = secrets

    def secret_values(self):
        """The ill-shaped declaration."""
        return {"list": [5], "number": 5, "text": "sk-outsider-0123456789"}[self.shape]

    def generate(self, request):
        """Answers "x"."""
        from evalkit import Answer

        return Answer(text="x", model="m")


class PagingStore:
    """A results store (``outsiderpaged:///path.db``: SQLite underneath, evalkit's own store
    composed, not inherited) that streams a run's cases, and whose connection is lost after the
    first page: the iterator ``iter_cases`` returns yields the first case, then raises ``OSError``
    — from the client's cursor (``$OUTSIDER_PAGED_LOST=cursor``), from a generator of the
    store's own (``=generator``), or not at all (unset)."""

    def __init__(self, url: str) -> None:
        """Opens the SQLite store the URL's path names."""
        from evalkit.storage import open_repository

        self.sql = open_repository("sqlite://" + url.partition("://")[2])

    def __getattr__(self, name: str):
        return getattr(self.sql, name)

    def begin_run(self, run):
        """As SQLite's."""
        return self.sql.begin_run(run)

    def record_cases(self, run_id, cases, privacy) -> None:
        """As SQLite's."""
        self.sql.record_cases(run_id, cases, privacy)

    def finish_run(self, run_id, status, finished_at, **what):
        """As SQLite's."""
        return self.sql.finish_run(run_id, status, finished_at, **what)

    def get_run(self, run_id, with_cases=True):
        """As SQLite's."""
        return self.sql.get_run(run_id, with_cases)

    def case_tally(self, run_id):
        """As SQLite's."""
        return self.sql.case_tally(run_id)

    def paired_cases(self, run_id, baseline_id):
        """As SQLite's."""
        return self.sql.paired_cases(run_id, baseline_id)

    def record_cases_as_stored(self, run_id, cases, privacy):
        """As SQLite's."""
        return self.sql.record_cases_as_stored(run_id, cases, privacy)

    def iter_cases(self, run_id, *, notable_only=False):
        """The run's cases, until the connection is lost after the first."""
        import os

        lost = os.environ.get("OUTSIDER_PAGED_LOST")
        cases = self.sql.iter_cases(run_id, notable_only=notable_only)
        if lost == "generator":
            return self._pages(cases)
        if lost == "cursor":
            return _LosingCursor(cases)
        return cases

    def _pages(self, cases):
        yield next(cases)
        raise OSError(104, "Connection reset by peer", "outsiderpaged")

    def close(self) -> None:
        """Closes the SQLite store."""
        self.sql.close()


class _LosingCursor:
    """A database client's cursor whose connection is lost after one row."""

    def __init__(self, rows) -> None:
        self.rows, self.read = rows, 0

    def __iter__(self):
        return self

    def __next__(self):
        self.read += 1
        if self.read > 1:
            raise OSError(104, "Connection reset by peer", "outsiderpaged")
        return next(self.rows)


class SpendingStore(PagingStore):
    """A results store (``outsiderspending:///path.db``: SQLite underneath, as :class:`PagingStore`)
    offering ``RunSpending``, whose ``case_usage`` yields, after its first stored case's row, the
    row ``$OUTSIDER_USAGE`` names (:data:`USAGE_ROWS`: a row of three or seven values, a count that
    is text, a NaN, negative or huge token count, a bool for a count, …). Each ended ``evalkit run``
    in an internal error (exit 3, "an evalkit bug"). Unset: the rows as SQLite's."""

    def case_usage(self, run_id):
        """The stored rows, the first followed by the hostile one ``$OUTSIDER_USAGE`` names."""
        import os

        rows = list(self.sql.case_usage(run_id))
        kind = os.environ.get("OUTSIDER_USAGE")
        if kind is None or not rows:
            return iter(rows)
        return iter([rows[0], USAGE_ROWS[kind]()])


def _usage(**counts):
    from evalkit.answers import Usage

    return Usage(**counts)


#: The rows :class:`SpendingStore` yields, by ``$OUTSIDER_USAGE``.
USAGE_ROWS = {
    "short": lambda: (None, (), None),
    "long": lambda: (None, (), None, False, 1, 1, "extra"),
    "dict": lambda: {"usage": None},
    "text_count": lambda: (None, (), None, False, "3", 1),
    "bool_count": lambda: (None, (), None, False, 1, True),
    "negative_count": lambda: (None, (), None, False, -1, 1),
    "huge_count": lambda: (None, (), None, False, 1, 10**30),
    "nan_tokens": lambda: (_usage(input_tokens=float("nan"), output_tokens=1, total_tokens=1), (), None, False, 1, 1),
    "negative_tokens": lambda: (_usage(input_tokens=-5, output_tokens=1, total_tokens=1), (), None, False, 1, 1),
    "huge_tokens": lambda: (_usage(input_tokens=10**40, output_tokens=1, total_tokens=1), (), None, False, 1, 1),
    "usage_dict": lambda: ({"prompt_tokens": 3}, (), None, False, 1, 1),
    "judge_usage": lambda: (None, ("x\x1b[2J\nevalkit: ok",), None, False, 1, 1),
    "errored_text": lambda: (None, (), None, "no", 1, 1),
    "source": lambda: (None, (), 7, False, 1, 1),
}


class HistoryStore(MisshapenStore):
    """A results store (``outsiderhistory://…``) that lists runs (``recent_runs``), handing back
    what ``$OUTSIDER_RECENT`` names: ``dict`` a run's record as ``{}``, ``typed`` a ``Run`` whose
    ``started_at`` is text, ``hostile`` one whose id clears the screen and forges a line, ``cases`` a run
    whose case is no ``CaseResult``. Each ended ``evalkit history`` in an internal error (an
    evalkit bug), or printed the hostile text."""

    def recent_runs(self, set_identifier=None, limit=20):
        """The listing ``$OUTSIDER_RECENT`` names."""
        import os

        from evalkit.runs import Run

        kind = os.environ.get("OUTSIDER_RECENT", "dict")
        if kind == "dict":
            return [{}]
        if kind == "typed":
            return [Run(id="r-1", set_identifier="s", grader="g", started_at="yesterday")]
        if kind == "hostile":
            return [Run(id="r\x1b[2J\nevalkit: ok", set_identifier="s", grader="g")]
        if kind == "cases":
            return [Run(id="r-1", set_identifier="s", grader="g", cases=({"case_id": "c"},))]
        return [Run(id="r-1", set_identifier="s", grader="g", started_at=1.0e9)]

    def purge_older_than(self, cutoff):
        """Purges nothing."""
        return 0


class CaseHistoryStore(HistoryStore):
    """A results store (``outsidercasehistory://…``) with a complete retrieval run of set ``s``
    and the ``case_history`` capability (what ``evalkit flaky`` reads), handing back what
    ``$OUTSIDER_CASE_HISTORY`` names: ``dict`` a run's outcomes as ``{}``, ``text`` outcomes by a
    case id that is no text, ``typed`` an outcome whose ``passed`` is text, ``none`` no list at
    all; anything else, a flaky case whose id clears the screen and forges a line. Each ended
    ``evalkit flaky`` in an internal error, or printed what it was given."""

    def recent_runs(self, set_identifier=None, limit=20):
        """One complete retrieval run of set ``s``."""
        from evalkit.runs import Run, RunKind, RunStatus

        return [Run(id="r-1", set_identifier="s", grader="g", started_at=1.0e9, kind=RunKind.RETRIEVAL,
                    status=RunStatus.COMPLETE, retriever="outsider.r")]

    def case_history(self, scope, *, runs=20, case_ids=None):
        """The outcomes ``$OUTSIDER_CASE_HISTORY`` names."""
        import os

        from evalkit.storage.values import CaseOutcome, RunOutcomes

        kind = os.environ.get("OUTSIDER_CASE_HISTORY", "dict")
        if kind == "dict":
            return [{}]
        if kind == "none":
            return None
        if kind == "text":
            return [RunOutcomes("r-1", 1.0e9, {7: CaseOutcome("c", True)})]
        if kind == "typed":
            return [RunOutcomes("r-1", 1.0e9, {"c": CaseOutcome("c", "yes")})]
        hostile = "c\x1b[2J\nevalkit: ok"  # a case id that clears the screen and forges a line
        return [RunOutcomes(f"r-{n}", 1.0e9 - n, {hostile: CaseOutcome(hostile, n % 2 == 0)}) for n in range(3)]


class ExactScoreGrader:
    """A grader that scores with exact numbers (``outsider.decimal_score``: ``Decimal("0.75")``,
    ``outsider.fraction_score``: ``Fraction(3, 4)``), as a grader summing exact weights does: each
    was refused (``score must be a finite number in 0..1, got Decimal('0.75')``), failing every case."""

    yardstick = "outsider:exact"

    def __init__(self, exact=None, **table) -> None:
        """Scores with ``exact``: a ``Decimal``, or a ``Fraction`` for the fraction grader."""
        self.exact = exact

    def grade(self, prompt, answer) -> Grading:
        """Three quarters, exactly; passed."""
        from decimal import Decimal

        return Grading(Decimal("0.75") if self.exact is None else self.exact, True, yardstick=self.yardstick)


def fraction_score_grader(**table) -> ExactScoreGrader:
    """:class:`ExactScoreGrader` scoring ``Fraction(3, 4)``."""
    from fractions import Fraction

    return ExactScoreGrader(Fraction(3, 4))
