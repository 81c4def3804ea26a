"""What a person must see before a skill lands: findings, tools, scripts, and diffs.

:func:`review_skill` judges one skill folder with the checks Skilldeck already has
(validation, lint with the SL3xx security rules, tool availability) plus what only an
install needs: size caps, symlinks leaving the skill, special files, a spec-conformant name,
file names that cannot be pinned (SI104: control characters, shown escaped), compiled code
nobody can read (SI103), and the SL301/SL302 security rules run over every text file
(scripts and resources too, not just the body). The folder is walked by
:func:`~skilldeck.core.skillfolder.walk`, the walk every other reader uses.
:func:`diff_trees` and :func:`finding_delta` say what an update changes.
"""

from __future__ import annotations

import difflib
import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core import skillfolder
from skilldeck.core.discovery.frontmatter import parse_skill_file
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.install.lock import tree_files
from skilldeck.core.lint import INVISIBLE, PIPE_SHELL, lint_skill
from skilldeck.core.skillfolder import FILE, OTHER, compiled, name_problem, shown
from skilldeck.core.validate import name_problems, validate_skill

if TYPE_CHECKING:
    from skilldeck.core.tools import ToolRegistry

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Largest single file an install accepts."""
MAX_SKILL_BYTES = 50 * 1024 * 1024
"""Largest total size of one skill folder."""
MAX_FILES = 2000
"""Most files in one skill folder."""
MAX_DIFF_LINES = 400
"""Diff lines kept per file (the rest is summarised)."""
SCAN_DEPTH = 6
_SKIP = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})
"""Folders :func:`find_skill_folders` does not search for skills (a skill's own files are
walked by :func:`~skilldeck.core.skillfolder.walk`)."""
_SCRIPT_EXT = frozenset({".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".ps1"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding about a skill's files.

    Attributes:
        code: ``SV…``, ``SD…``, ``SL…``, ``ST…`` or ``SI…`` (install refusals).
        severity: ``error``, ``warning`` or ``info``.
        message: What is wrong.
        file: The file it is about, relative to the skill folder ('' for the skill).
        line: 1-based line, when known.
    """

    code: str
    severity: str
    message: str
    file: str = ""
    line: int | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the finding across versions (lines move, problems stay)."""
        return (self.code, self.file, self.message)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.file,
            "line": self.line,
        }


@dataclass(slots=True)
class SkillReview:
    """The verdict on one skill folder.

    Attributes:
        name: The name it installs under (its frontmatter ``name``, else its folder name).
        folder: The folder reviewed.
        findings: Validation, lint, tool and install findings.
        tools: ``(tool, status)`` for each tool it asks for.
        scripts: Files it could run (``scripts/``, executables, shebang files).
        refused: Problems no ``--force`` overrides (caps, escaping links, bad name).
    """

    name: str
    folder: Path
    findings: list[Finding] = field(default_factory=list)
    tools: list[tuple[str, str]] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        """Findings of error severity (they block an install unless forced)."""
        return [f for f in self.findings if f.severity == "error"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "findings": [f.to_dict() for f in self.findings],
            "tools": [{"name": n, "status": s} for n, s in self.tools],
            "scripts": list(self.scripts),
            "refused": list(self.refused),
        }


def find_skill_folders(tree: Path) -> list[Path]:
    """Every folder under ``tree`` holding a SKILL.md (a skill's own subfolders are not
    searched; ``.git`` and dependency folders are skipped; symlinked folders not entered)."""
    if (tree / "SKILL.md").is_file():
        return [tree]
    found: list[Path] = []
    stack = [(tree, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in _SKIP or not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if (path / "SKILL.md").is_file():
                found.append(path)
            elif depth < SCAN_DEPTH:
                stack.append((path, depth + 1))
    return sorted(found)


def review_skill(
    folder: Path, *, profile: str = "default", registry: ToolRegistry | None = None
) -> SkillReview:
    """Judge the skill in ``folder``. Never raises for a bad skill (it reports it)."""
    skill = parse_skill_file(folder / "SKILL.md")
    name = skill.name
    review = SkillReview(name, folder)
    for code, message in name_problems(name):
        review.refused.append(f"name {name!r}: {message} ({code})")
    try:
        listing = skillfolder.walk(folder, limit=MAX_FILES * 4)
    except SkilldeckError as exc:
        listing = skillfolder.Listing()
        review.refused.append(exc.message)
    review.refused += _file_problems(folder, listing)
    base = str(skill.base_dir)
    for diag in validate_skill(skill, profile) + lint_skill(skill):
        if diag.code in ("SV106", "SL305", "SL306", "SV601"):
            continue  # it installs under its name; SI103 and SI104 say the rest here
        rel = _rel(diag.path, base)
        review.findings.append(
            Finding(diag.code, diag.severity.value, diag.message, rel, diag.line)
        )
    files = [] if review.refused else [e.rel for e in listing.entries]
    review.scripts = [rel for rel in files if _is_script(folder / rel)]
    for rel in files:
        if rel != "SKILL.md":
            review.findings += _scan_text(folder / rel, rel)
        review.findings += _grant_findings(rel) + _compiled_findings(folder / rel, rel)
    if registry is not None:
        from skilldeck.core.tools import check_skill_tools

        availability, diags = check_skill_tools(skill, registry)
        review.tools = [(e.name, e.status) for e in availability.entries]
        review.findings += [
            Finding(d.code, d.severity.value, d.message, "SKILL.md", d.line) for d in diags
        ]
    else:
        review.tools = [(t.name, "unchecked") for t in skill.tools]
    return review


def _rel(path: Path | None, base: str) -> str:
    if path is None:
        return ""
    rel = os.path.relpath(path, base)
    return "" if rel == "." else Path(rel).as_posix()


def _file_problems(folder: Path, listing: skillfolder.Listing) -> list[str]:
    """Unsafe names, size caps, escaping symlinks and special files: what no ``--force``
    installs. Paths are shown escaped (a name may hold a newline or an escape sequence)."""
    problems = [
        f"{shown(rel)}: the file name {name_problem(rel)} (SI104: names must survive a "
        "line-based record; rename it)"
        for rel in listing.unsafe
    ]
    real = folder.resolve()
    total = count = 0
    for entry in listing.entries:
        path, rel = folder / entry.rel, shown(entry.rel)
        if entry.kind == OTHER:
            problems.append(f"{rel}: not a regular file")
        elif entry.kind != FILE:
            try:
                target = path.resolve()
            except (OSError, RuntimeError):
                problems.append(f"{rel}: symlink that cannot be resolved (a loop?)")
                continue
            if not target.is_relative_to(real):
                problems.append(f"{rel}: symlink leaves the skill folder (to {shown(str(target))})")
        else:
            size = path.lstat().st_size
            count += 1
            total += size
            if size > MAX_FILE_BYTES:
                problems.append(f"{rel}: {size} bytes, over the {MAX_FILE_BYTES}-byte file cap")
    if count > MAX_FILES or listing.truncated:
        problems.append(
            f"{count}{'+' if listing.truncated else ''} files, over the {MAX_FILES}-file cap"
        )
    if total > MAX_SKILL_BYTES:
        problems.append(f"{total} bytes in all, over the {MAX_SKILL_BYTES}-byte cap")
    return problems


def _grant_findings(rel: str) -> list[Finding]:
    """Files that try to run code or grant permission by where they sit: a ``.pth`` file
    (Python runs its ``import`` lines at start-up from any site folder) and an
    ``ALLOWLIST.txt`` (ignored: only ``SKILLDECK_HOME/ALLOWLIST.txt`` allows)."""
    name = rel.rsplit("/", 1)[-1]
    if name.endswith(".pth"):
        why = "a .pth file: Python runs its import lines at start-up from a site folder"
        return [Finding("SI101", "warning", why, rel)]
    if name == "ALLOWLIST.txt":
        why = "an allowlist inside a skill allows nothing (only SKILLDECK_HOME/ALLOWLIST.txt does)"
        return [Finding("SI102", "warning", why, rel)]
    return []


def _compiled_findings(path: Path, rel: str) -> list[Finding]:
    """SI103 for a file holding compiled code (by its name or its first bytes): nobody can
    review it, and it is never copied into a run's private copy."""
    head = b""
    if not path.is_symlink() and path.is_file():
        with path.open("rb") as handle:
            head = handle.read(4)
    what = compiled(rel, head)
    if what is None:
        return []
    why = f"compiled code ({what}): nobody can review it; runs never use it"
    return [Finding("SI103", "error", why, rel)]


def _is_script(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    rel_parts = path.parts
    if path.suffix == ".pth":
        return True
    if "scripts" in rel_parts or path.suffix in _SCRIPT_EXT or os.access(path, os.X_OK):
        return True
    with path.open("rb") as handle:
        return handle.read(2) == b"#!"


def _scan_text(path: Path, rel: str) -> list[Finding]:
    """SL301 (invisible characters) and SL302 (download piped to a shell) in any text file."""
    if path.is_symlink() or not path.is_file():
        return []
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return []
    text = data.decode("utf-8", "replace")
    found: list[Finding] = []
    for number, line in enumerate(text.split("\n"), start=1):
        match = PIPE_SHELL.search(line)
        if match:
            shown = match.group(0).strip()[:80]
            message = f"download piped into a shell: {shown!r}"
            found.append(Finding("SL302", "warning", message, rel, number))
        hidden = INVISIBLE.search(line)
        if hidden and not (number == 1 and hidden.start() == 0 and hidden.group() == "\ufeff"):
            char = hidden.group()
            what = unicodedata.name(char, "character")
            message = f"invisible U+{ord(char):04X} {what}"
            found.append(Finding("SL301", "error", message, rel, number))
    return found[:50]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file that differs between two versions of a skill.

    Attributes:
        path: Relative POSIX path (escaped as :func:`~skilldeck.core.skillfolder.shown`).
        status: ``added``, ``removed`` or ``modified``.
        diff: Unified diff text ('' for binary files, which are only named).
    """

    path: str
    status: str
    diff: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"path": self.path, "status": self.status, "diff": self.diff}


def diff_trees(old: Path | None, new: Path | None) -> list[FileChange]:
    """Every file that differs between the folders ``old`` and ``new`` (None: empty)."""
    old_files = set(tree_files(old)) if old is not None and old.is_dir() else set()
    new_files = set(tree_files(new)) if new is not None and new.is_dir() else set()
    changes: list[FileChange] = []
    for rel in sorted(old_files | new_files):
        a = _content(old / rel) if old is not None and rel in old_files else None
        b = _content(new / rel) if new is not None and rel in new_files else None
        if a == b:
            continue
        status = "added" if a is None else "removed" if b is None else "modified"
        if a is not None and b is not None and a[1] == b[1]:
            diff = f"mode changed: {'now' if b[0] else 'no longer'} executable\n"
        else:
            diff = _unified(shown(rel), a[1] if a else None, b[1] if b else None)
        changes.append(FileChange(shown(rel), status, diff))
    return changes


def _content(path: Path) -> tuple[bool, bytes]:
    """(executable, bytes) of a file; a symlink gives its target."""
    if path.is_symlink():
        return False, b"symlink -> " + os.readlink(path).encode("utf-8", "surrogateescape")
    if not path.is_file():
        return False, b"(not a regular file)"
    return bool(path.stat().st_mode & 0o111), path.read_bytes()


def _unified(rel: str, a: bytes | None, b: bytes | None) -> str:
    if (a and b"\0" in a[:8192]) or (b and b"\0" in b[:8192]):
        return f"Binary file {rel} differs\n"
    old = (a or b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = (b or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = list(
        difflib.unified_diff(
            old,
            new,
            "/dev/null" if a is None else f"a/{rel}",
            "/dev/null" if b is None else f"b/{rel}",
        )
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in lines]
    if len(lines) > MAX_DIFF_LINES:
        cut = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"… {cut} more diff lines not shown\n"]
    return "".join(lines)


def finding_delta(old: SkillReview | None, new: SkillReview) -> tuple[list[Finding], list[Finding]]:
    """Findings ``new`` adds and findings it removes compared with ``old``."""
    before = {f.key: f for f in old.findings} if old is not None else {}
    after = {f.key: f for f in new.findings}
    added = [f for k, f in after.items() if k not in before]
    removed = [f for k, f in before.items() if k not in after]
    return added, removed
