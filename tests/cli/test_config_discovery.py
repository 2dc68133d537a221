"""The configuration is found like pytest's rootdir, the store lives next to it, and the global
options are accepted before or after the subcommand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REFERENCE_INSTANCE = '[providers.self]\nadapter = "reference"\nmodel = "reference"\n'


def _project(root: Path, text: str = REFERENCE_INSTANCE, name: str = "evalkit.toml") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)
    (root / "src" / "deep").mkdir(parents=True)
    return root


def test_a_subdirectory_uses_the_parent_config_and_its_store(evalkit_cli, project: Path) -> None:
    _project(project)
    first = evalkit_cli("run", "evalkit.smoke", "--json", cwd=project / "src" / "deep").json()
    assert first["verdict"]["state"] == "baseline"
    assert (project / ".evalkit" / "results.db").is_file()
    assert not (project / "src" / "deep" / ".evalkit").exists()
    second = evalkit_cli("run", "evalkit.smoke", "--json").json()
    assert second["verdict"]["baseline_id"] == first["run_id"], "the run from the root sees the same store"


def test_pyproject_counts_only_with_a_tool_evalkit_table(evalkit_cli, project: Path) -> None:
    _project(
        project,
        '[tool.evalkit]\nprivacy = "full"\n[tool.evalkit.providers.self]\nadapter = "reference"\n',
        "pyproject.toml",
    )
    inner = project / "src"
    (inner / "pyproject.toml").write_text('[project]\nname = "inner"\nversion = "1"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--json", cwd=inner)
    assert result.code == 0, result.stderr
    assert result.json()["provider_instance"] == "self"
    assert (project / ".evalkit" / "results.db").is_file() and not (inner / ".evalkit").exists()


def test_evalkit_toml_is_preferred_in_one_folder_and_the_nearest_folder_wins(evalkit_cli, project: Path) -> None:
    _project(project, '[providers.outer]\nadapter = "reference"\n')
    (project / "pyproject.toml").write_text('[tool.evalkit.providers.ignored]\nadapter = "reference"\n')
    (project / "src" / "evalkit.toml").write_text('[providers.inner]\nadapter = "reference"\n')
    assert evalkit_cli("run", "evalkit.smoke", "--json").json()["provider_instance"] == "outer"
    assert (
        evalkit_cli("run", "evalkit.smoke", "--json", cwd=project / "src" / "deep").json()["provider_instance"]
        == "inner"
    )
    assert (project / "src" / ".evalkit" / "results.db").is_file()


@pytest.mark.parametrize("form", ["dangling link", "folder", "named pipe"])
def test_an_evalkit_toml_that_is_no_file_is_refused_not_passed_over_for_the_one_above(
    evalkit_cli, project: Path, form: str
) -> None:
    # passed over, the parent's configuration (its providers, its store) was used without a word
    _project(project, '[providers.outer]\nadapter = "reference"\n')
    inner = project / "src" / "evalkit.toml"
    if form == "dangling link":
        inner.symlink_to("../shared/evalkit.toml")  # the shared file was moved
    elif form == "folder":
        inner.mkdir()
    else:
        os.mkfifo(inner)
    result = evalkit_cli("run", "evalkit.smoke", cwd=project / "src" / "deep")
    assert result.code == 2, result.stdout + result.stderr
    said = "a link to ../shared/evalkit.toml, which does not exist" if form == "dangling link" else f"a {form}"
    assert f"error: {inner} is no configuration file: it is {said}." in result.stderr, result.stderr
    assert "--config PATH" in result.stderr and not (project / ".evalkit").exists(), "nothing was run or made"
    named = evalkit_cli(
        "run", "evalkit.smoke", "--json", "--config", str(project / "evalkit.toml"), cwd=project / "src" / "deep"
    )
    assert named.code == 0 and named.json()["provider_instance"] == "outer", "--config still names one"


def test_config_from_elsewhere_uses_the_store_next_to_it(evalkit_cli, project: Path, tmp_path: Path) -> None:
    _project(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config = str(project / "evalkit.toml")
    first = evalkit_cli("run", "evalkit.smoke", "--json", cwd=project).json()
    again = evalkit_cli("--config", config, "run", "evalkit.smoke", "--json", cwd=elsewhere)
    assert again.code == 0, again.stderr
    assert again.json()["verdict"]["baseline_id"] == first["run_id"]
    assert not (elsewhere / ".evalkit").exists(), "no second, empty store where the command ran"
    history = evalkit_cli("history", "evalkit.smoke", "--config", config, "--json", cwd=elsewhere).json()
    assert len(history["runs"]) == 2


@pytest.mark.parametrize(
    "command",
    [["history", "evalkit.smoke"], ["show", "20990101T000000-abcdef"], ["compare", "a", "b"], ["db", "status"]],
)
def test_read_only_commands_never_create_a_store(evalkit_cli, project: Path, command: list[str]) -> None:
    _project(project)
    result = evalkit_cli(*command, cwd=project / "src")
    assert result.code == 2, result.stderr
    assert f"There is no results store at {project / '.evalkit' / 'results.db'}" in result.stderr
    assert f"next to the configuration file {project / 'evalkit.toml'}" in result.stderr
    assert not (project / ".evalkit").exists() and not (project / "src" / ".evalkit").exists()


def test_global_options_go_before_or_after_the_subcommand(evalkit_cli, project: Path, tmp_path: Path) -> None:
    _project(project)
    db = f"sqlite:///{tmp_path / 'chosen.db'}"
    before = evalkit_cli("--database", db, "--json", "run", "evalkit.smoke", cwd=tmp_path)
    assert before.code == 0, before.stderr
    after = evalkit_cli("run", "evalkit.smoke", "--database", db, "--json", cwd=tmp_path)
    assert after.json()["verdict"]["baseline_id"] == before.json()["run_id"]
    status = evalkit_cli("--json", "--database", db, "db", "status")
    assert status.code == 0 and status.json()["up_to_date"] is True
    traced = evalkit_cli("show", "nope", "--database", db, "--traceback")
    assert traced.code == 2 and "Traceback" in traced.stderr
    refused = evalkit_cli("--json", "models")
    assert refused.code == 2 and "--json does not apply to `evalkit models`" in refused.stderr
    clash = evalkit_cli("--database", db, "history", "x", "--database", "sqlite:///other.db")
    assert clash.code == 2 and "--database is given twice" in clash.stderr


def test_an_option_given_twice_with_different_values_is_refused_wherever_it_stands(evalkit_cli, project: Path) -> None:
    """click keeps an option's last value: `run --config a.toml --config b.toml` read b.toml, and
    `--privacy metadata … --privacy full` (a wrapper's flag, then the user's) stored whole answers,
    exit 0, while `--config a.toml run --config b.toml` was refused. Every single-valued option
    given twice with different values is refused now, before anything runs; the same value twice,
    and a repeatable option (--provider, --report), are taken."""
    _project(project)
    other = _project(project / "other")
    refused = {
        (
            "run",
            "evalkit.smoke",
            "--config",
            str(project / "evalkit.toml"),
            "--config",
            str(other / "evalkit.toml"),
        ): "--config is given twice with different values",
        (
            "run",
            "evalkit.smoke",
            "--privacy",
            "metadata",
            "--priv=full",
        ): '--privacy is given twice with different values ("metadata" and "full"); give it once',
        (
            "history",
            "evalkit.smoke",
            "--limit",
            "3",
            "--limit",
            "4",
        ): '--limit is given twice with different values ("3" and "4")',
    }
    for argv, message in refused.items():
        result = evalkit_cli(*argv)
        assert result.code == 2 and message in result.stderr, (argv, result.stderr)
    assert not (project / ".evalkit").exists()  # nothing ran
    same = evalkit_cli("run", "evalkit.smoke", "--privacy", "metadata", "--privacy=metadata", "--json")
    assert same.code == 0, same.stderr
    assert same.json()["privacy"] == "metadata"


@pytest.mark.parametrize(
    "argv",
    [
        ("--config", "a.toml", "run", "evalkit.smoke", "--config", "b.toml"),
        ("run", "evalkit.smoke", "--config", "a.toml", "--config", "b.toml"),
    ],
)
def test_an_option_given_twice_reads_the_same_before_or_after_the_command(evalkit_cli, argv: tuple[str, ...]) -> None:
    # one before the command and one after said it without "; give it once", both after with it
    result = evalkit_cli(*argv)
    said = '--config is given twice with different values ("a.toml" and "b.toml"); give it once'
    assert result.code == 2 and said in result.stderr, result.stderr


@pytest.mark.parametrize("before", [True, False])
def test_a_database_given_twice_is_named_without_its_passwords(evalkit_cli, before: bool) -> None:
    # both values were quoted whole: "postgresql://ci:s3cretpw@db/x" in the usage error
    first, second = "postgresql://ci:s3cretpw@db/x", "postgresql://ci@db/x?password=0therpw"
    argv = ("--database", first, "history", "s", "--database", second) if before else (
        "history", "s", "--database", first, "--database", second
    )
    result = evalkit_cli(*argv)
    assert result.code == 2 and "--database is given twice with different values" in result.stderr, result.stderr
    assert '("postgresql://ci:***@db/x" and "postgresql://ci@db/x?password=***"); give it once' in result.stderr
    assert "s3cretpw" not in result.stderr + result.stdout and "0therpw" not in result.stderr + result.stdout


def test_a_mistyped_privacy_level_gets_a_suggestion_from_the_file_and_the_library(evalkit_cli, project: Path) -> None:
    """`privacy = "ful"` in evalkit.toml, and `evaluate_set(privacy="redact")`, named the levels
    without the one meant, as `--privacy ful` and `[gate] method = "pared"` already did."""
    _project(project, 'privacy = "ful"\n')
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 2
    assert (
        "evalkit.toml: privacy must be one of metadata, redacted, full, got 'ful'. Did you mean \"full\"?"
        in result.stderr
    )
    from evalkit.config import privacy_refusal

    assert (
        privacy_refusal("redact")
        == "privacy must be one of metadata, redacted, full, got 'redact'. Did you mean \"redacted\"?"
    )
    assert (
        privacy_refusal(3) == "privacy must be one of metadata, redacted, full, got 3"
        and privacy_refusal("full") is None
    )


def test_a_mistyped_subcommand_or_option_gets_a_suggestion(evalkit_cli) -> None:
    command = evalkit_cli("histroy", "x")
    assert command.code == 2 and 'Did you mean "history"?' in command.stderr
    option = evalkit_cli("run", "evalkit.smoke", "--provder", "x")
    assert option.code == 2 and 'Did you mean "--provider"?' in option.stderr
    # Only the named command's options (and the global ones): `db prune --older-than` is not run's.
    other = evalkit_cli("run", "evalkit.smoke", "--older-thn", "3d")
    assert other.code == 2 and "No such option '--older-thn'." in other.stderr and "Did you mean" not in other.stderr
    assert 'Did you mean "--json"?' in evalkit_cli("db", "prune", "--older-than", "3d", "--jsn").stderr


def test_an_undefined_provider_without_config_explains_adapters_and_the_table(evalkit_cli, project: Path) -> None:
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app")
    assert result.code == 2 and result.stdout == ""
    assert (
        "No configuration file was found (looked for evalkit.toml and [tool.evalkit] in pyproject.toml in"
        in result.stderr
    )
    assert str(project) in result.stderr
    assert '"openai", "reference", "replay"' in result.stderr
    assert '[providers.my-app]\n    adapter = "openai"\n    model = "MODEL-ALIAS"' in result.stderr
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (
            b'[providers.self]\nadapter = "reference"\n# caf\xe9\n',
            "is not UTF-8 text (invalid continuation byte at byte 44)",
        ),
        (
            b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
            "is not valid TOML: arrays or inline tables nested too deeply",
        ),
    ],
)
def test_a_configuration_no_reader_can_follow_is_a_usage_error_naming_it(
    evalkit_cli, project: Path, content: bytes, reason: str
) -> None:
    (project / "evalkit.toml").write_bytes(content)
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"evalkit: error: {project / 'evalkit.toml'} {reason}"), result.stderr
    assert not (project / ".evalkit").exists()


def test_a_pyproject_that_is_not_utf8_is_reported_only_when_it_is_evalkits(evalkit_cli, project: Path) -> None:
    (project / "pyproject.toml").write_bytes(b'[project]\nname = "caf\xe9"\n')  # someone else's, not UTF-8: walked past
    assert evalkit_cli("list").code == 0
    (project / "pyproject.toml").write_bytes(b'[tool.evalkit]\nprivacy = "full"\n# caf\xe9\n')
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"evalkit: error: {project / 'pyproject.toml'} is not UTF-8 text"), result.stderr


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        # a command's option before the command: argparse alone says "invalid choice: '3'"
        (
            ("--concurrency", "3", "run", "evalkit.smoke"),
            '--concurrency is an option of "evalkit run" and "evalkit retrieval", not of evalkit itself: put it after the command ("evalkit run … --concurrency")',
        ),
        (("--concurrency", "3", "retrieval", "q", "r"), '("evalkit retrieval … --concurrency")'),
        (
            ("--older-than", "3d", "db", "prune"),
            '--older-than is an option of "evalkit db prune" and "evalkit cache clear", not of evalkit itself',
        ),
        # mistyped as well as misplaced
        (
            ("--concurency", "3", "run", "evalkit.smoke"),
            'unknown option --concurency before the command. Did you mean "--concurrency" (an option of evalkit run and evalkit retrieval, after the command)?',
        ),
        (
            ("--concurency", "run", "evalkit.smoke"),
            'Did you mean "--concurrency" (an option of evalkit run and evalkit retrieval, after the command)?',
        ),
        (
            ("--databse", "x.db", "history", "s"),
            'unknown option --databse before the command. Did you mean "--database"?',
        ),
        (("--bogus", "list"), "no command takes the option --bogus (see evalkit --help, or evalkit list --help)"),
    ],
)
def test_an_option_before_the_command_that_evalkit_does_not_take_is_named(
    evalkit_cli, argv: tuple[str, ...], said: str
) -> None:
    result = evalkit_cli(*argv)
    assert result.code == 2 and said in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_global_options_before_the_command_still_parse_abbreviated_or_with_values(evalkit_cli, project) -> None:  # noqa: ANN001
    db = f"sqlite:///{project / 'r.db'}"
    # parsed (--trace is --traceback), so the command itself answers: there is no store there yet
    missing = evalkit_cli("--trace", "--database", db, "--json", "db", "status")
    assert missing.code == 2 and "There is no results store at" in missing.stderr and "Traceback" in missing.stderr
    assert "--database names it." in missing.stderr and "No configuration file" not in missing.stderr
    assert evalkit_cli("run", "evalkit.smoke", "--database", db).code == 0
    assert evalkit_cli(f"--database={db}", "history", "evalkit.smoke").code == 0
    named = evalkit_cli("history", "evalkit.smoke", env={"EVALKIT_DATABASE_URL": f"sqlite:///{project / 'none.db'}"})
    assert named.code == 2 and "The environment variable EVALKIT_DATABASE_URL names it" in named.stderr


def test_a_missing_store_is_explained_by_what_chose_it(evalkit_cli, project) -> None:  # noqa: ANN001
    (project / "evalkit.toml").write_text('database = "sqlite:///stores/results.db"\n')
    chosen = evalkit_cli("history", "evalkit.smoke")
    assert (
        chosen.code == 2 and f"The configuration file {project / 'evalkit.toml'} names it (database)" in chosen.stderr
    )
    (project / "evalkit.toml").write_text("")
    default = evalkit_cli("history", "evalkit.smoke")
    assert default.code == 2 and "The default store sits next to the configuration file" in default.stderr


def test_words_quoted_back_by_a_usage_error_show_their_control_characters(evalkit_cli) -> None:
    for argv in (("run", "x", "--bo\x1b[31mgus"), ("--bo\x1b[31mgus", "3", "run", "x"), ("hist\x07ory",)):
        result = evalkit_cli(*argv)
        assert result.code == 2 and "\x1b" not in result.stderr and "\x07" not in result.stderr, result.stderr
        assert "\\x1b[31m" in result.stderr or "\\x07" in result.stderr


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[sets]\npahts = ["evals/*.yaml"]\n', "[sets] has no key 'pahts'. Did you mean \"paths\"?"),
        ('[sets]\nallow_outsde = ["/srv"]\n', "[sets] has no key 'allow_outsde'. Did you mean \"allow_outside\"?"),
        ("sets = 3\n", "[sets] must be a table"),
    ],
)
def test_a_misspelled_sets_table_is_refused_by_every_command_not_only_those_that_read_set_files(
    evalkit_cli, project, toml, message
) -> None:
    # the [sets] table was checked only by the file set provider, whose failure a run of an
    # installed set passes over: a misspelled `pahts` ran, silently without the set files
    (project / "evalkit.toml").write_text(toml)
    for command in (("run", "evalkit.smoke"), ("history", "evalkit.smoke"), ("validate",)):
        result = evalkit_cli(*command)
        assert result.code == 2, (command, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr, (command, result.stderr)
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize(
    ("pyproject", "hint"),
    [
        ('[project]\nname = "x"\n[tool.evalkt]\ndatabase = "sqlite:///elsewhere.db"\n', "[tool.evalkt]"),
        ('[project]\nname = "x"\n[tools.evalkit]\ndatabase = "sqlite:///elsewhere.db"\n', "[tools.evalkit]"),
        ('[project]\nname = "x"\n', None),
    ],
)
@pytest.mark.parametrize("by", ["--config", "EVALKIT_CONFIG"])
def test_a_named_pyproject_without_tool_evalkit_is_refused_not_read_as_defaults(
    evalkit_cli, project, pyproject, hint, by
) -> None:
    # named on purpose, a pyproject.toml whose table was misspelled configured nothing, silently:
    # the run went to the default store and was gated with the default tolerances
    (project / "pyproject.toml").write_text(pyproject)
    named = ("--config", str(project / "pyproject.toml")) if by == "--config" else ()
    env = {"EVALKIT_CONFIG": str(project / "pyproject.toml")} if by == "EVALKIT_CONFIG" else None
    result = evalkit_cli(*named, "run", "evalkit.smoke", env=env)
    assert result.code == 2, result.stderr
    assert "holds no [tool.evalkit] table, so it configures nothing" in result.stderr, result.stderr
    if hint:
        assert f"Did you mean {hint}?" in result.stderr, result.stderr
    assert not (project / ".evalkit").exists()


@pytest.mark.parametrize("text", ["", "\n\n", "# privacy = \"full\"\n# database = \"sqlite:///x.db\"\n"])
@pytest.mark.parametrize("by", ["--config", "EVALKIT_CONFIG"])
def test_a_named_configuration_that_holds_no_settings_is_refused_naming_it(evalkit_cli, project, text, by) -> None:
    # an empty or comments-only file named on purpose was read as no settings, silently: the run
    # went to the default store on the default tolerances
    (project / "empty.yaml").write_text(text)
    named = ("--config", str(project / "empty.yaml")) if by == "--config" else ()
    env = {"EVALKIT_CONFIG": str(project / "empty.yaml")} if by == "EVALKIT_CONFIG" else None
    result = evalkit_cli(*named, "run", "evalkit.smoke", env=env)
    assert result.code == 2, result.stderr
    assert f"configuration file {project / 'empty.yaml'}" in result.stderr, result.stderr
    assert "holds no settings (it is empty, or only comments), so nothing in it would apply" in result.stderr
    assert ("leave --config out" if by == "--config" else "(named by EVALKIT_CONFIG)") in result.stderr
    assert not (project / ".evalkit").exists()


def test_an_empty_configuration_found_by_looking_marks_the_root(evalkit_cli, project) -> None:
    (project / "evalkit.toml").write_text("# the project root\n")
    result = evalkit_cli("run", "evalkit.smoke")
    assert result.code == 0, result.stderr
    assert (project / ".evalkit" / "results.db").exists()


def test_a_global_option_given_twice_names_both_values_as_words(evalkit_cli) -> None:
    """``--database is given twice with different values (sqlite:///a<LF>evalkit: ok and …)``:
    the values were put in raw, and the message keeps its lines. Each is now quoted."""
    clash = evalkit_cli("--database", "sqlite:///a\nevalkit: ok", "history", "x", "--database", "sqlite:///b.db")
    assert clash.code == 2
    assert (
        '--database is given twice with different values ("sqlite:///a\\x0aevalkit: ok" and "sqlite:///b.db")'
        in clash.stderr
    )
    assert not any(line.startswith("evalkit: ok") for line in clash.stderr.splitlines()), clash.stderr


def test_view_names_a_host_as_a_word(evalkit_cli) -> None:
    result = evalkit_cli("view", "--host", "0.0.0.0\nevalkit: ok", "--port", "0")
    assert result.code == 2
    assert not any(line.startswith("evalkit: ok") for line in result.stderr.splitlines()), result.stderr
