"""``skills-lock.json``: the project lock of the ``skills`` installer (vercel-labs/skills).

That installer writes it at the project root for the skills it placed in the project:
``.agents/skills`` for most agents, the agent's own folder for the others (``--agent
claude-code`` places them in ``.claude/skills``: :data:`INSTALLER_FOLDERS`). It is read
here, never written::

    {
      "version": 1,
      "skills": {
        "pdf": {
          "source": "anthropics/skills",
          "sourceType": "github",
          "ref": "main",
          "skillPath": "skills/pdf/SKILL.md",
          "computedHash": "9a0e…"
        }
      }
    }

``computedHash`` is the installer's own folder digest (:func:`folder_hash`). ``ref`` and
``skillPath`` are optional. Every name and path is checked as for ``skills-lock.toml``
(:mod:`~skilldeck.core.install.lock`): a name that is no skill name or a path that leaves
its source refuses the whole file, naming the entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from skilldeck.core import skillfolder
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.install.git import GITHUB, is_sha, is_url
from skilldeck.core.install.lock import LockEntry, Lockfile, inside

JSON_LOCK_NAME = "skills-lock.json"
JSON_LOCK_VERSION = 1
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_OWNER_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_HOSTS = {"github": GITHUB, "gitlab": "https://gitlab.com"}
_NOT_HASHED = frozenset({"node_modules"})
_INSTALLER_SKIPS = frozenset({"README.md", "metadata.json", ".git"})


CANONICAL_FOLDER = ".agents/skills"
"""Where the ``skills`` installer copies every project skill (then links it, or copies it
with ``--copy``, into an agent's own folder) and where most agents read them."""
INSTALLER_FOLDERS = {
    "adal": ".adal/skills",
    "aider-desk": ".aider-desk/skills",
    "antigravity (earlier)": ".agent/skills",
    "astrbot": "data/skills",
    "augment": ".augment/skills",
    "autohand-code": ".autohand/skills",
    "bob": ".bob/skills",
    "claude-code": ".claude/skills",
    "cline (earlier)": ".cline/skills",
    "codearts-agent": ".codeartsdoer/skills",
    "codebuddy": ".codebuddy/skills",
    "codemaker": ".codemaker/skills",
    "codestudio": ".codestudio/skills",
    "codewhale": ".codewhale/skills",
    "codex (earlier)": ".codex/skills",
    "command-code": ".commandcode/skills",
    "continue": ".continue/skills",
    "cortex": ".cortex/skills",
    "crush": ".crush/skills",
    "cursor (earlier)": ".cursor/skills",
    "devin": ".devin/skills",
    "droid (earlier)": ".factory/skills",
    "eve": "agent/skills",
    "forgecode": ".forge/skills",
    "fx": ".fx/skills",
    "gemini-cli (earlier)": ".gemini/skills",
    "github-copilot (earlier)": ".github/skills",
    "goose": ".goose/skills",
    "grok": ".grok/skills",
    "hermes-agent": ".hermes/skills",
    "iflow-cli": ".iflow/skills",
    "inference-sh": ".inferencesh/skills",
    "jazz": ".jazz/skills",
    "junie": ".junie/skills",
    "kilo (earlier)": ".kilocode/skills",
    "kimchi": ".kimchi/skills",
    "kiro-cli": ".kiro/skills",
    "kode": ".kode/skills",
    "lingma": ".lingma/skills",
    "mcpjam": ".mcpjam/skills",
    "minimax-code": ".minimax/skills",
    "mistral-vibe": ".vibe/skills",
    "moxby": ".moxby/skills",
    "mux": ".mux/skills",
    "neovate": ".neovate/skills",
    "ona": ".ona/skills",
    "opencode (earlier)": ".opencode/skills",
    "openclaw": "skills",
    "openhands": ".openhands/skills",
    "pi": ".pi/skills",
    "pochi": ".pochi/skills",
    "posit-assistant": ".posit/assistant/skills",
    "qoder": ".qoder/skills",
    "qwen-code": ".qwen/skills",
    "reasonix": ".reasonix/skills",
    "roo": ".roo/skills",
    "rovodev": ".rovodev/skills",
    "tabnine-cli": ".tabnine/agent/skills",
    "terramind": ".terramind/skills",
    "tinycloud": ".tinycloud/skills",
    "trae": ".trae/skills",
    "windsurf": ".windsurf/skills",
    "zcode": ".zcode/skills",
    "zencoder": ".zencoder/skills",
}
"""The project folder the ``skills`` installer places a skill in for each agent that does
not read :data:`CANONICAL_FOLDER` (its ``agents.ts`` table; "earlier": a folder older
versions used before that agent moved to ``.agents/skills``)."""


def installer_folders(project: Path) -> list[Path]:
    """Every folder of ``project`` the ``skills`` installer may have placed skills in:
    :data:`CANONICAL_FOLDER` first, then each agent's own (:data:`INSTALLER_FOLDERS`)."""
    rels = dict.fromkeys([CANONICAL_FOLDER, *sorted(set(INSTALLER_FOLDERS.values()))])
    return [project / rel for rel in rels]


def json_root(path: Path, names: list[str] | tuple[str, ...] = ()) -> Path:
    """The skills folder a ``skills-lock.json`` describes: of :func:`installer_folders`
    beside it, the one holding the most of ``names`` as skill folders (a link does not
    count: the installer links agents' folders to the canonical copy), the canonical
    ``.agents/skills`` when none holds any."""
    best, most = path.parent / CANONICAL_FOLDER, 0
    for folder in installer_folders(path.parent):
        if not folder.is_dir():
            continue
        held = sum(
            (folder / name / "SKILL.md").is_file() and not (folder / name).is_symlink()
            for name in names
        )
        if held > most:
            best, most = folder, held
    return best


def read_json_lock(path: Path, root: Path | None = None) -> Lockfile:
    """Read ``path`` (a ``skills-lock.json``) as a read-only :class:`Lockfile` of ``root``
    (default: :func:`json_root`, where the installer put its skills).

    Raises:
        SkilldeckError: NOT_FOUND when absent; INVALID_PARAM (reason ``bad_lock_entry`` for
            one bad entry) when it is not such a lock.
    """
    data = _load(path)
    entries = {name: _entry(path, name, row) for name, row in data["skills"].items()}
    lock = Lockfile(path, root or json_root(path, tuple(entries)))
    lock.entries.update(entries)
    return lock


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path}: no such lockfile") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: unreadable: {exc}") from exc
    if re.search(r"^<{7}( |$)", text, re.MULTILINE):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{path}: has git merge conflict markers; resolve them first"
        )
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("skills"), dict):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f'{path}: has no "skills" object')
    if data.get("version") != JSON_LOCK_VERSION:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{path}: version {data.get('version')!r} is not supported (only {JSON_LOCK_VERSION})",
        )
    return data


def _entry(path: Path, name: str, row: object) -> LockEntry:
    """One entry, validated; the source turned into something :mod:`.git` fetches."""
    from skilldeck.core.validate import name_problems

    problems = [message for _, message in name_problems(name)]
    if not isinstance(row, dict):
        problems.append("it is not an object")
        row = {}
    fields = {k: row.get(k) for k in ("source", "sourceType", "ref", "skillPath", "computedHash")}
    bad = [k for k, v in fields.items() if v is not None and not isinstance(v, str)]
    problems += [f"{k!r} is not a string" for k in bad]
    source = fields["source"] if isinstance(fields["source"], str) else ""
    kind = fields["sourceType"] if isinstance(fields["sourceType"], str) else ""
    skill_path = fields["skillPath"] if isinstance(fields["skillPath"], str) else ""
    digest = fields["computedHash"] if isinstance(fields["computedHash"], str) else ""
    ref = fields["ref"] if isinstance(fields["ref"], str) else ""
    subpath = (
        str(PurePosixPath(skill_path).parent) if skill_path.endswith("SKILL.md") else skill_path
    )
    if skill_path and not inside(subpath or "."):
        problems.append(f"skillPath {skill_path!r} leaves the source")
    if not _HEX64.match(digest):
        problems.append("computedHash is not a SHA-256")
    if not source or any(ord(c) < 32 for c in source):
        problems.append("it has no usable source")
    if problems:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{path}: entry {json.dumps(name)} is refused ({'; '.join(problems)}); "
            "nothing was changed: fix or delete that entry by hand",
            reason="bad_lock_entry",
        )
    return LockEntry(
        name,
        fetchable_source(path, kind, source),
        ref=ref,
        commit=ref if is_sha(ref) else "",
        subpath=subpath,
        computed_hash=digest,
    )


def fetchable_source(path: Path, kind: str, source: str) -> str:
    """What :func:`~skilldeck.core.install.git.fetch_source` fetches for an entry: a URL
    for ``github`` / ``gitlab`` ``owner/repo`` (``SKILLDECK_GITHUB_BASE`` applies), a
    folder relative to the lock for ``local`` and ``node_modules``, a URL as it is;
    otherwise the source as written (fetching it then fails, naming it)."""
    if is_url(source):
        return source
    if kind in _HOSTS and _OWNER_REPO.match(source):
        base = _HOSTS[kind]
        if kind == "github":
            base = os.environ.get("SKILLDECK_GITHUB_BASE", GITHUB)
        return f"{base.rstrip('/')}/{source.removesuffix('.git')}.git"
    if kind in ("local", "node_modules"):
        return str((path.parent / Path(source).expanduser()).resolve())
    return source


def installer_skips(name: str) -> bool:
    """True for what the ``skills`` installer leaves out of a copy, at every level:
    ``README.md``, ``metadata.json``, ``.git`` and any name starting with ``_``."""
    return name in _INSTALLER_SKIPS or name.startswith("_")


def folder_hash(folder: Path, *, as_installed: bool = False) -> str:
    """The ``skills`` installer's ``computedHash``: SHA-256 over every regular file below
    ``folder`` as :func:`~skilldeck.core.skillfolder.walk` lists it (``node_modules``
    skipped too; symlinks not followed nor counted),
    in JavaScript ``localeCompare`` order of their POSIX paths, each as path then bytes.
    ``as_installed``: of the copy that installer would make (:func:`installer_skips`)."""

    def kept(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return not (as_installed and installer_skips(name))

    def enter(rel: str, _depth: int) -> bool:
        return kept(rel) and rel.rsplit("/", 1)[-1] not in _NOT_HASHED

    listing = skillfolder.walk(folder, enter=enter)
    files = [e.rel for e in listing.entries if e.kind == skillfolder.FILE and kept(e.rel)]
    digest = hashlib.sha256()
    for rel in sorted(files, key=locale_key):
        digest.update(rel.encode("utf-8", "surrogateescape"))
        digest.update((folder / rel).read_bytes())
    return digest.hexdigest()


_PUNCT = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
"""ASCII punctuation in the order of the Unicode root collation (what ``localeCompare``
uses in Node): before digits, which come before letters."""


def locale_key(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """A sort key close to ``String.prototype.localeCompare`` for ASCII paths: letters
    compared without case first (``scripts/`` before ``SKILL.md``), lower case before
    upper case only to break ties. Other characters sort after letters by code point."""
    primary: list[tuple[int, int]] = []
    case: list[int] = []
    for char in text:
        if char in _PUNCT:
            primary.append((0, _PUNCT.index(char)))
        elif char.isascii() and char.isdigit():
            primary.append((1, ord(char)))
        elif char.isascii() and char.isalpha():
            primary.append((2, ord(char.lower())))
        else:
            primary.append((3, ord(char)))
        case.append(1 if char.isupper() else 0)
    return tuple(primary), tuple(case)
