"""What a `replay` run says of its reported model: no server is asked, so the note that a server
echoing the alias gets ("the server does not report its own") is not its to say."""

from __future__ import annotations

import json

from tests.cli.test_run_cmd import ARITH_GOOD

CONFIG = '[providers.recorded]\nadapter = "replay"\nmodel = "recorded-model"\npath = "answers.jsonl"\n'


def write_replay(project, model: str | None) -> None:
    lines = [json.dumps({"id": cid, "text": text, **({"model": model} if model else {})}) for cid, text in ARITH_GOOD.items()]
    (project / "answers.jsonl").write_text("\n".join(lines) + "\n")
    (project / "evalkit.toml").write_text(CONFIG)


def test_a_replay_whose_lines_name_no_model_says_so_not_that_a_server_echoes_it(evalkit_cli, project) -> None:
    """Lines without a model report the instance's `model`, the alias: the run said "the server
    does not report its own" of a generator that asks no server."""
    write_replay(project, None)
    result = evalkit_cli("run", "arith.basic", "--provider", "recorded", "--json")
    assert result.code == 0, result.stdout + result.stderr
    serving = result.json()["metrics"]["serving"]
    assert serving["note"] == "reported model is the instance's model option: the replay file's lines name none", serving
    text = evalkit_cli("run", "arith.basic", "--provider", "recorded")
    assert "            (reported model is the instance's model option: the replay file's lines name none)\n" in text.stdout, text.stdout
    assert "server" not in text.stdout, text.stdout


def test_a_replay_whose_lines_name_the_alias_says_nothing_of_an_echo(evalkit_cli, project) -> None:
    """Lines that record the model they came from: the reported model is the file's, no echo."""
    write_replay(project, "recorded-model")
    result = evalkit_cli("run", "arith.basic", "--provider", "recorded", "--json")
    assert result.code == 0, result.stdout + result.stderr
    assert "serving" not in (result.json().get("metrics") or {}), result.json().get("metrics")
    assert "server" not in result.stdout and "reported model is" not in result.stdout, result.stdout


def test_a_generators_own_note_is_shown_only_when_it_is_a_short_printable_text() -> None:
    """A plugin's ``echoed_model_note`` is printed under `Model:`; a raising property says nothing
    of its own (the kernel's note is shown). A text with a control character, an overlong or empty
    one, another type was passed over for the kernel's note, unsaid: it is the plugin's defect,
    refused naming it and the value (the rule a ``concurrency`` follows)."""
    import pytest
    from evalkit.components import BoundGenerator
    from evalkit.errors import PluginError
    from evalkit.run.answering.prompts import ECHOED_MODEL_NOTE

    class Raising:
        @property
        def echoed_model_note(self) -> str:
            raise RuntimeError("no client")

    def note(generator):
        return BoundGenerator(generator, "acme", "app", "m", True, None).echoed_model_note(ECHOED_MODEL_NOTE)

    def saying(value):
        return type("Generator", (), {"echoed_model_note": value})()

    assert note(object()) == ECHOED_MODEL_NOTE
    assert note(saying("answers come from a recording")) == "answers come from a recording"
    assert note(saying(None)) is None
    for broken in ("line\x1b[2Jbreak", "x" * 301, "", 7):
        with pytest.raises(PluginError, match="declares echoed_model_note"):
            note(saying(broken))
    assert note(Raising()) == ECHOED_MODEL_NOTE
