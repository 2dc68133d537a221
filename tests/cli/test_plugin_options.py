"""Plugins declare their options as attrs classes; evalkit checks the configuration against them
before building anything, and lists them."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import attrs
import pytest
from evalkit import registry
from evalkit.options import declared_options, receives_options


def test_a_missing_required_option_names_plugin_option_and_table(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\nmodel = "v1"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app")
    assert result.code == 2 and result.stdout == ""
    assert 'generator "replay" (evalkit-golden' in result.stderr
    assert 'needs option "path"' in result.stderr
    assert f"[providers.my-app] of {project / 'evalkit.toml'}" in result.stderr
    assert "__init__" not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"


def test_an_unknown_option_is_refused_with_a_suggestion(evalkit_cli, project: Path) -> None:
    (project / "answers.jsonl").write_text("")
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "replay"\npaht = "answers.jsonl"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "my-app")
    assert result.code == 2
    assert 'has no option "paht"' in result.stderr and 'Did you mean "path"?' in result.stderr
    assert "Its options: path, model." in result.stderr


def test_a_value_of_the_wrong_type_names_the_option(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(
        '[providers.gpt]\nadapter = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ntimeout = "fast"\napi_key = "sk-x"\n'
    )
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2
    assert 'has no option "api_key"' in result.stderr and "api_key_env" in result.stderr
    assert "sk-x" not in result.stderr


def test_a_wrong_type_alone_is_reported_with_the_value(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.gpt]\nadapter = "openai"\nmodel = "m"\nconcurrency = "many"\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2
    assert 'wrong value for option "concurrency" in [providers.gpt]' in result.stderr and "'many'" in result.stderr


def test_a_value_of_the_wrong_type_says_what_the_option_must_be_once(evalkit_cli, project: Path) -> None:
    """It read `invalid type (expected a whole number, got str) (got 'many')`: cattrs' words, two
    "got"s; now as a validator says it."""
    (project / "evalkit.toml").write_text('[providers.gpt]\nadapter = "openai"\nmodel = "m"\nconcurrency = "many"\ntimeout = true\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2 and "invalid type" not in result.stderr
    assert """option "concurrency" in [providers.gpt] of""" in result.stderr
    assert "must be a whole number, not str (got 'many')." in result.stderr
    # TOML's `true`, in TOML's words: Python's `True` is nothing the file holds
    assert "must be a number (got true (a boolean))." in result.stderr and "True" not in result.stderr


def test_a_retriever_without_its_required_option_names_the_deployment_table(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[deployments.demo.retrievers."evalkit.lexical"]\ntitle_weight = 2.0\n')
    result = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert result.code == 2
    assert 'retriever "evalkit.lexical"' in result.stderr and 'needs option "corpus"' in result.stderr
    assert '[deployments.demo.retrievers."evalkit.lexical"]' in result.stderr
    unknown = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "dmeo")
    assert unknown.code == 2 and 'Did you mean "demo"?' in unknown.stderr


def test_list_plugins_options_shows_each_declared_option(evalkit_cli) -> None:
    text = evalkit_cli("list", "plugins", "--options")
    assert text.code == 0, text.stderr
    assert "api_key_env: str | None, default none, must be a string — the NAME of the environment variable holding the API key" in text.stdout
    assert "corpus: str, required" in text.stdout
    assert "judge: str | None, default none, must be a non-empty string — the configured provider instance that decides rubric checks" in text.stdout  # deterministic
    document = evalkit_cli("list", "--options", "--json").json()
    replay = next(row for row in document if row["name"] == "replay")
    assert replay["options"][0] == {
        "name": "path", "type": "str", "required": True, "default": None, "allowed": replay["options"][0]["allowed"],
        "help": replay["options"][0]["help"],
    }
    plain = evalkit_cli("list", "--json").json()
    assert "options" not in plain[0], "plain `evalkit list` loads no plugin"
    refused = evalkit_cli("list", "sets", "--options")
    assert refused.code == 2 and "--options applies to `evalkit list plugins`" in refused.stderr


CHOOSY = """\
import attrs
from evalkit.options import number, option


class Grader:
    @attrs.frozen
    class Options:
        mode: str = option(default="fast", validator=attrs.validators.in_(["fast", "careful", "odd\\nline"]), help="how")
        tries: int = option(default=3, validator=[attrs.validators.ge(1), attrs.validators.le(10)], help="tries")
        level: int | None = option(default=None, validator=attrs.validators.optional(attrs.validators.in_({3, 1, 2})), help="")
        ratio: float = option(default=0.5, validator=number(above=0, at_most=1), help="")
        note: str = option(default="", help="")

    def __init__(self, options: Options) -> None:
        self.options = options
"""


def test_list_plugins_options_shows_what_each_options_validator_allows(evalkit_cli, tmp_path: Path) -> None:
    """`evalkit list plugins --options` showed an option's name, type, default and help, not what
    its validator allows (attrs' in_, ge/le, a list of them, optional; evalkit's number()): a user
    learned the allowed values only from a refusal. Each is said as the refusal says it, a
    plugin's text quoted with its escapes; an option whose validator says nothing shows nothing."""
    from tests.support.distributions import write_distribution

    site = write_distribution(tmp_path / "site", "acme-choosy", "1.0", {"evalkit.graders": {"acme.choosy": "acme_choosy:Grader"}},
                              {"acme_choosy.py": CHOOSY})  # fmt: skip
    listed = evalkit_cli("list", "plugins", "--options", env={"PYTHONPATH": str(site)})
    assert listed.code == 0, listed.stderr
    lines = listed.stdout.split("acme.choosy", 1)[1].splitlines()[1:6]
    assert [line.strip() for line in lines] == [
        'mode: str, default "fast", must be "fast", "careful" or "odd\\x0aline" — how',
        "tries: int, default 3, must be at least 1 and at most 10 — tries",
        "level: int | None, default none, must be 1, 2 or 3",
        "ratio: float, default 0.5, must be a number above 0 and at most 1",
        'note: str, default ""',
    ]
    document = evalkit_cli("list", "--options", "--json", env={"PYTHONPATH": str(site)}).json()
    (row,) = [row for row in document if row["name"] == "acme.choosy"]
    assert [option["allowed"] for option in row["options"]] == [
        'must be "fast", "careful" or "odd\\x0aline"', "must be at least 1 and at most 10", "must be 1, 2 or 3",
        "must be a number above 0 and at most 1", None,
    ]


BUILT_IN = [
    r for r in registry.scan()
    if r.distribution == "evalkit-golden" and r.group in ("evalkit.generators", "evalkit.retrievers", "evalkit.graders")
]


@pytest.mark.parametrize("record", BUILT_IN, ids=lambda r: f"{r.group}:{r.name}")
def test_every_built_in_plugin_declares_its_options_once_and_receives_them_as_one_object(record: registry.PluginRecord) -> None:
    factory = registry.load(record)
    options = declared_options(factory)
    assert options is not None, f"{record.describe()} declares no Options"
    assert receives_options(factory) == "options", f"{record.describe()} must take its Options object, not repeat its options"
    parameters = [p for p in inspect.signature(factory).parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert [p.name for p in parameters] == ["options"], "no option is repeated in the constructor"
    assert all(field.metadata.get("help") for field in attrs.fields(options)), "every option has its line of help"
    assert not hasattr(factory, "path_options"), "path options are marked on their fields (option(..., path=True))"


def test_set_providers_receive_their_options_from_config(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-options-sets")}
    (project / "prompts").mkdir()
    (project / "prompts" / "hello.txt").write_text("Hello there\n")
    (project / "evalkit.toml").write_text(
        '[set_providers."optsets.folder"]\nfolder = "prompts"\nprefix = "mine"\n\n'
        '[opt_questions.capitals]\nquestion = "capital of France?"\nrelevant = ["doc-paris"]\n'
    )
    (project / "sub").mkdir()
    listed = evalkit_cli("list", "sets", "--json", env=env, cwd=project / "sub")
    assert listed.code == 0, listed.stderr
    assert "mine.folder" in [row["identifier"] for row in listed.json()["sets"]]
    run = evalkit_cli("run", "mine.folder", "--json", env=env, cwd=project / "sub")
    assert run.code == 0 and run.json()["pass_rate"] == 1.0
    questions = evalkit_cli("list", "questions", "--json", env=env).json()
    assert "optsets.capitals" in [row["identifier"] for row in questions["sets"]]


def test_a_set_provider_with_a_missing_or_wrong_option_is_named(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-options-sets")}
    (project / "evalkit.toml").write_text('[set_providers."optsets.folder"]\nprefx = "x"\n\n[opt_questions.bad]\nquestion = 3\nrelevant = []\n')
    run = evalkit_cli("run", "optsets.folder", env=env)
    assert run.code == 2
    assert "golden prompt set provider \"optsets.folder\" (evalkit-options-sets 1.2.0): its options are wrong" in run.stderr
    assert 'needs option "folder"' in run.stderr and 'Did you mean "prefix"?' in run.stderr
    assert '[set_providers."optsets.folder"]' in run.stderr
    questions = evalkit_cli("list", "questions", env=env)
    assert questions.code == 2
    assert '"optsets.questions" (evalkit-options-sets 1.2.0): it has a wrong value for option "question" in [opt_questions.bad]' in questions.stderr
    assert evalkit_cli("run", "evalkit.smoke", env=env).code == 0, "other providers' sets still run"


def test_a_plugin_that_declares_nothing_still_gets_its_table(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-retrieval-fixtures")}
    listed = evalkit_cli("list", "--options", "--json", env=env).json()
    undeclared = [row for row in listed if row["distribution"] == "evalkit-retrieval-fixtures" and row["options"] is None]
    assert undeclared, json.dumps(listed)[:400]


def test_a_value_a_validator_refuses_names_the_plugin_the_option_the_table_and_the_range(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.gpt]\nadapter = "openai"\nmodel = "m"\ntimeout = 1e-320\nmax_attempts = 0\n')
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2 and result.stdout == ""
    assert 'generator "openai" (evalkit-golden' in result.stderr
    assert 'wrong value for option "timeout" in [providers.gpt]' in result.stderr and "timeout must be a number of at least 0.001 (got 1e-320)" in result.stderr
    assert "max_attempts must be a whole number of at least 1 (got 0)" in result.stderr, "every problem at once"
    assert not (project / ".evalkit").exists(), "nothing stored"


def test_numbers_no_float_or_store_holds_are_refused_before_anything_is_asked(evalkit_cli, project: Path, chat_server) -> None:
    # A per-minute limit of 10**400 errored the first case with OverflowError (the pacer divides
    # by it); a timeout of 10**400 was "unknown error (int too large to convert to float)".
    huge = "1" + "0" * 400
    (project / "evalkit.toml").write_text(
        f'[providers.gpt]\nadapter = "openai"\nbase_url = "{chat_server.base_url}"\nmodel = "m"\napi_key_env = ""\n'
        f"max_tokens_per_minute = {huge}\ntimeout = {huge}\nmax_attempts = {2**63}\n"
    )
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2 and result.stdout == "", result.stdout
    assert "max_tokens_per_minute must be a whole number of at least 1, at most 2**63 - 1 (9,223,372,036,854,775,807)" in result.stderr
    assert "max_attempts must be a whole number of at least 1, at most 2**63 - 1" in result.stderr
    assert 'option "timeout" in [providers.gpt] of ' in result.stderr and ": a number past what a float holds (about 1.8e308) (got 1000" in result.stderr
    assert "unknown error" not in result.stderr and "OverflowError" not in result.stderr
    assert chat_server.request_count == 0 and not (project / ".evalkit").exists(), "nothing asked, nothing stored"


def test_a_secret_option_of_the_wrong_shape_is_never_echoed(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text(
        '[providers.gpt]\nadapter = "openai"\nmodel = "m"\nextra_headers = { "X-Team" = "hdr-secret-5150", "X-Count" = 3 }\n'
    )
    result = evalkit_cli("run", "evalkit.smoke", "--provider", "gpt")
    assert result.code == 2
    assert 'wrong value for option "extra_headers' in result.stderr and "value not shown" in result.stderr
    assert "hdr-secret-5150" not in result.stderr + result.stdout


def test_a_plugin_written_to_the_keyword_contract_still_gets_keyword_arguments(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-options-sets")}
    (project / "prompts").mkdir()
    (project / "evalkit.toml").write_text('[set_providers."optsets.greeting"]\ngreeting = "Bonjour"\n\n[set_providers."optsets.folder"]\nfolder = "prompts"\n')
    listed = evalkit_cli("list", "sets", "--json", env=env)
    assert listed.code == 0, listed.stderr
    assert {"identifier": "optsets.greeting", "name": "Say Bonjour"}.items() <= next(
        row for row in listed.json()["sets"] if row["identifier"] == "optsets.greeting"
    ).items()
    assert evalkit_cli("run", "optsets.greeting", env=env).code == 0
    (project / "evalkit.toml").write_text('[set_providers."optsets.greeting"]\ngreeting = 5\n')
    wrong = evalkit_cli("run", "optsets.greeting", env=env)
    assert wrong.code == 2 and 'it has a wrong value for option "greeting" in [set_providers."optsets.greeting"]' in wrong.stderr


# -- a declaration no configuration can satisfy is the plugin's defect -----------------------------------

MISDECLARED = "(evalkit-misdeclared-options 0.2.0)"
NOT_ATTRS = "declares Options = PlainOptions, which is not an attrs class"
BAD_DEFAULT = 'declares a default for option "count" that its own validator refuses: count must be a whole number of at least 1 (got 0)'


def test_an_options_class_that_is_not_attrs_is_named_as_the_plugins_defect(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-misdeclared-options")}
    (project / "evalkit.toml").write_text('[providers.plain]\nadapter = "misdeclared.plain_options"\n')
    generator = evalkit_cli("run", "evalkit.smoke", "--provider", "plain", env=env)
    assert generator.code == 2 and generator.stdout == ""
    assert f'generator "misdeclared.plain_options" {MISDECLARED} {NOT_ATTRS}' in generator.stderr
    assert "TypeError" not in generator.stderr and "__init__" not in generator.stderr
    grader = evalkit_cli("run", "evalkit.smoke", "--grader", "misdeclared.plain_options", env=env)
    assert grader.code == 2 and f'grader "misdeclared.plain_options" {MISDECLARED} {NOT_ATTRS}' in grader.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"
    listed = evalkit_cli("list", "plugins", "--options", env=env)
    assert listed.code == 2 and f'generator "misdeclared.plain_options" {MISDECLARED} {NOT_ATTRS}' in listed.stdout
    assert "(declares no options)" not in listed.stdout.split("misdeclared.plain_options", 1)[1].splitlines()[1]


def test_a_default_its_own_validator_refuses_is_the_plugins_defect_not_the_tables(evalkit_cli, project: Path, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-misdeclared-options")}
    (project / "evalkit.toml").write_text('[deployments.local.retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\n')
    grader = evalkit_cli("run", "evalkit.smoke", "--grader", "misdeclared.bad_default", env=env)
    assert grader.code == 2 and f'grader "misdeclared.bad_default" {MISDECLARED} {BAD_DEFAULT}' in grader.stderr
    assert "cannot take the options" not in grader.stderr
    retriever = evalkit_cli("retrieval", "evalkit_stdlib.docs", "misdeclared.bad_default", env=env)
    assert retriever.code == 2 and f'retriever "misdeclared.bad_default" {MISDECLARED} {BAD_DEFAULT}' in retriever.stderr
    assert "--deployment" not in retriever.stderr, "no deployment's options could help"
    sets = evalkit_cli("list", "sets", env=env)
    # named once, as its options name it (it read `… provider misdeclared.sets (…): … provider "misdeclared.sets" (…) declares …`)
    assert sets.code == 2 and f'"misdeclared.sets" {MISDECLARED} {BAD_DEFAULT}' in sets.stderr and sets.stderr.count("misdeclared.sets") == 1
    assert not (project / ".evalkit").exists(), "nothing stored"


def test_a_default_not_of_its_declared_type_is_the_plugins_defect(evalkit_cli, project: Path, plugin_dists) -> None:
    # `folder: str = option(..., default=5)` passed silently: the grader was built with folder=5, a
    # value no table could have given it. The default is structured as a table's value would be.
    env = {"PYTHONPATH": plugin_dists("evalkit-misdeclared-options")}
    wrong = 'declares a default for option "folder" that is not of its declared type str: must be a string, not int (got 5)'
    grader = evalkit_cli("run", "evalkit.smoke", "--grader", "misdeclared.wrong_type_default", env=env)
    assert grader.code == 2 and f'grader "misdeclared.wrong_type_default" {MISDECLARED} {wrong}' in grader.stderr, grader.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"
    listed = evalkit_cli("list", "plugins", "--options", env=env)
    assert listed.code == 2 and f'grader "misdeclared.wrong_type_default" {MISDECLARED} {wrong}' in listed.stdout


# -- files the options name lie inside the project ------------------------------------------------------


def outside_answers(project: Path) -> Path:
    """The replay answers of ``arith.basic`` in a folder beside the project, linked from inside it."""
    from tests.cli.stored_runs_helpers import ARITH_GOOD, answer_with

    answer_with(project, ARITH_GOOD)
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (project / "answers.jsonl").rename(elsewhere / "answers.jsonl")
    (project / "answers.jsonl").symlink_to(elsewhere / "answers.jsonl")
    return elsewhere


def test_a_replay_file_that_links_outside_the_project_is_refused_unless_allowed(evalkit_cli, project: Path) -> None:
    elsewhere = outside_answers(project)
    refused = evalkit_cli("run", "arith.basic")
    assert refused.code == 2 and refused.stdout == "", refused.stderr
    message = refused.stderr
    assert f'option "path" of [providers.my-app] of {project / "evalkit.toml"}: answers.jsonl resolves to {elsewhere / "answers.jsonl"}' in message
    assert f"outside the project ({project})" in message
    assert f'[sets] allow_outside of {project / "evalkit.toml"} (allow_outside = ["{elsewhere}"])' in message
    assert not (project / ".evalkit").exists(), "nothing stored"
    config = (project / "evalkit.toml").read_text()
    (project / "evalkit.toml").write_text(f'{config}\n[sets]\nallow_outside = ["{elsewhere}"]\n')
    allowed = evalkit_cli("run", "arith.basic", "--json")
    assert allowed.code == 0, allowed.stderr
    assert allowed.json()["pass_rate"] == 1.0


def test_an_absolute_path_outside_the_project_is_refused_for_every_kind_of_plugin(evalkit_cli, project: Path) -> None:
    elsewhere = project.parent / "elsewhere"
    (elsewhere / "col" / "qrels").mkdir(parents=True)
    (elsewhere / "c.jsonl").write_text('{"id": "a", "text": "x"}\n')
    (project / "c.jsonl").write_text('{"id": "a", "text": "x"}\n')
    (project / "evalkit.toml").write_text(
        f'[deployments.demo.retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\nindex_dir = "{elsewhere / "index"}"\n\n'
        f'[question_sets."beir.far"]\npath = "{elsewhere / "col"}"\n'
    )
    retrieval = evalkit_cli("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo")
    assert retrieval.code == 2, retrieval.stderr
    assert f'option "index_dir" of [deployments.demo.retrievers."evalkit.lexical"] of configuration {project / "evalkit.toml"}' in retrieval.stderr
    assert f"{elsewhere / 'index'} lies outside the project" in retrieval.stderr and not (elsewhere / "index").exists()
    questions = evalkit_cli("list", "questions")
    assert questions.code == 2
    assert "evalkit.collections" in questions.stderr and 'option "path" of [question_sets."beir.far"]' in questions.stderr
    assert "lies outside the project" in questions.stderr and "allow_outside" in questions.stderr


@pytest.mark.parametrize("weight", ["1e308", "1e7"])
def test_a_title_weight_whose_scores_overflow_is_refused_before_anything_is_stored(evalkit_cli, project: Path, weight: str) -> None:
    """``title_weight = 1e308`` was taken: BM25 scores then overflowed to infinity, every question
    errored ("the score must be a finite number, not inf") and an incomplete run was stored, exit 3."""
    (project / "evals").mkdir()
    (project / "evals" / "q.yaml").write_text("identifier: mine.q\nname: n\nquestions:\n  - id: q1\n    question: hello\n    expected_document_ids: [d1]\n")
    (project / "corpus.jsonl").write_text('{"id": "d1", "title": "Hello", "text": "hello world"}\n{"id": "d2", "title": "Bye", "text": "bye"}\n')
    table = '[sets]\npaths = ["evals"]\n[deployments.x.retrievers."evalkit.lexical"]\ncorpus = "corpus.jsonl"\ntitle_weight = '
    (project / "evalkit.toml").write_text(table + weight + "\n")
    result = evalkit_cli("retrieval", "mine.q", "--deployment", "x")
    assert result.code == 2, result.stdout + result.stderr
    assert 'option "title_weight"' in result.stderr and "title_weight must be a number from 0 to 1,000,000" in result.stderr
    assert not (project / ".evalkit").exists()  # nothing stored, no store made
    (project / "evalkit.toml").write_text(table + "1e6\n")
    assert evalkit_cli("retrieval", "mine.q", "--deployment", "x").code == 0


#: A set provider reading its options from its own table, [set_providers.NAME].
_NAMED_PROVIDER = '''
import attrs
from evalkit import Assertion, GoldenPrompt, GoldenPromptSet
from evalkit.options import option


@attrs.frozen
class WordOptions:
    word: str = option("the word the one prompt asks for")


class WordSets:
    Options = WordOptions

    def __init__(self, options):
        self.word = options.word

    def golden_prompt_sets(self):
        prompt = GoldenPrompt(id="say", prompt=f"Say {self.word}", assertions=[Assertion.contains(self.word)], reference=self.word)
        return [GoldenPromptSet(identifier="quirky.word", name="Say a word", prompts=[prompt])]
'''


def test_a_set_provider_named_with_a_quote_reads_and_names_its_own_table(evalkit_cli, project: Path, tmp_path: Path) -> None:
    """The provider's table was made as the text 'set_providers."NAME"' and split again: a '"' in
    the name cut the key short, so its table was never read (a required option was "missing") nor
    named rightly. Its name is now one key, quoted once where the table is shown (TOML's escapes)."""
    from evalkit.wording import table_key

    from tests.support.distributions import write_distribution

    name = 'say"hi'
    folder = write_distribution(tmp_path / "site", "quirky-sets", "1.0", {"evalkit.golden_sets": {name: "quirky_sets:WordSets"}}, {"quirky_sets.py": _NAMED_PROVIDER})
    env = {"PYTHONPATH": str(folder)}
    table = f"[set_providers.{table_key(name)}]"
    assert table == '[set_providers."say\\"hi"]'
    (project / "evalkit.toml").write_text(f"{table}\nword = \"ok\"\n")
    listed = evalkit_cli("list", "sets", "--json", env=env)
    assert listed.code == 0, listed.stderr
    assert "quirky.word" in [row["identifier"] for row in listed.json()["sets"]], listed.json()
    (project / "evalkit.toml").write_text(f"{table}\nwrod = \"ok\"\n")
    wrong = evalkit_cli("list", "sets", env=env)
    assert f'has no option "wrod" (in {table}' in wrong.stdout + wrong.stderr, wrong.stdout + wrong.stderr


_HOSTILE_VALIDATING_GRADER = '''
import attrs
from evalkit import Grading
from evalkit.options import option

FORGED = "\\x1b[31modd\\x1b[0m\\nevalkit: error: forged"


def even(instance, attribute, value):
    if value % 2:
        raise ValueError(FORGED)


@attrs.frozen
class EvenOptions:
    n: int = option("an even number", default=2, validator=even)
    m: int = option("another", default=0)

    def __attrs_post_init__(self):
        if self.m > self.n:
            raise ValueError(FORGED)


class Grader:
    Options = EvenOptions
    yardstick = "even:v1"

    def __init__(self, options):
        self.options = options

    def grade(self, prompt, answer):
        return Grading(1.0, True, yardstick="even:v1")
'''


@pytest.mark.parametrize(("table", "said"), [
    ("n = 3", 'has a wrong value for option "n" in [graders."acme.even"]'),
    ("m = 4", 'cannot take the options in [graders."acme.even"]'),
])  # fmt: skip
def test_a_plugin_validators_message_is_quoted_on_one_line(evalkit_cli, project: Path, tmp_path: Path, table: str, said: str) -> None:
    """A plugin's own validator (or ``__attrs_post_init__``) that refused a value with a message
    holding a line break printed it as it was: ``evalkit: error: forged`` stood on a line of its
    own, read as evalkit's. It is quoted as every plugin exception is, its line break escaped."""
    from tests.support.distributions import write_distribution

    folder = write_distribution(tmp_path / "site", "acme-even", "1.0", {"evalkit.graders": {"acme.even": "acme_even:Grader"}},
                                {"acme_even.py": _HOSTILE_VALIDATING_GRADER})  # fmt: skip
    (project / "evalkit.toml").write_text(f'[graders."acme.even"]\n{table}\n')
    ran = evalkit_cli("run", "evalkit.smoke", "--grader", "acme.even", env={"PYTHONPATH": str(folder)})
    assert ran.code == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and said in ran.stderr, ran.stderr
    assert ran.stderr.rstrip("\n").endswith(": \\x1b[31modd\\x1b[0m\\x0aevalkit: error: forged"), ran.stderr


@pytest.mark.parametrize(
    ("table", "command", "shown"),
    [
        (
            '[providers.rec]\nadapter = "replay"\nmodel = "m"\npath = "answers\\u0000.jsonl"\n',
            ("run", "arith.basic", "--provider", "rec"),
            'option "path" of [providers.rec] of {config}: "answers\\x00.jsonl" holds a NUL character, which no file name can',
        ),
        (  # a path option allowed anywhere (the system's bundles live in /etc/ssl) is held to it too
            '[providers.api]\nadapter = "openai"\nmodel = "m"\napi_key_env = ""\nbase_url = "http://127.0.0.1:9/v1"\n'
            'ca_bundle = "ca\\u0000.pem"\n',
            ("run", "arith.basic", "--provider", "api"),
            'option "ca_bundle" of [providers.api] of {config}: "ca\\x00.pem" holds a NUL character, which no file name can',
        ),
        (
            '[providers.rec]\nadapter = "replay"\nmodel = "m"\npath = "answers.jsonl"\nsystem_prompt_file = "base\\u0000.txt"\n',
            ("run", "arith.basic", "--provider", "rec"),
            'the system_prompt_file of [providers.rec] "base\\x00.txt" holds a NUL character, which no file name can',
        ),
        (
            '[deployments.demo.retrievers."evalkit.lexical"]\ncorpus = "c\\u0000.jsonl"\n',
            ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo"),
            'option "corpus" of [deployments.demo.retrievers."evalkit.lexical"] of configuration {config}: "c\\x00.jsonl" '
            "holds a NUL character, which no file name can",
        ),
    ],
    ids=["replay-path", "ca_bundle", "system_prompt_file", "lexical-corpus"],
)
def test_a_configured_file_name_holding_nul_is_refused_naming_it_not_an_internal_error(
    evalkit_cli, project: Path, table: str, command: tuple[str, ...], shown: str
) -> None:
    # a TOML string may write "\u0000": the system calls raised "ValueError: embedded null byte",
    # an internal error with a traceback (or, for ca_bundle, "holds no certificate in PEM form")
    (project / "answers.jsonl").write_text("")
    (project / "evalkit.toml").write_text(table)
    result = evalkit_cli(*command)
    assert result.code == 2, result.stderr
    assert shown.format(config=project / "evalkit.toml") in result.stderr, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert not (project / ".evalkit").exists(), "nothing stored"
