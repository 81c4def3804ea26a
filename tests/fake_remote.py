"""A remote skill catalog for tests: a small ``http.server`` on 127.0.0.1 speaking the
2026-07-28 single-exchange POST of the Skills extension (it checks the headers and
``_meta`` envelope a real SDK server checks). It can also lie (a file that does not match
its digest, unsafe paths), swap what it serves, answer as an SSE stream, or stall.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOKEN = "s3cret-token"


def sha(data: bytes) -> str:
    """The extension's digest of ``data`` (``sha256:HEX``)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


class FakeRemote:
    """Skills served as the extension says, from ``files`` (skill path -> rel -> bytes)."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, bytes]] = {}
        self.lies: dict[str, bytes] = {}
        """URI -> bytes sent instead of the file's (a tampering remote)."""
        self.extra_entries: list[dict[str, Any]] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.sse = False
        self.stall = 0.0
        self.page = 1
        self.swaps: dict[str, dict[str, bytes]] = {}
        """Skill -> files served from its second ``skills/get`` on (a two-faced remote)."""
        self.gets: dict[str, int] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(
        self, name: str, description: str, extra: dict[str, bytes] | None = None, tools: str = ""
    ) -> None:
        front = f"name: {name}\ndescription: {description}\n"
        if tools:
            front += f"allowed-tools: {tools}\n"
        skill_md = f"---\n{front}---\n# {name}\n\nBody.\n"
        self.files[name] = {"SKILL.md": skill_md.encode(), **(extra or {})}

    def entry(self, name: str) -> dict[str, Any]:
        files = self.files[name]
        return {
            "uri": f"skill://{name}/SKILL.md",
            "frontmatter": _frontmatter(files["SKILL.md"]),
            "resources": [
                {"uri": f"skill://{name}/{rel}", "digest": sha(data), "size": len(data)}
                for rel, data in sorted(files.items())
            ],
        }

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            capabilities: dict[str, Any] = {
                "resources": {},
                "extensions": {"io.modelcontextprotocol/skills": {}},
            }
            return {"result": {"supportedVersions": ["2026-07-28"], "capabilities": capabilities}}
        if method == "skills/list":
            entries = [self.entry(n) for n in sorted(self.files)] + self.extra_entries
            start = int(params.get("cursor") or 0)
            result: dict[str, Any] = {"skills": entries[start : start + self.page]}
            if start + self.page < len(entries):
                result["nextCursor"] = str(start + self.page)
            return {"result": result}
        if method == "skills/get":
            name = params["uri"].removeprefix("skill://").removesuffix("/SKILL.md")
            if name not in self.files:
                return {"error": {"code": -32602, "message": "No skill is served there"}}
            self.gets[name] = self.gets.get(name, 0) + 1
            if self.gets[name] > 1 and name in self.swaps:
                self.files[name] = self.swaps.pop(name)
            return {"result": {"skill": self.entry(name)}}
        if method == "resources/read":
            uri = params["uri"]
            name, _, rel = uri.removeprefix("skill://").partition("/")
            data = self.lies.get(uri, self.files[name][rel])
            content = {"uri": uri, "blob": base64.b64encode(data).decode()}
            return {"result": {"contents": [content]}}
        return {"error": {"code": -32601, "message": "Method not found"}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        remote = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                remote.requests.append((body["method"], headers))
                if headers.get("authorization") != f"Bearer {TOKEN}":
                    self.send_response(401)
                    self.end_headers()
                    return
                meta = body["params"]["_meta"]
                assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
                assert "io.modelcontextprotocol/clientCapabilities" in meta
                assert headers["mcp-protocol-version"] == "2026-07-28"
                assert headers["mcp-method"] == body["method"]
                if body["method"] == "resources/read":
                    assert headers["mcp-name"] == body["params"]["uri"]
                time.sleep(remote.stall)
                reply = {
                    "jsonrpc": "2.0",
                    "id": body["id"],
                    **remote.answer(body["method"], body["params"]),
                }
                data = json.dumps(reply).encode()
                kind = "application/json"
                if remote.sse:
                    data = b": ping\r\n\r\nevent: message\r\ndata: " + data + b"\r\n\r\n"
                    kind = "text/event-stream"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (the stalled-remote test)

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _frontmatter(skill_md: bytes) -> dict[str, str]:
    head = skill_md.decode().split("---\n")[1]
    return dict(line.split(": ", 1) for line in head.splitlines())


def configure(remote: FakeRemote, home: Path, token_dir: Path, extra: str = "") -> None:
    """Name ``remote`` as ``[remotes.team]`` in ``home``'s ``config.toml`` (its token in
    ``token_dir``), as an operator's faces read it; ``extra``: more lines of the table."""
    token = token_dir / "token"
    token.write_text(TOKEN + "\n")
    (home / "config.toml").write_text(
        f'semantic = false\n[remotes.team]\nurl = "{remote.url}"\n'
        f'token_file = "{token}"\ntimeout_s = 5\nttl_s = 0\n{extra}'
    )
