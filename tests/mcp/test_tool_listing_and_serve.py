"""What an agent and a person meet at the MCP face: tools carry their category, an
unknown tool is an error result the agent can read, the instructions offer the skills in
use first, and ``serve`` on a terminal says what it is waiting for."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from mcp_harness import ServerClient, make_home, serve_args, server_env, text_of

from conftest import write_skill
from skilldeck.core.config import Settings
from skilldeck.mcp.service import INSTRUCTIONS_SKILLS, SkillService


def test_tools_carry_their_category_and_unknown_tools_are_error_results(
    tmp_path: Path,
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Read git history. Use for git logs.")
    client = ServerClient(root, make_home(tmp_path / "home")).start()
    try:
        tools = client.run(lambda c: c.list_tools()).tools
        assert tools and all((t.meta or {}).get("category") == "skills" for t in tools)
        unknown = client.call("serch_skills", {"query": "git"})
        assert unknown.is_error and "Unknown tool" in text_of(unknown)
        assert "search_skills" in text_of(unknown)  # the agent learns the right name
    finally:
        client.close()


def test_instructions_offer_the_skills_in_use_first(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for i in range(INSTRUCTIONS_SKILLS + 5):
        write_skill(root, f"skill-{i:03d}", description=f"Does task {i}. Use when {i} comes up.")
    service = SkillService(Settings(semantic=False), [root])
    try:
        assert "skill-044" not in service.instructions()  # alphabetically last: left out
        store = service.store()
        session = store.create(mode="permissive", actor="agent")
        for _ in range(2):
            store.activate_skill(session.id, "skill-044")
        store.activate_skill(session.id, "skill-043")
        text = service.instructions()
    finally:
        service.close()
    assert text.index("skill-044") < text.index("skill-043") < text.index("skill-000")


def test_serve_on_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "git-history", description="Read git history. Use for git logs.")
    home = make_home(tmp_path / "home")
    parent, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, *serve_args(root)],
        stdin=child,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=server_env(home),
        text=True,
    )
    os.close(child)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "waiting for an MCP client on stdin" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        os.close(parent)
