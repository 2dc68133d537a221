"""Phrases messages share: counted nouns ("1 case", "2 cases", never "case(s)"), a word the user
gave quoted, "did you mean", and an argument named as its caller gave it (``run_id`` to a Python
caller, ``--run-id`` on the command line)."""

from __future__ import annotations

from contextlib import contextmanager

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = [
    "EvalkitWords", "argument", "arguments_named", "close_matches", "counted", "did_you_mean", "figure", "listed",
    "path_named", "quoted", "shell_line", "shell_word", "suggestion", "table_key", "word_named",
]  # fmt: skip

#: From here on a figure reads in scientific notation (``5.4E+19``), as an amount of money does
#: (:data:`evalkit.costs.SCIENTIFIC_FROM`): a count of 400 digits is no figure anyone reads.
SCIENTIFIC_FIGURE_FROM = 10**15

#: How much less similar than the best a suggestion may be and still be offered beside it.
NEAR_BEST = 0.05

#: How :func:`argument` names an argument inside :func:`arguments_named`: the front end's word for
#: it (the CLI's option, or ``None`` for an argument that front end has no word for); ``None``: the
#: Python caller's keyword. A plain global, not a context variable: a message may be made in a
#: thread the run started, which would not see the CLI's.
_front_end_word: Callable[[str], str | None] | None = None

#: Nouns whose plural is not the singular plus "s".
IRREGULAR = {"repository": "repositories", "was": "were"}


def counted(number: int, noun: str, *, grouped: bool = False) -> str:
    """``counted(1, "case")`` → ``"1 case"``; ``counted(3, "run")`` → ``"3 runs"``; with
    ``grouped``, thousands are grouped: ``"12,000 answers"``. The one wording of a count with its
    noun (a last word of ``noun`` takes the plural: ``"labelled item"`` → ``"labelled items"``,
    ``"reply"`` → ``"replies"``)."""
    shown = f"{number:,}" if grouped else f"{number}"
    if number == 1:
        return f"{shown} {noun}"
    if noun in IRREGULAR:
        return f"{shown} {IRREGULAR[noun]}"
    if noun.endswith("y") and noun[-2:-1] not in ("", "a", "e", "i", "o", "u"):
        return f"{shown} {noun[:-1]}ies"  # a consonant before the y: "entry" → "entries", "key" → "keys"
    return f"{shown} {noun}s"


def figure(number: float) -> str:
    """A count or a duration for people, the one bounded way: rounded to a whole number with its
    thousands grouped (``12,000``) below :data:`SCIENTIFIC_FIGURE_FROM`, from there in scientific
    notation with at most six digits (``5.4E+19``, ``1E+400``), as :func:`evalkit.costs.format_amount`
    prints money; an int past Python's 4,300-digit ``str()`` limit too."""
    from decimal import Decimal

    if abs(number) < SCIENTIFIC_FIGURE_FROM:
        return f"{round(number):,}"
    mantissa, _, exponent = f"{Decimal(number):.5E}".partition("E")
    return f"{mantissa.rstrip('0').rstrip('.')}E{exponent}"


class EvalkitWords(str):
    """evalkit's own words standing where a name would (``(unreadable)``: the entry points of a
    distribution whose ``entry_points.txt`` cannot be read, so no plugin's name is known):
    :func:`quoted` and :func:`word_named` write them as they are, since quotes would present them
    as a name a plugin chose. A ``str``, so a ``--json`` document carries them as text."""

    __slots__ = ()


def quoted(word: object) -> str:
    """``word`` (its ``str()``) in double quotes, as a message names what the user gave (a run id, a set): an empty
    one shows as ``""`` (``there is no run  in the store`` named nothing), one of spaces as ``" "``.
    A ``"`` in it is escaped (``\\"``), so the quotes say where it ends; a backslash is kept as it
    is, so a Windows path reads as typed. Every control character and line break in it is written
    as its escape (``\\x0a``, ``\\x0d``, ``\\u2028``: :func:`evalkit.printable.hidden_escaped`, the
    output boundary's rule), newline and tab included: the boundary keeps the line breaks of an
    error message, which are evalkit's own, so a word holding ``\\nevalkit: ok`` would otherwise
    print a line that reads as evalkit's. Length is the boundary's (a huge word is cut in its
    middle where it is printed). :class:`EvalkitWords` are written as they are: they name nothing."""
    from .printable import hidden_escaped

    if isinstance(word, EvalkitWords):
        return str.__str__(word)
    return '"' + hidden_escaped(f"{word}").replace('"', '\\"') + '"'


def shell_word(word: str) -> str:
    """``word`` quoted for a POSIX shell as a line that continues a run prints it: ``shlex.quote``'s
    form (``my-app``, ``'fast one'``), and for a word holding a hidden character (a control
    character, a line break, an invisible format character: :func:`evalkit.printable.is_hidden`)
    bash's and zsh's ``$'…'`` with each written as its escape (``--provider $'rec\\x1b'``): the
    output boundary escapes a hidden character in what it prints, so ``'rec\\x1b'``, pasted, named
    another provider (a backslash and three letters); raw, it would work the terminal."""
    import shlex

    from .printable import is_hidden

    if not any(is_hidden(char) for char in word):
        return shlex.quote(word)
    return "$'" + "".join(_ansi_c(char) for char in word) + "'"


def _ansi_c(char: str) -> str:
    """``char`` inside ``$'…'``: a hidden one as ``\\xHH``/``\\uHHHH``/``\\UHHHHHHHH`` (always every
    digit: the shell reads no more), a backslash and a quote escaped, any other as it is."""
    from .printable import is_hidden

    if char in "\\'":
        return "\\" + char
    if not is_hidden(char):
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def shell_line(words: Sequence[str]) -> str:
    """``words`` as one command line, each :func:`shell_word`: the one quoting of every printed
    line that continues a run (``evalkit run SET --provider NAME --resume ID``)."""
    return " ".join(shell_word(word) for word in words)


def path_named(path: object) -> str:
    """A file or folder's path as a message names it: as it is (``/work/evals/faq.yaml``, the
    spelling a user copies) when it reads as one unambiguous word, else :func:`quoted`, its hidden
    characters escaped: an empty path, or one holding a space, a quote or a character that is not
    printable (a line break, an ESC, a no-break space), shows as ``"my evals/faq.yaml"`` or
    ``"evals\\x0aevalkit: ok/faq.yaml"``, never as a line of its own or a word that ends early.
    ``path`` is a ``str`` or any ``os.PathLike`` (its ``os.fspath``)."""
    import os

    return word_named(os.fsdecode(os.fspath(path)) if isinstance(path, (os.PathLike, bytes)) else f"{path}")


def listed(names: Iterable[object], empty: str = "none") -> str:
    """``names`` (each its ``str()``) joined with ``", "`` for a message that lists what the user
    or a plugin chose — the configured provider instances, the installed plugins, the deployments,
    the assertion kinds, a prompt's tools — each with its hidden characters written as escapes
    (:func:`evalkit.printable.hidden_escaped`, as :func:`quoted` writes a word): a name holding a
    line break printed a line of its own that read as evalkit's (``several provider instances are
    configured (a`` then ``evalkit: ok``); ``empty`` when there is none."""
    from .printable import hidden_escaped

    shown = ", ".join(hidden_escaped(f"{name}") for name in names)
    return shown or empty


def word_named(word: object) -> str:
    """``word`` (its ``str()``) as it is when it reads as one unambiguous word — not empty, every
    character printable, no space or quote — else :func:`quoted`: the rule of :func:`path_named`,
    and of a listing's column that names what a third party chose (``evalkit list`` names a plugin
    ``acme.grep``, and one called ``my grader`` as ``"my grader"``, exactly as a message quotes it).
    :class:`EvalkitWords` are written as they are."""
    if isinstance(word, EvalkitWords):
        return str.__str__(word)
    text = f"{word}"
    if text and text.isprintable() and not any(c in " \"'" for c in text):
        return text
    return quoted(text)


def table_key(key: str, *, always_quoted: bool = False) -> str:
    """``key`` as a TOML table name writes it, for a message that names a table of the
    configuration (``[providers.{table_key(name)}]``): bare when TOML allows it (letters, digits,
    ``_`` and ``-``), else a TOML basic string: ``"evalkit.lexical"``, ``"a b"``, ``"a\\"b"``, and
    a hidden character (:func:`evalkit.printable.is_hidden`: a line break, an ESC) as TOML's
    ``\\uXXXX`` escape, so the name reads as one key, can be pasted into evalkit.toml, and never
    starts a line or a terminal sequence of its own. ``always_quoted``: in quotes even when TOML
    allows it bare, as messages write a plugin's id (``[graders."decision"]``), which is often
    dotted."""
    from .printable import is_hidden

    if not always_quoted and key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key):
        return key
    body = "".join(
        "\\" + c if c in '"\\' else (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if is_hidden(c) else c
        for c in key
    )
    return f'"{body}"'


def close_matches(word: str, candidates: Iterable[str]) -> list[str]:
    """The candidates close to ``word``, best first (none when nothing is close): click's choice
    for a mistyped option or command (``difflib.get_close_matches``: at most three, at a
    similarity of 0.6 or more), kept to those about as close as the best — one clear meaning
    beats a list of loosely similar names (``--provder`` is ``--provider``, not also ``--grader``).
    A candidate that differs only in case (``Myapp.FAQ``) counts as close too."""
    import difflib

    pool = [c for c in dict.fromkeys(candidates) if c]
    found = difflib.get_close_matches(word, pool)
    if not found:
        by_fold = {c.casefold(): c for c in reversed(pool)}
        return [by_fold[c] for c in difflib.get_close_matches(word.casefold(), by_fold)][:1]
    ratios = [difflib.SequenceMatcher(None, word, c).ratio() for c in found]
    return [c for c, ratio in zip(found, ratios, strict=True) if ratio >= ratios[0] - NEAR_BEST]


def suggestion(found: Sequence[str]) -> str:
    """`` Did you mean "x"?`` (or ``"x" or "y"``) for ``found``, or an empty string for none."""
    if not found:
        return ""
    return " Did you mean " + " or ".join(quoted(c) for c in found) + "?"


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """:func:`suggestion` of the candidates close to ``word``."""
    return suggestion(close_matches(word, candidates))


def argument(name: str, value: object = None, *, option: str | None = None) -> str:
    """A library call's argument ``name`` (with the ``value`` given, if any) as a message names it to
    whoever called: the keyword to a Python caller (``resume``, ``baseline=RUN_ID``), the front
    end's word inside :func:`arguments_named` — on the command line its option (``--resume``,
    ``--baseline RUN_ID``). ``option`` is the whole command-line phrase where it is not the
    keyword's option (``run_id=ID`` with ``resume=True`` is ``--resume ID``). The one way an
    error the library raises names what its caller gave: a message written with ``--run-id`` told
    a Python caller to pass an option it has no way to give. Another front end's words (the pytest
    plugin's ``--evalkit-config``) name an argument as that front end takes it; ``option``, a phrase
    of the command line, is the command line's alone, and an argument a front end has no word for
    is named by its keyword."""
    words = _front_end_word
    word = None if words is None else words(name)
    if word is None:
        return name if value is None else f"{name}={value}"
    if option is not None and words is command_line_option:
        return option
    return word if value is None else f"{word} {value}"


def command_line_option(name: str) -> str:
    """The command line's option for the library argument ``name``: ``run_id`` → ``--run-id``."""
    return "--" + name.replace("_", "-")


@contextmanager
def arguments_named(word: Callable[[str], str | None] = command_line_option) -> Iterator[None]:
    """Within the block, :func:`argument` names each argument by ``word`` (default: as an option of
    the command line; ``evalkit.cli.main`` is such a block; the pytest plugin gives its
    ``--evalkit-*`` options, ``None`` for an argument it has no option for); the naming before is
    restored after."""
    global _front_end_word
    before, _front_end_word = _front_end_word, word
    try:
        yield
    finally:
        _front_end_word = before
