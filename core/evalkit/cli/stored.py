"""Pieces the commands that read the results store share (history, show, compare, db).

Imported by those commands' handlers only, never while the command line is parsed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..printable import hidden_escaped
from ..runs import Run
from ..storage import ResultRepository, StoredVerdict, capabilities, open_repository
from ..wording import quoted
from .common import database_url

if TYPE_CHECKING:
    from .app import Arguments

__all__ = [
    "SPARK_BARS",
    "format_date",
    "identity_label",
    "liveness_fields",
    "open_for_reading",
    "open_store",
    "opened_for",
    "require_existing_store",
    "store_origin",
    "require_run",
    "sparkline",
    "stored_verdicts",
    "verdict_document",
    "verdict_line",
    "verdict_label",
]

#: Eight levels, lowest first; a pass rate of 0 is the lowest bar, 1 the highest.
SPARK_BARS = "▁▂▃▄▅▆▇█"


def open_store(args: Arguments, *, writing: bool = False) -> Any:
    """The repository the command's ``--database``/``--config`` (or the defaults) name.

    For commands that work on a store that exists: a SQLite store that does not exist (or is an
    empty file) is never created; the command stops with a usage error naming the path it looked at
    (see :func:`require_existing_store`). A built-in database that holds no store is never given its
    tables here: only ``run``, ``retrieval`` and ``db upgrade`` make a store.

    A reading command's set and the filters that narrow it are resolved here, once for every such
    command (:func:`evalkit.cli.known_names.require_known_names`): a name neither installed nor in
    the store is a usage error with a "did you mean".

    A built-in store is opened on a connection that refuses every change (``read_only``, as
    ``evalkit view`` reads it) unless the command changes it (``writing``: ``db prune``, ``cache
    clear``, ``baseline accept``): a reader neither takes SQLite's write lock, so it does not wait
    for (or fail on) a run writing the file, nor needs a file it may write.
    """
    from ..config import load_config
    from ..storage import SQL_SCHEMES, close_repository, url_scheme
    from .known_names import require_known_names

    config = load_config(getattr(args, "config", None))
    url = database_url(args, config)
    require_existing_store(url, config, getattr(args, "database", None))
    if writing:
        return opened_for(args, url, create=False) if url_scheme(url) in SQL_SCHEMES else opened_for(args, url)
    repository = open_for_reading(url, args)
    try:
        require_known_names(repository, args, config)
    except BaseException:
        close_repository(repository)
        raise
    return repository


def open_for_reading(url: str, args: Arguments) -> Any:
    """The repository ``url`` names, opened to be read for the command ``args`` (:func:`opened_for`):
    a built-in store on a connection that refuses every change and never takes SQLite's write lock
    (a SQLite store in memory, which a new connection sees empty, is opened as before)."""
    from ..storage import SQL_SCHEMES, url_scheme
    from ..storage.urls import is_in_memory

    if url_scheme(url) in SQL_SCHEMES and not is_in_memory(url):
        return opened_for(args, url, create=False, read_only=True)
    return opened_for(args, url)


def opened_for(args: Arguments, url: str, **options: Any) -> Any:
    """:func:`~evalkit.storage.open_repository` ``(url, **options)`` for the command ``args``: a
    third-party store is kept in ``args.opened_stores``, so that what it raises, wherever the
    command meets it, is said as that store's failure (:func:`evalkit.cli.main`), not as evalkit's
    internal error."""
    from ..storage import PluginStore

    repository = open_repository(url, **options)
    if isinstance(repository, PluginStore):
        args.opened_stores.append(repository)
    return repository


def require_existing_store(url: str, config: Any, explicit: str | None = None) -> None:
    """Refuse (exit 2) when ``url`` names a SQLite file that does not exist yet, saying where it looked."""
    from ..errors import UsageError
    from ..shapes import clipped
    from ..storage import missing_store
    from ..wording import path_named

    path = missing_store(url)
    if path is None:
        return
    raise UsageError(
        f"There is no results store at {clipped(path_named(path))}: nothing has been run here yet (`evalkit run SET` creates it). "
        f"{store_origin(config, explicit)}"
    )


def store_origin(config: Any, explicit: str | None = None) -> str:
    """One sentence on why the store is looked for where it is, and how to choose another
    (``explicit``: the ``--database`` given, which chose it)."""
    from ..storage import database_source
    from ..wording import path_named

    source = database_source(explicit, config)
    if source == "--database":
        return "--database names it."
    if source == "EVALKIT_DATABASE_URL":
        return "The environment variable EVALKIT_DATABASE_URL names it; --database URL chooses another."
    if source == "config":
        return f"The configuration file {path_named(config.path)} names it (database); --database URL chooses another."
    if config.path is not None:
        where = f"The default store sits next to the configuration file {path_named(config.path)}"
    else:
        where = f"No configuration file was found ({config.describe_search()}), so the default store is in the working directory"
    return f"{where}; --config PATH or --database URL chooses another."


def require_run(repository: ResultRepository, run_id: str, with_cases: bool = True) -> Run:
    """The stored run ``run_id`` (a running one with the counts of the cases it has stored so far:
    :func:`evalkit.storage.counted_so_far`), or a usage error naming it."""
    from ..run_lookup import stored_run
    from ..storage import counted_so_far

    return counted_so_far(repository, stored_run(repository, run_id, with_cases=with_cases))


def stored_verdicts(repository: ResultRepository, run_ids: Sequence[str]) -> Mapping[str, StoredVerdict]:
    """The verdicts recorded with these runs, when the repository keeps verdicts."""
    baselines = capabilities(repository).baselines
    if baselines is None or not run_ids:
        return {}
    return baselines.verdicts_for(list(run_ids))


def format_date(timestamp: float | None) -> str:
    """``YYYY-MM-DD HH:MM`` in UTC, or an em dash."""
    if not timestamp:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp))


def identity_label(run: Run) -> str:
    """Who answered: ``reported model (instance/alias)`` when verified, else marked unverified."""
    if run.identity is not None:
        who = run.identity
        return f"{who.reported_model} ({who.provider_instance}/{who.model_alias})"
    if run.provider_instance or run.model_alias:
        return f"unverified ({run.provider_instance or run.adapter or '?'}/{run.model_alias or '?'})"
    return f"unverified ({run.adapter or 'unknown generator'})"


def measured_label(run: Run) -> str:
    """Who a run measured: a prompt run's serving identity (:func:`identity_label`); a retrieval
    run's retriever and deployment (``evalkit.lexical in deployment "staging"``), which scope its
    baseline: staging and production runs of one retriever are never one series."""
    if run.kind.value != "retrieval":
        return identity_label(run)
    retriever = hidden_escaped(run.retriever or run.adapter or "unknown retriever")
    return f"{retriever} in deployment {quoted(run.deployment)}" if run.deployment else f"{retriever} (no deployment)"


#: A stored verdict's word in a table cell, for every state a store holds (a state this table
#: lacks is shown as its word, never a crash: the paired gate's "inconclusive" once was one).
_VERDICT_LABELS: Mapping[str, str] = {
    "baseline": "baseline",
    "no_regression": "ok",
    "regressed": "REGRESSED",
    "inconclusive": "inconclusive",
    "not_comparable": "not compared",
}


def verdict_label(verdict: StoredVerdict | None, *, with_baseline: bool = False) -> str:
    """A short verdict for a table cell (``—``: none recorded); optionally naming the baseline."""
    if verdict is None:
        return "—"
    label = _VERDICT_LABELS.get(verdict.state, verdict.state.replace("_", " "))
    if with_baseline and verdict.baseline_id:
        label += f" vs {verdict.baseline_id}"
    return label


def verdict_line(verdict: StoredVerdict | None) -> str:
    """The verdict's label, naming the baseline, and its reason (``not compared — the run is
    incomplete …``). A reason that begins with the label's own words (a not-compared run's
    ``not compared: …``) is not made to say them twice (``not compared — not compared: …``)."""
    label = verdict_label(verdict, with_baseline=True)
    reason = verdict.reason if verdict is not None else None
    if not reason:
        return label
    said = verdict_label(verdict)
    if reason.startswith(f"{said}: "):
        reason = reason[len(said) + 2 :]
    return f"{label} — {reason}"


def verdict_document(verdict: StoredVerdict | None) -> dict[str, Any] | None:
    """A stored verdict as JSON-ready data (``None`` when the run has none)."""
    if verdict is None:
        return None
    return {"state": verdict.state, "baseline_id": verdict.baseline_id, "note": verdict.reason}


def sparkline(values: Iterable[float | None]) -> str:
    """One bar per value in 0..1 (pass rates), on a fixed scale so a flat 100% reads as full bars;
    a gap (a space) for ``None``, a run with no rate (no case scored), never drawn as a 0% bar."""
    top = len(SPARK_BARS) - 1
    return "".join(" " if v is None else SPARK_BARS[min(top, max(0, round(float(v) * top)))] for v in values)


def liveness_fields(live: Any) -> dict[str, Any]:
    """What ``--json`` of ``history`` and ``show`` says beside a run's ``status`` (whose meaning
    is unchanged): ``live_process`` — ``true`` while a process answers the run, ``false`` when none
    does any more (killed: :attr:`~evalkit.leases.RunLiveness.gone`), ``null`` when the run is not
    running or the store cannot tell (no lease, a shard still to start) — and ``last_seen_at``, when
    a process of the run was last heard from (``null`` when unknown)."""
    if live is None:
        return {"live_process": None, "last_seen_at": None}
    said = True if live.live else (False if live.gone else None)
    return {"live_process": said, "last_seen_at": live.last_seen}
