"""The compact JSON text of a large run's cases, kept in a temporary file as the store commits them.

``evalkit run --json`` of more than :data:`~evalkit.cli.json_output.COMPACT_JSON_CASES` cases prints
every case. Reading them back from the store at the end of the run cost ~2 s of a 100,000-case run
(the rows, decoding them, building the cases, their text) after the last answer; written here as
each group of cases is committed, in the form the store keeps them
(:class:`~evalkit.storage.StoredCaseForms`), the end of the run only copies the file out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

__all__ = ["CaseJsonSpool"]


class CaseJsonSpool:
    """The cases a run committed, as the compact JSON text ``--json`` prints for them (one line of
    comma-separated cases per commit, in stored order), in an unnamed temporary file.

    It is used only when it holds the whole run (:meth:`holds`); a temporary file that cannot be
    written (a full or missing temporary folder), or a case whose text cannot be made, gives it up,
    and the run's cases are read back from the store as before — the run never fails on it.
    """

    def __init__(self, wanted: bool = True) -> None:
        self.wanted = wanted
        self.count = 0
        self._file: IO[str] | None = None
        self._failed = False

    def start(self, run: Any, total: int) -> None:
        """Keep the cases only when the run prints them compact
        (:func:`~evalkit.cli.json_output.prints_compact`): a smaller run's are read back and indented."""
        from .json_output import prints_compact

        self.wanted = self.wanted and prints_compact(run.case_count)

    def add(self, cases: list[Any]) -> None:
        """Write the text of ``cases`` (:class:`~evalkit.runs.CaseResult`, as stored) as one line."""
        if not self.wanted or self._failed or not cases:
            return
        from .render import case_json

        try:
            if self._file is None:
                import tempfile

                # Lone surrogates are written as they are: the text is escaped when it is printed.
                self._file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogatepass", newline="\n")
            self._file.write(",".join(map(case_json, cases)) + "\n")
        except Exception:  # whatever went wrong here, the store still has every case
            self._failed = True
            self.close()
            return
        self.count += len(cases)

    def holds(self, run: Any) -> bool:
        """Whether this holds every stored case of ``run`` (as many as the store counted), so
        ``--json`` can print them from here; if so, the file is rewound for :meth:`texts` (a file
        that cannot be is not used, before anything is printed)."""
        from .json_output import prints_compact

        if not self.wanted or self._failed or not prints_compact(run.case_count):
            return False
        if self.count != run.answered_count:
            return False
        if self._file is None:
            return True
        try:
            self._file.flush()
            self._file.seek(0)
        except OSError:
            return False
        return True

    def texts(self) -> Iterator[str]:
        """The cases' text, a commit's group at a time (compact JSON elements joined by commas)."""
        if self._file is None:
            return
        for line in self._file:
            yield line[:-1]

    def __enter__(self) -> CaseJsonSpool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the temporary file."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
