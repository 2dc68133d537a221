"""Patterns on the regex module through set files and `evalkit run`: what PCRE users write
(Unicode properties, atomic groups, possessive quantifiers), a runaway pattern stopped, and
patterns that would take the machine's memory refused before anything runs."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_set_files_cmd import project_with, stored_runs

GAINS = r"""
identifier: pcre.gains
name: What PCRE users write
prompts:
  - {id: letters, prompt: Name a city, reference: Zürich, assertions: [regex: '^\p{L}+$']}
  - {id: not-only-letters, prompt: Name a city, reference: Zürich 8001, assertions: [regex: '^\p{L}+$']}
  - {id: capital-initial, prompt: Name a person, reference: Émile, assertions: [regex: '/^\p{Lu}\p{Ll}+$/u']}
  - {id: small-initial, prompt: Name a person, reference: émile, assertions: [regex: '/^\p{Lu}/u']}
  - {id: ascii-without-u, prompt: Name a person, reference: Émile, assertions: [regex: '/^\p{Lu}/']}
  - {id: atomic-gives-nothing-back, prompt: Count, reference: "123", assertions: [regex: '/^(?>\d+)\d$/']}
  - {id: atomic, prompt: Count, reference: 123 go, assertions: [regex: '/^(?>\d+) go$/']}
  - {id: possessive-gives-nothing-back, prompt: Say a, reference: aaa, assertions: [regex: '/^a++a$/']}
  - {id: possessive, prompt: Say a, reference: aaab, assertions: [regex: '/^a++b$/']}
  - id: schema-letters
    prompt: Return the city
    reference: '{"city": "Zürich"}'
    assertions:
      - json_schema: {type: object, properties: {city: {type: string, pattern: '^\p{Lu}\p{Ll}+$'}}}
  - id: schema-keys
    prompt: Return the cities
    reference: '{"Zürich": 1, "8001": 2}'
    assertions:
      - json_schema: {type: object, patternProperties: {'^\p{L}+$': {type: integer}}, additionalProperties: false}
  - id: runaway
    prompt: Say a
    reference: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab
    assertions: [regex: '/(a|a)+$/']
"""

HELD = {
    "letters": True,
    "not-only-letters": False,
    "capital-initial": True,
    "small-initial": False,
    "ascii-without-u": False,  # without u, \p{…} is ASCII as \w is (PCRE's rule for classes)
    "atomic-gives-nothing-back": False,
    "atomic": True,
    "possessive-gives-nothing-back": False,
    "possessive": True,
    "schema-letters": True,
    "schema-keys": False,
    "runaway": False,
}


def test_pcre_patterns_mean_in_a_run_what_they_mean_in_pcre(evalkit_cli, project: Path) -> None:
    project_with(project, {"gains.yaml": GAINS})
    result = evalkit_cli("run", "pcre.gains", "--json", "--privacy", "full")  # full: check details are kept
    assert result.code == 0, result.stderr
    cases = {case["id"]: case for case in result.json()["cases"]}
    assert {case_id: case["passed"] for case_id, case in cases.items()} == HELD
    (keys,) = cases["schema-keys"]["checks"]
    assert keys["detail"] == "'8001' does not match any of the regexes: '^\\\\p{L}+$' at $"
    (runaway,) = cases["runaway"]["checks"]
    assert runaway["error"] == "pattern timed out: regex /(a|a)+$/ did not finish in time (1 s)"
    assert not cases["runaway"]["errored"]  # a failed check of a graded case, the run goes on


TOO_MUCH = r"""
identifier: pcre.too_much
name: Patterns that ask for more than a compiled pattern may hold
prompts:
  - id: repeats
    prompt: Say a
    reference: a
    assertions:
      - regex: '/a{1000000000}/'
      - json_schema: {pattern: '(?:a{1000}){1000}'}
"""


def test_a_pattern_asking_for_a_billion_repetitions_is_refused_before_anything_runs(evalkit_cli, project: Path) -> None:
    project_with(project, {"too_much.yaml": TOO_MUCH})
    result = evalkit_cli("run", "pcre.too_much")
    assert result.code == 2
    assert (
        "evals/too_much.yaml:9:16: prompt 'repeats': assertions[0].regex: regular expression '/a{1000000000}/' asks for "
        "1,000,000,000 repetitions in its counted repeats ({m}, {m,n}; nested ones multiplied), more than the 10,000 allowed"
    ) in result.stderr
    assert "prompt 'repeats': assertions[1].json_schema: is not a valid JSON Schema: '(?:a{1000}){1000}' is not a 'regex'" in result.stderr
    assert stored_runs(project) == 0
    assert evalkit_cli("validate", "evals/too_much.yaml").code == 2


def test_a_pattern_of_megabytes_is_refused_before_it_is_compiled(evalkit_cli, project: Path) -> None:
    """The regex module compiles a pattern in time and memory that grow with its length (an
    alternation of 200,000 words, 2 MB, took 12 s and 470 MB; 4.5 MB, 24 s and 1.1 GB), and every
    compiled pattern is kept for the run: a set file of a few such patterns made `evalkit validate`
    (the pre-commit hook, a CI job checking a pull request) take minutes and gigabytes. A pattern
    over 10,000 characters is refused as one asking for too many repetitions is, named by its
    start and its length."""
    words = "|".join(f"w{i}x" for i in range(200_000))
    huge = (
        "identifier: pcre.huge\nname: Huge\nprompts:\n  - id: words\n    prompt: Say a word\n    reference: w1x\n"
        f"    assertions:\n      - regex: '{words}'\n      - json_schema: {{pattern: '{words}'}}\n"
    )
    project_with(project, {"huge.yaml": huge})
    result = evalkit_cli("validate", timeout=60)
    assert result.code == 2
    length = f"{len(words):,}"
    assert (
        f"evals/huge.yaml:8:16: prompt 'words': assertions[0].regex: regular expression '{words[:60]}"
        f"… ({length} characters)' is {length} characters long, more than the 10,000 a pattern may have"
    ) in result.stderr.splitlines()
    assert "prompt 'words': assertions[1].json_schema: is not a valid JSON Schema:" in result.stderr
    assert len(result.stderr) < 5_000  # each problem cut, never the 1.7 MB pattern
    assert evalkit_cli("run", "pcre.huge", timeout=60).code == 2 and stored_runs(project) == 0
