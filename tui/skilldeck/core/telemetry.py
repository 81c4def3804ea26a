"""Local, opt-out telemetry: one JSON object per line in daily files, never the network.

Files live under ``settings.telemetry_dir`` (``SKILLDECK_HOME/telemetry``) and are named
``events-YYYY-MM-DD.jsonl`` (UTC day). Each event is appended with a single ``write`` on a
descriptor opened with ``O_APPEND`` (kept open for the day), so several processes can
write at once without interleaving lines. Files older than ``telemetry_retention_days``
are deleted on the first write of each process and day. When a day's file reaches
``telemetry_max_bytes``, later events of that day are dropped and exactly one
``telemetry_capped`` line is written (a ``.capped`` marker created with ``O_EXCL`` makes
that hold across processes). Nothing here ever raises: telemetry must not break the
program it observes.

There is no module-level writer: each :class:`~skilldeck.core.workspace.Workspace` owns one
:class:`Telemetry` configured by its face's settings and passes it down (search, loading,
sessions, execution), so a face's settings decide for every event it causes.

Every record has ``ts``, ``event``, ``pid`` and ``schema`` (:data:`SCHEMA`); the fields
of each event, version by version, are listed in ``docs/telemetry.md``. With
``telemetry_otlp_endpoint`` set, records are also exported as OpenTelemetry logs
(:mod:`skilldeck.core.telemetry_export`). Events and their usual fields (the skill an event
is about is ``name``, which :func:`summarize` counts for "top skills"):

- ``skill_selected``: ``query``, ``selected`` (confident top result or None), ``confident``,
  ``candidates``.
- ``skill_loaded``: ``name``, ``path``, ``tokens``, ``latency_ms``, ``truncated``, ``actor``.
- ``skill_resource_requested``: ``name``, ``path``, ``ok``, ``size``.
- ``skill_exec_attempt``: ``name``, ``kind``, ``script`` (``skill/path``), ``skill_digest``
  (the digest of every file of the skill), ``allowed``, ``reason``, ``session``, ``actor``
  (every attempt, allowed or not).
- ``skill_exec_result``: ``name``, ``script``, ``skill_digest``, ``sandbox`` (the level the
  run got), ``exit_code``, ``latency_ms``, ``truncated``, ``timed_out``, ``session``.
- ``skill_embedding_fallback``: ``reason`` (why the semantic signal was not used).
- ``tool_authorization``: ``session``, ``tool``, ``decision`` (allowed, requires_approval or
  denied), ``reason``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from skilldeck.core.config import Settings

SCHEMA = "skilldeck.telemetry/1"
"""The schema every record names in its ``schema`` field (docs/telemetry.md lists the
fields of each event). Fields are only ever added within a version; a removed or renamed
field or event makes the next version."""
CAPPED_EVENT = "telemetry_capped"
EXPORT_UNAVAILABLE_EVENT = "telemetry_export_unavailable"
FILE_PREFIX = "events-"
FILE_SUFFIX = ".jsonl"


def _utcnow() -> datetime:
    return datetime.now(UTC)


def file_day(path: Path) -> date | None:
    """The UTC day of a telemetry file from its name, or None for other files."""
    name = path.name
    if not (name.startswith(FILE_PREFIX) and name.endswith(FILE_SUFFIX)):
        return None
    try:
        return date.fromisoformat(name[len(FILE_PREFIX) : -len(FILE_SUFFIX)])
    except ValueError:
        return None


class Telemetry:
    """Writer and reader of the local telemetry files.

    Args:
        directory: Folder of the daily files.
        enabled: False turns :meth:`emit` into a no-op (opt-out).
        retention_days: Files of days older than this are deleted.
        max_bytes: Size cap of one day's file.
        clock: Returns the current time (UTC); tests pass a fixed one.
        otlp_endpoint: Also export every event to this OTLP/HTTP logs URL ('' : no).
    """

    def __init__(
        self,
        directory: Path,
        *,
        enabled: bool = True,
        retention_days: int = 30,
        max_bytes: int = 10 * 1024 * 1024,
        clock: Any = None,
        otlp_endpoint: str = "",
    ) -> None:
        self.directory = directory
        self.otlp_endpoint = otlp_endpoint
        self._export: Any = None
        self.enabled = enabled
        self.retention_days = retention_days
        self.max_bytes = max_bytes
        self._clock = clock or _utcnow
        self._pruned_day: date | None = None
        self._capped_days: set[date] = set()
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._fd_day: date | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Telemetry:
        """A writer configured by ``settings``."""
        return cls(
            settings.telemetry_dir,
            enabled=settings.telemetry,
            retention_days=settings.telemetry_retention_days,
            max_bytes=settings.telemetry_max_bytes,
            otlp_endpoint=settings.telemetry_otlp_endpoint,
        )

    def path_for(self, day: date) -> Path:
        """The file holding the events of ``day``."""
        return self.directory / f"{FILE_PREFIX}{day.isoformat()}{FILE_SUFFIX}"

    def emit(self, event: str, **fields: Any) -> None:
        """Append one event. Never raises; does nothing when telemetry is off."""
        if not self.enabled:
            return
        try:
            self._emit(event, fields)
        except Exception:  # telemetry must never break the caller
            return

    def _emit(self, event: str, fields: dict[str, Any]) -> None:
        now = self._clock()
        day = now.date()
        with self._lock:
            if day in self._capped_days:
                return
            if self._pruned_day != day:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._pruned_day = day
                self.prune(now)
            record = {
                "ts": now.isoformat(timespec="milliseconds"),
                "event": event,
                "pid": os.getpid(),
                "schema": SCHEMA,
            }
            record.update({k: v for k, v in fields.items() if k not in record})
            self._send(record, now)
            line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode()
            path = self.path_for(day)
            fd = self._open(day, path)
            try:
                size = os.fstat(fd).st_size
                if size + len(line) > self.max_bytes:
                    self._capped_days.add(day)
                    self._mark_capped(fd, path, now, size)
                    self._close()
                    return
                os.write(fd, line)
            except OSError:
                self._close()
                raise

    def _send(self, record: dict[str, Any], now: datetime) -> None:
        """Export ``record`` when an OTLP endpoint is set (the exporter is made on the first
        event; without the extra one local event says so and export stays off)."""
        if not self.otlp_endpoint:
            return
        if self._export is None:
            from skilldeck.core.telemetry_export import OtlpExport

            try:
                self._export = OtlpExport(self.otlp_endpoint)
            except ImportError as exc:
                self.otlp_endpoint = ""
                note = {
                    **record,
                    "event": EXPORT_UNAVAILABLE_EVENT,
                    "reason": f"{exc} (pip install 'skilldeck[otlp]')",
                }
                line = json.dumps(note, ensure_ascii=False, default=str) + "\n"
                os.write(self._open(now.date(), self.path_for(now.date())), line.encode())
                return
        self._export.send(record, int(now.timestamp() * 1e9))

    def flush(self) -> None:
        """Send the events queued for export now (no-op without an endpoint)."""
        with contextlib.suppress(Exception):
            if self._export is not None:
                self._export.flush()

    def _open(self, day: date, path: Path) -> int:
        """The append descriptor of ``day``'s file, kept open (closing costs milliseconds
        on some file systems); reopened when the day changes."""
        if self._fd is not None and self._fd_day == day:
            return self._fd
        self._close()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o600)
        self._fd, self._fd_day = fd, day
        return fd

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd, self._fd_day = None, None

    def close(self) -> None:
        """Close the open file (emitting again reopens it)."""
        with self._lock:
            self._close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._close()

    def _mark_capped(self, fd: int, path: Path, now: datetime, size: int) -> None:
        marker = path.with_suffix(".capped")
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            return
        warning = {
            "ts": now.isoformat(timespec="milliseconds"),
            "event": CAPPED_EVENT,
            "pid": os.getpid(),
            "schema": SCHEMA,
            "message": f"telemetry file reached {size} bytes (cap {self.max_bytes}); "
            "later events of this day are dropped",
        }
        os.write(fd, (json.dumps(warning) + "\n").encode())

    def prune(self, now: datetime | None = None) -> list[Path]:
        """Delete files of days older than the retention; return what was deleted."""
        cutoff = (now or self._clock()).date() - timedelta(days=self.retention_days)
        removed: list[Path] = []
        try:
            entries = list(self.directory.iterdir())
        except OSError:
            return removed
        for path in entries:
            day = (
                file_day(path.with_suffix(FILE_SUFFIX))
                if path.suffix == ".capped"
                else (file_day(path))
            )
            if day is not None and day < cutoff:
                try:
                    path.unlink()
                    removed.append(path)
                except OSError:
                    continue
        return removed

    def files(self) -> list[Path]:
        """The daily files present, oldest first."""
        try:
            found = [p for p in self.directory.iterdir() if file_day(p) is not None]
        except OSError:
            return []
        return sorted(found, key=lambda p: p.name)

    def events(
        self, since: datetime | None = None, event: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Recorded events, oldest first, optionally filtered; bad lines are skipped."""
        since_utc = _as_utc(since) if since else None
        for path in self.files():
            day = file_day(path)
            if since_utc and day and day < since_utc.date():
                continue
            try:
                handle = path.open("r", encoding="utf-8", errors="replace")
            except OSError:
                continue
            with handle:
                for line in handle:
                    record = _parse_line(line)
                    if record is None:
                        continue
                    if event and record.get("event") != event:
                        continue
                    if since_utc and not _at_or_after(record.get("ts"), since_utc):
                        continue
                    yield record

    def summarize(
        self, since: datetime | None = None, event: str | None = None, top: int = 10
    ) -> dict[str, Any]:
        """Counts per event and per day, top skills and authorization decisions."""
        per_event: Counter[str] = Counter()
        per_day: Counter[str] = Counter()
        skills: Counter[str] = Counter()
        decisions: Counter[str] = Counter()
        total = 0
        for record in self.events(since, event):
            total += 1
            name = str(record.get("event"))
            per_event[name] += 1
            per_day[str(record.get("ts", ""))[:10]] += 1
            skill = _skill_of(record)
            if skill:
                skills[skill] += 1
            if name == "tool_authorization":
                decisions[f"{record.get('decision')}:{record.get('reason')}"] += 1
        return {
            "directory": str(self.directory),
            "enabled": self.enabled,
            "since": _as_utc(since).isoformat() if since else None,
            "event": event,
            "total": total,
            "events": dict(sorted(per_event.items())),
            "days": dict(sorted(per_day.items())),
            "top_skills": [{"skill": s, "count": n} for s, n in skills.most_common(top)],
            "authorizations": dict(sorted(decisions.items())),
        }


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _skill_of(record: dict[str, Any]) -> str | None:
    """The skill an event is about: ``name``, ``skill`` or ``selected`` (search)."""
    for key in ("name", "skill", "selected"):
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _parse_line(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _at_or_after(stamp: object, since: datetime) -> bool:
    if not isinstance(stamp, str):
        return False
    try:
        return _as_utc(datetime.fromisoformat(stamp)) >= since
    except ValueError:
        return False
