"""A run's settings, declared once: the keywords of :func:`~evalkit.run.library.evaluate_set` and
:func:`~evalkit.run.library.evaluate_retrieval`.

Each keyword is a field of an attrs class — :class:`PromptRunSettings` for a prompt run,
:class:`RetrievalRunSettings` for a retrieval run, both :class:`RunSettings`, which holds what
the two share. The field is the whole declaration of its keyword: its name, its default, the
kind of value it takes (checked first, so a wrong kind is refused by name:
:func:`~evalkit.arguments.check_arguments`), one line of help (the library functions'
docstrings and signatures are generated from it: :func:`documented`), whether a line that
continues a run repeats it as the option of the same name (:data:`SAID_KEYWORDS`), how
``evalkit run`` and ``evalkit retrieval`` give it — the click parameter that feeds it (``option``)
and the conversion that turns the command's parameters into its value (``conversion``, a name of
:data:`evalkit.cli.run_keywords.CONVERSIONS`; none: the option's value as given), which
:func:`evalkit.cli.run_keywords.library_keywords` reads — and, for a keyword the command line does
not give, why (``library_only``; a field declares one or the other, refused at import otherwise).
The keyword tables of
docs/api.md are generated from it too (:mod:`evalkit.option_tables`). A keyword no field declares
is refused with a "did you mean" (:func:`structured`) — it was Python's own ``TypeError`` of an
unexpected keyword, and the hand-kept lists (the signatures, the kinds, the keywords a continuing
line repeats) could say different things.

Adding a setting is adding a field here (with the ``option`` that gives it on the command line,
declared with the command's other options), then reading it where the run is planned
(:mod:`evalkit.run.library`): the commands give it without an edit of their own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from ..arguments import (
    CALLBACK,
    DATABASE,
    FLAG,
    FOLDER,
    OPTIONAL_NAME,
    OPTIONAL_OPTIONS,
    OPTIONAL_TEXT,
    PLUGINS,
    SECONDS,
    TEXT,
    WORDS,
    Kind,
    check_arguments,
    optional,
)
from ..components import BoundGenerator
from ..config import Config
from ..errors import UnknownKeywordError
from ..gate_settings import GateSettings
from ..prompts import GoldenPromptSet
from ..tolerance import Tolerances
from ..wording import did_you_mean, quoted
from .placement import Shard

if TYPE_CHECKING:
    from ..baseline_file import BaselineFile
    from ..runs import CaseResult, Run
    from ..validation import CheckProgress

__all__ = [
    "DECLARATIONS", "SAID_KEYWORDS", "PromptRunSettings", "RetrievalRunSettings", "RunSettings", "command_line_problems",
    "documented", "prompt_run_kinds", "said_words", "structured",
]  # fmt: skip

Settings = TypeVar("Settings", bound="RunSettings")


def setting(
    default: Any, help: str, *, kind: Kind | None = None, said: bool = False, option: str | None = None,
    conversion: str | None = None, library_only: str | None = None,
) -> Any:  # fmt: skip
    """A keyword's field: its ``default``, its one line of ``help``, the ``kind`` of value it takes
    (``None``: checked by its own rule as the run is planned), whether a continuing line repeats it
    as the option of its name (``said``), how the command line gives it — the click parameter that
    feeds it (``option``, as click names it: ``wait_ready`` for ``--wait-ready``) and the
    conversion of the command's parameters into its value (``conversion``, a name of
    :data:`evalkit.cli.run_keywords.CONVERSIONS`; ``None``: the option's value as given) — or why
    the command line does not give it (``library_only``)."""
    metadata = {
        "help": help, "kind": kind, "said": said, "option": option, "conversion": conversion, "library_only": library_only,
    }  # fmt: skip
    return attrs.field(default=default, metadata=metadata)


def _is_baseline_file(value: Any) -> bool:
    from ..baseline_file import BaselineFile  # here: only a run given one imports it

    return value is None or isinstance(value, BaselineFile)


_BASELINE_FILE: Kind = ("an evalkit.baseline_file.BaselineFile (read_baseline_file()) or None", _is_baseline_file)


def _is_option_words(value: Any) -> bool:
    return value is None or (
        isinstance(value, (list, tuple))
        and all(isinstance(option, (list, tuple)) and all(isinstance(word, str) for word in option) for option in value)
    )


#: ``resumed_options``: each option as the list of its words (``[["--concurrency", "3"]]``), or None.
_OPTION_WORDS: Kind = ("a list or tuple of options, each a list or tuple of text (str), or None", _is_option_words)
_PROVIDER: Kind = (
    "the name of a configured provider instance or an adapter (a str) or None (a generator object "
    "goes in bound_generator=)",
    OPTIONAL_TEXT[1],
)
_COMMAND_ARGS: Kind = (f"{WORDS[0]} or None", lambda value: value is None or WORDS[1](value))


@attrs.frozen(kw_only=True)
class RunSettings:
    """The keywords a prompt run and a retrieval run share."""

    config: Config | None = setting(
        None, "an evalkit.config.Config; default: load_config(cwd=cwd)", kind=optional(Config),
        option="config", conversion="loaded_config",
    )  # fmt: skip
    database: str | None = setting(
        None, "the store's URL; default: EVALKIT_DATABASE_URL, the configuration's, .evalkit/results.db", kind=DATABASE,
        option="database", conversion="database_url",
    )  # fmt: skip
    tolerances: Tolerances | None = setting(
        None, "largest accepted drops; default: [gate], else 0.1 each", conversion="gate_of"
    )
    gate: GateSettings | None = setting(None, "the gate's method and settings; default: [gate]", conversion="gate_of")
    privacy: str | None = setting(
        None, '"metadata", "redacted" or "full"; default: the configuration\'s', kind=OPTIONAL_NAME, option="privacy"
    )
    label: str | None = setting(None, "a label kept with the run", kind=OPTIONAL_TEXT, option="label")
    run_id: str | None = setting(
        None, "the run's id (an existing run of that id is joined: a shard)", kind=OPTIONAL_TEXT,
        option="run_id", conversion="placement",
    )  # fmt: skip
    resume: bool = setting(
        False, "continue an unfinished run (run_id's, else the newest of the scope)", kind=FLAG,
        option="resume", conversion="placement",
    )  # fmt: skip
    shard: Shard | None = setting(
        None, "answer one slice of the run (needs run_id)", kind=optional(Shard), option="shard", conversion="placement"
    )
    baseline: str | None = setting(
        None, "a stored run to compare with instead of the accepted baseline", kind=OPTIONAL_TEXT, option="baseline"
    )
    baseline_file: BaselineFile | None = setting(
        None, "a baseline read from a file (read_baseline_file()), compared with instead of any stored run",
        kind=_BASELINE_FILE, option="baseline_file", conversion="baseline_file",
    )  # fmt: skip
    fail_on_new_failures: bool = setting(
        False, "an added or edited case that fails keeps the run from being accepted", kind=FLAG,
        option="fail_on_new_failures",
    )  # fmt: skip
    hook_plugins: Sequence[Any] = setting(
        (), "extra pluggy plugin objects for this call", kind=PLUGINS, library_only="plugin objects are built in code"
    )
    on_start: Callable[[Run, int], None] | None = setting(
        None, "called with (run, total) before the first case", kind=CALLBACK, conversion="callback"
    )
    on_case: Callable[[CaseResult], None] | None = setting(
        None, "called with each committed case", kind=CALLBACK, conversion="callback"
    )
    cwd: Path | None = setting(
        None, "the folder the configuration and the default store are found from", kind=FOLDER,
        library_only="the command line works from its own folder",
    )  # fmt: skip
    keep_cases: bool = setting(
        True, "False: the outcome's run comes without its cases", kind=FLAG, conversion="in_memory_store"
    )
    resumed_options: Sequence[Sequence[str]] | None = setting(
        None, "the options of the line that began the run, each as its words, kept with a new run", kind=_OPTION_WORDS,
        conversion="placement",
    )  # fmt: skip


@attrs.frozen(kw_only=True)
class PromptRunSettings(RunSettings):
    """The keywords of :func:`~evalkit.run.library.evaluate_set` (after the set)."""

    provider: str | None = setting(
        None, "a configured provider instance or an adapter; default: the only configured instance", kind=_PROVIDER,
        option="providers", conversion="this_provider",
    )  # fmt: skip
    model: str | None = setting(
        None, "the model alias to send instead of the instance's", kind=OPTIONAL_NAME, option="model"
    )
    grader: str = setting("deterministic", "an evalkit.graders name", kind=TEXT, option="grader")
    strict_grader: bool = setting(
        False, "refuse an unknown grader instead of falling back to deterministic", kind=FLAG, conversion="strict"
    )
    grader_options: Mapping[str, Any] | None = setting(
        None, 'the grader\'s options, e.g. {"judge": "judge-gpt", "repeats": 3}', kind=OPTIONAL_OPTIONS,
        conversion="judge_flags",
    )  # fmt: skip
    repeats: int | None = setting(
        None, "answer every prompt that many times; default: [run] repeats, else 1", option="repeats"
    )
    concurrency: int | None = setting(
        None, "prompts in flight at once; default: the configuration's", said=True, option="concurrency"
    )
    wait_ready: float | str = setting(
        0.0, 'how long the readiness probe may wait (60, "90s"); 0: it asks once', kind=SECONDS, said=True,
        option="wait_ready", conversion="wait_ready",
    )  # fmt: skip
    budget: Decimal | str | None = setting(
        None, "stop before spending more (needs the instance's prices)", said=True, option="budget"
    )
    max_requests: int | None = setting(None, "stop before sending more requests", said=True, option="max_requests")
    cache: bool | None = setting(
        None, "read and write the answer cache; default: [cache] enabled", kind=optional(bool), option="cache"
    )
    answers_from: str | None = setting(
        None, "reuse the answers of this stored run for the unchanged prompts", kind=OPTIONAL_TEXT, option="answers_from"
    )
    bound_generator: BoundGenerator | None = setting(
        None, "a generator object that answers instead of provider/model", kind=optional(BoundGenerator),
        library_only="a generator object is built in code",
    )  # fmt: skip
    command_args: Sequence[str] | None = setting(
        None, "the options a resume command repeats after the set; default: the run's own", kind=_COMMAND_ARGS,
        conversion="resume_args",
    )  # fmt: skip
    on_stored: Callable[[list[CaseResult]], None] | None = setting(
        None, "called after each commit with the cases stored", kind=CALLBACK, conversion="callback"
    )
    on_check: Callable[[CheckProgress], None] | None = setting(
        None, "hears how far the set's check has come", kind=CALLBACK, conversion="callback"
    )


@attrs.frozen(kw_only=True)
class RetrievalRunSettings(RunSettings):
    """The keywords of :func:`~evalkit.run.library.evaluate_retrieval` (after the set and the retriever)."""

    deployment: str | None = setting(
        None, "whose retriever options; default: $EVALKIT_DEPLOYMENT, else none", kind=OPTIONAL_TEXT, option="deployment"
    )
    concurrency: int = setting(1, "questions in flight at once", said=True, option="concurrency")
    k: int = setting(10, "the cut-off of recall@k and nDCG@k", said=True, option="k")
    relevance_threshold: int = setting(
        1, "the grade from which a judged document counts", said=True, option="relevance_threshold"
    )
    judge_unjudged: str | None = setting(
        None, "a configured instance that judges the top-k documents nobody judged", kind=OPTIONAL_NAME, said=True,
        option="judge_unjudged",
    )  # fmt: skip
    on_prepare: Callable[[str, float], None] | None = setting(
        None, "called with (retriever id, seconds so far) while prepare() runs", kind=CALLBACK, conversion="callback"
    )


#: Each library call's declaration of its keywords, by the call's name.
DECLARATIONS: dict[str, type[RunSettings]] = {
    "evaluate_set": PromptRunSettings,
    "evaluate_retrieval": RetrievalRunSettings,
}


def command_line_problems(declaration: type[RunSettings]) -> list[str]:
    """What of ``declaration`` says the command line both gives and does not give a keyword (an
    ``option`` or a ``conversion`` beside ``library_only``), or neither: one line each, naming the
    field. A field that says neither was a keyword ``evalkit run`` silently never gave."""
    problems = []
    for field in attrs.fields(declaration):
        given = field.metadata["option"] is not None or field.metadata["conversion"] is not None
        if given == (field.metadata["library_only"] is not None):
            named = f"{declaration.__name__}.{field.name}"
            problems.append(
                f"{named} says both how the command line gives it and that it is library-only" if given
                else f"{named} says neither the option or conversion the command line gives it by, nor library_only"
            )  # fmt: skip
    return problems


for _declaration in DECLARATIONS.values():
    if _problems := command_line_problems(_declaration):
        raise TypeError("; ".join(_problems))

#: The keywords that change what a run does and that a command line says with the option of the
#: same name (``concurrency=4``: ``--concurrency 4``): what the line that continues a library
#: call's run repeats when the caller gave one other than its default (:func:`said_words`),
#: besides what answers and grades the run (read from its header) and the store.
SAID_KEYWORDS = tuple(
    dict.fromkeys(
        field.name
        for declaration in (PromptRunSettings, RetrievalRunSettings)
        for field in attrs.fields(declaration)
        if field.metadata["said"]
    )
)


def kinds_of(declaration: type[RunSettings]) -> dict[str, Kind]:
    """The kind of each of ``declaration``'s keywords that declares one."""
    return {field.name: field.metadata["kind"] for field in attrs.fields(declaration) if field.metadata["kind"]}


def prompt_run_kinds(*names: str, **more: Kind) -> dict[str, Kind]:
    """The kinds of :func:`~evalkit.run.library.evaluate_set`'s keywords ``names``, with ``more``: a
    library call that takes some of them (:func:`~evalkit.run.estimate.estimate_set`,
    :func:`~evalkit.run.regrade.regrade_run`) checks them by the same rule, first
    (:func:`~evalkit.arguments.check_arguments`). ``set_identifier`` is the set's."""
    kinds = {**kinds_of(PromptRunSettings), "set_identifier": PROMPT_SET}
    return {**{name: kinds[name] for name in names}, **more}


def _is_prompt_set(value: Any) -> bool:
    from ..catalog import SourcedSet

    return isinstance(value, (str, GoldenPromptSet, SourcedSet))


def _is_question_set(value: Any) -> bool:
    from ..catalog import SourcedSet
    from ..questions import GoldenQuestionSet

    return isinstance(value, (str, GoldenQuestionSet, SourcedSet))


#: What :func:`~evalkit.run.library.evaluate_set`'s first argument takes.
PROMPT_SET: Kind = ("a set identifier (a str), a GoldenPromptSet or a SourcedSet", _is_prompt_set)
#: What :func:`~evalkit.run.library.evaluate_retrieval`'s first argument takes.
QUESTION_SET: Kind = ("a set identifier (a str), a GoldenQuestionSet or a SourcedSet", _is_question_set)


def structured(call: str, declaration: type[Settings], given: Mapping[str, Any]) -> Settings:
    """The keywords ``given`` to the library function ``call`` as its ``declaration``: a keyword it
    does not declare is refused (:class:`~evalkit.errors.UnknownKeywordError`, naming it, with the
    declared ones close to it), then one of the wrong kind (a usage error naming it)."""
    declared = attrs.fields_dict(declaration)
    for name in given:
        if name not in declared:
            hint = did_you_mean(name, declared) or f" help(evalkit.{call}) lists the {len(declared)} it takes."
            raise UnknownKeywordError(f"{call}: there is no keyword argument {quoted(name)}.{hint}")
    settings = declaration(**given)
    check_arguments(call, {name: getattr(settings, name) for name in declared}, kinds_of(declaration))
    return settings


def said_words(settings: RunSettings) -> tuple[str, ...]:
    """The :data:`SAID_KEYWORDS` of ``settings`` given other than their default, as a command line's
    words (a wait in seconds as ``90s``)."""
    words: list[str] = []
    for field in attrs.fields(type(settings)):
        value = getattr(settings, field.name)
        if not field.metadata["said"] or value is None or value == field.default:
            continue
        words += ["--" + field.name.replace("_", "-"), f"{value:g}s" if field.name == "wait_ready" else str(value)]
    return tuple(words)


def documented(function: Callable[..., Any], leading: Sequence[inspect.Parameter], declaration: type[RunSettings]) -> None:
    """Give the library function ``function`` (which takes ``leading`` and then ``**settings``) the
    signature and the list of keywords ``declaration`` declares: ``help()``, ``inspect.signature``
    and an editor show every keyword, its default and what it is, from the one declaration."""
    keywords = [
        inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default, annotation=field.type)
        for field in attrs.fields(declaration)
    ]
    function.__signature__ = inspect.Signature([*leading, *keywords], return_annotation="Outcome")  # type: ignore[attr-defined]
    lines = [f"    * ``{field.name}={field.default!r}``: {field.metadata['help']}" for field in attrs.fields(declaration)]
    listed = "\n".join(lines)
    function.__doc__ = (
        f"{function.__doc__ or ''}\n\n    Keywords (declared by :class:`~{declaration.__module__}.{declaration.__qualname__}`;"
        f" any other is refused):\n\n{listed}\n"
    )
