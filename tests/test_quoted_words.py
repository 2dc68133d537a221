"""A word from the configuration, a plugin or the command line is named in a message through
``wording.quoted`` (a word) or ``wording.table_key`` (a table of evalkit.toml): a line break or an
escape sequence in it shows as its escape, never as a line of its own that reads as evalkit's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit.wording import table_key

#: A word that, printed raw, ends the line and starts one that reads as evalkit's own.
HOSTILE = "x\nevalkit: ok\x1b[31m"
#: The same word as TOML writes it in evalkit.toml.
HOSTILE_TOML = '"x\\nevalkit: ok\\u001b[31m"'


def _no_forged_line(stderr: str) -> None:
    assert "\nevalkit: ok" not in stderr, stderr
    assert "\x1b" not in stderr, stderr
    assert "x\\x0aevalkit: ok\\x1b[31m" in stderr or "x\\u000aevalkit: ok\\u001b[31m" in stderr, stderr


CONFIGS = {
    # an option key no plugin has
    "option key": (
        f'[providers.my-app]\nadapter = "replay"\npath = "a.jsonl"\n{HOSTILE_TOML} = 1\n',
        ("run", "evalkit.smoke", "--provider", "my-app"),
        ['has no option "x\\x0aevalkit: ok\\x1b[31m"'],
    ),
    # the judge named in the configuration
    "judge": (
        f'judge = {HOSTILE_TOML}\n[providers.my-app]\nadapter = "replay"\npath = "a.jsonl"\n',
        ("run", "evalkit.smoke", "--provider", "my-app", "--grader", "decision"),
        ['judge "x\\x0aevalkit: ok\\x1b[31m" is not a configured', 'add [providers."x\\u000aevalkit: ok\\u001b[31m"]'],
    ),
    # a provider instance's name (a TOML key), in a problem with its options
    "provider instance": (
        f'[providers.{HOSTILE_TOML}]\nadapter = "openai"\nmodel = "m"\nconcurrency = 0\n',
        ("run", "evalkit.smoke", "--provider", HOSTILE),
        ['provider instance "x\\x0aevalkit: ok\\x1b[31m"', 'in [providers."x\\u000aevalkit: ok\\u001b[31m"] of'],
    ),
    # a deployment's name, and a retriever id it configures
    "deployment": (
        f'[deployments.{HOSTILE_TOML}.retrievers."evalkit.lexical"]\ncorpus = "c"\n'
        f'[deployments.{HOSTILE_TOML}.retrievers.{HOSTILE_TOML}]\ncorpus = "c"\n',
        ("retrieval", "evalkit_stdlib.docs", "--deployment", HOSTILE),
        ['deployment "x\\x0aevalkit: ok\\x1b[31m" names no retriever', "(evalkit.lexical, x\\x0aevalkit: ok\\x1b[31m)"],
    ),
    # the configured provider instances, listed when none is chosen (printed raw: a line of its own)
    "provider instances listed": (
        f'[providers.{HOSTILE_TOML}]\nadapter = "replay"\npath = "a.jsonl"\n[providers.b]\nadapter = "replay"\npath = "a.jsonl"\n',
        ("run", "evalkit.smoke"),
        ["several provider instances are configured (x\\x0aevalkit: ok\\x1b[31m, b)"],
    ),
    # the deployments listed beside an unknown one (printed raw)
    "deployments listed": (
        f'[deployments.{HOSTILE_TOML}.retrievers."evalkit.lexical"]\ncorpus = "c"\n',
        ("retrieval", "evalkit_stdlib.docs", "--deployment", "nope"),
        ["Known deployments: demo, x\\x0aevalkit: ok\\x1b[31m"],
    ),
}


@pytest.mark.parametrize("case", list(CONFIGS))
def test_a_word_from_the_configuration_is_quoted_with_its_line_breaks_escaped(evalkit_cli, project: Path, case: str) -> None:
    config, args, shown = CONFIGS[case]
    (project / "a.jsonl").write_text("")
    (project / "evalkit.toml").write_text(config)
    result = evalkit_cli(*args)
    assert result.code == 2, result.stderr
    _no_forged_line(result.stderr)
    for part in shown:
        assert part in result.stderr, result.stderr


def test_a_misspelt_provider_is_offered_the_hostile_instance_quoted(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(f'[providers.{HOSTILE_TOML}]\nadapter = "replay"\npath = "a.jsonl"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "x\nevalkit: ok\x1b[32m")
    assert result.code == 2
    _no_forged_line(result.stderr)
    assert 'Did you mean "x\\x0aevalkit: ok\\x1b[31m"?' in result.stderr
    assert '[providers."x\\u000aevalkit: ok\\u001b[32m"]' in result.stderr  # the table to paste, in TOML's escapes


#: A reply for each prompt of evalkit.smoke, each reporting its model: a run of them is complete,
#: under a verified serving identity.
SMOKE_REPLIES = "".join(
    json.dumps({"id": case_id, "text": "x", "model": "m1"}) + "\n"
    for case_id in ("capital-of-france", "two-plus-two", "opening-hours", "contact-json", "receipt-deadline", "colleague-claims", "echo-token")
)


def test_who_answers_a_run_is_named_quoted(evalkit_cli, project: Path) -> None:
    """An instance or a ``--model`` with a line break in "by INSTANCE/ALIAS" (``components.answered_by``)
    or "this run asks INSTANCE/ALIAS" printed the line "evalkit: ok" as evalkit's own."""
    (project / "a.jsonl").write_text(SMOKE_REPLIES)
    (project / "evalkit.toml").write_text(
        '[providers.my-app]\nadapter = "replay"\npath = "a.jsonl"\nmodel = "sut"\n'
        f'[providers.{HOSTILE_TOML}]\nadapter = "replay"\npath = "a.jsonl"\nmodel = "m"\n'
    )
    first = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app", "--json")
    assert first.code == 0, first.stderr
    resumed = evalkit_cli("run", "evalkit.smoke", "--provider", HOSTILE, "--resume")
    assert resumed.code == 2, resumed.stderr
    _no_forged_line(resumed.stderr)
    assert 'no unfinished run of "evalkit.smoke" by "x\\x0aevalkit: ok\\x1b[31m/m" with grader' in resumed.stderr
    other = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app", "--model", HOSTILE, "--baseline", first.json()["run_id"])
    assert other.code == 2, other.stderr
    _no_forged_line(other.stderr)
    assert 'it was answered by "my-app/sut", this run asks "my-app/x\\x0aevalkit: ok\\x1b[31m"' in other.stderr


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("my-app", "my-app"),
        ("evalkit.lexical", '"evalkit.lexical"'),
        ("a b", '"a b"'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("x\nevalkit: ok\x1b[31m", '"x\\u000aevalkit: ok\\u001b[31m"'),
        ("", '""'),
        ("café", '"café"'),
    ],
)
def test_table_key_writes_a_key_toml_reads_back(key: str, shown: str) -> None:
    import tomllib

    from evalkit.wording import table_key

    assert table_key(key) == shown
    assert tomllib.loads(f"[t.{shown}]\nv = 1\n") == {"t": {key: {"v": 1}}}
    assert table_key("decision", always_quoted=True) == '"decision"'


# -- file paths: wording.path_named ----------------------------------------------------------------

#: A folder name that, printed raw, ends the line, starts one reading as evalkit's, and sets the
#: terminal's title (an OSC sequence: no "[", which a glob would read as a pattern).
HOSTILE_FOLDER = "pro ject\nevalkit: ok\x1b]0;pwned\x07"
HOSTILE_FOLDER_SHOWN = "pro ject\\x0aevalkit: ok\\x1b]0;pwned\\x07"


@pytest.fixture
def hostile_project(tmp_path: Path) -> Path:
    folder = tmp_path / HOSTILE_FOLDER
    folder.mkdir()
    return folder


def _path_shown(stderr: str, path: Path) -> None:
    """``path`` is named quoted, its line break and escapes escaped, and nothing forged a line."""
    assert "\nevalkit: ok" not in stderr and "\x1b" not in stderr and "\x07" not in stderr, stderr
    shown = str(path).replace(HOSTILE_FOLDER, HOSTILE_FOLDER_SHOWN)
    assert f'"{shown}"' in stderr, stderr


def test_a_missing_configuration_file_is_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    missing = hostile_project / "none.toml"
    result = evalkit_cli("run", "evalkit.smoke", "--config", str(missing))
    assert result.code == 2
    _path_shown(result.stderr, missing)


def test_a_missing_store_is_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    store = hostile_project / "results.db"
    result = evalkit_cli("history", "evalkit.smoke", "--database", f"sqlite:///{store}")
    assert result.code == 2
    _path_shown(result.stderr, store)


def test_the_configuration_file_of_a_wrong_option_is_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    (hostile_project / "a.jsonl").write_text("")
    (hostile_project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\npath = "a.jsonl"\npaht = 1\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app", cwd=hostile_project)
    assert result.code == 2
    _path_shown(result.stderr, hostile_project / "evalkit.toml")
    assert f'[providers.my-app] of "{hostile_project}'.replace(HOSTILE_FOLDER, HOSTILE_FOLDER_SHOWN) in result.stderr


def test_a_written_report_is_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    report = hostile_project / "report.xml"
    result = evalkit_cli("run", "evalkit.smoke", "--report", f"junit:{report}")
    assert result.code == 0, result.stderr
    assert report.is_file()
    _path_shown(result.stderr, report)


def test_a_missing_lexical_corpus_is_named_quoted(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(
        f'[deployments.demo.retrievers."evalkit.lexical"]\ncorpus = {table_key(HOSTILE_FOLDER, always_quoted=True)}\n'
    )
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert result.code == 2
    _path_shown(result.stderr, project / HOSTILE_FOLDER)


def test_a_set_file_with_a_line_break_in_its_name_is_named_quoted(evalkit_cli, project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / f"{HOSTILE_FOLDER}.yaml").write_text("identifier: a.b\nname: x\nprompts: 3\n")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    result = evalkit_cli("validate")
    assert result.code == 2
    assert "\nevalkit: ok" not in result.stdout + result.stderr and "\x1b" not in result.stdout + result.stderr
    assert f'"evals/{HOSTILE_FOLDER_SHOWN}.yaml":3:10: prompts: 3' in result.stdout + result.stderr


def test_the_files_init_writes_are_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    """`evalkit init DIR` printed "wrote DIR/evalkit.toml" and "Next, in DIR:" with DIR as it is: a
    folder name with a line break printed a line "evalkit: ok" of its own, and one with a space
    read as two words."""
    result = evalkit_cli("init", str(hostile_project))
    assert result.code == 0, result.stderr
    assert (hostile_project / "evalkit.toml").is_file()
    _path_shown(result.stdout, hostile_project / "evalkit.toml")
    _path_shown(result.stdout, hostile_project / "evals" / "example.yaml")
    assert f'Next, in "{hostile_project}":'.replace(HOSTILE_FOLDER, HOSTILE_FOLDER_SHOWN) in result.stdout, result.stdout


def test_the_files_an_import_reads_and_writes_are_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    """`evalkit import otel` printed "wrote SET and ANSWERS" and "read N spans from TRACE" with
    the paths as they are: a line break in one printed a line of its own."""
    from tests.support.otel_traces import answer, model_call, text, trace_file

    trace = hostile_project / "prod x.jsonl"
    with trace_file(trace) as tracer:
        model_call(tracer, [text("user", "When can I return a lamp?")], answer("Within 30 days."))
    set_file, answers = hostile_project / "set.yaml", hostile_project / "a.jsonl"
    result = evalkit_cli("import", "otel", str(trace), "-o", str(set_file), "--answers", str(answers))
    assert result.code == 0, result.stderr
    _path_shown(result.stdout, set_file)
    _path_shown(result.stdout, answers)
    assert 'from "prod x.jsonl" (' in result.stdout, result.stdout


def test_a_missing_replay_file_is_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    (hostile_project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\npath = "missing.jsonl"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app", cwd=hostile_project)
    assert result.code == 2, result.stderr
    _path_shown(result.stderr, hostile_project / "missing.jsonl")
    assert "replay file " in result.stderr


def test_a_resume_in_a_store_not_made_yet_names_it_quoted(evalkit_cli, hostile_project: Path) -> None:
    store = hostile_project / "results.db"
    result = evalkit_cli("run", "evalkit.smoke", "--resume", "r1", "--database", f"sqlite:///{store}")
    assert result.code == 2, result.stderr
    assert "there is no store at " in result.stderr, result.stderr
    _path_shown(result.stderr, store)


def test_a_missing_set_file_names_the_folder_looked_in_quoted(evalkit_cli, hostile_project: Path) -> None:
    (hostile_project / "evalkit.toml").write_text('[sets]\npaths = ["missing.yaml"]\n')
    result = evalkit_cli("validate", cwd=hostile_project)
    assert result.code == 2
    said = result.stdout + result.stderr
    assert "(looked in " in said, said
    _path_shown(said, hostile_project)


def test_the_trec_files_written_are_named_quoted(evalkit_cli, hostile_project: Path) -> None:
    run_file, qrels = hostile_project / "run.txt", hostile_project / "qrels.txt"
    result = evalkit_cli(
        "retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo",
        "--export-run", str(run_file), "--export-qrels", str(qrels), cwd=hostile_project,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    _path_shown(result.stdout, run_file)
    _path_shown(result.stdout, qrels)


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/work/evals/faq.yaml", "/work/evals/faq.yaml"),
        (Path("my evals/faq.yaml"), '"my evals/faq.yaml"'),
        ("evals\nevalkit: ok/faq.yaml", '"evals\\x0aevalkit: ok/faq.yaml"'),
        ("", '""'),
        ('a"b', '"a\\"b"'),
        (b"/by/tes", "/by/tes"),
    ],
)
def test_path_named(path: object, shown: str) -> None:
    from evalkit.wording import path_named

    assert path_named(path) == shown


def test_evalkits_own_words_in_a_names_place_are_not_quoted_as_a_name() -> None:
    """A record standing for a distribution's unreadable entry points was labelled
    ``generator "(unreadable)" (…)``, as if a plugin had chosen that name; a plugin that did choose
    it is still quoted."""
    from evalkit.registry import UNREADABLE_ENTRY_POINTS, PluginRecord
    from evalkit.wording import quoted, word_named

    placeholder = PluginRecord("evalkit.generators", UNREADABLE_ENTRY_POINTS, "", "broken-1.0.dist-info", "in /site")
    assert placeholder.label == "generator (unreadable) (broken-1.0.dist-info in /site)"
    assert quoted(UNREADABLE_ENTRY_POINTS) == word_named(UNREADABLE_ENTRY_POINTS) == "(unreadable)"
    chosen = PluginRecord("evalkit.generators", "(unreadable)", "m:f", "acme", "1.0")
    assert chosen.label == 'generator "(unreadable)" (acme 1.0)'


# -- the rule, kept ----------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
#: What an exception or a warning is built with: the callee's name ends so (``UsageError``,
#: ``ReportFailure``, ``CalibrationFailed``) or is ``warn``.
_MESSAGE_CALLEES = ("Error", "Exception", "Failure", "Failed")


def _message_f_strings(source: str):  # noqa: ANN202 - an iterator of ast.JoinedStr
    """Every f-string in the message of an exception's or a warning's call in ``source`` (the
    first argument of a call whose name ends in one of :data:`_MESSAGE_CALLEES`, or ``warn``)."""
    import ast

    for call in ast.walk(ast.parse(source)):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if callee.endswith(_MESSAGE_CALLEES) or callee == "warn":
            yield from (node for node in ast.walk(call.args[0]) if isinstance(node, ast.JoinedStr))


def _hand_quoted(source: str) -> list[tuple[int, str]]:
    """The values an exception's or a warning's f-string message writes between two ``"`` of its
    own (``f'set "{name}"'``), by line: ``wording.quoted`` (a word) or ``wording.path_named`` (a
    path) name them, escaping what would forge a line."""
    import ast

    found = []
    for text in _message_f_strings(source):
        parts = text.values
        for before, value, after in zip(parts, parts[1:], parts[2:], strict=False):
            if (
                isinstance(value, ast.FormattedValue)
                and value.format_spec is None
                and value.conversion == -1
                and isinstance(before, ast.Constant)
                and isinstance(after, ast.Constant)
                and str(before.value).endswith('"')
                and str(after.value).startswith('"')
            ):
                found.append((text.lineno, ast.unparse(value.value)))
    return found


#: The names under which a message holds a generator's words: a provider instance (a TOML key the
#: user wrote), a model alias (``--model``, ``model = …``), an adapter (a plugin's entry point).
_GENERATOR_WORDS = ("instance", "alias", "model", "adapter")


def _raw_generator_words(source: str) -> list[tuple[int, str]]:
    """The values named like a generator's words (:data:`_GENERATOR_WORDS`: ``bound.instance``,
    ``under_test.alias``, ``instance.adapter``) that an exception's or a warning's f-string message
    writes as they are (``({bound.adapter})``, ``by {instance}/{alias}``), by line: they are the
    user's or a plugin's words, named through ``wording.quoted`` (or ``components.answered_by``)."""
    import ast

    found = []
    for text in _message_f_strings(source):
        for value in text.values:
            if not isinstance(value, ast.FormattedValue) or value.conversion != -1 or value.format_spec is not None:
                continue
            named = value.value.values if isinstance(value.value, ast.BoolOp) else [value.value]
            if any((n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")).endswith(_GENERATOR_WORDS) for n in named):
                found.append((text.lineno, ast.unparse(value.value)))
    return found


def test_a_ranked_instance_without_measurements_is_named_quoted(evalkit_cli, project: Path) -> None:
    """`evalkit models rank` said "no … run of a/x\\x0aevalkit: ok, shown only": where the model
    alias ended was anyone's guess. Named as every message names who answers."""
    (project / "evalkit.toml").write_text(f'[providers.a]\nadapter = "reference"\nmodel = {HOSTILE_TOML}\n')
    ranked = evalkit_cli("models", "rank")
    assert ranked.code == 0, ranked.stderr
    assert "\nevalkit: ok" not in ranked.stdout and "\x1b" not in ranked.stdout, ranked.stdout
    said = " ".join(ranked.stdout.split())
    assert 'no verified complete deterministic run of "a/x\\x0aevalkit: ok\\x1b[31m", shown only' in said, said


def test_the_raw_generator_word_finder_finds_them() -> None:
    source = """
raise UsageError(f"generator of {bound.instance or bound.adapter} ({bound.adapter})")
raise ConfigError(f"serves ({under_test.alias} at {url}), {quoted(alias)}, {model!r}, {count:,}")
raise UsageError(f"answered by {instance}/{alias}")
print(f"{instance}")
"""
    assert _raw_generator_words(source) == [
        (2, "bound.instance or bound.adapter"), (2, "bound.adapter"), (3, "under_test.alias"), (4, "instance"), (4, "alias"),
    ]


def test_no_message_writes_a_generators_words_raw() -> None:
    """A provider instance or a model alias with a line break printed as a line of evalkit's own
    (``by x`` / ``evalkit: ok/sut``): it was written as it is after "by" and "(". Every exception's
    and warning's message names them through ``wording.quoted`` instead."""
    found = [
        f"{file.relative_to(ROOT)}:{line}: {value}"
        for folder in ("core/evalkit", "plugins/evalkit_plugins")
        for file in sorted((ROOT / folder).rglob("*.py"))
        for line, value in _raw_generator_words(file.read_text(encoding="utf-8"))
    ]
    assert found == [], "quote these with wording.quoted:\n" + "\n".join(found)


def test_the_hand_quote_finder_finds_hand_quotes() -> None:
    source = """
raise UsageError(f'set "{name}" is unknown')
raise errors.ConfigError(f"option \\"{key}\\" of {table}")
warnings.warn(f'grader "{g}"; grading deterministically')
raise UsageError(f"set {quoted(name)}, {n:,} cases, \\"{n:>3}\\" {x!r}")
print(f'"{name}"')
"""
    assert _hand_quoted(source) == [(2, "name"), (3, "key"), (4, "g")]


def test_no_message_quotes_a_value_by_hand() -> None:
    """An option key with a line break printed as a line of evalkit's own: ``has no option "pa`` /
    ``evalkit: ok"``, because the message wrote ``"{key}"`` itself. Every exception's and warning's
    message names a value through ``wording.quoted`` or ``wording.path_named`` instead."""
    found = [
        f"{file.relative_to(ROOT)}:{line}: {value}"
        for folder in ("core/evalkit", "plugins/evalkit_plugins")
        for file in sorted((ROOT / folder).rglob("*.py"))
        for line, value in _hand_quoted(file.read_text(encoding="utf-8"))
    ]
    assert found == [], "quote these with wording.quoted (a word) or wording.path_named (a path):\n" + "\n".join(found)
