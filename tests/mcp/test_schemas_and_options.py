"""The tool schemas' validator and the ``serve`` options, without starting a server."""

from __future__ import annotations

import pytest

from skilldeck.cli.serve_cmds import parse_http
from skilldeck.core.errors import ErrorCode, SkilldeckError
from skilldeck.core.web import is_loopback
from skilldeck.mcp.schemas import TOOLS, TOOLS_BY_NAME, validate_arguments


def test_every_schema_is_strict() -> None:
    assert [t.name for t in TOOLS] == [
        "search_skills",
        "list_skills",
        "load_skill",
        "read_skill_resource",
        "check_tool",
        "run_skill_script",
        "skill_context",
        "validate_skill",
        "lint_skill",
    ]
    for tool in TOOLS:
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert set(tool.input_schema.get("required", [])) <= set(tool.input_schema["properties"])


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"),
    [
        ("search_skills", {"query": "x", "extra": 1}, "unknown property 'extra'"),
        ("search_skills", {}, "missing required property 'query'"),
        ("search_skills", {"query": ""}, "must not be empty"),
        ("search_skills", {"query": "x", "limit": 0}, "at least 1"),
        ("search_skills", {"query": "x", "limit": True}, "must be an integer, got boolean"),
        ("list_skills", {"budget": -1}, "at least 0"),
        ("load_skill", {"name": 3}, "must be a string"),
        ("read_skill_resource", {"name": "a"}, "missing required property 'path'"),
        ("check_tool", {"tool": "x" * 600}, "longer than"),
        ("run_skill_script", {"name": "a", "script": "s", "args": ["x", 2]}, "only strings"),
        ("run_skill_script", {"name": "a", "script": "s", "args": ["x"] * 101}, "more than 100"),
    ],
)
def test_invalid_arguments_are_explained(
    tool: str, arguments: dict[str, object], fragment: str
) -> None:
    problems = validate_arguments(TOOLS_BY_NAME[tool].input_schema, arguments)
    assert any(fragment in p for p in problems), problems


def test_valid_arguments_pass() -> None:
    schema = TOOLS_BY_NAME["load_skill"].input_schema
    assert validate_arguments(schema, {"name": "pdf-forms", "arguments": "a b"}) == []
    problems = validate_arguments(schema, ["not", "an", "object"])
    assert problems == ["arguments must be a JSON object"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("localhost:0", ("localhost", 0)),
        ("[::1]:9000", ("::1", 9000)),
        ("127.1.2.3:80", ("127.1.2.3", 80)),
    ],
)
def test_loopback_hosts_are_accepted(value: str, expected: tuple[str, int]) -> None:
    assert parse_http(value) == expected


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("0.0.0.0:8765", ErrorCode.PERMISSION_DENIED),
        ("192.168.1.4:8765", ErrorCode.PERMISSION_DENIED),
        ("example.com:80", ErrorCode.PERMISSION_DENIED),
        ("8765", ErrorCode.INVALID_PARAM),
        ("127.0.0.1:99999", ErrorCode.INVALID_PARAM),
        ("127.0.0.1:http", ErrorCode.INVALID_PARAM),
    ],
)
def test_bad_http_values_are_refused(value: str, code: ErrorCode) -> None:
    with pytest.raises(SkilldeckError) as info:
        parse_http(value)
    assert info.value.code is code


def test_is_loopback() -> None:
    assert is_loopback("::1") and is_loopback("LOCALHOST")
    assert not is_loopback("::") and not is_loopback("10.0.0.1")
