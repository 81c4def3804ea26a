"""The data of a usage report and its stable JSON form (``"schema": 1``).

JSON fields (``skilldeck usage --format json``; times are ISO-8601 UTC):

- ``schema`` (1), ``since``, ``until``, ``session`` (the ``--session`` filter or null);
- ``sources``: ``telemetry`` (``enabled``, ``events`` read), ``audit`` (``available``,
  ``rows`` read, ``problem``) and ``notes`` (what the report cannot show, and why);
- ``skills``: one object per skill used in the window: ``name``, ``matched``, ``loaded``
  (``total`` and ``by_actor``), ``silent_misses`` (``session``, ``first``, ``last`` and its
  ``requests``: ``query``, ``time``), ``script_runs``, ``script_failures``, ``last_used``,
  ``daily_loads`` (``YYYY-MM-DD`` -> loads);
- ``never_used``: catalog skills neither matched nor loaded in the window;
- ``unmatched``: requests no skill matched confidently (``query``, ``count``, ``last``,
  ``sessions``, ``best`` candidate and its ``score``);
- ``days``: per UTC day ``matched``, ``loads`` and ``silent_misses``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

SCHEMA = 1
"""Version of the JSON form; a field removed or changed in meaning bumps it."""


def stamp(moment: float | None) -> str | None:
    """ISO-8601 UTC form of a Unix time (seconds), or None."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")


def day_of(moment: float, stamp: object = None) -> str:
    """The UTC day (``YYYY-MM-DD``) of a Unix time; read off ``stamp`` (the ISO time it
    came from) when that is already in UTC, which is how telemetry writes it."""
    if isinstance(stamp, str) and len(stamp) > 10 and stamp.endswith("+00:00"):
        return stamp[:10]
    return datetime.fromtimestamp(moment, UTC).date().isoformat()


Request = tuple[str, float]
"""One agent request (a search): its text and its Unix time (a plain tuple: a silent miss
holds many, and tuples of plain values cost the garbage collector nothing)."""


@dataclass(slots=True)
class SilentMiss:
    """A session in which a skill was the confident match of requests and never loaded.

    Attributes:
        skill: The skill.
        session: The session.
        requests: The requests that matched it, oldest first.
        first: When the first of them was made.
        last: When the last of them was made.
    """

    skill: str
    session: str
    requests: list[Request] = field(default_factory=list)
    first: float = 0.0
    last: float = 0.0

    def __post_init__(self) -> None:
        if self.requests:
            self.requests.sort(key=itemgetter(1))
            self.first, self.last = self.requests[0][1], self.requests[-1][1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "session": self.session,
            "first": stamp(self.first),
            "last": stamp(self.last),
            "requests": [{"query": q, "time": stamp(t)} for q, t in self.requests],
        }


@dataclass(slots=True)
class SkillUsage:
    """What happened to one skill in the window."""

    name: str
    matched: int = 0
    loaded: Counter[str] = field(default_factory=Counter)
    silent_misses: list[SilentMiss] = field(default_factory=list)
    script_runs: int = 0
    script_failures: int = 0
    last_used: float | None = None
    daily_loads: Counter[str] = field(default_factory=Counter)

    @property
    def loads(self) -> int:
        """Loads by every actor."""
        return sum(self.loaded.values())

    def used(self, moment: float) -> None:
        """Note a load or a run at ``moment``."""
        if self.last_used is None or moment > self.last_used:
            self.last_used = moment

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "matched": self.matched,
            "loaded": {"total": self.loads, "by_actor": dict(sorted(self.loaded.items()))},
            "silent_misses": [m.to_dict() for m in self.silent_misses],
            "script_runs": self.script_runs,
            "script_failures": self.script_failures,
            "last_used": stamp(self.last_used),
            "daily_loads": dict(sorted(self.daily_loads.items())),
        }


@dataclass(slots=True)
class Unmatched:
    """A request (by its text) that no skill matched confidently."""

    query: str
    count: int = 0
    last: float = 0.0
    sessions: set[str] = field(default_factory=set)
    best: str | None = None
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "query": self.query,
            "count": self.count,
            "last": stamp(self.last),
            "sessions": len(self.sessions),
            "best": self.best,
            "score": self.score,
        }


@dataclass(slots=True)
class Sources:
    """Where the report's numbers come from, and what it could not read."""

    telemetry: bool = True
    events: int = 0
    audit: bool = True
    rows: int = 0
    audit_problem: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "telemetry": {"enabled": self.telemetry, "events": self.events},
            "audit": {"available": self.audit, "rows": self.rows, "problem": self.audit_problem},
            "notes": list(self.notes),
        }


@dataclass(slots=True)
class UsageReport:
    """How skills were used in a window (see the module docstring for the JSON form)."""

    since: float | None
    until: float
    session: str | None
    sources: Sources
    skills: dict[str, SkillUsage] = field(default_factory=dict)
    never_used: list[str] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    days: dict[str, Counter[str]] = field(default_factory=dict)

    def skill(self, name: str) -> SkillUsage:
        """The usage of ``name`` (created empty on first use)."""
        found = self.skills.get(name)
        if found is None:
            found = self.skills[name] = SkillUsage(name)
        return found

    def count_day(self, day: str, what: str, count: int = 1) -> None:
        """Add ``count`` ``what`` (``matched``, ``loads``, ``silent_misses``) to ``day``."""
        counts = self.days.get(day)
        if counts is None:
            counts = self.days[day] = Counter()
        counts[what] += count

    @property
    def silent_misses(self) -> list[SilentMiss]:
        """Every silent miss, newest first."""
        found = [m for s in self.skills.values() for m in s.silent_misses]
        return sorted(found, key=lambda m: m.last, reverse=True)

    def ranked(self) -> list[SkillUsage]:
        """Skills by silent misses, then loads, then matches (most first), then name."""
        return sorted(
            self.skills.values(),
            key=lambda s: (-len(s.silent_misses), -s.loads, -s.matched, s.name),
        )

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (``"schema": 1``)."""
        return {
            "schema": SCHEMA,
            "since": stamp(self.since),
            "until": stamp(self.until),
            "session": self.session,
            "sources": self.sources.to_dict(),
            "skills": [s.to_dict() for s in self.ranked()],
            "never_used": list(self.never_used),
            "unmatched": [u.to_dict() for u in self.unmatched],
            "days": [
                {
                    "day": day,
                    "matched": counts["matched"],
                    "loads": counts["loads"],
                    "silent_misses": counts["silent_misses"],
                }
                for day, counts in sorted(self.days.items())
            ],
        }
