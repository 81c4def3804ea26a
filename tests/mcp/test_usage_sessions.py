"""``skilldeck usage`` over two real MCP sessions (the SDK's stdio client against
``skilldeck serve``): one searches and never loads, one searches and loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_harness import ServerClient, cli, make_home

from conftest import write_skill

REQUEST = "fill in the fields of a pdf form"


def build(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "skills"
    write_skill(
        root,
        "pdf-forms",
        description="Fill in PDF form fields and flatten PDF forms. Use when a user asks to "
        "fill a pdf form.",
    )
    write_skill(root, "git-history", description="Explain git history and blame. Use for git log.")
    return root, make_home(tmp_path / "home")


def session(root: Path, home: Path, *, load: bool) -> str:
    """One MCP session: search for REQUEST (and load its match when ``load``); its id."""
    client = ServerClient(root, home).start()
    try:
        found = client.call("search_skills", {"query": REQUEST})
        data = found.structured_content
        assert isinstance(data, dict) and data["confident"], data
        assert data["results"][0]["name"] == "pdf-forms"
        if load:
            assert not client.call("load_skill", {"name": "pdf-forms"}).is_error
    finally:
        client.close()
    listed = json.loads(cli(home, "session", "list", "--all", "--format", "json"))
    return str(max(listed["sessions"], key=lambda s: s["created"])["id"])


def test_usage_reports_matches_loads_and_the_silent_miss(tmp_path: Path) -> None:
    root, home = build(tmp_path)
    ignored = session(root, home, load=False)
    used = session(root, home, load=True)
    assert ignored != used
    report = json.loads(cli(home, "--root", str(root), "usage", "--format", "json"))
    assert report["schema"] == 1
    skills: dict[str, Any] = {s["name"]: s for s in report["skills"]}
    pdf = skills["pdf-forms"]
    assert pdf["matched"] == 2
    assert pdf["loaded"] == {"total": 1, "by_actor": {"agent": 1}}
    assert [m["session"] for m in pdf["silent_misses"]] == [ignored]
    assert [r["query"] for r in pdf["silent_misses"][0]["requests"]] == [REQUEST]
    assert report["never_used"] == ["git-history"]
    assert sum(day["silent_misses"] for day in report["days"]) == 1
    only = json.loads(
        cli(home, "--root", str(root), "usage", "--session", used, "--format", "json")
    )
    assert {s["name"]: len(s["silent_misses"]) for s in only["skills"]} == {"pdf-forms": 0}
    text = cli(home, "--root", str(root), "usage")
    assert "pdf-forms" in text and ignored[:12] in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_context_request_is_a_match_and_a_load_in_the_clients_session(
    tmp_path: Path,
) -> None:
    """An agent's context request used to leave no ``skill_selected`` event and to load
    outside the client's session: usage never counted the match, ``usage --session`` missed
    the load, and the next request did not see the skill as used earlier."""
    from skilldeck.core.config import load_settings
    from skilldeck.core.sessions import SessionStore
    from skilldeck.core.usage import collect_usage
    from skilldeck.mcp.service import SkillService

    root, _ = build(tmp_path)
    settings = load_settings()
    service = SkillService(settings, [root], mode="strict")
    try:
        answer = service.skill_context(REQUEST, client_key="c1").data
        assert answer["tier"] == "full" and answer["skills"][0]["name"] == "pdf-forms", answer
        assert service.skill_context("sing me a sea shanty", client_key="c1").data["tier"] in (
            "breadcrumb",
            "listing",
        )
        sid = service.session_for("c1")
        again = service.skill_context(REQUEST, client_key="c1").data
        assert again["skills"][0]["recent"] is True  # used earlier in this session
        service.workspace.telemetry.flush()
        with SessionStore(settings=settings) as store:
            assert store.get(sid).active_skills == ["pdf-forms"]
            report = collect_usage(settings, ["pdf-forms", "git-history"], session=sid)
    finally:
        service.close()
    pdf = report.skills["pdf-forms"]
    assert pdf.matched == 2
    assert dict(pdf.loaded) == {"agent": 2}
    assert [u.query for u in report.unmatched] == ["sing me a sea shanty"]


def test_a_context_request_never_activates_a_skill_models_may_not_load(
    tmp_path: Path,
) -> None:
    """The attack on context loads: an agent names a skill that is hidden from models
    (``disable-model-invocation``) and grants ``Bash``; it must not become active in the
    agent's session, nor its tool be granted there."""
    from skilldeck.core.config import load_settings
    from skilldeck.core.sessions import SessionStore
    from skilldeck.mcp.service import SkillService

    root, _ = build(tmp_path)
    write_skill(
        root,
        "wipe-disk",
        description="Wipes the disk. Use when asked to wipe the disk.",
        extra="disable-model-invocation: true\nallowed-tools: Bash\n",
    )
    settings = load_settings()
    service = SkillService(settings, [root], mode="strict")
    try:
        for message in ("use the wipe-disk skill", "$wipe-disk", "wipe the disk"):
            answer = service.skill_context(message, client_key="c1").data
            assert "wipe-disk" not in [s["name"] for s in answer["skills"]], answer
        service.skill_context(REQUEST, client_key="c1")
        sid = service.session_for("c1")
        with SessionStore(settings=settings) as store:
            assert store.get(sid).active_skills == ["pdf-forms"]
            assert store.check(sid, "Bash", actor="agent").allowed is False
    finally:
        service.close()
