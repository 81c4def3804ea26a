"""Usage aggregation (skilldeck.core.usage): matches, loads by actor, silent misses, script
runs and failures, never-used skills and unmatched requests, from real telemetry files and
a real SQLite session store."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skilldeck.core.config import load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import AuditEntry, SessionStore
from skilldeck.core.telemetry import Telemetry
from skilldeck.core.usage import (
    TELEMETRY_OFF,
    USAGE_EVENTS,
    aggregate_usage,
    collect_usage,
    load_trigger_cases,
    usage_events,
)

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
T0 = NOW.timestamp()


def selected(query: str, skill: str | None, session: str | None, at: float) -> dict[str, Any]:
    candidates = [{"name": skill or "near", "score": 0.31}]
    return {
        "event": "skill_selected",
        "query": query,
        "selected": skill,
        "confident": skill is not None,
        "session": session,
        "candidates": candidates,
        "_time": at,
    }


def loaded(skill: str, actor: str, session: str | None, at: float) -> dict[str, Any]:
    return {"event": "skill_loaded", "name": skill, "actor": actor, "session": session, "_time": at}


def row(action: str, subject: str, session: str | None, at: float, **detail: Any) -> AuditEntry:
    return AuditEntry(0, at, session, "agent", action, subject, detail)


def test_a_confident_match_never_loaded_in_its_session_is_a_silent_miss() -> None:
    events = [
        selected("fill a pdf form", "pdf", "s1", T0),
        selected("fill the pdf form again", "pdf", "s1", T0 + 5),
        selected("fill a pdf form", "pdf", "s2", T0 + 10),
        loaded("pdf", "agent", "s2", T0 + 11),
    ]
    audit = [row("activate", "pdf", "s2", T0 + 11)]
    report = aggregate_usage(events, audit, ["pdf", "csv"], since=None, until=T0 + 60)
    pdf = report.skills["pdf"]
    assert pdf.matched == 3
    assert dict(pdf.loaded) == {"agent": 1}  # the event and the audit row are one load
    assert [(m.session, [q for q, _ in m.requests]) for m in pdf.silent_misses] == [
        ("s1", ["fill a pdf form", "fill the pdf form again"])
    ]
    assert report.never_used == ["csv"]
    day = report.to_dict()["days"][0]
    assert (day["matched"], day["loads"], day["silent_misses"]) == (3, 1, 1)


def test_a_load_before_the_search_still_counts_and_loads_outside_sessions_add_up() -> None:
    events = [
        loaded("pdf", "agent", "s1", T0),
        selected("pdf form", "pdf", "s1", T0 + 1),
        loaded("pdf", "cli", None, T0 + 2),
        loaded("pdf", "agent", None, T0 + 3),
    ]
    report = aggregate_usage(events, [], [], since=None, until=T0 + 9)
    pdf = report.skills["pdf"]
    assert pdf.silent_misses == []
    assert dict(pdf.loaded) == {"agent": 2, "cli": 1}
    assert pdf.last_used == T0 + 3


def test_an_operator_force_load_in_the_audit_counts_by_its_actor() -> None:
    audit = [AuditEntry(1, T0, "s9", "operator", "activate", "pdf", {})]
    events = [selected("pdf form", "pdf", "s9", T0 - 1)]
    report = aggregate_usage(events, audit, [], since=None, until=T0 + 1)
    assert dict(report.skills["pdf"].loaded) == {"operator": 1}
    assert report.skills["pdf"].silent_misses == []


def test_requests_that_matched_nothing_are_grouped_with_the_nearest_skill() -> None:
    events = [
        selected("Deploy to  Kubernetes", None, "s1", T0),
        selected("deploy to kubernetes", None, "s2", T0 + 5),
        selected("draw a cat", None, None, T0 + 6),
    ]
    report = aggregate_usage(events, [], ["pdf"], since=None, until=T0 + 9)
    first = report.unmatched[0]
    assert (first.count, len(first.sessions), first.best, first.score) == (2, 2, "near", 0.31)
    assert report.unmatched[1].query == "draw a cat"
    assert report.never_used == ["pdf"]


def test_script_failures_come_from_either_shape_of_the_audit() -> None:
    on_the_run_row = [
        row("script_run", "pdf/fill.py", "s1", T0, exit_code=0),
        row("script_run", "pdf/fill.py", "s1", T0 + 1, exit_code=3),
    ]
    own_row = [
        row("script_run", "pdf/fill.py", "s1", T0),
        row("script_exit", "pdf/fill.py", "s1", T0 + 1, run=1, exit_code=0, timed_out=True),
    ]
    never_started = [
        row("script_run", "pdf/fill.py", "s1", T0),
        row("script_exit", "pdf/fill.py", "s1", T0 + 1, run=1, exit_code=None, error="x"),
        row("script_run", "pdf/fill.py", "s1", T0 + 2),
        row("script_exit", "pdf/fill.py", "s1", T0 + 3, run=3, exit_code=0),
    ]
    for audit, runs in ((on_the_run_row, 2), (own_row, 1), (never_started, 2)):
        report = aggregate_usage([], audit, [], since=None, until=T0 + 9)
        assert report.skills["pdf"].script_runs == runs
        assert report.skills["pdf"].script_failures == 1


def test_without_exit_status_in_the_audit_failures_come_from_telemetry() -> None:
    audit = [row("script_run", "pdf/fill.py", "s1", T0)]
    events = [{"event": "skill_exec_result", "name": "pdf", "exit_code": 2, "_time": T0 + 1}]
    report = aggregate_usage(events, audit, [], since=None, until=T0 + 9)
    assert (report.skills["pdf"].script_runs, report.skills["pdf"].script_failures) == (1, 1)


def test_the_session_filter_and_the_window() -> None:
    events = [selected("pdf", "pdf", "s1", T0), selected("csv", "csv", "s2", T0)]
    audit = [row("activate", "csv", "s2", T0 - 3600)]
    report = aggregate_usage(events, audit, [], since=T0 - 60, until=T0 + 9, session="s2")
    assert list(report.skills) == ["csv"]
    assert report.skills["csv"].loads == 0  # the load is before the window
    assert len(report.skills["csv"].silent_misses) == 1


def write_day(directory: Path, day: datetime, records: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"ts": day.isoformat(), **r}) for r in records]
    (directory / f"events-{day.date().isoformat()}.jsonl").write_text(
        "\n".join([*lines, "{not json", "[1]"]) + "\n", encoding="utf-8"
    )


def test_events_are_read_from_the_window_and_bad_lines_skipped(tmp_path: Path) -> None:
    old, new = NOW - timedelta(days=9), NOW
    write_day(tmp_path, old, [{"event": "skill_loaded", "name": "old"}])
    write_day(
        tmp_path,
        new,
        [
            {"event": "skill_loaded", "name": "new"},
            {"event": "tool_authorization", "tool": "x", "note": "skill_loaded"},
            {"event": "skill_resource_requested", "name": "new"},
        ],
    )
    found = list(usage_events(tmp_path, (NOW - timedelta(days=7)).timestamp()))
    assert [(e["event"], e["name"]) for e in found] == [("skill_loaded", "new")]
    assert found[0]["_time"] == NOW.timestamp()


def _reference(directory: Path) -> list[tuple[str, object]]:
    """What a plain ``json.loads`` of every line finds: the oracle of the pre-filter."""
    found: list[tuple[str, object]] = []
    for path in sorted(directory.glob("events-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("event") in USAGE_EVENTS:
                    found.append((record["event"], record.get("name") or record.get("query")))
    return found


def _read_back(directory: Path) -> list[tuple[str, object]]:
    return [(e["event"], e.get("name") or e.get("query")) for e in usage_events(directory)]


def test_the_pre_filter_keeps_every_spelling_of_a_usage_event(tmp_path: Path) -> None:
    stamp = NOW.isoformat()
    unmatched = {"ts": stamp, "event": "skill_selected", "selected": None, "confident": False}
    match = unmatched | {"confident": True, "session": "s2"}
    lines = [
        # odd whitespace around the key and the value
        f'{{"ts":"{stamp}" ,"event"\t :  "skill_loaded","name":"pdf","session":"s1"}}',
        # the event name spelled with a \u escape (valid JSON; decodes to skill_selected)
        f'{{"ts": "{stamp}", "event": "skill\\u005fselected", "query": "fill a form", '
        '"selected": "pdf", "confident": true, "session": "s1"}',
        # ASCII-escaped text elsewhere on the line
        json.dumps(unmatched | {"query": "résumé"}, ensure_ascii=True),
        # mentions of event names that are not the event: decoded, then dropped
        json.dumps({"ts": stamp, "event": "tool_authorization", "tool": "skill_selected"}),
        json.dumps({"ts": stamp, "event": "skill_resource_requested", "name": "skill_loaded"}),
        # a request and a skill named like events are still a match, not a load
        json.dumps(match | {"query": 'run "skill_loaded"', "selected": "skill_loaded"}),
    ]
    tmp_path.joinpath(f"events-{NOW.date().isoformat()}.jsonl").write_text(
        "\n".join(lines) + "\n", encoding="utf-8"
    )
    assert _read_back(tmp_path) == _reference(tmp_path)
    assert len(_reference(tmp_path)) == 4
    report = aggregate_usage(usage_events(tmp_path), [], [], since=None, until=T0 + 9)
    assert report.skills["pdf"].matched == 1 and report.skills["pdf"].loads == 1
    assert report.skills["pdf"].silent_misses == []
    assert report.skills["skill_loaded"].matched == 1 and report.skills["skill_loaded"].loads == 0


_WORDS = st.sampled_from(
    [*USAGE_EVENTS, "tool_authorization", "skill_loaded_x", '"', "\\", "\\u", "é", " ", "\t"]
)


def _spell(event: str, escaped: int) -> str:
    """``event`` as a JSON string, with its ``escaped``-th character as a \\u escape."""
    at = escaped % len(event)
    return '"' + event[:at] + f"\\u{ord(event[at]):04x}" + event[at + 1 :] + '"'


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*USAGE_EVENTS, "tool_authorization", "skill_exec_attempt"]),
            st.lists(_WORDS, max_size=4).map("".join),
            st.booleans(),
            st.integers(0, 40),
            st.sampled_from([(", ", ": "), (",", ":"), (" ,\t", " :  ")]),
        ),
        max_size=12,
    )
)
def test_the_pre_filter_never_drops_what_json_loads_finds(
    rows: list[tuple[str, str, bool, int, tuple[str, str]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines = []
        for event, text, ascii_only, escaped, separators in rows:
            record = {"ts": NOW.isoformat(), "event": "@", "name": text, "query": text}
            line = json.dumps(record, ensure_ascii=ascii_only, separators=separators)
            spelled = _spell(event, escaped) if escaped else json.dumps(event)
            lines.append(line.replace('"@"', spelled, 1))
        folder.joinpath(f"events-{NOW.date().isoformat()}.jsonl").write_text(
            "".join(f"{line}\n" for line in lines), encoding="utf-8"
        )
        assert _read_back(folder) == _reference(folder)


def test_collect_reads_telemetry_and_the_real_session_store(isolated_home: Path) -> None:
    settings = load_settings()
    store = SessionStore(settings.sessions_db, settings=settings)
    session = store.create().id
    Telemetry.from_settings(settings).emit(
        "skill_selected", query="fill pdf", selected="pdf", confident=True, session=session
    )
    store.activate_skill(store.create().id, "csv", actor="operator")
    store.close()
    report = collect_usage(settings, ["pdf", "csv", "idle"], since=NOW - timedelta(days=3650))
    assert report.sources.audit and report.sources.events == 1
    assert [m.session for m in report.skills["pdf"].silent_misses] == [session]
    assert dict(report.skills["csv"].loaded) == {"operator": 1}
    assert report.never_used == ["idle"]


def test_telemetry_off_says_what_the_audit_still_shows(isolated_home: Path) -> None:
    settings = load_settings()
    Telemetry.from_settings(settings).emit(
        "skill_selected", query="x", selected="pdf", confident=True
    )
    off = dataclasses.replace(settings, telemetry=False)
    store = SessionStore(off.sessions_db, settings=off)
    store.activate_skill(store.create().id, "csv")
    store.close()
    report = collect_usage(off, ["csv"])
    assert report.sources.notes == [TELEMETRY_OFF] and report.sources.events == 0
    assert list(report.skills) == ["csv"] and report.skills["csv"].loads == 1
    assert report.to_dict()["sources"]["telemetry"] == {"enabled": False, "events": 0}


def test_an_unreadable_audit_is_a_note_not_an_error(isolated_home: Path) -> None:
    settings = load_settings()
    settings.sessions_db.mkdir(parents=True)  # a folder where the database should be
    Telemetry.from_settings(settings).emit("skill_loaded", name="pdf", actor="agent", session="s1")
    report = collect_usage(settings, [])
    assert not report.sources.audit and report.sources.audit_problem
    assert report.skills["pdf"].loads == 1
    assert any("audit could not be read" in n for n in report.sources.notes)


def test_the_json_form_is_versioned_and_complete() -> None:
    events = [selected("fill a pdf form", "pdf", "s1", T0)]
    data = aggregate_usage(events, [], ["pdf"], since=T0 - 1, until=T0 + 1).to_dict()
    assert data["schema"] == 1
    assert set(data) == {
        "schema", "since", "until", "session", "sources", "skills", "never_used", "unmatched",
        "days",
    }  # fmt: skip
    skill = data["skills"][0]
    assert set(skill) == {
        "name", "matched", "loaded", "silent_misses", "script_runs", "script_failures",
        "last_used", "daily_loads",
    }  # fmt: skip
    assert skill["silent_misses"][0]["requests"][0] == {
        "query": "fill a pdf form",
        "time": "2026-11-27T12:00:00+00:00",
    }


def test_trigger_cases_load_from_a_json_list_or_json_lines(tmp_path: Path) -> None:
    listed = tmp_path / "a.json"
    listed.write_text('[{"query": "q1", "should_trigger": true}]', encoding="utf-8")
    lines = tmp_path / "b.jsonl"
    lines.write_text(
        '{"query": "q1", "should_trigger": true}\n\n{"query": "q2", "should_trigger": false}\n',
        encoding="utf-8",
    )
    assert load_trigger_cases(listed) == [("q1", True)]
    assert load_trigger_cases(lines) == [("q1", True), ("q2", False)]
    for bad in ('[{"query": "", "should_trigger": true}]', "[1]", "{not json"):
        listed.write_text(bad, encoding="utf-8")
        with pytest.raises(SkilldeckError) as caught:
            load_trigger_cases(listed)
        assert caught.value.code is ErrorCode.INVALID_PARAM
    with pytest.raises(SkilldeckError) as missing:
        load_trigger_cases(tmp_path / "none.json")
    assert missing.value.code is ErrorCode.NOT_FOUND


def test_collect_reads_the_audit_of_a_postgresql_store(
    pg_url: str, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_SESSIONS_URL", pg_url)
    settings = load_settings()
    store = SessionStore(settings=settings)
    session = store.create().id
    store.activate_skill(session, "csv", actor="operator")
    run = store.record(session, "script_run", "csv/run.py", {"allowed": True})
    store.record(session, "script_exit", "csv/run.py", {"run": run, "exit_code": 2})
    store.close()
    Telemetry.from_settings(settings).emit(
        "skill_selected", query="fill pdf", selected="pdf", confident=True, session=session
    )
    report = collect_usage(settings, ["csv", "pdf"])
    assert report.sources.audit and report.sources.rows >= 4
    csv = report.skills["csv"]
    assert dict(csv.loaded) == {"operator": 1}
    assert (csv.script_runs, csv.script_failures) == (1, 1)
    assert [m.session for m in report.skills["pdf"].silent_misses] == [session]
