"""Checking set files, installed sets, deployments and provider instances without running them
(``evalkit validate``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from . import registry
from .config import Config
from .errors import PluginError, SetValidationError
from .project_files import ProjectBoundary
from .setfiles import (
    SUFFIXES,
    FileProblem,
    SetFileError,
    SetFiles,
    SkippedFile,
    SkippedPrompt,
    load_configured_sets,
    load_set_files,
    passed_over,
    set_files_and_unreadable_under,
)
from .shapes import bounded_problem, bounded_problems
from .wording import counted, did_you_mean, path_named, quoted, table_key

__all__ = ["ConfiguredProblem", "SetProblem", "ValidationReport", "check_everything", "check_targets"]

#: The entry-point group of the adapters a provider instance names (``adapter = "ID"``).
GENERATORS = "evalkit.generators"
#: The entry point of the provider that reads the configured set files (``[sets] paths``).
FILES_PROVIDER = "evalkit.files"


@attrs.frozen
class SetProblem:
    """A problem with an installed set (or with finding it): the set and the reason, cut to
    :data:`~evalkit.shapes.MAX_PROBLEM_CHARS` (it may quote a provider's exception or a validator's issue)."""

    target: str
    reason: str = attrs.field(converter=bounded_problem)

    def __str__(self) -> str:
        return f"{self.target}: {self.reason}"

    def as_dict(self) -> dict[str, object]:
        """The machine-readable form."""
        return {"set": self.target, "reason": self.reason}


@attrs.frozen
class ConfiguredProblem:
    """Why something the configuration names cannot run here: a deployment
    (:func:`~evalkit.retrieval.deployments.deployment_problems`, a sentence naming it; ``name``
    ``None`` when the deployments a question-set provider ships could not be read), or a provider
    instance whose adapter is no installed generator or cannot be loaded (:func:`provider_problems`).
    ``kind`` (``deployment``, ``provider``) is the key of its name in the machine-readable form; the
    reason is cut as a :class:`SetProblem`'s is."""

    kind: str
    name: str | None
    reason: str = attrs.field(converter=bounded_problem)

    def __str__(self) -> str:
        return self.reason

    def as_dict(self) -> dict[str, object]:
        """The machine-readable form: ``{KIND: NAME, "reason": …}``."""
        return {self.kind: self.name, "reason": self.reason}


@attrs.frozen
class ValidationReport:
    """What was checked (one line each) and every problem found."""

    checked: tuple[str, ...] = ()
    problems: tuple[FileProblem | SetProblem | ConfiguredProblem, ...] = ()
    #: Prompts the set files keep but mark ``skip: REASON`` (checked, never run), and files passed
    #: over as no set file (:class:`~evalkit.setfiles.SkippedFile`).
    skipped: tuple[SkippedPrompt | SkippedFile, ...] = ()

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` document."""
        return {
            "valid": not self.problems, "checked": list(self.checked), "problems": [p.as_dict() for p in self.problems],
            "skipped": [s.as_dict() for s in self.skipped],
        }  # fmt: skip


def _kinds() -> dict[str, Any]:
    from .hooks import assertion_kinds, plugin_manager

    manager, _ = plugin_manager()
    return assertion_kinds(manager)


def _file_lines(loaded: SetFiles, root: Path | None) -> list[str]:
    """The set files read without a problem (``ok``), then the sets they declare. A set file whose
    template's table has a problem failed, though the problem is the table's (``loaded.failed``)."""
    failed = set(loaded.failed)
    lines = []
    for path in loaded.files:
        shown = str(path.relative_to(root)) if root is not None and path.is_relative_to(root) else str(path)
        if path not in failed:
            lines.append(f"{shown}")
    return lines + [_describe(s) for s in (*loaded.prompt_sets, *loaded.question_sets, *loaded.calibration_sets)]


def _describe(item: Any) -> str:
    """``set myapp.faq (1 prompt)``: a checked set as `evalkit validate` lists it."""
    members = getattr(item, "prompts", None)
    noun = "prompt"
    if members is None and hasattr(item, "items") and hasattr(item, "labels"):
        return f"calibration set {item.identifier} ({counted(len(item.items), 'labelled item')}, {item.grader} judge)"
    if members is None:
        members, noun = getattr(item, "questions", ()), "question"
    return f"set {item.identifier} ({counted(len(members), noun)})"


def _installed(
    config: Config,
    kinds: dict[str, Any],
    wanted: Iterable[str] | None,
    on_check: Callable[[Any], None] | None = None,
    questions: Any = None,
) -> tuple[list[str], list[Any], set[str], SetFileError | None]:
    """Kernel validation of installed sets (all, or the ``wanted`` identifiers); ``on_check`` hears
    how far the check of each prompt set has come (see :func:`check_everything`); ``questions``:
    the question-set catalog when the caller has read it already (each provider is asked once).

    Also returns the identifiers found and the set files' refusal, if the configured files are invalid.
    """
    from .calibration import calibration_set_problems
    from .catalog import calibration_set_catalog, prompt_set_catalog, question_set_catalog
    from .retrieval.validation import question_set_problems
    from .validation import prompt_set_problems

    checked: list[str] = []
    problems: list[Any] = []
    found: set[str] = set()
    refused: SetFileError | None = None
    failed: list[Any] = []  # providers that failed: every set checked, or a wanted set not found
    want = set(wanted) if wanted is not None else None
    for catalog, rules in (
        (prompt_set_catalog(config=config), lambda s: prompt_set_problems(s, kinds, on_check)),
        (questions if questions is not None else question_set_catalog(config=config), question_set_problems),
        (calibration_set_catalog(config=config), calibration_set_problems),
    ):
        for failure in catalog.failures:
            if isinstance(failure.exception, SetFileError):
                refused = failure.exception
                continue  # the set files are checked (and reported) on their own
            where = failure.plugin
            if isinstance(failure.exception, SetValidationError):  # a provider's own list: each problem, as `list sets`
                # shows them, so the count is theirs (its line of those not kept counts as them)
                failed.extend(SetProblem(where, problem) for problem in failure.exception.problems)
            else:
                failed.append(SetProblem(where, failure.reason))
        for identifier in catalog.duplicates:
            if want is None or identifier in want:
                found.add(identifier)
                problems.append(SetProblem(identifier, catalog.clash(identifier)))
        for identifier, sourced in catalog.sets.items():
            if want is not None and identifier not in want:
                continue
            if sourced.record.name == FILES_PROVIDER and want is None:
                continue  # already checked as files
            found.add(identifier)
            # a question or calibration set's check does not stop at MAX_PROBLEMS_KEPT itself
            issues = bounded_problems(rules(sourced.set))
            problems.extend(SetProblem(identifier, issue) for issue in issues)
            if not issues:
                checked.append(f"{_describe(sourced.set)} from {sourced.record.describe()}")
    if want is None or not want <= found:
        problems += failed
    return checked, problems, found, refused


def _clashes_with_installed(loaded: SetFiles, config: Config) -> list[SetProblem]:
    """A problem for each set the named files declare whose identifier an installed provider of
    its kind also ships, worded as the configured files' clashes are (:func:`~evalkit.catalog.clash`):
    `evalkit validate evals/mine.yaml` said ``ok`` of a set `evalkit validate` and `evalkit run`
    refuse (configured), or whose runs would share the installed set's baselines in the store.
    The files provider's own listing is no clash (it reads these very files, or others that
    `evalkit validate` checks); a provider that fails is the business of `evalkit validate SET`."""
    from .catalog import calibration_set_catalog, clash, prompt_set_catalog, question_set_catalog
    from .registry import PluginRecord

    here = PluginRecord("", FILES_PROVIDER, "", "", "")  # stands for the named file in the clash's wording
    problems: list[SetProblem] = []
    for declared, catalog_of in (
        (loaded.prompt_sets, prompt_set_catalog),
        (loaded.question_sets, question_set_catalog),
        (loaded.calibration_sets, calibration_set_catalog),
    ):
        if not declared:
            continue
        catalog = catalog_of(config=config)
        for item in declared:
            shipped = catalog.duplicates.get(item.identifier) or (
                (catalog.sets[item.identifier].record,) if item.identifier in catalog.sets else ()
            )
            installed = [record for record in shipped if record.name != FILES_PROVIDER]
            if not installed:
                continue
            at = f"the set file {loaded.declared_at[item.identifier]}"
            problems.append(SetProblem(item.identifier, clash((here, *installed), {here: at})))
    return problems


def _deployments(config: Config, questions: Any) -> tuple[list[str], list[ConfiguredProblem]]:
    """Every deployment the configuration and the question-set providers of ``questions`` (a
    catalog) define: one line for each that can run as far as can be told without importing its
    retriever, a problem for each that cannot — the check ``evalkit list deployments`` makes
    (:func:`~evalkit.retrieval.deployments.deployment_problems`), and for each whose name
    ``--deployment`` can never choose (:func:`~evalkit.retrieval.deployments.unusable_deployment`,
    which ``list deployments`` marks unusable). A provider whose
    ``default_deployments()`` fails is a problem, and the configuration's deployments are still checked."""
    from .retrieval.deployments import deployment_problems, known_deployments, unusable_deployment

    problems: list[ConfiguredProblem] = []
    try:
        deployments = known_deployments(config, questions.sets.values())
    except PluginError as exc:
        problems.append(ConfiguredProblem("deployment", None, str(exc)))
        deployments = known_deployments(config)
    cannot = deployment_problems(deployments)
    checked = []
    for name, choice in sorted(deployments.items()):
        # a provider's name --deployment never matches (not NFC, a hidden character): `list
        # deployments` marks it unusable, in the same words
        unusable = unusable_deployment(name)
        if unusable is not None:
            problems.append(ConfiguredProblem("deployment", name, unusable))
        if name in cannot:
            problems += (ConfiguredProblem("deployment", name, reason) for reason in cannot[name])
        elif unusable is not None:
            continue
        elif choice.retriever is None:
            checked.append(f"deployment {quoted(name)} (names no retriever: `evalkit retrieval` is given one)")
        else:
            checked.append(f"deployment {quoted(name)} (runs retriever {quoted(choice.retriever)})")
    return checked, problems


def provider_problems(config: Config) -> dict[str, str]:
    """Why each configured provider instance that cannot run here cannot, one sentence each, told
    without importing any plugin (:func:`evalkit.registry.unusable_choices`: its adapter is no
    installed generator — with a "did you mean" — one switched off by ``EVALKIT_DISABLE_PLUGINS``,
    one declared twice, or one whose module is not found). ``evalkit list providers`` and
    ``evalkit validate`` say these, exit 2."""
    adapters = {name: instance.adapter for name, instance in config.providers.items()}
    return registry.unusable_choices(GENERATORS, adapters, lambda name: f"provider {quoted(name)} uses")


def _providers(config: Config) -> tuple[list[str], list[ConfiguredProblem]]:
    """Every configured provider instance: one line for each whose adapter can run as far as can
    be told without importing it, a problem for each that cannot (:func:`provider_problems`)."""
    cannot = provider_problems(config)
    checked = [
        f"provider {quoted(name)} (adapter {quoted(instance.adapter)})"
        for name, instance in sorted(config.providers.items()) if name not in cannot
    ]  # fmt: skip
    return checked, [ConfiguredProblem("provider", name, reason) for name, reason in sorted(cannot.items())]


#: The plugin option tables of the configuration whose names are plugins' ids, each with the
#: entry-point groups a name may come from and the key of its name in the machine-readable form.
OPTION_TABLES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("graders", ("evalkit.graders",), "grader"),
    ("set_providers", ("evalkit.golden_sets", "evalkit.question_sets", "evalkit.calibration_sets"), "set_provider"),
)


def _option_tables(config: Config) -> list[ConfiguredProblem]:
    """A problem for each ``[graders."NAME"]`` or ``[set_providers."NAME"]`` table whose name no
    installed distribution declares in its groups (one switched off by ``EVALKIT_DISABLE_PLUGINS``
    is declared): its options would apply to nothing, silently — a misspelled ``[graders.decison]``
    ran the decision grader with its default threshold. With a "did you mean" from the names that
    are declared. Told without importing any plugin, as :func:`provider_problems` tells its own."""
    problems = []
    for table, groups, kind in OPTION_TABLES:
        written = config.raw.get(table)
        if not isinstance(written, dict):
            continue
        declared = {record.name for group in groups for record in registry.records(group)}
        for name in sorted(n for n in written if n not in declared):
            reason = (
                f"[{table}.{table_key(name, always_quoted=True)}] holds the options of {kind.replace('_', ' ')} {quoted(name)}, "
                f"which no installed distribution declares: they apply to nothing.{did_you_mean(name, sorted(declared))}"
            )
            problems.append(ConfiguredProblem(kind, name, reason))
    return problems


def check_everything(config: Config, on_check: Callable[[Any], None] | None = None) -> ValidationReport:
    """Every configured set file, every installed set, every deployment (:func:`_deployments`),
    every configured provider instance (:func:`_providers`) and every grader's and set provider's
    option table (:func:`_option_tables`).
    ``on_check`` hears how far the check of each installed prompt set has come (a
    :class:`~evalkit.validation.CheckProgress`: see :func:`~evalkit.validation.survey_prompt_set`'s ``progress``)."""
    from .catalog import question_set_catalog

    kinds = _kinds()
    loaded = load_configured_sets(config, kinds)
    questions = question_set_catalog(config=config)
    checked, problems, _, _ = _installed(config, kinds, None, on_check, questions)
    deployments, refused = _deployments(config, questions)
    providers, unusable = _providers(config)
    return ValidationReport(
        tuple(_file_lines(loaded, config.root) + checked + deployments + providers),
        (*loaded.problems, *problems, *refused, *unusable, *_option_tables(config)),
        loaded.skipped,
    )


def check_targets(targets: Sequence[str], config: Config, on_check: Callable[[Any], None] | None = None) -> ValidationReport:
    """The named files, folders and installed set identifiers. A file named is read wherever it is
    (the user chose it); a file under a named folder only when it resolves inside that folder, the
    project, or a place ``[sets] allow_outside`` lists. ``on_check``: as :func:`check_everything`'s."""
    kinds = _kinds()
    files: list[Path] = []
    identifiers: list[str] = []
    empty: list[SetProblem] = []
    outside: list[FileProblem] = []
    folders: list[Path] = []
    for target in targets:
        path = Path(target)
        try:
            found = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            found = None
        except OSError:  # cannot even be looked up (a name too long): a file, whose reader says why
            files.append(path)
            continue
        if found is not None and stat.S_ISDIR(found.st_mode):
            inside, unreadable = set_files_and_unreadable_under(path)
            outside += (FileProblem(str(file), f"is in the folder {path_named(target)} but {cause}") for file, cause in unreadable)
            if not inside and not unreadable:  # `evalkit validate evals/` of a folder with no set file is no success
                empty.append(SetProblem(target, f"is a folder holding no set file ({', '.join(SUFFIXES)})"))
            # the folder is named, so read wherever it is; a link in it that leads out of it and
            # out of the project is not (evals/creds.yaml -> ~/.aws/credentials)
            boundary = ProjectBoundary.of(config).allowing([path])
            folders.append(path)
            for file in inside:
                reason = boundary.outside(os.path.abspath(file))
                if reason is None:
                    files.append(file)
                else:
                    outside.append(FileProblem(str(file), reason))
        elif found is not None or path.suffix.lower() in SUFFIXES:
            files.append(path)
        else:
            identifiers.append(target)
    # a table of variables a set file names is read where the project, [sets] allow_outside or a
    # folder named here allows: naming a set file does not vouch for the files it names
    # the configuration file and the files it names for another job (a replay provider's answers)
    # are no set files, named or under a folder named: `evalkit validate .` read them as sets
    files, passed = passed_over(files, config)
    loaded = load_set_files(files, kinds, None, ProjectBoundary.of(config).allowing(folders)) if files else SetFiles()
    checked = _file_lines(loaded, None)
    problems: list[Any] = [*empty, *outside, *loaded.problems, *_clashes_with_installed(loaded, config)]
    if identifiers:
        more, found_problems, found, refused = _installed(config, kinds, identifiers, on_check)
        checked += more
        problems += found_problems
        missing = [i for i in identifiers if i not in found]
        if missing and refused is not None:
            # the sets may be in a configured file that is invalid
            problems += [SetProblem(i, "is not among the installed sets; the configured set files are invalid, it may be declared there") for i in missing]
            problems += refused.file_problems
        elif missing:
            problems += [SetProblem(i, "is neither a file nor an installed set (see `evalkit list sets`)") for i in missing]
    return ValidationReport(tuple(checked), tuple(dict.fromkeys(problems)), (*passed, *loaded.skipped))
