"""`evalkit regrade RUN_ID`: what the re-graded run says of its serving identity."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path


def _starter(evalkit_cli, project: Path, model: str) -> None:  # noqa: ANN001
    """`evalkit init`'s example, answers kept in full, every answer reporting ``model``."""
    assert evalkit_cli("init").code == 0
    config = project / "evalkit.toml"
    config.write_text(config.read_text().replace('privacy = "redacted"', 'privacy = "full"'))
    answers = project / tomllib.loads(config.read_text())["providers"]["recorded"]["path"]  # where init put them
    lines = [{**json.loads(line), "model": model} for line in answers.read_text().splitlines()]
    answers.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_regrade_says_why_its_configured_source_was_not_compared(evalkit_cli, project) -> None:
    # The source is a configured instance's run whose answers report a malformed model; its
    # re-grade said "the generator is not a configured provider instance (ad-hoc run); configure
    # [providers.NAME]", sending the user to configure what is configured.
    _starter(evalkit_cli, project, "app\u202emodel")
    source = evalkit_cli("run", "starter.faq", "--provider", "recorded", "--json").json()
    assert "not well formed" in source["verdict"]["reason"]
    regraded = evalkit_cli("regrade", source["run_id"])
    assert regraded.code == 0, regraded.stderr
    assert "ad-hoc" not in regraded.stdout
    assert 'carry a serving identity that is not well formed, so it is no evidence of who answered: reported model "app\\u202emodel"' in regraded.stdout


def test_a_regrade_of_an_ad_hoc_run_is_still_ad_hoc(evalkit_cli, project) -> None:
    source = evalkit_cli("run", "evalkit.smoke", "--provider", "reference", "--privacy", "full", "--json").json()
    regraded = evalkit_cli("regrade", source["run_id"], "--json")
    assert regraded.code == 0, regraded.stderr
    assert "(ad-hoc run)" in regraded.json()["verdict"]["reason"]
