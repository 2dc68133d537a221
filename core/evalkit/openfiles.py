"""Room in the process's open-file limit for the connections a run holds at once.

A run at ``--concurrency 2000`` keeps up to 2,000 sockets open, and most systems start a process
with a soft limit of 1,024 open files (macOS: 256): past it every new connection fails with "Too
many open files", and the run ends with errored cases. The soft limit may be raised by the process
itself up to its hard limit, as load generators do; :func:`make_room_for` does that, and says so
when even the hard limit is too low.
"""

from __future__ import annotations

__all__ = ["RESERVED_FILES", "make_room_for"]

#: Files the process holds besides its connections: the store and its journal, standard streams,
#: modules being imported, a spooled ``--json`` document, reports.
RESERVED_FILES = 64


def make_room_for(connections: int) -> str | None:
    """Raise the soft ``RLIMIT_NOFILE`` so that ``connections`` sockets fit beside
    :data:`RESERVED_FILES` (never lowering it, never past the hard limit); a sentence for the run's
    notes when they still do not fit, else ``None``. Where there is no such limit (Windows), ``None``."""
    try:
        import resource
    except ImportError:
        return None
    from .wording import argument

    needed = connections + RESERVED_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or needed <= soft:
        return None
    allowed = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (allowed, hard))
    except (ValueError, OSError):  # macOS refuses more than OPEN_MAX whatever the hard limit says
        allowed = soft
    if allowed >= needed:
        return None
    return (
        f"{argument('concurrency', f'{connections:,}')} holds up to {connections:,} connections beside evalkit's own "
        f"{RESERVED_FILES} files, and this process may open {allowed:,} files in all (its hard limit, "
        "ulimit -Hn): connections past that fail with 'Too many open files'. Lower the concurrency or "
        "raise the hard limit."
    )
