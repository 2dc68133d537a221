"""The temporary file a large run's ``--json`` cases are written to as they are committed."""

from __future__ import annotations

import errno
import json
import tempfile

import attrs
import pytest
from evalkit import CaseResult, Run
from evalkit.cli.case_spool import CaseJsonSpool
from evalkit.cli.json_output import COMPACT_JSON_CASES
from evalkit.cli.render import case_json
from evalkit.grading import Check

#: Everything a line-based file could split or mangle: NUL, lone surrogates, CR, NEL, U+2028/9, ESC.
HOSTILE = "nul\x00 lone\udcff\ud800 cr\r nel\x85 sep\u2028\u2029 esc\x1b[31m del\x7f é"


def _case(n: int) -> CaseResult:
    return CaseResult(
        case_id=f"c{n}-{HOSTILE}", passed=n % 2 == 0, score=n / 7, checks=(Check("contains", n % 2 == 0, detail=HOSTILE),),
        answer_text=f"answer {n} {HOSTILE}", detail={"why": HOSTILE, "n": n}, finished_at=1.0,
    )  # fmt: skip


def _run(answered: int, case_count: int = COMPACT_JSON_CASES + 1) -> Run:
    return attrs.evolve(
        Run("r", "pkg.set", "deterministic", case_count=case_count), stored_answered_count=answered
    )


def test_the_cases_come_back_as_written_hostile_text_and_all() -> None:
    cases = [_case(n) for n in range(10)]
    with CaseJsonSpool() as spool:
        spool.start(_run(0), 10)
        spool.add(cases[:3])
        spool.add(cases[3:])
        assert spool.holds(_run(10))
        texts = list(spool.texts())
    assert texts == [",".join(map(case_json, cases[:3])), ",".join(map(case_json, cases[3:]))]
    assert [c["id"] for c in json.loads("[" + ",".join(texts) + "]")] == [c.case_id for c in cases]


def test_it_holds_a_run_only_with_as_many_cases_as_the_store_counted() -> None:
    with CaseJsonSpool() as spool:
        spool.start(_run(0), 3)
        spool.add([_case(n) for n in range(3)])
        assert not spool.holds(_run(4)), "the store has a case this process did not write"
        assert spool.holds(_run(3))


def test_a_run_printed_indented_is_not_kept() -> None:
    with CaseJsonSpool() as spool:
        spool.start(_run(0, case_count=COMPACT_JSON_CASES), COMPACT_JSON_CASES)
        spool.add([_case(1)])
        assert spool.count == 0 and not spool.holds(_run(1, case_count=COMPACT_JSON_CASES))
    unwanted = CaseJsonSpool(wanted=False)
    unwanted.start(_run(0), 1)
    unwanted.add([_case(1)])
    assert unwanted.count == 0 and not unwanted.holds(_run(1))


def test_a_temporary_file_that_cannot_be_written_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    with CaseJsonSpool() as spool:
        spool.start(_run(0), 2)
        spool.add([_case(1)])  # never raises: the run goes on
        spool.add([_case(2)])
        assert not spool.holds(_run(2)) and not spool.holds(_run(0))


def test_a_case_whose_text_cannot_be_made_gives_the_file_up_without_failing_the_run() -> None:
    with CaseJsonSpool() as spool:
        spool.start(_run(0), 2)
        spool.add([_case(1)])
        spool.add([object()])  # not a case: its text fails
        spool.add([_case(2)])
        assert not spool.holds(_run(1)) and not spool.holds(_run(2))
