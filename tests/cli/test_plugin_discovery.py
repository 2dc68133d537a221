"""Discovery through the CLI: listing imports no plugin, the first distribution of a name wins, a
plugin that fails (even by exiting) is named while the rest work, the deny-list, clashing names,
and no stevedore cache file written."""

from __future__ import annotations

import gc
import os
import warnings
from pathlib import Path

from tests.support.distributions import write_distribution

MARKER_MODULE = (
    "import os\n"
    "open(os.environ['EVALKIT_TEST_IMPORTED'], 'a').write(__name__ + '\\n')\n"
    "class Grader:\n"
    "    def __init__(self):\n"
    "        pass\n"
)


def test_listing_imports_no_plugin_module_and_loading_its_options_does(evalkit_cli, tmp_path: Path) -> None:
    site = write_distribution(
        tmp_path / "site", "evalkit-watched", "1.0", {"evalkit.graders": {"watched": "evalkit_watched:Grader"}},
        {"evalkit_watched.py": MARKER_MODULE},
    )
    marker = tmp_path / "imported.txt"
    env = {"PYTHONPATH": str(site), "EVALKIT_TEST_IMPORTED": str(marker)}
    listed = evalkit_cli("list", env=env)
    assert listed.code == 0, listed.stderr
    assert "watched" in listed.stdout and "evalkit-watched 1.0" in listed.stdout
    assert evalkit_cli("list", "--json", env=env).code == 0
    assert not marker.exists(), "evalkit list imported a plugin module"
    options = evalkit_cli("list", "--options", env=env)
    assert options.code == 0, options.stderr
    assert marker.read_text() == "evalkit_watched\n"


def test_the_first_distribution_of_a_name_on_the_path_is_the_one_listed_and_run(evalkit_cli, tmp_path: Path) -> None:
    module = "class Grader:\n    def __init__(self, **options):\n        raise RuntimeError('version {v} was loaded')\n"
    newer = write_distribution(
        tmp_path / "newer", "evalkit-shadow", "2.0", {"evalkit.graders": {"shadowed": "evalkit_shadow:Grader"}},
        {"evalkit_shadow.py": module.format(v="2.0")},
    )
    older = write_distribution(
        tmp_path / "older", "evalkit-shadow", "1.0",
        {"evalkit.graders": {"shadowed": "evalkit_shadow:Grader", "only_old": "evalkit_shadow:Grader"}},
        {"evalkit_shadow.py": module.format(v="1.0")},
    )
    env = {"PYTHONPATH": os.pathsep.join([str(newer), str(older)])}
    rows = [row for row in evalkit_cli("list", "--json", env=env).json() if row["distribution"] == "evalkit-shadow"]
    assert [(row["name"], row["version"]) for row in rows] == [("shadowed", "2.0")]
    run = evalkit_cli("run", "evalkit.smoke", "--grader", "shadowed", env=env)
    assert run.code == 2
    assert 'grader "shadowed" (evalkit-shadow 2.0) raised RuntimeError when created: version 2.0 was loaded' in run.stderr
    swapped = {"PYTHONPATH": os.pathsep.join([str(older), str(newer)])}
    rows = [row for row in evalkit_cli("list", "--json", env=swapped).json() if row["distribution"] == "evalkit-shadow"]
    assert [(row["name"], row["version"]) for row in rows] == [("shadowed", "1.0"), ("only_old", "1.0")]


def test_a_provider_that_exits_at_import_is_named_and_the_other_sets_still_list_and_run(evalkit_cli, tmp_path: Path) -> None:
    site = write_distribution(
        tmp_path / "site", "evalkit-exiting", "0.3", {"evalkit.golden_sets": {"exiting": "evalkit_exiting_sets:Provider"}},
        {"evalkit_exiting_sets.py": "import sys\nsys.exit(0)\n"},
    )
    env = {"PYTHONPATH": str(site)}
    listed = evalkit_cli("list", "sets", env=env)
    assert listed.code == 2
    assert "evalkit.smoke" in listed.stdout and "arith.basic" in listed.stdout
    assert "golden prompt set provider \"exiting\" (evalkit-exiting 0.3) failed to load: SystemExit: 0" in listed.stderr
    assert evalkit_cli("run", "evalkit.smoke", env=env).code == 0


def test_disabled_plugins_are_marked_in_the_listing_and_never_loaded(evalkit_cli, plugin_dists) -> None:
    env = {"PYTHONPATH": plugin_dists("evalkit-broken-plugin"), "EVALKIT_DISABLE_PLUGINS": "broken_import,raising,invalid"}
    listed = evalkit_cli("list", env=env)
    # broken_grader, not switched off, names a module that is not installed: the one error
    assert listed.code == 2 and listed.stderr.count("error:") == 1 and 'grader "broken_grader"' in listed.stderr
    line = next(line for line in listed.stdout.splitlines() if "broken_import" in line)
    assert line.endswith(
        'evalkit-broken-plugin 6.6.6  (disabled by EVALKIT_DISABLE_PLUGINS)  (module "evalkit_broken_plugin.missing_module" not found)'
    )
    rows = {row["name"]: row for row in evalkit_cli("list", "--json", env=env).json()}
    assert rows["broken_import"]["disabled"] is True and rows["broken_grader"]["disabled"] is False
    sets = evalkit_cli("list", "sets", env=env)
    assert sets.code == 0, sets.stderr
    assert "arith.basic" in sets.stdout and "evalkit-broken-plugin" not in sets.stderr
    run = evalkit_cli("run", "evalkit.smoke", "--grader", "broken_grader", env={**env, "EVALKIT_DISABLE_PLUGINS": "broken_grader"})
    assert run.code == 2 and 'Unknown grader "broken_grader"' in run.stderr


def test_a_grader_name_two_distributions_declare_is_refused_naming_both(evalkit_cli, tmp_path: Path) -> None:
    first = write_distribution(tmp_path / "a", "evalkit-twin-a", "1.0", {"evalkit.graders": {"twin": "json:dumps"}})
    second = write_distribution(tmp_path / "b", "evalkit-twin-b", "2.5", {"evalkit.graders": {"twin": "json:loads"}})
    run = evalkit_cli("run", "evalkit.smoke", "--grader", "twin", env={"PYTHONPATH": os.pathsep.join([str(first), str(second)])})
    assert run.code == 2
    assert 'grader "twin" is declared by more than one distribution: evalkit-twin-a 1.0, evalkit-twin-b 2.5' in run.stderr


def test_a_third_party_generator_named_openai_is_refused_naming_both_and_how_to_keep_one(evalkit_cli, project, tmp_path: Path) -> None:
    """A distribution registering its own generator under the built-in id "openai" made every
    openai instance refuse to run, naming both distributions but no way out short of uninstalling
    one (EVALKIT_DISABLE_PLUGINS=openai switched both off). It now says how to keep one, and
    EVALKIT_DISABLE_PLUGINS takes DISTRIBUTION:NAME to switch off one distribution's."""
    module = (
        "from evalkit.answers import Answer\n\n\nclass Generator:\n    def __init__(self, model=None):\n        self.model = model\n\n"
        "    def generate(self, request):\n        return Answer(text='x', model='acme-model')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-openai", "2.0", {"evalkit.generators": {"openai": "acme_openai:Generator"}},
                              {"acme_openai.py": module})  # fmt: skip
    (project / "evalkit.toml").write_text('[providers.prod]\nadapter = "openai"\nmodel = "gpt-4o"\n')
    env = {"PYTHONPATH": str(site)}
    refused = evalkit_cli("run", "evalkit.smoke", env=env)
    assert refused.code == 2, refused.stderr
    assert refused.stderr.splitlines()[0] == (
        'evalkit: error: generator "openai" is declared by more than one distribution: acme-openai 2.0, evalkit-golden 0.1.0; '
        "keep the one you want by switching the other off by distribution and name (EVALKIT_DISABLE_PLUGINS=acme-openai:openai "
        "or EVALKIT_DISABLE_PLUGINS=evalkit-golden:openai), or uninstall it"
    )
    theirs = {**env, "EVALKIT_DISABLE_PLUGINS": "Evalkit_Golden:openai"}  # the name compared as pip does
    ran = evalkit_cli("run", "evalkit.smoke", "--json", env=theirs)
    assert ran.code == 0, ran.stderr
    assert ran.json()["identity"]["reported_model"] == "acme-model"
    rows = evalkit_cli("list", "plugins", "--json", env=theirs).json()
    assert sorted((r["distribution"], r["disabled"]) for r in rows if r["group"] == "evalkit.generators" and r["name"] == "openai") \
        == [("acme-openai", False), ("evalkit-golden", True)]  # fmt: skip


def test_a_grader_name_one_distribution_declares_twice_is_refused_naming_it_once(evalkit_cli, tmp_path: Path) -> None:
    """It was "declared by more than one distribution: evalkit-twice 1.0, evalkit-twice 1.0"."""
    folder = write_distribution(tmp_path / "a", "evalkit-twice", "1.0", {})
    (folder / "evalkit_twice-1.0.dist-info" / "entry_points.txt").write_text("[evalkit.graders]\ntwin = json:dumps\ntwin = json:loads\n")
    run = evalkit_cli("run", "evalkit.smoke", "--grader", "twin", env={"PYTHONPATH": str(folder)})
    assert run.code == 2
    assert 'grader "twin" is declared 2 times by distribution evalkit-twice 1.0' in run.stderr, run.stderr


def test_no_entry_point_cache_file_is_written(evalkit_cli, tmp_path: Path, plugin_dists) -> None:
    """stevedore writes one file per environment under $XDG_CACHE_HOME/python-entrypoints when its
    own listing is used; evalkit's managers list the scan's records instead."""
    cache = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache), "PYTHONPATH": plugin_dists("evalkit-broken-plugin")}
    assert evalkit_cli("list", "sets", env=env).code == 2
    assert evalkit_cli("run", "evalkit.smoke", env=env).code == 0
    assert not (cache / "python-entrypoints").exists()


def test_a_generator_returning_plain_text_has_it_taken_as_the_answers_text(evalkit_cli, project, tmp_path: Path) -> None:
    """docs/plugins.md: a generate() returning a plain str (not an Answer) has it taken as the
    answer's text, graded as any answer; the run reports no model, so its identity is unverified
    and it is not compared. Any other value is an errored case naming what was returned."""
    module = (
        "class Generator:\n    def __init__(self, model=None):\n        self.model = model\n\n"
        "    def generate(self, request):\n        return '4' if request.case_id == 'two-plus-two' else 4\n"
    )
    site = write_distribution(tmp_path / "site", "acme-text", "1.0", {"evalkit.generators": {"acme.text": "acme_text:Generator"}},
                              {"acme_text.py": module})  # fmt: skip
    (project / "evalkit.toml").write_text('[providers.p]\nadapter = "acme.text"\nmodel = "m"\n')
    ran = evalkit_cli("run", "evalkit.smoke", "--provider", "p", "--json", env={"PYTHONPATH": str(site)})
    assert ran.code == 3, ran.stderr[-2000:]
    document = ran.json()
    cases = {case["id"]: case for case in document["cases"]}
    assert cases["two-plus-two"]["passed"] and not cases["two-plus-two"]["errored"], cases["two-plus-two"]
    assert {case["error"] for name, case in cases.items() if name != "two-plus-two"} == {"the generator returned int '4', not an Answer"}
    assert document["identity"] is None and "reported no model" in document["identity_note"], document["identity_note"]


def test_a_generate_written_async_is_an_errored_case_saying_to_name_it_agenerate(evalkit_cli, project, tmp_path: Path) -> None:
    """A generator whose ``generate`` was written ``async def`` returned coroutines evalkit never
    awaited: each case said "the generator returned coroutine '<coroutine object … at 0x7f…>', not
    an Answer" and Python printed "coroutine … was never awaited" from evalkit's own modules. Each
    case now says to declare it ``async def agenerate()``, and the coroutine is closed unawaited."""
    module = (
        "from evalkit import Answer\n\n\nclass Generator:\n    def __init__(self, model=None):\n        self.model = model\n\n"
        "    async def generate(self, request):\n        return Answer(text='4', model='m')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-async", "1.0", {"evalkit.generators": {"acme.async": "acme_async:Generator"}},
                              {"acme_async.py": module})  # fmt: skip
    (project / "evalkit.toml").write_text('[providers.p]\nadapter = "acme.async"\nmodel = "m"\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ran = evalkit_cli("run", "evalkit.smoke", "--provider", "p", "--json", env={"PYTHONPATH": str(site)})
        gc.collect()
    assert ran.code == 3, ran.stderr[-2000:]
    errors = {case["error"] for case in ran.json()["cases"]}
    assert errors == {
        'generator "acme.async" (acme-async 1.0): generate() returned a coroutine of "Generator.generate", which evalkit does not await: '
        "declare the method as async def agenerate() (evalkit awaits that one), or return the value itself"
    }, errors
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]


def test_an_agenerate_returning_a_coroutine_is_refused_naming_the_plugin(evalkit_cli, project, tmp_path: Path) -> None:
    """An ``async def agenerate`` that returned another coroutine unawaited had the coroutine taken
    as its answer: each case stored "the generator returned coroutine '<coroutine object inner at
    0x7f…>', not an Answer", and Python printed "coroutine 'inner' was never awaited". A plain
    ``def agenerate`` returning an awaitable was passed over for the ``generate()`` it lacks, an
    ``AttributeError`` in every case. The first is now each case's error naming the plugin and its
    distribution, the coroutine closed; the second is refused before the run (exit 2)."""
    module = (
        "from evalkit import Answer\n\n\nasync def inner():\n    return Answer(text='4', model='m')\n\n\n"
        "class Nested:\n    def __init__(self, model=None):\n        self.model = model\n\n"
        "    async def agenerate(self, request):\n        return inner()\n\n\n"
        "class Plain:\n    def __init__(self, model=None):\n        self.model = model\n\n"
        "    def agenerate(self, request):\n        return inner()\n"
    )
    site = write_distribution(
        tmp_path / "site", "acme-nested", "1.0",
        {"evalkit.generators": {"acme.nested": "acme_nested:Nested", "acme.plain": "acme_nested:Plain"}},
        {"acme_nested.py": module},
    )
    (project / "evalkit.toml").write_text('[providers.p]\nadapter = "acme.nested"\nmodel = "m"\n[providers.q]\nadapter = "acme.plain"\nmodel = "m"\n')
    env = {"PYTHONPATH": str(site)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ran = evalkit_cli("run", "evalkit.smoke", "--provider", "p", "--json", env=env)
        gc.collect()
    assert ran.code == 3, ran.stderr[-2000:]
    errors = {case["error"] for case in ran.json()["cases"]}
    assert errors == {
        'generator "acme.nested" (acme-nested 1.0): agenerate() returned a coroutine of "inner", which evalkit does not await: '
        "evalkit awaits agenerate() once, so await what it returned inside it and return the value"
    }, errors
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]
    refused = evalkit_cli("run", "evalkit.smoke", "--provider", "q", env=env)
    assert refused.code == 2, (refused.code, refused.stderr[-2000:])
    assert refused.stderr.startswith(
        'evalkit: error: generator "acme.plain" (acme-nested 1.0): its agenerate() is no async def '
        "(evalkit awaits only an async def agenerate(), and there is no generate() to call instead)"
    ), refused.stderr


def test_a_graders_check_ready_written_async_stops_the_run_before_anything_is_stored(evalkit_cli, project, tmp_path: Path) -> None:
    """An ``async def check_ready`` returned a coroutine, which raised nothing: the readiness check
    that should refuse the run passed it, and the run went on (exit 0). It is refused now, naming
    the grader and what to write instead (exit 2, nothing stored)."""
    module = (
        "from evalkit import Grading\n\n\nclass Grader:\n    yardstick = 'acme:v1'\n\n"
        "    async def check_ready(self):\n        raise RuntimeError('the judge is down')\n\n"
        "    def grade(self, prompt, answer):\n        return Grading(1.0, True, yardstick='acme:v1')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-ready", "1.0", {"evalkit.graders": {"acme.ready": "acme_ready:Grader"}},
                              {"acme_ready.py": module})  # fmt: skip
    database = tmp_path / "runs.db"
    ran = evalkit_cli("run", "evalkit.smoke", "--grader", "acme.ready", "--database", f"sqlite:///{database}", env={"PYTHONPATH": str(site)})
    assert ran.code == 2, (ran.code, ran.stdout[-1500:], ran.stderr[-1500:])
    assert ran.stderr.startswith(
        'evalkit: error: grader "acme.ready" (acme-ready 1.0) raised TypeError in check_ready(): check_ready() returned a '
        'coroutine of "Grader.check_ready", which evalkit does not await'
    ), ran.stderr
    assert "Pass rate" not in ran.stdout


def test_an_exception_python_reports_itself_is_one_escaped_warning_naming_the_plugin(evalkit_cli, project, tmp_path: Path) -> None:
    """A plugin object whose ``__del__`` raised, or a thread it started that raised, had Python
    print the exception raw on stderr with a traceback: an ANSI sequence acted on, a line break
    followed by ``evalkit: error: …`` read as evalkit's own line, once per case. Each is now one
    ``evalkit: warning:`` line naming the function, its module and distribution, escaped, and the
    repeats counted at the end."""
    module = (
        "import threading\nfrom evalkit import Answer\n\nHOSTILE = '\\x1b[2Jgone\\nevalkit: error: forged'\n\n\n"
        "class Litter:\n    def __del__(self):\n        raise RuntimeError(HOSTILE)\n\n\n"
        "def work():\n    raise ValueError(HOSTILE)\n\n\n"
        "class Generator:\n    def __init__(self, model=None):\n        self.model = model\n\n"
        "    def generate(self, request):\n        Litter()\n"
        "        helper = threading.Thread(target=work, name='acme-helper')\n        helper.start()\n        helper.join()\n"
        "        return Answer(text='4', model='m')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-litter", "1.5", {"evalkit.generators": {"acme.litter": "acme_litter:Generator"}},
                              {"acme_litter.py": module})  # fmt: skip
    (project / "evalkit.toml").write_text('[providers.p]\nadapter = "acme.litter"\nmodel = "m"\n')
    ran = evalkit_cli("run", "evalkit.smoke", "--provider", "p", env={"PYTHONPATH": str(site)})
    assert ran.code in (0, 1), ran.stderr[-2000:]
    assert "\x1b" not in ran.stderr and "\nevalkit: error" not in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    shown = "\\x1b[2Jgone\\x0aevalkit: error: forged"
    warnings_said = [line for line in ran.stderr.splitlines() if line.startswith("evalkit: warning:")]
    assert warnings_said == [
        f'evalkit: warning: "Litter.__del__" of module "acme_litter" (acme-litter 1.5) raised RuntimeError: {shown}, '
        "where nothing can catch it (Python ignores it); evalkit went on",
        f'evalkit: warning: "work" of module "acme_litter" (acme-litter 1.5) raised ValueError: {shown}, '
        'which ended thread "acme-helper"; evalkit went on',
        'evalkit: warning: "Litter.__del__" of module "acme_litter" (acme-litter 1.5) raised RuntimeError 7 times in all (the first shown above)',
        'evalkit: warning: "work" of module "acme_litter" (acme-litter 1.5) raised ValueError 7 times in all (the first shown above)',
    ], warnings_said


def test_a_hook_plugin_whose_kinds_hook_raises_is_named_not_called_an_evalkit_bug(evalkit_cli, tmp_path: Path) -> None:
    """``evalkit_assertion_kinds`` raising ended ``evalkit run`` and ``evalkit validate`` in
    "internal error (an evalkit bug)" and a traceback whose last lines were the plugin's message
    as it was. It is now the hook plugin's error, named as its observer failures are (exit 2)."""
    module = (
        "from evalkit import hookimpl\n\n\n@hookimpl\ndef evalkit_assertion_kinds():\n"
        "    raise RuntimeError('no kinds today\\nevalkit: error: forged')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-kinds", "2.1", {"evalkit.hooks": {"kinds": "acme_kinds"}}, {"acme_kinds.py": module})
    for command in (("run", "evalkit.smoke"), ("validate", "evalkit.smoke")):
        ran = evalkit_cli(*command, env={"PYTHONPATH": str(site)})
        assert ran.code == 2, (command, ran.stderr)
        assert ran.stderr == (
            'evalkit: error: hook plugin "acme-kinds:kinds" raised in evalkit_assertion_kinds(): '
            "RuntimeError: no kinds today\\x0aevalkit: error: forged\n"
        ), (command, ran.stderr)


def test_a_grader_that_sets_a_field_of_the_frozen_prompt_changes_no_stored_case(evalkit_cli, tmp_path: Path) -> None:
    """A grader that set the prompt's id (``object.__setattr__`` past ``frozen``) changed the case
    the runner stored: the 7 cases of evalkit.smoke became one case "mutated", and the run was left
    "running" ("Shard done: 1 of 7 cases"), exit 0. The grader now gets a copy of the prompt."""
    module = (
        "from evalkit import Check, Grading\n\n\nclass Grader:\n    yardstick = 'acme:v1'\n\n"
        "    def grade(self, prompt, answer):\n        object.__setattr__(prompt, 'id', 'mutated')\n"
        "        return Grading(1.0, True, checks=[Check('c', True)], yardstick='acme:v1')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-meddling", "1.0", {"evalkit.graders": {"acme.meddling": "acme_meddling:Grader"}},
                              {"acme_meddling.py": module})  # fmt: skip
    ran = evalkit_cli("run", "evalkit.smoke", "--grader", "acme.meddling", "--json", env={"PYTHONPATH": str(site)})
    assert ran.code == 0, ran.stderr[-2000:]
    document = ran.json()
    assert document["status"] == "complete", document["status"]
    ids = [case["id"] for case in document["cases"]]
    assert len(ids) == 7 and "mutated" not in ids, ids


def test_a_grader_that_changes_an_assertions_expected_values_changes_no_later_grading(evalkit_cli, project, tmp_path: Path) -> None:
    """The grader's copy of the prompt was shallow: a grader that changed an assertion's expected
    values (the JSON Schema dict, the list of phrases) changed them for the next repeat's grading
    and for the case's stored fingerprint. Each grading now gets its own deep copy: the second
    repeat sees the values unchanged."""
    module = (
        "from evalkit import Check, Grading\n\n\nclass Grader:\n    yardstick = 'acme:v1'\n\n"
        "    def grade(self, prompt, answer):\n"
        "        touched = [a.value for a in prompt.assertions if isinstance(a.value, (dict, list))]\n"
        "        seen = any('acme-was-here' in value for value in touched)\n"
        "        for value in touched:\n"
        "            value.append('acme-was-here') if isinstance(value, list) else value.update({'acme-was-here': 1})\n"
        "        return Grading(0.0 if seen else 1.0, not seen, checks=[Check('untouched', not seen)], yardstick='acme:v1')\n"
    )
    site = write_distribution(tmp_path / "site", "acme-deep", "1.0", {"evalkit.graders": {"acme.deep": "acme_deep:Grader"}},
                              {"acme_deep.py": module})  # fmt: skip
    (project / "set.yaml").write_text(
        "identifier: acme.deep\nname: Deep\nprompts:\n  - id: contact-json\n    prompt: Return the contact as JSON.\n"
        "    reference: '{\"email\": \"office@example.org\"}'\n    assertions:\n"
        "      - json_schema: {type: object, required: [email]}\n"
    )
    (project / "evalkit.toml").write_text('[sets]\npaths = ["set.yaml"]\n')
    ran = evalkit_cli("run", "acme.deep", "--grader", "acme.deep", "--repeats", "2", "--json", env={"PYTHONPATH": str(site)})
    assert ran.code == 0, (ran.code, ran.stdout[-2000:], ran.stderr[-2000:])
    (case,) = ran.json()["cases"]
    assert case["passed"] and case["score"] == 1.0, case


HOSTILE_NAME = 'acme grader [x] "y"\x1b[2J'
#: How every message and ``evalkit list`` name it: quoted, the quote and the ESC escaped.
HOSTILE_SHOWN = '"acme grader [x] \\"y\\"\\x1b[2J"'


def test_a_hostile_entry_point_name_is_shown_the_same_in_a_load_failure_a_call_failure_and_the_listing(evalkit_cli, tmp_path: Path) -> None:
    """A plugin's name is a third party's word: a load failure and a call failure named it bare
    (``grader acme grader [x] "y"<ESC>[2J (acme-hostile 1.0) raised …``, the terminal cleared, where
    the name ended unclear) while a creation error quoted it; now all three quote it one way."""
    calling = write_distribution(
        tmp_path / "calling", "acme-hostile", "1.0", {"evalkit.graders": {HOSTILE_NAME: "acme_hostile_calling:Grader"}},
        {"acme_hostile_calling.py": (
            "class Grader:\n"
            "    def use_assertion_kinds(self, kinds):\n"
            "        raise RuntimeError('the plugin failed')\n"
            "    def grade(self, prompt, answer):\n"
            "        raise AssertionError('never reached')\n"
        )},
    )  # fmt: skip
    loading = write_distribution(
        tmp_path / "loading", "acme-hostile", "1.0", {"evalkit.graders": {HOSTILE_NAME: "acme_hostile_loading:Grader"}},
        {"acme_hostile_loading.py": "raise RuntimeError('no import')\n"},
    )
    called = evalkit_cli("run", "evalkit.smoke", "--grader", HOSTILE_NAME, env={"PYTHONPATH": str(calling)})
    assert f"grader {HOSTILE_SHOWN} (acme-hostile 1.0) raised RuntimeError in use_assertion_kinds(): the plugin failed" in called.stderr, called.stderr
    loaded = evalkit_cli("run", "evalkit.smoke", "--grader", HOSTILE_NAME, env={"PYTHONPATH": str(loading)})
    assert loaded.code == 2, loaded.stderr
    assert f"grader {HOSTILE_SHOWN} (acme-hostile 1.0) failed to load: RuntimeError: no import" in loaded.stderr, loaded.stderr
    listed = evalkit_cli("list", "plugins", env={"PYTHONPATH": str(loading)})
    assert f"  {HOSTILE_SHOWN}  acme-hostile 1.0" in listed.stdout.splitlines(), listed.stdout
    assert "\x1b" not in called.stderr + loaded.stderr + listed.stdout
