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


#: Each command line: its words, its click command's module and the declaration it reads.
COMMANDS = {
    "run": (("run", "evalkit.smoke"), "evalkit.cli.run_cmd", "PromptRunSettings", "evaluate_set"),
    "retrieval": (
        ("retrieval", "evalkit_stdlib.docs", "evalkit.lexical", "--deployment", "demo"), "evalkit.cli.retrieval_cmd",
        "RetrievalRunSettings", "evaluate_retrieval",
    ),
}  # fmt: skip


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_keyword_the_command_line_gives_is_fed_by_a_parameter_the_command_declares(command: str) -> None:
    """Every field of the declaration the command line gives names a click parameter of the command
    (as click names it) and a conversion the command line has: an option renamed on one side only —
    ``option="wait-ready"`` for click's ``wait_ready`` — is refused here, naming the field and the
    parameter it is close to."""
    import importlib

    from evalkit.cli.run_keywords import command_problems
    from evalkit.run import settings

    _, module, declaration_name, _ = COMMANDS[command]
    declaration = getattr(settings, declaration_name)
    parameters = [param.name for param in importlib.import_module(module).command.params]
    assert command_problems(declaration, command, parameters) == []

    @attrs.frozen(kw_only=True)
    class Misnamed(declaration):  # type: ignore[valid-type,misc]
        label: str | None = settings.setting(None, "a label kept with the run", option="label-text")
        concurrency: int | None = settings.setting(None, "in flight at once", option="concurrency", conversion="threads")

    assert command_problems(Misnamed, command, parameters) == [
        f'Misnamed.label is fed by the parameter "label-text", which `evalkit {command}` does not declare.'
        ' Did you mean "label"?',
        'Misnamed.concurrency names the conversion "threads", which evalkit.cli.run_keywords.CONVERSIONS does not hold.',
    ]


def test_a_keyword_declared_with_neither_an_option_nor_library_only_is_refused() -> None:
    """A field that says neither how the command line gives it nor that it is library-only was a
    keyword the command line silently never gave; one that says both contradicts itself."""
    from evalkit.run import settings

    @attrs.frozen(kw_only=True)
    class Undecided(settings.RetrievalRunSettings):
        tone: str | None = settings.setting(None, "a tone")
        colour: str | None = settings.setting(None, "a colour", option="colour", library_only="built in code")

    assert settings.command_line_problems(Undecided) == [
        "Undecided.tone says neither the option or conversion the command line gives it by, nor library_only",
        "Undecided.colour says both how the command line gives it and that it is library-only",
    ]
    assert settings.command_line_problems(settings.PromptRunSettings) == []


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_keyword_declared_with_an_option_reaches_the_library_call_with_no_edit_of_the_command(
    command: str, cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A setting added to the declaration with the ``option`` that feeds it (and that option added
    to the command) reaches the library call as given, with its conversion: the commands read their
    keywords from the declaration, they do not pass each by hand."""
    import importlib

    import click
    from evalkit.run import library, settings

    words, module, declaration_name, function = COMMANDS[command]
    declaration = getattr(settings, declaration_name)

    @attrs.frozen(kw_only=True)
    class WithTone(declaration):  # type: ignore[valid-type,misc]
        tone: str | None = settings.setting(None, "the tone of the answers", option="tone")
        patience: float | str = settings.setting(0.0, "how long to wait", option="wait_ready", conversion="wait_ready")

    monkeypatch.setattr(settings, declaration_name, WithTone)
    click_command = importlib.import_module(module).command
    added = [click.Option(["--tone"], metavar="TONE"), *([] if command == "run" else [click.Option(["--wait-ready"])])]
    monkeypatch.setattr(click_command, "params", [*click_command.params, *added])
    received: dict[str, object] = {}

    def capture(*leading: object, **keywords: object) -> None:
        received.update(keywords)
        raise UsageError("captured")

    monkeypatch.setattr(library, function, capture)
    done = cli(*words, "--tone", "dry", "--wait-ready", "90s", "--database", "sqlite:///:memory:")
    assert done.code == 2 and "captured" in done.stderr, done.stderr
    assert received["tone"] == "dry" and received["patience"] == 90.0
    assert set(received) == {field.name for field in attrs.fields(WithTone) if not field.metadata["library_only"]}


def test_a_command_whose_declaration_names_a_parameter_it_lacks_stops_before_the_library_is_called(
    cli: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reading refuses, as an evalkit bug, a declaration naming a parameter the command does not
    declare — before anything is asked or stored — instead of calling the library without it."""
    from evalkit.run import library, settings

    @attrs.frozen(kw_only=True)
    class Misnamed(settings.PromptRunSettings):
        tone: str | None = settings.setting(None, "the tone of the answers", option="tone")

    monkeypatch.setattr(settings, "PromptRunSettings", Misnamed)
    called: list[object] = []
    monkeypatch.setattr(library, "evaluate_set", lambda *leading, **keywords: called.append(keywords))
    done = cli("run", "evalkit.smoke", "--database", "sqlite:///:memory:")
    assert done.code == 3 and not called, done.stderr
    assert 'Misnamed.tone is fed by the parameter "tone", which `evalkit run` does not declare.' in done.stderr
