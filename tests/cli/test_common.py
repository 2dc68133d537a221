"""Pieces the commands share (evalkit.cli.common) that no single command's tests pin down."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
from evalkit.cli.common import run_started


def test_a_run_starts_with_what_is_already_built_frozen_out_of_garbage_collection() -> None:
    calls: list[tuple[Any, int]] = []
    start = run_started(lambda run, total: calls.append((run, total)))
    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        start("the run", 7)
        assert calls == [("the run", 7)]
        assert gc.get_freeze_count() > 0  # imported modules, plugins and configuration are frozen
    finally:
        gc.unfreeze()


@pytest.fixture
def known_secret(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Make a value one of this process's known secrets (as a component's credential is), with
    the ones remembered before forgotten for the test."""
    from evalkit import privacy

    monkeypatch.setattr(privacy, "_values", set())
    holders: list[Any] = []  # remembered weakly by privacy: kept alive for the test here

    class Holder:
        def __init__(self, secret: str) -> None:
            self.secret = secret

        def secret_values(self) -> tuple[str, ...]:
            return (self.secret,)

    def remember(secret: str) -> None:
        holders.append(Holder(secret))
        privacy.remember_secret_holder(holders[-1])

    return remember


def test_a_streamed_list_prints_in_batches_as_one_document_scrubbed_and_escaped(capsys, known_secret) -> None:
    import json

    from evalkit.cli.json_output import STREAMED_BATCH, print_json_streamed

    secret = "sk-streamed-0123456789abcdef"
    known_secret(secret)
    count = 2 * STREAMED_BATCH + 3  # two whole batches and a part
    items = [{"id": f"c{n}", "answer": f"key {secret} at {n}" if n % 400 == 7 else "ok \u202e\x7f"} for n in range(count)]
    print_json_streamed({"run_id": "r1", "cases": None, "passed": count}, "cases", iter(items))
    text = capsys.readouterr().out
    assert secret not in text and "\u202e" not in text and "\x7f" not in text
    assert "\\u202e" in text and "\\u007f" in text  # what a terminal acts on is escaped, and parses back
    document = json.loads(text)
    assert list(document) == ["run_id", "cases", "passed"] and document["passed"] == count
    assert [case["id"] for case in document["cases"]] == [f"c{n}" for n in range(count)]
    assert document["cases"][1]["answer"] == "ok \u202e\x7f"
    assert secret not in document["cases"][7]["answer"] and document["cases"][7]["answer"].endswith(" at 7")


def test_a_streamed_list_of_encoded_texts_prints_as_its_elements_would(capsys, known_secret) -> None:
    """Elements handed over as their compact JSON text (``encoded``) come out exactly as the
    elements themselves would: hidden characters escaped, and a batch holding a secret scrubbed."""
    import json

    from evalkit.cli.json_output import STREAMED_BATCH, print_json_streamed

    secret = "sk-encoded-0123456789abcdef"
    known_secret(secret)
    count = STREAMED_BATCH + 5
    items = [{"id": f"c{n}", "answer": f"key {secret}!" if n == STREAMED_BATCH + 2 else "ok \u202e\x7f\x00", "score": n / 3} for n in range(count)]
    print_json_streamed({"run_id": "r1", "cases": None}, "cases", iter(items))
    as_elements = capsys.readouterr().out
    texts = (json.dumps(item, separators=(",", ":"), ensure_ascii=False) for item in items)
    print_json_streamed({"run_id": "r1", "cases": None}, "cases", texts, encoded=True)
    as_texts = capsys.readouterr().out
    assert as_texts == as_elements
    assert secret not in as_texts and "\u202e" not in as_texts and "\\u202e" in as_texts
    assert json.loads(as_texts)["cases"][STREAMED_BATCH + 2]["answer"] == "key ***!"


def test_encoded_texts_still_print_whole_when_a_secret_hides_in_the_list_marker(capsys, known_secret) -> None:
    """The streamed writer finds the list's place by a marker string; a secret that happens to be
    part of that marker is scrubbed from it, and the document is then printed whole — with encoded
    elements too, which are parsed back to data for it."""
    import json

    from evalkit.cli.json_output import print_json_streamed

    secret = "evalkit:streamed-list"
    known_secret(secret)
    items = [{"id": f"c{n}", "note": f"ok {n} \u202e"} for n in range(3)]
    texts = [json.dumps(item, separators=(",", ":"), ensure_ascii=False) for item in items]
    print_json_streamed({"run_id": "r1", "cases": None}, "cases", iter(texts), encoded=True)
    text = capsys.readouterr().out
    assert "\u202e" not in text
    assert json.loads(text) == {"run_id": "r1", "cases": items}
