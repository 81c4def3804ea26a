"""A ``.safetensors`` file's tensors as read-only numpy views of the mapped file.

The format: an 8-byte little-endian header size, a JSON header giving each tensor's
``dtype``, ``shape`` and byte range (``data_offsets``, from the end of the header), then
the data. Mapped, not read: nothing is copied, and a page is read when first used, so a
one-shot search touches a few rows of all-MiniLM-L6-v2's 47 MB word table, not all of it.
Measured (loading the model and embedding one query, this 2-core machine): 0.07 s wall,
56 ms of CPU, peak RSS 99 MB; with ``safetensors.numpy.load_file``, which copies every
tensor, 0.20 s, 129 ms and 220 MB. The file must not be cut short while mapped (a
replaced file is fine: the mapping keeps the old one).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "U8": "u1"}
"""The safetensors dtypes numpy has (``BF16`` and the 8-bit floats are refused)."""
MAX_HEADER = 100 << 20


class WeightsError(ValueError):
    """A file that is not a safetensors file this reader takes (the message says why)."""


def map_tensors(path: Path) -> dict[str, NDArray[Any]]:
    """Every tensor of the safetensors file at ``path``, by name, as a read-only view.

    Raises:
        WeightsError: The header is damaged, a tensor's range lies outside the file or
            does not match its shape, or its dtype has no numpy equivalent.
        OSError: The file cannot be read.
    """
    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        total = path.stat().st_size
        if not 2 <= size <= min(MAX_HEADER, total - 8):
            raise WeightsError("not a safetensors file (bad header size)")
        try:
            header = json.loads(fh.read(size))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise WeightsError(f"not a safetensors file (header: {exc})") from None
    if not isinstance(header, dict):
        raise WeightsError("not a safetensors file (header is not an object)")
    header.pop("__metadata__", None)
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size) if total > 8 + size else None
    return {name: _tensor(name, info, data) for name, info in header.items()}


def _tensor(name: str, info: Any, data: NDArray[np.uint8] | None) -> NDArray[Any]:
    try:
        dtype = np.dtype(DTYPES[info["dtype"]])
        shape = [int(n) for n in info["shape"]]
        begin, end = (int(n) for n in info["data_offsets"])
    except (KeyError, TypeError, ValueError):
        raise WeightsError(f"tensor {name}: unsupported or malformed entry") from None
    available = 0 if data is None else data.size
    count = math.prod(shape)
    if min(shape, default=0) < 0 or not 0 <= begin <= end <= available:
        raise WeightsError(f"tensor {name}: its bytes lie outside the file")
    if end - begin != count * dtype.itemsize:
        raise WeightsError(f"tensor {name}: {end - begin} bytes for shape {shape}")
    if data is None or count == 0:
        return np.zeros(shape, dtype=dtype)
    view = np.asarray(data[begin:end]).view(dtype).reshape(shape)
    return np.require(view, requirements=["A"])  # a copy only when misaligned
