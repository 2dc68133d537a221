"""`evalkit import otel` end to end: a trace file the OpenTelemetry SDK wrote, imported, validated
and replayed through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.otel_traces import answer, model_call, text, tool_call, tool_response, trace_file


def write_traces(path: Path) -> Path:
    with trace_file(path, resource={"deployment.api_key": "shopkey-9f8e7d6c5b4a"}) as tracer:
        model_call(tracer, [text("user", "When can I return a lamp? I am ann@example.com")], answer("Within 30 days."), system="You are the shop's assistant.")
        model_call(tracer, [text("user", "I bought a lamp."), text("assistant", "Which order?"), text("user", "A-1234.")], answer("Until May 3."))
        model_call(
            tracer,
            [text("user", "Weather in Paris?"), {"role": "assistant", "parts": [tool_call("c1", "get_weather", {"city": "Paris"})]},
             tool_response("c1", "18 C")],
            answer("It is 18 °C, key shopkey-9f8e7d6c5b4a."),
        )  # fmt: skip
        with tracer.start_as_current_span("execute_tool get_weather") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
    return path


def test_imported_traces_validate_and_replay_green(evalkit_cli, project: Path) -> None:
    write_traces(project / "prod.jsonl")
    imported = evalkit_cli("import", "otel", "prod.jsonl")
    assert imported.code == 0, imported.stderr
    out = imported.stdout
    assert "read 4 spans from prod.jsonl (OpenTelemetry GenAI conventions v1.37-v1.44)" in out
    assert "imported 3 cases: 1 single prompt, 2 conversations (1 kept but skipped: they hold tool calls)" in out
    assert "not imported: spans of other operations (not a model call): 1" in out
    assert "wrote evals/prod.yaml and evals/prod-answers.jsonl" in out
    written = (project / "evals" / "prod.yaml").read_text() + (project / "evals" / "prod-answers.jsonl").read_text()
    assert "ann@example.com" not in written and "shopkey-9f8e7d6c5b4a" not in written and "It is 18 °C, key ***." in written
    snippet = out.split("provider in evalkit.toml:\n")[1].split("  evalkit validate")[0]
    # the configuration as printed, nothing added: it names the set file too ([sets] was left to the user)
    assert snippet.startswith('  [sets]\n  paths = ["evals/prod.yaml"]\n  [providers.prod]\n'), snippet
    (project / "evalkit.toml").write_text("\n".join(line.strip() for line in snippet.splitlines()) + "\n")
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stderr
    assert "ok  set traces.prod (2 prompts)" in checked.stdout and "skip  evals/prod.yaml:" in checked.stdout
    run = evalkit_cli("run", "traces.prod", "--provider", "prod", "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert document["pass_rate"] == 1.0 and len(document["cases"]) == 2
    assert document["identity"]["reported_model"] == "gpt-4o-mini-2024-07-18" and document["accepted"]


def test_import_never_overwrites_without_force_and_says_why_nothing_was_imported(evalkit_cli, project: Path) -> None:
    write_traces(project / "prod.jsonl")
    assert evalkit_cli("import", "otel", "prod.jsonl", "-o", "sets/p.yaml", "--identifier", "prod.calls").code == 0
    before = (project / "sets" / "p.yaml").read_text()
    again = evalkit_cli("import", "otel", "prod.jsonl", "-o", "sets/p.yaml")
    assert again.code == 2 and "writes nothing: sets/p-answers.jsonl, sets/p.yaml already exist" in again.stderr
    assert (project / "sets" / "p.yaml").read_text() == before
    forced = evalkit_cli("import", "otel", "prod.jsonl", "-o", "sets/p.yaml", "--force", "--json")
    assert forced.code == 0, forced.stderr
    assert forced.json()["cases"] == 3 and forced.json()["not_imported"] == {"spans of other operations (not a model call)": 1}
    (project / "noise.jsonl").write_text('{"resourceSpans": []}\nnot json\n')
    nothing = evalkit_cli("import", "otel", "noise.jsonl")
    assert nothing.code == 2
    assert "holds no model call to import: no span at all (1 line held no OTLP/JSON export request)" in nothing.stderr
    (project / "latin.jsonl").write_bytes(b"\xff\xfe")
    refused = evalkit_cli("import", "otel", "latin.jsonl")
    assert refused.code == 2 and "trace file latin.jsonl is not UTF-8 text" in refused.stderr and "Traceback" not in refused.stderr
    assert evalkit_cli("import", "otel", "prod.jsonl", "-o", "x.json").code == 2
    assert not (project / "evals").exists()


def test_the_help_names_the_supported_conventions(evalkit_cli) -> None:
    from evalkit.cli import import_cmd
    from evalkit.importers import otel

    assert import_cmd.SEMCONV_VERSIONS == otel.SEMCONV_VERSIONS
    shown = evalkit_cli("import", "otel", "--help")
    assert shown.code == 0 and "GenAI semantic conventions v1.37-v1.44" in " ".join(shown.stdout.split())


def test_the_next_steps_name_the_set_file_only_where_the_configuration_does_not_read_it(evalkit_cli, project: Path) -> None:
    """A [sets] table that already reads the file needs nothing; one that does not is extended,
    not declared twice (a second [sets] table is a TOML error); paths are relative to the
    configuration's folder, as [sets] paths are."""
    write_traces(project / "prod.jsonl")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    covered = evalkit_cli("import", "otel", "prod.jsonl")
    assert covered.code == 0 and "[sets]" not in covered.stdout, covered.stdout
    (project / "evalkit.toml").write_text('[sets]\npaths = ["other/*.yaml"]\n')
    extended = evalkit_cli("import", "otel", "prod.jsonl", "-o", "traces/prod.yaml")
    assert extended.code == 0, extended.stderr
    assert f'  add "traces/prod.yaml" to the paths of [sets] in {project / "evalkit.toml"}\n' in extended.stdout, extended.stdout
    (project / "evalkit.toml").unlink()
    (project / "sub").mkdir()
    below = evalkit_cli("import", "otel", "../prod.jsonl", "-o", "evals/below.yaml", cwd=project / "sub")
    assert below.code == 0 and '  paths = ["evals/below.yaml"]\n' in below.stdout, below.stdout


def test_import_refuses_one_file_for_two_roles_and_writes_nothing(evalkit_cli, project: Path) -> None:
    # --answers naming the set file wrote the answers, then the set file over them (exit 0, a set
    # whose replay file is itself); --force with an output naming the trace file replaced the
    # source with what was made of it.
    source = write_traces(project / "prod.jsonl").read_bytes()
    same = evalkit_cli("import", "otel", "prod.jsonl", "-o", "out/p.yaml", "--answers", "out/p.yaml")
    assert same.code == 2, same.stdout
    assert "writes nothing: the set file and the answers file are both out/p.yaml" in same.stderr
    assert not (project / "out").exists()

    over_source = evalkit_cli("import", "otel", "prod.jsonl", "-o", "out/p.yaml", "--answers", "prod.jsonl", "--force")
    assert over_source.code == 2 and "--answers prod.jsonl is the trace file it reads" in over_source.stderr
    (project / "link.jsonl").symlink_to("prod.jsonl")
    by_link = evalkit_cli("import", "otel", "link.jsonl", "-o", "out/p.yaml", "--answers", "prod.jsonl", "--force")
    assert by_link.code == 2 and "is the trace file it reads" in by_link.stderr
    (project / "prod.yaml").write_bytes(source)
    as_set = evalkit_cli("import", "otel", "prod.yaml", "-o", "prod.yaml", "--force")
    assert as_set.code == 2 and "-o prod.yaml is the trace file it reads" in as_set.stderr
    assert (project / "prod.jsonl").read_bytes() == source and (project / "prod.yaml").read_bytes() == source
    assert not (project / "out").exists() and not (project / "prod-answers.jsonl").exists()


def test_import_refuses_a_folder_as_either_output_at_once_and_writes_nothing(evalkit_cli, project: Path) -> None:
    # --answers FOLDER said "already exists; give --force to replace", and --force then failed
    # with "Is a directory"
    write_traces(project / "prod.jsonl")
    (project / "answers").mkdir()
    (project / "set.yaml").mkdir()
    for force in ((), ("--force",)):
        answers = evalkit_cli("import", "otel", "prod.jsonl", "-o", "out/p.yaml", "--answers", "answers", *force)
        assert answers.code == 2, answers.stdout
        assert "evalkit import writes nothing: --answers answers is a folder; give a file's path" in answers.stderr, answers.stderr
        as_set = evalkit_cli("import", "otel", "prod.jsonl", "-o", "set.yaml", *force)
        assert as_set.code == 2 and "-o set.yaml is a folder; give a file's path" in as_set.stderr, as_set.stderr
    assert not (project / "out").exists() and list((project / "answers").iterdir()) == []
    assert list((project / "set.yaml").iterdir()) == [] and not (project / "set-answers.jsonl").exists()


def test_an_output_path_with_a_line_break_is_named_quoted(evalkit_cli, project: Path) -> None:
    """A folder named "d<newline>evalkit: ok" given as -o: "-o d" ended the line, and "evalkit: ok
    is a folder" printed as a line of evalkit's own; a file that exists, likewise."""
    write_traces(project / "prod.jsonl")
    (project / "d\nevalkit: ok.yaml").mkdir()
    folder = evalkit_cli("import", "otel", "prod.jsonl", "-o", "d\nevalkit: ok.yaml")
    assert folder.code == 2, folder.stdout
    assert '-o "d\\x0aevalkit: ok.yaml" is a folder' in folder.stderr and "\nevalkit: ok" not in folder.stderr, folder.stderr
    (project / "s\nevalkit: ok.yaml").write_text("")
    exists = evalkit_cli("import", "otel", "prod.jsonl", "-o", "s\nevalkit: ok.yaml", "--answers", "a.jsonl")
    assert exists.code == 2, exists.stdout
    assert '"s\\x0aevalkit: ok.yaml" already exists' in exists.stderr and "\nevalkit: ok" not in exists.stderr, exists.stderr


def test_the_commands_own_checks_name_an_output_path_and_an_identifier_quoted(evalkit_cli, project: Path) -> None:
    """import's format check showed -o escaped but bare (`-o my file.txt:` read as the path "my"),
    and --identifier raw: its line break printed "evalkit: ok: lowercase…" as a line of its own;
    `evalkit init` named its folder and the files in it the same ways."""
    write_traces(project / "prod.jsonl")
    for output, shown in (("d\nevalkit: ok.txt", '-o "d\\x0aevalkit: ok.txt": '), ("my file.txt", '-o "my file.txt": ')):
        refused = evalkit_cli("import", "otel", "prod.jsonl", "-o", output)
        assert refused.code == 2 and shown + "evalkit import writes a YAML set file" in refused.stderr, refused.stderr
    identifier = evalkit_cli("import", "otel", "prod.jsonl", "--identifier", "x\nevalkit: ok")
    assert identifier.code == 2 and '--identifier "x\\x0aevalkit: ok": lowercase segments' in identifier.stderr, identifier.stderr
    assert not (project / "evals").exists()
    (project / "f\nevalkit: ok").write_text("")
    (project / "i\nevalkit: ok").mkdir()
    (project / "i\nevalkit: ok" / "evalkit.toml").write_text("")
    for folder, shown in (("f\nevalkit: ok", 'and "f\\x0aevalkit: ok" is not one'),
                          ("i\nevalkit: ok", 'writes nothing: "i\\x0aevalkit: ok/evalkit.toml" already exists')):  # fmt: skip
        refused = evalkit_cli("init", folder)
        assert refused.code == 2 and shown in refused.stderr and "\nevalkit: ok" not in refused.stderr, refused.stderr


def test_an_import_writes_only_cases_its_set_file_can_hold(evalkit_cli, project: Path) -> None:
    # A history whose tool response answers a call the trace left out, and a user turn of only a
    # zero-width space, were written into the set file (exit 0) that `evalkit validate` and every
    # `evalkit run` then refused; a blank --name likewise.
    with trace_file(project / "prod.jsonl") as tracer:
        model_call(tracer, [text("user", "When can I return a lamp?")], answer("Within 30 days."))
        model_call(tracer, [text("user", "Weather?"), tool_response("c9", "18 C")], answer("It is 18 C."))
        model_call(tracer, [text("user", "\u200b")], answer("Hello?"))
    imported = evalkit_cli("import", "otel", "prod.jsonl")
    assert imported.code == 0, imported.stderr
    assert "imported 1 case: 1 single prompt, 0 conversations" in imported.stdout
    assert "not imported: spans whose one user turn holds no visible text: 1" in imported.stdout
    assert "not imported: spans whose case a set file cannot hold (first: " in imported.stdout
    assert "a tool turn answers a tool call of the assistant turn before it): 1" in imported.stdout
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/prod.yaml"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0, checked.stdout + checked.stderr

    blank = evalkit_cli("import", "otel", "prod.jsonl", "-o", "other/p.yaml", "--name", "   ")
    assert blank.code == 2 and "writes nothing: the set file would not be valid: name: must not be empty" in blank.stderr
    assert not (project / "other").exists()


def test_a_reimport_suggests_no_provider_table_the_configuration_already_has(evalkit_cli, project: Path) -> None:
    """A re-import with --force printed the [providers] table again, though evalkit.toml held it
    already; the hint reads the configuration in force: nothing to add when the table replays the
    answers file, what differs when a table of that name answers otherwise."""
    write_traces(project / "prod.jsonl")
    first = evalkit_cli("import", "otel", "prod.jsonl")
    assert first.code == 0, first.stderr
    snippet = first.stdout.split("provider in evalkit.toml:\n")[1].split("  evalkit validate")[0]
    (project / "evalkit.toml").write_text("\n".join(line.strip() for line in snippet.splitlines()) + "\n")
    again = evalkit_cli("import", "otel", "prod.jsonl", "--force")
    assert again.code == 0, again.stderr
    assert "[providers.prod] in evalkit.toml replays them):\n  evalkit validate evals/prod.yaml\n" in again.stdout, again.stdout
    assert "adapter" not in again.stdout and "[sets]" not in again.stdout

    toml = (project / "evalkit.toml").read_text()
    (project / "evalkit.toml").write_text(toml.replace('path = "evals/prod-answers.jsonl"', 'path = "old/answers.jsonl"'))
    elsewhere = evalkit_cli("import", "otel", "prod.jsonl", "--force")
    assert elsewhere.code == 0, elsewhere.stderr
    config = project / "evalkit.toml"
    assert f'  [providers.prod] in {config} replays "old/answers.jsonl", not "evals/prod-answers.jsonl": give it path = "evals/prod-answers.jsonl"\n' in elsewhere.stdout, elsewhere.stdout
    assert 'adapter = "replay"' not in elsewhere.stdout

    (project / "evalkit.toml").write_text(toml.replace('adapter = "replay"', 'adapter = "openai"'))
    other = evalkit_cli("import", "otel", "prod.jsonl", "--force")
    assert other.code == 0, other.stderr
    assert f'  [providers.prod] in {config} answers with adapter "openai", not from "evals/prod-answers.jsonl": ' in other.stdout, other.stdout


def test_the_provider_path_suggested_is_relative_to_the_configuration(evalkit_cli, project: Path) -> None:
    # A replay provider's path is read relative to the configuration's folder; the hint gave it
    # relative to the working directory, so from a subfolder it named a file that is not there.
    write_traces(project / "prod.jsonl")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["**/*.yaml"]\n')
    (project / "sub").mkdir()
    below = evalkit_cli("import", "otel", "../prod.jsonl", "-o", "p.yaml", cwd=project / "sub")
    assert below.code == 0, below.stderr
    assert '  [providers.prod]\n  adapter = "replay"\n  path = "sub/p-answers.jsonl"\n' in below.stdout, below.stdout


def _raw_trace(path: Path, attributes: dict[str, str]) -> Path:
    """One span in OTLP/JSON written by hand: text the SDK would not encode (JSON escapes of lone surrogates)."""
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "startTimeUnixNano": "1",
            "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()]}  # fmt: skip
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))  # ensure_ascii: "\ud800" stays an escape
    return path


def test_attribute_text_that_is_not_unicode_is_imported_not_an_internal_error(evalkit_cli, project: Path) -> None:
    # A provider name holding a lone surrogate (a JSON "\ud800" escape) ended the import in an
    # internal error when its tag was written; a model name holding one went to the answers file as is.
    _raw_trace(project / "prod.json", {
        "gen_ai.provider.name": "open\ud800ai", "gen_ai.response.model": "gpt-\udfff4o",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Hi\ud83d"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Hello."}]}]),
    })  # fmt: skip
    imported = evalkit_cli("import", "otel", "prod.json")
    assert imported.code == 0, imported.stderr
    assert "internal error" not in imported.stderr and '  model = "gpt-?4o"\n' in imported.stdout, imported.stdout
    written = (project / "evals" / "prod.yaml").read_text(encoding="utf-8")
    assert "provider:open?ai" in written and "prompt: Hi?" in written
    assert json.loads((project / "evals" / "prod-answers.jsonl").read_text(encoding="utf-8"))["model"] == "gpt-?4o"
    assert evalkit_cli("validate", "evals/prod.yaml").code == 0


def test_a_provider_name_with_a_line_break_becomes_a_tag_that_shows_it_escaped(evalkit_cli, project: Path) -> None:
    # A provider name "a b\nc:d" was written as a tag holding the line break, which prints as two
    # tags; tags now refuse such characters, so the import writes the tag with them as escapes.
    _raw_trace(project / "prod.json", {
        "gen_ai.provider.name": "a b\nc:d\u00a0e\u202e",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Hello."}]}]),
    })  # fmt: skip
    imported = evalkit_cli("import", "otel", "prod.json")
    assert imported.code == 0, imported.stderr
    from evalkit.setfiles import load_set_files

    (golden,) = load_set_files([project / "evals" / "prod.yaml"]).prompt_sets
    assert golden.prompts[0].tags[-1] == "provider:a b\\nc:d\\xa0e\\u202e"
    assert evalkit_cli("validate", "evals/prod.yaml").code == 0


def test_messages_that_are_not_json_are_counted_as_such_naming_the_first_span(evalkit_cli, project: Path) -> None:
    # A span whose messages attribute holds broken JSON (cut by an attribute length limit) was
    # counted among "spans without gen_ai.input.messages": the wrong fix (instrument the app) suggested.
    said = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}])
    answered = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Hello."}]}])
    spans = [
        {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": span_id, "startTimeUnixNano": str(n),
         "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in
                        (("gen_ai.input.messages", sent), ("gen_ai.output.messages", answer_text))]}
        for n, (span_id, sent, answer_text) in enumerate([
            ("b7ad6b7169203331", said, answered), ("00f067aa0ba902b7", said[:20], answered),
            ("00f067aa0ba902b8", said[:-1], answered), ("00f067aa0ba902b9", said, answered + "\x1b]"),
        ])
    ]  # fmt: skip
    (project / "prod.json").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    imported = evalkit_cli("import", "otel", "prod.json")
    assert imported.code == 0, imported.stderr
    out = imported.stdout
    assert "not imported: spans whose gen_ai.input.messages is not valid JSON (first: 00f067aa0ba902b7: Unterminated string starting at line 1, column 19): 2\n" in out, out
    assert "not imported: spans whose gen_ai.output.messages is not valid JSON (first: 00f067aa0ba902b9: Extra data at line 1, column 74): 1\n" in out, out
    assert "without gen_ai" not in out and "\x1b" not in out


def test_a_trace_of_tool_conversations_only_says_so(evalkit_cli, project: Path) -> None:
    # The set check came first and refused the set of skipped cases as one with no prompt ("field
    # prompts must hold at least one prompt"), so the reason the import meant to give was never said.
    with trace_file(project / "prod.jsonl") as tracer:
        model_call(tracer, [text("user", "Weather?"), {"role": "assistant", "parts": [tool_call("c1", "get_weather", {})]},
                            tool_response("c1", "18 C")], answer("It is 18 C."))  # fmt: skip
    refused = evalkit_cli("import", "otel", "prod.jsonl")
    assert refused.code == 2, refused.stdout
    assert "every model call in prod.jsonl holds tool calls (kept but skipped until their tools are declared)" in refused.stderr, refused.stderr
    assert not (project / "evals").exists()


def test_the_validate_command_suggested_pastes_as_one_path(evalkit_cli, project: Path) -> None:
    # `-o "my evals/p.yaml"` was suggested as `evalkit validate my evals/p.yaml`: two arguments, neither the file.
    write_traces(project / "prod.jsonl")
    spaced = evalkit_cli("import", "otel", "prod.jsonl", "-o", "my evals/p.yaml")
    assert spaced.code == 0, spaced.stderr
    assert "  evalkit validate 'my evals/p.yaml'\n" in spaced.stdout, spaced.stdout


def test_an_empty_file_path_or_identifier_is_refused_not_read_as_its_default(evalkit_cli, project: Path) -> None:
    # `--answers "$ANSWERS"` or `--identifier "$ID"` with the variable unset wrote the default
    # file or set (exit 0); an empty FILE was read as the working directory ("trace file . cannot be
    # read: Is a directory"); an empty --name was the default name.
    write_traces(project / "prod.jsonl")
    for arguments, said in (
        (("", "-o", "p.yaml"), "FILE is empty; give a path\n"),
        (("prod.jsonl", "-o", "p.yaml", "--answers", ""), "--answers is empty; give a path, or leave the option out"),
        (("prod.jsonl", "-o", "p.yaml", "--identifier", " "), "--identifier is empty; give an identifier, or leave the option out"),
        (("prod.jsonl", "-o", "p.yaml", "--name", ""), "writes nothing: the set file would not be valid: name: must not be empty"),
    ):
        refused = evalkit_cli("import", "otel", *arguments)
        assert refused.code == 2 and said in refused.stderr, (arguments, refused.stderr)
    assert not (project / "p.yaml").exists() and not (project / "p-answers.jsonl").exists()


def test_a_set_file_that_cannot_be_written_leaves_the_answers_file_as_it_was(evalkit_cli, project: Path) -> None:
    # With --force the answers file was replaced first, then writing the set file failed (its
    # folder is a file): exit 2, "nothing written", and the answers file the user had was gone.
    write_traces(project / "prod.jsonl")
    (project / "mine.jsonl").write_text('{"id": "a", "text": "precious"}\n')
    (project / "afile").write_text("x")
    refused = evalkit_cli("import", "otel", "prod.jsonl", "-o", "afile/p.yaml", "--answers", "mine.jsonl", "--force")
    assert refused.code == 2 and "cannot write" in refused.stderr and "Not a directory" in refused.stderr, refused.stderr
    assert (project / "mine.jsonl").read_text() == '{"id": "a", "text": "precious"}\n'
    assert sorted(p.name for p in project.iterdir()) == ["afile", "mine.jsonl", "prod.jsonl"]


def test_the_next_steps_spell_tables_as_a_pyproject_configuration_holds_them(evalkit_cli, project: Path) -> None:
    # With [tool.evalkit] in pyproject.toml as the configuration, the hint printed [sets] and
    # [providers.prod]: pasted there, they configure nothing evalkit reads.
    write_traces(project / "prod.jsonl")
    (project / "pyproject.toml").write_text('[project]\nname = "shop"\n\n[tool.evalkit]\nprivacy = "metadata"\n')
    imported = evalkit_cli("import", "otel", "prod.jsonl")
    assert imported.code == 0, imported.stderr
    snippet = imported.stdout.split("provider in pyproject.toml:\n")[1].split("  evalkit validate")[0]
    assert snippet.startswith('  [tool.evalkit.sets]\n  paths = ["evals/prod.yaml"]\n  [tool.evalkit.providers.prod]\n'), snippet
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n".join(line.strip() for line in snippet.splitlines()) + "\n")
    again = evalkit_cli("import", "otel", "prod.jsonl", "--force")
    assert "([tool.evalkit.providers.prod] in pyproject.toml replays them):" in again.stdout, again.stdout
    run = evalkit_cli("run", "traces.prod", "--provider", "prod", "--json")
    assert run.code == 0, run.stderr


def test_a_link_at_the_output_is_replaced_with_force_never_followed(evalkit_cli, project: Path) -> None:
    # A dangling link (`p.yaml -> gone/p.yaml`) was followed: the error named where it led, or,
    # its folder there, the set file was written outside the workspace. The link is the output.
    write_traces(project / "prod.jsonl")
    (project / "p.yaml").symlink_to("gone/p.yaml")
    refused = evalkit_cli("import", "otel", "prod.jsonl", "-o", "p.yaml")
    assert refused.code == 2 and "p.yaml already exists" in refused.stderr, refused.stderr
    replaced = evalkit_cli("import", "otel", "prod.jsonl", "-o", "p.yaml", "--force")
    assert replaced.code == 0, replaced.stderr
    assert not (project / "p.yaml").is_symlink() and "prompt" in (project / "p.yaml").read_text()
    assert not (project / "gone").exists()


def test_a_file_name_or_name_that_is_not_utf8_is_written_with_a_question_mark(evalkit_cli, project: Path) -> None:
    # Undecodable bytes in the trace file's name (the default --name and the description) or in
    # --name reach Python as lone surrogates: writing the set file ended in an internal error.
    write_traces(project / "caf\udcff.jsonl")
    imported = evalkit_cli("import", "otel", "caf\udcff.jsonl", "-o", "p.yaml")
    assert imported.code == 0, imported.stderr
    written = (project / "p.yaml").read_text(encoding="utf-8")
    assert "name: Traces from caf?.jsonl\n" in written and "recorded in caf?.jsonl," in written
    named = evalkit_cli("import", "otel", "caf\udcff.jsonl", "-o", "q.yaml", "--name", "Caf\udcff")
    assert named.code == 0, named.stderr
    assert "name: Caf?\n" in (project / "q.yaml").read_text(encoding="utf-8")
    assert evalkit_cli("validate", "p.yaml").code == 0 and evalkit_cli("validate", "q.yaml").code == 0


def test_an_export_request_with_a_key_written_twice_is_not_read_as_protojson_refuses_it(evalkit_cli, project: Path) -> None:
    """OTLP/JSON is protobuf's JSON mapping, whose parsers refuse a field written twice (Go's
    protojson: "duplicate field"); the importer kept the last value unsaid. Such a request is now a
    line that is not read, counted and named with its reason (it was said to hold "no OTLP/JSON export
    request", and a user looked for a request that was there), and the file's other requests are imported."""
    lines = write_traces(project / "prod.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"traceId":', '"traceId":"00000000000000000000000000000000","traceId":', 1)
    (project / "prod.jsonl").write_text("".join(lines))
    imported = evalkit_cli("import", "otel", "prod.jsonl", "--json")
    assert imported.code == 0, imported.stderr
    assert imported.json()["unreadable_lines"] == [2] and imported.json()["cases"] == 2, imported.json()
    reason = 'key "traceId" appears more than once, which OTLP/JSON refuses'
    assert imported.json()["unreadable_reasons"] == {"2": reason}
    said = evalkit_cli("import", "otel", "prod.jsonl", "-o", "b.yaml").stdout
    assert f"not read: line 2: {reason}\n" in said and "held no OTLP/JSON export request" not in said, said

    request = json.loads(lines[0])  # one request as a whole, pretty-printed document: not split into its lines
    document = json.dumps(request, indent=2).replace('"traceId": ', '"traceId": "00000000000000000000000000000000",\n "traceId": ', 1)
    (project / "one.json").write_text(document)
    whole = evalkit_cli("import", "otel", "one.json", "-o", "c.yaml")
    assert whole.code == 2
    assert f"holds no model call to import: no span at all (line 1: {reason})" in whole.stderr, whole.stderr


def test_a_set_file_a_full_disk_cannot_take_is_exit_3_and_leaves_nothing(evalkit_cli, project: Path) -> None:
    # A full disk is the environment's fault (exit 3, as `evalkit --help` says of output that cannot
    # be written); the import said it as bad usage, exit 2.
    from tests.support.tmpfs import full_disk

    write_traces(project / "prod.jsonl")
    with full_disk(project / "disk") as disk:
        result = evalkit_cli("import", "otel", "prod.jsonl", "-o", "disk/prod.yaml")
        assert result.code == 3, result.stderr
        assert result.stderr.startswith("evalkit: error: evalkit import cannot write disk/") and result.stderr.endswith(
            ": No space left on device\n"
        ), result.stderr
        assert sorted(p.name for p in disk.iterdir()) == ["filler"], "nothing half-written is left"
