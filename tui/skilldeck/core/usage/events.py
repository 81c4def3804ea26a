"""The telemetry events usage is made of, read fast from the daily JSONL files.

Only lines that may hold a ``skill_selected``, ``skill_loaded`` or ``skill_exec_result``
event are decoded (:func:`may_be_usage`); days before the window are not opened (the day is
in the file name).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skilldeck.core.telemetry import Telemetry, file_day
from skilldeck.core.usage.model import day_of

USAGE_EVENTS = ("skill_selected", "skill_loaded", "skill_exec_result")
"""The telemetry events a usage report reads."""
_MARK = re.compile('"(?:' + "|".join(USAGE_EVENTS) + ')"')


def may_be_usage(line: str) -> bool:
    """Whether a raw telemetry line may be a usage event, checked before ``json.loads``.

    Exact in the direction that matters: a JSON string decodes to an event name only if
    the line holds that name between quotes, or spells a letter of it as a ``\\u`` escape
    (no short escape stands for a letter or ``_``), so no usage event is ever skipped;
    a line that merely mentions a name is decoded and then dropped by its ``event``.
    On ``python tests/benchmarks/bench_usage.py``'s 100,000 lines (30% authorizations) it
    costs 25 ms CPU and saves 55 ms of ``json.loads``; more where other events dominate.
    """
    return _MARK.search(line) is not None or "\\u" in line


def event_time(record: dict[str, Any]) -> float | None:
    """The Unix time of an event's ``ts``, or None when it has none usable."""
    stamp = record.get("ts")
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def usage_events(directory: Path, since: float | None = None) -> Iterator[dict[str, Any]]:
    """The usage events under ``directory`` at or after ``since``, oldest file first; each
    record gets ``_time`` (its Unix time) and ``_day`` (its UTC day, ``YYYY-MM-DD``). Bad
    lines and unreadable files are skipped."""
    first_day = datetime.fromtimestamp(since, UTC).date() if since is not None else None
    for path in Telemetry(directory, enabled=False).files():
        day = file_day(path)
        if first_day is not None and day is not None and day < first_day:
            continue
        try:
            handle = path.open("r", encoding="utf-8", errors="replace")
        except OSError:
            continue
        with handle:
            yield from _read(handle, since)


def _read(lines: Iterable[str], since: float | None) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not may_be_usage(line):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("event") not in USAGE_EVENTS:
            continue
        moment = event_time(record)
        if moment is None or (since is not None and moment < since):
            continue
        record["_time"] = moment
        record["_day"] = day_of(moment, record["ts"])
        yield record


def telemetry_mark(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """A cheap fingerprint of the telemetry files (name, size, mtime of each): it changes
    when an event is written, so a live view re-reads only then."""
    marks: list[tuple[str, int, int]] = []
    for path in Telemetry(directory, enabled=False).files():
        try:
            info = path.stat()
        except OSError:
            continue
        marks.append((path.name, info.st_size, info.st_mtime_ns))
    return tuple(marks)
