"""Everything evalkit prints for people passes one boundary (evalkit.cli.console), ``--json`` another
(evalkit.cli.json_output): a hostile value threaded through every command's output comes out
literally, and no module of the CLI writes to a stream around them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.support.cli_runner import InProcessRunner

#: A value as a set, an endpoint or a store could hand it over: a GitHub Actions workflow command
#: at its start, rich markup (a style, a link), an emoji code, an ANSI colour, an OSC 8 hyperlink,
#: a BEL, a bidi override, NUL and an undecodable byte.
HOSTILE = (
    "::error::H[red]x[/red][link=https://evil.invalid]l[/link]:warning:"
    "\x1b[31m\x1b]8;;https://evil.invalid/\x07o\x1b]8;;\x07\u202e\x00\udcff"
)
#: The same, where a value cannot hold NUL or an undecodable byte (TOML, a file name, a BEIR id).
HOSTILE_TEXT = HOSTILE.replace("\x00", "").replace("\udcff", "")
#: How every output shows the heart of it: markup as text, every control character as an escape.
SHOWN = (
    "H[red]x[/red][link=https://evil.invalid]l[/link]:warning:"
    "\\x1b[31m\\x1b]8;;https://evil.invalid/\\x07o\\x1b]8;;\\x07\\u202e"
)
#: A database file name and an acceptance reason carrying markup and controls (where they may).
DATABASE = "db[red]x[/red]\x1b[31m\u202e.db"
REASON = "because [red]x[/red] [link=https://evil.invalid]l[/link] :warning:"
#: What a terminal acts on: ESC (CSI, OSC), BEL, CR, NUL, the one-byte C1 CSI, a bidi override.
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x00", "\x9b", "\u202e")


def _answers(path: Path, failing: frozenset[str] = frozenset(), model: str = "m") -> None:
    lines = [{"id": case_id, "text": "no" if case_id in failing else "yes " + HOSTILE, "model": model} for case_id in (HOSTILE, "b")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A project whose set, answers, model alias, question set and store name carry the hostile
    value, with three stored runs: ``base`` (accepted on purpose), ``regressed`` (the hostile case
    fails) and ``unverified`` (answered under the hostile alias and reported model)."""
    root = tmp_path_factory.mktemp("hostile") / "project"
    (root / "col" / "qrels").mkdir(parents=True)
    prompt = {"prompt": "q", "reference": "yes", "assertions": [{"kind": "contains", "value": "yes"}]}
    (root / "evals.json").write_text(
        json.dumps({"identifier": "ci.hostile", "name": HOSTILE, "prompts": [{"id": HOSTILE, **prompt}, {"id": "b", **prompt}]})
    )
    _answers(root / "clean.jsonl")
    _answers(root / "hostile.jsonl", model=HOSTILE)
    (root / "col" / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha"}\n{"_id": "d2", "text": "beta"}\n')
    (root / "col" / "queries.jsonl").write_text(
        json.dumps({"_id": HOSTILE_TEXT, "text": "beta"}) + "\n" + json.dumps({"_id": "q2", "text": "beta"}) + "\n"
    )
    (root / "col" / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\n{HOSTILE_TEXT}\td1\t1\nq2\td2\t1\n")
    (root / "docs.jsonl").write_text('{"id": "d1", "title": "", "text": "alpha"}\n{"id": "d2", "title": "", "text": "beta"}\n')
    (root / "evalkit.toml").write_text(
        f"database = {json.dumps('sqlite:///' + DATABASE)}\n"
        '[sets]\npaths = ["evals.json"]\n'
        '[question_sets."beir.hostile"]\npath = "col"\nsplit = "test"\n'
        '[deployments.d.retrievers."evalkit.lexical"]\ncorpus = "docs.jsonl"\n'
        '[providers.clean]\nadapter = "replay"\npath = "clean.jsonl"\nmodel = "m"\n'
        f'[providers.hostile]\nadapter = "replay"\npath = "hostile.jsonl"\nmodel = {json.dumps(HOSTILE_TEXT)}\n'
    )
    cli = InProcessRunner(root)
    runs = {}
    for name, answers in (("base", None), ("regressed", frozenset({HOSTILE})), ("unverified", None)):
        if answers is not None:
            _answers(root / "clean.jsonl", failing=answers)
        provider = "hostile" if name == "unverified" else "clean"
        done = cli("run", "ci.hostile", "--provider", provider, "--json")
        assert done.code in (0, 1), done.stderr
        runs[name] = done.json()["run_id"]
    accepted = cli("baseline", "accept", runs["base"], "--reason", REASON)
    assert accepted.code == 0, accepted.stderr
    return {"root": str(root), **runs}


#: Each command that prints something it read from a set, a plugin, the configuration or the
#: store: its arguments (``{base}``, ``{regressed}``, ``{unverified}`` are run ids), the stream
#: it prints the value on, and what shows the value was printed.
COMMANDS = {
    "run": (["run", "ci.hostile", "--provider", "hostile", "--show-all"], "stdout", SHOWN),
    "retrieval": (["retrieval", "beir.hostile", "evalkit.lexical", "--deployment", "d", "--show-all"], "stdout", SHOWN),
    "show": (["show", "{unverified}", "--show-all"], "stdout", SHOWN),
    "history": (["history", "ci.hostile"], "stdout", SHOWN),
    "compare": (["compare", "{base}", "{regressed}"], "stdout", SHOWN),
    "list": (["list", "sets"], "stdout", SHOWN),
    "baseline show": (["baseline", "show", "ci.hostile"], "stdout", REASON),
    "report": (["report", "{unverified}", "--format", "junit"], "stdout", SHOWN),
    "db status": (["db", "status"], "stdout", "db[red]x[/red]\\x1b[31m\\u202e.db"),
    "models rank": (["models", "rank"], "stdout", SHOWN),
    "validate": (["validate", HOSTILE_TEXT.replace("/", "-") + ".json"], "stderr", SHOWN.replace("/", "-")),
    "errors": (["show", HOSTILE], "stderr", SHOWN),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_hostile_value_is_shown_literally_by_every_command(hostile_project: dict[str, str], command: str) -> None:
    """A print path that bypasses the console — an f-string written to a stream, a rich console of
    its own, a table cell given as markup — shows the value raw, or loses its markup: this fails."""
    args, stream, shown = COMMANDS[command]
    result = InProcessRunner(Path(hostile_project["root"]))(*(arg.format(**hostile_project) if arg.startswith("{") else arg for arg in args))
    assert result.code in (0, 1, 2), result.stderr[-2000:]
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for text in (result.stdout, result.stderr):
        assert [control for control in RAW_CONTROLS if control in text] == []
        assert [line for line in text.splitlines() if line.lstrip().startswith("::")] == []  # no CI runner's command
    assert shown in getattr(result, stream), f"{command}: the value was not shown as it is"


@pytest.mark.parametrize(
    "args",
    [["run", "ci.hostile", "--provider", "hostile", "--json"], ["show", "{unverified}", "--json"], ["history", "ci.hostile", "--json"]],
    ids=["run", "show", "history"],
)
def test_json_carries_the_hostile_value_exactly_and_nothing_a_terminal_acts_on(hostile_project: dict[str, str], args: list[str]) -> None:
    result = InProcessRunner(Path(hostile_project["root"]))(*(arg.format(**hostile_project) if arg.startswith("{") else arg for arg in args))
    assert result.code in (0, 1), result.stderr[-2000:]
    assert [control for control in RAW_CONTROLS if control in result.stdout] == []
    assert HOSTILE_TEXT in _strings(result.json()), "the exact value parses back"


def _strings(value: object) -> str:
    """Every string in a JSON value, one a line."""
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in [*value, *value.values()])
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return value if isinstance(value, str) else ""


# --- the boundaries are the only writers ---------------------------------------------------------

CLI = Path(__file__).resolve().parents[2] / "core" / "evalkit" / "cli"
#: The modules allowed to write to a stream themselves, and why.
WRITERS = {
    "console.py": "the boundary for people",
    "json_output.py": "the boundary for --json",
    "stdout.py": "keeps evalkit's standard output apart from what plugins print",
    "__init__.py": "click's help and version (text evalkit wrote)",
    "schema_cmd.py": "prints the JSON Schema file shipped in the package, byte for byte",
    "shell_completion.py": "prints a shell script evalkit wrote, and names filtered to a safe alphabet",
}
STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}


def _writes_around_the_console(tree: ast.AST) -> list[str]:
    """Where a module prints (``print``), writes to a standard stream (``sys.stdout.write``,
    ``stdout().write``), makes a rich console or reads markup itself."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"line {node.lineno}: print()")
        elif isinstance(node, ast.Attribute) and node.attr == "write":
            target = node.value
            to_stream = (isinstance(target, ast.Attribute) and target.attr in STREAMS) or (
                isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "stdout"
            )
            if to_stream:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("rich.console", "rich.markup"):
            found.append(f"line {node.lineno}: from {node.module} import …")
        elif isinstance(node, ast.Attribute) and node.attr == "from_markup":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_of_the_cli_writes_around_the_output_boundaries() -> None:
    """A new message goes through console() (or print_json): printed any other way, what it quotes
    from a plugin, a set or the store would reach the terminal unescaped and unscrubbed."""
    offenders = {
        path.name: found
        for path in sorted(CLI.glob("*.py"))
        if path.name not in WRITERS and (found := _writes_around_the_console(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


# --- no import circle among the rendering modules ------------------------------------------------


def _imports(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that the module at ``path`` imports, in functions too (not for
    type checkers only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and id(node) not in checking_only and node.level == 1:
            names = [node.module] if node.module else [alias.name for alias in node.names]
            found.update(f"{package}.{name.split('.')[0]}" for name in names)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: each a path that comes back to where it started."""
    circles: list[list[str]] = []

    def walk(module: str, path: list[str]) -> None:
        for imported in sorted(graph.get(module, ())):
            if imported == path[0]:
                circles.append([*path, imported])
            elif imported not in path and imported > path[0]:  # each circle once, from its smallest module
                walk(imported, [*path, imported])

    for start in sorted(graph):
        walk(start, [start])
    return circles


def test_the_cli_modules_import_each_other_in_no_circle() -> None:
    """cli.common, cli.render and cli.comparison_view imported each other (closed by imports
    deferred into functions); the console and the JSON writer now sit below all of them."""
    graph = {f"evalkit.cli.{path.stem}": _imports(path, "evalkit.cli") for path in CLI.glob("*.py") if path.stem != "__init__"}
    assert _circles(graph) == []


def test_a_circle_is_found_when_there_is_one() -> None:
    circles = _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert circles == [["a", "b", "c", "a"]]

