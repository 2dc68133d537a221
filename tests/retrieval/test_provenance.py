"""Provenance labels, the three fingerprints and the baseline decision table."""

from __future__ import annotations

import hashlib

import attrs
import pytest
from evalkit.questions import NOT_APPLICABLE, GoldenQuestion, GoldenQuestionSet, QuestionForm, RetrievalProvenance
from evalkit.retrieval.provenance import (
    SCORING_VERSION,
    RetrievalIdentity,
    baseline_state,
    benchmark_fingerprint,
    labels_fingerprint,
    retrieval_identity,
    validate_provenance,
    variant_fingerprint,
)

FIELDS = ("corpus_revision", "model_revision", "chunking_identity", "pipeline_identity", "execution_revision")
LEXICAL = RetrievalProvenance(
    corpus_revision="sha256:0123456789abcdef",
    model_revision=NOT_APPLICABLE,
    chunking_identity="whole-document",
    pipeline_identity="evalkit.lexical-fts5-bm25-v1",
)
FULL = RetrievalProvenance("corpus-2025-06", "org/model:v1", "chunks-512", "hybrid-v3", "build+1234")


# --- validation ---------------------------------------------------------------------------------


def test_valid_declarations_have_no_problems():
    assert validate_provenance(LEXICAL) == []
    assert validate_provenance(FULL) == []


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize(
    "bad", ["", "x" * 191, "http://host/v1", "line\nbreak", "body text", "über-v1", "v1\n", "-leading", 12]
)
def test_unsafe_or_unbounded_labels_are_rejected_in_every_position(field, bad):
    problems = validate_provenance(attrs.evolve(FULL, **{field: bad}))
    assert len(problems) == 1
    assert field in problems[0]
    assert "bounded opaque ASCII" in problems[0]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("good", ["x" * 190, "org/model:v1", "sha256:0123abcd", "a", "v1.2_3+4-5"])
def test_bounded_opaque_labels_are_accepted_in_every_position(field, good):
    assert validate_provenance(attrs.evolve(FULL, **{field: good})) == []


def test_problems_never_quote_the_value():
    problems = validate_provenance(attrs.evolve(FULL, corpus_revision="https://user:s3cret@host/corpus"))
    assert problems and not any("s3cret" in p for p in problems)


@pytest.mark.parametrize("field", ["corpus_revision", "pipeline_identity"])
def test_corpus_and_pipeline_must_apply(field):
    problems = validate_provenance(attrs.evolve(FULL, **{field: NOT_APPLICABLE}))
    assert len(problems) == 1
    assert field in problems[0] and "applicable" in problems[0]


@pytest.mark.parametrize("field", ["model_revision", "chunking_identity", "execution_revision"])
def test_model_chunking_and_execution_may_not_apply(field):
    assert validate_provenance(attrs.evolve(FULL, **{field: NOT_APPLICABLE})) == []


def test_execution_revision_may_be_absent_but_the_others_may_not():
    assert validate_provenance(attrs.evolve(FULL, execution_revision=None)) == []
    assert len(validate_provenance(attrs.evolve(FULL, model_revision=None))) == 1


@pytest.mark.parametrize("declared", [{"corpus_revision": "c1"}, "c1", ("c1", "m", "c", "p")])
def test_a_declaration_of_another_type_is_a_problem(declared):
    assert validate_provenance(declared) == [
        f"retrieval provenance must be a RetrievalProvenance, not {type(declared).__name__}"
    ]
    assert retrieval_identity(qset(Q1), declared, 10).benchmark_fingerprint == ""


def test_every_problem_is_listed():
    bad = RetrievalProvenance(NOT_APPLICABLE, "", "a b", "http://x", "ok")
    assert len(validate_provenance(bad)) == 4


# --- labels fingerprint -------------------------------------------------------------------------


def qset(*questions: GoldenQuestion, name: str = "Docs", description: str = "") -> GoldenQuestionSet:
    return GoldenQuestionSet("demo.docs", name, description, questions)


Q1 = GoldenQuestion("q1", "How do I parse JSON?", "match", ["json.loads", "json.load"], "near-duplicate", "loads")
Q2 = GoldenQuestion("q2", "Turn text into a dict", "gap", [], None)


def test_labels_fingerprint_pins_the_canonical_encoding():
    question = GoldenQuestion("q1", "t", "match", ["b", "a"])
    canonical = '["labels-bytes-v1",[["cTE=","dA==","match",null,["YQ==","Yg=="]]]]'
    assert labels_fingerprint(qset(question)) == "v1:" + hashlib.sha256(canonical.encode()).hexdigest()


def test_labels_ignore_order_gist_name_and_description():
    base = labels_fingerprint(qset(Q1, Q2))
    assert labels_fingerprint(qset(Q2, Q1)) == base
    assert labels_fingerprint(qset(attrs.evolve(Q1, expected_document_ids=["json.load", "json.loads"]), Q2)) == base
    assert labels_fingerprint(qset(attrs.evolve(Q1, answer_gist="something else"), Q2)) == base
    assert labels_fingerprint(qset(Q1, Q2, name="Other", description="changed")) == base
    assert labels_fingerprint([Q1, Q2]) == base


SCORING_CHANGES = {
    "id": {"id": "q1b"},
    "text": {"question": "How do I parse JSON text?"},
    "form": {"form": "gap"},
    "target": {"expected_document_ids": ["json.loads"]},
    "no target": {"expected_document_ids": []},
    "hard class": {"hard_class": "normal"},
    "no hard class": {"hard_class": None},
}


@pytest.mark.parametrize("change", SCORING_CHANGES.values(), ids=list(SCORING_CHANGES))
def test_each_scoring_field_changes_labels_and_benchmark_but_not_variant(change):
    before = retrieval_identity(qset(Q1, Q2), LEXICAL, 10)
    after = retrieval_identity(qset(attrs.evolve(Q1, **change), Q2), LEXICAL, 10)
    assert after.labels_fingerprint != before.labels_fingerprint
    assert after.benchmark_fingerprint != before.benchmark_fingerprint
    assert after.variant_fingerprint == before.variant_fingerprint


@pytest.mark.parametrize(
    "field,variants",
    [
        ("id", ["q\udcff", "q\udcfe", "q\u00ff"]),
        ("question", ["text \udcc3", "text \udcc4", "text"]),
        ("expected_document_ids", [["doc\udc80"], ["doc\udc81"], ["doc"]]),
        ("hard_class", ["near\udce9", "near\udcea", "near"]),
    ],
)
def test_undecodable_bytes_give_distinct_fingerprints(field, variants):
    identities = [retrieval_identity(qset(attrs.evolve(Q1, **{field: v})), LEXICAL, 10) for v in variants]
    assert len({i.labels_fingerprint for i in identities}) == len(variants)
    assert len({i.benchmark_fingerprint for i in identities}) == len(variants)
    assert len({i.variant_fingerprint for i in identities}) == 1


# --- benchmark and variant independence ---------------------------------------------------------


def test_corpus_change_moves_the_benchmark_only():
    a = retrieval_identity(qset(Q1), FULL, 10)
    b = retrieval_identity(qset(Q1), attrs.evolve(FULL, corpus_revision="corpus-2025-07"), 10)
    assert a.benchmark_fingerprint != b.benchmark_fingerprint
    assert a.variant_fingerprint == b.variant_fingerprint


@pytest.mark.parametrize("field", ["model_revision", "chunking_identity", "pipeline_identity"])
def test_treatment_change_moves_the_variant_only(field):
    a = retrieval_identity(qset(Q1), FULL, 10)
    b = retrieval_identity(qset(Q1), attrs.evolve(FULL, **{field: "changed-v2"}), 10)
    assert a.variant_fingerprint != b.variant_fingerprint
    assert a.benchmark_fingerprint == b.benchmark_fingerprint


def test_execution_revision_moves_neither():
    a = retrieval_identity(qset(Q1), FULL, 10)
    b = retrieval_identity(qset(Q1), attrs.evolve(FULL, execution_revision="build+9999"), 10)
    c = retrieval_identity(qset(Q1), attrs.evolve(FULL, execution_revision=None), 10)
    assert a.variant_fingerprint == b.variant_fingerprint == c.variant_fingerprint
    assert a.benchmark_fingerprint == b.benchmark_fingerprint == c.benchmark_fingerprint


def test_k_is_part_of_the_benchmark():
    labels = labels_fingerprint(qset(Q1))
    assert benchmark_fingerprint("c1", labels, 10) != benchmark_fingerprint("c1", labels, 5)
    at10, at5 = retrieval_identity(qset(Q1), FULL, 10), retrieval_identity(qset(Q1), FULL, 5)
    assert at10.variant_fingerprint == at5.variant_fingerprint
    assert at10.labels_fingerprint == at5.labels_fingerprint


def test_benchmark_pins_the_scoring_version():
    labels = labels_fingerprint(qset(Q1))
    canonical = f'["benchmark-v1","c/1","{labels}","{SCORING_VERSION}",10]'
    assert benchmark_fingerprint("c/1", labels, 10) == "v1:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert SCORING_VERSION == "distinct-documents-hit1-hit3-mrr-recall-ndcg-v1"


def test_fingerprints_are_digests():
    identity = retrieval_identity(qset(Q1), LEXICAL, 10)
    for fp in (identity.labels_fingerprint, identity.benchmark_fingerprint, identity.variant_fingerprint):
        assert fp.startswith("v1:") and len(fp) == 3 + 64
    assert variant_fingerprint(LEXICAL) == identity.variant_fingerprint


def test_unknown_provenance_keeps_labels_but_no_benchmark_or_variant():
    identity = retrieval_identity(qset(Q1), None, 10)
    assert identity.labels_fingerprint == labels_fingerprint(qset(Q1))
    assert (identity.benchmark_fingerprint, identity.variant_fingerprint) == ("", "")
    assert identity.provenance is None and identity.problems == ()
    assert benchmark_fingerprint(None, identity.labels_fingerprint, 10) == ""
    assert variant_fingerprint(None) == ""


def test_lexical_declaration_with_not_applicable_model_gives_a_benchmark():
    identity = retrieval_identity(qset(Q1), LEXICAL, 10)
    assert identity.benchmark_fingerprint and identity.variant_fingerprint
    assert identity.provenance == LEXICAL and identity.scoring_version == SCORING_VERSION


def test_invalid_declaration_counts_as_unknown_with_its_problems():
    identity = retrieval_identity(qset(Q1), attrs.evolve(LEXICAL, corpus_revision=NOT_APPLICABLE), 10)
    assert identity.provenance is None
    assert (identity.benchmark_fingerprint, identity.variant_fingerprint) == ("", "")
    assert len(identity.problems) == 1


# --- baseline states ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "current,previous,state",
    [
        ("", None, "unknown"),
        ("", "", "unknown"),
        ("", "v1:aa", "unknown"),
        ("v1:aa", None, "baseline"),
        ("v1:aa", "", "unknown"),
        ("v1:aa", "v1:bb", "mismatch"),
        ("v1:aa", "v1:aa", "comparable"),
    ],
)
def test_baseline_state_decision_table(current, previous, state):
    assert baseline_state(current, previous) == state


def _scheme_digest(payload: object) -> str:
    """The documented digest: compact JSON (non-ASCII kept), SHA-256, prefixed ``v1:``."""
    import json

    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return "v1:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_variant_fingerprint_follows_its_documented_scheme() -> None:
    provenance = RetrievalProvenance("corpus-1", "model-2", "chunks-3", "pipe-4")
    assert variant_fingerprint(provenance) == _scheme_digest(["variant-v1", "model-2", "chunks-3", "pipe-4"])


def test_labels_are_ordered_by_the_raw_bytes_of_the_question_ids() -> None:
    import base64

    def b64(text: str) -> str:
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    # U+0300 encodes as CC 80 and U+0400 as D0 80: raw byte order and base64 text order disagree.
    questions = [GoldenQuestion(i, "q", QuestionForm.MATCH, ["d"]) for i in ("\u0400", "\u0300")]
    rows = [[b64(i), b64("q"), "match", None, [b64("d")]] for i in ("\u0300", "\u0400")]
    assert labels_fingerprint(questions) == _scheme_digest(["labels-bytes-v1", rows])


def test_undecodable_and_lone_surrogate_ids_are_fingerprinted_not_crashed_on() -> None:
    prints = {
        labels_fingerprint([GoldenQuestion(i, "q", QuestionForm.MATCH, [])]) for i in ("\ud800", "\ud801", "\udcff")
    }
    assert len(prints) == 3


def test_each_provenance_problem_word_for_word() -> None:
    bad = RetrievalProvenance(NOT_APPLICABLE, "bad label", "c\ud800", NOT_APPLICABLE)
    assert validate_provenance(bad) == [
        'retrieval provenance corpus_revision: must declare an applicable revision, not "not-applicable"',
        "retrieval provenance model_revision: must be a bounded opaque ASCII revision label without URL scheme "
        "(1-190 characters from A-Z a-z 0-9 . _ : + / -, starting with a letter or digit, no '://')",
        "retrieval provenance chunking_identity: must be a bounded opaque ASCII revision label without URL scheme "
        "(1-190 characters from A-Z a-z 0-9 . _ : + / -, starting with a letter or digit, no '://')",
        'retrieval provenance pipeline_identity: must declare an applicable revision, not "not-applicable"',
    ]


def test_fingerprints_keep_non_ascii_characters_unescaped() -> None:
    """The documented JSON leaves non-ASCII characters as they are (``ensure_ascii=False``): a
    provenance read from outside (not validated) still hashes its text, not ``\\u`` escapes."""
    provenance = RetrievalProvenance("corpus-é", "modèle-ü", "chunks-ø", "pipeline-ß")
    assert variant_fingerprint(provenance) == _scheme_digest(["variant-v1", "modèle-ü", "chunks-ø", "pipeline-ß"])
    labels = labels_fingerprint(qset(Q1))
    expected = _scheme_digest(["benchmark-v1", "corpus-é", labels, SCORING_VERSION, 7])
    assert benchmark_fingerprint("corpus-é", labels, 7) == expected


def test_the_relevance_threshold_enters_the_benchmark_only_when_it_is_not_one() -> None:
    """Threshold 1 (the default, of retrieval_identity too) leaves the benchmark as before
    thresholds existed; threshold 2 appends ``["relevance-threshold", 2]`` to the hashed array."""
    labels = labels_fingerprint(qset(Q1))
    plain = _scheme_digest(["benchmark-v1", FULL.corpus_revision, labels, SCORING_VERSION, 10])
    identity = retrieval_identity(qset(Q1), FULL, 10)
    assert (identity.benchmark_fingerprint, identity.threshold) == (plain, 1)
    strict = retrieval_identity(qset(Q1), FULL, 10, threshold=2)
    assert strict.threshold == 2
    assert strict.benchmark_fingerprint == _scheme_digest(
        ["benchmark-v1", FULL.corpus_revision, labels, SCORING_VERSION, 10, ["relevance-threshold", 2]]
    )


def test_a_retrieval_identity_built_directly_defaults_to_the_current_protocol() -> None:
    """Built without a threshold or problems (the public class, as a third-party caller may), an identity
    is at threshold 1 with no problems, scored by SCORING_VERSION."""
    identity = RetrievalIdentity(None, "v1:labels", "", "", 10)
    assert (identity.threshold, identity.problems, identity.scoring_version) == (1, (), SCORING_VERSION)
