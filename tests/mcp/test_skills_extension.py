"""The MCP Skills extension (``io.modelcontextprotocol/skills``) spoken by ``skilldeck serve``.

A real SDK client, over stdio (both protocol eras) and streamable HTTP, sends
``skills/list`` (walked page by page with a page size of 2), ``skills/get``,
``resources/directory/read`` and ``resources/read``. Every result is checked against JSON
Schemas written from the spec's TypeScript shapes, every manifest against the files on disk
(each file listed once, digest and size recomputed from the disk bytes) and every file read
back against its digest. Two same-named skills in two roots get distinct paths; disabled,
hidden and invalid skills are absent; unknown URIs give ``-32602``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Literal

import jsonschema  # type: ignore[import-untyped]
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import ServerClient, http_transport, make_home, start_http
from pydantic import RootModel

from conftest import write_skill
from mcp import Client
from skilldeck.core.errors import SkilldeckError

EXTENSION = "io.modelcontextprotocol/skills"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))

# ---------------------------------------------------------------- the spec's shapes

DIGEST = {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}
SKILL_RESOURCE = {
    "type": "object",
    "required": ["uri", "digest", "size"],
    "additionalProperties": False,
    "properties": {
        "uri": {"type": "string", "pattern": "^skill://"},
        "digest": DIGEST,
        "size": {"type": "integer", "minimum": 0},
    },
}
SKILL = {
    "type": "object",
    "required": ["uri", "frontmatter", "resources"],
    "additionalProperties": False,
    "properties": {
        "uri": {"type": "string", "pattern": "^skill://.+/SKILL\\.md$"},
        "frontmatter": {
            "type": "object",
            "required": ["name", "description"],
            "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
        },
        "resources": {
            "oneOf": [
                {"type": "array", "items": SKILL_RESOURCE, "minItems": 1, "maxItems": 512},
                {"const": "dynamic"},
            ]
        },
    },
}
CACHEABLE = {
    "ttlMs": {"type": "integer", "minimum": 0},
    "cacheScope": {"enum": ["public", "private"]},
    "resultType": {"const": "complete"},
}
LIST_RESULT = {
    "type": "object",
    "required": ["resultType", "skills", "ttlMs", "cacheScope"],
    "properties": {
        **CACHEABLE,
        "skills": {"type": "array", "items": SKILL},
        "nextCursor": {"type": "string"},
    },
}
GET_RESULT = {
    "type": "object",
    "required": ["resultType", "skill", "ttlMs", "cacheScope"],
    "properties": {**CACHEABLE, "skill": SKILL},
    "not": {"required": ["nextCursor"]},
}
DIRECTORY_RESULT = {
    "type": "object",
    "required": ["resultType", "resources"],
    "properties": {
        "resultType": {"const": "complete"},
        "nextCursor": {"type": "string"},
        "resources": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["uri", "name"],
                "properties": {
                    "uri": {"type": "string", "pattern": "^skill://[^ ]*[^/]$"},
                    "name": {"type": "string"},
                    "mimeType": {"type": "string"},
                    "size": {"type": "integer"},
                },
            },
        },
    },
}


def check(instance: dict[str, Any], schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(schema).validate(instance)


# ---------------------------------------------------------------- requests


class Raw(RootModel[dict[str, Any]]):
    """A result taken as the JSON object it is on the wire (checked with the schemas)."""


class ListSkillsRequest(types.Request[types.PaginatedRequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: types.PaginatedRequestParams | None = None


class UriParams(types.PaginatedRequestParams):
    uri: str


class GetSkillRequest(types.Request[UriParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class NameParams(types.RequestParams):
    name: str


class GetByNameRequest(types.Request[NameParams, Literal["skills/get"]]):
    """``skills/get`` with ``name`` where ``uri`` belongs (a usual client mistake)."""

    method: Literal["skills/get"] = "skills/get"


class DirectoryReadRequest(types.Request[UriParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


async def list_page(client: Client, cursor: str | None = None) -> dict[str, Any]:
    params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
    return (await client.session.send_request(ListSkillsRequest(params=params), Raw)).root


async def get_skill(client: Client, uri: str) -> dict[str, Any]:
    request = GetSkillRequest(params=UriParams(uri=uri))
    return (await client.session.send_request(request, Raw)).root


async def read_directory(client: Client, uri: str, cursor: str | None = None) -> dict[str, Any]:
    request = DirectoryReadRequest(params=UriParams(uri=uri, cursor=cursor))
    return (await client.session.send_request(request, Raw)).root


async def all_entries(client: Client) -> tuple[list[dict[str, Any]], int]:
    """Every entry, walking ``nextCursor``; and how many pages it took."""
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await list_page(client, cursor)
        check(page, LIST_RESULT)
        entries.extend(page["skills"])
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries, pages


async def read_bytes(client: Client, uri: str) -> bytes:
    result = await client.read_resource(uri)
    (content,) = result.contents
    if isinstance(content, types.BlobResourceContents):
        return base64.b64decode(content.blob)
    assert isinstance(content, types.TextResourceContents)
    return content.text.encode("utf-8")


async def walk_directory(client: Client, uri: str) -> set[str]:
    """Every file URI under the directory ``uri``, descending through each subdirectory
    and every page."""
    files: set[str] = set()
    cursor: str | None = None
    while True:
        page = await read_directory(client, uri, cursor)
        check(page, DIRECTORY_RESULT)
        for child in page["resources"]:
            assert child["uri"].rsplit("/", 1)[1] == _quoted(child["name"])
            if child["mimeType"] == "inode/directory":
                files |= await walk_directory(client, child["uri"])
            else:
                files.add(child["uri"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return files


def _quoted(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")


async def invalid_params(call: Any) -> str:
    """The message of the ``-32602`` error ``call`` must raise."""
    with pytest.raises(MCPError) as caught:
        await call
    assert caught.value.code == types.INVALID_PARAMS, caught.value
    return caught.value.message


# ---------------------------------------------------------------- the skills on disk


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """Two roots: ``team-a`` (given first: it loses name clashes) and ``team-b``."""
    team_a, team_b = tmp_path / "team-a", tmp_path / "team-b"
    write_skill(team_a, "refunds", description="Team A refunds. Use when refunding.")
    (team_a / "refunds" / "examples").mkdir()
    (team_a / "refunds" / "examples" / "email.md").write_text("Dear customer\n")
    write_skill(team_b, "refunds", description="Team B refunds. Use when refunding.")
    write_skill(
        team_b,
        "pdf-processing",
        description="Extract, fill, and assemble PDF documents. Use for PDFs.",
        extra="license: Apache-2.0\nmetadata:\n  version: 2.1.0\n  released: 2024-05-01\n"
        "allowed-tools: Bash(python:*)\n",
    )
    pdf = team_b / "pdf-processing"
    for rel, data in {
        "references/FORMS.md": b"\xef\xbb\xbf# Forms\r\nFill them.\r\n",
        "scripts/extract.py": b"print('extract')\n",
        "templates/invoice.md": b"# Invoice\n",
        "templates/purchase-order.md": b"# PO\n",
        "templates/regional/eu-invoice.md": b"# EU invoice\n",
        "assets/logo.png": PNG,
        "notes with space.md": b"spaces\n",
    }.items():
        (pdf / rel).parent.mkdir(parents=True, exist_ok=True)
        (pdf / rel).write_bytes(data)
    write_skill(team_b, "git-workflow", description="Team git conventions. Use for commits.")
    write_skill(team_b, "off-skill", extra="default_enabled: false\n")
    write_skill(team_b, "secret-skill", extra="disable-model-invocation: true\n")
    (team_b / "broken").mkdir()
    (team_b / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nNo description.\n")
    return team_a, team_b


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path / "home")


SERVED = {
    "skill://git-workflow/SKILL.md",
    "skill://pdf-processing/SKILL.md",
    "skill://refunds/SKILL.md",
}
"""URIs of the skills winning their names (the shadowed ``refunds`` has a prefixed one)."""


def disk_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


async def check_catalog(client: Client, roots: tuple[Path, Path], page_size: int) -> None:
    """The whole conversation: listing, entries, reads, directories and errors."""
    team_a, team_b = roots
    capabilities = client.server_capabilities
    if client.protocol_version >= "2026":
        assert capabilities.extensions == {EXTENSION: {"directoryRead": True}}
    assert capabilities.resources is not None

    entries, pages = await all_entries(client)
    assert pages == -(-len(entries) // page_size) > 1
    by_uri = {e["uri"]: e for e in entries}
    assert len(by_uri) == len(entries) == 4
    prefixed = set(by_uri) - SERVED
    assert set(by_uri) > SERVED and len(prefixed) == 1
    (shadowed,) = prefixed
    assert re.fullmatch(r"skill://explicit\.[0-9a-f]{8}/refunds/SKILL\.md", shadowed)

    folders = {
        "skill://refunds/SKILL.md": team_b / "refunds",
        shadowed: team_a / "refunds",
        "skill://pdf-processing/SKILL.md": team_b / "pdf-processing",
        "skill://git-workflow/SKILL.md": team_b / "git-workflow",
    }
    for uri, entry in by_uri.items():
        name = entry["frontmatter"]["name"]
        skill_path = uri.removesuffix("/SKILL.md")
        assert skill_path.rsplit("/", 1)[1] == name
        on_disk = disk_files(folders[uri])
        listed = {r["uri"]: r for r in entry["resources"]}
        assert len(listed) == len(entry["resources"]), "each file once"
        assert uri in listed
        assert set(listed) == {f"{skill_path}/{_quoted_path(rel)}" for rel in on_disk}
        for rel, data in on_disk.items():
            item = listed[f"{skill_path}/{_quoted_path(rel)}"]
            assert item["digest"] == digest(data) and item["size"] == len(data), rel
            read = await read_bytes(client, item["uri"])
            assert digest(read) == item["digest"] and len(read) == item["size"], rel
        got = await get_skill(client, uri)
        check(got, GET_RESULT)
        assert got["skill"] == entry
        assert await walk_directory(client, skill_path) == set(listed)

    assert by_uri["skill://refunds/SKILL.md"]["frontmatter"]["description"].startswith("Team B")
    assert by_uri[shadowed]["frontmatter"]["description"].startswith("Team A")
    assert by_uri["skill://pdf-processing/SKILL.md"]["frontmatter"] == {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents. Use for PDFs.",
        "license": "Apache-2.0",
        "metadata": {"version": "2.1.0", "released": "2024-05-01"},
        "allowed-tools": "Bash(python:*)",
    }
    shadow_root = shadowed.removesuffix("/refunds/SKILL.md")
    prefix = await read_directory(client, shadow_root)
    assert [r["uri"] for r in prefix["resources"]] == [f"{shadow_root}/refunds"]

    for absent in ("off-skill", "secret-skill", "broken", "nope"):
        message = await invalid_params(get_skill(client, f"skill://{absent}/SKILL.md"))
        assert message == f"No skill is served at skill://{absent}/SKILL.md"
        await invalid_params(read_directory(client, f"skill://{absent}"))
    await invalid_params(get_skill(client, "skill://pdf-processing/templates/invoice.md"))
    await invalid_params(get_skill(client, "skill://pdf-processing"))
    message = await invalid_params(read_directory(client, "skill://pdf-processing/SKILL.md"))
    assert message == "skill://pdf-processing/SKILL.md is not a directory resource"
    await invalid_params(read_directory(client, "skill://pdf-processing/missing"))
    await invalid_params(client.read_resource("skill://nope/SKILL.md"))
    await invalid_params(client.read_resource("skill://off-skill/SKILL.md"))
    await invalid_params(client.read_resource("skill://pdf-processing/missing.md"))
    by_name = GetByNameRequest(params=NameParams(name="refunds"))
    message = await invalid_params(client.session.send_request(by_name, Raw))
    assert "expects the parameter 'uri'" in message and "skill://refunds/SKILL.md" in message
    await invalid_params(list_page(client, "not-a-cursor"))

    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"load_skill", "read_skill_resource", "search_skills"} <= tools
    prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert "pdf-processing" in prompts


def _quoted_path(rel: str) -> str:
    from urllib.parse import quote

    return quote(rel, safe="/")


# ---------------------------------------------------------------- over stdio and HTTP


def _stdio(roots: tuple[Path, Path], home: Path, mode: str) -> ServerClient:
    server = ServerClient(roots[0], home, "--root", str(roots[1]), mode=mode)
    assert server.params.env is not None
    server.params.env["SKILLDECK_SKILLS_PAGE_SIZE"] = "2"
    return server.start()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_skills_extension_over_stdio(roots: tuple[Path, Path], home: Path, mode: str) -> None:
    server = _stdio(roots, home, mode)
    try:
        server.run(lambda c: check_catalog(c, roots, 2), timeout=120)
    finally:
        server.close()


def test_modern_stdio_declares_the_extension(roots: tuple[Path, Path], home: Path) -> None:
    server = _stdio(roots, home, "auto")
    try:
        assert server.client is not None
        assert server.client.protocol_version >= "2026"
        capabilities = server.client.server_capabilities
        assert capabilities.extensions == {EXTENSION: {"directoryRead": True}}
        assert capabilities.resources is not None
    finally:
        server.close()


def test_entries_follow_changes_on_disk(roots: tuple[Path, Path], home: Path) -> None:
    """An edited file changes its digest; a skill disabled on disk leaves the listing."""
    server = _stdio(roots, home, "auto")
    forms = roots[1] / "pdf-processing" / "references" / "FORMS.md"
    uri = "skill://pdf-processing/SKILL.md"
    try:
        before = server.run(lambda c: get_skill(c, uri))["skill"]["resources"]
        forms.write_bytes(b"# Forms, edited\n")
        after = server.run(lambda c: get_skill(c, uri))["skill"]["resources"]
        changed = [a for a, b in zip(before, after, strict=True) if a != b]
        assert [c["uri"] for c in changed] == ["skill://pdf-processing/references/FORMS.md"]
        assert after[[r["uri"] for r in after].index(changed[0]["uri"])]["digest"] == digest(
            forms.read_bytes()
        )
        write_skill(roots[1], "git-workflow", extra="default_enabled: false\n")
        deadline = time.monotonic() + 10
        uris: set[str] = set(SERVED)
        while time.monotonic() < deadline and "skill://git-workflow/SKILL.md" in uris:
            uris = {e["uri"] for e in server.run(all_entries)[0]}
            time.sleep(0.2)
        assert "skill://git-workflow/SKILL.md" not in uris
    finally:
        server.close()


def _start_http(roots: tuple[Path, Path], home: Path) -> tuple[subprocess.Popen[str], str]:
    page = {"SKILLDECK_SKILLS_PAGE_SIZE": "2"}
    return start_http(roots[0], home, "127.0.0.1", "--root", str(roots[1]), env=page)


def test_skills_extension_over_http(roots: tuple[Path, Path], home: Path) -> None:
    proc, url = _start_http(roots, home)

    async def conversation(mode: str) -> str:
        async with Client(http_transport(url, home), mode=mode) as client:
            await check_catalog(client, roots, 2)
            return client.protocol_version

    try:
        versions = [asyncio.run(conversation(mode)) for mode in ("auto", "legacy")]
        assert versions[0] >= "2026" > versions[1]
    finally:
        proc.kill()
        proc.wait(timeout=15)


def test_page_size_variable_is_read() -> None:
    from skilldeck.mcp.skills_extension import PAGE_SIZE, page_size

    old = os.environ.pop("SKILLDECK_SKILLS_PAGE_SIZE", None)
    try:
        assert page_size() == PAGE_SIZE
        os.environ["SKILLDECK_SKILLS_PAGE_SIZE"] = "3"
        assert page_size() == 3
        os.environ["SKILLDECK_SKILLS_PAGE_SIZE"] = "-1"
        assert page_size() == PAGE_SIZE
    finally:
        os.environ.pop("SKILLDECK_SKILLS_PAGE_SIZE", None)
        if old is not None:
            os.environ["SKILLDECK_SKILLS_PAGE_SIZE"] = old


# ---------------------------------------------------------------- in process: what is not served


def _extension(root: Path, **settings: Any) -> Any:
    from skilldeck.core.config import Settings
    from skilldeck.mcp.service import SkillService
    from skilldeck.mcp.skills_extension import SkillsExtension

    return SkillsExtension(SkillService(Settings(semantic=False, **settings), [root]), size=2)


def _listed(extension: Any) -> list[str]:
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page = extension.list_page(cursor)
        check(page, LIST_RESULT)
        uris += [entry["uri"] for entry in page["skills"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            return uris


def test_skills_over_the_limits_or_leaving_their_folder_are_not_served(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "fine")
    many = write_skill(root, "many-files").parent
    for i in range(512):
        (many / f"f{i}.txt").write_text("x")
    huge = write_skill(root, "huge").parent
    (huge / "blob.bin").write_bytes(b"\0" * (16 * 1024 * 1024))
    leaky = write_skill(root, "leaky").parent
    (tmp_path / "secret.txt").write_text("secret")
    (leaky / "secret.txt").symlink_to(tmp_path / "secret.txt")
    extension = _extension(root)
    assert _listed(extension) == ["skill://fine/SKILL.md"]
    for name, reason in (("many-files", "limits"), ("huge", "limits"), ("leaky", "outside")):
        with pytest.raises(MCPError) as caught:
            extension.get(f"skill://{name}/SKILL.md")
        assert caught.value.code == types.INVALID_PARAMS
        assert reason in caught.value.message, caught.value.message
        with pytest.raises(MCPError):
            extension.directory(f"skill://{name}", None)
    with pytest.raises(SkilldeckError):  # the older reading refuses the leak too
        extension.read("skill://leaky/secret.txt")


def test_nothing_is_served_with_skills_off(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "fine")
    extension = _extension(root, skills_v1=False)
    assert _listed(extension) == []
    with pytest.raises(MCPError):
        extension.get("skill://fine/SKILL.md")


def test_frontmatter_values_become_json() -> None:
    import datetime
    import json

    from skilldeck.core.loader.manifest import json_value

    value = json_value(
        {
            "when": datetime.date(2024, 5, 1),
            "at": datetime.datetime(2024, 5, 1, 12, 30),
            "raw": b"\x00\x01",
            "tags": {"b", "a"},
            "inf": float("inf"),
            1: [1.5, None, True],
        }
    )
    assert value == {
        "when": "2024-05-01",
        "at": "2024-05-01T12:30:00",
        "raw": "AAE=",
        "tags": ["a", "b"],
        "inf": ".inf",
        "1": [1.5, None, True],
    }
    json.dumps(value, allow_nan=False)


def test_uris_split_into_skill_path_and_file(tmp_path: Path) -> None:
    from skilldeck.core.loader.manifest import file_uri, split_uri
    from skilldeck.core.model import Skill

    skill = Skill("refunds", "d", tmp_path / "SKILL.md", tmp_path)
    paths = {"refunds": skill, "user.0123abcd/refunds": skill}
    assert split_uri("skill://refunds/SKILL.md", paths) == ("refunds", "SKILL.md")
    assert split_uri("skill://refunds", paths) == ("refunds", "")
    assert split_uri("skill://user.0123abcd/refunds/a%20b/c.md", paths) == (
        "user.0123abcd/refunds",
        "a b/c.md",
    )
    assert split_uri("skill://user.0123abcd", paths) is None
    assert split_uri("skill://other/SKILL.md", paths) is None
    assert split_uri("file:///refunds/SKILL.md", paths) is None
    assert file_uri("refunds", "a b/#1.md") == "skill://refunds/a%20b/%231.md"


def test_only_discovered_files_are_served(tmp_path: Path) -> None:
    """A file made after discovery, or one discovery leaves out (``_private/``), is not in
    the manifest and cannot be read until a refresh lists it."""
    root = tmp_path / "skills"
    folder = write_skill(root, "fine").parent
    (folder / "_private").mkdir()
    (folder / "_private" / "key.txt").write_text("secret")
    extension = _extension(root)
    (folder / "late.txt").write_text("late")
    entry = extension.get("skill://fine/SKILL.md")["skill"]
    listed = [r["uri"] for r in entry["resources"]]
    assert listed == ["skill://fine/SKILL.md"]
    for rel in ("late.txt", "_private/key.txt"):
        with pytest.raises(SkilldeckError):
            extension.read(f"skill://fine/{rel}")
