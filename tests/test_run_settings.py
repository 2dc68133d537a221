"""The keywords of ``evaluate_set`` and ``evaluate_retrieval``, declared once
(:mod:`evalkit.run.settings`): each call takes every keyword its declaration has and nothing else,
hands them to the run's plan whole, and the command line gives every one but those declared
library-only — so a setting added to the declaration cannot be missing from the signature, the
checks, the plan or the command line without a test here failing."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from evalkit.errors import UnknownKeywordError, UsageError
from evalkit.run.settings import PromptRunSettings, RetrievalRunSettings

#: Each library call: its name, its declaration, the arguments before its keywords, and the
#: keywords a run of it needs here besides its declaration's defaults.
CALLS = {
    "evaluate_set": (PromptRunSettings, ("evalkit.smoke",), {"concurrency": 2}),
    "evaluate_retrieval": (RetrievalRunSettings, ("evalkit_stdlib.docs", "evalkit.lexical"), {"deployment": "demo", "k": 5}),
}


class _Planned(Exception):
    """Raised by the lifecycle stand-in with the plan it was given."""

    def __init__(self, plan: object) -> None:
        super().__init__("planned")
        self.plan = plan


def _planned(plan: object, repository: object) -> None:
    raise _Planned(plan)


@pytest.mark.parametrize("call", list(CALLS))
def test_every_declared_keyword_is_taken_by_its_call_and_reaches_the_plan(
    call: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every field of the declaration, each given explicitly (the callbacks as functions of their
    own), is a keyword of the call's signature and of its docstring's list, and arrives in the plan
    the lifecycle is handed."""
    import evalkit
    from evalkit.run import library

    declaration, leading, needed = CALLS[call]
    function = getattr(evalkit, call)
    fields = attrs.fields_dict(declaration)
    parameters = inspect.signature(function).parameters
    keywords = {name: p for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert {name: p.default for name, p in keywords.items()} == {name: f.default for name, f in fields.items()}
    assert len(parameters) == len(leading) + len(fields)
    listed = function.__doc__.split("Keywords (declared by", 1)[1]
    assert [line.split("``")[1].split("=")[0] for line in listed.splitlines() if "* ``" in line] == list(fields)

    def callback(*_: object) -> None:
        return None

    given = {name: field.default for name, field in fields.items()}
    given |= {name: callback for name in fields if name.startswith("on_")}
    given |= {"database": f"sqlite:///{tmp_path / 'results.db'}", "cwd": tmp_path, "label": "given", "keep_cases": False}
    given |= {"privacy": "full", "fail_on_new_failures": True, "resumed_options": [["--label", "given"]], **needed}
    monkeypatch.setattr(library, "execute", _planned)
    with pytest.raises(_Planned) as planned:
        function(*leading, **given)
    settings = planned.value.plan.settings
    assert type(settings) is declaration
    assert attrs.asdict(settings, recurse=False) == given


@pytest.mark.parametrize(
    ("call", "given", "said"),
    [
        ("evaluate_set", {"concurency": 4}, 'there is no keyword argument "concurency". Did you mean "concurrency"?'),
        ("evaluate_set", {"grader_option": {}}, 'there is no keyword argument "grader_option". Did you mean "grader_options"?'),
        ("evaluate_set", {"colour": "red"}, 'there is no keyword argument "colour". help(evalkit.evaluate_set) lists the 34 it takes.'),
        ("evaluate_retrieval", {"relevance_treshold": 2}, 'there is no keyword argument "relevance_treshold". Did you mean "relevance_threshold"?'),
        ("evaluate_retrieval", {"repeats": 2}, 'there is no keyword argument "repeats". help(evalkit.evaluate_retrieval) lists the 24 it takes.'),
    ],
)  # fmt: skip
def test_an_unknown_keyword_is_refused_naming_it_and_the_one_it_is_close_to(
    call: str, given: dict, said: str, tmp_path: Path
) -> None:
    """``evaluate_set(concurency=4)`` was Python's own ``TypeError: evaluate_set() got an unexpected
    keyword argument 'concurency'``, naming nothing it takes. Refused as a usage error (and still a
    ``TypeError``) naming the keyword and the declared one it is close to; nothing is stored."""
    import evalkit

    _, leading, needed = CALLS[call]
    with pytest.raises(UnknownKeywordError) as refused:
        getattr(evalkit, call)(*leading, database=f"sqlite:///{tmp_path / 'results.db'}", cwd=tmp_path, **needed, **given)
    assert str(refused.value) == f"{call}: {said}"
    assert isinstance(refused.value, TypeError) and isinstance(refused.value, UsageError)
    assert refused.value.exit_code == 2
    assert not (tmp_path / "results.db").exists()


@pytest.mark.parametrize(
    ("command", "declaration"),
    [
        (("run", "evalkit.smoke", "--grader", "decision", "--judge", "judge"), PromptRunSettings),
        (("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo"), RetrievalRunSettings),
    ],
)
def test_the_command_line_gives_every_keyword_not_declared_library_only(
    command: tuple[str, ...], declaration: type, cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``evalkit run`` and ``evalkit retrieval`` call the library with every keyword of its
    declaration but those it declares ``library_only`` (a generator object, the folder to work from):
    a setting declared and given no option on the command line fails here."""
    from evalkit.run import library

    function = {PromptRunSettings: "evaluate_set", RetrievalRunSettings: "evaluate_retrieval"}[declaration]
    received: dict[str, object] = {}

    def capture(*leading: object, **keywords: object) -> None:
        received.update(keywords)
        raise UsageError("captured")

    monkeypatch.setattr(library, function, capture)
    done = cli(*command, "--database", "sqlite:///:memory:")
    assert done.code == 2 and "captured" in done.stderr, done.stderr
    declared = {field.name for field in attrs.fields(declaration) if not field.metadata["library_only"]}
    assert set(received) == declared
