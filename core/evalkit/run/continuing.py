"""How a stored run is continued, and what is said of a run that no process answers any more.

The line that continues a run (:func:`resume_hint`: ``evalkit run SET … --resume ID``, the
``--shard I/N --run-id ID`` of each shard still missing, a library call again for a run built in
code, a re-grade again) is built by :func:`evalkit.run.placement.continuing_command`, the function
that built the line the command printed when the run began, with the higher limits a stopped part
asks for (:mod:`evalkit.run.limit_stops`); :func:`resume_defaults` is what a bare continuing command
answers with as the configuration says now.

A run whose process was killed keeps its status ``running``; its leases
(:func:`evalkit.leases.liveness`) tell it apart, and this module says so: :func:`status_label`
(``history``, ``show``, ``compare`` and the viewer's pages), :func:`gone_sentence` (since when, and
how to continue it), :func:`stopped_by_limit` and :func:`unended` (a shard a spending limit stopped
ended; it was not killed), which ``report --wait`` reads too. The leases themselves, and their
heartbeat, are :mod:`evalkit.leases`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..runs import Run, RunKind
from ..storage.values import WHOLE_RUN, RunLiveness, shard_part

__all__ = [
    "STOPPED_UNSAID",
    "ResumeDefaults",
    "gone_clause",
    "gone_sentence",
    "resume_defaults",
    "resume_hint",
    "status_label",
    "stopped_by_limit",
    "unended",
]


@attrs.frozen
class ResumeDefaults:
    """What a bare continuing command answers a run with, as the configuration says when the line
    is printed (:func:`resume_defaults`): each configured provider instance's model ``aliases``
    (its ``model``, ``None`` without one, as a run of it without ``--model`` stores it).
    :func:`resume_hint` names the ``--model`` of a run answered otherwise: pasted without it, the
    line would answer with this one, and be refused. (Repeats need no default: a continuing command
    without ``--repeats`` answers with the run's own, whatever ``[run] repeats`` says.) ``store``:
    the ``--config PATH`` and ``--database URL`` (its password as ``***``) the printing command was
    given, which the line repeats — without them it looked for the run in the default store and
    said there was no such run."""

    aliases: Mapping[str, str | None]
    store: tuple[str, ...] = ()


def resume_defaults(config: Any) -> ResumeDefaults:
    """The :class:`ResumeDefaults` of ``config`` (an :class:`~evalkit.config.Config`)."""
    from ..components import stored_alias

    aliases = {name: stored_alias(instance.options.get("model")) for name, instance in config.providers.items()}
    return ResumeDefaults(aliases)


def resume_hint(
    run: Run, shards: Sequence[int] = (), count: int | None = None, defaults: ResumeDefaults | None = None
) -> str:
    """The command that continues ``run`` (with the options it was started with): ``evalkit run SET
    --provider NAME [--cache] [--answers-from SOURCE] --resume ID`` (``evalkit retrieval SET RETRIEVER …`` for a retrieval run); for
    the missing ``shards`` of ``count``, the ``--shard I/N --run-id ID`` of each. A re-grade run's is
    the re-grade again (:func:`evalkit.run.placement.regrade_again`): it is never resumed. A run of a
    set or a generator built in code (:func:`evalkit.run.placement.continued_in_code`), which no
    command finds, is continued by its library call again (:func:`evalkit.run.placement.continuing_call`). ``defaults``:
    what a bare command answers with as the configuration says now (:func:`resume_defaults`;
    ``None``: not known), for the ``--model`` of a run of an instance given another alias than its
    configured one. The options after the set are :func:`evalkit.run.placement.continuing_options`,
    which a library call's own line says too. A run begun by a command that kept its options
    (:data:`evalkit.run.placement.RESUMED_OPTIONS`) is continued by the line that command printed,
    built by the same function; both kinds of line are one :class:`_Continuing`, joined with each
    part's place by :func:`_continuing_lines`. A line made from the columns says no
    ``--repeats``: a continuing command without it answers with the run's own
    (:func:`evalkit.evaluate_set`), so the shortest line is the one that works whatever the
    configuration says when it is pasted."""
    from .placement import (
        Shard,
        answering_options,
        built_in_code,
        continued_in_code,
        continuing_call,
        regrade_again,
    )

    again = regrade_again(run, _store(defaults))
    if again is not None:
        return f"`{again}`"
    parts = [Shard(i, count) for i in shards] if shards and count else [None]
    if continued_in_code(run):
        function = "evaluate_retrieval" if run.kind is RunKind.RETRIEVAL else "evaluate_set"
        from .limit_stops import resume_limits

        options = answering_options(run) if run.kind is not RunKind.RETRIEVAL else []
        return " and ".join(
            f"`{continuing_call(function, run.set_identifier, run.id, part, [*options, *resume_limits(run, _part_of(part))], set_in_code=built_in_code(run))}`"
            for part in parts
        )
    return _continuing_lines(run, _continuing(run, defaults), parts)


@attrs.frozen
class _Continuing:
    """What every line continuing a stored run is built of, before its place and limits: the
    command and its arguments (``words``), its options (each a run of words, in the order the line
    says them, which a limit of its first word's name replaces) and the ``--config``/``--database``
    words after them (``store``), as :func:`evalkit.run.placement.continuing_command` takes them
    (:func:`_continuing` makes it)."""

    words: Sequence[str]
    options: Sequence[Sequence[str]]
    store: Sequence[str] = ()


def _continuing(run: Run, defaults: ResumeDefaults | None) -> _Continuing:
    """The :class:`_Continuing` of stored ``run`` (a prompt or retrieval run a command continues).
    A run begun by a command that kept its options (:func:`evalkit.run.placement.resumed_options`):
    those options, and before them what answers the run that the command left to the configuration
    (``--provider NAME`` of the default instance, a ``--model`` other than its configured one now:
    :func:`evalkit.run.placement.continuing_options`; a retrieval run's ``--deployment``), the store
    after them — the line that command printed. A run stored without them (a library call's, or
    stored before they were kept): the line made from its columns, as it was printed before — its
    options one run of words (none a limit's), the store among them where that line has always said
    it (a retrieval run's before ``--deployment``, a prompt run's before ``--cache``), the
    retriever named."""
    from .placement import continuing_options, resumed_options, retrieval_words, word_options

    kept = resumed_options(run)
    store = _store(defaults)
    if run.kind is RunKind.RETRIEVAL:
        deployment = ["--deployment", run.deployment] if run.deployment else []
        if kept is None:
            return _Continuing(["retrieval", run.set_identifier, run.retriever or "RETRIEVER"], [[*store, *deployment]])
        return _Continuing(retrieval_words(run), _filled(kept, [deployment] if deployment else []), store)
    aliases = defaults.aliases if defaults is not None else None
    words = ["run", run.set_identifier]
    if kept is None:
        return _Continuing(words, [continuing_options(run, aliases, store=store)])
    return _Continuing(words, _filled(kept, word_options(continuing_options(run, aliases))), store)


def _continuing_lines(run: Run, line: _Continuing, parts: Sequence[Any]) -> str:
    """The lines that continue ``parts`` of ``run`` (each a :class:`~evalkit.run.placement.Shard`;
    ``None``: the whole run), each ``line`` (:func:`_continuing`) with its place
    (:func:`evalkit.run.placement.continuing_words`) and the higher limits a stopped part asks for
    (:func:`evalkit.run.limit_stops.resume_limits`), by :func:`evalkit.run.placement.continuing_command`,
    the function that built the line a command printed."""
    from .limit_stops import resume_limits
    from .placement import continuing_command, continuing_words

    return " and ".join(
        f"`{continuing_command(line.words, line.options, line.store, continuing_words(run.id, part), resume_limits(run, _part_of(part)))}`"
        for part in parts
    )


def _filled(kept: Sequence[Sequence[str]], said: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """The ``kept`` options with each of ``said`` (what the run's columns say answers it, in the
    command's order) that none of them names, placed after the one of ``said`` before it that is
    kept (``--provider app --model app-mini``), or first."""
    options = list(kept)
    at = 0
    for option in said:
        named = [i for i, given in enumerate(options) if given[0] == option[0]]
        if named:
            at = named[-1] + 1
        else:
            options.insert(at, option)
            at += 1
    return options


def _store(defaults: ResumeDefaults | None) -> tuple[str, ...]:
    """The ``--config`` and ``--database`` words a continuing line repeats (:attr:`ResumeDefaults.store`)."""
    return defaults.store if defaults is not None else ()


def _part_of(shard: Any) -> str:
    """The lease part of ``shard`` (a :class:`~evalkit.run.placement.Shard`; ``None``: the whole run)."""
    return WHOLE_RUN if shard is None else shard_part(shard.index, shard.count)


def _limit_stopped(run: Run, live: RunLiveness) -> dict[int, str]:
    """The shards of ``run`` still missing that a spending limit stopped (its ``finish`` kept the
    stop as data: :mod:`evalkit.run.limit_stops`), each with what stopped it (``the limit of 1
    request reached``): they ended, they were not killed. A shard whose lease is still held (:attr:`RunLiveness.held`)
    was taken again since and never given up: killed, whatever its earlier attempt kept."""
    from .limit_stops import reached_words, stops_of

    if live.shard_count is None:
        return {}
    stops = stops_of(run)
    parts = {i: shard_part(i, live.shard_count) for i in live.missing if i not in live.held}
    return {i: reached_words(stops[part]) for i, part in parts.items() if part in stops}


def stopped_by_limit(run: Run, live: RunLiveness | None) -> bool:
    """True when no process answers ``run`` (:attr:`RunLiveness.gone`) because a spending limit
    stopped every shard still missing, not because one was killed: nothing answers it until it is
    continued with a higher limit (:func:`resume_hint` gives it)."""
    return live is not None and live.gone and bool(live.missing) and len(_limit_stopped(run, live)) == len(live.missing)


def unended(run: Run, live: RunLiveness | None) -> tuple[int, ...]:
    """The shards of sharded ``run`` that have not ended while one of its leases is live or a shard
    is still to start (not :attr:`RunLiveness.gone`): not in, and not stopped by a spending limit
    (each kept as data: :mod:`evalkit.run.limit_stops`). Empty once every shard has ended (in,
    limit-stopped, or killed) and for a run that is not sharded: a run a limit stopped is over then."""
    if live is None or live.shard_count is None or live.gone:
        return ()
    stopped = _limit_stopped(run, live)
    return tuple(i for i in live.missing if i not in stopped)


#: Why a process stops answering a run without ending it or marking it stopped, as far as a
#: reader of the store can tell: a store that failed under the run (a PostgreSQL server gone down)
#: leaves the run ``running`` and its lease as a ``kill -9`` does, though that process said why
#: (exit 3, "the results store failed during run …"): "killed" alone blamed the wrong thing.
STOPPED_UNSAID = "killed, its machine lost, or its results store out of reach as it stopped"


def gone_sentence(run: Run, live: RunLiveness, defaults: ResumeDefaults | None = None) -> str:
    """``no live process since 2026-12-05 06:56 UTC: …; continue it with `…```: what is said of a
    run that is :attr:`RunLiveness.gone` (naming the shards to re-run of a sharded run; ``defaults``:
    see :func:`resume_hint`)."""
    import time

    since = (
        time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(live.last_seen))
        if live.last_seen is not None
        else "an unknown time"
    )
    hint = resume_hint(run, live.missing, live.shard_count, defaults)
    stopped = _limit_stopped(run, live)
    if stopped:
        count = live.shard_count
        shards = ", ".join(f"{i}/{count}" for i in stopped)
        said = (
            f"shard{'s' if len(stopped) > 1 else ''} {shards} of run {run.id} {'were' if len(stopped) > 1 else 'was'}"
        )
        limits = "; ".join(dict.fromkeys(stopped.values()))
        if len(stopped) == len(live.missing):
            return f"no live process since {since}: {said} stopped by a spending limit ({limits}), not killed; continue it with {hint}"
        return (
            f"no live process since {since}: the process answering run {run.id} stopped without ending it "
            f"({STOPPED_UNSAID}), and {said} stopped by a spending limit ({limits}); continue it with {hint}"
        )
    return (
        f"no live process since {since}: the process answering run {run.id} stopped without ending it "
        f"({STOPPED_UNSAID}); continue it with {hint}"
    )


def gone_clause(run: Run, live: RunLiveness | None, defaults: ResumeDefaults | None = None) -> str:
    """``; it has no live process since …`` (:func:`gone_sentence`) to end a note on ``run`` when
    it is :attr:`RunLiveness.gone`, else nothing (``live``: its liveness, ``None`` when not known;
    ``defaults``: see :func:`resume_hint`)."""
    return f"; it has {gone_sentence(run, live, defaults)}" if live is not None and live.gone else ""


def status_label(run: Run, live: RunLiveness | None) -> str:
    """A run's status as every reader shows it (``history``, ``show``, the viewer's pages):
    ``running (no live process)`` for a run that is :attr:`RunLiveness.gone` (``live``: its
    liveness, ``None`` when not known), ``running (stopped by a spending limit)`` when its missing
    shards ended so (:func:`stopped_by_limit`), else the stored status; :func:`gone_sentence` says since
    when and how to continue it."""
    if stopped_by_limit(run, live):
        return f"{run.status.value} (stopped by a spending limit)"
    if live is not None and live.gone:
        return f"{run.status.value} (no live process)"
    return run.status.value
