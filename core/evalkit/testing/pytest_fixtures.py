"""What the evalkit pytest plugin adds once active: fixtures, and installed sets as test cases."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import attrs
import pytest

from ..wording import counted, quoted

__all__ = ["TemporaryStore", "evalkit_run", "evalkit_store"]


# pytest prints the names of the items below and their failure messages as they are: they are
# this plugin's output, made safe here, in the two functions that hand text to pytest.
def _shown(text: object) -> str:
    """``text`` as a test's name or heading: on one line, secrets scrubbed, control characters visible."""
    from ..printable import visible
    from ..privacy import remove_secrets, secrets_to_hide

    return visible(remove_secrets(str(text), secrets_to_hide()))


#: The characters pytest's node ids give meaning to (pytest 9 parses an id back into its parts:
#: ``::`` separates names, ``[`` begins a test's parameters): in a name they are written as
#: :func:`~evalkit.printable.visible` writes a control character, so every id reads back as it was made.
_NODE_ID_SYNTAX = str.maketrans({":": "\\x3a", "[": "\\x5b", "]": "\\x5d"})

#: The name of each set's regression-gate test. It holds a ``:``, which no case's name can hold
#: (:func:`_node_name` writes it ``\x3a``): a case of any id, ``regression-gate`` included, is
#: never the gate's namesake, so ``-k``, ``--deselect`` and ``--lf`` never take one for the other.
GATE_NAME = "evalkit:regression-gate"


def _node_name(text: object) -> str:
    """``text`` as an item's or collector's name: :func:`_shown`, and no node-id syntax in it (an id
    ``a::b`` or ``x[1]``, and every set's ``evalkit-set[…]`` collector, broke ``--lf``: a failed
    case's id read back as another, so every case ran again). A backslash, which begins each of
    these escapes, is written ``\\x5c`` first: ids ``a:b`` and ``a\\x3ab`` made one name, two tests
    of one node id. Secrets are hidden before that: a key holding a backslash, once written
    ``\\x5c``, was no longer found, and was shown."""
    from ..printable import visible
    from ..privacy import remove_secrets, secrets_to_hide

    scrubbed = remove_secrets(str(text), secrets_to_hide())
    return visible(scrubbed.replace("\\", "\\x5c")).translate(_NODE_ID_SYNTAX)


def _fail(message: str) -> NoReturn:
    """Fail the current test with ``message`` (its lines kept), made safe as :func:`_shown` does."""
    from ..printable import visible
    from ..privacy import remove_secrets, secrets_to_hide

    pytest.fail(visible(remove_secrets(message, secrets_to_hide()), keep="\n"), pytrace=False)


def _usage_error(message: str) -> pytest.UsageError:
    """pytest's usage error (exit 4) saying ``message`` (its lines kept), made safe as :func:`_shown`
    does: it quotes the set ids as typed, and a provider's failures (an unknown set id with an OSC
    sequence retitled the terminal)."""
    from ..printable import visible
    from ..privacy import remove_secrets, secrets_to_hide

    return pytest.UsageError(visible(remove_secrets(message, secrets_to_hide()), keep="\n"))


@attrs.frozen
class TemporaryStore:
    """A fresh SQLite results store for one test."""

    path: Path

    @property
    def url(self) -> str:
        """The database URL to pass as ``database=``."""
        return f"sqlite:///{self.path}"

    def runs(self, set_identifier: str | None = None) -> list[Any]:
        """The stored runs (newest first), with their cases."""
        from ..storage import open_repository

        repository = open_repository(self.url)
        try:
            return [repository.get_run(r.id) for r in repository.recent_runs(set_identifier, limit=1_000)]
        finally:
            repository.close()


@pytest.fixture
def evalkit_store(tmp_path: Path) -> TemporaryStore:
    """A temporary SQLite results store (``.url`` for ``database=``, ``.runs()`` to read it back)."""
    return TemporaryStore(tmp_path / "evalkit-results.db")


@pytest.fixture
def evalkit_run(evalkit_store: TemporaryStore) -> Callable[..., Any]:
    """``evalkit_run(set_id, provider=None, **options)`` → :class:`evalkit.RunOutcome`, stored in ``evalkit_store``.

    ``options`` are :func:`evalkit.evaluate_set`'s (``model``, ``grader``, ``tolerances``…).
    """
    from ..run.library import evaluate_set

    def run(set_id: Any, provider: str | None = None, **options: Any) -> Any:
        options.setdefault("database", evalkit_store.url)
        return evaluate_set(set_id, provider=provider, **options)

    return run


class GoldenSetRun(pytest.Collector):
    """One ``--evalkit-set``: its cases as tests and the regression gate; the set runs once, on first use."""

    def __init__(self, *, set_id: str, prompts: Iterable[Any], bound: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.set_id = set_id
        self.prompts = prompts
        #: The generator that answers, bound before the tests are named (:func:`_bound_generator`);
        #: ``None`` when binding it failed, which the run then reports. The run closes it.
        self.bound = bound
        self.handed_over = False
        self._outcome: Any = None
        self._failure: str | None = None
        #: Each case as graded, with its check details whatever the privacy level keeps in the store.
        self.graded: dict[str, Any] = {}

    def collect(self) -> list[pytest.Item]:
        """One item per case, then the gate; a usage error for two cases of one name (:func:`_case_names`)."""
        names = _case_names(self.set_id, [p.id for p in self.prompts])
        items: list[pytest.Item] = [GoldenCase.from_parent(self, name=n, case_id=p.id) for n, p in zip(names, self.prompts, strict=True)]
        items.append(RegressionGate.from_parent(self, name=GATE_NAME))
        return items

    def outcome(self) -> Any:
        """Run the set (once) with the options the session was given."""
        if self._outcome is None and self._failure is None:
            from ..config import load_config
            from ..errors import EvalkitError, RunInterrupted
            from ..run.library import evaluate_set

            option = self.config.getoption
            try:
                with _options_named():
                    config = load_config(option("evalkit_config"))
                    self.handed_over = True
                    self._outcome = evaluate_set(
                        self.set_id, provider=option("evalkit_provider"), model=option("evalkit_model"),
                        grader=option("evalkit_grader"), strict_grader=True, config=config,
                        database=option("evalkit_database"), bound_generator=self.bound,
                        on_case=lambda case: self.graded.__setitem__(case.case_id, case),
                    )
            except RunInterrupted as exc:
                if exc.cause is not None:  # a plugin's BaseException stopped it: this set's failure
                    self._failure = f"evalkit could not run {self.set_id}: {exc}"
                else:  # Ctrl-C: the session stops (exit 2), as it does for Ctrl-C in any other test
                    pytest.exit(_shown(f"evalkit: {exc}"), returncode=pytest.ExitCode.INTERRUPTED)
            except EvalkitError as exc:
                self._failure = f"evalkit could not run {self.set_id}: {exc}"
        if self._failure is not None:
            _fail(self._failure)
        return self._outcome


def _case_names(set_id: str, case_ids: list[str]) -> list[str]:
    """The test name of each case (:func:`_node_name`), or a usage error naming two cases that get
    one name: ids that differ only in a secret the generator declares (``key-<its key>`` and
    ``key-***``) are both written with the secret hidden, and pytest would run, report and select
    them as one test. The cases are named by their place in the set and their shown name, the
    secret still hidden. Two cases of one id (a set ``evalkit run`` refuses) are refused so too:
    pytest ran them as two tests of one node id, each failing as the run refused the set."""
    names = [_node_name(case_id) for case_id in case_ids]
    first: dict[str, int] = {}
    for number, name in enumerate(names):
        if name in first and case_ids[first[name]] == case_ids[number]:  # as evalkit run refuses the set
            raise _usage_error(f'--evalkit-set: set {quoted(set_id)}: cases #{first[name] + 1} and #{number + 1} have one id, {quoted(name)}; give each case its own')
        if name in first:
            raise _usage_error(
                f'--evalkit-set: set {quoted(set_id)}: cases #{first[name] + 1} and #{number + 1} are both named {quoted(name)} '
                "once secrets are hidden, and pytest cannot tell one test from the other: give one an id that "
                "differs outside the secret"
            )
        first[name] = number
    return names


def _bound_generator(config: pytest.Config, run_config: Any) -> Any:
    """The generator the sets' runs use, bound now, before their tests are named: binding it
    remembers the secrets it declares, so they are hidden in the node ids that pytest prints (the
    generator was bound only when the first test ran, and ``-v`` showed a case id holding the key
    as it was). ``None`` when it cannot be bound; the run then says why, as before."""
    from ..components import bind_generator
    from ..errors import EvalkitError

    try:
        return bind_generator(run_config, config.getoption("evalkit_provider"), config.getoption("evalkit_model"))
    except EvalkitError:
        return None


def _learn_grader_secrets(config: pytest.Config, run_config: Any, bound: Any, prompts: list[Any]) -> None:
    """Build the grader the set's run will build, and bind its judges as the run binds them (a
    judge grader's judge; the judge of rubric checks, for a set that has them), then close it:
    binding a judge remembers the secrets its provider instance declares, so they are hidden in the
    node ids pytest prints, as the generator's are (:func:`_bound_generator`). A judge was bound
    only when the set ran, after the tests were named, and a case id holding the judge's key showed
    in ``-v``, ``--collect-only`` and JUnit XML. Nothing is called; a grader that cannot be built
    or bound is the run's to report, as before."""
    from .. import components
    from ..errors import PLUGIN_FAILURES
    from ..event_loops import run_to_completion
    from ..prompts import Assertion

    if bound is None:
        return
    grading: Any = None
    try:
        grading, _ = components.load_grader(config.getoption("evalkit_grader") or "deterministic", strict=True, config=run_config)
        if components.offers(grading, components.JudgeGrader):
            grading.bind_judge(run_config, bound)
        judged = tuple(p.id for p in prompts if any(isinstance(a, Assertion) and a.judged for a in p.assertions))
        if judged and components.offers(grading, components.RubricJudging):
            grading = grading.with_rubric_judge(run_config, bound, judged)
    except PLUGIN_FAILURES:  # a refusal, or a grader plugin raising: the run meets it again and reports it
        pass
    close = getattr(grading, "aclose", None)
    if callable(close):
        try:
            run_to_completion(close)
        except PLUGIN_FAILURES:  # a judge failing to close must not fail the collection
            pass


class GoldenCase(pytest.Item):
    """One case of the set: fails with the checks that failed."""

    def __init__(self, *, case_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_id = case_id

    def runtest(self) -> None:
        """Look the case up in the run and fail with its failed checks (an unnamed check by its
        kind, as ``evalkit run`` shows it)."""
        from ..prompts import displayed_check_name

        outcome = self.parent.outcome()
        case = self.parent.graded.get(self.case_id) or next((c for c in outcome.run.cases if c.case_id == self.case_id), None)
        if case is None:
            _fail(f"case {self.case_id!r} was not answered")
        if case.errored:
            _fail(f"the generator failed: {case.error}")
        if not case.passed:
            lines = [
                f"{displayed_check_name(check.name)}: " + (check.error or check.detail or "did not hold")
                for check in case.checks if not check.passed
            ] or [f"score {case.score:.2f} is below the pass mark"]
            _fail("failed checks:\n  " + "\n  ".join(lines))

    def reportinfo(self) -> tuple[Path, None, str]:
        """Where the case comes from, for the report's headings."""
        return self.path, None, _shown(f"{self.parent.set_id} case {self.case_id}")



class RegressionGate(pytest.Item):
    """The run compared with its baseline, as ``evalkit run --fail-on-regression`` decides."""

    def runtest(self) -> None:
        """Fail on a regression, an incomplete run, or a run that cannot be compared."""
        outcome = self.parent.outcome()
        verdict = outcome.verdict
        code = outcome.exit_code(fail_on_regression=True)
        if code == 3:
            _fail(f"run {outcome.run.id} is {outcome.run.status.value}: {counted(outcome.run.errored_count, 'case')} errored")
        if code == 1 and verdict.comparison is not None:
            _fail(verdict.comparison.summary())
        if code == 1:
            _fail(verdict.reason or "not compared")

    def reportinfo(self) -> tuple[Path, None, str]:
        """The gate's heading in reports."""
        return self.path, None, _shown(f"{self.parent.set_id} regression gate")


def pytest_configure(config: pytest.Config) -> None:
    """Refuse ``--evalkit-set``, or a set test's node id as an argument, in a session pytest-xdist
    spreads over workers (:func:`_spread_over`)."""
    from ..pytest_node_ids import selected_node_ids

    spread = _spread_over(config)
    if spread and (config.getoption("evalkit_set") or selected_node_ids(config)):
        raise _usage_error(
            f"--evalkit-set runs each set once, in one process, and {spread} would run it again in every worker "
            "given one of its tests (each run stored, each gate judging its own): run the sets with -p no:xdist "
            "(or -n 0), in a pytest session of their own"
        )


def _spread_over(config: pytest.Config) -> str | None:
    """What spreads this session's tests over processes (pytest-xdist's ``-n``/``--dist``), if anything."""
    if hasattr(config, "workerinput"):  # an xdist worker (its controller refuses first; a worker started otherwise)
        return "pytest-xdist"
    dist = getattr(config.option, "dist", "no")
    return f"pytest-xdist (--dist {dist})" if dist not in ("no", None) else None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Append the cases of each ``--evalkit-set`` (and its gate) to the collected tests: every one,
    or, for a set named by node ids on the command line, the tests those name (:func:`_add_sets`)."""
    with _options_named():
        _add_sets(session, config, items)


def _add_sets(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The work of :func:`pytest_collection_modifyitems`, within :func:`_options_named`."""
    from ..catalog import prompt_set_catalog
    from ..config import load_config
    from ..errors import EvalkitError

    given = list(config.getoption("evalkit_set"))
    selection = _Selection.of(config)
    rerun = _last_failed_sets(config) if not given and not selection.node_ids else {}
    if not given and not selection.node_ids and not rerun:
        return
    _refuse_blank_options(config)
    repeated = next((set_id for number, set_id in enumerate(given) if set_id in given[:number]), None)
    if repeated is not None:  # it ran twice, stored two runs, and reported each test twice under one id
        raise _usage_error(f'--evalkit-set: {quoted(repeated)} is given twice; name each set once')
    # each set to run, with the argument that named it: a set named only by node ids needs no --evalkit-set
    named_by = {set_id: "--evalkit-set" for set_id in given}
    for set_name, node_id in selection.set_names.items():
        if set_name not in {_node_name(set_id) for set_id in given}:
            named_by.setdefault(set_name, node_id)
    sets = []
    try:
        run_config = load_config(config.getoption("evalkit_config"))
        catalog = prompt_set_catalog(config=run_config)
    except EvalkitError as exc:  # the configuration's text is shown safely
        raise _usage_error(f"--evalkit-set: {exc}") from None
    for set_name, node_id in rerun.items():
        named_by.setdefault(set_name, f"--lf (the last failure {node_id})")
    for set_id, argument in named_by.items():
        try:
            if set_id in rerun and set_id not in catalog.sets and set_id not in catalog.duplicates:
                continue  # a set the cache remembers that is gone: nothing of it to rerun, as for a deleted test file
            golden_set = catalog.get(set_id).set
            sets.append((golden_set, _listed_cases(golden_set)))
        except EvalkitError as exc:  # the set's text (a set id as typed, too) is shown safely
            raise _usage_error(f"{argument}: {exc}") from None
    for golden_set, prompts in sets:
        name = f"evalkit-set:{_node_name(golden_set.identifier)}"
        bound = _bound_generator(config, run_config)
        _learn_grader_secrets(config, run_config, bound, prompts)  # before any name is made
        # The node id is the name, as a test file's is its path: made from the session's (""), it was
        # "::evalkit-set:…", and the documented id `--deselect evalkit-set:SET::CASE` named nothing.
        collector = GoldenSetRun.from_parent(
            session, name=name, nodeid=name, set_id=golden_set.identifier, prompts=prompts, bound=bound,
        )  # fmt: skip
        config.stash.setdefault(_SET_RUNS, []).append(collector)
        collected = selection.chosen(collector.collect())
        # Reported as collected, as pytest's own collection reports each collector: the header's
        # count ("collected 0 items / 4 deselected / -4 selected" under -k or --lf) and
        # --collect-only's summary ("no tests collected") left these items out.
        config.hook.pytest_collectreport(report=pytest.CollectReport(collector.nodeid, "passed", None, collected))
        items.extend(collected)
    selection.refuse_unmatched()


def _last_failed_sets(config: pytest.Config) -> dict[str, str]:
    """Under ``--lf`` with no test path, set or node id given: the sets pytest's cache remembers a
    failed test of (``evalkit-set:SET::CASE`` in ``cache/lastfailed``), each with the first such
    node id, so the last run's failures in them are rerun, as a test file's are. pytest cannot
    collect them itself: their node ids name no file. Empty otherwise (pytest's cache off too)."""
    cache = getattr(config, "cache", None)
    if cache is None or not config.getoption("lf", False) or config.args_source == pytest.Config.ArgsSource.ARGS:
        return {}
    remembered = cache.get("cache/lastfailed", {})
    sets: dict[str, str] = {}
    for node_id in remembered if isinstance(remembered, dict) else ():
        if isinstance(node_id, str) and node_id.startswith("evalkit-set:"):
            sets.setdefault(node_id.split("::", 1)[0].removeprefix("evalkit-set:"), node_id)
    return sets


#: The sets' collectors of this session, whose generators :func:`pytest_sessionfinish` closes if no test ran them.
_SET_RUNS = pytest.StashKey[list[GoldenSetRun]]()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Close the generator of each set whose run never began (every test of it deselected, or
    ``--collect-only``); a run closes its own."""
    from ..errors import PLUGIN_FAILURES
    from ..event_loops import run_to_completion

    for collector in session.config.stash.get(_SET_RUNS, []):
        if collector.bound is not None and not collector.handed_over:
            collector.handed_over = True
            try:
                run_to_completion(collector.bound.aclose)
            except PLUGIN_FAILURES:  # a generator failing to close must not fail the session
                pass


@attrs.define
class _Selection:
    """The node ids of set tests given on the command line (``evalkit-set:SET::CASE``, or
    ``evalkit-set:SET`` for every test of a set), which pytest itself cannot resolve: they name no
    file. A set named by one needs no ``--evalkit-set``; of such a set only the named tests are
    collected, as pytest collects only ``test_x.py::test_y`` of a file named so. A node id that
    names no test is pytest's usage error for one, ``not found: …`` (exit 4)."""

    node_ids: tuple[str, ...]
    matched: set[str] = attrs.Factory(set)

    @classmethod
    def of(cls, config: pytest.Config) -> _Selection:
        """The node ids the plugin took out of this session's arguments."""
        from ..pytest_node_ids import selected_node_ids

        return cls(selected_node_ids(config))

    @property
    def set_names(self) -> dict[str, str]:
        """The sets the node ids name, each once, in the order given, with the first node id naming it."""
        names: dict[str, str] = {}
        for node_id in self.node_ids:
            names.setdefault(node_id.split("::", 1)[0].removeprefix("evalkit-set:"), node_id)
        return names

    def chosen(self, collected: list[pytest.Item]) -> list[pytest.Item]:
        """Of one set's tests, those the node ids name (all of them when none names the set)."""
        if not collected:
            return collected
        prefix = collected[0].parent.nodeid
        named = [node_id for node_id in self.node_ids if node_id == prefix or node_id.startswith(prefix + "::")]
        if not named:
            return collected
        chosen = [item for item in collected if prefix in named or item.nodeid in named]
        self.matched.update(node_id for node_id in named if node_id == prefix or any(item.nodeid == node_id for item in chosen))
        return chosen

    def refuse_unmatched(self) -> None:
        """pytest's usage error for a node id that names no test (it says ``not found: ID``)."""
        unmatched = [node_id for node_id in self.node_ids if node_id not in self.matched]
        if unmatched:
            raise _usage_error("\n".join(f"not found: {node_id}\n(no test of that node id in its set)" for node_id in unmatched))


def _listed_cases(golden_set: Any) -> list[Any]:
    """The set's prompts, listed once to name its tests; a :class:`~evalkit.PromptStream` whose
    producer fails raises :class:`~evalkit.errors.SetValidationError` saying so, as ``evalkit run``
    refuses the set (it was pytest's INTERNALERROR, with the plugin's traceback)."""
    from ..errors import PLUGIN_FAILURES, EvalkitError, SetValidationError
    from ..validation import stream_failure

    listed: list[Any] = []
    produced: Any = None
    while True:
        try:
            produced = iter(golden_set.prompts) if produced is None else produced
            listed.append(next(produced))
        except StopIteration:
            return listed
        except EvalkitError:  # a stream past evalkit's limit says so itself
            raise
        except PLUGIN_FAILURES as exc:
            raise SetValidationError([f'set {quoted(golden_set.identifier)}: field prompts: {stream_failure(len(listed) + 1, exc)}']) from None


#: The options a set's run reads, each with what to give instead of nothing.
_RUN_OPTIONS = (
    ("evalkit_provider", "--evalkit-provider", "name the configured provider instance"),
    ("evalkit_model", "--evalkit-model", "name the model alias"),
    ("evalkit_grader", "--evalkit-grader", "name the grader"),
    ("evalkit_database", "--evalkit-database", "give the results database's URL"),
    ("evalkit_config", "--evalkit-config", "name the configuration file"),
)


#: The library's argument behind each run option, where it is not the option's own name
#: (``load_config``'s ``path`` is ``--evalkit-config``).
_OPTION_OF_ARGUMENT = {"path": "--evalkit-config"} | {name.removeprefix("evalkit_"): flag for name, flag, _ in _RUN_OPTIONS}


def _option_of(argument: str) -> str | None:
    """This plugin's option for the library argument ``argument`` (``provider`` → ``--evalkit-provider``),
    ``None`` for one it has no option for (then the message names the keyword)."""
    return _OPTION_OF_ARGUMENT.get(argument)


def _options_named() -> Any:
    """A block in which a refusal of the library names this plugin's ``--evalkit-*`` option for the
    argument it refuses (:func:`evalkit.wording.arguments_named`): it named the library's keyword
    (``path is empty``, ``choose one with provider``), or, before that, ``evalkit``'s own ``--config``,
    neither an option of pytest's. Held only while the plugin calls the library with its options;
    a test's own ``evaluate_set(...)`` call (the ``evalkit_run`` fixture) keeps the keywords."""
    from ..wording import arguments_named

    return arguments_named(_option_of)


def _refuse_blank_options(config: pytest.Config) -> None:
    """A usage error for a run option given empty (``--evalkit-database "$URL"`` with the variable
    unset): it meant "not given", and the run went to the default store, where no baseline is, so
    the gate passed as a first run. ``evalkit run --database ""`` is refused the same way."""
    for name, flag, instead in _RUN_OPTIONS:
        value = config.getoption(name)
        if value is not None and not str(value).strip():
            raise _usage_error(f"{flag} is empty; {instead}, or leave the option out")
