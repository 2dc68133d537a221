"""A word from the configuration, a plugin or the command line is named in a message through
``wording.quoted`` (a word) or ``wording.table_key`` (a table of evalkit.toml): a line break or an
escape sequence in it shows as its escape, never as a line of its own that reads as evalkit's."""

from __future__ import annotations

from pathlib import Path

import pytest

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
