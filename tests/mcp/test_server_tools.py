"""Every tool and resource of ``skilldeck serve``, over stdio, with the SDK's own client.

One server process serves the whole module (see ``served``); each test uses it as an MCP
client would and checks the shared session store and telemetry files it writes.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import ServerClient, error_code, make_home, telemetry_events, text_of

from conftest import write_skill
from skilldeck.core.sessions import SessionStore

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
TOOL_NAMES = {
    "search_skills",
    "list_skills",
    "load_skill",
    "read_skill_resource",
    "check_tool",
    "run_skill_script",
    "skill_context",
    "validate_skill",
    "lint_skill",
}


def build_root(base: Path) -> Path:
    """A small skills root with resources, a hidden, a disabled and an escaping skill."""
    root = base / "skills"
    write_skill(
        root,
        "pdf-forms",
        description="Fill in PDF forms field by field and save the result. Use when the user "
        "asks to fill, complete or sign a PDF form.",
        body="# PDF forms\n\nFill the form for $ARGUMENTS.\nSee reference/forms.md.\n",
        extra="allowed-tools: Read Bash(python:*)\n",
    )
    folder = root / "pdf-forms"
    (folder / "reference").mkdir()
    (folder / "reference" / "forms.md").write_text("# Field types\n\nText, checkbox.\n")
    (folder / "assets").mkdir()
    (folder / "assets" / "logo.png").write_bytes(PNG)
    (folder / "big.txt").write_text("x" * (300 * 1024))
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (folder / "leak.txt").symlink_to(outside / "secret.txt")
    write_skill(
        root,
        "git-history",
        description="Summarise git history, commit logs and blame. Use when asked "
        "what changed in a repository and who changed it.",
    )
    write_skill(
        root,
        "csv-cleaner",
        description="Clean CSV files, fixing delimiters, encodings and headers. Use "
        "when a spreadsheet export will not load.",
    )
    write_skill(
        root,
        "secret-ops",
        description="Rotate production secrets. Use when told to.",
        extra="disable-model-invocation: true\n",
    )
    write_skill(root, "old-tool", description="Legacy deployment helper. Use for old deploys.")
    (root / "registry.json").write_text(json.dumps({"skills": {"old-tool": {"enabled": False}}}))
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerClient, Path]]:
    """One stdio server for the module, with its own SKILLDECK_HOME."""
    base = tmp_path_factory.mktemp("mcp-tools")
    root = build_root(base)
    home = make_home(base / "home")
    client = ServerClient(root, home).start()
    try:
        yield client, home
    finally:
        client.close()


@pytest.fixture
def server(served: tuple[ServerClient, Path]) -> ServerClient:
    return served[0]


@pytest.fixture
def home(served: tuple[ServerClient, Path]) -> Path:
    return served[1]


def test_tools_are_listed_with_strict_schemas(server: ServerClient) -> None:
    tools = server.run(lambda c: c.list_tools()).tools
    assert {t.name for t in tools} == TOOL_NAMES
    for tool in tools:
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert tool.description
    load = next(t for t in tools if t.name == "load_skill")
    assert load.input_schema["required"] == ["name"]


def test_instructions_hold_a_short_listing(server: ServerClient) -> None:
    assert server.client is not None
    instructions = server.client.instructions or ""
    assert "search_skills" in instructions and "load_skill" in instructions
    assert "pdf-forms" in instructions
    assert "secret-ops" not in instructions and "old-tool" not in instructions
    assert len(instructions) < 3000


def test_unknown_property_is_rejected_by_the_schema(server: ServerClient) -> None:
    result = server.call("search_skills", {"query": "pdf", "bogus": 1})
    assert error_code(result) == "INVALID_PARAM"
    assert "bogus" in text_of(result)
    wrong_type = server.call("search_skills", {"query": "pdf", "limit": "three"})
    assert error_code(wrong_type) == "INVALID_PARAM"
    missing = server.call("load_skill", {})
    assert error_code(missing) == "INVALID_PARAM"


def test_search_ranks_and_flags_confidence(server: ServerClient, home: Path) -> None:
    result = server.call("search_skills", {"query": "fill in a pdf form", "limit": 2})
    assert not result.is_error
    data = result.structured_content
    assert isinstance(data, dict)
    assert data["results"][0]["name"] == "pdf-forms"
    assert len(data["results"]) <= 2
    for item in data["results"]:
        assert set(item) >= {"name", "description", "score", "confident"}
    assert "pdf-forms" in text_of(result)
    none = server.call("search_skills", {"query": "zzqx frobnicate wibble"})
    payload = none.structured_content
    assert isinstance(payload, dict)
    assert payload["confident"] is False
    lowered = text_of(none).lower()
    assert "no confident match" in lowered or "no skill matches" in lowered
    names = [r["name"] for r in payload["results"]]
    assert "secret-ops" not in names and "old-tool" not in names
    assert telemetry_events(home, "skill_selected")


def test_list_skills_within_budget_says_what_was_left_out(server: ServerClient) -> None:
    full = server.call("list_skills")
    data = full.structured_content
    assert isinstance(data, dict)
    assert set(data["included"]) == {"pdf-forms", "git-history", "csv-cleaner"}
    assert "<available_skills>" in text_of(full)
    small = server.call("list_skills", {"budget": 300})
    cut = small.structured_content
    assert isinstance(cut, dict)
    assert cut["omitted"]
    assert "left out" in text_of(small)
    assert len(cut["text"]) <= 300


def test_load_skill_applies_arguments_and_activates_the_session(
    server: ServerClient, home: Path
) -> None:
    result = server.call("load_skill", {"name": "pdf-forms", "arguments": "tax-2024.pdf"})
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert text.startswith("Base directory for this skill: ")
    assert "Fill the form for tax-2024.pdf." in text
    data = result.structured_content
    assert isinstance(data, dict)
    assert data["truncated"] is False and data["tokens"] > 0
    assert "Read" in data["tools"]["available"]
    session_id = data["session"]
    with SessionStore(home / "sessions.db") as store:
        session = store.get(session_id)
        assert "pdf-forms" in session.active_skills
        assert "Bash(python:*)" in session.allowed_tools
        skill = next(s for s in session.skills if s.name == "pdf-forms")
        assert skill.actor == "agent" and skill.arguments == "tax-2024.pdf"
    loaded = telemetry_events(home, "skill_loaded")
    assert loaded and {"path", "tokens", "latency_ms", "truncated"} <= set(loaded[-1])


def test_unknown_skill_is_an_error_with_suggestions(server: ServerClient) -> None:
    result = server.call("load_skill", {"name": "pdf-form"})
    assert error_code(result) == "NOT_FOUND"
    data = result.structured_content
    assert isinstance(data, dict)
    assert "pdf-forms" in data["error"]["suggestions"]
    assert "pdf-forms" in text_of(result)


def test_disabled_and_model_hidden_skills_are_refused(server: ServerClient) -> None:
    assert error_code(server.call("load_skill", {"name": "old-tool"})) == "PERMISSION_DENIED"
    assert error_code(server.call("load_skill", {"name": "secret-ops"})) == "PERMISSION_DENIED"


def test_read_text_and_binary_resources(server: ServerClient, home: Path) -> None:
    text = server.call("read_skill_resource", {"name": "pdf-forms", "path": "reference/forms.md"})
    assert not text.is_error
    assert "Field types" in text_of(text)
    binary = server.call("read_skill_resource", {"name": "pdf-forms", "path": "assets/logo.png"})
    assert not binary.is_error
    data = binary.structured_content
    assert isinstance(data, dict)
    assert data["binary"] is True and data["mime"] == "image/png"
    assert base64.b64decode(data["base64"]) == PNG
    embedded = [b for b in binary.content if isinstance(b, types.EmbeddedResource)]
    assert embedded and isinstance(embedded[0].resource, types.BlobResourceContents)
    events = telemetry_events(home, "skill_resource_requested")
    assert any(e.get("resource") == "assets/logo.png" and e.get("ok") for e in events)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../git-history/SKILL.md", "INVALID_PARAM"),
        ("/etc/passwd", "INVALID_PARAM"),
        ("leak.txt", "PERMISSION_DENIED"),
        ("big.txt", "INVALID_PARAM"),
        ("reference/missing.md", "NOT_FOUND"),
    ],
)
def test_resource_refusals_carry_a_code(server: ServerClient, path: str, code: str) -> None:
    result = server.call("read_skill_resource", {"name": "pdf-forms", "path": path})
    assert error_code(result) == code
    assert "top secret" not in text_of(result)


def test_approval_through_the_store_is_seen_by_check_tool(server: ServerClient, home: Path) -> None:
    first = server.call("check_tool", {"tool": "WebFetch"})
    data = first.structured_content
    assert isinstance(data, dict)
    assert data["allowed"] is False and data["requires_approval"] is True
    session_id = data["session"]
    with SessionStore(home / "sessions.db") as store:
        assert "WebFetch" in store.pending(session_id)
        store.approve(session_id, "WebFetch", actor="operator")
    second = server.call("check_tool", {"tool": "WebFetch"})
    after = second.structured_content
    assert isinstance(after, dict)
    assert after["allowed"] is True and after["reason"] == "approved"
    with SessionStore(home / "sessions.db") as store:
        store.deny(session_id, "WebFetch", actor="operator")
    third = server.call("check_tool", {"tool": "WebFetch"})
    assert isinstance(third.structured_content, dict)
    assert third.structured_content["reason"] == "denied"
    assert "denied" in text_of(third)


def test_resources_and_templates(server: ServerClient) -> None:
    listed = server.run(lambda c: c.list_resources())
    uris = {str(r.uri) for r in listed.resources}
    assert "skill://pdf-forms/SKILL.md" in uris
    assert "skill://old-tool/SKILL.md" not in uris
    templates = server.run(lambda c: c.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {
        "skill://{name}/SKILL.md",
        "skill://{name}/{+path}",
    }
    skill_md = server.run(lambda c: c.read_resource("skill://pdf-forms/SKILL.md"))
    first = skill_md.contents[0]
    assert isinstance(first, types.TextResourceContents)
    assert first.text.startswith("---\nname: pdf-forms")
    ref = server.run(lambda c: c.read_resource("skill://pdf-forms/reference/forms.md"))
    assert isinstance(ref.contents[0], types.TextResourceContents)
    logo = server.run(lambda c: c.read_resource("skill://pdf-forms/assets/logo.png"))
    blob = logo.contents[0]
    assert isinstance(blob, types.BlobResourceContents)
    assert base64.b64decode(blob.blob) == PNG
    with pytest.raises(MCPError):
        server.run(lambda c: c.read_resource("skill://pdf-forms/../git-history/SKILL.md"))
    with pytest.raises(MCPError):
        server.run(lambda c: c.read_resource("skill://nope/SKILL.md"))


def test_template_arguments_complete(server: ServerClient) -> None:
    template = types.ResourceTemplateReference(uri="skill://{name}/{+path}")
    names = server.run(lambda c: c.complete(template, {"name": "name", "value": "p"}))
    assert names.completion.values == ["pdf-forms"]
    paths = server.run(
        lambda c: c.complete(template, {"name": "path", "value": "ref"}, {"name": "pdf-forms"})
    )
    assert paths.completion.values == ["reference/forms.md"]


def test_bad_requests_do_not_kill_the_server(server: ServerClient) -> None:
    unknown = server.call("no_such_tool", {})
    assert error_code(unknown) == "NOT_FOUND" and "search_skills" in text_of(unknown)
    nul = server.call("read_skill_resource", {"name": "pdf-forms", "path": "a\x00b"})
    assert error_code(nul) == "INVALID_PARAM"
    assert not server.call("list_skills", {"budget": 0}).is_error
    assert not server.call("search_skills", {"query": "git"}).is_error


def test_concurrent_calls_on_one_connection(server: ServerClient) -> None:
    async def burst(client: Any) -> list[types.CallToolResult]:
        calls = []
        for i in range(8):
            calls.append(client.call_tool("search_skills", {"query": f"git history {i}"}))
            calls.append(client.call_tool("load_skill", {"name": "git-history"}))
            calls.append(client.call_tool("check_tool", {"tool": f"Tool{i}"}))
        return list(await asyncio.gather(*calls))

    results = server.run(burst)
    assert len(results) == 24
    assert not any(r.is_error for r in results), [text_of(r) for r in results if r.is_error]
