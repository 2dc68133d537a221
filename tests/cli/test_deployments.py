"""Deployments name their retriever; `evalkit list deployments`; a project deployment merges with a provider's of the same name."""

from __future__ import annotations

from pathlib import Path

from evalkit.wording import quoted

from tests.support.unrunnable import assert_listing_marks, assert_validate_refuses, unfound_plugins


def write(project: Path, text: str) -> None:
    (project / "evalkit.toml").write_text(text, encoding="utf-8")


def test_list_deployments_shows_retriever_and_origin_and_merges_per_retriever(evalkit_cli, project) -> None:
    # The stdlib set's provider ships "demo" (evalkit.lexical over its packaged corpus); the
    # project defines "demo" too, for another retriever: both stay, the project names what runs.
    write(
        project,
        '[deployments.demo]\nretriever = "acme.vector"\n[deployments.demo.retrievers."acme.vector"]\nurl = "http://x"\n\n'
        '[deployments.prod]\nretriever = "evalkit.lexical"\n\n'
        '[deployments.multi.retrievers."a.one"]\n[deployments.multi.retrievers."a.two"]\n',
    )
    listed = evalkit_cli("list", "deployments", "--json")
    # "acme.vector" is installed nowhere here: the deployment that runs it cannot run (exit 2); the
    # one naming none is no problem (RETRIEVER is given when it runs)
    assert listed.code == 2, listed.stderr
    assert listed.json()["problems"] == ['deployment "demo" runs retriever "acme.vector", which is no installed retriever.']
    rows = {row["name"]: row for row in listed.json()["deployments"]}
    demo = rows["demo"]
    assert demo["retriever"] == "acme.vector"
    assert set(demo["retrievers"]) == {"acme.vector", "evalkit.lexical"}
    assert (
        demo["retrievers"]["evalkit.lexical"].startswith("provider ")
        and "evalkit-set-stdlib" in demo["retrievers"]["evalkit.lexical"]
    )
    assert demo["retrievers"]["acme.vector"].startswith("configuration ")
    assert len(demo["defined_in"]) == 2
    assert rows["prod"]["retriever"] == "evalkit.lexical" and rows["prod"]["retrievers"] == {}
    assert rows["multi"]["retriever"] is None
    table = evalkit_cli("list", "deployments")
    assert table.code == 2 and "(none named: give RETRIEVER)" in table.stdout and "acme.vector" in table.stdout


def test_a_merged_deployment_still_runs_the_providers_retriever_when_named(evalkit_cli, project, tmp_path) -> None:
    write(
        project,
        '[deployments.demo]\nretriever = "acme.vector"\n[deployments.demo.retrievers."acme.vector"]\nurl = "http://x"\n',
    )
    env = {"EVALKIT_CACHE_DIR": str(tmp_path / "cache")}
    # the explicit retriever wins, with the options the provider ships for it
    explicit = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo", env=env)
    assert explicit.code == 0, explicit.stderr
    assert "Deployment:     demo (provider" in explicit.stdout
    # the deployment's own retriever is not installed: refused before anything runs
    named = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "demo", env=env)
    assert named.code == 2 and 'Unknown retriever "acme.vector"' in named.stderr


def test_a_deployment_table_with_an_unknown_key_is_refused(evalkit_cli, project) -> None:
    write(project, '[deployments.prod]\nretreiver = "evalkit.lexical"\n')
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "prod")
    assert result.code == 2 and "unknown key: retreiver" in result.stderr


def test_a_retriever_run_with_no_deployment_says_how_to_give_its_required_option(evalkit_cli, project) -> None:
    # The README's command without `--deployment demo`: the message says how to choose a
    # deployment and which table to write, not "set corpus = … in no deployment".
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical")
    assert result.code == 2
    assert 'needs option "corpus"' in result.stderr
    assert "in no deployment" not in result.stderr
    assert "--deployment NAME (`evalkit list deployments` lists them)" in result.stderr
    assert '[deployments.NAME.retrievers."evalkit.lexical"]' in result.stderr


def test_a_place_holding_a_plus_is_one_place_a_deployment_was_defined_in(evalkit_cli, project) -> None:
    """The places a merged deployment came from were joined by " + " and split there again: a
    configuration in a folder "a + b" (or a provider whose name holds " + ") was listed as two
    places, cut inside its quotes. They are kept apart as a tuple now."""
    folder = project / "a + b"
    folder.mkdir()
    write(
        folder,
        '[deployments.demo]\nretriever = "acme.vector"\n[deployments.demo.retrievers."acme.vector"]\nurl = "http://x"\n',
    )
    listed = evalkit_cli("list", "deployments", "--json", cwd=folder)
    assert listed.json()["problems"] == ['deployment "demo" runs retriever "acme.vector", which is no installed retriever.']
    demo = next(row for row in listed.json()["deployments"] if row["name"] == "demo")
    configured, provided = demo["defined_in"]
    assert configured == f'configuration "{folder / "evalkit.toml"}"'
    assert provided.startswith("provider ") and "evalkit-set-stdlib" in provided


def test_a_deployment_given_one_source_string_keeps_it_whole() -> None:
    """A caller (or a document of an earlier version) giving ``source`` as one string: one place,
    never split at " + "; several places are given as a sequence."""
    from evalkit.retrieval.deployments import Deployment

    one = Deployment("demo", {}, 'configuration "a + b/evalkit.toml"')
    assert one.sources == ('configuration "a + b/evalkit.toml"',) and one.source == 'configuration "a + b/evalkit.toml"'
    assert Deployment("demo", {}, source=("configuration x", "provider y")).source == "configuration x + provider y"


def test_the_deployments_own_retriever_written_unquoted_is_refused_with_the_hint(evalkit_cli, project) -> None:
    # `retriever = "evalkit.lexical"` beside [deployments.prod.retrievers.evalkit.lexical] (the id
    # unquoted: nested tables) ran the retriever with no options and said `needs option "corpus"
    # … set corpus = … in deployment "prod"`, though corpus was set; the hint the docs promise
    # came only when the retriever was named on the command line.
    write(
        project,
        '[deployments.prod]\nretriever = "evalkit.lexical"\n[deployments.prod.retrievers.evalkit.lexical]\ncorpus = "c"\n',
    )
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "prod")
    assert result.code == 2
    assert 'deployment "prod" has no options for retriever "evalkit.lexical" (it configures: evalkit)' in result.stderr
    assert "[deployments.prod.retrievers.evalkit.lexical] is read as nested tables" in result.stderr
    assert 'quote an id with dots in the table name: [deployments.prod.retrievers."evalkit.lexical"]' in result.stderr
    assert 'needs option "corpus"' not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing was run or stored"


def test_a_deployments_only_retriever_written_unquoted_is_refused_with_the_hint(evalkit_cli, project) -> None:
    # [deployments.prod.retrievers.evalkit.lexical] alone, no `retriever` key (the docs' own
    # form): TOML reads a retriever "evalkit" holding a table "lexical", the deployment's only
    # retriever was "evalkit", and the run said `Unknown retriever "evalkit". Did you mean
    # "evalkit.lexical"?` — not the quoting hint the docs promise for an unquoted id.
    write(project, '[deployments.prod.retrievers.evalkit.lexical]\ncorpus = "c"\n')
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "prod")
    assert result.code == 2
    assert 'deployment "prod" runs retriever "evalkit", which is no installed retriever' in result.stderr
    assert "[deployments.prod.retrievers.evalkit.lexical] is read as nested tables" in result.stderr
    assert 'quote an id with dots in the table name: [deployments.prod.retrievers."evalkit.lexical"]' in result.stderr
    assert not (project / ".evalkit").exists(), "nothing was run or stored"
    # a retriever id that no installed retriever's id begins with stays an unknown retriever
    write(project, '[deployments.prod.retrievers.nope.thing]\nx = 1\n')
    unknown = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "prod")
    assert unknown.code == 2 and 'Unknown retriever "nope"' in unknown.stderr


def test_an_unquoted_table_beside_another_retriever_is_said_as_options_not_as_what_runs(evalkit_cli, project) -> None:
    # `retriever = "other"` beside [deployments.p.retrievers.evalkit.lexical]: `list deployments`
    # refused it as `deployment "p" runs retriever "evalkit"`, the run's words, though "p" runs
    # "other"; the table only holds options for "evalkit". The run says the unknown retriever it runs.
    write(project, '[deployments.p]\nretriever = "other"\n[deployments.p.retrievers.evalkit.lexical]\ncorpus = "c"\n')
    listed = evalkit_cli("list", "deployments")
    assert listed.code == 2, listed.stderr
    assert 'deployment "p" has options for retriever "evalkit", which is no installed retriever' in listed.stderr
    assert 'runs retriever "evalkit"' not in listed.stderr, listed.stderr
    assert 'deployment "p" runs retriever "other", which is no installed retriever' in listed.stderr
    assert 'quote an id with dots in the table name: [deployments.p.retrievers."evalkit.lexical"]' in listed.stderr
    ran = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "p")
    assert ran.code == 2 and 'Unknown retriever "other"' in ran.stderr, ran.stderr
    # the deployment's own retriever, read from the table, still "runs"
    write(project, '[deployments.p.retrievers.evalkit.lexical]\ncorpus = "c"\n')
    alone = evalkit_cli("list", "deployments")
    assert alone.code == 2 and 'deployment "p" runs retriever "evalkit", which is no installed' in alone.stderr


def test_a_deployments_timeout_written_as_a_toml_boolean_is_said_in_tomls_words(evalkit_cli, project) -> None:
    # `timeout = true` was refused "…, got True": Python's word, nothing the file holds
    write(project, '[deployments.prod.retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\ntimeout = true\n')
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "--deployment", "prod")
    assert result.code == 2
    assert 'deployment "prod", retriever "evalkit.lexical": timeout must be a duration' in result.stderr
    assert result.stderr.rstrip().endswith("got true (a boolean)") and "True" not in result.stderr, result.stderr


def test_list_deployments_shows_an_unquoted_dotted_retriever_table_as_written(evalkit_cli, project) -> None:
    """`[deployments.a.retrievers.outr.x]` (or the dotted key `retrievers.outr.x.k = 1`) was listed
    as a deployment running retriever `outr` with options for `outr`: what TOML made of it, with
    nothing of what was written. The table shows the name written and how to quote it; one an
    installed retriever's id was meant as refuses the configuration (exit 2), as running it does."""
    for text in ('[deployments.a.retrievers.outr.x]\nk = 1\n', '[deployments.a]\nretrievers.outr.x.k = 1\n'):
        write(project, text)
        listed = evalkit_cli("list", "deployments", "--json")
        # no installed retriever is "outr" (nor was meant as "outr.x"): one problem, its retriever's
        assert listed.json()["problems"] == ['deployment "a" runs retriever "outr", which is no installed retriever.']
        row = next(row for row in listed.json()["deployments"] if row["name"] == "a")
        assert row["read_as_tables"] == {"outr": ["outr.x"]}
        table = evalkit_cli("list", "deployments", env={"COLUMNS": "400"})
        shown = " ".join(table.stdout.split())
        assert 'written outr.x: TOML reads an unquoted dotted name as nested tables; quote an id with dots: "outr.x"' in shown
    write(project, '[deployments.prod.retrievers.evalkit.lexical]\ncorpus = "c"\n')
    refused = evalkit_cli("list", "deployments")
    assert refused.code == 2
    assert "[deployments.prod.retrievers.evalkit.lexical] is read as nested tables" in refused.stderr
    assert 'quote an id with dots in the table name: [deployments.prod.retrievers."evalkit.lexical"]' in refused.stderr
    # a quoted id, and an installed retriever's option table, are shown as they are
    write(project, '[deployments.ok.retrievers."evalkit.lexical"]\ncorpus = "c"\n[deployments.ok.retrievers."evalkit.lexical".extra]\nk = 1\n')
    fine = evalkit_cli("list", "deployments", "--json")
    assert fine.code == 0 and all(row["read_as_tables"] == {} for row in fine.json()["deployments"])


#: Deployments of the test distribution evalkit-unfound-plugins' retrievers: two whose module is
#: not found, a misspelt id, and one found in a package that raises (and leaves a marker) at import.
UNRUNNABLE = (
    '[deployments.prod]\nretriever = "ghost"\n\n'
    '[deployments.typo]\nretriever = "unfound.namespacd"\n\n'
    '[deployments.opts.retrievers."unfound.namespace_missing"]\nx = 1\n\n'
    '[deployments.fine]\nretriever = "unfound.imported"\n'
)
#: What `evalkit list deployments` and `evalkit validate` say of them.
CANNOT_RUN = {
    "opts": 'deployment "opts" runs retriever "unfound.namespace_missing" (evalkit-unfound-plugins 0.1.0), which cannot '
    'be loaded: module "evalkit_unfound_ns.absent" not found',
    "prod": 'deployment "prod" runs retriever "ghost" (evalkit-unfound-plugins 0.1.0), which cannot be loaded: '
    'module "no_such_module.sub" not found (there is no "no_such_module")',
    "typo": 'deployment "typo" runs retriever "unfound.namespacd", which is no installed retriever. Did you mean "unfound.namespaced"?',
}


def test_list_deployments_says_which_deployments_cannot_run_without_importing_a_retriever(
    evalkit_cli, project, plugin_dists, tmp_path
) -> None:
    # `retriever = "ghost"` (an entry point whose module is not installed) was listed `prod │ ghost`,
    # exit 0, where `evalkit list` marks that entry point and exits 2; so was a misspelt id.
    write(project, UNRUNNABLE)
    env, marker = unfound_plugins(plugin_dists, tmp_path)
    assert_listing_marks(evalkit_cli, "deployments", env, CANNOT_RUN, "fine")
    document = evalkit_cli("list", "deployments", "--json", env=env)
    assert document.code == 2
    rows = {row["name"]: row["problems"] for row in document.json()["deployments"]}
    assert rows == {"demo": [], "fine": [], **{name: [reason] for name, reason in CANNOT_RUN.items()}}
    assert document.json()["problems"] == [CANNOT_RUN[name] for name in ("opts", "prod", "typo")]
    assert not marker.exists(), "a retriever's module was imported"
    # switched off, the retriever a deployment runs is none it can run, and the listing says why
    off = evalkit_cli("list", "deployments", env={**env, "EVALKIT_DISABLE_PLUGINS": "unfound.imported"})
    assert off.code == 2
    assert (
        'error: deployment "fine" runs retriever "unfound.imported": EVALKIT_DISABLE_PLUGINS switches it off '
        '("unfound.imported" of evalkit-unfound-plugins 0.1.0); take it out of EVALKIT_DISABLE_PLUGINS to use it.'
    ) in off.stderr
    assert not marker.exists()


def test_validate_says_which_deployments_cannot_run_as_list_deployments_does(evalkit_cli, project, plugin_dists, tmp_path) -> None:
    # `evalkit validate` checked set files and installed sets and said nothing of deployments: a
    # configuration whose deployment could never run passed the pre-commit check.
    write(project, UNRUNNABLE)
    env, marker = unfound_plugins(plugin_dists, tmp_path)
    assert_validate_refuses(evalkit_cli, env, "deployment", CANNOT_RUN, 'deployment "fine" (runs retriever "unfound.imported")')
    assert 'ok  deployment "demo" (runs retriever "evalkit.lexical")' in evalkit_cli("validate", env=env).stdout
    assert not marker.exists(), "a retriever's module was imported"
    # a deployment that can run is one line more of what was checked
    write(project, '[deployments.prod]\nretriever = "evalkit.lexical"\n')
    fine = evalkit_cli("validate")
    assert fine.code == 0, fine.stderr
    assert 'ok  deployment "prod" (runs retriever "evalkit.lexical")' in fine.stdout


def test_validate_still_checks_the_configured_deployments_when_a_provider_cannot_say_its_own(
    evalkit_cli, project, monkeypatch
) -> None:
    # a question-set provider whose default_deployments() raises is one problem; the
    # configuration's deployments are checked all the same
    import evalkit_set_stdlib

    def broken(self):
        raise RuntimeError("no deployments today")

    monkeypatch.setattr(evalkit_set_stdlib.StdlibQuestionSets, "default_deployments", broken)
    write(project, '[deployments.prod]\nretriever = "evalkit.lexicl"\n')
    document = evalkit_cli("validate", "--json")
    assert document.code == 2
    found = [problem for problem in document.json()["problems"] if "deployment" in problem]
    assert [problem["deployment"] for problem in found] == [None, "prod"], found
    assert "raised RuntimeError in default_deployments(): no deployments today" in found[0]["reason"]
    assert found[1]["reason"] == 'deployment "prod" runs retriever "evalkit.lexicl", which is no installed retriever. Did you mean "evalkit.lexical"?'


def test_validate_refuses_a_provider_deployment_list_deployments_marks_unusable(evalkit_cli, project, plugin_dists) -> None:
    # a question-set provider's deployment "stag" + a combining accent (not NFC): `--deployment` is
    # read in NFC and never chooses it, and `list deployments` marks it unusable, but `evalkit
    # validate` said `ok  deployment "staǵing" (runs retriever "evalkit.lexical")`, exit 0 for it
    env = {"PYTHONPATH": plugin_dists("evalkit-outsider-plugins"), "OUTSIDER_UNUSABLE_NAMES": "1"}
    name = "stag\u0301ing"
    listed = {row["name"]: row for row in evalkit_cli("list", "deployments", "--json", env=env).json()["deployments"]}
    words = listed[name]["unusable"]
    assert words.startswith("'stag\\u0301ing' is not in Unicode normal form NFC"), words
    reason = f"unusable deployment: {words} (--deployment can never choose it)"
    checked = evalkit_cli("validate", env=env)
    assert checked.code == 2, checked.stdout + checked.stderr
    assert reason in checked.stderr.splitlines(), checked.stderr
    assert f"deployment {quoted(name)}" not in checked.stdout and 'ok  deployment "production"' in checked.stdout, checked.stdout
    document = evalkit_cli("validate", "--json", env=env).json()
    found = [problem for problem in document["problems"] if "deployment" in problem]
    assert found == [{"deployment": name, "reason": reason}], found
