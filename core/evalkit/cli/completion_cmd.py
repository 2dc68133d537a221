"""``evalkit completion bash|zsh|fish``: a shell completion script.

Commands and options are written into the script from the parser itself; set, provider, grader,
retriever and deployment names are asked of ``evalkit completion --names KIND`` when the user
presses Tab, so they follow the installed plugins and the configuration of the folder completed in.
"""

from __future__ import annotations

import argparse

from .stdout import stdout

# typing is imported only for type checkers: the CLI's start-up budget is tight.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELLS = ("bash", "zsh", "fish")
NAME_KINDS = ("sets", "questions", "providers", "graders", "retrievers", "deployments")
#: Options whose value is a name of a kind (completed dynamically).
VALUE_KINDS = {"--provider": "providers", "--judge": "providers", "--grader": "graders", "--deployment": "deployments"}


def register(subparsers: Any) -> None:
    """Add the ``completion`` command."""
    parser = subparsers.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description=(
            "Print a completion script for SHELL. Install it with, for example: "
            "`evalkit completion bash > ~/.local/share/bash-completion/completions/evalkit`, "
            "`evalkit completion zsh > \"${fpath[1]}/_evalkit\"` or "
            "`evalkit completion fish > ~/.config/fish/completions/evalkit.fish`. Set and provider names are "
            "completed from the installed plugins and the configuration found where you complete."
        ),
    )
    parser.add_argument("shell", nargs="?", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    parser.add_argument("--names", choices=NAME_KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--config", metavar="PATH", help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Print the script, or (for the script itself) the names of one kind."""
    if args.names:
        for name in completion_names(args.names, args.config):
            stdout().write(name + "\n")
        return 0
    if not args.shell:
        from ..errors import UsageError

        raise UsageError("name a shell: evalkit completion bash, evalkit completion zsh or evalkit completion fish")
    from . import build_parser

    parser = build_parser()
    script = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[args.shell](command_options(parser))
    stdout().write(script)
    return 0


def completion_names(kind: str, config_path: str | None = None) -> list[str]:
    """The names of ``kind`` a user may type here (never raises: completion must stay quiet).

    Only names made of letters, digits and ``_ . : @ + / , % -`` are offered. bash's ``compgen
    -W`` (zsh's too, through bashcompinit) expands the words it is given: a provider named
    ``$(touch /tmp/x)`` in a cloned project's evalkit.toml, or a set id in its set files, ran that
    command when the user pressed Tab. A name with other characters can still be typed.
    """
    import re

    try:
        names = _names(kind, config_path)
    except BaseException:  # noqa: BLE001 - a plugin's failure (or sys.exit) must not reach the shell
        return []
    safe = re.compile(r"[\w.:@+/,%-]+")
    return [name for name in names if isinstance(name, str) and safe.fullmatch(name) and not name.startswith("-")]


def _names(kind: str, config_path: str | None) -> list[str]:
    from .. import registry

    if kind in ("graders", "retrievers"):
        return sorted({r.name for r in registry.records(f"evalkit.{kind}")})
    from ..config import load_config

    config = load_config(config_path)
    if kind == "providers":
        return [*config.providers, *sorted({r.name for r in registry.records("evalkit.generators")})]
    if kind == "deployments":
        return sorted(config.deployments)
    from ..catalog import prompt_set_catalog, question_set_catalog

    catalog = prompt_set_catalog(config=config) if kind == "sets" else question_set_catalog(config=config)
    return catalog.identifiers()


def command_options(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """``{"run": ["--provider", …], "db status": […], "": [top-level options]}`` from the parser."""
    found: dict[str, list[str]] = {}

    def visit(prefix: str, current: argparse.ArgumentParser) -> None:
        found[prefix] = sorted(
            {o for action in current._actions if action.help is not argparse.SUPPRESS for o in action.option_strings if o.startswith("--")}
        )
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    visit(f"{prefix} {name}".strip(), sub)

    visit("", parser)
    return found


def _commands(options: dict[str, list[str]], parent: str = "") -> list[str]:
    depth = len(parent.split()) + 1 if parent else 1
    return sorted(k.split()[-1] for k in options if k and len(k.split()) == depth and k.startswith(parent))


def bash_script(options: dict[str, list[str]]) -> str:
    """The bash completion function (zsh reuses it through bashcompinit)."""
    cases = "\n".join(f'        "{cmd}") opts="{" ".join(opts)}" ;;' for cmd, opts in options.items() if cmd)
    nested = "\n".join(
        f'        "{cmd}") subs="{" ".join(_commands(options, cmd))}" ;;' for cmd in options if cmd and _commands(options, cmd)
    )
    values = "\n".join(f'        {flag}) kind={kind} ;;' for flag, kind in VALUE_KINDS.items())
    return f'''# evalkit completion for bash (generated by `evalkit completion bash`)
_evalkit_names() {{
    local config=""
    local i
    for ((i = 1; i < ${{#COMP_WORDS[@]}}; i++)); do
        [[ "${{COMP_WORDS[i]}}" == "--config" ]] && config="--config ${{COMP_WORDS[i+1]}}"
    done
    "${{COMP_WORDS[0]}}" completion --names "$1" $config 2>/dev/null
}}

_evalkit() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local cmd="" sub="" i word positional=0 kind="" opts="" subs=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        case "$word" in
            --config|--database) ((i++)); continue ;;
            -*) continue ;;
        esac
        if [[ -z "$cmd" ]]; then cmd="$word"
        elif [[ -z "$sub" && ( "$cmd" == "db" || "$cmd" == "models" || "$cmd" == "list" || "$cmd" == "baseline" ) ]]; then sub="$word"
        else ((positional++)); fi
    done
    case "$prev" in
{values}
        --config) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ -n "$kind" ]]; then
        COMPREPLY=($(compgen -W "$(_evalkit_names "$kind")" -- "$cur")); return
    fi
    if [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "{" ".join(_commands(options))} {" ".join(options[""])}" -- "$cur")); return
    fi
    local key="$cmd"
    [[ -n "$sub" ]] && key="$cmd $sub"
    case "$key" in
{cases}
    esac
    case "$cmd" in
{nested}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur")); return
    fi
    if [[ -n "$subs" && -z "$sub" ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur")); return
    fi
    case "$cmd" in
        run|history) [[ $positional -eq 0 ]] && kind=sets ;;
        retrieval) if [[ $positional -eq 0 ]]; then kind=questions; elif [[ $positional -eq 1 ]]; then kind=retrievers; fi ;;
        completion) [[ $positional -eq 0 ]] && COMPREPLY=($(compgen -W "{" ".join(SHELLS)}" -- "$cur")) && return ;;
    esac
    if [[ -n "$kind" ]]; then
        COMPREPLY=($(compgen -W "$(_evalkit_names "$kind")" -- "$cur"))
    fi
}}
complete -F _evalkit evalkit
'''


def zsh_script(options: dict[str, list[str]]) -> str:
    """zsh: the bash function through zsh's bashcompinit."""
    return "#compdef evalkit\n# evalkit completion for zsh (generated by `evalkit completion zsh`)\n" + (
        "autoload -U +X bashcompinit && bashcompinit\n" + bash_script(options)
    )


def fish_script(options: dict[str, list[str]]) -> str:
    """fish completions: commands, each command's options, and names asked of evalkit."""
    lines = [
        "# evalkit completion for fish (generated by `evalkit completion fish`)",
        "complete -c evalkit -f",
        f'complete -c evalkit -n "__fish_use_subcommand" -a "{" ".join(_commands(options))}"',
    ]
    for cmd, opts in options.items():
        if not cmd or " " in cmd:
            continue
        for sub in _commands(options, cmd):
            lines.append(f'complete -c evalkit -n "__fish_seen_subcommand_from {cmd}" -a "{sub}"')
        for opt in opts:
            lines.append(f'complete -c evalkit -n "__fish_seen_subcommand_from {cmd}" -l {opt[2:]}')
    for flag, kind in VALUE_KINDS.items():
        lines.append(f'complete -c evalkit -l {flag[2:]} -x -a "(evalkit completion --names {kind} 2>/dev/null)"')
    lines += [
        'complete -c evalkit -n "__fish_seen_subcommand_from run history" -a "(evalkit completion --names sets 2>/dev/null)"',
        'complete -c evalkit -n "__fish_seen_subcommand_from retrieval" -a "(evalkit completion --names questions 2>/dev/null)"',
        'complete -c evalkit -n "__fish_seen_subcommand_from retrieval" -a "(evalkit completion --names retrievers 2>/dev/null)"',
        f'complete -c evalkit -n "__fish_seen_subcommand_from completion" -a "{" ".join(SHELLS)}"',
    ]
    return "\n".join(lines) + "\n"
