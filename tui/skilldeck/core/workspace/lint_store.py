"""The workspace's lint stage: a catalog's lint findings, kept in the local store.

Linting 10,000 skills reads every body and walks every skill folder (seconds), and the
result depends only on the skills' files, the shadowing between them and the lint
configuration. So the findings of a whole catalog are stored under the workspace key with
a digest of all of that; a later start whose digest matches reads them back instead of
linting again. Any difference means a full lint, as before (the cross-skill rules need it).

The table is ``lint_results``, declared here (:data:`TABLES`); a row that does not decode,
or a store that cannot be read or written, only costs a lint.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.core.model import Catalog, Diagnostic, Severity

if TYPE_CHECKING:
    from skilldeck.core.lint import LintConfig
    from skilldeck.core.store import LocalStore

FORMAT = 1
"""Bumped when the stored shape changes."""

TABLES = (
    # A catalog's lint findings (JSON) under the workspace key, with a digest of what
    # they depend on.
    """CREATE TABLE IF NOT EXISTS lint_results (
        key TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        data TEXT NOT NULL
    )""",
)
"""The store table this module owns (see :meth:`LocalStore.ensure`)."""


def _code_stamp() -> str:
    """What identifies the lint rules' code: the lint package files' sizes and mtimes."""
    import skilldeck.core.lint as lint

    folder = Path(lint.__file__).parent
    parts = []
    for path in sorted(folder.glob("*.py")):
        with contextlib.suppress(OSError):
            info = path.stat()
            parts.append(f"{path.name}:{info.st_size}:{info.st_mtime_ns}")
    return ";".join(parts)


def catalog_digest(catalog: Catalog, config: LintConfig) -> str:
    """A digest of everything the catalog's lint findings depend on."""
    digest = hashlib.sha256(f"{FORMAT}|{_code_stamp()}|{config!r}".encode())
    for skill in catalog.skills:
        digest.update(
            f"{skill.path}\0{skill.content_hash}\0{skill.mtime_ns}\0{skill.size}\0"
            f"{skill.shadowed_by}\0{skill.shadow_reason}\0{skill.enabled}\0"
            f"{'|'.join(skill.resources)}\n".encode()
        )
    return digest.hexdigest()


def _encode(findings: dict[Path, list[Diagnostic]]) -> str:
    rows: dict[str, list[list[object]]] = {
        str(path): [
            [d.code, d.severity.value, d.message, d.path and str(d.path), d.line, d.column]
            for d in diags
        ]
        for path, diags in findings.items()
    }
    return json.dumps(rows, separators=(",", ":"))


def _decode(text: str, known: dict[str, Path]) -> dict[Path, list[Diagnostic]] | None:
    """The stored findings; a key in ``known`` gets its path object from there (at 10k
    skills decoding took 40-100 ms of CPU making every path again, 10-20 ms with them)."""
    try:
        rows: Any = json.loads(text)
        out: dict[Path, list[Diagnostic]] = {}
        for key, items in rows.items():
            out[known.get(key) or Path(key)] = [
                Diagnostic(code, Severity(sev), msg, None if p is None else Path(p), line, col)
                for code, sev, msg, p, line, col in items
            ]
    except (ValueError, TypeError, AttributeError):
        return None
    return out


def load(
    store: LocalStore, key: str, digest: str, known: dict[str, Path] | None = None
) -> dict[Path, list[Diagnostic]] | None:
    """The stored findings for ``key`` when their digest is ``digest`` (else None);
    ``known``: the path objects to key them by (by their text)."""
    try:
        store.ensure(TABLES)
        conn = store.connect()
        row = conn.execute("SELECT digest, data FROM lint_results WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None or row[0] != digest:
        return None
    return _decode(row[1], known or {})


def save(store: LocalStore, key: str, digest: str, findings: dict[Path, list[Diagnostic]]) -> None:
    """Keep ``findings`` for ``key`` (a store that cannot be written is left alone)."""
    with contextlib.suppress(sqlite3.Error):
        store.ensure(TABLES)
        with store.write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO lint_results (key, digest, data) VALUES (?, ?, ?)",
                (key, digest, _encode(findings)),
            )


def lint_catalog_stored(
    catalog: Catalog, config: LintConfig, store: LocalStore, key: str
) -> dict[Path, list[Diagnostic]]:
    """:func:`~skilldeck.core.lint.lint_catalog` over the whole catalog, through the store."""
    from skilldeck.core.lint import lint_catalog

    digest = catalog_digest(catalog, config)
    found = load(store, key, digest, {str(s.path): s.path for s in catalog.skills})
    if found is not None:
        return found
    findings = lint_catalog(catalog.skills, catalog, config)
    save(store, key, digest, findings)
    return findings
