"""A client that initializes as the MCP Inspector CLI does sees the Skills extension.

The Inspector starts the 2025-11-25 handshake, declares ``extensions:
{"io.modelcontextprotocol/skills": {}}`` in its own capabilities, and calls ``skills/list``,
``skills/get`` and ``resources/directory/read`` only when the server's answer declares the
extension too. The SDK's 2025-11-25 result model has no ``extensions`` and used to drop it,
so the handshake answer declared nothing. Here the SDK's own ``ClientSession`` does the
same over stdio against ``skilldeck serve``; the capabilities must match those of
``server/discover`` (``resources.subscribe`` included: false in both eras, as no
per-resource update is ever sent).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_harness import make_home, serve_args, server_env
from test_skills_extension import EXTENSION, LIST_RESULT, ListSkillsRequest, Raw, check

from conftest import write_skill
from mcp import ClientSession


async def _as_the_inspector(params: StdioServerParameters) -> tuple[Any, dict[str, Any]]:
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, extensions={EXTENSION: {}}) as session,
    ):
        result = await session.initialize()
        assert result.protocol_version == "2025-11-25"
        page = (await session.send_request(ListSkillsRequest(), Raw)).root
        return session.server_capabilities, page


async def _discovered(params: StdioServerParameters) -> Any:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        return (await session.discover()).capabilities


def test_the_handshake_declares_the_skills_extension(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "refunds", description="Refund orders. Use when refunding.")
    home = make_home(tmp_path / "home")
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(root), env=server_env(home)
    )
    capabilities, page = asyncio.run(asyncio.wait_for(_as_the_inspector(params), 60))
    assert capabilities.extensions == {EXTENSION: {"directoryRead": True}}
    assert capabilities.resources is not None and capabilities.resources.subscribe is False
    check(page, LIST_RESULT)
    assert [s["uri"] for s in page["skills"]] == ["skill://refunds/SKILL.md"]

    modern = asyncio.run(asyncio.wait_for(_discovered(params), 60))
    assert modern.extensions == capabilities.extensions
    assert modern.resources == capabilities.resources
