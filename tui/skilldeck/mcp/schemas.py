"""The MCP tools' names, descriptions and strict input schemas, with a small validator.

The schemas are a contract: every tool takes a JSON object, unknown properties are
rejected (``additionalProperties: false``). The validator below covers exactly the JSON
Schema keywords these schemas use, so no third-party validator is needed on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skilldeck.core.limits import AGENT_LIMIT
from skilldeck.core.workspace import NAME_MAX

if TYPE_CHECKING:
    from skilldeck.mcp.service import SkillService, ToolOutput

Handler = Callable[["SkillService", dict[str, Any], str], "ToolOutput"]
"""How a tool is answered: the service, the validated arguments and the client's key."""

QUERY_MAX = 2000
ARGUMENTS_MAX = 20_000
PATH_MAX = 4096
TOOL_MAX = 500
REASON_MAX = 500
LIMIT_MAX = 50
BUDGET_MAX = 1_000_000
MAX_SKILLS_MAX = 10


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as listed to clients.

    Attributes:
        name: Tool name (a contract).
        title: Short display name.
        description: What the tool does, for the model.
        input_schema: JSON Schema of the arguments object.
        read_only: True when calling it changes no state (listing, reading).
        handler: What answers a call (:data:`Handler`).
        destructive: True when a call may change things outside Skilldeck (runs code).
    """

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    handler: Handler
    destructive: bool = False

    @property
    def idempotent(self) -> bool:
        """Calling twice with the same arguments does no more than calling once."""
        return not self.destructive


def _search(service: SkillService, args: dict[str, Any], key: str) -> ToolOutput:
    return service.search_skills(args["query"], int(args.get("limit", AGENT_LIMIT)), client_key=key)


def _list(service: SkillService, args: dict[str, Any], _key: str) -> ToolOutput:
    return service.list_skills(args.get("budget"))


def _load(service: SkillService, args: dict[str, Any], key: str) -> ToolOutput:
    return service.load_skill(args["name"], args.get("arguments", ""), client_key=key)


def _read(service: SkillService, args: dict[str, Any], key: str) -> ToolOutput:
    return service.read_skill_resource(
        args["name"], args["path"], client_key=key, reason=args.get("reason")
    )


def _check(service: SkillService, args: dict[str, Any], key: str) -> ToolOutput:
    return service.check_tool(args["tool"], client_key=key)


def _run(service: SkillService, args: dict[str, Any], key: str) -> ToolOutput:
    return service.run_skill_script(
        args["name"], args["script"], list(args.get("args", [])), client_key=key
    )


def _context(service: SkillService, args: dict[str, Any], key: str) -> ToolOutput:
    return service.skill_context(
        args["message"], int(args.get("max_skills", AGENT_LIMIT)), client_key=key
    )


def _validate(service: SkillService, args: dict[str, Any], _key: str) -> ToolOutput:
    from skilldeck.mcp.checks import validate_skill

    return validate_skill(service, args["name"])


def _lint(service: SkillService, args: dict[str, Any], _key: str) -> ToolOutput:
    from skilldeck.mcp.checks import lint_skill

    return lint_skill(service, args["name"])


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": NAME_MAX,
    "description": "The skill's name, exactly as listed (for example 'pdf-forms').",
}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="search_skills",
        title="Search skills",
        description=(
            "Find the skills that fit a task. Give the task in a few words; returns the best "
            "matches ranked, each with name, description, a 0-1 score and a confident flag. "
            "When nothing is a confident match the answer says so: then prefer working "
            "without a skill or ask the user. Load the chosen skill with load_skill."
        ),
        input_schema=_schema(
            {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": QUERY_MAX,
                    "description": "The task or topic, in plain words.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": LIMIT_MAX,
                    "default": AGENT_LIMIT,
                    "description": f"How many results to return (default {AGENT_LIMIT}).",
                },
            },
            ["query"],
        ),
        read_only=True,
        handler=_search,
    ),
    ToolSpec(
        name="list_skills",
        title="List skills",
        description=(
            "The listing of available skills (name, description, location) within a "
            "character budget. When the budget is too small, descriptions are shortened and "
            "then skills are left out; the answer says which."
        ),
        input_schema=_schema(
            {
                "budget": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": BUDGET_MAX,
                    "description": "Character budget (default: the configured prompt budget).",
                },
            },
            [],
        ),
        read_only=True,
        handler=_list,
    ),
    ToolSpec(
        name="load_skill",
        title="Load a skill",
        description=(
            "Load a skill's instructions (its SKILL.md body) before doing the task it "
            "covers. The text starts with the skill's base directory; files it mentions "
            "are read with read_skill_resource. Loading activates the skill in this "
            "session, so the tools it allows become allowed. Follow the instructions."
        ),
        input_schema=_schema(
            {
                "name": _NAME,
                "arguments": {
                    "type": "string",
                    "maxLength": ARGUMENTS_MAX,
                    "description": "Arguments for the skill ($ARGUMENTS), as one string.",
                },
            },
            ["name"],
        ),
        read_only=False,
        handler=_load,
    ),
    ToolSpec(
        name="read_skill_resource",
        title="Read a skill file",
        description=(
            "Read one file from inside a skill's folder (a reference, template or script "
            "the skill's instructions mention), by its path relative to the skill folder. "
            "Binary files come back base64-encoded with their media type."
        ),
        input_schema=_schema(
            {
                "name": _NAME,
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": PATH_MAX,
                    "description": "Path relative to the skill folder, e.g. 'reference/forms.md'.",
                },
                "reason": {
                    "type": "string",
                    "maxLength": REASON_MAX,
                    "description": "Optional: why you need this file (kept in local telemetry).",
                },
            },
            ["name", "path"],
        ),
        read_only=True,
        handler=_read,
    ),
    ToolSpec(
        name="check_tool",
        title="Check a tool",
        description=(
            "Ask whether this session may use a tool before calling it, e.g. 'Bash' or "
            "'Bash(git push:*)'. Answers allowed, requires_approval (the request is queued "
            "for the operator: wait and check again) or denied, with the reason."
        ),
        input_schema=_schema(
            {
                "tool": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": TOOL_MAX,
                    "description": "The tool name, optionally with a specifier in parentheses.",
                },
            },
            ["tool"],
        ),
        read_only=False,
        handler=_check,
    ),
    ToolSpec(
        name="run_skill_script",
        title="Run a skill's script",
        description=(
            "Run a script shipped in a skill's folder (path relative to the folder) with "
            "string arguments. Runs only when the operator enabled script execution and "
            "allowlisted or approved this exact script; otherwise the answer says why "
            "(requires_approval: the request is queued, wait for the operator). No shell, "
            "no network where possible, a timeout and capped output."
        ),
        input_schema=_schema(
            {
                "name": _NAME,
                "script": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": PATH_MAX,
                    "description": "Script path relative to the skill folder, e.g. "
                    "'scripts/fill.py'.",
                },
                "args": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": 100,
                    "description": "Arguments passed to the script, one string each.",
                },
            },
            ["name", "script"],
        ),
        read_only=False,
        handler=_run,
        destructive=True,
    ),
    ToolSpec(
        name="skill_context",
        title="Context for a message",
        description=(
            "What to put in the prompt for one user message: nothing, a breadcrumb "
            "'[N skills available]' when no skill matches, the listing of skills (names "
            "and brief descriptions) when the user asks what you can do, or the full "
            "instructions of the best matching skills when a skill is mentioned or its "
            "triggers match. Returns tier, reason, the skills with why each was chosen, "
            "and text (the exact string to inject)."
        ),
        input_schema=_schema(
            {
                "message": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": ARGUMENTS_MAX,
                    "description": "The user message, as written.",
                },
                "max_skills": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SKILLS_MAX,
                    "default": 3,
                    "description": "Most skills whose instructions are given (default 3).",
                },
            },
            ["message"],
        ),
        read_only=True,
        handler=_context,
    ),
    ToolSpec(
        name="validate_skill",
        title="Validate a skill",
        description=(
            "Check one skill against the server's validation profile, as 'skilldeck "
            "validate' does: the findings with their codes (SD parse, SV profile, ST "
            "tools), severity and line, and whether the skill is valid. Changes nothing."
        ),
        input_schema=_schema({"name": _NAME}, ["name"]),
        read_only=True,
        handler=_validate,
    ),
    ToolSpec(
        name="lint_skill",
        title="Lint a skill",
        description=(
            "Lint one skill as 'skilldeck lint' does: quality findings (SL codes: vague "
            "description, dead links, overlap with other skills, ...) with severity and "
            "line, plus parse errors. Changes nothing."
        ),
        input_schema=_schema({"name": _NAME}, ["name"]),
        read_only=True,
        handler=_lint,
    ),
)

TOOLS_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "object": (dict,),
    "array": (list,),
}


def validate_arguments(schema: dict[str, Any], arguments: Any) -> list[str]:
    """Check ``arguments`` against one of the :data:`TOOLS` schemas.

    Returns:
        One message per problem ([] when valid).
    """
    if not isinstance(arguments, dict):
        return ["arguments must be a JSON object"]
    problems: list[str] = []
    properties: dict[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in arguments:
            problems.append(f"missing required property {key!r}")
    if schema.get("additionalProperties") is False:
        unknown = sorted(k for k in arguments if k not in properties)
        if unknown:
            allowed = ", ".join(sorted(properties)) or "none"
            problems.append(
                f"unknown property {', '.join(map(repr, unknown))} (allowed: {allowed})"
            )
    for key, value in arguments.items():
        rules = properties.get(key)
        if rules is not None:
            problems.extend(_check_value(key, value, rules))
    return problems


def _check_value(key: str, value: Any, rules: dict[str, Any]) -> list[str]:
    expected = rules.get("type")
    if expected is not None:
        kinds = _JSON_TYPES[expected]
        if isinstance(value, bool) or not isinstance(value, kinds):
            article = "an" if expected[0] in "aeiou" else "a"
            return [f"property {key!r} must be {article} {expected}, got {_json_type(value)}"]
    problems: list[str] = []
    if isinstance(value, list):
        if "maxItems" in rules and len(value) > rules["maxItems"]:
            problems.append(f"property {key!r} has more than {rules['maxItems']} items")
        item_type = rules.get("items", {}).get("type")
        if item_type is not None and any(
            isinstance(v, bool) or not isinstance(v, _JSON_TYPES[item_type]) for v in value
        ):
            problems.append(f"property {key!r} must hold only {item_type}s")
    if isinstance(value, str):
        if len(value) < rules.get("minLength", 0):
            problems.append(f"property {key!r} must not be empty")
        if "maxLength" in rules and len(value) > rules["maxLength"]:
            problems.append(f"property {key!r} is longer than {rules['maxLength']} characters")
    if isinstance(value, int) and not isinstance(value, bool):
        if "minimum" in rules and value < rules["minimum"]:
            problems.append(f"property {key!r} must be at least {rules['minimum']}")
        if "maximum" in rules and value > rules["maximum"]:
            problems.append(f"property {key!r} must be at most {rules['maximum']}")
    return problems


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
