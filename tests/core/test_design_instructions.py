"""Issue 26 item 4: ``instructions: {file: ...}`` and ``{url: ...}`` replace the body.

URLs are fetched on load only (never at discovery), only from hosts in
``instruction_hosts``, with a size cap; each fetch is cached in the local store and the
cached copy is served (with a notice) when the server is gone. A real ``http.server`` on
127.0.0.1 serves the instructions.
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import write_skill
from skilldeck.core.config import load_settings
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.loader import load_skill
from skilldeck.core.store import LocalStore
from skilldeck.core.workspace import Workspace


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, bytes] = {}
    hits: list[str] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = self.pages.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/markdown")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def web() -> Iterator[tuple[http.server.HTTPServer, str]]:
    _Handler.pages = {"/guide.md": b"Remote guide for $ARGUMENTS.\n", "/big.md": b"x" * 5000}
    _Handler.hits = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def configure(text: str) -> None:
    home = Path(os.environ["SKILLDECK_HOME"])
    (home / "config.toml").write_text(text, encoding="utf-8")


def discover(root: Path) -> Workspace:
    workspace = Workspace(load_settings(), [root], store=LocalStore.open())
    workspace.discover()
    return workspace


def test_file_instructions_replace_the_body(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "filed", body="old body\n", extra="instructions:\n  file: docs/how.md\n")
    (root / "filed" / "docs").mkdir()
    (root / "filed" / "docs" / "how.md").write_text("From the file: $0\n", encoding="utf-8")
    skill = discover(root).by_name("filed")
    assert skill is not None
    result = load_skill(skill, "x")
    assert "From the file: x" in result.text and "old body" not in result.text
    assert (result.origin, result.source) == ("file", "docs/how.md")


def test_file_instructions_outside_the_folder_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "escape", extra="instructions:\n  file: link.md\n")
    (tmp_path / "secret.md").write_text("secret\n", encoding="utf-8")
    (root / "escape" / "link.md").symlink_to(tmp_path / "secret.md")
    skill = discover(root).by_name("escape")
    assert skill is not None
    with pytest.raises(SkilldeckError) as caught:
        load_skill(skill)
    assert caught.value.code.value == "PERMISSION_DENIED"


def test_bad_instructions_value_is_a_diagnostic(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "bad", extra="instructions:\n  file: ../up.md\n")
    skill = discover(root).by_name("bad")
    assert skill is not None and skill.instructions is None
    assert [d.code for d in skill.diagnostics if d.code == "SD122"] == ["SD122"]


def test_url_fetched_on_load_only_from_allowed_hosts_and_cached(
    tmp_path: Path, web: tuple[http.server.HTTPServer, str]
) -> None:
    server, base = web
    root = tmp_path / "skills"
    write_skill(
        root, "remote", body="local body\n", extra=f"instructions:\n  url: {base}/guide.md\n"
    )
    configure('instruction_hosts = ["127.0.0.1"]\n')
    workspace = discover(root)
    assert _Handler.hits == []  # discovery never fetches
    skill = workspace.by_name("remote")
    assert skill is not None
    result = load_skill(skill, "taxes", store=workspace.store)
    assert "Remote guide for taxes." in result.text and "local body" not in result.text
    assert result.origin == "url" and len(result.digest) == 64
    server.shutdown()
    server.server_close()
    offline = load_skill(skill, "taxes", store=workspace.store)
    assert offline.origin == "cache" and offline.digest == result.digest
    assert "Remote guide for taxes." in offline.text
    assert any("could not be fetched" in w for w in offline.warnings)


def test_url_host_not_allowed_is_refused(
    tmp_path: Path, web: tuple[http.server.HTTPServer, str]
) -> None:
    _server, base = web
    root = tmp_path / "skills"
    write_skill(root, "remote", extra=f"instructions:\n  url: {base}/guide.md\n")
    workspace = discover(root)
    skill = workspace.by_name("remote")
    assert skill is not None
    with pytest.raises(SkilldeckError, match="instruction_hosts") as caught:
        load_skill(skill, store=workspace.store)
    assert caught.value.code.value == "PERMISSION_DENIED"
    assert _Handler.hits == []


def test_url_over_the_cap_and_offline_without_cache(
    tmp_path: Path, web: tuple[http.server.HTTPServer, str]
) -> None:
    _server, base = web
    root = tmp_path / "skills"
    write_skill(root, "big", extra=f"instructions:\n  url: {base}/big.md\n")
    write_skill(root, "gone", extra=f"instructions:\n  url: {base}/missing.md\n")
    configure('instruction_hosts = ["127.0.0.1"]\ninstruction_max_bytes = 1000\n')
    workspace = discover(root)
    big, gone = workspace.by_name("big"), workspace.by_name("gone")
    assert big is not None and gone is not None
    with pytest.raises(SkilldeckError, match="1000-byte cap"):
        load_skill(big, store=workspace.store)
    with pytest.raises(SkilldeckError, match="no copy is cached") as caught:
        load_skill(gone, store=workspace.store)
    assert "HTTP 404" in caught.value.message


def test_bad_instruction_hosts_is_a_config_diagnostic() -> None:
    configure('instruction_hosts = "example.com"\n')
    settings = load_settings()
    assert settings.instruction_hosts == []
    assert [d.code for d in settings.diagnostics] == ["SC004"]
