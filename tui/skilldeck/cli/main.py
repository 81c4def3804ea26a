"""Entry point of the ``skilldeck`` command.

Global options (``--root``, ``--profile``, ``--format``, ``--debug``, ``--no-color``,
``-q/--quiet``) are accepted before or after the command. Each command group lives in its own
module with a ``register(subparsers)`` function; commands return an exit code: 0 success,
1 findings, 2 usage or I/O error (``run`` passes on its script's status and uses 125 for its
own errors: :data:`OWN_ERROR_EXIT`). No traceback reaches the user unless ``--debug`` is
given.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from skilldeck import __version__
from skilldeck.cli.advice import with_advice
from skilldeck.cli.context import CliContext
from skilldeck.cli.progress import Progress, wanted
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.safe_text import for_terminal

COMMAND_MODULES = (
    "skilldeck.cli.core_cmds",
    "skilldeck.cli.search_cmds",
    "skilldeck.cli.session_cmds",
    "skilldeck.cli.tools_cmds",
    "skilldeck.cli.serve_cmds",
    "skilldeck.cli.doctor_cmds",
    "skilldeck.cli.install_cmds",
    "skilldeck.cli.exec_cmds",
    "skilldeck.cli.context_cmds",
    "skilldeck.cli.completion_cmds",
    "skilldeck.cli.remote_cmds",
    "skilldeck.cli.usage_cmds",
    "skilldeck.cli.agents_cmds",
    "skilldeck.cli.model_cmds",
)

_VALUE_OPTIONS = {"--root", "--profile", "--format"}
_FLAG_OPTIONS = {"--debug": "debug", "--no-color": "no_color", "--quiet": "quiet", "-q": "quiet"}

OWN_ERROR_EXIT = {"run": 125}
"""Exit status of Skilldeck's own refusals and errors for commands whose other statuses
belong to someone else (``run`` passes on the script's status); 2 for every other command."""


def split_global_options(argv: Sequence[str]) -> tuple[dict[str, object], list[str]]:
    """Pull the global options out of ``argv`` wherever they stand (until ``--``).

    Returns:
        The global values (``root`` is a list, in the order given) and the other arguments.
    """
    found: dict[str, object] = {
        "root": [],
        "profile": None,
        "format": None,
        "debug": False,
        "no_color": False,
        "quiet": False,
    }
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        name, eq, value = arg.partition("=")
        if name in _VALUE_OPTIONS:
            if not eq:
                if i + 1 >= len(args):
                    raise UsageError(f"{name} needs a value")
                value = args[i + 1]
                i += 1
            key = name[2:]
            if key == "root":
                roots = found["root"]
                assert isinstance(roots, list)
                roots.append(value)
            else:
                found[key] = value
        elif arg in _FLAG_OPTIONS:
            found[_FLAG_OPTIONS[arg]] = True
        else:
            rest.append(arg)
        i += 1
    return found, rest


class UsageError(Exception):
    """Bad command-line usage (exit 2).

    Attributes:
        prog: The command whose ``--help`` explains the usage (``skilldeck lint``).
    """

    def __init__(self, message: str, prog: str = "skilldeck") -> None:
        super().__init__(message)
        self.prog = prog


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (--[^\s=]+)")


def did_you_mean(message: str, options: Sequence[str] = ()) -> str:
    """``message`` with "did you mean 'list'?" added when it rejects a near-miss choice or
    an unknown option close to one of ``options``."""
    found = _INVALID_CHOICE.search(message)
    if found is not None:
        word, choices = found.group(1), re.findall(r"'([^']*)'", found.group(2))
    elif (unknown := _UNRECOGNIZED.search(message)) is not None:
        word, choices = unknown.group(1), list(options)
    else:
        return message
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"{message}; did you mean {close[0]!r}?" if close else message


def _command_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the deepest (sub)command ``args`` went through."""
    current = parser
    while True:
        action = next(
            (a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None
        )
        name = getattr(args, action.dest, None) if action is not None else None
        if action is None or name not in action.choices:
            return current
        current = action.choices[name]


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises :class:`UsageError` instead of exiting, and can
    build its epilog only when help is shown (``lazy_epilog``)."""

    lazy_epilog: Callable[[], str] | None = None

    def error(self, message: str) -> None:  # type: ignore[override]
        options = [o for a in self._actions for o in a.option_strings]
        raise UsageError(f"{self.prog}: {did_you_mean(message, options)}", self.prog)

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()


HELP_GROUPS = {
    "core commands": ("search", "list", "show", "load", "read", "prompt", "context"),
    "authoring commands": ("lint", "validate", "rules", "eval", "publish"),
    "install commands": ("add", "install", "check", "verify", "update", "remove", "sync"),
    "session commands": ("session", "run", "allow", "tools"),
    "serving commands": ("serve", "token", "remote"),
    "operating commands": (
        "agents",
        "usage",
        "doctor",
        "config",
        "telemetry",
        "completion",
        "model",
    ),
}
"""The top-level help's sections, as ``gh`` groups its commands (a command in none is
listed under "other commands"; ``tests/cli/test_completion.py`` checks that none is)."""


class _TopParser(_Parser):
    """The ``skilldeck`` parser: its help lists the commands in :data:`HELP_GROUPS`."""

    def format_help(self) -> str:
        sub = next(a for a in self._actions if isinstance(a, argparse._SubParsersAction))
        rows = {a.dest: a for a in sub._choices_actions}
        grouped = {name for names in HELP_GROUPS.values() for name in names}
        sections = [*HELP_GROUPS.items(), ("other commands", tuple(sorted(rows.keys() - grouped)))]
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        for title, names in sections:
            shown = [rows[name] for name in names if name in rows]
            if shown:
                formatter.start_section(title)
                formatter.add_arguments(shown)
                formatter.end_section()
        formatter.start_section("options")
        formatter.add_arguments([a for a in self._actions if a.option_strings])
        formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()


COMMANDS = {
    **dict.fromkeys(
        ("lint", "list", "load", "prompt", "read", "rules", "show", "validate"),
        "skilldeck.cli.core_cmds",
    ),
    **dict.fromkeys(("eval", "search"), "skilldeck.cli.search_cmds"),
    "session": "skilldeck.cli.session_cmds",
    **dict.fromkeys(("telemetry", "tools"), "skilldeck.cli.tools_cmds"),
    **dict.fromkeys(("serve", "token"), "skilldeck.cli.serve_cmds"),
    "doctor": "skilldeck.cli.doctor_cmds",
    **dict.fromkeys(
        ("add", "check", "install", "publish", "remove", "sync", "update", "verify"),
        "skilldeck.cli.install_cmds",
    ),
    **dict.fromkeys(("allow", "config", "run"), "skilldeck.cli.exec_cmds"),
    "context": "skilldeck.cli.context_cmds",
    "completion": "skilldeck.cli.completion_cmds",
    "remote": "skilldeck.cli.remote_cmds",
    "usage": "skilldeck.cli.usage_cmds",
    "agents": "skilldeck.cli.agents_cmds",
    "model": "skilldeck.cli.model_cmds",
}
"""Which module registers each command: a command line that names one builds only that
module's parsers (about 15 ms of imports saved on every command; ``test_cli_contract``
checks this map against the full parser)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser: only the group of ``command`` when it is a known command, else every
    command group (help, completion, a mistyped command)."""
    parser = _TopParser(
        prog="skilldeck",
        description="Find, check, load and govern Agent Skills. "
        "With no command, opens the terminal UI.",
        epilog="Global options (anywhere on the line): --root PATH (repeatable), "
        "--profile default|agentskills|claude-code|shipped, --format text|json, --debug, "
        "--no-color, -q/--quiet (results and errors only).",
    )
    parser.add_argument("-V", "--version", action="version", version=f"skilldeck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = [COMMANDS[command]] if command in COMMANDS else COMMAND_MODULES
    for module_name in modules:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    json_errors = _wants_json(argv)
    own_exit = 2
    try:
        options, rest = split_global_options(argv)
        if not rest:  # the TUI: no command to parse (every command's parser: ~30 ms)
            return _open_tui(CliContext.from_options(options))
        own_exit = OWN_ERROR_EXIT.get(rest[0] if rest else "", 2)
        parser = build_parser(rest[0] if rest else None)
        args, extras = parser.parse_known_args(rest)
        if extras:  # name the command whose --help explains it, not the top level
            _command_parser(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
        ctx = CliContext.from_options(options)
        progress: Progress | None = None
        if args.command is None:
            return _open_tui(ctx)
        if wanted(sys.stderr, quiet=ctx.quiet, output_format=ctx.format):
            progress = ctx.progress = Progress(sys.stderr)
        try:
            code: int = args.func(args, ctx)
        finally:  # erased before any error is reported
            if progress is not None:
                progress.close()
        return _fail_on_invalid(ctx, args.command, code)
    except UsageError as exc:
        error = SkilldeckError(ErrorCode.INVALID_PARAM, str(exc))
        _report_error(error, json_errors, usage=exc.prog)
        return own_exit
    except SkilldeckError as exc:
        _report_error(exc, json_errors)
        return own_exit
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if debug:
            raise
        error = SkilldeckError(
            ErrorCode.INTERNAL_ERROR,
            f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)",
        )
        _report_error(error, json_errors)
        return own_exit


_NO_SKILL_COMMANDS = {
    "config",
    "doctor",
    "rules",
    "telemetry",
    "serve",
    "validate",
    "completion",
    "run",
}
"""Commands ``fail_on_invalid_skills`` leaves alone (no skills read, or their own rule:
``run`` passes on its script's status and refuses invalid skills itself)."""


def _fail_on_invalid(ctx: CliContext, command: str, code: int) -> int:
    """``code``, or 1 (saying why on stderr) when ``fail_on_invalid_skills`` is on and a
    discovered skill is invalid."""
    if code or not ctx.settings.fail_on_invalid_skills or command in _NO_SKILL_COMMANDS:
        return code
    problem = ctx.workspace().invalid_problem()
    if problem is None:
        return code
    ctx.warn(f"error: {problem} (skilldeck validate says why)")
    return 1


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether ``--format json`` (or ``jsonl``) was asked for, even on a line that fails to
    parse."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg.startswith("--format="):
            return arg.partition("=")[2] in ("json", "jsonl")
        if arg == "--format" and i + 1 < len(argv):
            return argv[i + 1] in ("json", "jsonl")
    return False


def _report_error(error: SkilldeckError, json_errors: bool, *, usage: str | None = None) -> None:
    """Say what went wrong: a JSON ``{"error": …}`` document on stdout in JSON mode (scripts
    read stdout), and always one plain line on stderr (for a usage error, ``usage`` names
    the command whose ``--help`` to see)."""
    if json_errors:
        print(json.dumps({"error": error.to_dict()}, indent=2, ensure_ascii=False, default=str))
    message = for_terminal(with_advice(error))
    if usage:
        print(message, file=sys.stderr)
        print(f"See '{usage} --help'.", file=sys.stderr)
    elif error.code is ErrorCode.INTERNAL_ERROR:
        print(f"skilldeck: {message}", file=sys.stderr)
    else:
        print(f"skilldeck: error [{error.code.value}]: {message}", file=sys.stderr)


def _open_tui(ctx: CliContext) -> int:
    """Launch the Textual app (imported only here, so other commands stay fast)."""
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        from skilldeck.cli.core_cmds import print_list

        return print_list(ctx, show_all=False)
    from skilldeck.app.main import run_app

    return run_app(roots=[Path(r) for r in ctx.root_args] or None, profile=ctx.profile)


if __name__ == "__main__":
    raise SystemExit(main())
