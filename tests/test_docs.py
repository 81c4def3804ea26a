"""The documentation (README.md and docs/): links resolve, the site builds, commands parse.

Every relative link in a page points at a file that exists (and its ``#anchor`` at a heading
of that file, spelled as both GitHub and MkDocs spell heading ids), ``mkdocs build --strict``
builds the site, and every ``skilldeck …`` command shown in a shell code block parses with
the CLI's own parser. The screenshots stay at the top level, in ``screenshots/``: pages in
``docs/`` link them as ``../screenshots/NAME.png`` (which also works on a forge) and the
hook ``docs/hooks/screenshots.py`` copies them into the site under that link.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from skilldeck.cli.main import UsageError, build_parser, split_global_options
from skilldeck.core.validate import PROFILES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_BLOCKS = {"", "sh", "bash", "shell", "console", "text", "yaml"}
"""Code blocks whose lines are command lines (in ``yaml``, only ``- run:`` steps)."""

_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SYNOPSIS = re.compile(r"\[-")
"""A usage synopsis (``[--root PATH]...``), not a command line: its brackets are notation."""


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    lang: str
    text: str


def split_page(path: Path) -> tuple[str, list[Block]]:
    """The prose of a page (code blocks blanked, line numbers kept) and its code blocks."""
    prose: list[str] = []
    blocks: list[Block] = []
    fence: str | None = None
    lang, start, body = "", 0, list[str]()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence, lang, start, body = opened.group(1), opened.group(2).lower(), number, []
            prose.append("")
        elif fence is not None and line.strip().startswith(fence):
            blocks.append(Block(path, start, lang, "\n".join(body)))
            fence = None
            prose.append("")
        elif fence is not None:
            body.append(line)
            prose.append("")
        else:
            prose.append(line)
    assert fence is None, f"{path.name}:{start}: a code block is never closed"
    return "\n".join(prose), blocks


def github_slug(title: str) -> str:
    """The id GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def mkdocs_slug(title: str) -> str:
    """The id MkDocs (Python-Markdown's ``toc``) gives a heading."""
    text = unicodedata.normalize("NFKD", title.replace("`", "")).encode("ascii", "ignore")
    value = re.sub(r"[^\w\s-]", "", text.decode("ascii")).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def anchors(path: Path) -> set[str]:
    """The heading ids of a page that GitHub and MkDocs agree on."""
    prose, _ = split_page(path)
    titles = [m.group(2) for line in prose.splitlines() if (m := _HEADING.match(line))]
    return {github_slug(t) for t in titles} & {mkdocs_slug(t) for t in titles}


def links(path: Path) -> list[tuple[int, str]]:
    """``(line, target)`` of every link and image in the prose of a page."""
    prose, _ = split_page(path)
    found = []
    for number, line in enumerate(prose.splitlines(), 1):
        for match in _LINK.finditer(_CODE_SPAN.sub("", line)):
            found.append((number, match.group(1)))
    return found


def broken_links(path: Path) -> list[str]:
    """Each relative link of ``path`` that names no file, or no heading of that file."""
    broken = []
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        where = (path.parent / file_part).resolve() if file_part else path
        if not where.is_file():
            broken.append(f"{path.name}:{number}: {target} (no such file)")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{path.name}:{number}: {target} (no such heading)")
    return broken


def command_lines(block: Block) -> list[list[str]]:
    """The ``skilldeck`` command lines of a shell code block, as argument lists.

    Continuation lines are joined, comments dropped, and each line cut at the shell's
    operators (pipes, ``&&``, ``;``, redirections, ``$(…)``); a piece that starts with
    ``skilldeck``, or names it after ``--`` (``claude mcp add NAME -- skilldeck serve``),
    is a command. A usage synopsis (``[--root PATH]...``) is not.
    """
    if block.lang not in SHELL_BLOCKS:
        return []
    commands = []
    for line in block.text.replace("\\\n", " ").splitlines():
        line = line.strip().removeprefix("$ ")
        if block.lang == "yaml":
            if not line.startswith("- run:"):
                continue
            line = line.removeprefix("- run:")
        if "skilldeck" not in line or _SYNOPSIS.search(line):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        piece: list[str] = []
        for token in [*lexer, ";"]:
            if token and set(token) <= set("();<>|&"):
                commands.extend(_commands_in(piece))
                piece = []
            else:
                piece.append(token)
    return commands


def _commands_in(piece: list[str]) -> list[list[str]]:
    """The skilldeck command a piece of a command line runs, if any."""
    words = piece[1:] if piece and re.fullmatch(r"\w+=\$?", piece[0]) else piece  # id=$(…)
    if words and words[0] == "skilldeck":
        return [words[1:]]
    if "--" in words and words[words.index("--") + 1 :][:1] == ["skilldeck"]:
        return [words[words.index("--") + 2 :]]
    return []


def parse_error(argv: list[str]) -> str | None:
    """Why the CLI would reject ``argv`` as a usage error, or None when it parses."""
    try:
        options, rest = split_global_options(argv)
        if options["profile"] not in (None, *PROFILES):
            return f"unknown profile {options['profile']!r}"
        if options["format"] not in (None, "text", "json"):
            return f"unknown format {options['format']!r}"
        with contextlib.redirect_stdout(io.StringIO()):
            build_parser(rest[0] if rest else None).parse_args(rest)
    except UsageError as exc:
        return str(exc)
    except SystemExit as exc:  # --help and --version exit 0 once printed
        return None if exc.code == 0 else f"exit {exc.code}"
    return None


def all_commands() -> list[tuple[str, list[str]]]:
    """``(where, argv)`` of every skilldeck command shown in a code block."""
    found = []
    for page in PAGES:
        for block in split_page(page)[1]:
            for argv in command_lines(block):
                found.append((f"{page.relative_to(ROOT)}:{block.line}", argv))
    return found


def test_the_pages_exist() -> None:
    assert (ROOT / "mkdocs.yml").is_file()
    assert (ROOT / "docs" / "index.md").is_file()
    assert len(PAGES) > 10


def test_the_readme_is_a_front_door() -> None:
    """The README opens with the two commands (install and run; install and test, which CI
    runs), stays short, and leads to the threat model and to every page of docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = split_page(ROOT / "README.md")[1]
    assert [b.text for b in blocks[:2]] == [
        "pip install . && skilldeck",
        "pip install -e '.[test,semantic]' && pytest -q",
    ]
    assert len(readme.splitlines()) <= 250
    assert "(docs/security.md#threat-model)" in readme
    linked = {target.partition("#")[0] for _, target in links(ROOT / "README.md")}
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} - {"docs/index.md"}
    assert pages <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_finds_a_broken_link_and_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A title\n\n## The `run` command\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "# B\n\n[ok](a.md#the-run-command) [gone](nope.md) [bad](a.md#nowhere) "
        "[self](#b) `[code](nope.md)` ![pic](a.md)\n\n```sh\n[x](nope.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "b.md:3: nope.md (no such file)",
        "b.md:3: a.md#nowhere (no such heading)",
    ]


def test_every_shown_command_parses() -> None:
    commands = all_commands()
    assert len(commands) > 30, "the command finder found almost nothing"
    bad = [
        f"{where}: skilldeck {shlex.join(argv)}: {why}"
        for where, argv in commands
        if (why := parse_error(argv)) is not None
    ]
    assert bad == []


def test_the_command_finder_reads_shell_lines() -> None:
    text = (
        "id=$(skilldeck session new --mode approval)   # the id\n"
        'skilldeck session load "$id" pdf > /dev/null && skilldeck lint skills/ | head\n'
        "claude mcp add skilldeck -- skilldeck --root ./skills serve\n"
        "skilldeck [--root PATH]... COMMAND\n"
        "skilldeck add x \\\n  --to project\n"
    )
    found = command_lines(Block(Path("x.md"), 1, "sh", text))
    assert found == [
        ["session", "new", "--mode", "approval"],
        ["session", "load", "$id", "pdf"],
        ["lint", "skills/"],
        ["--root", "./skills", "serve"],
        ["add", "x", "--to", "project"],
    ]
    yaml = Block(Path("x.md"), 1, "yaml", "- run: skilldeck verify\nx: skilldeck")
    assert command_lines(yaml) == [["verify"]]
    assert parse_error(["lint", "--no-such-option"]) is not None
    assert parse_error(["serch", "pdf"]) is not None
    assert parse_error(["--profile", "nope", "validate"]) is not None
    assert parse_error(["session", "approve", "ID", "Bash"]) is None


def test_mkdocs_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[test]' installs it)")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    assert (site / "screenshots" / "main.png").is_file()
    assert "screenshots/main.png" in (site / "tui" / "index.html").read_text(encoding="utf-8")


def _threat_table(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Attack"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def test_the_readme_shows_the_threat_model_as_the_security_page_has_it() -> None:
    """The README carries the threat-model table (issue #32) and docs/security.md the same
    table with its tests: one table, never two that drift apart."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert len(_threat_table(readme)) > 10
    assert _threat_table(readme) == _threat_table(page)
