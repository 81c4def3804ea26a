"""``model.safetensors`` mapped, not read (:mod:`skilldeck.core.search.weights`): tensors
come back as read-only views with their dtype, a damaged or lying header is refused with
the reason (never a crash or a read past the file), and loading the model costs the pages
it touches, not a copy of the 90 MB file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import need_semantic_extra
from skilldeck.core.search.weights import WeightsError, map_tensors

_CODES = {"<f4": "F32", "<f2": "F16", "<i8": "I64"}


def _file(path: Path, tensors: dict[str, np.ndarray], **override: Any) -> Path:
    """A safetensors file of ``tensors``; ``override`` replaces header entries."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, array in tensors.items():
        blob = array.tobytes()
        code = _CODES[array.dtype.str]
        header[name] = {
            "dtype": code,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    header.update(override)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + b"".join(blobs))
    return path


def test_tensors_are_read_only_views_with_their_dtype(tmp_path: Path) -> None:
    tensors: dict[str, np.ndarray] = {  # each starts at a multiple of its item size
        "ids": np.arange(7, dtype=np.int64)[None, :],
        "w": np.arange(12, dtype=np.float32).reshape(3, 4),
        "h": np.linspace(-1, 1, 5).astype(np.float16),
    }
    found = map_tensors(_file(tmp_path / "m.safetensors", tensors))
    assert set(found) == set(tensors)
    for name, array in tensors.items():
        assert found[name].dtype == array.dtype and found[name].shape == array.shape
        np.testing.assert_array_equal(found[name], array)
        assert not found[name].flags.writeable  # the file is never written through


@pytest.mark.parametrize(
    ("override", "reason"),
    [
        ({"w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 1 << 30]}}, "outside"),
        ({"w": {"dtype": "F32", "shape": [3, 5], "data_offsets": [0, 48]}}, "for shape"),
        ({"w": {"dtype": "F32", "shape": [-3, -4], "data_offsets": [0, 48]}}, "outside"),
        ({"w": {"dtype": "BF16", "shape": [3, 4], "data_offsets": [0, 24]}}, "unsupported"),
        ({"w": {"dtype": "F32", "shape": "3x4", "data_offsets": [0, 48]}}, "malformed"),
        ({"w": [0, 48]}, "malformed"),
    ],
)
def test_a_lying_header_is_refused_with_the_reason(
    tmp_path: Path, override: dict[str, Any], reason: str
) -> None:
    path = _file(tmp_path / "m.safetensors", {"w": np.zeros((3, 4), np.float32)}, **override)
    with pytest.raises(WeightsError, match=reason):
        map_tensors(path)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x01",
        (1 << 40).to_bytes(8, "little") + b"{}",
        b"\x04" + b"\x00" * 7 + b"[1] ",
        b"\x04" + b"\x00" * 7 + b"\xff\xfe{}",
    ],
)
def test_a_damaged_file_is_refused(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "m.safetensors"
    path.write_bytes(raw)
    with pytest.raises(WeightsError, match="not a safetensors file"):
        map_tensors(path)


def test_loading_the_model_maps_its_weights() -> None:
    """Loading all-MiniLM-L6-v2 and embedding a query stays far under the file's size
    added twice (copying every tensor peaked at 220 MB: file read, then numpy copies)."""
    need_semantic_extra()
    code = (
        "import resource; from skilldeck.core.search.semantic import load_embedder; "
        "import numpy, tokenizers; "
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
        "load_embedder().query('merge pdf pages'); "
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)"
    )
    grown = int(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    assert grown < 110, f"peak RSS grew {grown} MB"


def test_a_misaligned_tensor_is_copied_aligned(tmp_path: Path) -> None:
    tensors: dict[str, np.ndarray] = {
        "h": np.ones(3, np.float16),
        "w": np.arange(4.0, dtype=np.float32),
    }
    found = map_tensors(_file(tmp_path / "m.safetensors", tensors))  # "w" starts at byte 6
    assert found["w"].flags.aligned
    np.testing.assert_array_equal(found["w"], tensors["w"])
