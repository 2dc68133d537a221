"""``evalkit.lexical``: BM25 over a local corpus, with SQLite FTS5 and nothing else.

The corpus is a JSONL file of ``{"id": ..., "text": ..., "title": ...}`` objects (BEIR's
``corpus.jsonl`` with ``_id`` works as it is), a BEIR folder (one holding ``corpus.jsonl``: that
file is the corpus, so the retriever and the ``evalkit.collections`` question set can point at the
same folder) or a folder of ``.txt``/``.md`` files, each file one document whose id is its path
relative to the folder without the suffix (``guides/install``).

Documents are indexed once into an FTS5 table (Porter stemming over ``unicode61`` tokens,
diacritics folded, title and text as two columns) in a cache directory, under a name derived
from the corpus path, its content hash and what builds an index (:func:`index_build`: the schema,
the tokenizer and the reader's version): an unchanged corpus reuses its index, a changed one, or
one a different evalkit indexed, gets a new index and the stale one is removed. The same folder
keeps each JSONL corpus's id set for the ``evalkit.collections`` qrels check (:func:`corpus_ids`).
A question becomes an OR query of its distinct
terms minus English stopwords, each term quoted so FTS5 syntax in a question is just text, ranked
by FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, fixed by SQLite). Results come back as ``(id, score)``
pairs, the score being BM25 (higher is better). With ``min_score`` set, documents scoring below
it are not returned, so a question nothing in the corpus answers can come back empty (see
docs/retrieval.md, "Choosing min_score").

On SciFact (BEIR, test split) this scores nDCG@10 0.687 against 0.679 for the published
Lucene/Anserini BM25 baseline; see ``bench/retrieval.py``. A folder document's title is its id,
so the words of its path are searchable too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import attrs
from evalkit.environment import variable
from evalkit.errors import ConfigError, PluginError, RetrievalError
from evalkit.jsonparse import parse_json
from evalkit.options import number, option
from evalkit.questions import NOT_APPLICABLE, RetrievalProvenance
from evalkit.shapes import whole_number
from evalkit.textfiles import open_regular_file, utf8_text
from evalkit.wording import path_named, quoted

__all__ = [
    "Document",
    "LexicalIndex",
    "LexicalRetriever",
    "STOPWORDS",
    "corpus_ids",
    "corpus_sha256",
    "default_index_dir",
    "index_build",
    "query_terms",
]

#: Declared as ``pipeline_identity``; bump it when tokenisation, query building or ranking change.
PIPELINE_IDENTITY = "evalkit.lexical-fts5-bm25-v1"
#: The index's schema; bump it when the tables an index holds change.
INDEX_FORMAT = "fts5-v1"
TOKENIZER = "porter unicode61 remove_diacritics 2"
#: The rules a corpus is read by; bump it when a corpus the reader took is now refused or read
#: differently. 2: a key written twice in a JSONL line is refused (the last value won). 3: a document
#: id given twice is refused by the reader itself, so the cached id sets (:func:`corpus_ids`) see it.
READER_VERSION = 3
#: Lucene's English stopword list, as BEIR's BM25 baselines use it.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    " these they this to was will with".split()
)
FOLDER_SUFFIXES = (".txt", ".md")
#: The corpus file of a BEIR folder.
BEIR_CORPUS = "corpus.jsonl"
_TERM = re.compile(r"[^\W_]+")
_CHUNK = 1 << 20


@attrs.frozen
class Document:
    """One searchable document."""

    id: str
    text: str
    title: str = ""


@attrs.frozen
class LexicalIndex:
    """An index ready for search: where it is, what it holds, and whether this call built it."""

    path: Path
    corpus_sha256: str
    documents: int
    built: bool
    seconds: float


def index_build() -> str:
    """What an index is built by: its schema, the tokenizer and the corpus reader (no option changes
    an index: ``title_weight`` and ``min_score`` apply at search time). Its digest is part of every
    index file's name and its text is kept in the index, so an index another evalkit built (an older
    reader that accepted what this one refuses) is rebuilt, never served."""
    return f"{INDEX_FORMAT};{TOKENIZER};reader-{READER_VERSION}"


#: Where an index folder given by the retriever's own ``index_dir`` option came from, as messages say it.
_FROM_INDEX_DIR_OPTION = "its index_dir option"

#: What a user sets when the default index folder cannot be had or made: said by every such refusal.
_INDEX_DIR_SETTINGS = (
    "set EVALKIT_CACHE_DIR to a folder that can be written, or give the retriever its own "
    '(index_dir = "…" in [deployments.NAME.retrievers."evalkit.lexical"])'
)


def _default_index_dir_and_origin() -> tuple[Path, str]:
    """:func:`default_index_dir`, and where it came from (for messages). Raises ``RuntimeError``
    (as pathlib does for it) when the user cache folder is wanted and there is no home folder:
    ``HOME`` unset for a user the system does not know (a container run under an arbitrary uid), or
    ``HOME`` set and empty, which ``~`` reads as ``/`` (the indexes went to ``/.cache``)."""
    cache = variable("EVALKIT_CACHE_DIR", "a folder for evalkit's caches", "use $XDG_CACHE_HOME or ~/.cache")
    if cache is not None:
        return Path(cache).expanduser() / "lexical", "$EVALKIT_CACHE_DIR"
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "evalkit" / "lexical", "$XDG_CACHE_HOME"
    if "HOME" in os.environ and not os.environ["HOME"].strip():
        raise RuntimeError("HOME is set but empty, so there is no home folder for the user cache folder")
    try:
        home = Path.home()
    except RuntimeError:
        raise RuntimeError(
            "HOME is not set and the system knows no home folder for this user, so there is no user cache folder"
        ) from None
    return home / ".cache" / "evalkit" / "lexical", "the user cache folder"


def default_index_dir() -> Path:
    """``$EVALKIT_CACHE_DIR/lexical``, else ``$XDG_CACHE_HOME/evalkit/lexical``, else
    ``~/.cache/evalkit/lexical``; ``RuntimeError`` when that needs a home folder there is none of."""
    return _default_index_dir_and_origin()[0]


def query_terms(question: str) -> list[str]:
    """The distinct lowercase terms of ``question`` without stopwords, in order of appearance."""
    return [t for t in dict.fromkeys(_TERM.findall(question.lower())) if t not in STOPWORDS]


def _folder_files(root: Path) -> list[tuple[str, Path]]:
    files = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.suffix.lower() in FOLDER_SUFFIXES and path.is_file():
            files.append((relative.as_posix(), path))
    files.sort()
    return files


def _hash_file(digest: hashlib._Hash, path: Path) -> None:
    with open_regular_file(path) as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)


def corpus_sha256(corpus: str | os.PathLike[str]) -> str:
    """SHA-256 over the corpus content: the JSONL file's bytes, or every folder file's path, size and bytes."""
    path = Path(corpus)
    digest = hashlib.sha256()
    if path.is_dir():
        for name, file in _folder_files(path):
            digest.update(f"{name}\0{file.stat().st_size}\0".encode())
            _hash_file(digest, file)
    else:
        _hash_file(digest, path)
    return digest.hexdigest()


def _jsonl_documents(path: Path, digest: hashlib._Hash) -> Iterator[Document]:
    """The documents of JSONL corpus ``path``, feeding its bytes to ``digest``. A line that is not
    UTF-8, not a JSON object of the expected shape, or that repeats an earlier line's id is a
    :class:`ConfigError` naming the file and line: every reader of the corpus (the index, the
    collections' qrels check through :func:`corpus_ids`) meets the same refusal."""
    lines: dict[str, int] = {}
    with open_regular_file(path) as handle:
        for number, raw in enumerate(handle, start=1):
            digest.update(raw)
            where = f"{path_named(path)}, line {number}"
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8", "strict").strip()
            except UnicodeDecodeError as exc:
                raise ConfigError(
                    f"evalkit.lexical corpus {where}: not UTF-8 ({exc.reason} at byte {exc.start})"
                ) from None
            if not line:
                continue
            try:
                record = parse_json(line, unique_keys=True)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"evalkit.lexical corpus {where}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise ConfigError(f"evalkit.lexical corpus {where}: each line must be a JSON object")
            doc_id = record.get("id", record.get("_id"))
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id:
                raise ConfigError(f'evalkit.lexical corpus {where}: "id" (or "_id") must be a non-empty string')
            text = record.get("text")
            title = record.get("title") or ""
            if not isinstance(text, str) or not isinstance(title, str):
                raise ConfigError(f'evalkit.lexical corpus {where}: "text" (and "title", if given) must be strings')
            first = lines.setdefault(doc_id, number)
            if first != number:
                raise ConfigError(
                    f"evalkit.lexical corpus {where}: document id {quoted(doc_id)} occurs twice (first on line {first})"
                )
            yield Document(doc_id, text, title)


def corpus_documents(corpus: str | os.PathLike[str]) -> Iterator[Document]:
    """Every document of a corpus as this retriever reads it: a JSONL file, a BEIR folder (its
    ``corpus.jsonl``) or a folder of ``.txt``/``.md`` files."""
    path = Path(corpus)
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        path = path / "corpus.jsonl"
    if path.is_dir():
        return _folder_documents(path, hashlib.sha256())
    return _jsonl_documents(path, hashlib.sha256())


#: The shape of a corpus's cached id set (:func:`corpus_ids`); bump it when what the file holds changes.
IDS_CACHE_FORMAT = "corpus-ids-v1"


def corpus_ids(corpus: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None) -> frozenset[str]:
    """The id of every document of ``corpus`` as :func:`corpus_documents` reads it (its errors
    too), a JSONL file's (a BEIR folder's ``corpus.jsonl``) kept in ``cache_dir`` (default
    :func:`default_index_dir`, where indexes are kept): one file per corpus path, holding the ids
    with the file's size, ``mtime_ns``, ``ctime_ns``, inode and :data:`READER_VERSION` they were read
    under and a digest of them. While all of those still hold, the ids come from it, not the
    corpus; a corpus changed since (or while it was read), and a cache file that is unreadable,
    not this shape, for another file, larger than the corpus's ids could be or whose digest does
    not match, is read again and the cache rewritten. A cache that cannot be written — a read-only
    folder, a folder under a file, no home folder to keep it in (:func:`_ids_folder`) — is left
    out, said nowhere: the ids are the same. A folder of text files is read each time (a folder's times
    do not change when a file in it is edited)."""
    path = Path(corpus)
    if path.is_dir() and (path / BEIR_CORPUS).is_file():
        path = path / BEIR_CORPUS
    key = _ids_key(path)
    if key is None:
        return frozenset(document.id for document in corpus_documents(path))
    folder = _ids_folder(cache_dir)
    if folder is None:
        return frozenset(document.id for document in _jsonl_documents(path, hashlib.sha256()))
    cache = folder / f"ids-{hashlib.sha256(os.fsencode(key['corpus'])).hexdigest()[:16]}.json"
    cached = _cached_ids(cache, key, key["size"])
    if cached is not None:
        return cached
    ids = frozenset(document.id for document in _jsonl_documents(path, hashlib.sha256()))
    if _ids_key(path) == key:  # not changed while it was read
        _keep_ids(cache, key, ids)
    return ids


def _ids_folder(cache_dir: str | os.PathLike[str] | None) -> Path | None:
    """The folder :func:`corpus_ids` keeps its cache in, or ``None`` when there is none to be had: a
    home folder that cannot be found (``HOME`` unset for a user the system does not know, as a
    container run under an arbitrary uid is; ``~`` in ``$EVALKIT_CACHE_DIR``). The cache is only a
    saving, and the collections read it from read-only commands (``evalkit list questions``,
    ``evalkit validate``): without a folder the ids are read and nothing is kept, where the
    collection's provider failed with "Could not determine home directory"."""
    try:
        return Path(cache_dir).expanduser() if cache_dir is not None else default_index_dir()
    except RuntimeError:  # pathlib's "Could not determine home directory"
        return None


def _ids_key(path: Path) -> dict[str, Any] | None:
    """What a cached id set of JSONL corpus ``path`` must have been read under; ``None`` for a
    corpus that is not one regular file (a folder, a pipe, a file gone)."""
    try:
        resolved = path.resolve()
        found = os.stat(resolved)
    except (OSError, RuntimeError):
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return {
        "format": IDS_CACHE_FORMAT, "reader": READER_VERSION, "corpus": os.fsdecode(resolved), "size": found.st_size,
        "mtime_ns": found.st_mtime_ns, "ctime_ns": found.st_ctime_ns, "inode": found.st_ino,
    }  # fmt: skip


def _ids_digest(ids: list[str]) -> str:
    return hashlib.sha256(json.dumps(ids).encode()).hexdigest()


def _cached_ids(cache: Path, key: dict[str, Any], size: int) -> frozenset[str] | None:
    """The ids ``cache`` holds when it was written under ``key`` and is whole; ``None`` otherwise
    (``size``: the corpus's, in bytes)."""
    # ids are text of the corpus: as JSON (\uXXXX escapes) at most 6 bytes a corpus byte, with the key around them
    most = 6 * size + 4096
    try:
        with open_regular_file(cache) as handle:
            raw = handle.read(most + 1)
        if len(raw) > most:
            return None
        kept = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    ids = kept.get("ids")
    if (
        not isinstance(ids, list)
        or not all(isinstance(one, str) for one in ids)
        or kept.get("sha256") != _ids_digest(ids)
    ):
        return None
    return frozenset(ids)


def _keep_ids(cache: Path, key: dict[str, Any], ids: frozenset[str]) -> None:
    """Write ``ids`` read under ``key`` to ``cache`` (whole or not at all); nothing when it cannot be written."""
    listed = sorted(ids)
    temporary = cache.with_name(f"{cache.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps({"key": key, "ids": listed, "sha256": _ids_digest(listed)}), encoding="utf-8")
        os.replace(temporary, cache)
    except OSError:
        pass  # a read-only or full cache folder: the ids are read again next time
    finally:
        try:
            temporary.unlink()
        except OSError:
            pass


def _folder_documents(root: Path, digest: hashlib._Hash) -> Iterator[Document]:
    """The documents of a folder of text files, feeding what identifies them to ``digest``; two
    files of one id (``a.txt`` and ``a.md``) are a :class:`ConfigError` naming both."""
    files: dict[str, str] = {}
    for name, file in _folder_files(root):
        data = file.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
        try:
            text = utf8_text(data)
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"evalkit.lexical corpus {path_named(file)}: not UTF-8 ({exc.reason} at byte {exc.start})"
            ) from None
        doc_id = name.rsplit(".", 1)[0]
        first = files.setdefault(doc_id, name)
        if first != name:
            raise ConfigError(
                f"evalkit.lexical corpus {path_named(root)}: document id {quoted(doc_id)} occurs twice ({quoted(first)} and {quoted(name)})"
            )
        yield Document(doc_id, text, doc_id)


def _require_fts5() -> None:
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute(f"CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='{TOKENIZER}')")
    except sqlite3.OperationalError as exc:
        raise PluginError(
            f"evalkit.lexical needs SQLite with FTS5 and the porter tokenizer; this Python's SQLite "
            f"{sqlite3.sqlite_version} says: {exc}",
            group="evalkit.retrievers",
            name="evalkit.lexical",
        ) from None
    finally:
        probe.close()


#: The largest ``title_weight``: a title a million times the text's weight already ranks by titles
#: alone, and BM25's sums over a question's terms stay far from a float's limit below it.
MAX_TITLE_WEIGHT = 1_000_000


@attrs.frozen
class LexicalOptions:
    """The options of ``evalkit.lexical`` (a deployment's ``[deployments.NAME.retrievers."evalkit.lexical"]``)."""

    corpus: str = option(
        'JSONL file ({"id", "title", "text"} a line), BEIR folder or folder of text files; relative to the config file',
        path=True,
    )
    index_dir: str | None = option(
        "where the FTS5 index is cached (default: the user cache folder)", default=None, path=True
    )
    #: At most :data:`MAX_TITLE_WEIGHT`: past it BM25's scores overflow to infinity (``1e308``), and
    #: every question of the run errored with a score that is no finite number.
    title_weight: float = option(
        "BM25 weight of titles against 1.0 for text",
        default=1.0,
        validator=number(at_least=0, at_most=MAX_TITLE_WEIGHT),
    )
    min_score: float | None = option(
        "BM25 floor: documents scoring below it are not returned",
        default=None,
        validator=attrs.validators.optional(number()),
    )


class LexicalRetriever:
    """BM25 retrieval over a local corpus (see the module docstring).

    Built with its :class:`LexicalOptions` (a deployment's
    ``[deployments.<name>.retrievers."evalkit.lexical"]`` table); ``index_dir`` defaults to
    :func:`default_index_dir`. Nothing is read until :meth:`provenance`, :meth:`prepare` or
    :meth:`retrieve` is called.
    """

    identifier = "evalkit.lexical"
    #: Searches share one read-only connection under a lock: safe to ask from several threads.
    thread_safe = True
    Options = LexicalOptions

    def __init__(self, options: LexicalOptions) -> None:
        corpus = options.corpus
        path = Path(corpus).expanduser()
        if not path.exists():
            raise ConfigError(f"evalkit.lexical: corpus {path_named(corpus)} does not exist")
        if path.is_dir() and (path / BEIR_CORPUS).is_file():
            path = path / BEIR_CORPUS
        if not (path.is_dir() or path.is_file()):
            raise ConfigError(f"evalkit.lexical: corpus {path_named(corpus)} is neither a file nor a folder")
        self.min_score = None if options.min_score is None else float(options.min_score)
        self.corpus = path.resolve()
        if options.index_dir is not None:
            self.index_dir, self._index_dir_from = Path(options.index_dir).expanduser(), _FROM_INDEX_DIR_OPTION
        else:
            try:
                self.index_dir, self._index_dir_from = _default_index_dir_and_origin()
            except RuntimeError as exc:  # no home folder: said with what to set, not as the plugin's crash
                raise ConfigError(f"evalkit.lexical: no folder to keep its index in: {exc}; {_INDEX_DIR_SETTINGS}") from None
        self.title_weight = float(options.title_weight)
        self._sha256: str | None = None
        self._index: LexicalIndex | None = None
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        #: The corpus's texts by id, read at the first :meth:`document_text` (the index keeps none).
        self._texts: dict[str, str] | None = None

    def provenance(self) -> RetrievalProvenance:
        """What this retriever searches: the corpus content hash and the fixed lexical pipeline."""
        return RetrievalProvenance(
            corpus_revision=f"sha256:{self.corpus_sha256()[:16]}",
            model_revision=NOT_APPLICABLE,
            chunking_identity="whole-document",
            pipeline_identity=PIPELINE_IDENTITY,
            execution_revision=f"sqlite-{sqlite3.sqlite_version}",
        )

    def corpus_sha256(self) -> str:
        """The corpus content hash, computed once per retriever."""
        if self._sha256 is None:
            self._sha256 = corpus_sha256(self.corpus)
        return self._sha256

    def _index_path(self, sha256: str) -> Path:
        location = hashlib.sha256(os.fsencode(self.corpus)).hexdigest()[:16]
        build = hashlib.sha256(index_build().encode()).hexdigest()[:12]
        return self.index_dir / f"{location}-{sha256[:32]}-{build}.sqlite3"

    def prepare(self) -> LexicalIndex:
        """Open the index of the corpus as this retriever hashed it, building it first when there is none.

        Raises :class:`RetrievalError` when the corpus no longer has that hash by the time it is
        indexed: the index must match the provenance already declared.
        """
        with self._lock:
            if self._index is None:
                self._index = self._open_or_build()
                self._connection = sqlite3.connect(
                    f"{self._index.path.as_uri()}?mode=ro", uri=True, check_same_thread=False
                )
            return self._index

    def _open_or_build(self) -> LexicalIndex:
        _require_fts5()
        sha256 = self.corpus_sha256()
        path = self._index_path(sha256)
        started = time.perf_counter()
        if path.is_file():
            documents = self._verified_count(path, sha256)
            if documents is not None:
                return LexicalIndex(path, sha256, documents, False, time.perf_counter() - started)
        documents = self._build(path, sha256)
        self._prune(path)
        return LexicalIndex(path, sha256, documents, True, time.perf_counter() - started)

    @staticmethod
    def _verified_count(path: Path, sha256: str) -> int | None:
        try:
            with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
                meta = dict(db.execute("SELECT key, value FROM meta"))
        except sqlite3.Error:
            return None
        documents = meta.get("documents", "")
        if meta.get("corpus_sha256") != sha256 or meta.get("build") != index_build() or whole_number(documents) is None:
            return None
        return int(documents)

    def _documents(self, digest: hashlib._Hash) -> Iterator[Document]:
        if self.corpus.is_dir():
            return _folder_documents(self.corpus, digest)
        return _jsonl_documents(self.corpus, digest)

    def _what_to_set(self) -> str:
        """What to do about an index folder that cannot be made or written: give the
        ``index_dir`` option another folder, or (the default's) :data:`_INDEX_DIR_SETTINGS`."""
        if self._index_dir_from == _FROM_INDEX_DIR_OPTION:
            return "give index_dir a folder that can be written"
        return _INDEX_DIR_SETTINGS

    def _build(self, path: Path, sha256: str) -> int:
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
            writable = os.access(self.index_dir, os.W_OK | os.X_OK)
        except OSError as exc:
            raise ConfigError(
                f"evalkit.lexical: cannot make its index folder {path_named(self.index_dir)} (from {self._index_dir_from}): "
                f"{exc.strerror}; {self._what_to_set()}"
            ) from None
        if not writable:
            raise ConfigError(
                f"evalkit.lexical: its index folder {path_named(self.index_dir)} (from {self._index_dir_from}) is not "
                f"writable; {self._what_to_set()}"
            )
        temporary = str(path.with_name(f"{path.stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp"))
        try:
            digest = hashlib.sha256()
            documents = self._write(Path(temporary), digest)
            if digest.hexdigest() != sha256:
                raise RetrievalError(
                    f"evalkit.lexical: corpus {path_named(self.corpus)} changed while it was being indexed"
                )
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return documents

    def _write(self, target: Path, digest: hashlib._Hash) -> int:
        db = sqlite3.connect(target)
        try:
            db.executescript(
                f"""
                PRAGMA journal_mode = OFF;
                PRAGMA synchronous = OFF;
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE documents (rowid INTEGER PRIMARY KEY, doc_id TEXT NOT NULL UNIQUE);
                CREATE VIRTUAL TABLE passages USING fts5(title, body, content='', tokenize='{TOKENIZER}');
                """
            )
            count = 0
            for count, document in enumerate(self._documents(digest), start=1):  # the readers refuse a repeated id
                db.execute("INSERT INTO documents (rowid, doc_id) VALUES (?, ?)", (count, document.id))
                db.execute(
                    "INSERT INTO passages (rowid, title, body) VALUES (?, ?, ?)", (count, document.title, document.text)
                )
            if not count:
                raise ConfigError(f"evalkit.lexical corpus {path_named(self.corpus)}: no documents")
            db.execute("INSERT INTO passages (passages) VALUES ('optimize')")
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("format", INDEX_FORMAT),
                    ("build", index_build()),
                    ("corpus_sha256", digest.hexdigest()),
                    ("corpus", str(self.corpus)),
                    ("documents", str(count)),
                    ("sqlite", sqlite3.sqlite_version),
                ],
            )
            db.commit()
        finally:
            db.close()
        return count

    def _prune(self, keep: Path) -> None:
        location = keep.name.split("-", 1)[0]
        for stale in self.index_dir.glob(f"{location}-*.sqlite3"):
            if stale != keep:
                try:
                    stale.unlink()
                except OSError:
                    pass  # still open elsewhere (Windows); the next build retries

    def retrieve(self, question: str, limit: int) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(document id, BM25 score)`` pairs, best first (ties in corpus order).

        A question shorter than two characters, or without a term that is not a stopword,
        returns ``[]`` without searching, and so does one whose best document scores below
        ``min_score`` — so a "nothing answers this" question can score.
        """
        question = question.strip()
        if limit < 1 or len(question) < 2:
            return []
        terms = query_terms(question)
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        self.prepare()
        try:
            with self._lock:
                if self._connection is None:
                    raise RetrievalError("evalkit.lexical: the retriever was closed while searching")
                rows = self._connection.execute(
                    """
                    SELECT documents.doc_id, -hits.score FROM (
                        SELECT rowid, bm25(passages, ?, 1.0) AS score FROM passages
                        WHERE passages MATCH ? ORDER BY score, rowid LIMIT ?
                    ) AS hits JOIN documents ON documents.rowid = hits.rowid
                    ORDER BY hits.score, hits.rowid
                    """,
                    (self.title_weight, match, limit),
                ).fetchall()
        except sqlite3.Error as exc:
            raise RetrievalError(f"evalkit.lexical: search failed: {exc}") from exc
        floor = self.min_score
        if floor is not None:
            return [(doc_id, score) for doc_id, score in rows if score >= floor]
        return rows

    def document_text(self, document_id: str) -> str | None:
        """The title and text of one document of the corpus (``None`` for an id it does not hold):
        what a relevance judge reads (``evalkit retrieval --judge-unjudged``). The corpus is read
        once, at the first call."""
        with self._lock:
            if self._texts is None:
                self._texts = {
                    d.id: "\n\n".join(p for p in (d.title.strip(), d.text.strip()) if p)
                    for d in corpus_documents(self.corpus)
                }
            return self._texts.get(document_id)

    def close(self) -> None:
        """Release the index file."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
                self._index = None
