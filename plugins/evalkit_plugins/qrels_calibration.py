"""``evalkit.qrels``: a test collection's human relevance judgments (BEIR or TREC qrels) as calibration sets of the ``relevance`` judge.

Each ``[calibration_sets."ID"]`` table of the project configuration becomes the calibration set
``ID``::

    [calibration_sets."beir.scifact"]       # a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv
    path = "data/scifact"
    split = "test"                          # default "test"
    unjudged = 100                          # unjudged pairs sampled as not relevant (default: one per query)
    seed = 13                               # the sample's seed (default 0)
    max_items = 300                         # a seeded sample of at most this many items (default: all)

    [calibration_sets."beir.cranfield"]     # graded: the original qrels, their codes mapped on 0-3
    path = "data/cranfield/beir"            # the queries and the corpus
    qrels = "data/cranfield/original/cranqrel"
    grades = { "1" = 3, "2" = 2, "3" = 1, "4" = 1 }
    exclude_grades = [-1]

Every judged pair becomes an item (``query`` the query's text, ``document`` the document's title
and text, ``label`` the human grade), plus ``unjudged`` pairs drawn with ``seed`` — a query with
judgments and a corpus document nobody judged for it — labelled 0 (not relevant), as TREC practice
counts an unjudged document. Item ids are ``<query id>/<document id>``.

Labels: ``grades`` maps each qrels grade to a label (``"2" = 1``); without it, grades are labels as
they are. A set whose labels are all 0 or 1 is *binary* (labels ``[0, 1]``: the relevance judge's
grade then counts as relevant from 2), any other set is *graded* (labels ``[0, 1, 2, 3]``). A
grade listed in ``exclude_grades`` leaves its pairs out (neither judged nor sampled as unjudged);
a grade neither mapped, excluded nor on 0..3 is an error naming it. A judged document the corpus
lacks, or an empty one, is left out and counted in the set's description.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from evalkit.calibration import CalibrationItem, CalibrationSet
from evalkit.errors import ConfigError
from evalkit.options import OptionError, one_of, option, text, whole
from evalkit.shapes import whole_number
from evalkit.wording import counted, quoted

from evalkit_plugins._config_tables import ConfigTables
from evalkit_plugins.collections import _split_name, read_qrels, read_queries

__all__ = ["GRADED_LABELS", "QrelsCalibrationSets", "QrelsOptions", "calibration_items"]

#: The labels of a graded set: the relevance judge's scale.
GRADED_LABELS = (0, 1, 2, 3)
BINARY_LABELS = (0, 1)


def _grade_map(instance: object, attribute: attrs.Attribute, value: Any) -> None:  # type: ignore[type-arg]
    """The ``grades`` validator: a table of qrels grades (integers as keys) to labels 0..3."""
    if value is None:
        return
    good = isinstance(value, Mapping) and all(
        isinstance(k, str) and whole_number(k.strip(), signed=True) is not None and type(v) is int and 0 <= v <= 3 for k, v in value.items()
    )
    if not good:
        raise OptionError(attribute.name, _grade_map.requirement, value)  # type: ignore[attr-defined]


_grade_map.requirement = 'must map qrels grades to labels 0..3, e.g. { "1" = 3, "2" = 2 }'  # type: ignore[attr-defined]


def _grade_list(instance: object, attribute: attrs.Attribute, value: Any) -> None:  # type: ignore[type-arg]
    if not isinstance(value, (list, tuple)) or not all(type(v) is int for v in value):
        raise OptionError(attribute.name, _grade_list.requirement, value)  # type: ignore[attr-defined]


_grade_list.requirement = "must be a list of integer qrels grades, e.g. [-1]"  # type: ignore[attr-defined]


@attrs.frozen
class QrelsOptions:
    """One ``[calibration_sets."ID"]`` table: a BEIR folder (or TREC files) and how its judgments become labelled items."""

    format: str = option('"beir" (a BEIR folder) or "trec" (topics, qrels and corpus files)', default="beir", validator=one_of("beir", "trec"))
    path: str | None = option("beir: the folder holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv", default=None, path=True)
    split: str | None = option('beir: the qrels file of the folder to use, without ".tsv" (default "test")', default=None, validator=_split_name)
    topics: str | None = option("trec: the topics (<top> SGML, qid<TAB>text lines, or queries.jsonl)", default=None, path=True)
    corpus: str | None = option('trec: the corpus (JSONL of {"_id", "title", "text"})', default=None, path=True)
    qrels: str | None = option("the qrels file (qid 0 docid grade, or qid docid grade); beir: instead of the folder's", default=None, path=True)
    grades: dict[str, int] | None = option('qrels grade to label 0..3, e.g. { "1" = 3, "2" = 2 } (default: grades as they are)', default=None, validator=_grade_map)
    exclude_grades: list[int] = option("qrels grades whose pairs are left out entirely, e.g. [-1]", factory=list, validator=_grade_list)
    unjudged: int | None = option("unjudged pairs sampled and labelled 0, not relevant (default: one per query)", default=None, validator=attrs.validators.optional(whole(at_least=0)))
    seed: int = option("the seed of the unjudged sample and of max_items' sample", default=0, validator=whole(at_least=0))
    max_items: int | None = option("at most this many items, a seeded sample (default: every item)", default=None, validator=attrs.validators.optional(whole(at_least=1)))
    name: str | None = option("the set's name (default: its identifier)", default=None, validator=attrs.validators.optional(text()))


@attrs.frozen
class _Collection:
    """What one table reads: queries, qrels and the corpus's texts, with the file names for messages."""

    queries: Mapping[str, str]
    judged: Mapping[str, Mapping[str, int]]
    texts: Mapping[str, str]
    qrels_file: Path
    description: str


def _file(value: str | None, key: str, where: str) -> Path:
    if value is None:
        raise ConfigError(f'{where}: {key} = "…" (a path) is required')
    path = Path(value).expanduser()
    if not path.exists():
        raise ConfigError(f"{where}: {key} {path} does not exist")
    return path


def _texts(corpus: Path) -> dict[str, str]:
    from evalkit_plugins.lexical import corpus_documents

    return {d.id: "\n\n".join(p for p in (d.title.strip(), d.text.strip()) if p) for d in corpus_documents(corpus)}


def _read(options: QrelsOptions, where: str) -> _Collection:
    if options.format == "beir":
        foreign = [k for k in ("topics", "corpus") if getattr(options, k) is not None]
        if foreign or options.path is None:
            raise ConfigError(f'{where}: format "beir" takes path (and split, qrels), not {", ".join(foreign) or "nothing"}')
        folder = _file(options.path, "path", where)
        split = options.split or "test"
        queries_file, corpus_file = folder / "queries.jsonl", folder / "corpus.jsonl"
        qrels_file = _file(options.qrels, "qrels", where) if options.qrels is not None else folder / "qrels" / f"{split}.tsv"
        for needed in (queries_file, corpus_file, qrels_file):
            if not needed.is_file():
                raise ConfigError(f"{where}: {needed} does not exist (a BEIR folder has corpus.jsonl, queries.jsonl and qrels/<split>.tsv)")
        description = f"BEIR collection {folder.name}, qrels {qrels_file.name}"
    else:
        if options.path is not None or options.split is not None:
            raise ConfigError(f'{where}: format "trec" takes topics, qrels and corpus, not path or split')
        queries_file = _file(options.topics, "topics", where)
        qrels_file = _file(options.qrels, "qrels", where)
        corpus_file = _file(options.corpus, "corpus", where)
        description = f"TREC topics {queries_file.name} with qrels {qrels_file.name}"
    queries = read_queries(queries_file)
    judged = read_qrels(qrels_file)
    missing = [q for q in judged if q not in queries]
    if missing:
        raise ConfigError(f"{where}: {qrels_file} judges {len(missing)} quer(y/ies) {queries_file} does not have (first: {missing[0]!r})")
    return _Collection(queries, judged, _texts(corpus_file), qrels_file, description)


def _labeller(options: QrelsOptions, judged: Mapping[str, Mapping[str, int]], where: str) -> tuple[dict[int, int], tuple[int, ...]]:
    """``{qrels grade: label}`` for every grade kept, and the set's labels (binary or graded)."""
    excluded = set(options.exclude_grades)
    seen = sorted({g for grades in judged.values() for g in grades.values()} - excluded)
    mapped = {int(k): v for k, v in (options.grades or {}).items()}
    labels: dict[int, int] = {}
    for grade in seen:
        if grade in mapped:
            labels[grade] = mapped[grade]
        elif options.grades is None and 0 <= grade <= 3:
            labels[grade] = grade
        else:
            raise ConfigError(
                f"{where}: qrels grade {grade} has no label: map it with grades = {{ {quoted(grade)} = <0..3> }} "
                f"or leave its pairs out with exclude_grades = [{grade}]"
            )
    binary = set(labels.values()) <= {0, 1}
    return labels, BINARY_LABELS if binary else GRADED_LABELS


def calibration_items(options: QrelsOptions, collection: _Collection, where: str) -> tuple[list[CalibrationItem], tuple[int, ...], str]:
    """The labelled items of one collection, its labels, and a sentence counting them (judged,
    unjudged, left out)."""
    labels, scale = _labeller(options, collection.judged, where)
    excluded = set(options.exclude_grades)
    items: list[CalibrationItem] = []
    absent = 0
    for query_id, grades in collection.judged.items():
        for doc_id, grade in grades.items():
            if grade in excluded:
                continue
            text = collection.texts.get(doc_id)
            if not text:
                absent += 1
                continue
            items.append(CalibrationItem(f"{query_id}/{doc_id}", labels[grade], query=collection.queries[query_id], document=text))
    rng = random.Random(options.seed)
    queries = [q for q in collection.judged if collection.queries.get(q, "").strip()]
    wanted = len(queries) if options.unjudged is None else options.unjudged
    documents = [d for d, t in collection.texts.items() if t]
    taken: set[tuple[str, str]] = set()
    attempts = 0
    while len(taken) < wanted and queries and documents and attempts < wanted * 20:
        attempts += 1
        query_id, doc_id = rng.choice(queries), rng.choice(documents)
        if doc_id in collection.judged[query_id] or (query_id, doc_id) in taken:
            continue
        taken.add((query_id, doc_id))
        items.append(CalibrationItem(f"{query_id}/{doc_id}", 0, query=collection.queries[query_id], document=collection.texts[doc_id]))
    judged_count = len(items) - len(taken)
    if options.max_items is not None and len(items) > options.max_items:
        keep = set(random.Random(options.seed).sample(range(len(items)), options.max_items))
        judged_count = sum(1 for n in keep if n < judged_count)
        items = [item for n, item in enumerate(items) if n in keep]
    left_out = f"; {counted(absent, 'judged document')} the corpus lacks or holds empty left out" if absent else ""
    summary = f"{judged_count} judged pairs and {len(items) - judged_count} unjudged pairs labelled 0 (seed {options.seed}){left_out}"
    return items, scale, summary


class QrelsCalibrationSets(ConfigTables[QrelsOptions]):
    """The calibration-set provider for ``[calibration_sets."ID"]`` tables (see the module docstring).

    Shipped with evalkit and registered in ``evalkit.calibration_sets``; evalkit builds it with one
    :class:`QrelsOptions` per table (``config_table``), their paths made absolute and checked to
    lie inside the project (or a place ``[sets] allow_outside`` lists).
    """

    Options = QrelsOptions
    config_table = "calibration_sets.*"

    def calibration_sets(self) -> list[CalibrationSet]:
        """One set per configured table, read from its files now."""
        return self._loaded(self._load)

    def _load(self, identifier: str, options: QrelsOptions, where: str) -> CalibrationSet:
        collection = _read(options, where)
        items, labels, summary = calibration_items(options, collection, where)
        return CalibrationSet(
            identifier=identifier,
            name=options.name or identifier,
            grader="relevance",
            labels=labels,
            items=tuple(items),
            description=f"{collection.description}: {summary}",
        )
