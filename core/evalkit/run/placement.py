"""Where a run goes: its id, whether it resumes or joins a run, which slice of the set this process
answers (a shard), and what a new run is stored with. Values only: the plan (:mod:`.plan`) and the
answering strategies (:mod:`.answering`) both use them, so they live below both."""

from __future__ import annotations

import re
import secrets
import time
import zlib

import attrs

from ..errors import UsageError
from ..shapes import whole_number

__all__ = ["Placement", "Shard", "check_run_id", "continuing_words", "new_run_id"]

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


def new_run_id(now: float | None = None) -> str:
    """A sortable, unique run id: UTC time to the second plus random hex."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now or time.time()))
    return f"{stamp}-{secrets.token_hex(3)}"


def check_run_id(run_id: str) -> None:
    """Refuse a run id a user gave that is not 1 to 64 letters, digits, ``.``, ``_``, ``:`` or ``-``."""
    if not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 80 else f"{run_id[:77]}..."
        from ..wording import quoted

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
        told = f"--shard {self.index}/{self.count}"
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
            from ..wording import quoted

            raise UsageError(f'--shard must look like I/N (e.g. 2/4), got {quoted(text)}')
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


@attrs.frozen
class Placement:
    """Which run this process answers, and which part of it.

    ``run_id`` names the run (``None``: a new run gets a fresh id); an existing run of that id is
    joined (a shard) or, with ``resume``, continued — ``resume`` without a ``run_id`` continues the
    newest unfinished run of the same scope. ``shard`` limits this process to one slice of the set
    (it needs a ``run_id``: every shard joins one run). ``label`` and ``privacy`` are stored with a
    new run; a joined or resumed run keeps the privacy level it was started with.
    """

    run_id: str | None = None
    resume: bool = False
    shard: Shard | None = None
    label: str | None = None
    privacy: str = "metadata"
