"""The per-document columns a saved index keeps beside its arrays, as one JSON blob:
each document's skill name, required tools and triggers (tools and triggers only where
there are some). With them and the saved priorities and paths, a search ranks without
the skill objects (see :func:`skilldeck.core.search.persist.load_saved`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from skilldeck.core.model import Skill
from skilldeck.core.search.triggers import TriggerTable


class BadColumns(ValueError):
    """Saved columns of the wrong shape or types."""


def encode_columns(
    skills: Sequence[Skill], names: list[str], needs: list[tuple[str, ...]]
) -> bytes:
    """The per-document metadata a search reads, as JSON (only non-empty tools and
    triggers are listed, by document id)."""
    triggers = []
    for doc, skill in enumerate(skills):
        trig = skill.triggers
        if trig:
            parts = (trig.keywords, trig.verbs, trig.patterns)
            triggers.append([doc, *([str(x) for x in part] for part in parts)])
    data = {
        "names": names,
        "needs": [[doc, list(tools)] for doc, tools in enumerate(needs) if tools],
        "triggers": triggers,
    }
    return json.dumps(data).encode()


def decode_columns(blob: bytes, n: int) -> tuple[list[str], list[tuple[str, ...]], TriggerTable]:
    """Names, required tools and the trigger table of ``n`` documents, type-checked."""
    data = json.loads(blob)
    names = data["names"]
    if type(names) is not list or len(names) != n or not all(type(x) is str for x in names):
        raise BadColumns("names are malformed")
    empty: tuple[str, ...] = ()
    needs = [empty] * n
    for doc, tools in data["needs"]:
        needs[_doc(doc, n)] = _strings(tools)
    triggers = TriggerTable()
    for doc, keywords, verbs, patterns in data["triggers"]:
        triggers.add(_doc(doc, n), _strings(keywords), _strings(verbs), _strings(patterns))
    return names, needs, triggers


def _doc(value: object, n: int) -> int:
    if type(value) is not int or not 0 <= value < n:
        raise BadColumns("a document id is out of range")
    return value


def _strings(value: object) -> tuple[str, ...]:
    if type(value) is not list or not all(type(x) is str for x in value):
        raise BadColumns("a column is malformed")
    return tuple(value)
