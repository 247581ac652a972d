"""Complex values at a Parity model's edges (docs/complex.md).

Parity's ONNX carries a complex64 / complex128 tensor as float32 / float64 (real, imaginary) pairs in a trailing
dim of 2, and lists such graph inputs and outputs in the model's metadata_props `parity.complex_inputs` /
`parity.complex_outputs` (JSON {name: "complex64"}). These helpers read that list without parsing the graph
(a model of gigabytes is scanned, not loaded) and convert numpy arrays between the two forms.
"""
from __future__ import annotations

import json
import mmap
import os

import numpy as np

_PART = {"complex64": np.float32, "complex128": np.float64, "complex32": np.float16}
_WHOLE = {"complex64": np.complex64, "complex128": np.complex128, "complex32": np.complex64}
_METADATA_PROPS = 14  # ModelProto.metadata_props (onnx.proto)


def _varint(buf, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated or malformed protobuf varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(buf, start: int = 0, end: int | None = None):
    """(field number, wire type, value or (begin, end) of a length-delimited field) of one protobuf message."""
    pos, end = start, len(buf) if end is None else end
    while pos < end:
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield field, wire, value
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > end:
                raise ValueError("a protobuf field runs past the end of its message")
            yield field, wire, (pos, pos + size)
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def metadata_props(buf) -> dict[str, str]:
    """A serialized ModelProto's metadata_props, read without parsing its graph."""
    props = {}
    for field, wire, span in _fields(buf):
        if field != _METADATA_PROPS or wire != 2:
            continue
        entry = {f: bytes(buf[b:e]).decode() for f, w, (b, e) in
                 ((f, w, v) for f, w, v in _fields(buf, *span) if w == 2)}
        props[entry.get(1, "")] = entry.get(2, "")
    return props


def model_metadata(path_or_bytes) -> dict[str, str]:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return metadata_props(memoryview(path_or_bytes))
    with open(os.fspath(path_or_bytes), "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return {}
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return metadata_props(m)


def complex_io(path_or_bytes) -> tuple[dict[str, str], dict[str, str]]:
    """({input name: complex dtype}, {output name: complex dtype}) of a model Parity exported."""
    props = model_metadata(path_or_bytes)
    return (json.loads(props.get("parity.complex_inputs", "{}")),
            json.loads(props.get("parity.complex_outputs", "{}")))


def to_pairs(value, dtype: str, name: str) -> np.ndarray:
    """A complex array as (real, imaginary) pairs of the model's part dtype; a real array already in that
    layout (a trailing dim of 2) is passed as it is."""
    array = np.asarray(value)
    if np.iscomplexobj(array):
        return np.ascontiguousarray(np.stack([array.real, array.imag], axis=-1).astype(_PART[dtype]))
    if array.ndim == 0 or array.shape[-1] != 2:
        raise ValueError(f"input {name!r} is {dtype}: pass a complex array, or its (real, imaginary) pairs "
                         f"in a trailing dim of 2 (got {array.dtype} {list(array.shape)})")
    return array


def from_pairs(value: np.ndarray, dtype: str) -> np.ndarray:
    """(real, imaginary) pairs in the last dim as a complex array (complex32 becomes complex64: numpy has no
    complex32)."""
    pairs = np.asarray(value)
    whole = pairs[..., 0].astype(_WHOLE[dtype])
    whole.imag = pairs[..., 1]
    return whole
