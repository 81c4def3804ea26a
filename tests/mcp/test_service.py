"""The server's protocol-free core (:class:`SkillService`), in process: fast checks of the
freshness, index and session logic the subprocess tests exercise end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import allowlist_line, write_skill
from skilldeck.core.config import Settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import SessionStore
from skilldeck.mcp.service import INSTRUCTIONS_SKILLS, SkillService


def _service(root: Path, **settings: object) -> SkillService:
    return SkillService(Settings(semantic=False, **settings), [root])  # type: ignore[arg-type]


def test_index_follows_changes(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Summarise git history. Use for commits.")
    service = _service(root)
    index = service.workspace.index("visible")
    assert not service.refresh()
    write_skill(root, "csv-cleaner", description="Clean CSV files. Use when a CSV is broken.")
    assert service.refresh()
    index = service.workspace.index(
        "visible"
    )  # the workspace's, updated for what changed (see the store)
    assert len(index) == 2
    with service.workspace.lock:
        names = [r.skill.name for r in index.search("clean csv files").results]
    assert names[0] == "csv-cleaner"
    (root / "csv-cleaner" / "SKILL.md").unlink()
    (root / "csv-cleaner").rmdir()
    assert service.refresh()
    assert [s.name for s in service.visible] == ["git-history"]
    assert len(service.workspace.index("visible")) == 1


def test_lexical_index_first_even_when_semantic_is_configured(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Summarise git history. Use for commits.")
    service = SkillService(Settings(semantic=True), [root])
    assert service.workspace.index("visible").semantic is False
    assert _service(root).upgrade_index() is False


def test_instructions_stay_short_for_large_catalogs(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for i in range(INSTRUCTIONS_SKILLS + 20):
        write_skill(
            root,
            f"skill-{i:03d}",
            description=f"Does task number {i} well. Use when task {i} comes up.",
        )
    text = _service(root).instructions()
    assert len(text) < 3000
    assert f"{INSTRUCTIONS_SKILLS + 20} skills available" in text
    assert "more skills not shown" in text and "list_skills" in text


def test_sessions_per_client_and_their_end(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Summarise git history. Use for commits.")
    service = _service(root, session_mode="strict")
    first = service.session_for("http-session:a")
    assert service.session_for("http-session:a") == first
    second = service.session_for("http-session:b")
    assert second != first
    service.end_client("http-session:a")
    with SessionStore(isolated_home / "sessions.db") as store:
        assert store.get(first).ended is not None
        assert store.get(second).ended is None and store.get(second).mode == "strict"
    service.close()
    with SessionStore(isolated_home / "sessions.db") as store:
        assert store.get(second).ended is not None


def test_joining_needs_an_open_session(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Summarise git history. Use for commits.")
    with SessionStore(isolated_home / "sessions.db") as store:
        ended = store.create(actor="operator")
        store.end(ended.id)
    with pytest.raises(SkilldeckError) as unknown:
        _service_join(root, "missing")
    assert unknown.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(SkilldeckError) as closed:
        _service_join(root, ended.id)
    assert closed.value.code is ErrorCode.INVALID_PARAM
    with pytest.raises(SkilldeckError):
        SkillService(Settings(semantic=False, session_mode="chaos"), [root])


def _service_join(root: Path, session_id: str) -> SkillService:
    return SkillService(Settings(semantic=False), [root], session_id=session_id)


def test_store_repair_notice_is_logged_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from skilldeck.core.store import LocalStore

    root, home = tmp_path / "skills", tmp_path / "home"
    write_skill(root, "git-history", description="Summarise git history. Use for commits.")
    home.mkdir()
    (home / "store.sqlite3").write_bytes(b"not a database at all" * 100)
    service = SkillService(Settings(semantic=False), [root], store=LocalStore.open(home))
    captured = capsys.readouterr()
    assert captured.out == "", "stdout carries the protocol"
    assert captured.err.count("local store") == 1
    assert service.search_skills("git history").data["results"][0]["name"] == "git-history"


def test_unusable_session_store_degrades_and_heals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SKILLDECK_HOME under a regular file: skills are served, session calls say why, and
    the next call after the fault is fixed works (no restart)."""
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Summarise git history. Use for commits.")
    blocker = tmp_path / "blocker"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("SKILLDECK_HOME", str(blocker / "home"))
    service = _service(root)
    loaded = service.load_skill("git-history")
    assert loaded.data["session"] is None
    assert loaded.data["session_error"]["message"].startswith("sessions are unavailable")
    with pytest.raises(SkilldeckError) as err:
        service.check_tool("Read")
    assert err.value.code is ErrorCode.EXECUTION_ERROR
    with pytest.raises(SkilldeckError) as bad:
        service.check_tool("Read\x1b[2J")
    assert bad.value.code is ErrorCode.INVALID_PARAM
    blocker.unlink()
    (blocker / "home").mkdir(parents=True)
    assert service.check_tool("Read").data["reason"] == "not_in_allowlist"
    assert service.load_skill("git-history").data["session"] is not None
    service.close()


TOOLSET = '''
class Tools:
    def greet(self, name: str) -> str:
        """Greet someone."""
        return "hi " + name
'''


def test_waiting_toolset_is_mounted_once_when_allowed(tmp_path: Path, isolated_home: Path) -> None:
    """A skill with one allowed module and one still waiting: the allowed one is mounted
    once, not again at every poll while the other waits."""
    root = tmp_path / "skills"
    extra = 'toolsets: ["toolsets/a:Tools", "toolsets/b:Tools"]\n'
    folder = write_skill(root, "duo", description="Two toolsets. Use when testing.", extra=extra)
    (folder.parent / "toolsets").mkdir()
    for name in ("a", "b"):
        (folder.parent / "toolsets" / f"{name}.py").write_text(TOOLSET, encoding="utf-8")
    service = _service(root, skills_exec=True)
    try:
        loaded = service.load_skill("duo").data["toolsets"]
        assert loaded["mounted"] == [] and len(loaded["waiting"]) == 2
        line = allowlist_line(folder.parent, "toolsets/a.py")
        (isolated_home / "ALLOWLIST.txt").write_text(line + "\n", encoding="utf-8")
        assert service.mount_approved() == {"stdio"}
        assert [t.name for t in service.mounts.tools("stdio")] == ["duo.greet"]
        store = service.store()
        session = service.session_for("stdio")
        mounts = [e for e in store.audit(session) if e.action == "toolset_mount"]
        for _ in range(3):  # later polls: b still waits, a is already mounted
            assert service.mount_approved() == set()
        assert [e for e in store.audit(session) if e.action == "toolset_mount"] == mounts
    finally:
        service.close()


def test_search_results_carry_at_most_a_capped_description(tmp_path: Path) -> None:
    from skilldeck.mcp.answers import DESCRIPTION_CAP

    root = tmp_path / "skills"
    huge = "Summarise git history. Use for commits. " + "x" * 200_000
    write_skill(root, "git-history", description=huge)
    service = SkillService(Settings(semantic=False), [root])
    answer = service.search_skills("git history")
    [first] = answer.data["results"]
    assert first["description_truncated"] is True
    assert len(first["description"]) == DESCRIPTION_CAP + 1
    assert len(answer.text) < 4 * DESCRIPTION_CAP
