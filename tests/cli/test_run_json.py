"""`evalkit run --json` at scale: the document is compact past 1,000 cases, indented below."""

from __future__ import annotations

import json


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
