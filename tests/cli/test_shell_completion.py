"""Shell completion is click's: `evalkit completion SHELL` prints its script, and the candidates come
from the command tree, the installed plugins, the configuration and the store where the user
presses Tab."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import FishComplete, ZshComplete
from evalkit.cli.app import evalkit

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def complete(script: Path, project: Path, *words: str) -> list[str]:
    """What bash offers for ``evalkit WORDS`` (the last word is the one being completed).

    Processes of their own: bash runs the script, and the script runs the installed ``evalkit``
    console script (with ``_EVALKIT_COMPLETE=bash_complete``), as on a user's machine. Nothing may
    reach the terminal but the candidates: bash's standard error must stay empty."""
    bindir = str(Path(sys.executable).parent)
    words_text = " ".join(f"'{w}'" for w in ("evalkit", *words))
    done = subprocess.run(
        ["bash", "-c", f'source "{script}"; COMP_WORDS=({words_text}); COMP_CWORD={len(words)}; _evalkit_completion evalkit; printf "%s\\n" "${{COMPREPLY[@]}}"'],
        cwd=project, capture_output=True, text=True, env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(project)}, timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.fixture
def bash_script(evalkit_cli, project: Path) -> Path:  # noqa: ANN001
    printed = evalkit_cli("completion", "bash")
    assert printed.code == 0 and "complete -o nosort -F _evalkit_completion evalkit" in printed.stdout
    script = project / "evalkit.bash"
    script.write_text(printed.stdout)
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    return script


@needs_bash
def test_bash_completes_commands_options_sets_plugins_configured_names_and_run_ids(evalkit_cli, project: Path, bash_script: Path) -> None:
    (project / "evalkit.toml").write_text(
        '[providers.my-app]\nadapter = "reference"\n[deployments.staging.retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\n'
    )
    assert complete(bash_script, project, "hist") == ["history"]
    assert "arith.basic" in complete(bash_script, project, "run", "")
    providers = complete(bash_script, project, "run", "arith.basic", "--provider", "")
    assert providers[0] == "my-app" and {"openai", "reference", "replay"} <= set(providers)
    assert complete(bash_script, project, "run", "x", "--provi") == ["--provider"]
    assert complete(bash_script, project, "run", "x", "--grader", "d") == ["decision", "deterministic"]
    assert complete(bash_script, project, "db", "") == ["prune", "status", "upgrade"]
    assert "evalkit.lexical" in complete(bash_script, project, "retrieval", "evalkit_stdlib.docs", "")
    assert complete(bash_script, project, "retrieval", "evalkit_stdlib.docs", "--deployment", "") == ["staging"]
    assert complete(bash_script, project, "--config", "evalkit.toml", "run", "x", "--judge", "my") == ["my-app"]
    assert complete(bash_script, project, "show", "") == []  # no store here yet: none is created
    assert not (project / ".evalkit").exists()
    run_id = json.loads(evalkit_cli("run", "evalkit.smoke", "--json").stdout)["run_id"]
    assert complete(bash_script, project, "show", "") == [run_id]
    assert complete(bash_script, project, "compare", run_id, "") == [run_id]
    assert complete(bash_script, project, "regrade", "") == [run_id]
    assert complete(bash_script, project, "run", "evalkit.smoke", "--resume", "") == [run_id]


@needs_bash
def test_a_completion_that_fails_offers_nothing_and_prints_nothing(project: Path, bash_script: Path) -> None:
    """A configuration with a mistake, or a plugin that fails, must not put a traceback on the prompt."""
    (project / "evalkit.toml").write_text("providers = [\n")
    assert complete(bash_script, project, "run", "x", "--provider", "") == []
    assert complete(bash_script, project, "run", "") == []
    assert complete(bash_script, project, "lis") == ["list"]


@needs_bash
def test_names_from_an_untrusted_project_never_run_as_shell_code_on_tab(project: Path, tmp_path: Path, bash_script: Path) -> None:
    """A provider or deployment named `$(touch …)` or `*` in a cloned project's evalkit.toml is
    never offered: bash adds candidates unquoted, and an earlier script ran such names on Tab."""
    witness = tmp_path / "pwned"
    evil = f"$(touch${{IFS}}{witness})"
    (project / "evalkit.toml").write_text(
        f'[providers."{evil}"]\nadapter = "reference"\n[providers.fine-app]\nadapter = "reference"\n[providers."*"]\nadapter = "reference"\n'
        f'[deployments."`touch {witness}`".retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\n'
    )
    offered = complete(bash_script, project, "run", "arith.basic", "--provider", "")
    assert "fine-app" in offered and not any("$" in name or "*" in name or name == "evalkit.bash" for name in offered)
    assert complete(bash_script, project, "retrieval", "evalkit_stdlib.docs", "--deployment", "") == []
    assert not witness.exists()


def _candidates(completion: type, monkeypatch: pytest.MonkeyPatch, project: Path, words: str, current: str) -> list[str]:
    """What ``completion`` (click's class for zsh or fish) answers for ``words``, in this process."""
    monkeypatch.chdir(project)
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", current)
    return completion(evalkit, {}, "evalkit", "_EVALKIT_COMPLETE").complete().splitlines()


def test_zsh_completes_through_clicks_completion_class(evalkit_cli, monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    script = evalkit_cli("completion", "zsh")
    assert script.code == 0 and script.stdout.startswith("#compdef evalkit") and "_EVALKIT_COMPLETE=zsh_complete" in script.stdout
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "reference"\n')
    lines = _candidates(ZshComplete, monkeypatch, project, "evalkit run arith.basic --provider m", "4")
    assert lines == ["plain", "my-app", "_"]  # type, value, help (none) for each candidate
    commands = _candidates(ZshComplete, monkeypatch, project, "evalkit ba", "1")
    assert commands[:2] == ["plain", "baseline"] and "accept a run as the baseline" in commands[2]
    sets = _candidates(ZshComplete, monkeypatch, project, "evalkit history arith.", "2")
    assert sets[1::3] == ["arith.basic", "arith.units"]


def test_fish_completes_through_clicks_completion_class(evalkit_cli, monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    script = evalkit_cli("completion", "fish")
    assert script.code == 0 and "complete --no-files --command evalkit" in script.stdout
    assert _candidates(FishComplete, monkeypatch, project, "evalkit retrieval evalkit_stdlib.docs evalkit.", "evalkit.") == ["plain,evalkit.lexical"]
    assert _candidates(FishComplete, monkeypatch, project, "evalkit list ", "") == [
        "plain,plugins", "plain,sets", "plain,questions", "plain,deployments", "plain,providers",
    ]  # fmt: skip


def test_completion_without_a_shell_or_with_a_wrong_one_is_a_usage_error(evalkit_cli) -> None:
    missing = evalkit_cli("completion")
    assert missing.code == 2 and "evalkit completion bash" in missing.stderr
    wrong = evalkit_cli("completion", "bsh")
    assert wrong.code == 2 and 'Did you mean "bash"?' in wrong.stderr
