"""`evalkit run --json` at scale: the document is compact past 1,000 cases, indented below."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest


def test_json_of_a_large_run_is_compact_and_of_a_small_one_indented(evalkit_cli, project, plugin_dists) -> None:
    plugins = plugin_dists("evalkit-bench-sets")
    large = evalkit_cli("run", "bench.capitals", "--json", env={"PYTHONPATH": plugins, "EVALKIT_BENCH_PROMPTS": "1001"})
    assert large.code == 0, large.stderr
    assert large.stdout.count("\n") == 1  # one line: the compact encoder
    document = json.loads(large.stdout)
    assert (document["case_count"], document["passed"], len(document["cases"])) == (1001, 1001, 1001)
    small = evalkit_cli("run", "bench.capitals", "--json", env={"PYTHONPATH": plugins, "EVALKIT_BENCH_PROMPTS": "3"})
    assert small.code == 0, small.stderr
    assert small.stdout.startswith('{\n  "run_id": ')
    small_document = json.loads(small.stdout)
    assert small_document["passed"] == 3
    # Written case by case or whole, the document has the same keys in the same order.
    assert list(document) == list(small_document)
    assert [list(case) for case in document["cases"][:3]] == [list(case) for case in small_document["cases"]]
    shown = evalkit_cli("show", document["run_id"], "--json", env={"PYTHONPATH": plugins})
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout)["cases"] == document["cases"]


def _run_patched(project, plugins: str, patch: Callable[[pytest.MonkeyPatch], None], evalkit_cli) -> tuple[str, dict]:  # noqa: ANN001
    """``evalkit run bench.capitals --json`` of 1,001 cases with ``patch`` applied for the run only;
    checks it exits 0 and prints exactly the cases ``evalkit show`` reads back; returns its output."""
    with pytest.MonkeyPatch.context() as patched:
        patch(patched)
        done = evalkit_cli("run", "bench.capitals", "--json", env={"PYTHONPATH": plugins, "EVALKIT_BENCH_PROMPTS": "1001"})
    assert done.code == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["answered"], len(document["cases"])) == (1001, 1001)
    shown = evalkit_cli("show", document["run_id"], "--json", env={"PYTHONPATH": plugins})
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout)["cases"] == document["cases"]
    return done.stdout, document


def test_a_large_run_prints_the_cases_it_committed_without_reading_them_back(evalkit_cli, project, plugin_dists) -> None:
    """Past 1,000 cases the run's cases are written out as each group is committed: reading them
    back from the store at the end (which cost ~2 s of a 100,000-case run) would fail here, and the
    document is still exactly what ``evalkit show`` reads back."""
    from evalkit.storage.sql import SqlRepository

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run read its cases back")

    patch = lambda patched: patched.setattr(SqlRepository, "iter_cases", refuse)  # noqa: E731
    output, _ = _run_patched(project, plugin_dists("evalkit-bench-sets"), patch, evalkit_cli)
    assert output.count("\n") == 1


def test_a_large_run_whose_temporary_file_fails_reads_its_cases_back(evalkit_cli, project, plugin_dists) -> None:
    """No room for the temporary file (here: every one refused) never fails the run: its cases are
    read back from the store, as for a resumed run."""
    import errno
    import tempfile

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    patch = lambda patched: patched.setattr(tempfile, "TemporaryFile", full)  # noqa: E731
    _, document = _run_patched(project, plugin_dists("evalkit-bench-sets"), patch, evalkit_cli)
    assert document["passed"] == 1001
