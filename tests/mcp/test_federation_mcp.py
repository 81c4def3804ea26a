"""Federation between two real Skilldeck servers.

One ``skilldeck serve --http`` on loopback serves a team's skills folder (the remote); a
second ``skilldeck serve`` over stdio, driven by the SDK's own client, names it in its
config (``[remotes.team]``) and serves its own local skills too. Its agent-facing tools
find the remote skill as ``team:NAME``, refuse it until the operator approves it (the
``remote approve`` command, in another process), load it and read its files with each
checked against its digest, keep a same-named local skill separate, flag an edited remote
skill as changed (a new approval is needed), and skip a stopped remote while local skills
keep working.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import ServerClient, cli, error_code, make_home, start_http, text_of

from conftest import write_skill


def _data(result: Any) -> dict[str, Any]:
    data = result.structured_content
    assert isinstance(data, dict), text_of(result)
    return data


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error, text_of(result)
    error = _data(result)["error"]
    assert isinstance(error, dict)
    return error


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The remote's skills folder."""
    root = tmp_path / "team-skills"
    write_skill(
        root,
        "refunds",
        description="Team refund policy for enterprise customers. Use when refunding invoices.",
        body="# Team refunds\n\nAsk finance for approval first.\n",
    )
    (root / "refunds" / "templates").mkdir()
    (root / "refunds" / "templates" / "email.md").write_text("Dear customer, team template\n")
    write_skill(
        root,
        "kubernetes-rollout",
        description="Roll out services to the team kubernetes clusters. Use for deployments.",
        body="# Rollout\n\nUse kubectl rollout status.\n",
    )
    return root


def _local(tmp_path: Path, url: str, remote_home: Path) -> tuple[Path, Path]:
    """The federating server's skills folder and home (config naming the remote)."""
    root = tmp_path / "local-skills"
    write_skill(
        root,
        "refunds",
        description="Local refund steps for shop orders. Use when refunding a shop order.",
        body="# Local refunds\n\nRefund in the shop admin.\n",
    )
    write_skill(root, "git-workflow", description="Commit conventions. Use for commits.")
    home = make_home(tmp_path / "local-home")
    token = remote_home / "mcp-token"
    (home / "config.toml").write_text(
        "semantic = false\n\n[remotes.team]\n"
        f"url = {json.dumps(url)}\ntoken_file = {json.dumps(str(token))}\n"
        "timeout_s = 10\nttl_s = 0\n",
        encoding="utf-8",
    )
    return root, home


def test_two_servers_federate(tmp_path: Path, team: Path) -> None:
    remote_home = make_home(tmp_path / "remote-home")
    proc, url = start_http(team, remote_home)
    local_root, home = _local(tmp_path, url, remote_home)
    server = ServerClient(local_root, home).start()
    try:
        # --- search finds the remote skill, namespaced, beside the local one
        found = _data(server.call("search_skills", {"query": "refund invoices", "limit": 5}))
        by_name = {r["name"]: r for r in found["results"]}
        assert {"team:refunds", "refunds"} <= set(by_name), by_name
        remote = by_name["team:refunds"]
        assert remote["remote"] == "team"
        assert remote["path"] == "skill://refunds/SKILL.md"
        assert remote["review"] == "unreviewed"
        assert remote["description"].startswith("Team refund policy")
        assert by_name["refunds"]["description"].startswith("Local refund steps")
        assert "remote" not in by_name["refunds"]
        assert found["remotes"][0]["ok"] and found["remotes"][0]["skills"] == 2
        rollout = _data(server.call("search_skills", {"query": "kubernetes rollout"}))
        assert rollout["results"][0]["name"] == "team:kubernetes-rollout"
        listed = _data(server.call("list_skills"))
        assert {"team:refunds", "team:kubernetes-rollout", "refunds"} <= set(listed["included"])

        # --- not approved yet: refused; the operator approves it in another process
        refused = _error(server.call("load_skill", {"name": "team:refunds"}))
        assert refused["code"] == "PERMISSION_DENIED"
        assert refused["reason"] == "review_required"
        cli(home, "remote", "show", "team:refunds")  # what the operator reviews is approved
        approved = json.loads(cli(home, "remote", "approve", "team:refunds", "--format", "json"))
        assert approved["added"] and approved["previous"] == "unreviewed"
        digest = approved["line"].split()[-1]

        # --- load: every file fetched and checked against its digest
        loaded = server.call("load_skill", {"name": "team:refunds"})
        data = _data(loaded)
        assert not loaded.is_error
        assert "Ask finance for approval first." in text_of(loaded)
        assert data["name"] == "team:refunds" and data["remote"] == "team"
        assert data["origin"] == "remote:team" and data["review"] == "approved"
        assert data["digest"] == digest and data["path"] == "skill://refunds/SKILL.md"
        assert text_of(loaded).startswith("[skilldeck] Remote skill team:refunds from")
        assert "Base directory for this skill: skill://refunds\n" in text_of(loaded)
        assert str(home) not in text_of(loaded)  # the cache folder is not shown
        manifest = "".join(
            f"{hashlib.sha256((team / 'refunds' / rel).read_bytes()).hexdigest()}  {rel}\n"
            for rel in ("SKILL.md", "templates/email.md")
        )
        assert digest == "remote-sha256:" + hashlib.sha256(manifest.encode()).hexdigest()
        resource = server.call(
            "read_skill_resource", {"name": "team:refunds", "path": "templates/email.md"}
        )
        assert text_of(resource) == "Dear customer, team template\n"
        assert _data(resource)["uri"] == "skill://refunds/templates/email.md"

        # --- the same-named local skill stays separate
        local = server.call("load_skill", {"name": "refunds"})
        assert "Refund in the shop admin." in text_of(local)
        assert "Ask finance" not in text_of(local)
        assert "remote" not in _data(local)

        # --- the remote skill is edited: flagged as changed, needs approval again
        (team / "refunds" / "templates" / "email.md").write_text("Dear customer, NEW text\n")
        flagged = _data(server.call("search_skills", {"query": "refund invoices", "limit": 5}))
        review = {r["name"]: r.get("review") for r in flagged["results"]}
        assert review["team:refunds"] == "changed"
        changed = _error(server.call("load_skill", {"name": "team:refunds"}))
        assert changed["reason"] == "changed_since_review"
        assert changed["changes"] == [["changed", "templates/email.md"]]
        cli(home, "remote", "show", "team:refunds")
        again = json.loads(cli(home, "remote", "approve", "team:refunds", "--format", "json"))
        assert again["previous"] == "changed" and again["line"].split()[-1] != digest
        assert not server.call("load_skill", {"name": "team:refunds"}).is_error
        fresh = server.call(
            "read_skill_resource", {"name": "team:refunds", "path": "templates/email.md"}
        )
        assert text_of(fresh) == "Dear customer, NEW text\n"

        # --- the remote stops: reported and skipped; local skills still work
        proc.kill()
        proc.wait(timeout=15)
        offline = server.call("search_skills", {"query": "refund", "limit": 5})
        answer = _data(offline)
        assert [r["name"] for r in answer["results"]] == ["refunds"]
        assert answer["remotes"][0]["ok"] is False
        assert "remote team" in text_of(offline) and "skipped" in text_of(offline)
        assert not server.call("load_skill", {"name": "refunds"}).is_error
        gone = server.call("load_skill", {"name": "team:refunds"})
        assert error_code(gone) == "EXECUTION_ERROR"
        assert _error(gone)["reason"] == "remote_unavailable"
    finally:
        server.close()
        proc.kill()
        proc.wait(timeout=15)


def test_cli_lists_and_searches_remotes_and_reports_an_offline_one(
    tmp_path: Path, team: Path
) -> None:
    remote_home = make_home(tmp_path / "remote-home")
    proc, url = start_http(team, remote_home)
    local_root, home = _local(tmp_path, url, remote_home)
    try:
        listed = json.loads(cli(home, "remote", "list", "--format", "json"))
        assert listed["ok"] and [s["name"] for s in listed["skills"]] == [
            "team:kubernetes-rollout",
            "team:refunds",
        ]
        skills = json.loads(cli(home, "--root", str(local_root), "list", "--format", "json"))
        names = [s["name"] for s in skills["skills"]]
        assert "refunds" in names and "team:refunds" in names
        found = json.loads(
            cli(home, "--root", str(local_root), "search", "kubernetes rollout", "--format", "json")
        )
        assert found["results"][0]["name"] == "team:kubernetes-rollout"
        agent = json.loads(
            cli(home, "--root", str(local_root), "search", "--agent", "refund", "--format", "json")
        )
        assert {"refunds", "team:refunds"} <= {r["name"] for r in agent["results"]}
    finally:
        proc.kill()
        proc.wait(timeout=15)
    skills = json.loads(cli(home, "--root", str(local_root), "list", "--format", "json"))
    assert [s["name"] for s in skills["skills"]] == ["git-workflow", "refunds"]
    assert skills["remotes"][0]["ok"] is False
    text = cli(home, "--root", str(local_root), "list")
    assert "remote team" in text and "skipped" in text
    found = json.loads(cli(home, "--root", str(local_root), "search", "refund", "--format", "json"))
    assert [r["name"] for r in found["results"]] == ["refunds"]
    doctor = json.loads(cli(home, "doctor", "--format", "json"))
    assert doctor["remotes"][0]["ok"] is False and "offline" in doctor["remotes"][0]["error"]


def test_a_trickling_remote_is_cut_and_local_skills_are_served(tmp_path: Path) -> None:
    """A remote answering one byte per 0.2 s holds ``search_skills`` for its ``timeout_s``
    (1.5 s), not for as long as it trickles (80 s per answer), and is reported."""
    peer = Path(__file__).resolve().parent.parent / "fixtures" / "trickle_peer.py"
    proc = subprocess.Popen(
        [sys.executable, str(peer), "http", "0.2", "body"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[-1]
    root = tmp_path / "local-skills"
    write_skill(root, "refunds", description="Local refund steps. Use when refunding.")
    home = make_home(tmp_path / "home")
    (home / "config.toml").write_text(
        f"semantic = false\n\n[remotes.slow]\nurl = {json.dumps(url)}\ntimeout_s = 1.5\n",
        encoding="utf-8",
    )
    server = ServerClient(root, home).start()
    try:
        found = server.call("search_skills", {"query": "refund", "limit": 5})
        answer = _data(found)
        assert [r["name"] for r in answer["results"]] == ["refunds"]
        assert answer["remotes"][0]["ok"] is False
        assert answer["remotes"][0]["error"].startswith("timeout")
        assert "remote slow" in text_of(found)
        assert not server.call("load_skill", {"name": "refunds"}).is_error
    finally:
        server.close()
        proc.kill()
        proc.wait(timeout=15)
