"""A count is worded in one place (``evalkit.wording.counted``): "1 prompt", never "1 prompts"."""

from __future__ import annotations

from pathlib import Path

from evalkit.wording import counted, figure


def test_counted_takes_the_singular_for_one_and_groups_thousands_when_asked() -> None:
    assert counted(1, "prompt") == "1 prompt" and counted(0, "prompt") == "0 prompts"
    assert counted(12_000, "labelled item", grouped=True) == "12,000 labelled items" and counted(12_000, "run") == "12000 runs"
    assert counted(2, "repository") == "2 repositories"


def test_a_figure_groups_thousands_and_turns_scientific_where_a_cost_does_even_past_the_int_digit_limit() -> None:
    assert figure(0) == "0" and figure(12_000) == "12,000" and figure(299.6) == "300" and figure(10**15 - 1) == "999,999,999,999,999"
    assert figure(6 * (2**63 - 1)) == "5.5340E+19" or figure(6 * (2**63 - 1)) == "5.53402E+19"
    assert figure(10**400) == "1E+400" and figure(3 * 10**5000) == "3E+5000"  # str() of it raises; a plan printed 401 digits


def test_validate_and_plan_word_a_set_of_one_prompt_in_the_singular(evalkit_cli, project: Path) -> None:
    # `evalkit validate` printed "ok  set a.one (1 prompts)", `evalkit plan` "a.one (1 cases)" and "1 answers"
    (project / "evals").mkdir()
    (project / "evals" / "one.yaml").write_text("identifier: a.one\nname: One\nprompts:\n  - id: x\n    prompt: hi\n    reference: x\n")
    (project / "evalkit.toml").write_text('[sets]\npaths = ["evals/*.yaml"]\n')
    checked = evalkit_cli("validate")
    assert checked.code == 0 and "ok  set a.one (1 prompt)\n" in checked.stdout, checked.stdout
    planned = evalkit_cli("plan", "a.one")
    assert planned.code == 0, planned.stderr
    assert "a.one (1 case)\n" in planned.stdout and "1 answer (1 per case)" in planned.stdout, planned.stdout
    assert "with this 1 case" in planned.stdout and "for 1 case;" in planned.stdout, planned.stdout


def test_a_noun_ending_in_a_consonant_and_y_takes_ies() -> None:
    # the openai adapter's note said "2 replys from http://… reported a usage evalkit cannot count"
    assert counted(2, "reply") == "2 replies" and counted(3, "entry") == "3 entries"
    assert counted(2, "key") == "2 keys" and counted(1, "reply") == "1 reply"


def test_an_argument_is_named_by_the_front_end_that_holds_the_naming() -> None:
    """A Python caller gets the keyword, the command line its option (``option`` its whole phrase),
    another front end (the pytest plugin) its own word, and the keyword for an argument it has no
    word for; the command line's ``option`` phrase is never another front end's."""
    from evalkit.wording import argument, arguments_named

    assert (argument("path", option="--config"), argument("run_id", "ID")) == ("path", "run_id=ID")
    with arguments_named():
        assert (argument("path", option="--config"), argument("run_id", "ID")) == ("--config", "--run-id ID")
    with arguments_named({"path": "--evalkit-config"}.get):
        assert argument("path", option="--config") == "--evalkit-config"
        assert argument("path", "PATH", option="--config PATH") == "--evalkit-config PATH"
        assert argument("run_id", "ID", option="--resume ID") == "run_id=ID"
    assert argument("path", option="--config") == "path"


def test_no_message_counts_with_a_plural_in_brackets() -> None:
    """A message says "1 problem" or "3 problems" (:func:`evalkit.wording.counted`), never
    "3 problem(s)": the contract kit's ``AssertionError`` said "(1 problem(s))", the pytest plugin's
    regression gate "2 case(s) errored", the replay generator "holds 1 model turn(s)", a set
    file's "[sets] has unknown key(s)", a PCRE pattern's "unsupported PCRE modifier(s)". Every
    string of evalkit's code and built-in plugins but docstrings is read."""
    import ast
    import re

    root = Path(__file__).resolve().parent.parent
    bracketed = re.compile(r"[A-Za-z]\((?:s|es)\)")
    found = []
    for path in sorted([*(root / "core" / "evalkit").rglob("*.py"), *(root / "plugins" / "evalkit_plugins").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        }  # fmt: skip
        found += [
            f"{path.relative_to(root)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings and bracketed.search(node.value)
        ]
    assert not found, "\n".join(found)
