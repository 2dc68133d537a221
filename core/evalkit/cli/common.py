"""Pieces several commands share: output consoles, common options, JSON output."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["COMPACT_JSON_CASES", "add_baseline_option", "add_report_option", "add_store_options", "add_tolerance_options", "console", "positive_int", "print_cases_json", "print_json", "print_json_streamed", "prints_compact", "run_started"]


#: Width of the output when it is not a terminal and COLUMNS is not set: wide enough that a
#: table's cells are not wrapped for a log or a pipe (the padding is trimmed anyway).
PIPE_WIDTH = 240
#: The narrowest and widest output a ``COLUMNS`` value may ask for; outside, it is ignored.
COLUMNS_RANGE = (20, 100_000)


class TrimmedLines:
    """A text stream wrapper that drops the spaces rich pads lines with, for pipes and logs."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        """Write the complete lines of ``text`` without trailing spaces; keep the last partial line."""
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        if lines:
            self.stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        """Write the partial line kept back, then flush."""
        if self._pending:
            self.stream.write(self._pending.rstrip(" "))
            self._pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        """Never a terminal (only pipes and files are wrapped)."""
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def console(stderr: bool = False) -> Any:
    """A rich console; when not a terminal: no colour, no wrapped cells, no padding or trailing spaces."""
    from rich.console import Console

    stream = sys.stderr if stderr else stdout()
    tty = stream.isatty()
    return Console(
        file=stream if tty else TrimmedLines(stream),
        highlight=False,
        emoji=False,  # ":warning:" in a case id is text, not an emoji code
        width=output_width(stream, tty),
        no_color=not tty or "NO_COLOR" in os.environ,
        soft_wrap=not tty,
    )


def output_width(stream: Any, tty: bool) -> int | None:
    """The width to render at: ``COLUMNS`` when it is a whole number in :data:`COLUMNS_RANGE`;
    else, on a terminal, its own width (``None``: rich asks it), and :data:`PIPE_WIDTH` elsewhere.
    ``COLUMNS=abc`` crashed a run's output, and ``0`` or ``-5`` printed nothing at all."""
    raw = os.environ.get("COLUMNS", "")
    usable = raw.isascii() and raw.isdigit() and len(raw) <= 6 and COLUMNS_RANGE[0] <= int(raw) <= COLUMNS_RANGE[1]
    if usable:
        return int(raw)
    if not tty:
        return PIPE_WIDTH
    if not raw:
        return None
    try:  # set but unusable: rich would take it as it is, so the terminal is asked here
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80


#: The largest whole number a count option takes; longer text is refused before it is parsed.
MAX_COUNT = 1_000_000


def positive_int(text: str) -> int:
    """An argparse type: a whole number from 1 to :data:`MAX_COUNT`, refused at once otherwise."""
    shown = text if len(text) <= 20 else text[:20] + "…"
    if len(text.strip()) > len(str(MAX_COUNT)) + 2:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_COUNT}, got {shown!r}")
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {shown!r}") from None
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_COUNT}, got {shown!r}")
    return value


def temperature(text: str) -> float:
    """An argparse type: a sampling temperature, a plain decimal number from 0 to 2."""
    if len(text) > 16:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text[:16]!r}…")
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text!r}") from None
    if not 0.0 <= value <= 2.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 2, got {text!r}")
    return value


#: A ``--json`` document listing more cases than this is printed compact (one line, no
#: indentation): the indenting encoder is pure Python, about 100 times slower than the compact one.
COMPACT_JSON_CASES = 1000


def prints_compact(case_count: int) -> bool:
    """Whether a run of ``case_count`` cases prints its ``--json`` document compact, case by case
    (more than :data:`COMPACT_JSON_CASES`), rather than whole and indented."""
    return case_count > COMPACT_JSON_CASES


def run_started(progress_start: Callable[[Any, int], None]) -> Callable[[Any, int], None]:
    """``progress_start``, preceded by :func:`gc.freeze` and :func:`gc.enable`: called when every
    plugin is loaded and the first request is about to go out, so the objects built so far
    (modules, classes, plugins, the configuration) are left out of every later garbage collection
    — and out of the interpreter's collections at exit, which took 40-50 ms of a run's wall time
    walking them. Until then the collector is off (:func:`evalkit.cli.main` turns it off for a
    command that sets ``collects_garbage_from_run_start``): collections while ~400 modules are
    imported found nothing to free and cost ~30 ms of a run's start-up."""

    def start(run: Any, total: int) -> None:
        import gc

        gc.freeze()
        gc.enable()
        progress_start(run, total)

    return start


#: How many elements of a streamed list are encoded by one ``json.dumps`` call (one call per
#: element cost more than the encoding itself).
STREAMED_BATCH = 500


def print_json(document: Any, *, compact: bool = False) -> None:
    """Print one machine-readable JSON document on stdout, indented unless ``compact``.

    Strings are scrubbed of secrets (as every printed line is), and characters a terminal would
    act on that JSON leaves raw (DEL, C1 controls, bidirectional overrides, line separators, lone
    surrogates, zero-width characters) are written as ``\\uXXXX`` escapes: the document parses to
    the same data.
    """
    writer = _JsonWriter(compact)
    stdout().write(writer.text(document) + "\n")


def print_json_streamed(
    document: dict[str, Any], key: str, items: Any, *, encoded: bool = False, batch: int = STREAMED_BATCH
) -> None:
    """Print ``document`` compact, with ``document[key]`` a list written from the iterable
    ``items`` one element at a time (each scrubbed and escaped as :func:`print_json` does): a
    100,000-case ``--json`` never holds the whole list, nor the whole text, in memory.

    ``encoded``: each item is already the compact JSON text of its element (as ``json.dumps(item,
    separators=(",", ":"), ensure_ascii=False)`` writes it), or of several joined by commas; it is
    scrubbed and escaped the same way. ``batch``: how many items one write takes.
    """
    writer = _JsonWriter(compact=True)
    marker = "@evalkit:streamed-list@"
    head, separator, tail = writer.text({**document, key: marker}).partition(json.dumps(marker))
    if not separator:  # a secret or an escape changed the marker: print the list whole
        elements = [json.loads(item) for item in items] if encoded else list(items)
        print_json({**document, key: elements}, compact=True)
        return
    import itertools

    out = stdout()
    out.write(head + "[")
    separator = ""
    items = iter(items)
    while group := list(itertools.islice(items, batch)):
        out.write(separator + (writer.encoded_text(",".join(group)) if encoded else writer.text(group)[1:-1]))
        separator = ","
    out.write("]" + tail + "\n")


def print_cases_json(document: dict[str, Any], cases: Any, case_count: int) -> None:
    """Print ``document`` with its ``"cases"`` made of ``cases`` (an iterable of
    :class:`~evalkit.runs.CaseResult`): whole and indented for a run of at most
    :data:`COMPACT_JSON_CASES` cases, else compact and case by case (:func:`print_json_streamed`,
    each case's text written by :func:`~evalkit.cli.render.case_json`), so a 100,000-case run never
    holds the list, nor a document per case."""
    from .render import case_document, case_json

    if prints_compact(case_count):
        print_json_streamed(document, "cases", map(case_json, cases), encoded=True)
    else:
        print_json({**document, "cases": [case_document(case) for case in cases]})


class _JsonWriter:
    """JSON text of one value, scrubbed of secrets and with what a terminal acts on escaped."""

    def __init__(self, compact: bool) -> None:
        from ..privacy import is_scrubbable, secrets_to_hide

        self.compact = compact
        self.secrets = [secret for secret in secrets_to_hide() if isinstance(secret, str) and is_scrubbable(secret)]
        self.escaped = [json.dumps(secret, ensure_ascii=False)[1:-1] for secret in self.secrets]

    def dumped(self, value: Any) -> str:
        if self.compact:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)

    def scrubbed(self, value: Any) -> Any:
        from ..privacy import remove_secrets

        if isinstance(value, str):
            return remove_secrets(value, self.secrets)
        if isinstance(value, dict):
            return {self.scrubbed(k): self.scrubbed(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.scrubbed(v) for v in value]
        return value

    def text(self, value: Any) -> str:
        """``value`` as JSON text, scrubbed and escaped."""
        from ..printable import json_visible

        text = self.dumped(value)
        # A secret inside a string shows in the text as its JSON-escaped form; only when one does is
        # the value walked and scrubbed string by string (a walk in Python, slow on 100,000 cases).
        if any(secret in text for secret in self.escaped):
            text = self.dumped(self.scrubbed(value))
        # json.dumps already escapes the C0 controls; the rest of what a terminal acts on is escaped here.
        return json_visible(text)

    def encoded_text(self, text: str) -> str:
        """JSON text of compact elements joined by commas (what this writer's compact
        :meth:`dumped` wrote for them), scrubbed and escaped as :meth:`text` does."""
        if any(secret in text for secret in self.escaped):
            return self.text(json.loads(f"[{text}]"))[1:-1]
        from ..printable import json_visible

        return json_visible(text)


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--config`` and ``--database``."""
    parser.add_argument(
        "--config", metavar="PATH",
        help="configuration file (default: $EVALKIT_CONFIG, else the nearest evalkit.toml or [tool.evalkit] in pyproject.toml, here or in a parent folder)",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help="results database URL (default: EVALKIT_DATABASE_URL, the config's database, or .evalkit/results.db in the project root)",
    )


def add_tolerance_options(parser: argparse.ArgumentParser, first: str, second: str, what: tuple[str, str]) -> None:
    """Two tolerance options (kept as raw text so they are validated exactly) and the gate flag."""
    parser.add_argument(
        f"--{first}", default=None, metavar="X",
        help=f"largest accepted absolute drop of the {what[0]}, a finite number in 0..1 "
        f"(default: [gate] {first.replace('-', '_')}, else 0.1; a drop equal to it passes)",
    )
    parser.add_argument(
        f"--{second}", default=None, metavar="X",
        help=f"largest accepted absolute drop of the {what[1]}, a finite number in 0..1 (default: [gate] {second.replace('-', '_')}, else 0.1)",
    )
    parser.add_argument(
        "--fail-on-regression", action="store_true",
        help="exit 1 on a regression, and when the run cannot be compared (for CI)",
    )
    parser.add_argument(
        "--fail-on-new-failures", action="store_true",
        help="exit 1 also when a case added to the set, or edited since the baseline, fails",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")


def add_baseline_option(parser: argparse.ArgumentParser) -> None:
    """``--baseline RUN_ID``: compare with a chosen stored run of the same scope."""
    parser.add_argument(
        "--baseline", metavar="RUN_ID",
        help="compare with this stored run instead of the scope's accepted baseline (refused, exit 2, when it is of another scope)",
    )


def database_url(args: argparse.Namespace, config: Any) -> str:
    """The database a command uses: --database, EVALKIT_DATABASE_URL, the config, then the default."""
    from ..storage import resolve_database_url

    return resolve_database_url(getattr(args, "database", None), config)


def add_report_option(parser: argparse.ArgumentParser) -> None:
    """``--report FORMAT[:PATH]``, repeatable (checked when the command runs, before anything is called)."""
    parser.add_argument(
        "--report", action="append", metavar="FORMAT[:PATH]",
        help="also write a report: junit, markdown, html, json or an installed reporter (see `evalkit list`); "
        'repeatable; PATH "-" is standard output; without a path markdown is appended to $GITHUB_STEP_SUMMARY '
        "when set, other formats print. A failing reporter is named on stderr and does not change the exit code",
    )
