"""Local telemetry: daily files, retention, size cap, opt-out, summaries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from skilldeck.core.config import Settings, load_settings
from skilldeck.core.telemetry import CAPPED_EVENT, Telemetry


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_module_emit_writes_daily_jsonl(isolated_home: Path) -> None:
    Telemetry.from_settings(load_settings()).emit(
        "skill_loaded", name="pdf", path="/x/SKILL.md", tokens=12, latency_ms=1.5, truncated=False
    )
    files = list((isolated_home / "telemetry").iterdir())
    today = datetime.now(UTC).date().isoformat()
    assert [f.name for f in files] == [f"events-{today}.jsonl"]
    record = _lines(files[0])[0]
    assert record["event"] == "skill_loaded" and record["name"] == "pdf"
    assert record["truncated"] is False and record["pid"] == os.getpid()


def test_opt_out(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text("telemetry = false\n", encoding="utf-8")
    Telemetry.from_settings(load_settings()).emit("skill_selected", query="x")
    assert not (isolated_home / "telemetry").exists()
    quiet = Telemetry(isolated_home / "t", enabled=False)
    quiet.emit("skill_selected")
    assert not (isolated_home / "t").exists()


def test_days_and_retention(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 1, 1, 12, tzinfo=UTC))
    t = Telemetry(tmp_path, retention_days=30, clock=clock)
    t.emit("skill_selected", selected="a")
    clock.now += timedelta(days=1)
    t.emit("skill_selected", selected="a")
    assert [p.name for p in t.files()] == ["events-2026-01-01.jsonl", "events-2026-01-02.jsonl"]
    (tmp_path / "notes.txt").write_text("keep me")
    clock.now += timedelta(days=31)
    t.emit("skill_loaded", name="b")
    assert [p.name for p in t.files()] == ["events-2026-02-02.jsonl"]
    assert (tmp_path / "notes.txt").exists()


def test_size_cap_writes_one_warning(tmp_path: Path) -> None:
    t = Telemetry(tmp_path, max_bytes=600)
    for i in range(50):
        t.emit("skill_selected", query=f"query number {i}")
    other = Telemetry(tmp_path, max_bytes=600)  # another process, same day
    other.emit("skill_selected", query="late")
    [path] = t.files()
    records = _lines(path)
    assert [r["event"] for r in records].count(CAPPED_EVENT) == 1
    assert records[-1]["event"] == CAPPED_EVENT
    assert path.stat().st_size < 600 + 400


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def test_emit_never_raises(tmp_path: Path) -> None:
    """A folder that cannot be made, a value with no JSON form and one whose ``str()``
    raises: the event is written as text or dropped, the caller never sees an error, and
    the writer goes on recording."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    blocked = Telemetry(blocker / "sub")
    blocked.emit("skill_loaded", weird=object())
    assert blocked.files() == []
    writer = Telemetry(tmp_path / "telemetry")
    writer.emit("skill_loaded", weird=object(), data=b"\x00")
    writer.emit("skill_loaded", name="dropped", bad=_Unprintable())
    writer.emit("skill_loaded", name="after")
    [path] = writer.files()
    first, after = _lines(path)
    assert str(first["weird"]).startswith("<object object at") and first["data"] == "b'\\x00'"
    assert after["name"] == "after"  # the unprintable event was dropped, nothing else


def test_unwritable_directory_heals(tmp_path: Path) -> None:
    """A telemetry folder that cannot be created (a file in the way, as with a read-only
    home) drops events silently; once the fault is gone the same writer records again."""
    blocker = tmp_path / "home"
    blocker.write_text("x")
    writer = Telemetry(blocker / "telemetry")
    writer.emit("skill_loaded", name="lost")
    assert writer.files() == []
    blocker.unlink()
    writer.emit("skill_loaded", name="kept")
    assert [e["name"] for e in writer.events()] == ["kept"]
    writer.close()


WRITER = """
import sys
from pathlib import Path
from skilldeck.core.telemetry import Telemetry
t = Telemetry(Path(sys.argv[1]))
for i in range(200):
    t.emit("tool_authorization", worker=sys.argv[2], i=i, pad="x" * 300)
"""


def test_concurrent_processes_do_not_interleave(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(w)]) for w in range(3)
    ]
    assert [p.wait(60) for p in procs] == [0, 0, 0]
    records = [r for f in Telemetry(tmp_path).files() for r in _lines(f)]
    assert len(records) == 600
    assert {(r["worker"], r["i"]) for r in records} == {
        (str(w), i) for w in range(3) for i in range(200)
    }


def test_summarize(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 3, 1, 9, tzinfo=UTC))
    t = Telemetry(tmp_path, clock=clock)
    t.emit("skill_loaded", name="pdf")
    clock.now += timedelta(days=2)
    t.emit("skill_loaded", name="pdf")
    t.emit("skill_loaded", name="docx")
    t.emit("skill_selected", selected="pdf")
    t.emit("tool_authorization", decision="denied", reason="denied")
    with (tmp_path / "events-2026-03-03.jsonl").open("a") as handle:
        handle.write("not json\n")
    summary = t.summarize()
    assert summary["total"] == 5
    assert summary["events"] == {"skill_loaded": 3, "skill_selected": 1, "tool_authorization": 1}
    assert summary["days"] == {"2026-03-01": 1, "2026-03-03": 4}
    assert summary["top_skills"][0] == {"skill": "pdf", "count": 3}
    assert summary["authorizations"] == {"denied:denied": 1}
    recent = t.summarize(since=datetime(2026, 3, 2, tzinfo=UTC), event="skill_loaded")
    assert recent["total"] == 2 and recent["events"] == {"skill_loaded": 2}


def test_from_settings(isolated_home: Path) -> None:
    t = Telemetry.from_settings(Settings(telemetry=False, telemetry_max_bytes=5))
    assert t.directory == isolated_home / "telemetry"
    assert not t.enabled and t.max_bytes == 5
