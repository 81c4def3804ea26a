"""Toolsets over MCP with the SDK's stdio client: mounted as ``skill-name.tool`` after an
approval made by the CLI in another process (``tools/list_changed`` announced), called out
of process, refused once the module changes, and never mounted without approval."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp_harness import (
    ServerClient,
    cli,
    error_code,
    make_home,
    telemetry_events,
    text_of,
)

from conftest import allowlist_line, write_skill
from mcp import Client

MODULE = """\
class HelloToolset:
    def greet(self, name: str, times: int = 1) -> str:
        \"\"\"Greet someone by name.\"\"\"
        return " ".join([f"Hello, {name}!"] * times)

    def boom(self) -> None:
        \"\"\"Always fails.\"\"\"
        raise ValueError("kaput")
"""


def build(tmp_path: Path, config: str) -> tuple[Path, Path]:
    root = tmp_path / "skills"
    path = write_skill(
        root,
        "hello",
        description="Says hello. Use when testing toolsets.",
        extra='toolsets: ["toolsets/index:HelloToolset"]\n',
    )
    (path.parent / "toolsets").mkdir()
    (path.parent / "toolsets" / "index.py").write_text(MODULE, encoding="utf-8")
    home = make_home(tmp_path / "home")
    (home / "config.toml").write_text(f"semantic = false\n{config}", "utf-8")
    return root, home


def tool_names(client: ServerClient) -> list[str]:
    listed: types.ListToolsResult = client.run(lambda c: c.list_tools())
    return [tool.name for tool in listed.tools]


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), text_of(result)
    return result.structured_content


def wait_for_tools_changed(client: ServerClient, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kinds = {type(n).__name__ for n in client.notifications}
        if "ToolListChangedNotification" in kinds:
            return True
        time.sleep(0.05)
    return False


def test_mounted_after_cli_approval_and_called(tmp_path: Path) -> None:
    root, home = build(tmp_path, "skills_exec = true\n")
    sid = json.loads(cli(home, "session", "new", "--mode", "approval", "--format", "json"))["id"]
    client = ServerClient(root, home, "--session", sid, mode="legacy").start()
    try:
        loaded = data_of(client.call("load_skill", {"name": "hello"}))
        waiting = loaded["toolsets"]["waiting"]
        assert loaded["toolsets"]["mounted"] == []
        assert waiting[0]["reason"] == "requires_approval"
        assert waiting[0]["approval"].startswith("Toolset(hello/toolsets/index.py@skill-sha256:")
        said = text_of(client.call("load_skill", {"name": "hello"}))
        assert "hello/toolsets/index.py waits for the operator's approval" in said
        assert "skilldeck session approve" not in said  # the operator's command, not the agent's
        assert not [n for n in tool_names(client) if n.startswith("hello.")]
        assert not wait_for_tools_changed(client, timeout=0.2)

        cli(
            home,
            "--root",
            str(root),
            "session",
            "approve",
            sid,
            "--toolset",
            "hello/toolsets/index.py",
        )
        # the server's poll sees the approval and mounts without another load_skill
        assert wait_for_tools_changed(client)
        assert [n for n in tool_names(client) if n.startswith("hello.")] == [
            "hello.boom",
            "hello.greet",
        ]
        loaded = data_of(client.call("load_skill", {"name": "hello"}))
        assert loaded["toolsets"]["mounted"] == ["hello.boom", "hello.greet"]
        listed: types.ListToolsResult = client.run(lambda c: c.list_tools())
        greet = next(t for t in listed.tools if t.name == "hello.greet")
        assert greet.description == "Greet someone by name."
        assert greet.input_schema["required"] == ["name"]

        result = client.call("hello.greet", {"name": "Ada", "times": 2})
        assert not result.is_error and text_of(result) == "Hello, Ada! Hello, Ada!"
        assert data_of(result)["allowed_by"] == "approved"
        failed = client.call("hello.boom", {})
        assert error_code(failed) == "EXECUTION_ERROR"
        assert "ValueError: kaput" in text_of(failed) and "Traceback" not in text_of(failed)
        assert error_code(client.call("hello.greet", {"name": 1})) == "INVALID_PARAM"

        module = root / "hello" / "toolsets" / "index.py"
        module.write_text(MODULE.replace("Hello,", "Bye,"), encoding="utf-8")
        refused = client.call("hello.greet", {"name": "Ada"})
        assert data_of(refused)["error"]["reason"] == "requires_approval"
    finally:
        client.close()
    attempts = [a for a in telemetry_events(home, "skill_exec_attempt") if a["kind"] == "toolset"]
    allowed = [a["allowed"] for a in attempts]
    assert allowed[:2] == [False, False] and allowed[-1] is False
    assert any(a["allowed"] and a["script"] == "hello/toolsets/index.py:greet" for a in attempts)
    results = telemetry_events(home, "skill_exec_result")
    assert {r.get("error") for r in results} >= {None, "tool_error"}


@pytest.mark.parametrize(
    ("config", "reason"),
    [("skills_exec = true\n", "requires_approval"), ("", "exec_disabled")],
)
def test_not_mounted_without_approval(tmp_path: Path, config: str, reason: str) -> None:
    root, home = build(tmp_path, config)
    marker = root / "hello" / "imported"
    module = f"open({str(marker)!r}, 'w').close()\n{MODULE}"
    (root / "hello" / "toolsets" / "index.py").write_text(module, encoding="utf-8")
    client = ServerClient(root, home).start()
    try:
        loaded = client.call("load_skill", {"name": "hello"})
        toolsets = data_of(loaded)["toolsets"]
        assert toolsets["mounted"] == [] and toolsets["waiting"][0]["reason"] == reason
        assert "Toolset toolsets/index:HelloToolset is not mounted" in text_of(loaded)
        assert not [n for n in tool_names(client) if n.startswith("hello.")]
        unknown = client.call("hello.greet", {"name": "Ada"})
        assert unknown.is_error and "Unknown tool" in text_of(unknown)
        assert not wait_for_tools_changed(client, timeout=2.5)  # polls pass: still nothing
        assert not [n for n in tool_names(client) if n.startswith("hello.")]
    finally:
        client.close()
    assert not marker.exists()


def test_allowlisted_toolset_announced_on_listen_streams(tmp_path: Path) -> None:
    root, home = build(tmp_path, "skills_exec = true\n")
    line = allowlist_line(root / "hello", "toolsets/index.py")
    (home / "ALLOWLIST.txt").write_text(line + "\n", encoding="utf-8")
    client = ServerClient(root, home).start()

    async def watch(session: Client) -> list[Any]:
        events: list[Any] = []
        async with session.listen(tools_list_changed=True) as subscription:
            await session.call_tool("load_skill", {"name": "hello"})
            with anyio.fail_after(10):
                async for event in subscription:
                    events.append(event)
                    break
        return events

    try:
        events = client.run(watch)
        assert type(events[0]).__name__ == "ToolsListChanged"
        assert {"hello.boom", "hello.greet"} <= set(tool_names(client))
        result = client.call("hello.greet", {"name": "Bo"})
        assert text_of(result) == "Hello, Bo!" and data_of(result)["allowed_by"] == "allowlist"
    finally:
        client.close()
