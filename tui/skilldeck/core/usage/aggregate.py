"""Usage from telemetry events and audit rows: pure functions, no I/O.

Loads: an MCP load is both a ``skill_loaded`` event and an ``activate`` audit row; per
session, skill and actor the source with more of them counts (so a load is never counted
twice, and a load whose audit row could not be written still counts). Loads outside a
session (the CLI, context injection) come from telemetry only.

Script runs come from the audit's ``script_run`` rows; their exit status from audit rows
that carry an ``exit_code`` (a ``script_exit`` row after the run, or the ``script_run`` row
itself; ``None`` means the run could not start, a failure), or, when the audit has none,
from the ``skill_exec_result`` events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Any, Protocol

from skilldeck.core.usage.model import (
    Request,
    SilentMiss,
    Sources,
    Unmatched,
    UsageReport,
    day_of,
)


class AuditRow(Protocol):
    """The fields of an audit row usage reads (:class:`~skilldeck.core.sessions.AuditEntry`)."""

    @property
    def time(self) -> float: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def actor(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def detail(self) -> dict[str, Any]: ...


Load = tuple[str, str, str, float, str]
"""(session, skill, actor, time, day) of a load."""
Match = tuple[str, str, str, float, str]
"""(session, skill, query, time, day) of a confident match in a session."""
Miss = tuple[str, str, float, str | None, str | None, float | None]
"""(query, normalised query, time, session, best candidate, its score) of a request that
matched nothing confidently."""
_NEVER = float("-inf")


@dataclass
class _Tally:
    """What the two sources say, before they are reconciled: flat lists of tuples of plain
    values, which cost the garbage collector nothing while 100,000 events stream by."""

    matched: list[tuple[str, str]] = field(default_factory=list)
    matches: list[Match] = field(default_factory=list)
    audit_loads: list[Load] = field(default_factory=list)
    event_loads: list[Load] = field(default_factory=list)
    loose_loads: list[Load] = field(default_factory=list)
    runs: list[tuple[str, float]] = field(default_factory=list)
    audit_results: list[tuple[str, bool]] = field(default_factory=list)
    event_results: list[tuple[str, float, bool]] = field(default_factory=list)
    unmatched: list[Miss] = field(default_factory=list)


def aggregate_usage(
    events: Iterable[dict[str, Any]],
    audit: Iterable[AuditRow],
    catalog: Iterable[str],
    *,
    since: float | None,
    until: float,
    session: str | None = None,
    sources: Sources | None = None,
) -> UsageReport:
    """The usage report of a window.

    Args:
        events: Usage telemetry events with ``_time`` (:func:`~.events.usage_events`).
        audit: Audit rows, any order; rows before ``since`` are ignored.
        catalog: Names of the catalog's skills (for ``never_used``).
        since: Start of the window (Unix time), or None for everything kept.
        until: End of the window (now).
        session: Only this session's requests, loads and runs.
        sources: What was read (counts are filled in here).
    """
    report = UsageReport(since, until, session, sources or Sources())
    tally = _Tally()
    for record in events:
        if session is None or record.get("session") == session:
            report.sources.events += 1
            _event(tally, record)
    for row in audit:
        if (since is None or row.time >= since) and (session is None or row.session_id == session):
            report.sources.rows += 1
            _audit_row(tally, row)
    for (name, day), count in Counter(tally.matched).items():
        report.skill(name).matched += count
        report.count_day(day, "matched", count)
    _silent_misses(report, tally, _loads(report, tally))
    _scripts(report, tally)
    used = {s.name for s in report.skills.values() if s.matched or s.loads}
    report.never_used = sorted(set(catalog) - used)
    report.unmatched = _unmatched(tally.unmatched)
    return report


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _event(tally: _Tally, record: dict[str, Any]) -> None:
    kind = record.get("event")
    moment = float(record["_time"])
    if kind == "skill_selected":
        day = record.get("_day") or day_of(moment)
        _selected(tally, record, moment, day)
        return
    name = _text(record.get("name"))
    if name is None:
        return
    if kind == "skill_loaded":
        where = _text(record.get("session"))
        actor = _text(record.get("actor")) or "unknown"
        load = (where or "", name, actor, moment, record.get("_day") or day_of(moment))
        (tally.event_loads if where else tally.loose_loads).append(load)
    elif kind == "skill_exec_result" and record.get("kind") != "toolset":
        exit_code = record.get("exit_code")
        failed = bool(record.get("timed_out")) or exit_code != 0
        tally.event_results.append((name, moment, failed))


def _selected(tally: _Tally, record: dict[str, Any], moment: float, day: str) -> None:
    where = _text(record.get("session"))
    query = str(record.get("query") or "")
    chosen = _text(record.get("selected"))
    if chosen and record.get("confident"):
        tally.matched.append((chosen, day))
        if where is not None:
            tally.matches.append((where, chosen, query, moment, day))
        return
    best: str | None = None
    score: float | None = None
    candidates = record.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        best = _text(candidates[0].get("name"))
        value = candidates[0].get("score")
        score = float(value) if isinstance(value, int | float) else None
    key = " ".join(query.lower().split())
    tally.unmatched.append((query, key, moment, where, best, score))


def _unmatched(misses: list[Miss]) -> list[Unmatched]:
    """Requests grouped by their normalised text, most frequent first."""
    grouped: dict[str, Unmatched] = {}
    for query, key, moment, where, best, score in misses:
        entry = grouped.get(key)
        if entry is None:
            entry = grouped[key] = Unmatched(query)
        entry.count += 1
        entry.last = max(entry.last, moment)
        entry.best, entry.score = best, score
        if where is not None:
            entry.sessions.add(where)
    return sorted(grouped.values(), key=lambda u: (-u.count, -u.last))


def _audit_row(tally: _Tally, row: AuditRow) -> None:
    detail = row.detail if isinstance(row.detail, dict) else {}
    if row.action == "activate" and row.session_id:
        load = (row.session_id, row.subject, row.actor, row.time, day_of(row.time))
        tally.audit_loads.append(load)
    elif row.action == "script_run":
        tally.runs.append((row.subject.split("/", 1)[0], row.time))
    if "exit_code" in detail:  # None: the run could not start (``error`` says why)
        exit_code = detail["exit_code"]
        failed = exit_code != 0 or isinstance(exit_code, bool) or bool(detail.get("timed_out"))
        tally.audit_results.append((row.subject.split("/", 1)[0], failed))


def _loads(report: UsageReport, tally: _Tally) -> set[tuple[str, str]]:
    """Count the loads (see the module docstring); return the (session, skill) pairs
    loaded."""
    audit = Counter(load[:3] for load in tally.audit_loads)
    event = Counter(load[:3] for load in tally.event_loads)
    counted = [load for load in tally.event_loads if event[load[:3]] > audit[load[:3]]]
    counted += [load for load in tally.audit_loads if audit[load[:3]] >= event[load[:3]]]
    counted += tally.loose_loads
    for (name, actor), count in Counter((load[1], load[2]) for load in counted).items():
        report.skill(name).loaded[actor] += count
    for (name, day), count in Counter((load[1], load[4]) for load in counted).items():
        report.skills[name].daily_loads[day] = count
    for day, count in Counter(load[4] for load in counted).items():
        report.count_day(day, "loads", count)
    latest: dict[str, float] = {}
    for _, name, _, moment, _ in counted:
        if moment > latest.get(name, _NEVER):
            latest[name] = moment
    for name, moment in latest.items():
        report.skills[name].used(moment)
    return {(key[0], key[1]) for key in audit.keys() | event.keys()}


def _silent_misses(report: UsageReport, tally: _Tally, loaded: set[tuple[str, str]]) -> None:
    grouped: dict[tuple[str, str], list[Request]] = {}
    first_days: Counter[str] = Counter()
    for where, name, query, moment, day in sorted(tally.matches, key=itemgetter(3)):
        key = (where, name)
        if key in loaded:
            continue
        requests = grouped.get(key)
        if requests is None:
            grouped[key] = [(query, moment)]
            first_days[day] += 1
        else:
            requests.append((query, moment))
    for (where, name), requests in grouped.items():
        report.skill(name).silent_misses.append(SilentMiss(name, where, requests))
    for day, count in first_days.items():
        report.count_day(day, "silent_misses", count)
    for usage in report.skills.values():
        usage.silent_misses.sort(key=attrgetter("last"), reverse=True)


def _scripts(report: UsageReport, tally: _Tally) -> None:
    if report.sources.audit:
        for name, moment in tally.runs:
            usage = report.skill(name)
            usage.script_runs += 1
            usage.used(moment)
    else:
        for name, moment, _ in tally.event_results:
            usage = report.skill(name)
            usage.script_runs += 1
            usage.used(moment)
    failures = tally.audit_results or [(name, failed) for name, _, failed in tally.event_results]
    for name, failed in failures:
        if failed:
            report.skill(name).script_failures += 1
