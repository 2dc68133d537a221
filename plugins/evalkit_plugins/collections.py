"""``evalkit.collections``: standard test collections (BEIR folders, TREC files) as golden question sets, from configuration.

Each ``[question_sets."ID"]`` table of the project configuration becomes the question set ``ID``::

    [question_sets."beir.scifact"]          # a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv
    path = "data/scifact"
    split = "test"                          # default "test"

    [question_sets."trec.robust"]           # TREC files
    format = "trec"
    topics = "data/robust/topics.txt"       # <top> SGML (the <title> is the question), qid<TAB>text, or queries.jsonl
    qrels = "data/robust/qrels.txt"         # qid 0 docid grade
    corpus = "data/robust/corpus.jsonl"     # optional: checked to exist; what a retriever indexes

Optional in both: ``name`` and ``description``. Relative paths follow the configuration file, and
every path must lie inside the project (or a place ``[sets] allow_outside`` lists). The options
are declared once, by :class:`CollectionOptions`.

Every query with at least one qrels line becomes a question, in the order of the queries file;
its judged documents are its expected ids with their grades exactly as the qrels give them
(so 0 and negative grades are kept, and judged non-relevant). A question whose grades are all 1
is stored ungraded. Questions have the form ``unspecified`` and no hard class. A qrels line for
a query the queries file lacks, a document judged twice for one query, an id holding a NUL, a
document judged relevant (grade 1 or more) that the collection's own corpus lacks (a BEIR
folder's ``corpus.jsonl``, a TREC ``corpus`` in JSONL; an empty one is a stand-in, not checked),
or an unreadable line is an error naming the file and line. The corpus's ids are read once and
cached beside the lexical retriever's indexes (:func:`evalkit_plugins.lexical.corpus_ids`): a
collection loaded again (``evalkit list questions``, ``validate``) reads them from there until the
corpus file changes.

The built-in ``evalkit.lexical`` retriever indexes the same BEIR folder (title + text) when its
``corpus`` option points at it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs
from evalkit.errors import ConfigError
from evalkit.jsonparse import parse_json
from evalkit.options import OptionError, one_of, option, text
from evalkit.questions import GoldenQuestion, GoldenQuestionSet, QuestionForm
from evalkit.shapes import short_repr, whole_number
from evalkit.textfiles import open_regular_file
from evalkit.wording import path_named, quoted

from evalkit_plugins._config_tables import ConfigTables

__all__ = ["CollectionOptions", "CollectionSets", "read_qrels", "read_queries"]

#: The options each format reads; the others are refused for it.
_FORMAT_KEYS = {"beir": ("path", "split"), "trec": ("topics", "qrels", "corpus")}
_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<[a-z/]|$)", re.S | re.I)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with open_regular_file(path, "r", encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line.rstrip("\r\n")
    except OSError as exc:
        raise ConfigError(f"cannot read {path_named(path)}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path_named(path)}: not UTF-8 ({exc.reason})") from None


def _is_int(text: str) -> bool:
    return whole_number(text, signed=True) is not None


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query id: {document id: grade}}`` from BEIR (``query-id corpus-id score``, header row) or TREC (``qid iter docid rel``) qrels."""
    return _qrels_with_lines(path)[0]


def _qrels_with_lines(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """:func:`read_qrels`'s judgements, and the line of each ``(query, document)``; an id holding a
    NUL is refused (no corpus, no run file and no store can hold it)."""
    judged: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    first = True  # the first line that is not blank may be BEIR's header row
    for number, line in _lines(path):
        if not line.strip():
            continue
        header, first = first, False
        fields = line.split("\t") if "\t" in line else line.split()
        fields = [f.strip() for f in fields]
        if len(fields) not in (3, 4):
            raise ConfigError(
                f"{path_named(path)}, line {number}: expected 'query doc grade' or 'query iteration doc grade', got {line[:80]!r}"
            )
        if not _is_int(fields[-1]):
            if header:
                continue  # BEIR's header row
            raise ConfigError(
                f"{path_named(path)}, line {number}: the grade must be an integer, got {fields[-1][:40]!r}"
            )
        query, document, grade = fields[0], fields[-2], int(fields[-1])
        if not query or not document:
            raise ConfigError(f"{path_named(path)}, line {number}: empty query or document id")
        if "\x00" in query or "\x00" in document:
            which = f"query id {quoted(query)}" if "\x00" in query else f"document id {quoted(document)}"
            raise ConfigError(
                f"{path_named(path)}, line {number}: the {which} holds a NUL character, which no corpus or run file can hold"
            )
        grades = judged.setdefault(query, {})
        if document in grades:
            raise ConfigError(
                f"{path_named(path)}, line {number}: document {quoted(document)} is judged twice for query {quoted(query)}"
            )
        grades[document] = grade
        lines[query, document] = number
    return judged, lines


def _corpus_file(corpus: Path) -> Path | None:
    """The JSONL file of a collection's corpus whose ids can be read (``corpus.jsonl`` of a BEIR
    folder, a ``.jsonl`` file), or ``None`` for a corpus in another form (left unchecked)."""
    if corpus.is_dir():
        corpus = corpus / "corpus.jsonl"
    return corpus if corpus.is_file() and corpus.suffix == ".jsonl" else None


def _check_judged_in_corpus(
    judged: Mapping[str, Mapping[str, int]],
    lines: Mapping[tuple[str, str], int],
    qrels_file: Path,
    corpus: Path,
    where: str,
) -> None:
    """Refuse (:class:`ConfigError`, exit 2) a document judged relevant (grade 1 or more) that the
    collection's own corpus does not hold: no retriever indexing that corpus can return it, so
    every metric counted it a miss and recall could never reach 1, silently. The first such line
    is named (file, line, ids escaped) with the count of the others. Documents judged
    non-relevant (0 or less) may lie outside the corpus: they change no metric. An empty corpus
    file is a stand-in (the deployment's retriever reads its documents elsewhere): not checked."""
    from evalkit_plugins.lexical import corpus_ids  # read as the built-in retriever indexes it, cached

    ids = corpus_ids(corpus)
    if not ids:
        return
    absent = [
        (query, document, grade)
        for query, grades in judged.items()
        for document, grade in grades.items()
        if grade >= 1 and document not in ids
    ]
    if not absent:
        return
    absent.sort(key=lambda found: lines[found[0], found[1]])
    query, document, grade = absent[0]
    others = len(absent) - 1
    more = f" ({others:,} more relevant document{'s are' if others > 1 else ' is'} not in it either)" if others else ""
    raise ConfigError(
        f"{where}: {path_named(qrels_file)}, line {lines[query, document]}: document {quoted(document)}, judged relevant "
        f"(grade {grade}) for query {quoted(query)}, is not in the corpus {path_named(corpus)}{more}: no retriever can return "
        "it, so recall would count it a miss on every run; correct the id, or drop the line"
    )


def _jsonl_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = parse_json(line, unique_keys=True)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path_named(path)}, line {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ConfigError(f"{path_named(path)}, line {number}: each line must be a JSON object")
        query_id = record.get("_id", record.get("id"))
        if isinstance(query_id, int) and not isinstance(query_id, bool):
            query_id = str(query_id)
        text = record.get("text")
        if not isinstance(query_id, str) or not query_id or not isinstance(text, str):
            raise ConfigError(
                f'{path_named(path)}, line {number}: needs "_id" (a non-empty string) and "text" (a string)'
            )
        _add_query(queries, query_id, text, f"{path_named(path)}, line {number}")
    return queries


def _add_query(queries: dict[str, str], query_id: str, text: str, where: str) -> None:
    """Add one query to ``queries``; an id given twice is refused (the second text replaced the
    first, and nothing said so), in each of the three formats."""
    if query_id in queries:
        raise ConfigError(f"{where}: query {short_repr(query_id)} is given twice; keep one text per query id")
    queries[query_id] = text


def read_queries(path: Path) -> dict[str, str]:
    """``{query id: text}`` in file order from ``queries.jsonl``, TREC ``<top>`` topics (the title) or ``qid<TAB>text`` lines."""
    if path.suffix == ".jsonl":
        return _jsonl_queries(path)
    text = "\n".join(line for _, line in _lines(path))
    if "<top>" in text.lower():
        queries: dict[str, str] = {}
        for topic in _TOP.findall(text):
            number, title = _NUM.search(topic), _TITLE.search(topic)
            if number is None or title is None:
                raise ConfigError(f"{path_named(path)}: a <top> without <num> or <title>: {topic.strip()[:80]!r}")
            _add_query(queries, number.group(1), " ".join(title.group(1).split()), str(path))
        return queries
    queries = {}
    for number, line in _lines(path):
        if not line.strip():
            continue
        query_id, _, query = line.partition("\t") if "\t" in line else line.partition(" ")
        if not query_id.strip() or not query.strip():
            raise ConfigError(f"{path_named(path)}, line {number}: expected 'query-id<TAB>text', got {line[:80]!r}")
        _add_query(queries, query_id.strip(), query.strip(), f"{path_named(path)}, line {number}")
    return queries


def _question(query_id: str, text: str, grades: Mapping[str, int]) -> GoldenQuestion:
    if all(g == 1 for g in grades.values()):
        return GoldenQuestion(query_id, text, form=QuestionForm.UNSPECIFIED, expected_document_ids=tuple(grades))
    return GoldenQuestion.graded(query_id, text, grades, form=QuestionForm.UNSPECIFIED)


def _split_name(instance: object, attribute: attrs.Attribute, value: str | None) -> None:  # type: ignore[type-arg]
    """The ``split`` validator: a file name of the folder's ``qrels/``, not a path."""
    if value is not None and (not isinstance(value, str) or not value or "/" in value or "\\" in value):
        raise OptionError(attribute.name, _split_name.requirement, value)  # type: ignore[attr-defined]


_split_name.requirement = 'must name a file of the folder\'s qrels/ without ".tsv", e.g. "test"'  # type: ignore[attr-defined]


@attrs.frozen
class CollectionOptions:
    """One ``[question_sets."ID"]`` table: a BEIR folder, or TREC files."""

    format: str = option(
        '"beir" (a BEIR folder) or "trec" (topics and qrels files)', default="beir", validator=one_of("beir", "trec")
    )
    path: str | None = option("beir: the folder holding queries.jsonl and qrels/<split>.tsv", default=None, path=True)
    split: str | None = option(
        'beir: the qrels file of the folder to use, without ".tsv" (default "test")',
        default=None,
        validator=_split_name,
    )
    topics: str | None = option(
        "trec: the topics (<top> SGML, qid<TAB>text lines, or queries.jsonl)", default=None, path=True
    )
    qrels: str | None = option("trec: the qrels file (qid 0 docid grade)", default=None, path=True)
    corpus: str | None = option(
        "trec: the corpus a retriever indexes (optional; checked to exist)", default=None, path=True
    )
    name: str | None = option(
        "the set's name (default: its identifier)", default=None, validator=attrs.validators.optional(text())
    )
    description: str | None = option("the set's description (default: what it was read from)", default=None)


def _file(value: str | None, key: str, where: str) -> Path:
    if value is None:
        raise ConfigError(f'{where}: {key} = "…" (a path) is required')
    path = Path(value).expanduser()
    if not path.exists():
        raise ConfigError(f"{where}: {key} {path_named(path)} does not exist")
    return path


class CollectionSets(ConfigTables[CollectionOptions]):
    """The question-set provider for ``[question_sets."ID"]`` tables (see the module docstring).

    Shipped with evalkit and registered in ``evalkit.question_sets`` like any provider; evalkit
    builds it with one :class:`CollectionOptions` per table (``config_table``), their paths made
    absolute and checked to lie inside the project.
    """

    Options = CollectionOptions
    config_table = "question_sets.*"

    def golden_question_sets(self) -> list[GoldenQuestionSet]:
        """One set per configured table, read from its files now."""
        return self._loaded(self._load)

    def _load(self, identifier: str, options: CollectionOptions, where: str) -> GoldenQuestionSet:
        given = {key for key in ("path", "split", "topics", "qrels", "corpus") if getattr(options, key) is not None}
        foreign = sorted(given - set(_FORMAT_KEYS[options.format]))
        if foreign:
            takes = ", ".join(_FORMAT_KEYS[options.format])
            raise ConfigError(
                f"{where}: {'key' if len(foreign) == 1 else 'keys'} {', '.join(foreign)} "
                f"not read for format = {quoted(options.format)} (it takes {takes}, name and description)"
            )
        if options.format == "beir":
            folder = _file(options.path, "path", where)
            split = options.split or "test"
            queries_file, qrels_file = folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"
            for needed in (queries_file, qrels_file):
                if not needed.is_file():
                    raise ConfigError(
                        f"{where}: {path_named(needed)} does not exist (a BEIR folder has queries.jsonl and qrels/<split>.tsv)"
                    )
            description = f"BEIR collection {folder.name}, split {split}"
            corpus = _corpus_file(folder)
        else:
            queries_file = _file(options.topics, "topics", where)
            qrels_file = _file(options.qrels, "qrels", where)
            corpus = _corpus_file(_file(options.corpus, "corpus", where)) if options.corpus is not None else None
            description = f"TREC topics {queries_file.name} with qrels {qrels_file.name}"
        queries = read_queries(queries_file)
        judged, lines = _qrels_with_lines(qrels_file)
        missing = [q for q in judged if q not in queries]
        if missing:
            raise ConfigError(
                f"{where}: {path_named(qrels_file)} judges {len(missing)} quer(y/ies) {path_named(queries_file)} does not have "
                f"(first: {missing[0]!r})"
            )
        if corpus is not None:
            _check_judged_in_corpus(judged, lines, qrels_file, corpus, where)
        questions = [_question(q, asked, judged[q]) for q, asked in queries.items() if q in judged]
        return GoldenQuestionSet(
            identifier=identifier,
            name=options.name or identifier,
            description=options.description if options.description is not None else description,
            questions=questions,
        )
