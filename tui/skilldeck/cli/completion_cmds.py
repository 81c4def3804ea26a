"""``skilldeck completion bash|zsh|fish``: print a shell completion script built from the parser.

The script completes commands, subcommands, options and the values of options with
choices; skill names where a command takes one (``show``, ``load``, ``run``…) and the ids
of open sessions (``session show``, ``--session``…), asked of ``skilldeck completion
--list skills|sessions`` at the time of the Tab (with the ``--root`` options already on the
line). Anything else falls back to the shell's file names. It is generated from the
argument parser itself, so it never lists a command or option that does not exist. Install
it with, for example, ``skilldeck completion bash >
~/.local/share/bash-completion/completions/skilldeck``, ``eval "$(skilldeck completion
zsh)"`` in ``~/.zshrc`` or ``skilldeck completion fish >
~/.config/fish/completions/skilldeck.fish``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from skilldeck.cli.context import CliContext
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.validate import PROFILES

SHELLS = ("bash", "zsh", "fish")
LISTS = ("skills", "sessions")
GLOBAL_OPTIONS = ("--root", "--profile", "--format", "--debug", "--no-color", "--quiet")
_GLOBAL_VALUES = {"--root": "", "--profile": " ".join(PROFILES), "--format": "text json"}
_NOT_SKILLS = ("add", "token", "remote")
"""Commands whose ``name`` or ``--skill`` is no installed skill's (a skill in the source
being added, a token's, a remote skill's)."""
SKILLS, SESSIONS = "@skills", "@sessions"
"""Kinds of value asked of ``skilldeck completion --list`` when completing."""


def register(sub: Any) -> None:
    """Register ``completion``."""
    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print a completion script for SHELL on stdout. bash: save it as "
        "~/.local/share/bash-completion/completions/skilldeck (or source it); zsh: add "
        "'eval \"$(skilldeck completion zsh)\"' to ~/.zshrc; fish: save it as "
        "~/.config/fish/completions/skilldeck.fish. It completes commands, options, skill "
        "names and the ids of open sessions.",
    )
    p.add_argument("shell", nargs="?", choices=SHELLS, help="the shell to complete for")
    p.add_argument("--list", choices=LISTS, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_completion)


def cmd_completion(args: argparse.Namespace, ctx: CliContext) -> int:
    """``skilldeck completion SHELL`` (or ``--list``: the words the scripts ask for)."""
    from skilldeck.cli.main import build_parser

    if args.list is not None:
        return _print_list(ctx, args.list)
    if args.shell is None:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, "name a shell: bash, zsh or fish")
    specs = command_specs(build_parser())
    script = fish_script(specs) if args.shell == "fish" else bash_script(specs)
    if args.shell == "zsh":
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    ctx.out.write(script)
    return 0


def _print_list(ctx: CliContext, kind: str) -> int:
    """One skill name or open session id a line; nothing (and no error) when unavailable:
    a Tab must never print a traceback into the command line."""
    try:
        if kind == "skills":
            words = sorted({s.name for s in ctx.catalog().active()})
        else:
            from skilldeck.core import sessions

            with sessions.SessionStore(settings=ctx.settings) as store:
                words = [s.id for s in store.list(include_ended=False)]
    except (SkilldeckError, OSError):
        return 0
    for word in words:
        ctx.echo(word)
    return 0


@dataclass
class Spec:
    """What to complete after one command path (``"show "``, ``"session load"``).

    Attributes:
        key: ``"COMMAND SUBCOMMAND"`` (the subcommand empty when there is none).
        subs: Subcommand names with their help (a command that has subcommands).
        options: Its options (long form, else short).
        values: Each option that takes a value, with the words it takes (``""``: files;
            :data:`SKILLS` or :data:`SESSIONS`).
        positionals: The words each positional takes, in order.
        repeat: The words of a positional that repeats (``NAME...``), or None.
    """

    key: str
    subs: dict[str, str] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    positionals: list[str] = field(default_factory=list)
    repeat: str | None = None


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name (empty when it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The one-line help of each subcommand of ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: " ".join((a.help or "").split()) for a in action._choices_actions}
    return {}


def _words(action: argparse.Action, command: str) -> str:
    """What a positional or an option value of ``command`` takes."""
    if action.choices is not None and not isinstance(action.choices, dict):
        return " ".join(str(c) for c in action.choices)
    if action.dest == "session" or (command == "session" and action.dest == "id"):
        return SESSIONS
    if action.dest in ("name", "names", "skill") and command not in _NOT_SKILLS:
        return SKILLS
    return ""


def _spec(key: str, parser: argparse.ArgumentParser) -> Spec:
    command = key.split(" ")[0]
    spec = Spec(key, subs=_helps(parser))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            longs = [o for o in action.option_strings if o.startswith("--")]
            spec.options.extend(longs or action.option_strings[:1])
            if action.nargs != 0:
                spec.values.update(dict.fromkeys(action.option_strings, _words(action, command)))
        elif action.nargs in ("*", "+"):
            spec.repeat = _words(action, command)
        elif action.nargs not in (argparse.REMAINDER, argparse.PARSER):
            spec.positionals.append(_words(action, command))
    return spec


def command_specs(parser: argparse.ArgumentParser) -> list[Spec]:
    """A :class:`Spec` for the top level (key ``" "``) and every command and subcommand
    (the global options, accepted everywhere, are in :data:`GLOBAL_OPTIONS`)."""
    specs = [Spec(" ", subs=_helps(parser), options=["--help", "--version"])]
    for name, command in _subcommands(parser).items():
        specs.append(_spec(f"{name} ", command))
        for sub_name, sub_parser in _subcommands(command).items():
            specs.append(_spec(f"{name} {sub_name}", sub_parser))
    for spec in specs:
        spec.options.extend(o for o in GLOBAL_OPTIONS if o not in spec.options)
    return specs


def _bash_cases(specs: list[Spec]) -> dict[str, list[tuple[list[str], str]]]:
    """The ``case`` arms of the bash script, by what they decide: ``values`` (of the option
    before the cursor, by ``"CMD SUB|OPTION"``), ``options`` (by ``"CMD SUB|"``),
    ``positional`` (by ``"CMD SUB|INDEX"``) and ``repeats`` (``"CMD SUB|"`` and any index)."""
    values: dict[str, list[str]] = {}
    options, positional, repeats = [], [], []
    for spec in specs:
        for option, words in spec.values.items():
            values.setdefault(words, []).append(f"{spec.key}|{option}")
        options.append(([f"{spec.key}|"], " ".join(spec.options)))
        if spec.subs:
            positional.append(([f"{spec.key}|0"], " ".join(spec.subs)))
            continue
        for index, words in enumerate(spec.positionals):
            positional.append(([f"{spec.key}|{index}"], words))
        if spec.repeat is not None:
            repeats.append(([f"{spec.key}|"], spec.repeat))
    return {
        "values": [(keys, words) for words, keys in values.items()],
        "options": options,
        "positional": positional,
        "repeats": repeats,
    }


def _bash_arm(patterns: list[str], words: str, *, glob: bool = False) -> str:
    star = "*" if glob else ""
    alternatives = "|".join(f'"{p}"{star}' for p in patterns)
    if words in (SKILLS, SESSIONS):
        return f"        {alternatives}) words=$(_skilldeck_list {words[1:]}) ;;"
    return f'        {alternatives}) words="{words}" ;;'


def bash_script(specs: list[Spec]) -> str:
    """A bash (and, through ``bashcompinit``, zsh) completion function for ``specs``."""
    cases = _bash_cases(specs)
    valued = "|".join(
        [f'"{key}"' for keys, _ in cases["values"] for key in keys]
        + [f'*"|{option}"' for option in _GLOBAL_VALUES]
    )
    has_subs = " ".join(s.key.strip() for s in specs if s.subs and s.key != " ")
    lines = [
        "# bash completion for skilldeck (generated by 'skilldeck completion')",
        "_skilldeck_list() {",
        '    "${_skilldeck_cmd[@]}" "${_skilldeck_roots[@]}" completion --list "$1" 2>/dev/null',
        "}",
        "_skilldeck_valued() {",
        '    case "$1" in',
        f"        {valued}) return 0 ;;",
        "    esac",
        "    return 1",
        "}",
        "_skilldeck() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" sub="" want="" n=0 i w words=""',
        '    _skilldeck_cmd=("${COMP_WORDS[0]}") _skilldeck_roots=()',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        w="${COMP_WORDS[i]}"',
        "        if [[ -n $want ]]; then",
        '            [[ $want == --root ]] && _skilldeck_roots+=(--root "$w")',
        '            want=""; continue',
        "        fi",
        "        case $w in",
        '            -*) _skilldeck_valued "$cmd $sub|$w" && want=$w ;;',
        "            *) if [[ -z $cmd ]]; then cmd=$w",
        f'               elif [[ -z $sub && " {has_subs} " == *" $cmd "* ]]; then sub=$w',
        "               else ((n++)); fi ;;",
        "        esac",
        "    done",
        "    if [[ -n $want ]]; then",
        '        case "$cmd $sub|$want" in',
        *(_bash_arm(keys, words) for keys, words in cases["values"] if words),
        *(f'        *"|{o}") words="{w}" ;;' for o, w in _GLOBAL_VALUES.items() if w),
        "        esac",
        "    elif [[ $cur == -* ]]; then",
        '        case "$cmd $sub|" in',
        *(_bash_arm(keys, words) for keys, words in cases["options"]),
        "        esac",
        "    else",
        '        case "$cmd $sub|$n" in',
        *(_bash_arm(keys, words) for keys, words in cases["positional"] if words),
        *(_bash_arm(keys, words, glob=True) for keys, words in cases["repeats"] if words),
        "        esac",
        "    fi",
        '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        "complete -o default -F _skilldeck skilldeck",
        "",
    ]
    return "\n".join(lines)


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_arm(patterns: list[str], words: str | dict[str, str]) -> list[str]:
    """One ``case`` of the fish script: print ``words`` (with their help, tab-separated,
    when a mapping), ask ``skilldeck completion --list`` or complete file names."""
    head = "        case " + " ".join(_fish_quote(p) for p in patterns)
    if isinstance(words, dict):
        pairs = " ".join(f"{_fish_quote(w)} {_fish_quote(h)}" for w, h in words.items())
        return [head, f"            printf '%s\\t%s\\n' {pairs}"]
    if words in (SKILLS, SESSIONS):
        return [head, f"            __skilldeck_list {words[1:]}"]
    if not words:
        return [head, "            __fish_complete_path $cur"]
    return [head, "            printf '%s\\n' " + " ".join(_fish_quote(w) for w in words.split())]


def _fish_switch(subject: str, arms: list[tuple[list[str], str | dict[str, str]]]) -> list[str]:
    lines = [f'    switch "{subject}"']
    for patterns, words in arms:
        lines.extend(_fish_arm(patterns, words))
    lines.extend(_fish_arm(["*"], ""))
    return [*lines, "    end"]


def _fish_state(valued: list[str], with_subs: list[str]) -> list[str]:
    """The fish functions that read the command line: which command, subcommand, option
    waiting for its value and positional index the cursor is at (as ``_skilldeck``)."""
    return [
        "function __skilldeck_list",
        "    $__skilldeck_cmd $__skilldeck_roots completion --list $argv[1] 2>/dev/null",
        "end",
        "function __skilldeck_valued",
        "    switch $argv[1]",
        "        case " + " ".join(_fish_quote(p) for p in valued),
        "            return 0",
        "    end",
        "    return 1",
        "end",
        "function __skilldeck_state",
        "    set -l tokens (commandline -opc)",
        "    set -g __skilldeck_cmd $tokens[1]",
        "    set -g __skilldeck_roots",
        "    set -e tokens[1]",
        "    set -l cmd ''; set -l sub ''; set -l want ''; set -l n 0",
        "    for w in $tokens",
        '        if test -n "$want"',
        '            test "$want" = --root; and set -a __skilldeck_roots --root $w',
        "            set want ''",
        "            continue",
        "        end",
        "        switch $w",
        "            case '-*'",
        '                __skilldeck_valued "$cmd $sub|$w"; and set want $w',
        "            case '*'",
        '                if test -z "$cmd"',
        "                    set cmd $w",
        '                else if test -z "$sub"; and contains -- $cmd ' + " ".join(with_subs),
        "                    set sub $w",
        "                else",
        "                    set n (math $n + 1)",
        "                end",
        "        end",
        "    end",
        '    echo "$cmd $sub|$want|$n"',
        "end",
    ]


def fish_script(specs: list[Spec]) -> str:
    """A fish completion for ``specs``: the same decisions as :func:`bash_script`, with
    each command's help beside its name."""
    cases = _bash_cases(specs)
    globals_ = [([f"*|{o}"], w) for o, w in _GLOBAL_VALUES.items() if w]
    valued = [key for keys, _ in cases["values"] for key in keys]
    valued += [f"*|{option}" for option in _GLOBAL_VALUES]
    with_subs = [s.key.strip() for s in specs if s.subs and s.key != " "]
    helps = {spec.key: spec.subs for spec in specs if spec.subs}
    positional: list[tuple[list[str], str | dict[str, str]]] = [
        (keys, helps.get(keys[0].rsplit("|", 1)[0]) or words) for keys, words in cases["positional"]
    ]
    repeats = [([k + "*" for k in keys], words) for keys, words in cases["repeats"]]
    lines = [
        "# fish completion for skilldeck (generated by 'skilldeck completion')",
        *_fish_state(valued, with_subs),
        "function __skilldeck_complete",
        "    set -l cur (commandline -ct)",
        "    set -l state (string split '|' -- (__skilldeck_state))",
        "    set -l key $state[1]; set -l want $state[2]; set -l n $state[3]",
        '    if test -n "$want"',
        *_fish_switch("$key|$want", [*cases["values"], *globals_]),
        "    else if string match -q -- '-*' $cur",
        *_fish_switch("$key|", list(cases["options"])),
        "    else",
        *_fish_switch("$key|$n", [*positional, *repeats]),
        "    end",
        "end",
        "complete -c skilldeck -f -a '(__skilldeck_complete)'",
        "",
    ]
    return "\n".join(lines)
