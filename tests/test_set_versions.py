"""Case fingerprints and the unchanged / edited / added / removed split, and the comparison built on it."""

from __future__ import annotations

from fractions import Fraction

import attrs
from evalkit import Answer, Assertion, CaseResult, GoldenPrompt, GoldenPromptSet, GoldenQuestion, GoldenQuestionSet, Run
from evalkit.set_versions import (
    case_fingerprint,
    case_fingerprints,
    question_fingerprint,
    set_version_fingerprint,
    split_cases,
)
from evalkit.tolerance import Tolerances
from evalkit.verdict import EditedCase, compare

PROMPT = GoldenPrompt("p1", "What is 2+2?", [Assertion.contains("4")], reference="4", system_prompt="Be terse.")


def test_a_prompt_fingerprint_covers_prompt_system_prompt_assertions_and_reference() -> None:
    fingerprint = case_fingerprint(PROMPT)
    assert fingerprint.startswith("sha256:") and len(fingerprint) == 7 + 64
    assert case_fingerprint(attrs.evolve(PROMPT)) == fingerprint
    for changed in (
        attrs.evolve(PROMPT, prompt="What is 2+3?"),
        attrs.evolve(PROMPT, system_prompt=None),
        attrs.evolve(PROMPT, assertions=(Assertion.contains("5"),)),
        attrs.evolve(PROMPT, assertions=(Assertion.contains("4", name="stated_four"),)),
        attrs.evolve(PROMPT, reference="four"),
        attrs.evolve(PROMPT, reference=Answer("4", abstained=False)),
    ):
        assert case_fingerprint(changed) != fingerprint, changed
    # What does not change what the case measures does not change its fingerprint.
    assert case_fingerprint(attrs.evolve(PROMPT, tags=("smoke",))) == fingerprint
    assert case_fingerprint(attrs.evolve(PROMPT, id="renamed")) == fingerprint
    schema_a = GoldenPrompt("j", "json", [Assertion.json_schema({"type": "object", "required": ["a"]})])
    schema_b = GoldenPrompt("j", "json", [Assertion.json_schema({"required": ["a"], "type": "object"})])
    assert case_fingerprint(schema_a) == case_fingerprint(schema_b), "canonical: key order does not count"


def test_a_question_fingerprint_covers_text_expected_ids_and_form() -> None:
    question = GoldenQuestion("q", "deserialize json", "match", ["doc-a", "doc-b"], "normal", "gist")
    fingerprint = question_fingerprint(question)
    assert question_fingerprint(attrs.evolve(question, expected_document_ids=("doc-b", "doc-a"))) == fingerprint
    assert question_fingerprint(attrs.evolve(question, hard_class="other", answer_gist=None)) == fingerprint
    for changed in (
        attrs.evolve(question, question="parse json"),
        attrs.evolve(question, expected_document_ids=("doc-a",)),
        attrs.evolve(question, form="gap"),
    ):
        assert question_fingerprint(changed) != fingerprint


def test_set_fingerprints_map_every_case_and_a_set_version_ignores_order() -> None:
    other = GoldenPrompt("p2", "Capital of France?", [Assertion.contains("Paris")])
    prompts = case_fingerprints(GoldenPromptSet("pkg.set", "Set", prompts=[PROMPT, other]))
    assert list(prompts) == ["p1", "p2"]
    assert set_version_fingerprint(prompts) == set_version_fingerprint(dict(reversed(list(prompts.items()))))
    questions = case_fingerprints(GoldenQuestionSet("pkg.q", "Q", questions=[GoldenQuestion("q1", "x", expected_document_ids=["d"])]))
    assert list(questions) == ["q1"]


def test_split_cases_by_fingerprint_and_treats_unknown_fingerprints_as_unchanged() -> None:
    before = {"a": "1", "b": "2", "c": "3"}
    after = {"a": "1", "b": "changed", "d": "4"}
    split = split_cases(["a", "b", "c"], ["a", "b", "d"], before, after)
    assert (split.unchanged, split.edited, split.added, split.removed) == (("a",), ("b",), ("d",), ("c",))
    assert split.fingerprints_known and split.set_changed
    old = split_cases(["a", "b", "c"], ["a", "b", "d"], None, after)
    assert (old.unchanged, old.edited, old.added, old.removed) == (("a", "b"), (), ("d",), ("c",))
    assert not old.fingerprints_known


def case(case_id: str, passed: bool) -> CaseResult:
    return CaseResult(case_id, passed, 1.0 if passed else 0.0)


def run(run_id: str, results: dict[str, bool], fingerprints: dict[str, str] | None) -> Run:
    """A run whose cases carry ``fingerprints`` (``None``: a run stored before fingerprints were kept)."""
    cases = [attrs.evolve(case(c, p), fingerprint=(fingerprints or {}).get(c)) for c, p in results.items()]
    return Run(run_id, "pkg.set", "deterministic", cases=cases, fingerprints_kept=fingerprints is not None)


def test_the_gate_counts_only_the_unchanged_cases_in_both_runs() -> None:
    base = run("base", {"a": True, "b": True, "c": True, "d": True}, {"a": "1", "b": "2", "c": "3", "d": "4"})
    # Two added failing cases, one edited case that now fails, one removed case; a and b unchanged and passing.
    now = run("now", {"a": True, "b": True, "c": False, "n1": False, "n2": False},
              {"a": "1", "b": "2", "c": "3-edited", "n1": "5", "n2": "6"})
    comparison = compare(now, base, Tolerances())
    assert not comparison.regressed and comparison.pass_rate_delta == 0 and comparison.mean_score_delta == 0
    assert comparison.compared_cases == ("a", "b")
    assert (comparison.added_cases, comparison.added_failing, comparison.removed_cases) == (("n1", "n2"), ("n1", "n2"), ("d",))
    assert comparison.edited_cases == (EditedCase("c", True, False, 1.0, 0.0),)
    assert comparison.new_failures == ("n1", "n2", "c") and comparison.set_changed
    assert comparison.summary() == (
        "No regression: pass rate +0.0 pp, mean score +0.000 versus run base on the 2 unchanged cases "
        "(2 added, 1 edited, 1 removed are reported apart)."
    )
    broken = run("broken", {"a": False, "b": True, "n1": True}, {"a": "1", "b": "2", "n1": "5"})
    regressed = compare(broken, base, Tolerances())
    assert regressed.regressed and regressed.regressed_cases == ("a",)
    assert (regressed.baseline_pass_rate, regressed.pass_rate) == (Fraction(1), Fraction(1, 2))
    assert regressed.new_failures == ()


def test_runs_stored_without_fingerprints_compare_every_common_case_as_unchanged() -> None:
    base = run("base", {"a": True, "b": True}, None)
    now = run("now", {"a": True, "b": False, "n": False}, {"a": "1", "b": "2-edited", "n": "3"})
    comparison = compare(now, base, Tolerances())
    assert comparison.compared_cases == ("a", "b") and comparison.edited_cases == ()
    assert comparison.regressed_cases == ("b",) and comparison.added_cases == ("n",)
    assert not comparison.fingerprints_known


def test_the_set_fingerprint_is_the_digest_of_the_whole_sets_json() -> None:
    """Hashed a prompt at a time, the set fingerprint is still the digest of the set's compact JSON
    (stored runs keep it: a resume compares it), whatever the set's text holds."""
    import hashlib

    from evalkit import Assertion, GoldenPrompt, GoldenPromptSet
    from evalkit.convert import dumps
    from evalkit.runner import set_fingerprint

    tricky = 'has "prompts":[] in it, \\ and \ud800'
    for prompts in ([], [GoldenPrompt(id="a", prompt="x", assertions=[Assertion.contains("x")])], [
        GoldenPrompt(id=f"p{i}", prompt=f"{tricky} {i}", system_prompt=tricky, assertions=[Assertion.regex("/x/i")], reference=tricky)
        for i in range(3)
    ]):
        golden_set = GoldenPromptSet(identifier="pkg.set", name=tricky, description=tricky, prompts=prompts, version="2")
        whole = "sha256:" + hashlib.sha256(dumps(golden_set).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        assert set_fingerprint(golden_set) == whole


def test_prompt_fingerprints_are_the_ones_stored_runs_carry() -> None:
    """Pinned values (computed by the first release that kept fingerprints): a faster way of
    computing them must not change one, or every stored case would count as edited."""
    hostile = GoldenPrompt(
        "h1",
        "Naïve \x00 \u202e<b>x</b> \ud800?",
        [
            Assertion.regex(r"/\bparis\b/i"),
            Assertion.max_words(20),
            Assertion(kind="similar", value=Fraction(3, 4), name="close"),
            Assertion.json_schema({"type": "object", "required": ["a", "b"]}),
            Assertion(kind="contains_any", value=("a", "b")),
        ],
        reference=Answer("Paris", abstained=False, citations=("doc-1",)),
    )
    assert case_fingerprint(PROMPT) == "sha256:022bd6c0bcf2e017711edb4f1a7d04ef455fa75f6be39e8b8cb8aefcb741ca04"
    assert case_fingerprint(hostile) == "sha256:a2ca310fcc355ce92c587a0c4f71797869c95f889b588455c871417f4b48ae5e"


class _NamedPrompt(GoldenPrompt):
    """A subclass of GoldenPrompt, as a plugin could hand over."""


def hostile_prompts() -> list[GoldenPrompt]:
    """Prompts whose fingerprint and set-digest text are written directly, and the shapes that
    must go through the converter instead (each must still give the converter's text)."""
    text = "Größe \x00 nul \udcff\ud800 lone \u2028 sep \u202e bidi \x1b[31m \uffff \U0001f600"
    return [
        PROMPT,
        GoldenPrompt("p-" + text, text, [Assertion.contains(text), Assertion.regex(r"/\bx\b/i", name=text)], reference=text, system_prompt=text, tags=(text, "t")),
        GoldenPrompt("ints", "n", [Assertion.max_words(10**30), Assertion("custom", -7), Assertion("flag", True), Assertion("none", None)]),
        GoldenPrompt("floats", "f", [Assertion("ratio", 0.1 + 0.2), Assertion("tiny", 5e-324), Assertion("neg", -0.0)]),
        # through the converter
        GoldenPrompt("nan", "f", [Assertion("ratio", float("nan")), Assertion("inf", float("inf"))]),
        GoldenPrompt("listy", "l", [Assertion.contains_any(["a", text]), Assertion.json_schema({"type": "object", "b": [1, {"é": None}]})]),
        GoldenPrompt("fraction", "q", [Assertion("ratio", Fraction(1, 3))]),
        GoldenPrompt("answer", "a", [Assertion.contains("4")], reference=Answer("4", abstained=False)),
        _NamedPrompt("sub", "s", [Assertion.contains("4")]),
    ]


#: The prompts of :func:`hostile_prompts` whose texts are written directly.
WRITTEN_DIRECTLY = {"p1", "ints", "floats"}


def test_a_prompts_fingerprint_is_the_digest_of_its_canonical_json_whichever_way_it_is_written() -> None:
    """``case_fingerprint`` writes the canonical text itself for plain prompts; it must be the
    SHA-256 of exactly what ``json.dumps`` (keys sorted, ASCII, compact) writes for the
    converter's data, for every prompt, so stored fingerprints never change."""
    import hashlib
    import json

    from evalkit import set_versions
    from evalkit.convert import unstructure

    for prompt in hostile_prompts():
        data = unstructure(prompt)
        picked = {name: data[name] for name in ("prompt", "system_prompt", "assertions", "reference")}
        canonical = json.dumps(["prompt-case-v1", picked], sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
        assert case_fingerprint(prompt) == "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest(), prompt.id
    written = {p.id for p in hostile_prompts() if set_versions._plain_prompt_case_json(p) is not None}
    assert written == {*WRITTEN_DIRECTLY, hostile_prompts()[1].id}


def test_a_prompts_set_digest_text_is_the_converters_json_whichever_way_it_is_written() -> None:
    """The set digest hashes each prompt's compact JSON; the text written directly for plain
    prompts is the converter's, and the other shapes get ``None`` (the converter writes them)."""
    from evalkit.convert import dumps
    from evalkit.run.answering.prompt_order import _plain_prompt_json

    stray = GoldenPrompt("stray", "s", ["contains 4"])  # type: ignore[list-item]  # a set's check refuses it first
    int_tag = GoldenPrompt("int-tag", "t", [Assertion.contains("4")], tags=(3,))  # type: ignore[arg-type]
    written = set()
    for prompt in [*hostile_prompts(), stray, int_tag]:
        text = _plain_prompt_json(prompt)
        if text is not None:
            written.add(prompt.id)
            assert text == dumps(prompt), prompt.id
    assert written == {*WRITTEN_DIRECTLY, hostile_prompts()[1].id, "int-tag"}


def test_question_and_set_version_fingerprints_are_the_ones_stored_runs_carry() -> None:
    """Pinned values, and the recipe they follow: SHA-256 of the compact, key-sorted, ASCII JSON of
    ``["question-case-v1", {question, expected (sorted), form}]``. A change of either would make
    every stored question count as edited against a new run (or none of the edited ones)."""
    import hashlib
    import json

    question = GoldenQuestion("q", "deserialize json", "match", ["doc-b", "doc-a"], "normal", "gist")
    canonical = '["question-case-v1",{"expected":["doc-a","doc-b"],"form":"match","question":"deserialize json"}]'
    assert question_fingerprint(question) == "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()
    assert question_fingerprint(question) == "sha256:dbcc3f05db5be7b00ed2d3308b297993a124ebc3147e73065883eb777a894760"
    gap = GoldenQuestion("g", "Größe \u202e?", "gap", [])
    assert question_fingerprint(gap) == "sha256:f46bbb14427fdebf38bf79279a8f94deb5a0f206b360cf90d25f5ef1efdfbe60"
    versions = {"p2": "sha256:b", "p1": "sha256:a"}
    assert set_version_fingerprint(versions) == "sha256:" + hashlib.sha256(
        json.dumps(["set-version-v1", [["p1", "sha256:a"], ["p2", "sha256:b"]]], separators=(",", ":")).encode("ascii")
    ).hexdigest()
    assert set_version_fingerprint(versions) == "sha256:0b44a94b32fca74dffd41f341e224c70ea32dc442a01fece3b33e7b36914d013"


def conversation_variants() -> dict[str, GoldenPrompt]:
    """A plain prompt, and one variant of it per conversation field (and per assertion ``turn``):
    each holds that one field away from its default, so only the converter writes its JSON."""
    from evalkit.conversations import CannedResult, ConversationMode, Message, Tool

    plain = GoldenPrompt("c", "Hi.", [Assertion.contains("x")])
    return {
        "plain": plain,
        "messages": attrs.evolve(plain, prompt="", messages=[Message.user("Hi.")]),
        "mode": attrs.evolve(plain, mode=ConversationMode.SCRIPTED),
        "tools": attrs.evolve(plain, tools=[Tool("get_weather")]),
        "tool_results": attrs.evolve(plain, tool_results=[CannedResult("get_weather", {"temp_c": 18})]),
        "max_steps": attrs.evolve(plain, max_steps=3),
        "tool_choice": attrs.evolve(plain, tool_choice="required"),
        "turn": attrs.evolve(plain, assertions=[Assertion.contains("x").at_turn(1)]),
    }


def test_each_conversation_field_is_hashed_under_its_name_and_changes_the_fingerprint() -> None:
    """A conversation's turns, mode, tools, canned results, ``max_steps``, ``tool_choice`` and an
    assertion's ``turn`` are part of what a case measures: each alone gives another fingerprint,
    the digest of the converter's data for the fields the recipe names (a field hashed under
    another name, or a prompt holding one written as a plain prompt, would give another)."""
    import hashlib
    import json

    from evalkit import set_versions
    from evalkit.convert import unstructure

    recipe = ("prompt", "system_prompt", "assertions", "reference", "messages", "mode", "tools", "tool_results", "max_steps", "tool_choice")
    fingerprints = {}
    for field, prompt in conversation_variants().items():
        data = unstructure(prompt)
        if field not in ("plain", "turn"):
            assert field in data, field
        picked = {name: data[name] for name in recipe if name in data}
        canonical = json.dumps(["prompt-case-v1", picked], sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
        fingerprints[field] = case_fingerprint(prompt)
        assert fingerprints[field] == "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest(), field
        assert (set_versions._plain_prompt_case_json(prompt) is not None) is (field == "plain"), field
    assert len(set(fingerprints.values())) == len(fingerprints), "every field alone changes the fingerprint"


def test_prompt_digests_are_the_ones_stored_answers_carry() -> None:
    """The digest of what the model is asked (stored with each case: a re-grade and --answers-from
    reuse an answer only to the same request): SHA-256 of the compact JSON of
    ``["prompt-request-v1", prompt, system prompt]``, pinned, and blind to checks and reference."""
    import hashlib
    import json

    from evalkit.set_versions import prompt_digest

    canonical = json.dumps(["prompt-request-v1", "What is 2+2?", "Be terse."], separators=(",", ":"))
    assert prompt_digest(PROMPT) == "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()
    assert prompt_digest(PROMPT) == "sha256:d5c81f44dca6aab97bc5b613c71b33567f15442fc3d9a87a473c3ba8e736831d"
    assert prompt_digest(attrs.evolve(PROMPT, assertions=(Assertion.contains("5"),), reference="four")) == prompt_digest(PROMPT)
    assert prompt_digest(attrs.evolve(PROMPT, system_prompt=None)) != prompt_digest(PROMPT)
