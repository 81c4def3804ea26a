"""A read-only SQLite catalog as a :class:`~skilldeck.core.sources.SkillSource`.

The database has one table, ``skills(name TEXT PRIMARY KEY, skill_md TEXT)``: each row a
whole SKILL.md. It is opened read-only (``mode=ro``), so the provider cannot change it.
Listing parses each row's frontmatter; :meth:`SqliteCatalog.fetch` writes the one row asked
for to ``<cache>/<name>/SKILL.md`` (a folder only this provider writes, outside every
discovery root) and parses it there, so the loader reads it like any local skill. A row
whose name is not a valid skill name (lowercase letters, digits and hyphens) is left out:
it could name a path.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from skilldeck.core.discovery import SKILL_FILE, parse_bytes, parse_skill_file
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.model import Skill, Source
from skilldeck.core.validate import name_problems


class SqliteCatalog:
    """Skills stored as rows of a SQLite file.

    Args:
        database: The SQLite file.
        cache: Where fetched skills are written (one folder per database).
    """

    def __init__(self, database: Path, cache: Path) -> None:
        self.database = database
        digest = hashlib.sha256(str(database.resolve()).encode()).hexdigest()[:16]
        self.cache = cache / digest

    def _rows(self, name: str | None = None) -> list[tuple[str, str]]:
        uri = f"{self.database.resolve().as_uri()}?mode=ro"
        try:
            with sqlite3.connect(uri, uri=True) as db:
                query = "SELECT name, skill_md FROM skills"
                if name is None:
                    rows = db.execute(query + " ORDER BY name").fetchall()
                else:
                    rows = db.execute(query + " WHERE name = ?", (name,)).fetchall()
        except sqlite3.Error as exc:
            raise SkilldeckError(
                ErrorCode.INTERNAL_ERROR, f"catalog {self.database} cannot be read: {exc}"
            ) from exc
        return [(str(n), str(t)) for n, t in rows if not name_problems(str(n))]

    def skills(self) -> list[Skill]:
        """Every valid row, parsed from its frontmatter, by name."""
        found = []
        for name, text in self._rows():
            skill = parse_bytes(text.encode(), self.cache / name / SKILL_FILE, root=self.cache)
            found.append(self._labelled(skill))
        return found

    def _labelled(self, skill: Skill) -> Skill:
        """``skill`` with its id naming this catalog (``explicit:sqlite/<file>/<name>``)."""
        skill.root_label = f"sqlite/{self.database.stem}"
        return skill

    def fetch(self, name: str) -> Skill:
        """The row ``name`` as a skill on local disk.

        Raises:
            SkilldeckError: NOT_FOUND when no valid row has that name.
        """
        rows = [] if name_problems(name) else self._rows(name)
        if not rows:
            raise SkilldeckError(ErrorCode.NOT_FOUND, f"no skill {name!r} in {self.database}")
        folder = self.cache / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / SKILL_FILE
        path.write_text(rows[0][1], encoding="utf-8")
        return self._labelled(parse_skill_file(path, source=Source.EXPLICIT, root=self.cache))
