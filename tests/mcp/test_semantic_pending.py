"""``search_skills`` answers at once while the vectors are embedded, and says so: a real
``skilldeck serve`` with the real MiniLM over the shared corpus (372 skills, nothing
embedded yet: several seconds of embedding), its first answer lexical with the semantic
signal ``pending``, later ones ``hybrid`` once every vector is in."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mcp_harness import ServerClient, make_home

from conftest import need_semantic_extra

QUERY = {"query": "generative art with p5.js", "limit": 3}


def _search(server: ServerClient) -> dict[str, Any]:
    data = server.call("search_skills", QUERY).structured_content
    assert isinstance(data, dict)
    return data


def test_search_answers_lexically_while_vectors_build(corpus_dir: Path, tmp_path: Path) -> None:
    need_semantic_extra()
    home = make_home(tmp_path / "home")
    (home / "config.toml").write_text("semantic = true\n", encoding="utf-8")
    server = ServerClient(corpus_dir, home).start()
    try:
        started = time.monotonic()
        first = _search(server)
        waited = time.monotonic() - started
        assert (first["mode"], first["semantic"]) == ("lexical", "pending"), first
        assert waited < 5 and first["results"][0]["name"] == "algorithmic-art"
        deadline = time.monotonic() + 300
        later = first
        while later["semantic"] == "pending" and time.monotonic() < deadline:
            time.sleep(0.5)
            later = _search(server)
        assert (later["mode"], later["semantic"]) == ("hybrid", "on"), later
        assert later["results"][0]["name"] == "algorithmic-art"
    finally:
        server.close()
