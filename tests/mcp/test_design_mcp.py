"""Issue 26 items 1, 2, 3 and 7 through the MCP SDK client against ``skilldeck serve``.

1. a ``tool-validation: strict`` skill missing a required tool is not listed, searched or
   loadable (the refusal names the missing tool);
2. ``search_skills`` ranks a skill missing a required tool after a complete one at equal
   relevance, using the tools the server knows;
3. ``load_skill`` returns ``id``, ``parameters`` and ``examples``; the parameters are the
   prompt's arguments;
7. ``read_skill_resource`` serves only the files discovery listed and takes an optional
   ``reason`` that lands in telemetry.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import ServerClient, error_code, make_home, telemetry_events, text_of

from conftest import write_skill

REPORT = "Formats quarterly finance reports. Use when formatting a quarterly finance report."
MISSING = "tools:\n  - name: NoSuchTool\n    required: true\n"
PARAMS = """parameters:
  - name: title
    description: The title to use
    required: true
  - name: style
    default: plain
examples:
  - request: give it a title
    does: writes the title line
"""


def build_root(base: Path) -> Path:
    root = base / "skills"
    write_skill(
        root,
        "strict-gated",
        "Archives mailboxes. Use when archiving mail.",
        extra=MISSING + "tool-validation: strict\n",
    )
    write_skill(root, "aaa-report", REPORT, extra=MISSING + "tool-validation: warn\n")
    write_skill(root, "zzz-report", REPORT)
    write_skill(
        root, "titled", "Writes titles. Use when titling.", "Title: $0 ($1)\n", extra=PARAMS
    )
    write_skill(root, "with-ref", "Has references. Use when testing references.")
    (root / "with-ref" / "ref.md").write_text("reference text\n", encoding="utf-8")
    (root / "with-ref" / "_private").mkdir()
    (root / "with-ref" / "_private" / "notes.md").write_text("unlisted\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerClient, Path]]:
    base = tmp_path_factory.mktemp("mcp-design")
    root = build_root(base)
    home = make_home(base / "home")
    client = ServerClient(root, home).start()
    try:
        yield client, home
    finally:
        client.close()


def data_of(result: Any) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    return data


def test_strict_skill_with_missing_tool_is_unavailable(
    served: tuple[ServerClient, Path],
) -> None:
    server, _ = served
    refused = server.call("load_skill", {"name": "strict-gated"})
    assert error_code(refused) == "PERMISSION_DENIED"
    assert "NoSuchTool" in text_of(refused)
    listed = data_of(server.call("list_skills", {}))
    assert "strict-gated" not in str(listed)
    found = data_of(server.call("search_skills", {"query": "archive mailboxes"}))
    assert "strict-gated" not in [r["name"] for r in found["results"]]


def test_search_prefers_the_skill_with_its_tools(served: tuple[ServerClient, Path]) -> None:
    server, _ = served
    found = data_of(server.call("search_skills", {"query": "format quarterly finance report"}))
    names = [r["name"] for r in found["results"]]
    assert names[:2] == ["zzz-report", "aaa-report"]


def test_load_returns_the_content_model(served: tuple[ServerClient, Path]) -> None:
    server, _ = served
    data = data_of(server.call("load_skill", {"name": "titled", "arguments": "Hello"}))
    assert data["id"] == "explicit:skills/titled"
    assert [p["name"] for p in data["parameters"]] == ["title", "style"]
    assert data["parameters"][0]["required"] is True
    assert data["parameters"][1]["default"] == "plain"
    assert data["examples"] == [{"request": "give it a title", "does": "writes the title line"}]


def test_parameters_are_the_prompt_arguments(served: tuple[ServerClient, Path]) -> None:
    server, _ = served
    prompts = server.run(lambda c: c.list_prompts()).prompts
    titled = next(p for p in prompts if p.name == "titled")
    assert [(a.name, a.required) for a in titled.arguments or []] == [
        ("title", True),
        ("style", False),
    ]
    got = server.run(lambda c: c.get_prompt("titled", {"title": "Q3 numbers"}))
    text = got.messages[0].content.text  # type: ignore[union-attr]
    assert "Title: Q3 numbers (plain)" in text
    with pytest.raises(MCPError, match="title"):
        server.run(lambda c: c.get_prompt("titled", {"style": "bold"}))


def test_resource_reason_reaches_telemetry(served: tuple[ServerClient, Path]) -> None:
    server, home = served
    args = {"name": "with-ref", "path": "ref.md", "reason": "need the reference table"}
    assert text_of(server.call("read_skill_resource", args)) == "reference text\n"
    events = telemetry_events(home, "skill_resource_requested")
    assert any(e.get("reason") == "need the reference table" for e in events)


def test_only_discovered_resources_are_served(served: tuple[ServerClient, Path]) -> None:
    server, _ = served
    refused = server.call("read_skill_resource", {"name": "with-ref", "path": "_private/notes.md"})
    assert error_code(refused) == "NOT_FOUND"
    assert "last discovered" in text_of(refused)


def test_warn_skill_loads_with_a_warning(served: tuple[ServerClient, Path]) -> None:
    server, _ = served
    loaded = server.call("load_skill", {"name": "aaa-report"})
    assert not loaded.is_error
    assert "not available here: NoSuchTool" in text_of(loaded)
