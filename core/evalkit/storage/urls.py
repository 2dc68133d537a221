"""What a database URL names, and the stores refused before anything is called.

A store that cannot keep a run is refused up front (exit 2), never discovered mid-run: a
``sqlite:`` URL with no path (which SQLite would silently open in memory, so every run is lost
and the gate never fires), a path that is not a regular file (``/dev/null``, a folder), a file
or folder that cannot be written, a file that is not an SQLite database or is truncated, and a
PostgreSQL URL that does not parse. An in-memory store is allowed only when spelled
``sqlite:///:memory:``; runs then say they will not be kept.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import StorageError
from ..shapes import clipped
from ..wording import path_named, quoted

__all__ = [
    "MEMORY_URL",
    "check_database_url",
    "check_postgres_url",
    "check_sqlite_file",
    "hide_password",
    "is_in_memory",
    "query_key",
    "redact_url",
    "sqlite_path",
    "url_scheme",
    "with_lower_scheme",
]

#: The one spelling of an in-memory SQLite store.
MEMORY_URL = "sqlite:///:memory:"

_SQLITE_HEADER = b"SQLite format 3\x00"


#: Query parameters of a database URL that hold a secret (libpq, and peewee's URL parser, take
#: ``postgresql://host/db?password=…``), by their key as libpq reads it (:func:`query_key`).
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})

#: One ``key=value`` pair of a query string, as written: its separator, its key, its value.
_QUERY_PAIR = re.compile(r"([?&])([^=&#?]*)=([^&#]*)")

#: The password of a URL's user info: from the user name's ``:`` to the **last** ``@`` before the
#: query string, not the first — a password holding an unescaped ``@`` (``ci:pa@ss@db``: urlsplit,
#: which peewee reads the URL with, takes ``pa@ss``) showed its tail (``ci:***@ss@db``), and one
#: holding ``/`` or ``#`` too (``ci:pa@ss/w#rd@db``, what the user meant). A password holding ``?``:
#: to the last ``@`` of all. A database name holding ``@`` is hidden with it, never a password shown.
_USER_PASSWORD = re.compile(r"(://[^:/@]*:)(?:[^?]*|.*)@", re.DOTALL)

#: A ``password`` or ``sslpassword`` of a libpq key/value connection string (``host=db
#: password=s3cret``, ``password = 'a b'``), the form ``psql`` and libpq's documentation write
#: beside the URL: such a string given as ``--database`` was refused as a URL without a scheme,
#: the refusal quoting it whole, password and all. Its value: a quoted string (``\'`` escapes), or
#: up to the next white space.
_CONNINFO_PASSWORD = re.compile(r"((?:^|\s)(?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE)


def query_key(written: str) -> str:
    """A URL query parameter's key as libpq reads it: percent-decoded (``pass%77ord`` is
    ``password``; a ``+`` stays a ``+``). The one reading of a key, for the parameters passed to the
    server and for the ones hidden in messages alike."""
    return unquote(written)


def _hidden_parameter(found: re.Match[str]) -> str:
    """One query pair with its value shown as ``***`` when its key, decoded, names a secret; another
    pair's value is searched in turn (``?x=1?password=…`` holds a ``?password=`` the scan passed over)."""
    separator, key, value = found.groups()
    if query_key(key).lower() in _SECRET_PARAMETERS:
        return f"{separator}{key}=***"
    return f"{separator}{key}={_QUERY_PAIR.sub(_hidden_parameter, value)}"


def hide_password(url: str) -> str:
    """``url`` with every password it holds shown as ``***``: the user info's
    (``postgresql://ci:***@db/x``) and a ``password`` or ``sslpassword`` query parameter's
    (``?password=***``), whatever characters the password holds and however the key is spelled —
    percent-escaped (``?pass%77ord=``, which libpq decodes to ``password``) or in capitals. The
    rest of the URL is kept whole. So is the value of a ``password=`` in a libpq key/value string
    (``host=db password=***``), which is no URL but is what a user may give as one."""
    hidden = _QUERY_PAIR.sub(_hidden_parameter, _USER_PASSWORD.sub(r"\1***@", url, count=1))
    return _CONNINFO_PASSWORD.sub(r"\1***", hidden)


def redact_url(url: str) -> str:
    """A database URL as a message shows it: its passwords replaced (:func:`hide_password`), cut
    when it is long, and its hidden characters — a line break, an ESC — written as escapes
    (:func:`evalkit.printable.hidden_escaped`, the rule :func:`~evalkit.wording.quoted` applies to
    a word): a message keeps its own line breaks where it is printed, so ``cannot open database
    {redact_url(url)}`` with a URL from the configuration or ``--database`` holding ``\nevalkit: ok``
    printed a line that read as evalkit's. Every message and listing naming a store goes through here."""
    from ..printable import hidden_escaped

    return hidden_escaped(clipped(hide_password(url)))


def is_in_memory(url: str) -> bool:
    """True for ``sqlite:///:memory:``: a store that keeps nothing after the process ends."""
    return url == MEMORY_URL


#: A URL's scheme as RFC 3986 spells it: a letter, then letters, digits, ``+``, ``-`` and ``.``.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def url_scheme(url: str) -> str:
    """The scheme of a database URL, lower-cased (``sqlite``, ``postgresql``, a plugin's); a URL that
    does not start with one (a bare path such as ``results.db``, ``:memory:``, a leading space) is
    refused with :class:`StorageError`, saying how a SQLite file is written."""
    found = _SCHEME.match(url)
    if found is None:
        raise StorageError(
            f"database URL {quoted(redact_url(url))} does not start with a scheme: a SQLite file is sqlite:///PATH "
            "(sqlite:///results.db, relative; sqlite:////srv/results.db, absolute), a PostgreSQL database "
            "postgresql://USER@HOST[:PORT]/DATABASE"
        )
    return found.group()[:-1].lower()


def with_lower_scheme(url: str) -> str:
    """``url`` with its scheme lower-cased (``SQLITE:///x.db`` is ``sqlite:///x.db``): a scheme is
    case-insensitive (RFC 3986), while every test of a URL here, and the choice of a repository
    plugin, reads the lower-case spelling. The rest of the URL is kept as written (a path, a user
    name, a password are case-sensitive); a URL without a scheme is given back as it is, for
    :func:`url_scheme` to refuse."""
    found = _SCHEME.match(url)
    return url if found is None else found.group().lower() + url[found.end() :]


def sqlite_path(url: str) -> str | None:
    """The file a ``sqlite:`` URL names (``:memory:`` for :data:`MEMORY_URL`), or ``None`` for
    another scheme. A ``sqlite:`` URL without a path is refused with :class:`StorageError`."""
    if not url.startswith("sqlite:"):
        return None
    if is_in_memory(url):
        return ":memory:"
    rest = url[len("sqlite:") :]
    if rest.startswith("///"):  # sqlite:///relative/path, sqlite:////absolute/path
        rest = rest[3:]
    elif rest.startswith("//"):
        rest = rest[2:]
        if rest.strip() and rest != ":memory:":  # sqlite://x.db: x.db is a host
            _refuse_other_spelling(url, rest)
    elif rest.strip():  # sqlite:x.db, sqlite:/srv/x.db
        _refuse_other_spelling(url, rest)
    if "\x00" in rest:  # the system calls raise ValueError ("embedded null byte") for such a path
        raise StorageError(f"database URL {quoted(redact_url(url))} holds a NUL character, which no file name can")
    cut = min((rest.find(mark) for mark in "?#" if mark in rest), default=-1)
    if cut >= 0:  # SQLAlchemy and peewee read "?mode=ro" as options: SQLite would take it as part of the name
        kind = "a query string" if rest[cut] == "?" else "a fragment"
        raise StorageError(
            f"database URL {quoted(redact_url(url))} has {kind} ({clipped(hide_password(rest[cut:]))!r}): evalkit takes no "
            f"SQLite options in the URL, and SQLite would store the runs in a file named {clipped(hide_password(rest))!r}; "
            "give the file's path alone"
        )
    if not rest.strip() or rest == ":memory:":
        raise StorageError(
            f"database URL {quoted(redact_url(url))} names no file, so SQLite would keep the runs in memory and lose them; "
            f"use sqlite:///PATH (or {MEMORY_URL} for a store that is deliberately not kept)"
        )
    if rest.startswith("~"):  # sqlite:///~/runs.db is in the home folder, not in a new folder named "~"
        rest = _home_path(url, rest)
    return rest


def _refuse_other_spelling(url: str, path: str) -> None:
    """Refuse (:class:`StorageError`) a ``sqlite:`` URL naming ``path`` without the three slashes
    of ``sqlite:///PATH``: ``sqlite://x.db`` names a host to SQLAlchemy and peewee (peewee's
    ``connect`` refuses it, SQLAlchemy too) and ``sqlite:/srv/x.db`` a relative file to peewee's
    ``parse``, so such a URL meant another file to each tool; evalkit read it as a path from the
    working directory, past a configuration's rule that its store lies in the project."""
    raise StorageError(
        f"database URL {quoted(redact_url(url))} is not spelled sqlite:///PATH, the one spelling every tool reads as the "
        'same file (after "sqlite://" SQLAlchemy and peewee read a host name); write '
        f"sqlite:///{clipped(path)} (three slashes, then the path: sqlite:///results.db, relative to the project "
        "in evalkit.toml; sqlite:////srv/results.db, absolute)"
    )


def _home_path(url: str, path: str) -> str:
    """``path`` (``~/…`` or ``~user/…``) with the home folder put in, as a shell would; refused
    (:class:`StorageError`) when that folder cannot be found: ``os.path.expanduser`` leaves
    ``~nosuchuser/…`` as it is (a folder of that name was made in the working directory) and
    makes ``~/runs.db`` ``/runs.db`` when ``HOME`` is set and empty."""
    user = path[1:].split("/", 1)[0]
    if not user and os.environ.get("HOME") == "":
        raise StorageError(
            f"database URL {quoted(redact_url(url))} names the home folder (~), but HOME is set and empty"
        )
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):
        raise StorageError(
            f"database URL {quoted(redact_url(url))} names the home folder of user {clipped(user)!r}, who does not exist here"
        )
    return expanded


def check_sqlite_file(url: str, path: str, *, writing: bool) -> None:
    """Refuse a SQLite path that cannot hold a store: not a regular file, not an SQLite database,
    truncated, or (when ``writing``) a file or folder that cannot be written."""
    file = Path(path)
    url, path = redact_url(url), path_named(clipped(path))  # as the messages below show them
    try:
        info = file.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise StorageError(f"database {url}: {exc.strerror}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise StorageError(f"database {url}: {path} is {what}; a SQLite store must be a file")
    folder = file.parent if str(file.parent) else Path(".")
    if writing:
        # Said for every command that writes (run, db upgrade, db prune, baseline accept): what is
        # wrong and what to do, never "no run could be stored" to a command that stores none.
        if info is not None and not os.access(file, os.W_OK):
            raise StorageError(
                f"database {url}: {path} is read-only (or immutable), and this command writes to it; make the file "
                "writable (chmod u+w; chattr -i for an immutable one; a read-only mount remounted read-write), or use a "
                "copy that can be written"
            )
        if folder.is_dir() and not os.access(folder, os.W_OK):
            raise StorageError(
                f"database {url}: the folder {path_named(folder)} is read-only, and SQLite writes its -wal and -shm files "
                "there; make the folder writable, or move the store to one that is"
            )
    if info is None or info.st_size == 0:
        return
    try:
        with file.open("rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        raise StorageError(f"database {url}: {exc.strerror}") from None
    if len(header) < 100 or not header.startswith(_SQLITE_HEADER):
        raise StorageError(f"database {url}: {path} is not an SQLite database")
    if (
        not writing
        and header[18:20] == b"\x02\x02"
        and not os.path.exists(f"{file}-shm")
        and not os.access(folder, os.W_OK)
    ):
        # A store in WAL mode is read through its -shm file, which SQLite creates beside it: in a
        # read-only folder every reading command said only "unable to open database file".
        raise StorageError(
            f"database {url}: the folder {path_named(folder)} is read-only and the store is in WAL mode, which SQLite "
            "reads through a -shm file it must create there; copy the file to a folder that can be written, and read the copy"
        )
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    change_counter, valid_for = header[24:28], header[92:96]
    # The in-header size is trustworthy only when written by a SQLite that maintains it (3.7.0+),
    # and only without a write-ahead log: a checkpoint cut short (a full disk) leaves the file
    # shorter than its header while the log still holds the pages.
    try:
        logged = os.stat(f"{file}-wal").st_size > 0
    except OSError:  # no log (or a name that cannot have one: SQLite could not write it either)
        logged = False
    if change_counter == valid_for and pages and not logged and info.st_size < pages * page_size:
        raise StorageError(
            f"database {url}: {path} is truncated ({info.st_size} bytes, its header says {pages * page_size}); "
            "restore it from a backup"
        )
    foreign = _tables_of_another_program(file, url, path)
    if foreign:
        shown = ", ".join(clipped(name, 80) for name in foreign[:5]) + (
            f" and {len(foreign) - 5:,} more" if len(foreign) > 5 else ""
        )
        raise StorageError(
            f"database {url}: {path} holds tables of another program ({shown}) and no evalkit store; nothing was "
            "written to it. evalkit keeps its runs in a file of its own: name another file (a new one is created)"
        )


def _tables_of_another_program(file: Path, url: str, path: str) -> list[str]:
    """The tables of an SQLite file that holds some and none of evalkit's (all named ``evalkit_…``),
    read through a read-only connection before evalkit's own opens it: that connection would turn
    the file to WAL mode and add evalkit's tables to another program's database (``--database
    sqlite:///app.db``), even for a command that only reads. Empty when the file holds a store, no
    table at all, or cannot be read here (the connection that follows says why). A schema whose
    damage SQLite's message cannot say in text is refused (``url`` and ``path``: as messages show them)."""
    import sqlite3
    from urllib.parse import quote

    try:
        connection = sqlite3.connect(f"file:{quote(str(file.resolve()))}?mode=ro", uri=True, timeout=0)
    except (sqlite3.Error, OSError, ValueError):
        return []
    try:
        names = sorted(row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    except sqlite3.Error:  # locked, or unreadable: not this check's to say
        return []
    except UnicodeDecodeError:
        # SQLite's message on a damaged schema quotes its bytes, which Python cannot decode: every
        # command, reading ones too, ended in "internal error (an evalkit bug): UnicodeDecodeError"
        raise StorageError(
            f"database {url}: {path} is damaged (its schema cannot be read: "
            "database disk image is malformed); restore it from a backup"
        ) from None
    finally:
        connection.close()
    names = [name for name in names if isinstance(name, str) and not name.startswith("sqlite_")]
    return [] if any(name.startswith("evalkit_") for name in names) else names


def check_postgres_url(url: str) -> None:
    """Refuse a PostgreSQL URL that does not parse (a bad IPv6 host, a port that is not a number),
    one holding a NUL character, raw or written ``%00`` (every part is percent-decoded before it
    reaches libpq, whose C strings cannot hold one: psycopg raised ``ValueError: embedded null
    character``, an internal error with a traceback in every command that opened the store), and
    one that is not UTF-8 text (a byte that is not, in ``--database`` or the environment, which
    Python reads as a lone surrogate: psycopg raised ``UnicodeEncodeError``)."""
    if "\x00" in unquote(url):
        raise StorageError(
            f"database URL {quoted(redact_url(url))} holds a NUL character (%00), which no PostgreSQL connection "
            "parameter can"
        )
    from ..printable import lone_surrogate

    lone = lone_surrogate(url)
    if lone is not None:
        # bytes that are not UTF-8 in --database or $EVALKIT_DATABASE_URL, as Python decodes them:
        # psycopg raised UnicodeEncodeError ("surrogates not allowed"), an internal error
        code, position = lone
        what = f"the byte 0x{code - 0xDC00:02X}" if 0xDC80 <= code <= 0xDCFF else f"a lone surrogate U+{code:04X}"
        raise StorageError(
            f"database URL {quoted(redact_url(url))} is not UTF-8 text (character {position} stands for "
            f"{what}, which is not UTF-8 there), which libpq cannot take; write it in UTF-8"
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise StorageError(
            f"database URL {quoted(redact_url(url))} is malformed: {_malformed_cause(url, exc)}"
        ) from None
    if not parts.path.strip("/"):
        raise StorageError(
            f"database URL {quoted(redact_url(url))} names no database: use postgresql://USER@HOST[:PORT]/DATABASE"
        )


#: The characters that end a URL's authority, or that only an IPv6 host may hold, written
#: percent-encoded in a password.
_PASSWORD_ESCAPES = "/ %2F, ? %3F, # %23, [ %5B, ] %5D, @ %40"


def _malformed_cause(url: str, exc: ValueError) -> str:
    """Why ``url`` does not parse, without a word of its password: a password holding ``/``,
    ``?`` or ``#`` ends the authority inside it, and ``urlsplit`` read its first part as the port
    (``Port could not be cast to integer value as 's3cret'``, printed whole); one holding ``[`` or
    ``]`` read as an IPv6 host (``Invalid IPv6 URL``). Either is said as what to write instead."""
    rest = url.split("://", 1)[-1]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    user_info = authority.rpartition("@")[0]
    if "@" in rest[len(authority) :] or any(mark in user_info for mark in "[]"):
        return (
            f"its user info does not parse: write a password's special characters percent-encoded ({_PASSWORD_ESCAPES})"
        )
    return str(exc)


def check_database_url(url: str) -> None:
    """Every refusal above that needs no connection, creating nothing: run before anything is called."""
    path = sqlite_path(url)
    if path is not None:
        if path != ":memory:":
            check_sqlite_file(url, path, writing=True)
    elif url.startswith(("postgres://", "postgresql://")):
        check_postgres_url(url)
