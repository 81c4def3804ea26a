"""A usage report from this machine's telemetry and the session audit."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from skilldeck.core.config import Settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.usage.aggregate import AuditRow, aggregate_usage
from skilldeck.core.usage.events import usage_events
from skilldeck.core.usage.model import Sources, UsageReport

if TYPE_CHECKING:
    from skilldeck.core.sessions import SessionStore

TELEMETRY_OFF = (
    "telemetry is off: matches, silent misses and unmatched requests need it; loads and "
    "script runs below come from the session audit"
)


def collect_usage(
    settings: Settings,
    catalog: Iterable[str],
    *,
    since: datetime | None = None,
    session: str | None = None,
    store: SessionStore | None = None,
    now: float | None = None,
) -> UsageReport:
    """How skills were used since ``since``, from telemetry (when on) and the audit.

    Args:
        settings: Where telemetry and the session store are, and whether telemetry is on.
        catalog: Names of the catalog's skills (for ``never_used``).
        since: Start of the window (aware or UTC), or None for everything kept.
        session: Only this session.
        store: The session store to read (default: opened from ``settings``, then closed).
        now: End of the window (Unix time; default: now).

    A store that cannot be read is not an error: the report says so in its notes and
    shows what telemetry holds.
    """
    start = since.timestamp() if since is not None else None
    sources = Sources(telemetry=settings.telemetry)
    events = usage_events(settings.telemetry_dir, start) if settings.telemetry else iter(())
    if not settings.telemetry:
        sources.notes.append(TELEMETRY_OFF)
    rows = _audit_rows(settings, session, store, sources)
    return aggregate_usage(
        events,
        rows,
        catalog,
        since=start,
        until=time.time() if now is None else now,
        session=session,
        sources=sources,
    )


def _audit_rows(
    settings: Settings, session: str | None, store: SessionStore | None, sources: Sources
) -> list[AuditRow]:
    """The audit rows (of ``session``, or all), or [] with a note when they cannot be read."""
    from skilldeck.core.sessions import SessionStore

    opened = store is None
    try:
        if store is None:
            store = SessionStore(settings.sessions_db, settings=settings)
        if session is not None and store.find(session) is None:
            sources.notes.append(f"no session {session!r} in the session store")
        return list(store.audit(session))
    except SkilldeckError as exc:
        sources.audit = False
        sources.audit_problem = exc.message
        sources.notes.append(
            "the session audit could not be read: loads and script runs are from telemetry, "
            "and silent misses only count loads it recorded"
        )
        return []
    finally:
        if opened and store is not None:
            store.close()
