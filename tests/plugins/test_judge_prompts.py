"""Judge prompts are measuring instruments: a released prompt's text never changes without a new version."""

from __future__ import annotations

import pytest
from evalkit.errors import PluginError
from evalkit_plugins import judge_prompts
from evalkit_plugins.judge_prompts import RELEASED, digest, packaged_prompts, verify


def test_every_packaged_prompt_is_exactly_its_released_version() -> None:
    packaged = packaged_prompts()
    assert set(packaged) == {(grader, version) for grader, versions in RELEASED.items() for version in versions}
    for (grader, version), text in packaged.items():
        assert digest(text) == RELEASED[grader][version], (
            f"{grader}_v{version}.toml changed without a version bump: put the new text in "
            f"{grader}_v{version + 1}.toml (version = {version + 1}) and register its digest in RELEASED"
        )
        assert verify(grader, version, text).version == version


@pytest.mark.parametrize("grader", ["decision", "groundedness"])
def test_a_one_character_change_is_refused(grader: str) -> None:
    version = max(RELEASED[grader])
    text = packaged_prompts()[(grader, version)]
    changed = text.replace("PASSAGES", "PASSAGE", 1) if grader == "groundedness" else text.replace("completely", "fully", 1)
    assert changed != text
    with pytest.raises(PluginError, match=f"has changed since version {version} was released"):
        verify(grader, version, changed)


def test_bumping_the_version_without_registering_it_is_refused() -> None:
    text = packaged_prompts()[("decision", 1)].replace("version = 1", "version = 2", 1)
    with pytest.raises(PluginError, match=r'not released: register its sha256 [0-9a-f]{64} as RELEASED\["decision"\]\[2\]'):
        verify("decision", 2, text)


def test_a_crlf_checkout_is_the_same_prompt() -> None:
    text = packaged_prompts()[("decision", 1)]
    assert digest(text.replace("\n", "\r\n")) == digest(text)


def test_the_decision_profile_has_one_question_and_five_levels_lowest_first() -> None:
    prompt = judge_prompts.load("decision")
    assert prompt.fields["question"] == "fulfilment"
    assert prompt.strings("levels") == (
        "Fails the task entirely, or answers something else",
        "Addresses the task, but is mostly wrong or incomplete",
        "Fulfils part of the task; important parts are missing or wrong",
        "Fulfils the task with minor gaps or inaccuracies",
        "Fulfils the task completely and correctly",
    )


def test_render_replaces_known_placeholders_in_one_pass() -> None:
    assert judge_prompts.render("{a} {b} {c}", a="{b}", b="x") == "{b} x {c}"
