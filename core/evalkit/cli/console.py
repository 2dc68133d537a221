"""The terminal boundary: every line evalkit prints for people, on standard output or standard
error, passes through one :class:`Output`, which makes text from plugins, sets, endpoints and the
store safe once, where it leaves the program.

"Safe" is :func:`literal`: the secrets of the components built in this process become ``***``
(:func:`evalkit.privacy.remove_secrets`), characters a terminal or a CI runner acts on become
visible escapes (:func:`evalkit.printable.visible`), and rich markup in the data is never
interpreted. Call sites do not escape; they say which text is evalkit's own:

- a ``str`` given to the console — to :meth:`Output.print`, as a table's cell, to
  :meth:`Output.plain` — is data, all of it: ``out.print(f"Grader:     {run.grader}")`` shows the
  grader as it is, on one line;
- :meth:`Output.line` and :meth:`Output.text` take a template of evalkit's own rich markup and the
  values to put in it, each of them data: ``out.line("[bold]Run {run_id}[/bold]", run_id=run.id)``.
  A value that is already a rich ``Text`` (made by :meth:`Output.text`) keeps its styles;
- :class:`Lines` marks data whose line breaks are meant (an answer, an error message): its lines
  stay lines, each cut in its middle past :data:`~evalkit.shapes.MAX_MESSAGE_LINE` characters;
  any other value is one line, cut the same way — on a terminal rich wraps a long value into
  lines of its width, so the cut is made here, where every value enters the output, and never
  at the call sites (a set's problem of 12,000 characters is shown as 2,000 and how many were cut).

``--json`` has its own boundary (:mod:`evalkit.cli.json_output`); what a plugin prints itself goes
to standard error (:mod:`evalkit.cli.stdout`), made safe the same way by the streams that stand in
for ``sys.stdout`` and ``sys.stderr`` meanwhile (:mod:`evalkit.cli.plugin_streams`) — the console
writes to the real standard error, so its own styling is not escaped. rich is imported only when something is
printed through it: plain lines (:meth:`Output.plain`, :meth:`Output.message`) are written
straight to the stream, so ``evalkit list`` and an error message do not pay for it.
"""

from __future__ import annotations

import os
import string

from .plugin_streams import stderr as real_stderr
from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console
    from rich.text import Text

__all__ = ["COLUMNS_RANGE", "PIPE_WIDTH", "Lines", "Output", "TrimmedLines", "console", "literal", "output_width"]

#: Width of the output when it is not a terminal and COLUMNS is not set: wide enough that a
#: table's cells are not wrapped for a log or a pipe (the padding is trimmed anyway).
PIPE_WIDTH = 240
#: The narrowest and widest output a ``COLUMNS`` value may ask for; outside, it is ignored.
COLUMNS_RANGE = (20, 100_000)


class Lines:
    """Data whose line breaks and tabs are meant (an answer, an error message, a traceback): shown
    as lines, each cut in its middle when it is too long (:func:`evalkit.shapes.clipped_lines`),
    and otherwise made safe as any value is."""

    __slots__ = ("text",)

    def __init__(self, text: object) -> None:
        self.text = text if isinstance(text, str) else str(text)

    def __repr__(self) -> str:
        return f"Lines({self.text!r})"


def literal(value: object, *, markup: bool = True, multiline: bool = False) -> str:
    """``value`` as text that prints as itself: what :class:`Output` does to every value.

    Secret values of the components built in this process (``secret_values()``) become ``***``;
    the text is then cut in its middle past :data:`~evalkit.shapes.MAX_MESSAGE_LINE` characters —
    as one line, or each of its lines when ``multiline`` (:func:`evalkit.shapes.clipped_line`;
    after the secrets, so a secret astride the cut is never shown in part); control and format
    characters become visible escapes (``\\x1b``, ``\\r``, ``\\x00``, and ``\\n`` unless
    ``multiline``, for answers and messages whose lines are meant; see
    :func:`evalkit.printable.visible`); and — unless ``markup`` is false, for text that is not put
    into rich markup — rich markup is escaped, so a set named ``[/]`` is shown as ``[/]``.
    """
    from ..printable import visible
    from ..privacy import remove_secrets, secrets_to_hide
    from ..shapes import clipped_line, clipped_lines

    text = value if isinstance(value, str) else str(value)
    text = remove_secrets(text, secrets_to_hide())
    text = clipped_lines(text) if multiline else clipped_line(text)
    text = visible(text, keep="\n\t" if multiline else "")
    if markup:
        from rich.markup import escape

        text = escape(text)
    return text


def _safe(value: object, *, markup: bool) -> str:
    """``value`` made safe: a :class:`Lines` keeps its lines (each cut when too long), anything
    else is one line (cut when too long)."""
    if isinstance(value, Lines):
        return literal(value.text, markup=markup, multiline=True)
    return literal(value, markup=markup)


class _Template(string.Formatter):
    """Fills a template of evalkit's own markup: every value is data, made safe with its markup
    escaped — except a rich ``Text``, safe already, which brings its styles along."""

    def format_field(self, value: Any, format_spec: str) -> str:
        from rich.text import Text

        if isinstance(value, Text):
            return value.markup
        if isinstance(value, Lines):
            return _safe(value, markup=True)
        return _safe(format(value, format_spec), markup=True)


_TEMPLATE = _Template()


class Output:
    """Where evalkit's text for people goes: one stream (standard output or standard error), and
    the rich console that renders onto it — built on first use, with every ``str`` rich is given
    made safe (see the module's docstring)."""

    def __init__(self, stream: Any) -> None:
        tty = stream.isatty()
        self.tty = tty
        #: The stream written to: the real one on a terminal, else one that drops rich's padding.
        self.file = stream if tty else TrimmedLines(stream)
        self._width = output_width(stream, tty)
        self._rich: Console | None = None

    @property
    def rich(self) -> Console:
        """The rich console (for a progress bar); every plain string it renders is data."""
        if self._rich is None:
            self._rich = _safe_console_class()(
                file=self.file,
                highlight=False,
                emoji=False,  # ":warning:" in a case id is text, not an emoji code
                width=self._width,
                no_color=not self.tty or "NO_COLOR" in os.environ,
                soft_wrap=not self.tty,
            )
        return self._rich

    @property
    def width(self) -> int:
        """How many columns a line may take."""
        return self.rich.width

    def print(self, *renderables: Any, **options: Any) -> None:
        """rich's ``print``: a table, a ``Text`` from :meth:`text`, or a ``str`` — data, shown as it is."""
        self.rich.print(*renderables, **options)

    def text(self, template: str, /, *args: Any, **values: Any) -> Text:
        """``template`` — evalkit's own rich markup, with ``str.format`` fields — filled with the
        values, each made safe (a rich ``Text`` keeps its styles): a table cell, or a styled part
        of another template."""
        from rich.text import Text

        return Text.from_markup(_TEMPLATE.vformat(template, args, values), emoji=False)

    def line(self, template: str = "", /, *args: Any, style: str | None = None, **values: Any) -> None:
        """Print ``text(template, *args, **values)`` as a line (a blank line without a template)."""
        self.print(self.text(template, *args, **values) if template else "", style=style)

    def plain(self, text: object) -> None:
        """Write ``text`` — data — as one line, unwrapped, as ``print`` would: no markup, no rich;
        longer than :data:`~evalkit.shapes.MAX_MESSAGE_LINE` characters, it is cut in its middle."""
        self.file.write(_safe(text, markup=False) + "\n")

    def message(self, text: object) -> None:
        """Write ``text`` — a message, an error, a traceback — as data whose lines are meant
        (:class:`Lines`), unwrapped, as ``print`` would."""
        self.file.write(_safe(Lines(text), markup=False) + "\n")

    def safe(self, value: object) -> str:
        """``value`` made safe as plain text, for a rich object that takes plain text itself (a
        progress bar's description)."""
        return _safe(value, markup=False)


_SAFE_CONSOLE: type | None = None


def _safe_console_class() -> type:
    """rich's Console, with every plain string it renders taken as data; made on first use."""
    global _SAFE_CONSOLE
    if _SAFE_CONSOLE is None:
        from rich.console import Console

        class SafeConsole(Console):
            """A rich console that renders a ``str`` — an argument of ``print``, a table's cell or
            header — as data: made safe, never read as markup or emoji codes, never highlighted."""

            def render_str(self, text: str, **options: Any) -> Text:
                options.update(markup=False, emoji=False, highlight=False)
                return super().render_str(_safe(text, markup=False), **options)

            def on_broken_pipe(self) -> None:
                """The reader left: raise ``BrokenPipeError`` for the command's caller to handle
                (:mod:`evalkit.cli`), where rich ends the process with ``SystemExit(1)``."""
                self.quiet = True
                raise BrokenPipeError(32, "the reader of standard output has gone")

        _SAFE_CONSOLE = SafeConsole
    return _SAFE_CONSOLE


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


def console(stderr: bool = False) -> Output:
    """The :class:`Output` for standard output (``stderr``: standard error); when not a terminal:
    no colour, no wrapped cells, no padding or trailing spaces."""
    return Output(real_stderr() if stderr else stdout())


def output_width(stream: Any, tty: bool) -> int | None:
    """The width to render at: ``COLUMNS`` when it is a whole number in :data:`COLUMNS_RANGE`;
    else, on a terminal, its own width (``None``: rich asks it), and :data:`PIPE_WIDTH` elsewhere.
    ``COLUMNS=abc`` crashed a run's output, and ``0`` or ``-5`` printed nothing at all."""
    from ..shapes import whole_number

    raw = os.environ.get("COLUMNS", "")
    columns = whole_number(raw, max_digits=6)
    if columns is not None and COLUMNS_RANGE[0] <= columns <= COLUMNS_RANGE[1]:
        return columns
    if not tty:
        return PIPE_WIDTH
    if not raw:
        return None
    try:  # set but unusable: rich would take it as it is, so the terminal is asked here
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        return 80
