"""Files a user named: written whole or not at all, never over a device or pipe; read only when
they are regular files of a bounded size.

Reports, exports and the step summary are CI artifacts: a reader must never see half of one, so a
regular file is written to a temporary file in its own folder and renamed over it at once, or not
changed at all (a full disk, a writer that fails midway). A symbolic link at the name given is
replaced the same way by a regular file, never followed, whatever it leads to: a pull request
that commits ``reports/summary.md -> /etc/…`` must not make CI overwrite a file outside the
workspace (the links in the folders on the way are the user's layout and are followed). Renaming
over anything else would destroy it: ``-o /dev/full`` (as root) once put a regular file where the
device was. A named pipe or a device is therefore written into as ``>`` would, and so is whatever
``/dev/stdout`` or ``/proc/self/fd/N`` names (a shell's redirection must keep its file). A named pipe with no reader
is refused within :data:`PIPE_READER_WAIT_S` (:class:`NoReaderOnPipe`: opening it for writing
blocked for ever), and a reader that takes no data for :data:`PIPE_STALL_S` ends the write.

A file read is a regular file, or for a file read whole a pipe too (``--config <(…)``), and a
file read whole has a size limit: ``/dev/zero`` or ``/dev/urandom`` named as a configuration, a
set file or a corpus never ends (evalkit read it until the system killed it), and opening a named
pipe without a writer blocked for ever. A device or a socket is refused with
:class:`NotARegularFile`, a file past its reader's limit with :class:`FileTooLarge`: ``OSError``s
whose ``strerror`` says why, so every reader's "cannot read X: …" names it.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import re
import select
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import WRITE_FAULT_ERRNOS
from .wording import path_named

__all__ = [
    "FileTooLarge",
    "KeptFile",
    "NoReaderOnPipe",
    "NotARegularFile",
    "PIPE_READER_WAIT_S",
    "PIPE_STALL_S",
    "PIPE_WRITER_WAIT_S",
    "append_text_file",
    "keep_from_outputs",
    "open_regular_file",
    "output_refusal",
    "outputs_relative_to",
    "read_whole_file",
    "staged_text_file",
    "utf8_text",
    "working_directory",
    "write_text_file",
]

#: The folder a relative output path is written under (:func:`outputs_relative_to`); ``None``:
#: the working directory of the moment.
_outputs_base: str | None = None
#: Files no output may replace (:func:`keep_from_outputs`), by real path, with what each is.
_kept: dict[str, str] = {}


def working_directory() -> str | None:
    """The working directory, or ``None`` when it has none (it was removed)."""
    try:
        return os.getcwd()
    except OSError:
        return None


@contextlib.contextmanager
def outputs_relative_to(folder: str | None) -> Iterator[None]:
    """Write every relative path :func:`write_text_file` and :func:`append_text_file` are given
    under ``folder`` while the block runs: the folder a command was started in (``None``: the
    working directory of the moment). A plugin that changes the working directory (at import, or
    in a call) wrote ``--report junit:out.xml`` and ``--export-run`` files into its own folder."""
    global _outputs_base, _kept
    before, _outputs_base = _outputs_base, folder
    kept_before, _kept = _kept, dict(_kept)
    try:
        yield
    finally:
        _outputs_base, _kept = before, kept_before


def keep_from_outputs(path: str | os.PathLike[str], what: str) -> None:
    """Refuse (:class:`KeptFile`) every output :func:`write_text_file` or :func:`append_text_file`
    would write over ``path`` (followed through links), for the rest of the command
    (:func:`outputs_relative_to`): the results store a command opened. ``what`` names it in the
    refusal. ``--export-run results.db`` replaced the store with a TREC run, every run lost."""
    _kept[os.path.realpath(path)] = what


class KeptFile(OSError):
    """An output names a file the command keeps from outputs (its results store); ``strerror`` says which."""


class NotARegularFile(OSError):
    """A path to read names a device, a named pipe or a socket (``strerror`` says which)."""


class FileTooLarge(OSError):
    """A file to read whole is larger than its reader accepts (``strerror`` says the limit)."""


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISSOCK, "a socket"))  # fmt: skip


def open_regular_file(
    path: str | os.PathLike[str], mode: str = "rb", *, pipes: bool = False, **options: Any
) -> IO[Any]:
    """Open ``path`` for reading (``mode`` ``"rb"`` or ``"r"``, ``options`` as :func:`open`'s) when,
    links followed, it is a regular file (or, with ``pipes``, a pipe); else :class:`NotARegularFile`,
    or ``IsADirectoryError`` for a folder. Opened without blocking, so a named pipe nobody writes
    is not waited on (:func:`read_whole_file` waits a moment for its writer). A path that cannot be
    opened says what it is where the system's words would mislead (:func:`_unopenable`)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _unopenable(exc, path) from None
    try:
        mode_bits = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode_bits):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not (stat.S_ISREG(mode_bits) or (pipes and stat.S_ISFIFO(mode_bits))):
            kind = next((name for test, name in _KINDS if test(mode_bits)), "not a file")
            raise NotARegularFile(errno.EINVAL, f"not a regular file but {kind}", str(path))
        os.set_blocking(descriptor, True)
        return open(descriptor, mode, **options)
    except BaseException:
        os.close(descriptor)
        raise


def _unopenable(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc``, raised opening ``path`` to read, as the same kind of error saying what the path is
    when the system's words mislead: a loop of symbolic links (``Too many levels of symbolic
    links`` read as a missing file where a command looked first: `--config` said "does not
    exist"), a symbolic link to nothing (``No such file or directory`` of a name that is there);
    else ``exc`` itself."""
    if exc.errno == errno.ELOOP:
        said = f"a loop of symbolic links ({exc.strerror})"
    elif exc.errno == errno.ENOENT and os.path.islink(path):
        said = f"a symbolic link to {path_named(os.readlink(path))}, which does not exist"
    else:
        return exc
    return type(exc)(exc.errno, said, str(path))


#: How much :func:`read_whole_file` reads at a time.
_READ_CHUNK = 1 << 20
#: How long (seconds) :func:`read_whole_file` waits for a writer on a pipe nobody writes into.
PIPE_WRITER_WAIT_S = 1.0


def _pipe_start(descriptor: int, path: str | os.PathLike[str]) -> bytes:
    """The first bytes of the pipe open at ``descriptor`` (empty when a writer holds it and has
    written nothing yet: the caller then waits for its bytes). A pipe nobody writes into reads as
    an empty file at once — ``--config fifo`` said the file "holds no settings (it is empty, or only
    comments)" — so its writer (``cat conf > fifo &`` opens it only once evalkit reads) is waited
    for :data:`PIPE_WRITER_WAIT_S`, then the pipe is refused as :class:`NotARegularFile`."""
    deadline = time.monotonic() + PIPE_WRITER_WAIT_S
    os.set_blocking(descriptor, False)
    try:
        while True:
            try:
                data = os.read(descriptor, _READ_CHUNK)
            except BlockingIOError:  # a writer holds the pipe: its bytes are read as they come
                return b""
            if data or time.monotonic() >= deadline:
                break
            time.sleep(0.02)
    finally:
        os.set_blocking(descriptor, True)
    if not data:
        raise NotARegularFile(
            errno.ENXIO, f"not a regular file but a pipe nothing writes into (waited {PIPE_WRITER_WAIT_S:g} s for a writer)",
            str(path),
        )  # fmt: skip
    return data


def read_whole_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file or pipe ``path`` (:func:`open_regular_file`), at most ``limit``
    of them; a longer one raises :class:`FileTooLarge` without being read past the limit. A pipe
    nothing writes into is refused once its writer was waited for (:func:`_pipe_start`)."""
    chunks: list[bytes] = []
    held = 0
    with open_regular_file(path, pipes=True) as handle:
        if stat.S_ISFIFO(os.fstat(handle.fileno()).st_mode):
            chunks.append(_pipe_start(handle.fileno(), path))  # before the buffered reader reads a byte
            held = len(chunks[0])
        # In pieces: read(limit + 1) allocates the whole limit (256 MiB for a set file) up front.
        while held <= limit:
            chunk = handle.read(min(_READ_CHUNK, limit + 1 - held))
            if not chunk:
                break
            chunks.append(chunk)
            held += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileTooLarge(errno.EFBIG, f"larger than the {limit:,} bytes it may hold", str(path))
    return data


#: Byte-order marks of the encodings a text file that is not UTF-8 is most often in (Windows
#: PowerShell 5 writes UTF-16 with ``>`` and ``Out-File``); UTF-32's first: it starts like UTF-16's.
_OTHER_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
               (codecs.BOM_UTF16_BE, "UTF-16"))  # fmt: skip


def utf8_text(data: bytes) -> str:
    """``data`` decoded as UTF-8, a byte-order mark first skipped; ``UnicodeDecodeError`` as
    ``bytes.decode`` raises it, except that text starting with UTF-16's or UTF-32's byte-order mark
    is named as such (``exc.reason``: ``it is UTF-16 (save it as UTF-8): its byte-order mark``):
    ``invalid start byte at byte 0`` did not tell a Windows user what to do."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        for mark, name in _OTHER_BOMS:
            if data.startswith(mark):
                raise UnicodeDecodeError(
                    "utf-8", data, 0, len(mark), f"it is {name} (save it as UTF-8): its byte-order mark"
                ) from None
        raise


#: How long (seconds) a named pipe to write is waited on for a reader before it is refused.
PIPE_READER_WAIT_S = 1.0
#: How long (seconds) the reader of a named pipe may take no data before the write is given up.
PIPE_STALL_S = 60.0
#: Names that stand for a file another program holds open (``/dev/stdout``, ``/dev/fd/1``,
#: ``/proc/self/fd/1``): written into, never replaced, whatever they point at.
_DESCRIPTOR_NAME = re.compile(r"/(?:dev/(?:stdout|stderr|fd/)|proc/[^/]+/fd/)")


class NoReaderOnPipe(OSError):
    """A named pipe to write has no reader (``strerror`` says so), or its reader stopped taking data."""


def write_text_file(path: Path, chunks: Iterable[str]) -> None:
    """Write ``chunks`` to ``path`` (UTF-8, ``\\n`` line ends; a lone surrogate — a stored name
    that was not UTF-8 — as its escape ``\\udcff``, which JSON reads back).

    A regular file, a new one or a symbolic link is replaced whole (its folder is created; a
    link's target is neither read nor changed); a named pipe or a device is written into (a pipe
    without a reader raises :class:`NoReaderOnPipe`). An ``OSError`` (a full disk, a folder where the file
    should be) or an exception from ``chunks`` leaves any earlier file as it was.
    """
    _write(Path(path), chunks, append=False)


def append_text_file(path: Path, chunks: Iterable[str]) -> None:
    """Add ``chunks`` at the end of ``path`` (``$GITHUB_STEP_SUMMARY``) as :func:`write_text_file`
    writes: a regular file gets its old text and the new in one replacement, or stays as it was; a
    symbolic link is replaced by a file of the new text alone (its target is not read)."""
    _write(Path(path), chunks, append=True)


def _write(path: Path, chunks: Iterable[str], *, append: bool) -> None:
    path, mode_bits = _output_place(path)
    if mode_bits is not None and stat.S_ISFIFO(mode_bits):
        _write_pipe(path, chunks)
        return
    if _written_into(path, mode_bits):
        flags = os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC) | getattr(os, "O_CLOEXEC", 0)
        descriptor = os.open(path, flags | (0 if _names_a_descriptor(path) else _NO_FOLLOW))
        with open(descriptor, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as out:
            out.writelines(chunks)
        return
    _replace(_replaced_file(path), chunks, append=append)


def _output_place(path: Path) -> tuple[Path, int | None]:
    """Where an output named ``path`` goes (relative to :func:`outputs_relative_to`'s folder) and
    the mode bits of what is there, a symbolic link not followed (``None``: nothing: created);
    refused when it is a folder or a file :func:`keep_from_outputs` keeps (links followed: a link
    to the store is refused too). A descriptor's name (``/dev/stdout``) is what it leads to."""
    if _outputs_base is not None and not path.is_absolute():
        path = Path(_outputs_base, path)
    if _kept and (what := _kept.get(os.path.realpath(path))) is not None:
        raise KeptFile(errno.EEXIST, f"it is {what}, which no output replaces; name another file", str(path))
    try:
        mode_bits: int | None = (os.stat if _names_a_descriptor(path) else os.lstat)(path).st_mode
    except FileNotFoundError:
        mode_bits = None
    if mode_bits is not None and stat.S_ISDIR(mode_bits):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    return path, mode_bits


def output_refusal(path: str | os.PathLike[str]) -> str | None:
    """Why an output named ``path`` could never be written, said before anything is asked of a
    model: ``is a folder``, ``names no file`` (a name of whitespace alone: an unset variable in
    ``--export-run "$OUT "``), ``cannot be made: FOLDER is a file, not a folder`` (a folder on its
    way is a file), ``cannot be made: File name too long`` (what the system says when it cannot
    even look the path up), ``cannot be made: no file can be made in FOLDER (Read-only file
    system)`` (the folder it is written in, or the nearest one there to make its folders in, takes
    no new file: a read-only mount, no permission; :func:`_unwritable`), or that it is a file
    :func:`keep_from_outputs` keeps (the results store's); ``None`` when it may be written. What
    only writing tells (a full disk, a device that refuses bytes) is left to the write.
    ``--report html:reports`` with ``reports/`` a folder ran every prompt, stored the run, then
    failed to write the report, and so did ``--report html:/readonly/r.html``; ``--export-run " "``
    wrote a file named by a space, and ``--export-run .evalkit/results.db`` was refused only after
    the run was stored."""
    given = Path(path)
    if not given.name.strip():
        return "names no file (its name is blank); give a file's path"
    base = _outputs_base if _outputs_base is not None and not given.is_absolute() else None
    place = Path(base or "", given)
    try:
        if place.is_dir() and (not place.is_symlink() or _names_a_descriptor(place)):  # a link is replaced
            return "is a folder; give a file's path"
        # a link at the name is replaced, never followed: what it leads to is not what is written
        written = os.path.join(os.path.realpath(place.parent), place.name) if place.is_symlink() else os.path.realpath(place)
    except OSError as exc:  # a name too long, a loop of links: no write could make it
        return f"cannot be made: {exc.strerror or exc}"
    if _kept and (what := _kept.get(written)) is not None:
        return f"is {what}, which no output replaces; name another file"
    for folder in given.parents:  # named as given, looked at where the output goes
        try:
            mode_bits = os.stat(Path(base or "", folder)).st_mode
        except OSError as exc:  # not there (created when written), or not ours to look at
            if exc.errno == errno.ENAMETOOLONG:  # a folder on the way no system could make
                return f"cannot be made: {exc.strerror}"
            continue
        if not stat.S_ISDIR(mode_bits):
            return f"cannot be made: {path_named(folder)} is a file, not a folder"
        existing = Path(base or "", folder)
        if (too_long := _name_too_long(existing, given.relative_to(folder))) is not None:
            return too_long
        try:
            there: int | None = os.lstat(place).st_mode
        except OSError:
            there = None
        # a device, a pipe or a descriptor's name is written into, never replaced: its folder need
        # take no file (/dev/null is written by users who may not add a file to /dev)
        return None if _written_into(place, there) else _unwritable(existing, folder)
    return None


#: The prefix of the empty file :func:`_unwritable` makes, and removes at once, to try a folder.
_PROBE_PREFIX = ".evalkit-probe-"


def _unwritable(existing: Path, named: Path) -> str | None:
    """``cannot be made: no file can be made in FOLDER (why)`` when the folder ``existing`` (as the
    user ``named`` it) takes no new file — every output is a new file there (the temporary file
    renamed over the target, or the first of the folders made for it): a read-only mount, a
    folder without write permission, ``/proc``. Tried by making an empty file in it and removing
    it at once, the one test every file system answers truly (permission bits say nothing to
    root, nor of a read-only mount, ACLs or a network file system). A fault of the environment
    (:data:`~evalkit.errors.WRITE_FAULT_ERRNOS`: a full disk) is not the path's: left to the write,
    which says it as such (exit 3)."""
    try:
        handle, probe = tempfile.mkstemp(prefix=_PROBE_PREFIX, dir=existing)
    except OSError as exc:
        if exc.errno in WRITE_FAULT_ERRNOS:
            return None
        return f"cannot be made: no file can be made in {path_named(named)} ({exc.strerror or exc})"
    os.close(handle)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(probe)
    return None


def _name_too_long(existing: Path, below: Path) -> str | None:
    """``cannot be made: File name too long`` when a name in ``below`` (the folders still to be
    made under the folder ``existing``, and the file) is longer than ``existing``'s file system
    allows: looking such a path up fails first on the folder that is not there yet, so the run
    went on and the write failed after it."""
    try:
        longest = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):  # no limit told: the write will say
        return None
    if longest > 0 and any(len(os.fsencode(part)) > longest for part in below.parts):
        return f"cannot be made: {os.strerror(errno.ENAMETOOLONG)}"
    return None


def _written_into(path: Path, mode_bits: int | None) -> bool:
    """Whether an output at ``path`` is written into rather than replaced: a device, a pipe, or
    a descriptor's name (see :func:`_names_a_descriptor`); never a symbolic link the user's
    workspace holds (``mode_bits`` are :func:`os.lstat`'s): that is replaced."""
    if _names_a_descriptor(path):
        return True
    return mode_bits is not None and not stat.S_ISREG(mode_bits) and not stat.S_ISLNK(mode_bits)


#: Refuse to open a link when a pipe or a device is written into (one put there since it was looked at).
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _replaced_file(path: Path) -> Path:
    """The name a replacement of ``path`` renames over: ``path`` itself (a link there included:
    the link is replaced, its target untouched), its folder created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _names_a_descriptor(path: Path) -> bool:
    """True when ``path`` names another program's open file (``/dev/stdout``, ``/proc/self/fd/1``),
    the links in its folders followed: standard output redirected to a file must keep writing into
    that file. A link of the user's own to such a name is not one: it is replaced like any link."""
    named = os.path.abspath(path)
    if _DESCRIPTOR_NAME.match(named):
        return True
    resolved = os.path.join(os.path.realpath(os.path.dirname(named)), os.path.basename(named))
    return _DESCRIPTOR_NAME.match(resolved) is not None


def _replace(target: Path, chunks: Iterable[str], *, append: bool) -> None:
    """Write a temporary file beside ``target`` and rename it over ``target`` (after its old
    bytes when ``append``), keeping an existing regular file's permission bits."""
    temporary = _written_beside(target, chunks, append=append)
    try:
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _written_beside(target: Path, chunks: Iterable[str], *, append: bool = False) -> str:
    """A temporary file beside ``target`` holding ``chunks`` (after ``target``'s bytes when
    ``append``), flushed to disk, with ``target``'s permission bits when it is a regular file, else
    the umask's (never mkstemp's 0600, nor a link's target's); its name. Nothing is left when
    writing it fails."""
    try:
        old: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):  # a link: its target is neither read nor copied
        old = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:  # it named the temporary file, which no one asked for: name the file to write
        raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    try:
        os.chmod(temporary, stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~_umask())
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as out:
            if append and old is not None:
                with open(os.open(target, os.O_RDONLY | _NO_FOLLOW | getattr(os, "O_CLOEXEC", 0)), "rb") as before:
                    out.flush()
                    shutil.copyfileobj(before, out.buffer)
            out.writelines(chunks)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


@contextlib.contextmanager
def staged_text_file(path: Path, chunks: Iterable[str]) -> Iterator[Callable[[], None]]:
    """:func:`write_text_file` in two steps, for a file that must appear only once another is
    written: the text is written now, to a temporary file beside ``path`` (an ``OSError`` here —
    a folder that cannot be made, a full disk — leaves everything as it was), and put in place by
    the function yielded, a rename (over a symbolic link there too, never through it). Left
    without calling it, nothing is changed. A named pipe, a device or a descriptor's name cannot
    be staged: the function yielded writes into it."""
    path, mode_bits = _output_place(Path(path))
    if _written_into(path, mode_bits):
        kept = list(chunks)
        yield lambda: _write(path, kept, append=False)
        return
    target = _replaced_file(path)
    temporary = _written_beside(target, chunks)
    try:
        yield lambda: os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def _write_pipe(path: Path, chunks: Iterable[str]) -> None:
    """Write into the named pipe ``path``: refused when no reader opens it within
    :data:`PIPE_READER_WAIT_S`, given up when its reader takes nothing for :data:`PIPE_STALL_S`."""
    deadline = time.monotonic() + PIPE_READER_WAIT_S
    while True:
        try:
            flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            descriptor = os.open(path, flags | (0 if _names_a_descriptor(path) else _NO_FOLLOW))
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.monotonic() >= deadline:
                raise NoReaderOnPipe(
                    errno.ENXIO, f"no reader on the pipe (waited {PIPE_READER_WAIT_S:g} s for one)", str(path)
                ) from None
            time.sleep(0.02)
    try:
        for chunk in chunks:
            data = memoryview(chunk.encode("utf-8", "backslashreplace"))
            while data:
                try:
                    data = data[os.write(descriptor, data) :]
                except BlockingIOError:
                    _, ready, _ = select.select([], [descriptor], [], PIPE_STALL_S)
                    if not ready:
                        raise NoReaderOnPipe(
                            errno.ETIMEDOUT, f"the reader of the pipe took no data for {PIPE_STALL_S:g} s", str(path)
                        ) from None
    finally:
        os.close(descriptor)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
