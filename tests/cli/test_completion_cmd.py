"""`evalkit completion SHELL` prints a working script; names come from the plugins and the config."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def complete(script: Path, project: Path, *words: str) -> list[str]:
    """What bash offers for ``evalkit WORDS`` (the last word is the one being completed).

    Processes of their own: bash runs the script, and the script runs the installed ``evalkit``
    console script for set and provider names, as on a user's machine."""
    bindir = str(Path(sys.executable).parent)
    words_text = " ".join(f'"{w}"' for w in ("evalkit", *words))
    done = subprocess.run(
        ["bash", "-c", f'source "{script}"; COMP_WORDS=({words_text}); COMP_CWORD={len(words)}; _evalkit; printf "%s\\n" "${{COMPREPLY[@]}}"'],
        cwd=project, capture_output=True, text=True, env={"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(project)}, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_options_sets_and_configured_providers(evalkit_cli, project: Path) -> None:
    (project / "evalkit.toml").write_text('[providers.my-app]\nadapter = "reference"\n')
    printed = evalkit_cli("completion", "bash")
    assert printed.code == 0 and "complete -F _evalkit evalkit" in printed.stdout
    script = project / "evalkit.bash"
    script.write_text(printed.stdout)
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    assert complete(script, project, "hist") == ["history"]
    assert "arith.basic" in complete(script, project, "run", "")
    providers = complete(script, project, "run", "arith.basic", "--provider", "")
    assert providers[0] == "my-app" and {"openai", "reference", "replay"} <= set(providers)
    assert complete(script, project, "run", "x", "--provi") == ["--provider"]
    assert complete(script, project, "db", "") == ["prune", "status", "upgrade"]
    assert "evalkit.lexical" in complete(script, project, "retrieval", "evalkit_stdlib.docs", "")


def test_zsh_and_fish_scripts_and_the_name_lists(evalkit_cli, project: Path) -> None:
    zsh = evalkit_cli("completion", "zsh")
    assert zsh.code == 0 and zsh.stdout.startswith("#compdef evalkit") and "bashcompinit" in zsh.stdout
    fish = evalkit_cli("completion", "fish")
    assert fish.code == 0 and '-a "(evalkit completion --names sets 2>/dev/null)"' in fish.stdout
    (project / "evalkit.toml").write_text('[deployments.staging.retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\n')
    assert evalkit_cli("completion", "--names", "deployments").stdout == "staging\n"
    assert "deterministic" in evalkit_cli("completion", "--names", "graders").stdout.split()
    missing = evalkit_cli("completion")
    assert missing.code == 2 and "evalkit completion bash" in missing.stderr
    wrong = evalkit_cli("completion", "bsh")
    assert wrong.code == 2 and 'Did you mean "bash"?' in wrong.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_names_from_an_untrusted_project_never_run_as_shell_code_on_tab(evalkit_cli, project: Path, tmp_path: Path) -> None:
    """bash's compgen -W expands its words: a provider or deployment named `$(touch …)` in a
    cloned project's evalkit.toml ran that command when the user pressed Tab."""
    witness = tmp_path / "pwned"
    evil = f"$(touch${{IFS}}{witness})"
    (project / "evalkit.toml").write_text(
        f'[providers."{evil}"]\nadapter = "reference"\n[providers.fine-app]\nadapter = "reference"\n'
        f'[deployments."`touch {witness}`".retrievers."evalkit.lexical"]\ncorpus = "c.jsonl"\n'
    )
    names = evalkit_cli("completion", "--names", "providers").stdout.split("\n")
    assert "fine-app" in names and not any("$" in name for name in names)
    assert evalkit_cli("completion", "--names", "deployments").stdout == ""
    script = project / "evalkit.bash"
    script.write_text(evalkit_cli("completion", "bash").stdout)
    offered = complete(script, project, "run", "arith.basic", "--provider", "")
    assert "fine-app" in offered
    complete(script, project, "retrieval", "evalkit_stdlib.docs", "--deployment", "")
    assert not witness.exists()
