"""Lifecycle of ``skilldeck serve``: live skill changes, sessions, shutdown, HTTP."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp_harness import (
    RawServer,
    ServerClient,
    cli,
    http_transport,
    make_home,
    serve_args,
    server_env,
    start_http,
    text_of,
)

from conftest import write_skill
from mcp import Client
from skilldeck.core.sessions import SessionStore


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    write_skill(
        skills,
        "git-history",
        description="Summarise git history and commit logs. Use when asked what "
        "changed in a repository.",
        extra="allowed-tools: Bash(git log:*)\n",
    )
    return skills


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path / "home")


def _names(result: types.CallToolResult) -> list[str]:
    data = result.structured_content
    assert isinstance(data, dict)
    return list(data["included"])


def test_skill_changes_on_disk_are_picked_up_and_announced_legacy(root: Path, home: Path) -> None:
    server = ServerClient(root, home, mode="legacy").start()
    try:
        assert _names(server.call("list_skills")) == ["git-history"]
        write_skill(
            root,
            "csv-cleaner",
            description="Clean CSV files and fix their headers. Use when a CSV will not load.",
        )
        assert _names(server.call("list_skills")) == ["csv-cleaner", "git-history"]
        found = server.call("search_skills", {"query": "clean csv headers"}).structured_content
        assert isinstance(found, dict)
        assert found["results"][0]["name"] == "csv-cleaner"
        (root / "git-history" / "SKILL.md").write_text(
            "---\nname: git-history\ndescription: Explain git blame output. Use when asked "
            "who wrote a line.\n---\nNew body.\n",
            encoding="utf-8",
        )
        listing = server.call("list_skills").structured_content
        assert isinstance(listing, dict)
        assert "git blame" in listing["text"]
        loaded = server.call("load_skill", {"name": "git-history"})
        assert "New body." in text_of(loaded)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not server.notifications:
            time.sleep(0.05)
        kinds = {type(n).__name__ for n in server.notifications}
        assert "ResourceListChangedNotification" in kinds
    finally:
        server.close()


def test_skill_changes_are_announced_on_listen_streams(root: Path, home: Path) -> None:
    server = ServerClient(root, home).start()

    async def watch(client: Client) -> list[Any]:
        events: list[Any] = []
        async with client.listen(resources_list_changed=True) as subscription:
            write_skill(root, "pdf-forms", description="Fill PDF forms. Use for PDF forms.")
            with anyio.fail_after(10):
                async for event in subscription:
                    events.append(event)
                    break
        return events

    try:
        events = server.run(watch)
        assert type(events[0]).__name__ == "ResourcesListChanged"
        assert "pdf-forms" in _names(server.call("list_skills"))
    finally:
        server.close()


def test_join_an_existing_session_and_mode(root: Path, home: Path) -> None:
    with SessionStore(home / "sessions.db") as store:
        session = store.create(mode="strict", actor="operator", label="shared")
    server = ServerClient(root, home, "--session", session.id).start()
    try:
        loaded = server.call("load_skill", {"name": "git-history"})
        data = loaded.structured_content
        assert isinstance(data, dict) and data["session"] == session.id
        check = server.call("check_tool", {"tool": "Bash(git log --oneline)"})
        assert isinstance(check.structured_content, dict)
        assert check.structured_content["allowed"] is True
        strict = server.call("check_tool", {"tool": "WebFetch"})
        assert isinstance(strict.structured_content, dict)
        assert strict.structured_content["requires_approval"] is False
        with SessionStore(home / "sessions.db") as store:
            assert store.get(session.id).active_skills == ["git-history"]
    finally:
        server.close()
    with SessionStore(home / "sessions.db") as store:
        assert store.get(session.id).ended is None, "a joined session stays open"


def test_unknown_session_and_non_loopback_host_exit_2(root: Path, home: Path) -> None:
    unknown = subprocess.run(
        [sys.executable, *serve_args(root, "--session", "nope")],
        env=server_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert unknown.returncode == 2
    assert "nope" in unknown.stderr and "Traceback" not in unknown.stderr
    public = subprocess.run(
        [sys.executable, *serve_args(root, "--http", "0.0.0.0:8765")],
        env=server_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert public.returncode == 2
    assert "loopback" in public.stderr


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_clean_shutdown(root: Path, home: Path, how: str) -> None:
    raw = RawServer(root, home, "--mode", "permissive")
    try:
        reply = raw.initialize()
        assert reply["result"]["serverInfo"]["name"] == "skilldeck"
        call = raw.request(2, "tools/call", {"name": "check_tool", "arguments": {"tool": "Edit"}})
        session_id = call["result"]["structuredContent"]["session"]
        assert call["result"]["structuredContent"]["reason"] == "permissive"
        assert raw.proc.stdin is not None
        raw.proc.stdin.write('not json\n{"jsonrpc": "2.0", "id": 3}\n')
        raw.proc.stdin.flush()
        bad = raw.request(4, "tools/call", {"name": "load_skill", "arguments": "oops"})
        assert "error" in bad
        assert "result" in raw.request(5, "tools/list", {}), "the server survived bad input"
        if how == "eof":
            assert raw.proc.stdin is not None
            raw.proc.stdin.close()
        else:
            raw.proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        assert raw.proc.wait(timeout=15) == 0
        assert raw.proc.stderr is not None
        assert "Traceback" not in raw.proc.stderr.read()
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
    with SessionStore(home / "sessions.db") as store:
        session = store.get(session_id)
        assert session.mode == "permissive"
        assert session.ended is not None


def test_http_transport_gives_each_client_a_session(root: Path, home: Path) -> None:
    proc, url = start_http(root, home)

    bot_token = cli(home, "token", "add", "agent-d").strip().splitlines()[-1]

    async def one(mode: str, name: str, token: str | None = None) -> tuple[str, str]:
        info = types.Implementation(name=name, version="1")
        transport = http_transport(url, home, token)
        async with Client(transport, mode=mode, client_info=info) as client:
            tools = await client.list_tools()
            assert len(tools.tools) == 9
            result = await client.call_tool("load_skill", {"name": "git-history"})
            assert not result.is_error
            data = result.structured_content
            assert isinstance(data, dict)
            again = await client.call_tool("check_tool", {"tool": "Bash(git log -1)"})
            assert isinstance(again.structured_content, dict)
            assert again.structured_content["session"] == data["session"]
            return str(data["session"]), client.protocol_version

    async def both() -> list[tuple[str, str]]:
        return list(
            await asyncio.gather(
                one("legacy", "agent-a"),
                one("legacy", "agent-b"),
                one("auto", "agent-c"),
                one("auto", "agent-d", bot_token),  # 2026-era: a session per token
            )
        )

    try:
        results = asyncio.run(both())
        sessions = [s for s, _version in results]
        assert len(set(sessions)) == 4
        legacy = sessions[:2]
        with SessionStore(home / "sessions.db") as store:
            for session_id in sessions:
                assert store.get(session_id).active_skills == ["git-history"]
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(store.get(s).ended is None for s in legacy):
                time.sleep(0.1)
            assert all(store.get(s).ended is not None for s in legacy), (
                "a handshake-era client's session ends when it disconnects"
            )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        with SessionStore(home / "sessions.db") as store:
            assert all(store.get(s).ended is not None for s in sessions)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_real_corpus_over_mcp(corpus_dir: Path, home: Path) -> None:
    server = ServerClient(corpus_dir, home).start()
    try:
        assert server.client is not None
        assert len(server.client.instructions or "") < 3000
        found = server.call("search_skills", {"query": "generative art with p5.js", "limit": 3})
        data = found.structured_content
        assert isinstance(data, dict)
        names = [r["name"] for r in data["results"]]
        assert "algorithmic-art" in names
        loaded = server.call("load_skill", {"name": "algorithmic-art"})
        assert not loaded.is_error
        assert text_of(loaded).startswith("Base directory for this skill: ")
        listing = server.call("list_skills", {"budget": 4000}).structured_content
        assert isinstance(listing, dict)
        assert listing["omitted"] and len(listing["text"]) <= 4000
    finally:
        server.close()
