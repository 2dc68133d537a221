"""`evalkit list providers` and `evalkit validate` say which configured provider instance cannot run
here (its adapter is no installed generator, switched off, or its module is not found), without
importing any adapter; and `evalkit validate`, which grader or set provider option table names no
installed plugin."""

from __future__ import annotations

from pathlib import Path

from tests.support.unrunnable import assert_listing_marks, assert_validate_refuses, unfound_plugins

#: Provider instances naming the test distribution evalkit-unfound-plugins' generators: one whose
#: module is not found, a misspelt id, an id nothing installs, and one found in a package that
#: raises (and leaves a marker) at import — only importing it would tell.
UNRUNNABLE = (
    '[providers.gone]\nadapter = "unfound.adapter"\n\n'
    '[providers.typo]\nadapter = "unfound.present_adaptr"\n\n'
    '[providers.x]\nadapter = "nope"\n\n'
    '[providers.fine]\nadapter = "unfound.present_adapter"\n'
)
#: What `evalkit list providers` and `evalkit validate` say of them.
CANNOT_RUN = {
    "gone": 'provider "gone" uses generator "unfound.adapter" (evalkit-unfound-plugins 0.1.0), which cannot be loaded: '
    'module "evalkit_unfound_plugins.absent_adapter" not found',
    "typo": 'provider "typo" uses generator "unfound.present_adaptr", which is no installed generator. '
    'Did you mean "unfound.present_adapter"?',
    "x": 'provider "x" uses generator "nope", which is no installed generator. Did you mean "openai"?',
}


def write(project: Path, text: str) -> None:
    (project / "evalkit.toml").write_text(text, encoding="utf-8")


def test_validate_says_which_provider_instances_cannot_run_without_importing_an_adapter(
    evalkit_cli, project, plugin_dists, tmp_path
) -> None:
    # `[providers.x] adapter = "nope"` passed `evalkit validate` (exit 0), and so did an adapter
    # whose module is not installed: the first run then failed on it.
    write(project, UNRUNNABLE)
    env, marker = unfound_plugins(plugin_dists, tmp_path)
    assert_validate_refuses(evalkit_cli, env, "provider", CANNOT_RUN, 'provider "fine" (adapter "unfound.present_adapter")')
    assert not marker.exists(), "an adapter's module was imported"
    # switched off, the adapter is none it can run, and validate says why
    off = evalkit_cli("validate", env={**env, "EVALKIT_DISABLE_PLUGINS": "unfound.present_adapter"})
    assert off.code == 2
    assert (
        'provider "fine" uses generator "unfound.present_adapter": EVALKIT_DISABLE_PLUGINS switches it off '
        '("unfound.present_adapter" of evalkit-unfound-plugins 0.1.0); take it out of EVALKIT_DISABLE_PLUGINS to use it.'
    ) in off.stderr.splitlines()
    assert not marker.exists()
    # an installed adapter is one line more of what was checked
    write(project, '[providers.replayed]\nadapter = "replay"\npath = "answers.jsonl"\n')
    fine = evalkit_cli("validate")
    assert fine.code == 0, fine.stderr
    assert 'ok  provider "replayed" (adapter "replay")' in fine.stdout


def test_list_providers_shows_each_instance_and_names_those_that_cannot_run(evalkit_cli, project, plugin_dists, tmp_path) -> None:
    write(project, UNRUNNABLE)
    env, marker = unfound_plugins(plugin_dists, tmp_path)
    assert_listing_marks(evalkit_cli, "providers", env, CANNOT_RUN, "fine")
    document = evalkit_cli("list", "providers", "--json", env=env)
    assert document.code == 2
    rows = {row["name"]: (row["adapter"], row["problem"]) for row in document.json()["providers"]}
    assert rows == {
        "gone": ("unfound.adapter", CANNOT_RUN["gone"]), "typo": ("unfound.present_adaptr", CANNOT_RUN["typo"]),
        "x": ("nope", CANNOT_RUN["x"]), "fine": ("unfound.present_adapter", None),
    }  # fmt: skip
    assert document.json()["problems"] == [{"provider": name, "reason": CANNOT_RUN[name]} for name in ("gone", "typo", "x")]
    assert not marker.exists(), "an adapter's module was imported"
    write(project, "")
    empty = evalkit_cli("list", "providers")
    assert empty.code == 0 and "No provider instances" in empty.stdout


def test_validate_says_which_grader_and_set_provider_option_tables_name_no_installed_plugin(evalkit_cli, project) -> None:
    # A misspelled `[graders.decison]` passed `evalkit validate` (exit 0) and every run went on with
    # the decision grader's default options: the table applied to nothing, silently.
    write(
        project,
        '[graders.decison]\npass_threshold = 0.9\n\n[graders.decision]\npass_threshold = 0.75\n\n'
        '[set_providers."evalkit.smok"]\nfolder = "evals"\n\n[set_providers."evalkit.files"]\n\n'
        '[graders."x\\u001b[2J"]\n',
    )
    result = evalkit_cli("validate")
    assert result.code == 2, result.stderr
    assert result.stderr.splitlines() == [
        '[graders."decison"] holds the options of grader "decison", which no installed distribution declares: '
        'they apply to nothing. Did you mean "decision"?',
        '[graders."x\\u001b[2J"] holds the options of grader "x\\x1b[2J", which no installed distribution declares: '
        "they apply to nothing.",
        '[set_providers."evalkit.smok"] holds the options of set provider "evalkit.smok", which no installed '
        'distribution declares: they apply to nothing. Did you mean "evalkit.smoke"?',
        "evalkit: 3 problems; nothing was run",
    ]
    document = evalkit_cli("validate", "--json")
    assert document.code == 2
    assert [{k: v for k, v in p.items() if k != "reason"} for p in document.json()["problems"]] == [
        {"grader": "decison"}, {"grader": "x\x1b[2J"}, {"set_provider": "evalkit.smok"},
    ]  # fmt: skip
    # a grader switched off is still declared: its table is no misspelling
    write(project, '[graders.decision]\npass_threshold = 0.75\n')
    off = evalkit_cli("validate", env={"EVALKIT_DISABLE_PLUGINS": "decision"})
    assert off.code == 0, off.stderr
