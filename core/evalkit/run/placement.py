"""Where a run goes: its id, whether it resumes or joins a run, which slice of the set this process
answers (a shard), what a new run is stored with, and the command that continues a re-grade run
(:func:`regrade_again`: it is re-graded again, never resumed) or a run of a set built in code
(:func:`continuing_call`, known of a stored run by :func:`built_in_code`). Values only: the plan (:mod:`.plan`) and the
answering strategies (:mod:`.answering`) both use them, so they live below both."""

from __future__ import annotations

import re
import secrets
import time
import zlib
from collections.abc import Mapping, Sequence

import attrs

from ..errors import UsageError
from ..shapes import whole_number
from ..wording import argument, quoted, shell_line

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SET_BUILT_IN_CODE",
    "Placement",
    "Shard",
    "built_in_code",
    "check_run_id",
    "continuing_call",
    "continuing_command",
    "continuing_options",
    "continuing_words",
    "GRADER_OPTIONS_IN_CODE",
    "GRADER_PLUGIN",
    "GENERATOR_BUILT_IN_CODE",
    "JUDGE_OPTIONS",
    "REPEATS",
    "ANSWER_CACHE",
    "answering_options",
    "continued_in_code",
    "generator_options",
    "grader_plugin_of",
    "grading_options",
    "store_options",
    "unsaid_grader_options",
    "in_code_provenance",
    "new_run_id",
    "prompt_run_provenance",
    "regrade_again",
    "regrade_command",
    "regraded_from",
    "RESUMED_OPTIONS",
    "RETRIEVER_CHOSEN",
    "AS_TYPED",
    "as_typed",
    "retrieval_words",
    "retriever_chosen_provenance",
    "resumed_options",
    "stored_provenance",
    "with_latest_command",
    "with_resumed_options",
    "with_resumed_provenance",
    "without_options",
    "word_options",
]

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def new_run_id(now: float | None = None) -> str:
    """A sortable, unique run id: UTC time to the second plus random hex."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> None:
    """Refuse a run id a user gave that is not 1 to 64 letters, digits, ``.``, ``_``, ``:`` or ``-``."""
    if not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 80 else f"{run_id[:77]}..."

        raise UsageError(
            f'run id {quoted(shown)} must be 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit'
        )


#: The most slices a run is split into: more than any job array, and what the store keeps as a
#: 64-bit integer with room to spare (`--shard 1/99999999999999999999` failed storing the count).
MAX_SHARDS = 999_999_999


@attrs.frozen
class Shard:
    """Slice ``index`` (1-based) of ``count`` deterministic slices of a set; refused (a usage
    error) unless ``1 <= index <= count <= MAX_SHARDS``, however it was made."""

    index: int
    count: int

    def __attrs_post_init__(self) -> None:
        told = argument("shard", f"{self.index}/{self.count}")
        if not 1 <= self.count <= MAX_SHARDS:
            raise UsageError(f"{told}: N must be a whole number from 1 to {MAX_SHARDS:,}")
        if not 1 <= self.index <= self.count:
            raise UsageError(f"{told}: I must be between 1 and N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse ``I/N``."""
        left, _, right = text.partition("/")
        index, count = whole_number(left), whole_number(right)
        if index is None or count is None:
            raise UsageError(f"--shard must look like I/N (e.g. 2/4), got {quoted(text)}")
        return cls(index, count)

    def owns(self, case_id: str) -> bool:
        """True when the case belongs to this slice (stable across processes and machines)."""
        return zlib.crc32(case_id.encode("utf-8", "surrogatepass")) % self.count == self.index - 1


def continuing_words(run_id: str, shard: Shard | None) -> list[str]:
    """The words a command that continues run ``run_id`` ends with: ``--resume RUN_ID``, and for a
    ``shard`` its own ``--shard I/N --run-id RUN_ID`` — the shard is run again, its slice answered
    (a library caller calls again with the same ``shard`` and ``run_id``): a resume answers the
    whole run, and is refused while another shard answers it."""
    if shard is None:
        return ["--resume", run_id]
    return ["--shard", f"{shard.index}/{shard.count}", "--run-id", run_id]


def without_options(words: Sequence[str], options: Sequence[str]) -> list[str]:
    """``words`` (options, each with its value) without those named in ``options`` (and their
    values): a stopped run's line gives its higher ``--budget`` / ``--max-requests`` after the ones
    it was given, which it replaces, not repeats."""
    named = {word for word in options if word.startswith("--")}
    kept: list[str] = []
    skipping = False
    for word in words:
        if word.startswith("--"):
            skipping = word in named
        if not skipping:
            kept.append(word)
    return kept


def word_options(words: Sequence[str]) -> list[list[str]]:
    """``words`` (options, each with its value: ``--provider p --cache``) as a list of options, each
    the list of its words (``[["--provider", "p"], ["--cache"]]``), as :func:`continuing_command`
    takes them; words before the first option (none of a command line's) are an option of their own."""
    options: list[list[str]] = []
    for word in words:
        if word.startswith("--") or not options:
            options.append([word])
        else:
            options[-1].append(word)
    return options


def continuing_command(
    words: Sequence[str],
    options: Sequence[Sequence[str]],
    store: Sequence[str],
    ending: Sequence[str],
    limits: Sequence[str] = (),
) -> str:
    """``evalkit WORDS… OPTIONS… STORE… ENDING… LIMITS…``, quoted for a shell (:func:`shell_line`):
    the one builder of the command line that continues a run, the live one a command prints as it
    was given (:func:`evalkit.cli.resuming.resume_command`) and the one printed later from the
    stored run (:func:`evalkit.run.continuing.resume_hint`, from its :data:`RESUMED_OPTIONS`), so the two
    cannot say different things. ``words``: the command and its arguments (``("run", SET)``);
    ``options``: each option that changes what the run does as its words (``("--concurrency",
    "3")``), in the command's order; ``store``: the ``--config``/``--database`` words of the store
    the line is printed for; ``ending``: its place (:func:`continuing_words`); ``limits``: the
    higher spending limits a stopped run is continued with, which replace the options of those
    names rather than repeat them."""
    replaced = {word for word in limits if word.startswith("--")}
    kept = [word for option in options if option and option[0] not in replaced for word in option]
    return shell_line(["evalkit", *words, *kept, *store, *ending, *limits])


#: The key of a run's stored ``provenance`` that keeps the options of the latest command that began,
#: resumed or joined it (a run's shards: the latest to take its lease) which a line continuing it repeats (:func:`with_resumed_options`): a list of options, each the
#: list of its words as given (``["--concurrency", "3"]``, ``["--fail-on-regression"]``), in the
#: command's order, without the place (``--resume``, ``--shard``, ``--run-id``), the output's form,
#: the store's ``--config``/``--database`` (a line printed from the store names the store it was
#: read from) and the attempt's spending limits (:mod:`evalkit.run.limit_stops` keeps the higher
#: ones a stopped part needs). Absent for a run a library call began, and for a run stored before it was kept:
#: its line is made from the run's columns (:func:`continuing_options`).
RESUMED_OPTIONS = "resumed_options"


def with_resumed_options(run: Any, options: Sequence[Sequence[str]] | None) -> Any:
    """Stored ``run`` (a :class:`~evalkit.runs.Run` header) with ``options`` kept in its provenance
    under :data:`RESUMED_OPTIONS`; as it is for ``None`` (a library call typed no command)."""
    if options is None:
        return run
    return attrs.evolve(run, provenance=with_resumed_provenance(stored_provenance(run), options))


def with_resumed_provenance(
    provenance: Mapping[str, Any] | None, options: Sequence[Sequence[str]]
) -> dict[str, Any]:
    """A stored ``provenance`` document with ``options`` kept under :data:`RESUMED_OPTIONS` in place
    of what it kept: a later command resuming or joining the run keeps its own (the latest)."""
    return {**(provenance if isinstance(provenance, Mapping) else {}), RESUMED_OPTIONS: [list(o) for o in options if o]}


def resumed_options(run: Any) -> tuple[tuple[str, ...], ...] | None:
    """The options stored ``run`` keeps for a line that continues it (:data:`RESUMED_OPTIONS`);
    ``None`` when it keeps none, or what it keeps is not of that shape (an edited row, a third-party
    store: read as if nothing were kept)."""
    kept = stored_provenance(run).get(RESUMED_OPTIONS)
    if not isinstance(kept, list):
        return None
    options = []
    for option in kept:
        if not (isinstance(option, list) and option and all(isinstance(word, str) for word in option)):
            return None
        if not option[0].startswith("--"):
            return None
        options.append(tuple(option))
    return tuple(options)


def continuing_call(
    function: str,
    set_identifier: str,
    run_id: str,
    shard: Shard | None,
    limits: Sequence[str] = (),
    *,
    set_in_code: bool = True,
) -> str:
    """What continues run ``run_id`` of a set built in code, which no ``evalkit`` command finds:
    the library call ``function`` again, ``evalkit.evaluate_set(<the in-code set "ID">, <the same
    arguments>, run_id="RUN", resume=True)`` — a ``shard``'s ``shard=Shard(I, N), run_id="RUN"``
    (:func:`continuing_words` as keywords) — with ``limits`` (``--budget 2.5 --max-requests 40``,
    what a stopped budget asks for, or :func:`answering_options`) as keywords too (``budget="2.5",
    max_requests=40``; a flag such as ``--cache`` as ``cache=True``). An installed set answered by
    a generator built in code (``set_in_code`` false: :data:`GENERATOR_BUILT_IN_CODE`), which no
    ``--provider`` names, is continued by the call too, its set named as it was (``"arith.basic"``)."""
    placed = (
        f'shard=Shard({shard.index}, {shard.count}), run_id="{run_id}"'
        if shard is not None
        else f'run_id="{run_id}", resume=True'
    )
    keywords = [placed]
    words = list(limits)
    while words:
        option = words.pop(0)
        flag = not words or words[0].startswith("--")
        value = "True" if flag else words.pop(0)
        keywords.append(f"{option.lstrip('-').replace('-', '_')}={value if flag or value.isdigit() else quoted(value)}")
    named = f"<the in-code set {quoted(set_identifier)}>" if set_in_code else quoted(set_identifier)
    return f"evalkit.{function}({named}, <the same arguments>, {', '.join(keywords)})"


#: The key of a run's stored ``provenance`` (its JSON document) that says its set was built in code,
#: not found by the catalog: no ``evalkit`` command finds such a set (:func:`built_in_code`).
SET_BUILT_IN_CODE = "set_built_in_code"


def in_code_provenance(provenance: Mapping[str, Any] | None, in_code: bool) -> Mapping[str, Any] | None:
    """``provenance`` as a run stores it: with :data:`SET_BUILT_IN_CODE` when its set was built in
    code (``in_code``), so that a reader of the stored run (``history``, ``show``) names the
    library call that continues it, not a command that cannot find the set; as given otherwise."""
    return {**(provenance or {}), SET_BUILT_IN_CODE: True} if in_code else provenance


#: The key of a retrieval run's stored ``provenance`` that says its caller named no retriever: its
#: deployment chose it (``evalkit retrieval SET --deployment NAME``). A line continuing the run
#: names none either (:func:`retrieval_words`), as the command's own line does.
RETRIEVER_CHOSEN = "retriever_chosen_by_deployment"


def retriever_chosen_provenance(provenance: Mapping[str, Any] | None, chosen: bool) -> Mapping[str, Any] | None:
    """``provenance`` as a retrieval run stores it: with :data:`RETRIEVER_CHOSEN` when its
    deployment chose its retriever (``chosen``); as given otherwise."""
    return {**(provenance or {}), RETRIEVER_CHOSEN: True} if chosen else provenance


def retrieval_words(run: Any) -> list[str]:
    """``retrieval SET RETRIEVER``, the command and arguments of a line that continues stored
    retrieval ``run`` — without ``RETRIEVER`` when its deployment chose it (:data:`RETRIEVER_CHOSEN`),
    as the command that began it was typed and its own line said."""
    if stored_provenance(run).get(RETRIEVER_CHOSEN) is True:
        return ["retrieval", run.set_identifier]
    return ["retrieval", run.set_identifier, run.retriever or "RETRIEVER"]


#: The keys of a run's stored ``provenance`` that say how the latest command that began, resumed or
#: joined it was typed, which a line printed later from the store says as that command's own line
#: did: its options (:data:`RESUMED_OPTIONS`) and whether it left the retriever to the deployment
#: (:data:`RETRIEVER_CHOSEN`). A later command keeps its own in place of them all
#: (:func:`with_latest_command`).
AS_TYPED = (RESUMED_OPTIONS, RETRIEVER_CHOSEN)


def as_typed(run: Any) -> dict[str, Any]:
    """What stored ``run`` (or the header a command begins, resumes or joins it with) keeps of how
    its command was typed (:data:`AS_TYPED`)."""
    provenance = stored_provenance(run)
    return {key: provenance[key] for key in AS_TYPED if key in provenance}


def with_latest_command(provenance: Mapping[str, Any] | None, latest: Any) -> dict[str, Any]:
    """A stored ``provenance`` document with what the header ``latest`` keeps of how its command was
    typed (:func:`as_typed`) in place of what it kept: the run resumed or joined by a command, the
    line printed later from the store is that command's, not the first one's — a retriever typed on
    ``--resume`` is named, one left to the deployment is not, whatever the first process was typed."""
    kept = {key: value for key, value in (provenance if isinstance(provenance, Mapping) else {}).items() if key not in AS_TYPED}
    return {**kept, **as_typed(latest)}


#: The key of a prompt run's stored ``provenance`` that names the grader plugin it was graded by
#: (:func:`grader_plugin_of`): a finished run's grader column holds its yardstick, and a plugin's
#: yardstick need not start with its entry point's name (``keyword-coverage:v1:0.6`` of
#: ``keyword_coverage``).
GRADER_PLUGIN = "grader_plugin"


#: The key of a prompt run's stored ``provenance`` that says its generator was bound in code (a
#: library caller's ``bound_generator``) and is no installed provider: no ``--provider`` names it,
#: so the run is continued by its library call again (:func:`continued_in_code`), never by a command.
GENERATOR_BUILT_IN_CODE = "generator_built_in_code"

#: The key of a prompt run's stored ``provenance`` that says a library caller gave its grader
#: options no flag of ``evalkit run`` says (``grader_options={"threshold": 0.6}``;
#: :func:`unsaid_grader_options`): a command would grade the rest otherwise, so the run is continued by
#: its library call again (:func:`continued_in_code`), never by a command.
GRADER_OPTIONS_IN_CODE = "grader_options_in_code"

#: The key of a prompt run's stored ``provenance`` that keeps the judge options it was graded with
#: as given (``--judge``, ``--judge-repeats``, ``--allow-self-judge``, ``--judge-temperature``, or
#: their ``grader_options``): a command that continues it repeats them (:func:`grading_options`).
JUDGE_OPTIONS = "judge_options"

#: The judge flags a command line gives as grader options (``evalkit run``'s), by option name.
_JUDGE_FLAGS = {
    "judge": "--judge", "repeats": "--judge-repeats", "allow_self_judge": "--allow-self-judge",
    "temperature": "--judge-temperature",
}  # fmt: skip

#: The key of a prompt run's stored ``provenance`` that gives the answers per prompt it was started
#: with (``--repeats N``, or ``[run] repeats``), always: a resume with another number is refused (its
#: cases would mix them), and what a bare continuing command answers with is the configuration's
#: when the line is pasted, not when the run began (:func:`answering_options` compares them then).
REPEATS = "repeats"

#: The key of a prompt run's stored ``provenance`` that says it read and wrote the answer cache
#: (``--cache``): a resume without it asks the model for what the cache holds.
ANSWER_CACHE = "answer_cache"


def unsaid_grader_options(grader_options: Mapping[str, Any] | None) -> list[str]:
    """The names among ``grader_options`` that no flag of ``evalkit run`` says (all but the judge's:
    ``--judge``, ``--judge-repeats``, ``--allow-self-judge``, ``--judge-temperature``, each with a
    value a flag takes), sorted: a line that continues such a run is its library call."""
    return sorted(
        name
        for name, value in (grader_options or {}).items()
        if name not in _JUDGE_FLAGS or not (value is None or isinstance(value, str | int | float))
    )


def prompt_run_provenance(
    in_code: bool,
    grader: str,
    repeats: int = 1,
    cache: bool = False,
    *,
    grader_options: Mapping[str, Any] | None = None,
    generator_in_code: bool = False,
) -> Mapping[str, Any]:
    """What a prompt run stores as its ``provenance``: the grader plugin it is graded by
    (:data:`GRADER_PLUGIN`), whether its set was built in code (:func:`in_code_provenance`) or its
    generator (``generator_in_code``: :data:`GENERATOR_BUILT_IN_CODE`), and what a command that
    continues it repeats (:func:`answering_options`, :func:`grading_options`): its ``repeats``
    (:data:`REPEATS`), whether it used the answer ``cache`` (:data:`ANSWER_CACHE`) and the judge
    options among its ``grader_options`` (:data:`JUDGE_OPTIONS`), or that it has others no flag says
    (:data:`GRADER_OPTIONS_IN_CODE`)."""
    provenance = {**(in_code_provenance(None, in_code) or {}), GRADER_PLUGIN: grader, REPEATS: repeats}
    if cache:
        provenance[ANSWER_CACHE] = True
    if generator_in_code:
        provenance[GENERATOR_BUILT_IN_CODE] = True
    if unsaid_grader_options(grader_options):
        provenance[GRADER_OPTIONS_IN_CODE] = True
    judged = {
        name: value
        for name, value in (grader_options or {}).items()
        if name in _JUDGE_FLAGS and isinstance(value, str | int | float) and value is not False
    }
    if judged:
        provenance[JUDGE_OPTIONS] = judged
    return provenance


def grading_options(run: Any) -> list[str]:
    """The options with which stored prompt ``run`` was graded, as a command that continues it
    repeats them (:func:`prompt_run_provenance`): ``--grader NAME`` for a grader other than
    ``deterministic`` (without it the resume is graded by another grader, and refused), and the
    judge options it was given (``--judge NAME``, ``--judge-repeats K``, ``--allow-self-judge``,
    ``--judge-temperature T``; without them the resume asks the configuration's judge)."""
    grader = grader_plugin_of(run)
    words = ["--grader", grader] if grader and grader != "deterministic" else []
    judged = stored_provenance(run).get(JUDGE_OPTIONS)
    for name, value in (judged.items() if isinstance(judged, Mapping) else ()):
        option = _JUDGE_FLAGS.get(name)
        if option is None or value is None or value is False:
            continue
        words += [option] if value is True else [option, str(value)]
    return words


def store_options(config: object, database: str | None) -> tuple[str, ...]:
    """``--config PATH`` and ``--database URL`` (its passwords as ``***``:
    :func:`evalkit.storage.urls.hide_password`) for the configuration file and the store a run was
    read from or written to, as words: what a line continuing the run repeats, so that pasted it
    finds the run where it is (none for a ``None``). The CLI's words (:func:`evalkit.cli.resuming.store_words`)
    and a library call's (:func:`evalkit.evaluate_set`) alike."""
    from ..storage.urls import hide_password  # the store's URL rules only where a line is built

    words: list[str] = []
    if config is not None:
        words += ["--config", str(config)]
    if database is not None:
        words += ["--database", hide_password(database)]
    return tuple(words)


def answering_options(run: Any) -> list[str]:
    """The options besides its generator's with which stored prompt ``run`` was answered, as a
    command that continues it repeats them (:func:`prompt_run_provenance`): ``--cache`` (one
    without it asks the model for what the cache holds; with ``--privacy full`` for a run kept at
    ``full``: below it ``--cache`` is refused unless the configuration enables the cache, as it did
    for the run). Never ``--repeats``: a continuing command without it answers with the run's own
    (:func:`evalkit.evaluate_set`), whatever ``[run] repeats`` says when it is pasted. None when its
    store keeps no provenance."""
    words: list[str] = []
    if stored_provenance(run).get(ANSWER_CACHE) is True:
        words.append("--cache")
        if getattr(run, "privacy", None) == "full":
            words += ["--privacy", "full"]
    return words


def generator_options(run: Any, aliases: Mapping[str, str | None] | None = None) -> list[str]:
    """The ``--provider``/``--model`` that answer prompt run ``run`` again: its configured instance
    (``--provider NAME``, with ``--model ALIAS`` when the run's alias is not the instance's
    configured one in ``aliases``, each configured instance's model alias as the configuration says
    when the line is printed, ``None``: not known: a resume without it answers with that one, and is
    refused); for an ad-hoc run, which has no instance, its adapter (``--provider ADAPTER``) and the
    ``--model`` it was given; for the built-in reference instance (no provider configured), no
    ``--provider`` (``--provider reference`` names an ad-hoc reference generator, another run's),
    and a ``--model`` it was given."""
    from ..components import REFERENCE_INSTANCE  # here: the CLI's start-up budget (see above)

    if run.provider_instance == REFERENCE_INSTANCE and run.adapter == "reference":
        return ["--model", run.model_alias] if run.model_alias and run.model_alias != "reference" else []
    if run.provider_instance:
        known = aliases or {}
        other = run.provider_instance in known and known[run.provider_instance] != run.model_alias
        return [
            "--provider",
            run.provider_instance,
            *(["--model", run.model_alias] if other and run.model_alias else []),
        ]
    if not run.adapter:
        return []
    return ["--provider", run.adapter, *(["--model", run.model_alias] if run.model_alias else [])]


def continuing_options(
    run: Any, aliases: Mapping[str, str | None] | None = None, *, store: Sequence[str] = ()
) -> list[str]:
    """The options after the set of the command that continues prompt run ``run``, besides its
    place (:func:`continuing_words`) and limits: what answers it (:func:`generator_options`), what
    grades it (:func:`grading_options`), how (:func:`answering_options`) and ``--answers-from SOURCE`` for a run that reuses a stored run's
    answers (without it the model is asked for the rest). The one source of these words for every
    line built from a run rather than from a command line: a stored run's (``history``, ``show``,
    the viewer: :func:`evalkit.run.continuing.resume_hint`) and a library call's, whose caller typed no
    command (:func:`evalkit.evaluate_set` gives its run's header). ``aliases``: see
    :func:`generator_options`. ``store``: the ``--config`` and ``--database`` words of the store the
    line is printed from (:attr:`evalkit.run.continuing.ResumeDefaults.store`), after the generator's."""
    words = [*generator_options(run, aliases), *grading_options(run), *store, *answering_options(run)]
    if run.answers_reused == "answers-from" and run.source_run_id:
        words += ["--answers-from", run.source_run_id]
    return words


def grader_plugin_of(run: Any) -> str:
    """The grader plugin stored ``run`` was graded by, as ``--grader`` names it: the one its
    provenance records (:func:`prompt_run_provenance`), else (a run stored before it was recorded,
    or by a store that keeps no provenance) its grader column, which a finished run fills with its
    yardstick."""
    name = stored_provenance(run).get(GRADER_PLUGIN)
    return name if isinstance(name, str) and name else run.grader


def built_in_code(run: Any) -> bool:
    """True when stored ``run``'s set was built in code (:func:`in_code_provenance`)."""
    return stored_provenance(run).get(SET_BUILT_IN_CODE) is True


def continued_in_code(run: Any) -> bool:
    """True when stored ``run`` is continued by its library call, not by a command: its set
    (:func:`built_in_code`) or its generator (:data:`GENERATOR_BUILT_IN_CODE`) was built in code,
    or its grader given options no flag says (:data:`GRADER_OPTIONS_IN_CODE`)."""
    provenance = stored_provenance(run)
    return (
        built_in_code(run)
        or provenance.get(GENERATOR_BUILT_IN_CODE) is True
        or provenance.get(GRADER_OPTIONS_IN_CODE) is True
    )


def stored_provenance(run: Any) -> Mapping[str, Any]:
    """Stored ``run``'s provenance document, or an empty one (none stored, or not a mapping)."""
    provenance = run.provenance
    return provenance if isinstance(provenance, Mapping) else {}


def regraded_from(run: Any) -> str | None:
    """The id of the run whose answers ``run`` (a stored :class:`~evalkit.runs.Run`) re-grades;
    ``None`` for a run that is no re-grade."""
    return run.source_run_id if run.answers_reused == "regrade" and run.source_run_id else None


def regrade_command(source_run_id: str, options: Sequence[str] = ()) -> str:
    """``evalkit regrade SOURCE OPTIONS…``, quoted for a shell: the one command that continues a
    re-grade run of ``source_run_id``, stopped, killed or typed after ``run --resume`` alike. A
    re-grade is not resumed: it is made again, a new run (``evalkit run --resume`` would ask the
    model for the answers it only grades, and refuses a re-grade run)."""
    return shell_line(("evalkit", "regrade", source_run_id, *options))


def regrade_again(run: Any, store: Sequence[str] = ()) -> str | None:
    """The command that continues ``run`` when it is a re-grade (a stored :class:`~evalkit.runs.Run`):
    :func:`regrade_command` of its source with the options the ``evalkit regrade`` that made it was
    given (:data:`RESUMED_OPTIONS`: the line it printed), else (a library call's, a run stored before
    they were kept) the grader it was stored under, then ``store`` (the ``--config``/``--database``
    of the store the line is printed from); ``None`` for a run that is no re-grade (``evalkit run``
    or ``evalkit retrieval`` ``--resume`` continues it)."""
    source = regraded_from(run)
    if source is None:
        return None
    kept = resumed_options(run)
    options = [word for option in kept for word in option] if kept is not None else ["--grader", grader_plugin_of(run)]
    return regrade_command(source, (*options, *store))


@attrs.frozen
class Placement:
    """Which run this process answers, and which part of it.

    ``run_id`` names the run (``None``: a new run gets a fresh id); an existing run of that id is
    joined (a shard) or, with ``resume``, continued — ``resume`` without a ``run_id`` continues the
    newest unfinished run of the same scope. ``shard`` limits this process to one slice of the set
    (it needs a ``run_id``: every shard joins one run). ``label`` and ``privacy`` are stored with a
    new run; a joined or resumed run keeps the privacy level it was started with. ``options``: the
    command's options a line continuing the run repeats, stored with a new run (:func:`with_resumed_options`).
    """

    run_id: str | None = None
    resume: bool = False
    shard: Shard | None = None
    label: str | None = None
    privacy: str = "metadata"
    #: The options of the command that began the run which a line continuing it repeats, each as
    #: its words (:data:`RESUMED_OPTIONS`; ``None``: a library call), stored with a new run.
    options: tuple[tuple[str, ...], ...] | None = None
