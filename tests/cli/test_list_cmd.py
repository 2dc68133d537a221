"""`evalkit list`: plugins from metadata only, sets from providers, failures reported by name."""

from __future__ import annotations


def test_list_shows_every_group_with_distribution_and_version(evalkit_cli) -> None:
    result = evalkit_cli("list")
    assert result.code == 0
    out = result.stdout
    for group in ("evalkit.golden_sets", "evalkit.question_sets", "evalkit.retrievers", "evalkit.graders", "evalkit.generators"):
        assert group in out
    assert "evalkit.smoke  evalkit-golden 0.1.0" in out
    assert "arith" in out and "evalkit-set-arith 0.1.0" in out
    assert "deterministic" in out and "reference" in out and "replay" in out


def test_list_sets_shows_the_installed_contrib_distribution(evalkit_cli) -> None:
    result = evalkit_cli("list", "sets", "--json")
    assert result.code == 0
    rows = {row["identifier"]: row for row in result.json()["sets"]}
    assert rows["arith.basic"]["distribution"] == "evalkit-set-arith"
    assert rows["arith.basic"]["count"] == 6
    assert rows["evalkit.smoke"]["distribution"] == "evalkit-golden"


def test_broken_plugins_are_listed_without_being_imported(evalkit_cli, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-broken-plugin")}
    result = evalkit_cli("list", env=env)
    # listed, and the two whose module is not there are marked so (exit 2, as `list sets` says)
    assert result.code == 2, result.stderr
    assert "broken_import" in result.stdout and "evalkit-broken-plugin 6.6.6" in result.stdout
    missing = 'module "evalkit_broken_plugin.missing_module" not found'
    assert f'error: golden prompt set provider "broken_import" (evalkit-broken-plugin 6.6.6): {missing}' in result.stderr
    assert f'error: grader "broken_grader" (evalkit-broken-plugin 6.6.6): {missing}' in result.stderr
    assert result.stderr.count("error:") == 2, result.stderr


def test_list_sets_reports_failing_providers_and_lists_the_rest(evalkit_cli, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-broken-plugin")}
    result = evalkit_cli("list", "sets", env=env)
    assert result.code == 2
    assert "evalkit.smoke" in result.stdout and "arith.basic" in result.stdout
    assert "\"broken_import\" (evalkit-broken-plugin 6.6.6) failed to load" in result.stderr
    assert "No module named 'evalkit_broken_plugin.missing_module'" in result.stderr
    assert "\"raising\" (evalkit-broken-plugin 6.6.6)" in result.stderr
    assert "the provider's data file is missing" in result.stderr


def test_two_sets_with_one_identifier_name_both_distributions(evalkit_cli, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-duplicate-set")}
    listed = evalkit_cli("list", "sets", env=env)
    assert listed.code == 2
    assert 'set "arith.basic" is shipped by more than one distribution' in listed.stderr
    assert "evalkit-duplicate-set 1.0.0" in listed.stderr and "evalkit-set-arith 0.1.0" in listed.stderr
    run = evalkit_cli("run", "arith.basic", env=env)
    assert run.code == 2
    assert "evalkit-duplicate-set" in run.stderr and "evalkit-set-arith" in run.stderr
    assert evalkit_cli("run", "evalkit.smoke", env=env).code == 0


def test_a_set_file_and_an_installed_set_of_one_identifier_name_the_file_and_the_distribution(evalkit_cli, project) -> None:
    # The clash read "is shipped by more than one distribution: evalkit.files (evalkit-golden 0.1.0)
    # and arith (evalkit-set-arith 0.1.0)": the set file the user wrote was not named.
    (project / "evals").mkdir()
    (project / "evals" / "mine.yaml").write_text(
        "identifier: arith.basic\nname: Mine\nprompts:\n  - id: a\n    prompt: hi\n    assertions:\n      - contains: x\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    said = (
        'is declared in the set file evals/mine.yaml:1 and shipped by the installed distribution '
        "evalkit-set-arith 0.1.0 (provider \"arith\"); give the file's set another identifier"
    )
    run = evalkit_cli("run", "arith.basic", "--provider", "reference")
    assert run.code == 2 and f'golden prompt set "arith.basic" {said}' in run.stderr, run.stderr
    listed = evalkit_cli("list", "sets", "--json")
    assert listed.code == 2 and f'set "arith.basic" {said}' in listed.json()["problems"]
    validated = evalkit_cli("validate")
    assert validated.code == 2 and f"arith.basic: {said}" in validated.stdout + validated.stderr
    assert "evalkit.files" not in run.stderr + listed.stdout + validated.stdout + validated.stderr
    # naming the file said "ok" of the set plain `validate` and `run` refuse
    for named in ("evals/mine.yaml", "evals"):
        validated = evalkit_cli("validate", named)
        assert validated.code == 2 and f"arith.basic: {said}" in validated.stderr, validated.stdout + validated.stderr
    (project / "evalkit.toml").unlink()  # not configured: its runs would still share the installed set's baselines
    validated = evalkit_cli("validate", "evals/mine.yaml", "--json")
    assert validated.code == 2 and validated.json()["problems"] == [{"set": "arith.basic", "reason": said}]


def test_a_named_set_file_of_an_identifier_no_installed_set_ships_is_valid(evalkit_cli, project) -> None:
    (project / "mine.yaml").write_text("identifier: mine.faq\nname: Mine\nprompts:\n  - id: a\n    prompt: hi\n    assertions:\n      - contains: x\n")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["*.yaml"]\n')
    validated = evalkit_cli("validate", "mine.yaml")
    assert validated.code == 0 and "ok  set mine.faq (1 prompt)" in validated.stdout, validated.stdout + validated.stderr


def test_help_mentions_exit_codes(evalkit_cli) -> None:
    result = evalkit_cli("--help")
    assert result.code == 0
    assert "exit codes" in result.stdout and "run" in result.stdout and "list" in result.stdout
    run_help = evalkit_cli("run", "--help")
    assert "--fail-on-regression" in run_help.stdout and "--max-pass-rate-drop" in run_help.stdout


def test_a_set_whose_identifier_run_refuses_is_listed_escaped_and_marked_unusable(evalkit_cli, plugin_dists) -> None:
    # A provider's set named "outsider.\x1b[2Jcleared", "outsider.two words", "outsider.café" (not
    # NFC) or "Outsider.Upper" was listed as if runnable, the escape sequence raw: `evalkit run`
    # refuses each ("identifier must be lowercase segments …").
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), "OUTSIDER_UNUSABLE_NAMES": "1"}
    document = evalkit_cli("list", "sets", "--json", env=env).json()
    rows = {row["identifier"]: row for row in document["sets"]}
    rule = "identifier must be lowercase segments of a-z, 0-9 and _ joined by dots (like package.set)"
    for identifier in ("outsider.\x1b[2Jcleared", "outsider.two words", "outsider.cafe\u0301", "Outsider.Upper"):
        assert rows[identifier]["usable"] is False and rows[identifier]["unusable"] == rule, rows[identifier]
    assert rows["outsider.usable"]["usable"] is True and rows["outsider.usable"]["unusable"] is None
    table = evalkit_cli("list", "sets", env=env)
    assert "\x1b" not in table.stdout
    lines = {line.split()[0]: line for line in table.stdout.splitlines() if "outsider." in line.lower() and "graded" not in line}
    assert set(lines) == {"'outsider.\\x1b[2Jcleared'", "'outsider.two", "'outsider.cafe\\u0301'", "'Outsider.Upper'", "outsider.usable"}
    assert all("— unusable: evalkit run refuses it (identifier must be" in line for name, line in lines.items() if name != "outsider.usable")
    assert "unusable" not in lines["outsider.usable"]


def test_a_provider_deployment_not_in_nfc_is_listed_escaped_and_marked_unusable(evalkit_cli, plugin_dists) -> None:
    # A deployment a question-set provider shipped as "stag" + a combining accent was listed as
    # "stág", runnable; `--deployment stág` is read in NFC and never matched it. A configured one
    # is refused (the deployment name … is not in Unicode normal form NFC).
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), "OUTSIDER_UNUSABLE_NAMES": "1"}
    document = evalkit_cli("list", "deployments", "--json", env=env).json()
    rows = {row["name"]: row for row in document["deployments"]}
    assert rows["production"]["usable"] is True and rows["production"]["unusable"] is None
    assert rows["stag\u0301ing"]["usable"] is False
    assert "is not in Unicode normal form NFC" in rows["stag\u0301ing"]["unusable"]
    table = evalkit_cli("list", "deployments", env=env)
    line = next(line for line in table.stdout.splitlines() if "stag" in line)
    assert line.startswith("'stag\\u0301ing'") and "unusable" in table.stdout, table.stdout


def test_an_entry_point_whose_module_is_not_found_is_marked_without_importing_any_plugin(evalkit_cli, plugin_dists, tmp_path) -> None:
    # `evalkit list` listed `ghost = "no_such_module.sub:Thing"` as if it were fine, exit 0, where
    # `list sets` and `validate` say exit 2 of such a provider. The module is looked for without
    # running plugin code: evalkit_unfound_plugins/__init__.py writes the marker and raises.
    marker = tmp_path / "imported"
    env = {"PYTHONPATH": plugin_dists("evalkit-unfound-plugins"), "EVALKIT_UNFOUND_MARKER": str(marker)}
    listed = evalkit_cli("list", env=env)
    assert listed.code == 2, listed.stdout + listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines() if "evalkit-unfound-plugins 0.1.0" in line}
    assert rows["ghost"].endswith('(module "no_such_module.sub" not found (there is no "no_such_module"))')
    assert rows["unfound.missing"].endswith('(module "evalkit_unfound_plugins.missing" not found)')
    assert rows["unfound.namespace_missing"].endswith('(module "evalkit_unfound_ns.absent" not found)')
    # found: a module whose package raises at import (only importing it tells), a namespace
    # package's module, a module in a folder without __init__.py inside a package
    for found in ("unfound.present", "unfound.namespaced", "unfound.nested"):
        assert rows[found].endswith("evalkit-unfound-plugins 0.1.0"), rows[found]
    named = "(evalkit-unfound-plugins 0.1.0): module"
    assert f'error: retriever "ghost" {named} "no_such_module.sub" not found' in listed.stderr
    assert f'error: grader "unfound.missing" {named} "evalkit_unfound_plugins.missing" not found' in listed.stderr
    assert f'error: retriever "unfound.namespace_missing" {named} "evalkit_unfound_ns.absent" not found' in listed.stderr
    assert f'error: generator "unfound.adapter" {named} "evalkit_unfound_plugins.absent_adapter" not found' in listed.stderr
    assert listed.stderr.count("error:") == 4, listed.stderr
    document = evalkit_cli("list", "plugins", "--json", env=env)
    assert document.code == 2
    unloadable = {row["name"]: row["unloadable"] for row in document.json() if row["distribution"] == "evalkit-unfound-plugins"}
    assert unloadable == {
        "ghost": 'module "no_such_module.sub" not found (there is no "no_such_module")',
        "unfound.namespaced": None, "unfound.namespace_missing": 'module "evalkit_unfound_ns.absent" not found',
        "unfound.present": None, "unfound.missing": 'module "evalkit_unfound_plugins.missing" not found', "unfound.nested": None,
        "unfound.imported": None, "unfound.adapter": 'module "evalkit_unfound_plugins.absent_adapter" not found',
        "unfound.present_adapter": None,
    }  # fmt: skip
    assert all(row["unloadable"] is None for row in document.json() if row["distribution"] != "evalkit-unfound-plugins")
    assert not marker.exists()
    # switched off, they are still marked, and no error: a disabled plugin is never loaded
    off = {**env, "EVALKIT_DISABLE_PLUGINS": "ghost,unfound.missing,unfound.namespace_missing,unfound.adapter"}
    quiet = evalkit_cli("list", env=off)
    assert quiet.code == 0 and "error" not in quiet.stderr, quiet.stderr
    assert '(disabled by EVALKIT_DISABLE_PLUGINS)  (module "no_such_module.sub" not found' in quiet.stdout
    assert not marker.exists()
    # loading it (what `--options` does) runs the package's __init__: the marker is what an import leaves
    loaded = evalkit_cli("list", "--options", env=off)
    assert loaded.code == 2 and "evalkit_unfound_plugins must not be imported by a listing" in loaded.stdout
    assert marker.read_text().startswith("evalkit_unfound_plugins imported\n")
