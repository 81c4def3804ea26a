"""``skill_context`` and skills as MCP prompts, over stdio with the SDK's own client
(real ``skilldeck serve`` subprocesses, each with its own SKILLDECK_HOME)."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import ServerClient, make_home, text_of

from conftest import write_skill
from mcp import Client


def build_root(base: Path) -> Path:
    root = base / "skills"
    write_skill(
        root,
        "pdf-forms",
        description="Fill in PDF forms field by field. Use when asked to fill a PDF form.",
        body="# PDF forms\n\nFill the form for $ARGUMENTS.\n",
        extra="triggers: [fill form]\n",
    )
    for name in ("charlie", "delta"):
        write_skill(
            root,
            name,
            description=f"{name.title()} releases. Use when releasing.",
            extra="triggers: [deploying]\n",
        )
    write_skill(
        root,
        "git-history",
        description="Summarise git history, commit logs and blame. Use when asked what "
        "changed in a repository.",
    )
    write_skill(
        root,
        "off-skill",
        description="Disabled. Use when deploying.",
        extra="triggers: [deploy, fill form]\ndefault_enabled: false\n",
    )
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_root(tmp_path)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path / "home")


def context(server: ServerClient, message: str, **extra: Any) -> dict[str, Any]:
    result = server.call("skill_context", {"message": message, **extra})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    text = text_of(result)
    assert text == (data["text"] or f"Nothing to inject: {data['reason']}.")
    return data


def test_skill_context_tiers_and_recent_use(root: Path, home: Path) -> None:
    server = ServerClient(root, home).start()
    try:
        crumb = context(server, "what is the weather in Oslo")
        assert crumb["tier"] == "breadcrumb" and crumb["text"] == "[4 skills available]"
        listing = context(server, "which skills do you have?")
        assert listing["tier"] == "listing"
        assert [s["name"] for s in listing["skills"]] == [
            "charlie",
            "delta",
            "git-history",
            "pdf-forms",
        ]
        full = context(server, "please fill form 12")
        assert full["tier"] == "full" and full["skills"][0]["name"] == "pdf-forms"
        assert "# PDF forms" in full["skills"][0]["instructions"]
        before = context(server, "deploy it", max_skills=1)
        assert [s["name"] for s in before["skills"]] == ["charlie"]
        assert not server.call("load_skill", {"name": "delta"}).is_error
        after = context(server, "deploy it", max_skills=1)
        assert [s["name"] for s in after["skills"]] == ["delta"]
        assert after["skills"][0]["recent"] is True
        bad = server.call("skill_context", {"message": "x", "max_skills": 0})
        assert bad.is_error
    finally:
        server.close()


def test_prompts_list_and_get(root: Path, home: Path) -> None:
    server = ServerClient(root, home).start()
    try:
        assert server.client is not None
        caps = server.client.server_capabilities
        assert caps.prompts is not None and caps.prompts.list_changed
        listed = server.run(lambda c: c.list_prompts())
        by_name = {p.name: p for p in listed.prompts}
        assert set(by_name) == {"charlie", "delta", "git-history", "pdf-forms"}
        pdf = by_name["pdf-forms"]
        assert pdf.title == "pdf-forms"
        assert pdf.description == "Fill in PDF forms field by field."
        assert pdf.arguments is not None
        assert [(a.name, a.required) for a in pdf.arguments] == [("arguments", False)]
        got = server.run(lambda c: c.get_prompt("pdf-forms", {"arguments": "form 1040"}))
        assert got.description == "Fill in PDF forms field by field."
        (message,) = got.messages
        assert message.role == "user" and isinstance(message.content, types.TextContent)
        assert "Fill the form for form 1040." in message.content.text
        assert message.content.text.startswith("Base directory for this skill: ")
        bare = server.run(lambda c: c.get_prompt("git-history"))
        assert isinstance(bare.messages[0].content, types.TextContent)
        for name, arguments in (
            ("no-such-skill", None),
            ("off-skill", None),
            ("pdf-forms", {"bogus": "x"}),
        ):
            with pytest.raises(MCPError) as caught:
                server.run(partial(_get_prompt, name=name, arguments=arguments))
            assert caught.value.error.code == types.INVALID_PARAMS
        assert "did you mean" in _prompt_error(server, "pdf-form")
    finally:
        server.close()


def _prompt_error(server: ServerClient, name: str) -> str:
    try:
        server.run(lambda c: c.get_prompt(name))
    except MCPError as exc:
        return exc.error.message
    raise AssertionError(f"prompt {name!r} did not fail")


def test_prompt_list_changes_are_announced(root: Path, home: Path) -> None:
    legacy = ServerClient(root, home, mode="legacy").start()
    try:
        legacy.run(lambda c: c.list_prompts())
        write_skill(root, "new-skill", description="Brand new. Use when testing changes.")
        deadline = time.monotonic() + 15
        kinds: set[str] = set()
        while time.monotonic() < deadline and "PromptListChangedNotification" not in kinds:
            legacy.call("list_skills")
            time.sleep(0.1)
            kinds = {type(n).__name__ for n in legacy.notifications}
        assert "PromptListChangedNotification" in kinds
        names = {p.name for p in legacy.run(lambda c: c.list_prompts()).prompts}
        assert "new-skill" in names
    finally:
        legacy.close()

    modern = ServerClient(root, home).start()

    async def watch(client: Client) -> list[Any]:
        events: list[Any] = []
        async with client.listen(prompts_list_changed=True) as subscription:
            write_skill(root, "newer-skill", description="Newer. Use when testing changes.")
            with anyio.fail_after(15):
                async for event in subscription:
                    events.append(event)
                    break
        return events

    try:
        events = modern.run(watch)
        assert type(events[0]).__name__ == "PromptsListChanged"
    finally:
        modern.close()


def test_skills_v1_off_means_no_prompts_and_no_context(root: Path, home: Path) -> None:
    (home / "config.toml").write_text("semantic = false\nskills_v1 = false\n", "utf-8")
    server = ServerClient(root, home).start()
    try:
        assert server.run(lambda c: c.list_prompts()).prompts == []
        message = _prompt_error(server, "pdf-forms")
        assert "skills_v1" in message
        answer = context(server, "$pdf-forms fill form")
        assert answer["tier"] == "none" and answer["text"] == ""
        assert "skills_v1" in answer["reason"]
    finally:
        server.close()


async def _get_prompt(client: Client, *, name: str, arguments: dict[str, str] | None) -> Any:
    return await client.get_prompt(name, arguments)
