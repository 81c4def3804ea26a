"""Writing requests into a skill's ``examples`` frontmatter field, when a person asks.

``skilldeck eval --add-misses-as-examples`` turns the requests a skill should have won
into its examples (the ``examples`` signal of the search matches new requests against
them). Only the ``examples`` block of the frontmatter is rewritten: the old entries are
kept as they were parsed and the new ones appended, each as a JSON-quoted string (valid
YAML whatever it holds). The result is parsed again before anything is written: unless
every other frontmatter field and the body come back identical and the examples are the
old ones followed by the new, nothing is written. The file is replaced atomically.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from skilldeck.core.discovery.frontmatter import parse_bytes
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Example, Severity

_FENCES = re.compile(r"\A(\ufeff?---[ \t]*\r?\n)(.*?^)(---[ \t]*\r?$)", re.DOTALL | re.MULTILINE)
_KEY = re.compile(r"^examples[ \t]*:")
MAX_REQUEST_CHARS = 500
"""Longest request written as an example (longer ones are refused)."""


def add_examples(path: Path, requests: Sequence[str]) -> list[str]:
    """Append ``requests`` (whitespace collapsed, those already there skipped) to the
    ``examples`` of the SKILL.md at ``path``.

    Returns:
        The requests added (empty: nothing to add, the file is untouched).

    Raises:
        SkilldeckError: INVALID_PARAM when the file is a symlink, has no frontmatter or
            one that does not parse cleanly, a request is empty or too long, or the
            rewritten file would not parse back to the same fields; NOT_FOUND or
            PERMISSION_DENIED when it cannot be read or written. Nothing is written then.
    """
    if path.is_symlink() or not path.is_file():
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: not a regular file; not edited")
    cleaned = [" ".join(r.split()) for r in requests]
    if any(not r or len(r) > MAX_REQUEST_CHARS for r in cleaned):
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"an example request must have 1 to {MAX_REQUEST_CHARS} characters",
        )
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkilldeckError(ErrorCode.NOT_FOUND, f"{path}: cannot read: {exc}") from exc
    before = parse_bytes(data, path)
    if any(d.severity is Severity.ERROR for d in before.diagnostics):
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: fix its frontmatter first")
    known = [e.request for e in before.examples]
    fresh = [r for r in dict.fromkeys(cleaned) if r not in known]
    if not fresh:
        return []
    match = _FENCES.match(text)
    if match is None:
        raise SkilldeckError(ErrorCode.INVALID_PARAM, f"{path}: no frontmatter; not edited")
    head = _without_examples(match.group(2))
    block = _block([*before.examples, *(Example(r) for r in fresh)])
    new_text = match.group(1) + head + block + text[match.start(3) :]
    _check(path, before.frontmatter, text[match.end(3) :], new_text, [*known, *fresh])
    _replace(path, new_text.encode("utf-8"))
    return fresh


def _without_examples(yaml: str) -> str:
    """The frontmatter lines minus a top-level ``examples`` key and its indented or
    ``-`` lines (blank lines inside it too)."""
    lines = yaml.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for number, line in enumerate(lines):
        if _KEY.match(line):
            inside = True
            continue
        if inside:
            if line[:1] in (" ", "\t", "-"):
                continue
            rest = [x for x in lines[number:] if x.strip()]
            if not line.strip() and rest and rest[0][:1] in (" ", "\t", "-"):
                continue
            inside = False
        out.append(line)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    return "".join(out)


def _block(examples: Sequence[Example]) -> str:
    lines = ["examples:\n"]
    for example in examples:
        if example.does:
            lines.append(f"  - request: {json.dumps(example.request)}\n")
            lines.append(f"    does: {json.dumps(example.does)}\n")
        else:
            lines.append(f"  - {json.dumps(example.request)}\n")
    return "".join(lines)


def _check(
    path: Path, fields: dict[str, object], body: str, new_text: str, wanted: list[str]
) -> None:
    """Refuse unless ``new_text`` parses to the same fields, body and ``wanted`` examples."""
    after = parse_bytes(new_text.encode("utf-8"), path)
    same = {k: v for k, v in after.frontmatter.items() if k != "examples"} == {
        k: v for k, v in fields.items() if k != "examples"
    }
    ok = (
        same
        and [e.request for e in after.examples] == wanted
        and not any(d.severity is Severity.ERROR for d in after.diagnostics)
        and new_text.endswith(body)
    )
    if not ok:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{path}: its frontmatter cannot be edited safely (add the examples by hand)",
        )


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    try:
        mode = path.stat().st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(prefix=".skill-", suffix=".md", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        code = (
            ErrorCode.PERMISSION_DENIED if isinstance(exc, PermissionError) else ErrorCode.NOT_FOUND
        )
        raise SkilldeckError(code, f"{path}: cannot write: {exc.strerror or exc}") from exc
