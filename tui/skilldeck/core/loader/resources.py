"""Tier 3 of progressive disclosure: one file from inside a skill's folder, on demand.

:func:`read_resource` refuses paths that leave the skill folder (``..``, absolute paths,
symlinks out) and files over a byte cap, and decodes UTF-8 text.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from skilldeck.core.confined import read_confined
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.loader.suggestions import suggest_names
from skilldeck.core.model import Skill
from skilldeck.core.skillfolder import SKIPPED, name_problem

DEFAULT_BYTE_CAP = 262144
BINARY_SNIFF_BYTES = 8192


@dataclass(slots=True)
class Resource:
    """One file from inside a skill folder (tier 3).

    Attributes:
        name: The skill's name.
        path: The path relative to the skill folder (POSIX form).
        abs_path: The file's absolute real path.
        size: Size in bytes.
        mime: Guessed media type.
        binary: True when the content is not UTF-8 text.
        text: The decoded text (None for binary files).
        data: The raw bytes.
    """

    name: str
    path: str
    abs_path: Path
    size: int
    mime: str
    binary: bool
    text: str | None
    data: bytes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``text`` for text files, ``base64`` for binary ones."""
        return {
            "name": self.name,
            "path": self.path,
            "abs_path": str(self.abs_path),
            "size": self.size,
            "mime": self.mime,
            "binary": self.binary,
            "encoding": "base64" if self.binary else "utf-8",
            "text": self.text,
            "base64": base64.b64encode(self.data).decode("ascii") if self.binary else None,
        }


_DRIVE = re.compile(r"^[A-Za-z]:")


def _relative_parts(rel_path: str) -> list[str]:
    """Validated components of a resource path; INVALID_PARAM when unsafe."""

    def invalid(why: str) -> SkilldeckError:
        return SkilldeckError(
            ErrorCode.INVALID_PARAM, f"invalid resource path {rel_path!r}: {why}", path=rel_path
        )

    if not isinstance(rel_path, str) or not rel_path.strip():
        raise invalid("empty path")
    if "\x00" in rel_path:
        raise invalid("NUL character")
    if rel_path.startswith(("/", "\\")) or _DRIVE.match(rel_path):
        raise invalid("absolute paths are not allowed; give a path inside the skill folder")
    parts = re.split(r"[\\/]", rel_path)
    if ".." in parts:
        raise invalid("'..' is not allowed; give a path inside the skill folder")
    parts = [p for p in parts if p not in ("", ".")]
    if not parts:
        raise invalid("the path names the skill folder itself")
    return parts


def _is_within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def read_resource(
    skill: Skill, rel_path: str, byte_cap: int = DEFAULT_BYTE_CAP, *, listed_only: bool = False
) -> Resource:
    """Read one file from inside the skill folder (tier 3).

    Args:
        skill: The skill owning the file.
        rel_path: Path relative to the skill folder.
        byte_cap: Largest file size accepted, in bytes.
        listed_only: Serve only the files discovery listed (:attr:`Skill.resources`, plus
            the SKILL.md): a file created since is served once a refresh lists it. A
            listing cut at its bound cannot tell, so any file is served then.

    Returns:
        The resource, decoded when it is UTF-8 text.

    Raises:
        SkilldeckError: INVALID_PARAM for empty, absolute, ``..`` or NUL paths, folders and
            files over ``byte_cap``; PERMISSION_DENIED when the path (through symlinks)
            leaves the skill folder or cannot be opened; NOT_FOUND when it does not exist
            (or, with ``listed_only``, was not listed).
    """
    parts = _relative_parts(rel_path)
    rel = str(PurePosixPath(*parts))
    if listed_only:
        _check_listed(skill, rel)
    real = _existing_file(skill, parts, rel)
    data, size = _read_confined(skill, real, rel, byte_cap)
    text = _decoded(data)
    binary = text is None
    mime = mimetypes.guess_type(parts[-1])[0] or (
        "application/octet-stream" if binary else "text/plain"
    )
    return Resource(
        name=skill.name,
        path=rel,
        abs_path=Path(real),
        size=size,
        mime=mime,
        binary=binary,
        text=text,
        data=data,
    )


def _check_listed(skill: Skill, rel: str) -> None:
    """NOT_FOUND for a file discovery did not list (see :func:`read_resource`)."""
    if skill.resources_truncated or rel == skill.path.name or rel in skill.resources:
        return
    hints = suggest_names(rel, list(skill.resources))
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    raise SkilldeckError(
        ErrorCode.NOT_FOUND,
        f"skill {skill.name!r} has no file {rel!r} among the files found when it was last "
        f"discovered{hint}",
        path=rel,
        suggestions=hints,
    )


def _existing_file(skill: Skill, parts: list[str], rel: str) -> str:
    """The real path of a resource inside the skill folder that exists and is no folder."""
    base_real = os.path.realpath(skill.base_dir)
    candidate = os.path.join(skill.base_dir, *parts)
    real = os.path.realpath(candidate)
    if not _is_within(real, base_real):
        raise SkilldeckError(
            ErrorCode.PERMISSION_DENIED,
            f"{rel!r} resolves outside the folder of skill {skill.name!r}",
            path=rel,
        )
    if not os.path.exists(real):
        hints = suggest_names(rel, _nearby_files(skill, parts, base_real))
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        raise SkilldeckError(
            ErrorCode.NOT_FOUND,
            f"skill {skill.name!r} has no file {rel!r}{hint}",
            path=rel,
            suggestions=hints,
        )
    if os.path.isdir(real):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{rel!r} is a folder; give a file path", path=rel
        )
    return real


def _decoded(data: bytes) -> str | None:
    """``data`` as UTF-8 text (a leading BOM dropped), None when it looks binary."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith("\ufeff") else text


def _nearby_files(skill: Skill, parts: list[str], base_real: str) -> list[str]:
    """Known resources plus the files next to a missing path (bounded), for suggestions."""
    names = dict.fromkeys(skill.resources)
    parent = os.path.realpath(os.path.join(skill.base_dir, *parts[:-1]))
    if _is_within(parent, base_real) and os.path.isdir(parent):
        prefix = "/".join(parts[:-1])
        try:
            with os.scandir(parent) as entries:
                for count, entry in enumerate(entries):
                    if count >= 200:
                        break
                    if entry.name in SKIPPED or name_problem(entry.name) is not None:
                        continue  # never suggested: not a file of the skill, or unsafe
                    names.setdefault(f"{prefix}/{entry.name}" if prefix else entry.name)
        except OSError:
            pass
    return list(names)


def _read_confined(skill: Skill, real: str, rel: str, byte_cap: int) -> tuple[bytes, int]:
    """Read a resource under the one confinement rule; a file over the cap is refused."""
    read = read_confined(Path(real), skill.base_dir, cap=byte_cap, label=repr(rel))
    if read.truncated or read.size > byte_cap:
        size = max(read.size, len(read.data) + 1)
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{rel!r} is {size} bytes, over the {byte_cap}-byte cap",
            path=rel,
            size=size,
            cap=byte_cap,
        )
    return read.data, len(read.data)
