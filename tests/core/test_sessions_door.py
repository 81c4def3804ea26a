"""Sessions through the write door (``Workspace.actions``): who may start, end and govern a
session, and that a refusal writes nothing. The door tests run on SQLite and on a real
PostgreSQL server (``tests/pg_server.py``); the face tests drive the CLI in process and
the MCP server's client sessions, and read the audit rows each wrote."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from skilldeck.core.config import load_settings
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.sessions import SessionStore
from skilldeck.core.workspace import Actions, SessionRef, Workspace


@pytest.fixture
def store(isolated_home: Path, sessions_url: str) -> Iterator[SessionStore]:
    settings = load_settings()
    settings.sessions_url = sessions_url
    s = SessionStore(settings=settings)
    yield s
    s.close()


@pytest.fixture
def door(isolated_home: Path, tmp_path: Path) -> Actions:
    return Workspace(load_settings(), [tmp_path / "no-skills"]).actions


def _refused(call: Callable[..., Any], *args: Any, **kwargs: Any) -> SkilldeckError:
    with pytest.raises(SkilldeckError) as caught:
        call(*args, **kwargs)
    return caught.value


def _rows(store: SessionStore, session_id: str) -> list[tuple[str, str, str]]:
    return [(e.actor, e.action, e.subject) for e in store.audit(session_id)]


def test_an_agent_cannot_decide_change_the_mode_prune_or_force_load(
    door: Actions, store: SessionStore
) -> None:
    """The MCP server never offers these, but the rule lives in the door, so no face that
    acts for an agent can reach them: each is refused and nothing is written."""
    sid = door.create(store, actor="operator", mode="strict").id
    here = SessionRef(store, sid)
    before = _rows(store, sid)
    for call, args in (
        (door.approve, ("Bash",)),
        (door.deny, ("Bash",)),
        (door.revoke, ("Bash",)),
        (door.set_mode, ("permissive",)),
    ):
        refused = _refused(call, *args, actor="agent", session=here)
        assert refused.code is ErrorCode.PERMISSION_DENIED, refused
        assert refused.details["reason"] == "operator_only"
    refused = _refused(door.prune, store, 30, actor="agent")
    assert refused.details["reason"] == "operator_only"
    refused = _refused(door.force_load, "x", store=store, session=sid, source="mcp", actor="agent")
    assert refused.details["reason"] == "operator_only"
    assert _rows(store, sid) == before
    now = store.get(sid)
    assert (now.mode, now.approved, now.denied) == ("strict", [], [])


def test_an_agent_ends_only_a_session_an_agent_started(door: Actions, store: SessionStore) -> None:
    operators = door.create(store, actor="operator").id
    refused = _refused(door.end, actor="agent", session=SessionRef(store, operators))
    assert refused.code is ErrorCode.PERMISSION_DENIED
    assert refused.details["reason"] == "operator_session"
    assert store.get(operators).is_open
    assert [a for _, a, _ in _rows(store, operators)] == ["create"]

    own = door.create(store, actor="agent", label="mcp client").id
    ended = door.end(actor="agent", session=SessionRef(store, own))
    assert ended.ended is not None
    again = door.end(actor="agent", session=SessionRef(store, own))  # twice: nothing new
    assert again.ended == ended.ended
    assert _rows(store, own) == [("agent", "create", own), ("agent", "end", own)]


def test_nothing_changes_in_an_ended_session(door: Actions, store: SessionStore) -> None:
    """An approval or a mode change in an ended session would grant nothing (checks answer
    ``no_session``) but would read in the audit as if it had: refused, nothing written."""
    sid = door.create(store, actor="operator").id
    here = SessionRef(store, sid)
    door.end(actor="operator", session=here)
    before = _rows(store, sid)
    for call, arg in (
        (door.approve, "Bash"),
        (door.deny, "Bash"),
        (door.revoke, "Bash"),
        (door.set_mode, "permissive"),
    ):
        refused = _refused(call, arg, actor="operator", session=here)
        assert refused.code is ErrorCode.INVALID_PARAM, refused
        assert refused.details["reason"] == "session_ended"
    refused = _refused(door.force_load, "x", store=store, session=sid, source="cli")
    assert refused.details["reason"] == "session_ended"
    assert _rows(store, sid) == before
    assert door.check("Bash", actor="agent", session=here).reason == "no_session"


def test_an_unknown_session_is_not_found_for_every_change(
    door: Actions, store: SessionStore
) -> None:
    ghost = SessionRef(store, "feedfacecafe")
    for call, args in (
        (door.approve, ("Bash",)),
        (door.deny, ("Bash",)),
        (door.revoke, ("Bash",)),
        (door.set_mode, ("strict",)),
    ):
        assert _refused(call, *args, actor="operator", session=ghost).code is ErrorCode.NOT_FOUND
    assert _refused(door.end, actor="operator", session=ghost).code is ErrorCode.NOT_FOUND
    assert door.check("Bash", actor="agent", session=ghost).reason == "no_session"
    assert store.audit() == []


def test_the_operators_changes_write_one_audit_row_each(door: Actions, store: SessionStore) -> None:
    sid = door.create(store, actor="operator", mode="approval", label="demo").id
    here = SessionRef(store, sid)
    assert not door.check("Bash", actor="agent", session=here).allowed  # queued
    door.approve("Bash", actor="operator", session=here)
    door.revoke("Bash", actor="operator", session=here)
    door.deny("Write", actor="operator", session=here)
    door.set_mode("strict", actor="operator", session=here)
    door.end(actor="operator", session=here)
    assert _rows(store, sid) == [
        ("operator", "create", sid),
        ("agent", "request", "Bash"),
        ("operator", "approve", "Bash"),
        ("operator", "revoke", "Bash"),
        ("operator", "deny", "Write"),
        ("operator", "mode", "strict"),
        ("operator", "end", sid),
    ]


# -- the faces ---------------------------------------------------------------------------------


def _audit(session_id: str) -> list[tuple[str, str, str]]:
    with SessionStore(settings=load_settings()) as store:
        return _rows(store, session_id)


def test_the_cli_refuses_a_change_in_an_ended_session_and_writes_nothing(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old CLI approved, denied and changed the mode of an ended session, each with
    an audit row that granted nothing."""
    sid = run_cli(capsys, "session", "new", "--mode", "strict")[1].strip()
    assert run_cli(capsys, "session", "end", sid)[0] == 0
    before = _audit(sid)
    for argv in (("approve", sid, "Bash"), ("deny", sid, "Bash"), ("mode", sid, "permissive")):
        code, _, err = run_cli(capsys, "session", *argv)
        assert code == 2, err
        assert "INVALID_PARAM" in err and "has ended" in err and "Traceback" not in err
    assert _audit(sid) == before
    assert run_cli(capsys, "session", "end", sid)[0] == 0  # ending twice: no new row
    assert _audit(sid) == before


def test_the_cli_and_the_mcp_server_write_the_same_rows(
    isolated_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A session started, checked and ended by the CLI (an operator) and by an MCP client
    (an agent) leaves the same rows, each naming who acted."""
    from skilldeck.mcp.service import SkillService

    sid = run_cli(capsys, "session", "new", "--mode", "approval")[1].strip()
    assert run_cli(capsys, "session", "check", sid, "Bash")[0] == 1
    assert run_cli(capsys, "session", "end", sid)[0] == 0

    service = SkillService(load_settings(), [tmp_path / "no-skills"], mode="approval")
    try:
        assert service.check_tool("Bash", client_key="c1").data["requires_approval"] is True
        mcp = service.session_for("c1")
        service.end_client("c1")
    finally:
        service.close()
    for session_id in (sid, mcp):
        kinds = [(action, subject) for _, action, subject in _audit(session_id)]
        assert kinds == [("create", session_id), ("request", "Bash"), ("end", session_id)]
    assert [actor for actor, _, _ in _audit(sid)] == ["operator", "agent", "operator"]
    assert {actor for actor, _, _ in _audit(mcp)} == {"agent"}
