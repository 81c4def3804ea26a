"""Entry point of the ``skilldeck`` command.

Global options (``--root``, ``--profile``, ``--format``, ``--debug``, ``--no-color``) are
accepted before or after the command. Each command group lives in its own module with a
``register(subparsers)`` function; commands return an exit code: 0 success, 1 findings,
2 usage or I/O error. No traceback reaches the user unless ``--debug`` is given.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from skilldeck import __version__
from skilldeck.cli.context import CliContext
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
)

_VALUE_OPTIONS = {"--root", "--profile", "--format"}
_FLAG_OPTIONS = {"--debug", "--no-color"}


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
            found[arg[2:].replace("-", "_")] = True
        else:
            rest.append(arg)
        i += 1
    return found, rest


class UsageError(Exception):
    """Bad command-line usage (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every command group registered."""
    parser = _Parser(
        prog="skilldeck",
        description="Find, check, load and govern Agent Skills. "
        "With no command, opens the terminal UI.",
        epilog="Global options (anywhere on the line): --root PATH (repeatable), "
        "--profile default|agentskills|claude-code, --format text|json, --debug, --no-color.",
    )
    parser.add_argument("--version", action="version", version=f"skilldeck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    json_errors = _wants_json(argv)
    try:
        options, rest = split_global_options(argv)
        parser = build_parser()
        args = parser.parse_args(rest)
        ctx = CliContext.from_options(options)
        if args.command is None:
            return _open_tui(ctx)
        code: int = args.func(args, ctx)
        return code
    except UsageError as exc:
        _report_error(SkilldeckError(ErrorCode.INVALID_PARAM, str(exc)), json_errors, usage=True)
        return 2
    except SkilldeckError as exc:
        _report_error(exc, json_errors)
        return 2
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
        return 2


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


def _report_error(error: SkilldeckError, json_errors: bool, *, usage: bool = False) -> None:
    """Say what went wrong: a JSON ``{"error": …}`` document on stdout in JSON mode (scripts
    read stdout), and always one plain line on stderr."""
    if json_errors:
        print(json.dumps({"error": error.to_dict()}, indent=2, ensure_ascii=False, default=str))
    message = for_terminal(error.message)
    if usage:
        print(message, file=sys.stderr)
        print("Try 'skilldeck --help'.", file=sys.stderr)
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
