"""Pieces several commands share: the run-start hook and the store a command uses.

What commands print goes through :mod:`.console` (people) and :mod:`.json_output` (``--json``);
their options are declared in :mod:`.params`."""

from __future__ import annotations

from ..wording import path_named, quoted

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["collect_as_usual", "collect_rarely_until_run_start", "database_url", "refuse_job_local_store", "run_started"]


#: How many new container objects a run's start-up makes between two collections of the youngest
#: generation (CPython's default is 700). While ~400 modules are imported, collections find
#: nothing to free and cost ~30 ms of a run's start-up; turned off altogether, they never ran while
#: a set was read and checked either, and every cycle made then (a set file's scan, a provider's
#: or a schema check's garbage) stayed until the run started, then was frozen for good: a
#: 100,000-prompt set file ran at 650 MiB. A run's imports make ~80,000; that many of a set's
#: garbage is the most it keeps.
START_UP_GEN0_THRESHOLD = 100_000

#: The collector's thresholds before :func:`collect_rarely_until_run_start` raised them.
_usual_thresholds: tuple[int, ...] | None = None


def collect_rarely_until_run_start() -> None:
    """Turn the collector on with the youngest generation collected every
    :data:`START_UP_GEN0_THRESHOLD` new objects, until :func:`run_started`'s hook (or
    :func:`collect_as_usual`) puts the thresholds back."""
    import gc

    global _usual_thresholds
    if _usual_thresholds is None:
        _usual_thresholds = gc.get_threshold()
    gc.set_threshold(START_UP_GEN0_THRESHOLD, *_usual_thresholds[1:])
    gc.enable()


def collect_as_usual() -> None:
    """Put back the collector's thresholds :func:`collect_rarely_until_run_start` raised (nothing
    when it did not)."""
    import gc

    global _usual_thresholds
    if _usual_thresholds is not None:
        gc.set_threshold(*_usual_thresholds)
        _usual_thresholds = None


def run_started(progress_start: Callable[[Any, int], None]) -> Callable[[Any, int], None]:
    """``progress_start``, preceded by :func:`gc.freeze` and the collector's usual thresholds: called
    when every plugin is loaded and the first request is about to go out, so the objects built so
    far (modules, classes, plugins, the configuration) are left out of every later garbage
    collection — and out of the interpreter's collections at exit, which took 40-50 ms of a run's
    wall time walking them. Until then the youngest generation is collected rarely
    (:func:`collect_rarely_until_run_start`, for a command that sets
    ``collects_garbage_from_run_start``)."""

    def start(run: Any, total: int) -> None:
        import gc

        gc.freeze()
        collect_as_usual()
        gc.enable()
        progress_start(run, total)

    return start


def database_url(args: Any, config: Any) -> str:
    """The database a command uses: --database, EVALKIT_DATABASE_URL, the config, then the default.

    A shard (``--shard``) and the job that waits for the shards (``--wait-for-shards``) meet in
    a store every job of the run shares: a SQLite store there is refused unless ``--database``
    names it (see :func:`refuse_job_local_store`)."""
    from ..storage import resolve_database_url

    explicit = getattr(args, "database", None)
    if explicit is not None and not explicit.strip():
        from ..errors import StorageError

        raise StorageError("--database is empty; give the results database's URL (or leave the option out)")
    url = resolve_database_url(explicit, config)
    if getattr(args, "shard", None) or (getattr(args, "wait", False) and hasattr(args, "shard")):
        refuse_job_local_store(url, explicit, config, "--shard" if getattr(args, "shard", None) else "--wait-for-shards")
    return url


def refuse_job_local_store(url: str, explicit: str | None, config: Any, option: str) -> None:
    """Refuse (exit 2) a SQLite store that ``option`` would use without ``--database`` naming it.

    The shards and the verdict job of a CI run are jobs on machines of their own: a SQLite file
    chosen by default, by the configuration or by ``EVALKIT_DATABASE_URL`` is each job's own, so
    every shard would write a throw-away store and the gate would never fire. Named with
    ``--database`` (several processes on one machine sharing a file) it is taken as meant."""
    from ..errors import UsageError
    from ..storage import database_source, sqlite_file
    from ..storage.urls import redact_url

    if explicit or not url.startswith("sqlite:"):
        return
    source = database_source(explicit, config)
    where = {"EVALKIT_DATABASE_URL": "EVALKIT_DATABASE_URL", "config": "the configuration's database"}.get(source, "the default")
    path = sqlite_file(url)
    store = f"the SQLite file {path_named(path)}" if path is not None else quoted(redact_url(url))
    raise UsageError(
        f"{option} needs a store every job of the run shares, but the store is {store} ({where}), local to this "
        "job: the other jobs never see it, so the run would never be complete and no gate would fire. Point "
        "EVALKIT_DATABASE_URL at the shared results database (e.g. PostgreSQL), or name the file with "
        "--database when every job runs on this machine"
    )
