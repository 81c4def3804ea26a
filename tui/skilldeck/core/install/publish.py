"""Write a well-known skills index for a folder of skills (``skilldeck publish``).

The output is a static site: ``SITE/.well-known/agent-skills/index.json`` (schema 0.2.0)
and one artifact per skill beside it: ``NAME/SKILL.md`` for a skill that is only a
SKILL.md, else ``NAME.tar.gz``, with relative URLs, so the folder can be served from any
static host. Archives are deterministic (sorted members, mtime 0, owner 0, modes 0644 or
0755, gzip mtime 0): the same skill gives the same digest. Every file is read under the
confinement rule (:func:`~skilldeck.core.execution.snapshot.snapshot_skill`). Nothing is
written unless every skill is valid.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.execution.snapshot import Snapshot, snapshot_skill
from skilldeck.core.install.review import find_skill_folders
from skilldeck.core.install.wellknown import INDEX_PATH, SCHEMA, digest_of


@dataclass(frozen=True, slots=True)
class Published:
    """One skill in the written index.

    Attributes:
        name: Its name.
        type: ``skill-md`` or ``archive``.
        path: The artifact written.
        digest: ``sha256:…`` of the artifact.
        source: The skill folder it was read from.
    """

    name: str
    type: str
    path: Path
    digest: str
    source: Path

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "type": self.type,
            "path": str(self.path),
            "digest": self.digest,
            "source": str(self.source),
        }


@dataclass(slots=True)
class Publication:
    """What :func:`publish` did.

    Attributes:
        index: The ``index.json`` written (None when nothing was).
        skills: The skills listed.
        refused: ``(folder, reason)`` for each skill that is not valid (nothing is
            written when any).
    """

    index: Path | None
    skills: list[Published] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)


def _problems(folder: Path) -> tuple[str, str, list[str]]:
    """The name, description and validation errors of the skill in ``folder``."""
    from skilldeck.core.discovery.frontmatter import parse_skill_file
    from skilldeck.core.model import Severity
    from skilldeck.core.validate import name_problems, validate_skill

    skill = parse_skill_file(folder / "SKILL.md")
    problems = [f"name {skill.name!r}: {message}" for _, message in name_problems(skill.name)]
    problems += [
        f"{d.code}: {d.message}" for d in validate_skill(skill) if d.severity is Severity.ERROR
    ]
    return skill.name, skill.description, problems


def tar_gz(snapshot: Snapshot) -> bytes:
    """A deterministic ``.tar.gz`` of ``snapshot``'s files at the archive root."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in sorted(snapshot.files, key=lambda f: f.rel):
            info = tarfile.TarInfo(entry.rel)
            info.size, info.mtime = len(entry.data), 0
            info.mode = 0o755 if entry.executable else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(entry.data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def publish(source: Path, out: Path) -> Publication:
    """Write the index of the skills in ``source`` (a skill folder, or a folder of them)
    to ``out/.well-known/agent-skills/`` (that folder is replaced as a whole).

    Raises:
        SkilldeckError: NOT_FOUND when ``source`` holds no skill; PERMISSION_DENIED when a
            skill's files break the confinement rule or the size caps.
    """
    folders = find_skill_folders(source)
    if not folders:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{source}: no SKILL.md found")
    result = Publication(None)
    rows: list[tuple[str, str, Snapshot]] = []
    seen: dict[str, Path] = {}
    for folder in folders:
        name, description, problems = _problems(folder)
        if name in seen:
            problems.append(f"{seen[name]} has the same name")
        seen.setdefault(name, folder)
        try:
            snapshot = snapshot_skill(folder)
        except SkilldeckError as exc:
            problems.append(exc.message)
        if problems:
            result.refused += [(folder, p) for p in problems]
            continue
        rows.append((name, description, snapshot))
    if result.refused:
        return result
    site = out / INDEX_PATH.strip("/").rsplit("/", 1)[0]
    site.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".agent-skills-", dir=site.parent))
    try:
        entries = [_write(work, site, name, desc, snap, result) for name, desc, snap in rows]
        document = {"$schema": SCHEMA, "skills": sorted(entries, key=lambda e: e["name"])}
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        (work / "index.json").write_text(text, encoding="utf-8")
        if site.exists() or site.is_symlink():
            _remove(site)
        work.rename(site)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    result.index = site / "index.json"
    return result


def _write(
    work: Path, site: Path, name: str, description: str, snap: Snapshot, result: Publication
) -> dict[str, Any]:
    """Write one skill's artifact into ``work`` and return its index entry."""
    if [f.rel for f in snap.files] == ["SKILL.md"]:
        kind, rel, data = "skill-md", f"{name}/SKILL.md", snap.files[0].data
    else:
        kind, rel, data = "archive", f"{name}.tar.gz", tar_gz(snap)
    target = work / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    digest = digest_of(data)
    result.skills.append(Published(name, kind, site / rel, digest, snap.folder))
    return {"name": name, "type": kind, "description": description, "url": rel, "digest": digest}


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)
