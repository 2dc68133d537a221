"""Results storage: the repository protocols (:mod:`.protocols`), the values a store takes and
gives (:mod:`.values`), and the Peewee-backed implementation (:mod:`.sql`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..components import offers
from ..wording import path_named, quoted, table_key
from .plugin_store import PluginStore, plugin_store_failure, store_failure_said, unwrapped
from .protocols import (
    VERDICT_STATES,
    AcceptedBaselines,
    AnswerCache,
    CachedAnswer,
    CacheStats,
    Capabilities,
    CaseMark,
    CasePair,
    CaseTally,
    CaseUsage,
    ClosableRepository,
    FirstAcceptance,
    GeneratorScopedResults,
    JudgeCalibrations,
    ProviderModelQualityRuns,
    ProviderModelQualityScores,
    ResultRepository,
    ResumableRetrievalRuns,
    ResumableRuns,
    RevisableProvenance,
    RunHistory,
    RunLeases,
    RunSpending,
    RunVerdicts,
    StoredCaseForms,
    StoredVerdict,
    StreamedCases,
    capabilities,
)

__all__ = [
    "AcceptedBaselines",
    "AnswerCache",
    "CachedAnswer",
    "CacheStats",
    "RunSpending",
    "Capabilities",
    "CaseMark",
    "CasePair",
    "CaseUsage",
    "CaseTally",
    "ClosableRepository",
    "GeneratorScopedResults",
    "JudgeCalibrations",
    "ProviderModelQualityScores",
    "ResultRepository",
    "ResumableRuns",
    "RevisableProvenance",
    "RunHistory",
    "RunLeases",
    "StoredVerdict",
    "StreamedCases",
    "VERDICT_STATES",
    "capabilities",
    # older names of merged capabilities (see evalkit.storage.protocols)
    "FirstAcceptance",
    "ProviderModelQualityRuns",
    "ResumableRetrievalRuns",
    "RunVerdicts",
    "StoredCaseForms",
    "SQL_SCHEMES",
    "check_database_url",
    "close_repository",
    "runs_started_before",
    "stored_set_identifiers",
    "default_database_url",
    "is_in_memory",
    "database_source",
    "resolve_database_url",
    "counted_so_far",
    "missing_store",
    "sqlite_file",
    "open_repository",
    "plugin_store_failure",
    "PluginStore",
    "store_failure_said",
    "unwrapped",
    "url_scheme",
    "schema_status",
    "upgrade_schema",
]

#: URL schemes served by the built-in Peewee repository.
SQL_SCHEMES = ("sqlite", "postgres", "postgresql")
#: The schemes evalkit stores runs under itself, as an unknown scheme's message lists them.
BUILT_IN_REPOSITORIES = ("sqlite (built in)", "postgresql (built in)")


def is_in_memory(url: str) -> bool:
    """True for ``sqlite:///:memory:``, a store that keeps nothing after the process ends."""
    from .urls import is_in_memory as in_memory

    return in_memory(url)


def check_database_url(url: str) -> None:
    """Refuse (:class:`~evalkit.errors.StorageError`) a built-in store that cannot hold runs —
    no path, not a regular file, not SQLite, truncated, read-only, a malformed PostgreSQL URL —
    without connecting or creating anything. Other schemes are their repository's business."""
    from .urls import check_database_url as check
    from .urls import with_lower_scheme

    check(with_lower_scheme(url))


def _environment_url() -> str | None:
    """``EVALKIT_DATABASE_URL`` (``None`` when it is not set); set but empty or blank is refused.

    An empty value is what CI makes of a secret a job cannot read (a fork's pull request): read
    as "not set", every job would fall back to a store of its own and no gate would ever fire."""
    from ..environment import variable
    from ..errors import StorageError

    return variable(
        "EVALKIT_DATABASE_URL", "the results database's URL", "use the project's own store", error=StorageError
    )


def default_database_url(cwd: Path | None = None) -> str:
    """``EVALKIT_DATABASE_URL``, else a SQLite file under ``.evalkit/`` in ``cwd`` (the project root);
    an empty ``EVALKIT_DATABASE_URL`` is refused (:class:`~evalkit.errors.StorageError`)."""
    env = _environment_url()
    if env:
        return env
    return f"sqlite:///{(cwd or Path.cwd()) / '.evalkit' / 'results.db'}"


def database_source(explicit: str | None, config: Any) -> str:
    """Which setting chooses the database (:func:`resolve_database_url`'s order): ``"--database"``
    (``explicit``), ``"EVALKIT_DATABASE_URL"``, ``"config"`` (its ``database``) or ``"default"``."""
    if explicit:
        return "--database"
    if _environment_url() is not None:
        return "EVALKIT_DATABASE_URL"
    return "config" if getattr(config, "database", None) else "default"


def resolve_database_url(explicit: str | None, config: Any, cwd: Path | None = None) -> str:
    """The database to use: ``explicit`` (``--database``), ``EVALKIT_DATABASE_URL``, the config's
    ``database`` (a relative SQLite path is relative to the config file; a SQLite file outside the
    project is refused, see :func:`_check_store_inside_project`), then the default: SQLite under
    ``.evalkit/`` in the project root (the config file's folder, else ``cwd``), refused like the
    ``database`` it stands for when a link (``.evalkit`` itself) leads it out of a configured project."""
    from .urls import with_lower_scheme  # SQLITE:///x.db is sqlite:///x.db, wherever it was written

    source = database_source(explicit, config)
    if source == "--database":
        return with_lower_scheme(explicit)  # type: ignore[arg-type]
    if source == "EVALKIT_DATABASE_URL":
        return _well_formed(with_lower_scheme(_environment_url() or ""), "EVALKIT_DATABASE_URL")
    if source == "config":
        url: str = with_lower_scheme(config.database)
        if config.path is not None:  # as written there, before a relative SQLite path is resolved
            _well_formed(url, str(config.path))
        if url.startswith("sqlite:///") and not url.startswith(("sqlite:////", "sqlite:///~")) and config.path is not None:
            url = f"sqlite:///{config.root / url[len('sqlite:///'):]}"
        if config.path is not None:
            _check_store_inside_project(url, config)
        return url
    if getattr(config, "path", None) is not None:
        url = default_database_url(config.root)
        _check_store_inside_project(url, config, default=True)
        return url
    return default_database_url(cwd or getattr(config, "root", None))


def _well_formed(url: str, source: str) -> str:
    """``url`` when its form is one evalkit opens — a scheme, ``sqlite:///PATH`` spelt so, a
    PostgreSQL URL that parses (:mod:`.urls`) — else the refusal (:class:`~evalkit.errors.StorageError`,
    exit 2) prefixed with ``source``, where the URL was read (the configuration file, or
    ``EVALKIT_DATABASE_URL``), as the configuration's other errors name their file: the same
    refusal of ``--database`` needs no name, the user just typed it. A scheme no repository serves
    (``mysql://x``) is refused here too, named the same way, not later where a store is opened."""
    from ..errors import StorageError, UnknownPluginError
    from .urls import check_postgres_url, sqlite_path, url_scheme

    try:
        scheme = url_scheme(url)
        if scheme in ("postgres", "postgresql"):
            check_postgres_url(url)
        else:
            sqlite_path(url)
        if scheme not in SQL_SCHEMES:
            _repository_record(scheme)
    except (StorageError, UnknownPluginError) as exc:
        exc.args = (f"{source}: {exc}",)
        raise exc.with_traceback(None) from None
    return url


def _repository_record(scheme: str) -> Any:
    """The ``evalkit.repositories`` entry point serving ``scheme`` (found, not loaded), or
    :class:`~evalkit.errors.UnknownPluginError` listing the built-in stores and the installed ones."""
    from .. import registry
    from ..errors import UnknownPluginError

    try:
        return registry.find("evalkit.repositories", scheme)
    except UnknownPluginError as exc:  # the built-in schemes are no plugins, but are there to choose
        raise UnknownPluginError("repository", scheme, (*BUILT_IN_REPOSITORIES, *exc.available)) from None


def _check_store_inside_project(url: str, config: Any, *, default: bool = False) -> None:
    """Raise :class:`~evalkit.project_files.OutsideProjectError` (exit 2, nothing opened) when the
    SQLite file ``url`` names — the ``database`` of the configuration file ``config`` was read
    from — resolves (links followed) outside the project and the places its ``[sets]
    allow_outside`` lists: a cloned project's ``database = "sqlite:///../../x.db"`` (or an
    absolute path) made `evalkit run` create, or write evalkit's tables into, any SQLite file the
    user can write. ``default``: ``url`` is the default store, ``<root>/.evalkit/results.db``, which
    a committed link (``.evalkit -> ../../x``) took out of the project the same way. ``--database``
    and ``EVALKIT_DATABASE_URL`` are the user's own and name a store anywhere; other schemes name no
    file."""
    from ..project_files import OutsideProjectError, ProjectBoundary
    from ..wording import argument
    from .urls import redact_url

    path = sqlite_file(url)
    if path is None:
        return
    absolute = os.path.abspath(path)  # relative only for a config without a file: from the working directory
    boundary = ProjectBoundary.of(config)
    if boundary.outside(absolute) is None:
        return
    real = os.path.realpath(absolute)
    if default:
        named = f"the default store {path_named(absolute)} leads, through a link, to the SQLite file {path_named(real)}"
        elsewhere = f"EVALKIT_DATABASE_URL={path_named('sqlite:///' + real)}"
    else:
        named = f"database = {quoted(redact_url(config.database))} names the SQLite file {path_named(real)}"
        elsewhere = "EVALKIT_DATABASE_URL"
    raise OutsideProjectError(
        f"{path_named(config.path)}: {named}, outside the project ({path_named(boundary.root)}): a project's configuration keeps its store "
        f"inside the project. Name a store elsewhere with {argument('database')} or {elsewhere}, or list its folder in [sets] "
        f"allow_outside (allow_outside = [{table_key(os.path.dirname(real), always_quoted=True)}])"
    )


def sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite:///`` URL names (``None`` for other URLs and the in-memory store); a URL
    that names no file or holds a NUL is refused as opening it would (:func:`.urls.sqlite_path`)."""
    from .urls import sqlite_path

    path = sqlite_path(url)
    return None if path is None or path == ":memory:" else Path(path)


def counted_so_far(repository: Any, run: Any) -> Any:
    """``run``, when it never ended (marked running or interrupted) and came without its cases,
    with the aggregates of the cases stored so far (the store's
    :meth:`~evalkit.storage.StreamedCases.case_tally`): the run row's counts are written when a run
    ends, so a run in progress, one whose process was killed and one stopped by Ctrl-C or a plugin
    read as "0 of N cases answered" beside the cases it had stored. Other runs, and stores that
    cannot count, are given back as they are."""
    streamed = capabilities(repository).streamed
    if not run.never_ended or run.cases or streamed is None:
        return run
    return run.counted_by(streamed.case_tally(run.id))


def stored_set_identifiers(history: Any, newest: int) -> list[str]:
    """The set identifiers a :class:`RunHistory` store holds runs of, each once, the set of the
    newest run first: the store's own read (``stored_set_identifiers``, one grouped query in the
    built-in store, no run read) when it has one, else the sets of its ``newest`` runs
    (:meth:`RunHistory.recent_runs`). What a mistyped set's "did you mean" is drawn from: it read
    the newest 1,000 runs of every set, whole, to keep their set identifiers."""
    listed = getattr(history, "stored_set_identifiers", None)
    found = listed() if callable(listed) else [run.set_identifier for run in history.recent_runs(limit=newest)]
    if not isinstance(found, (list, tuple)):  # a third-party store's answer that is no list: nothing to suggest from
        return []
    return [identifier for identifier in dict.fromkeys(i for i in found if isinstance(i, str))]


def runs_started_before(history: Any, cutoff: float) -> dict[Any, int]:
    """How many runs started strictly before ``cutoff`` a :class:`RunHistory` store holds, per
    :class:`~evalkit.runs.RunStatus`: the store's own count (``runs_started_before``, one query in
    the built-in store) when it has one, else every run it lists (:meth:`RunHistory.recent_runs`,
    asked for more until it gives fewer than asked). Counted from the newest 1,000 runs, a store
    with more newer runs than that counted none of the older ones."""
    count = getattr(history, "runs_started_before", None)
    if callable(count):
        return dict(count(cutoff))
    limit = 1000
    while True:
        runs = history.recent_runs(limit=limit)
        if len(runs) < limit:
            break
        limit *= 4
    counts: dict[Any, int] = {}
    for run in runs:
        if run.started_at < cutoff:
            counts[run.status] = counts.get(run.status, 0) + 1
    return counts


def missing_store(url: str) -> Path | None:
    """The SQLite file ``url`` names when it does not exist yet or is empty, with no write-ahead log
    beside it (a read would make it a store), else ``None``. A path the system cannot even look up
    (a name too long, a loop of links) is refused with :class:`~evalkit.errors.StorageError`
    naming the URL and why."""
    path = sqlite_file(url)
    if path is None:
        return None
    try:
        info = path.stat()
        if stat.S_ISREG(info.st_mode) and info.st_size == 0 and _empty_or_absent(Path(f"{path}-wal")):
            return path
    except (FileNotFoundError, NotADirectoryError):
        return path
    except OSError as exc:
        from ..errors import StorageError
        from .urls import redact_url

        raise StorageError(f"database {redact_url(url)}: {exc.strerror}") from None
    return None


def _empty_or_absent(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return True


def url_scheme(url: str) -> str:
    """The scheme of a database URL, lower-cased; a URL without one is refused with
    :class:`~evalkit.errors.StorageError` (see :func:`.urls.url_scheme`)."""
    from .urls import url_scheme as scheme

    return scheme(url)


def open_repository(url: str, **options: Any) -> ResultRepository:
    """Open the repository a URL names: SQLite or PostgreSQL built in, other schemes from plugins.

    A plugin in the ``evalkit.repositories`` group whose name is the URL scheme is called with
    ``url`` and must return an object that satisfies :class:`ResultRepository`; it is handed back
    held in a :class:`~evalkit.storage.plugin_store.PluginStore`, which checks the runs it gives
    back and offers the capabilities it offers (the store itself is never changed). The scheme is
    read case-insensitively (``SQLITE:///x.db``); the store is given ``url`` with it lower-cased.
    """
    from .urls import with_lower_scheme

    url = with_lower_scheme(url)
    scheme = url_scheme(url)
    if scheme in SQL_SCHEMES:
        from .sql import SqlRepository

        return SqlRepository(url, **options)
    from .. import registry

    record = _repository_record(scheme)
    repository: ResultRepository = registry.instantiate(record, registry.load(record), url=url)
    wanted = "lacks begin_run, record_cases, finish_run or get_run: it is no evalkit.storage.ResultRepository"
    registry.require_offered(record, repository, (ResultRepository,), wanted)
    return PluginStore(repository, record.label)  # type: ignore[return-value]  # it offers what the store offers


def _sql_only(url: str, what: str) -> None:
    if url_scheme(url) not in SQL_SCHEMES:
        from ..errors import StorageError
        from .urls import redact_url

        raise StorageError(
            f"{what} works on the built-in SQLite and PostgreSQL stores; the repository for "
            f"{redact_url(url)} manages its own storage"
        )


def schema_status(url: str) -> Any:
    """The :class:`~evalkit.storage.schema.SchemaStatus` of a SQLite or PostgreSQL database
    (read without creating or upgrading anything)."""
    _sql_only(url, "evalkit db status")
    from .schema import read_schema_status

    return read_schema_status(url)


def upgrade_schema(url: str) -> tuple[Any, list[int]]:
    """Apply the pending migrations; returns the status after the upgrade and the versions applied."""
    _sql_only(url, "evalkit db upgrade")
    from .schema import apply_migrations

    return apply_migrations(url)


def close_repository(repository: object) -> None:
    """Close ``repository`` when it holds anything open (:class:`ClosableRepository`); else nothing."""
    if offers(repository, ClosableRepository):
        repository.close()
