"""The ``junit`` reporter end to end: `evalkit run --report junit:PATH`, the file validated against
the Jenkins and Ant JUnit schemas (tests/data/junit-schemas) and read back with junitparser, a
JUnit consumer from PyPI."""

from __future__ import annotations

from pathlib import Path

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml, Skipped

from tests.support.reports import HOSTILE_IDS, REPORT_PLUGINS, answer_hostile

SCHEMAS = Path(__file__).resolve().parents[2] / "data" / "junit-schemas"
SET = "reportkit.hostile"


@pytest.fixture(scope="module")
def schemas() -> dict[str, xmlschema.XMLSchema]:
    """Both JUnit schemas, compiled once."""
    return {name: xmlschema.XMLSchema(str(SCHEMAS / name)) for name in ("jenkins-junit-10.xsd", "ant-junit.xsd")}


@pytest.fixture
def cli(evalkit_cli, plugin_dists):  # noqa: ANN001, ANN201
    """``evalkit`` with the report test distribution installed."""
    env = {"PYTHONPATH": plugin_dists(REPORT_PLUGINS)}
    return lambda *args: evalkit_cli(*args, env=env)


def validate(path: Path, schemas: dict[str, xmlschema.XMLSchema]) -> None:
    for name, schema in schemas.items():
        errors = [str(e) for e in schema.iter_errors(str(path))]
        assert not errors, f"{path.name} is not valid against {name}:\n" + "\n".join(errors[:3])


def suite_of(path: Path):  # noqa: ANN201 - a junitparser TestSuite
    suites = list(JUnitXml.fromfile(str(path)))
    assert len(suites) == 1
    return suites[0]


def test_a_regressed_run_is_one_suite_with_failed_cases_and_a_failed_gate(cli, project, schemas) -> None:
    answer_hostile(project)
    first = cli("run", SET, "--provider", "app", "--report", "junit:reports/first.xml")
    assert first.code == 0, first.stderr
    answer_hostile(project, failing=HOSTILE_IDS[:2])
    second = cli("run", SET, "--provider", "app", "--report", "junit:reports/second.xml", "--fail-on-regression", "--json")
    assert second.code == 1, second.stderr
    run = second.json()
    path = project / "reports" / "second.xml"
    assert "Report junit written to reports/second.xml" in second.stderr
    validate(path, schemas)
    validate(project / "reports" / "first.xml", schemas)

    suite = suite_of(path)
    assert suite.name == SET
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["run_id"] == run["run_id"]
    assert properties["identity"] == "report-app-1 (app/app)"
    assert properties["grader"] == "deterministic"
    assert properties["verdict"] == "REGRESSED"
    assert properties["baseline_run_id"] == run["verdict"]["baseline_id"]
    cases = {case.name: case for case in suite}
    assert list(cases) == [*HOSTILE_IDS, "regression-gate"]  # ids round-trip exactly, markup and all
    assert [case.classname for case in suite] == [SET] * len(HOSTILE_IDS) + [f"{SET}:evalkit"]
    assert suite.tests == 7 and suite.failures == 3 and suite.errors == 0
    for case_id in HOSTILE_IDS[:2]:
        (failure,) = cases[case_id].result
        assert isinstance(failure, Failure)
        # the check's name; its detail (text a check may quote from the answer) is not kept at
        # metadata privacy, in the store nor in the report the run writes (as `evalkit report` later)
        assert failure.message == "contains"
        assert "REGRESSED: passed in the baseline run" in failure.text
    for case_id in HOSTILE_IDS[2:]:
        assert cases[case_id].is_passed
    (gate,) = cases["regression-gate"].result
    assert isinstance(gate, Failure) and gate.type == "regression"
    assert gate.message.startswith("REGRESSED: Regression: pass rate dropped 33.3 pp")
    assert HOSTILE_IDS[0] in gate.text and HOSTILE_IDS[1] in gate.text

    baseline_suite = suite_of(project / "reports" / "first.xml")
    assert all(case.is_passed for case in baseline_suite)
    assert {p.name: p.value for p in baseline_suite.properties()}["verdict"] == "BASELINE"


def test_an_errored_case_is_an_error_and_the_incomplete_run_fails_the_gate(cli, project, schemas) -> None:
    answer_hostile(project)
    answers = project / "answers.jsonl"
    answers.write_text("".join(line + "\n" for line in answers.read_text().splitlines() if "plain-2" not in line))
    result = cli("run", SET, "--provider", "app", "--report", "junit:out.xml")
    assert result.code == 3, result.stderr
    validate(project / "out.xml", schemas)
    cases = {case.name: case for case in suite_of(project / "out.xml")}
    (error,) = cases["plain-2"].result
    assert isinstance(error, Error)
    assert "has no line for prompt id 'plain-2'" in error.message
    (gate,) = cases["regression-gate"].result
    assert isinstance(gate, Failure) and gate.message.startswith("INCOMPLETE: not compared: the run is incomplete (1 errored case)")


def test_a_run_that_is_not_compared_skips_the_gate_unless_it_is_strict(cli, project, schemas) -> None:
    answer_hostile(project)
    answers = project / "answers.jsonl"
    answers.write_text(answers.read_text().replace('"report-app-1"}', '"report-app-2"}', 1))  # two reported models
    lenient = cli("run", SET, "--provider", "app", "--report", "junit:lenient.xml")
    strict = cli("run", SET, "--provider", "app", "--report", "junit:strict.xml", "--fail-on-regression")
    assert (lenient.code, strict.code) == (0, 1), (lenient.stderr, strict.stderr)
    for name in ("lenient.xml", "strict.xml"):
        validate(project / name, schemas)
    (skipped,) = {c.name: c for c in suite_of(project / "lenient.xml")}["regression-gate"].result
    assert isinstance(skipped, Skipped) and skipped.message.startswith("not compared: no single verified serving identity")
    (failure,) = {c.name: c for c in suite_of(project / "strict.xml")}["regression-gate"].result
    assert isinstance(failure, Failure) and failure.message.startswith("NOT COMPARED (GATE FAILED): not compared")


def test_control_characters_in_failed_check_details_stay_valid_xml(cli, project, schemas) -> None:
    answer_hostile(project, failing=["plain-1"])
    result = cli("run", SET, "--provider", "app", "--report", "junit:ctl.xml")
    assert result.code == 0, result.stderr
    validate(project / "ctl.xml", schemas)
    text = (project / "ctl.xml").read_text()
    assert "\x1b" not in text


def test_a_case_named_regression_gate_is_never_taken_for_the_gate(evalkit_cli, project, schemas) -> None:
    # a case of that id had the gate's classname and name: CI test tabs merged the two
    (project / "evals").mkdir()
    (project / "evals" / "g.yaml").write_text(
        "identifier: gate.clash\nname: G\nprompts:\n"
        "  - {id: regression-gate, prompt: a, reference: ok, assertions: [{contains: ok}]}\n"
        "  - {id: other, prompt: b, reference: ok, assertions: [{contains: ok}]}\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n[providers.self]\nadapter = "reference"\nmodel = "ref-v1"\n')
    result = evalkit_cli("run", "gate.clash", "--provider", "self", "--report", "junit:out.xml")
    assert result.code == 0, result.stderr
    validate(project / "out.xml", schemas)
    suite = suite_of(project / "out.xml")
    keys = [(case.classname, case.name) for case in suite]
    assert keys == [("gate.clash", "regression-gate"), ("gate.clash", "other"), ("gate.clash:evalkit", "regression-gate")]
