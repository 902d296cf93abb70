"""Vectorised Hive bucketing hashes over Arrow arrays: the twin of hashing's scalar path.

Fixed-width types are hashed with numpy (v1) or a Murmur3 kernel over the values' big-endian bytes
(v2); strings with kernels over Arrow's offsets and data buffers; arrays and maps by hashing
the child values once (recursively, vectorised) and reducing them per row with the offsets. NULLs
hash to 0 through the validity bitmap. Every kernel reads Arrow buffers in place (slices honoured
through ``array.offset``), so no Python object is created per value. The kernels are numba's
(:mod:`bucketkit.hashing.kernels`), or their numpy twins where numba cannot load
(:func:`bucketkit.hashing.npkernels.chosen`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from bucketkit.hashing import npkernels
from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, arrow_type_of_hive

__all__ = ["hash_columns"]


def _columns(arrays: Any) -> list[Any]:
    if isinstance(arrays, (pa.Table, pa.RecordBatch)):
        return list(arrays.columns)
    if isinstance(arrays, (pa.Array, pa.ChunkedArray)):
        return [arrays]
    return [a if isinstance(a, (pa.Array, pa.ChunkedArray)) else pa.array(a) for a in arrays]


def _fixed(arr: pa.Array, dtype: Any) -> np.ndarray:
    """The values buffer of a fixed-width array as numpy, honouring the slice offset (no copy)."""
    dtype = np.dtype(dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize)


def _offsets(arr: pa.Array) -> np.ndarray:
    dtype = np.int64 if pa.types.is_large_string(arr.type) or pa.types.is_large_list(arr.type) else np.int32
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr) + 1, offset=arr.offset * np.dtype(dtype).itemsize)


def _conform(arr: pa.Array, t: HiveType) -> pa.Array:
    """Cast an array to the Arrow type the kernels expect for Hive type ``t`` (exact casts only)."""
    if t.name in ("string", "varchar"):
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            return arr
        expected = pa.large_string() if pa.types.is_large_binary(arr.type) else pa.string()
    elif t.name == "array":
        if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            return arr
        expected = pa.list_(arr.type.value_type) if pa.types.is_list_view(arr.type) or \
            pa.types.is_fixed_size_list(arr.type) else None
    elif t.name == "map":
        expected = None if not pa.types.is_map(arr.type) else arr.type
    else:
        expected = arrow_type_of_hive(t)
    if expected is not None and arr.type == expected:
        return arr
    textual = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_binary(arr.type)
    try:
        if expected is None or (textual and t.name not in ("string", "varchar")):
            raise pa.ArrowInvalid("no cast")  # parsing text would guess at the data's meaning
        return arr.cast(expected, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise UnsupportedTypeError(f"cannot hash an Arrow {arr.type} column as Hive {t}: expected "
                                   f"{arrow_type_of_hive(t)} (or a type that casts to it exactly)") from None


def _zero_nulls(arr: pa.Array, h: np.ndarray) -> np.ndarray:
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        h = np.where(valid, h, np.int32(0))
    return h


def _hash_array(arr: pa.Array, t: HiveType, version: int) -> np.ndarray:
    """int32 hashes of one (non-chunked) Arrow array as Hive type ``t``."""
    k = npkernels.chosen()
    if pa.types.is_dictionary(arr.type):
        dictionary = _hash_array(arr.dictionary, t, version)
        indices = arr.indices.fill_null(0).to_numpy()
        return _zero_nulls(arr, dictionary[indices] if len(dictionary) else np.zeros(len(arr), np.int32))
    arr = _conform(arr, t)
    if len(arr) == 0:
        return np.zeros(0, np.int32)
    name = t.name
    if name == "boolean":
        h = arr.cast(pa.int8()).fill_null(0).to_numpy().astype(np.int32)
    elif name == "tinyint":
        h = _fixed(arr, np.int8).astype(np.int32)
    elif name == "smallint":
        x = _fixed(arr, np.int16)
        h = x.astype(np.int32) if version == 1 else k.murmur3_int16_be(x)
    elif name in ("int", "date"):
        x = _fixed(arr, np.int32)
        h = x if version == 1 else k.murmur3_int32_be(x)
    elif name == "bigint":
        x = _fixed(arr, np.int64)
        h = _fold64(x) if version == 1 else k.murmur3_int64_be(x)
    elif name == "float":
        bits = _fixed(arr, np.float32).view(np.int32).copy()
        bits[np.isnan(_fixed(arr, np.float32))] = 0x7FC00000  # floatToIntBits: canonical NaN
        # v2 quirk: the int bits are converted *numerically* to float, then hashed as bytes.
        h = bits if version == 1 else k.murmur3_int32_be(bits.astype(np.float32).view(np.int32))
    elif name == "double":
        values = _fixed(arr, np.float64)
        bits = values.view(np.int64).copy()
        bits[np.isnan(values)] = 0x7FF8000000000000  # doubleToLongBits: canonical NaN
        h = _fold64(bits) if version == 1 else k.murmur3_int64_be(bits.astype(np.float64).view(np.int64))
    elif name in ("string", "varchar"):
        offsets = _offsets(arr)
        data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else \
            np.zeros(0, np.uint8)
        if version == 2:
            h = k.murmur3_bytes(offsets, data)
        else:
            h = k.java_list_hash(offsets, data.view(np.int8), 1 if name == "varchar" else 0)
    elif name == "array":
        offsets, start, stop = _child_window(arr)
        child = _hash_array(arr.values.slice(start, stop - start), t.children[0], version)
        h = k.java_list_hash(offsets - offsets.dtype.type(start), child, 0)
    elif name == "map":
        offsets, start, stop = _child_window(arr)
        keys = _hash_array(arr.keys.slice(start, stop - start), t.children[0], version)
        # Hive quirk (hashCodeMurmur): map values are hashed with v1 even in v2.
        items = _hash_array(arr.items.slice(start, stop - start), t.children[1], 1)
        h = k.map_hash(offsets - offsets.dtype.type(start), keys, items)
    else:
        raise UnsupportedTypeError(f"cannot hash Hive type {t}")  # check_bucketable stops this earlier
    return _zero_nulls(arr, h)


def _fold64(x: np.ndarray) -> np.ndarray:
    """Java's ``(int) (v >>> 32 ^ v)``: the xor of the two 32-bit halves (little-endian words)."""
    words = x.view(np.int32)
    return words[0::2] ^ words[1::2]


def _child_window(arr: pa.Array) -> tuple[np.ndarray, int, int]:
    """A list/map array's offsets and the child range they cover (child arrays ignore slicing)."""
    offsets = _offsets(arr)
    return offsets, int(offsets[0]), int(offsets[-1])


def _hash_column(column: Any, t: HiveType, version: int) -> np.ndarray:
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return _hash_array(column.chunk(0), t, version)
        parts = [_hash_array(c, t, version) for c in column.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)
    if not isinstance(column, pa.Array):
        raise InvalidArgumentError(f"expected a pyarrow Array or ChunkedArray, got {type(column).__name__}")
    return _hash_array(column, t, version)


def hash_columns(arrays: Any, types: tuple[HiveType, ...], version: int, bucket_count: int = 0) -> np.ndarray:
    """Combined int32 hashes (or, with ``bucket_count > 0``, bucket ids) of Arrow columns."""
    columns = _columns(arrays)
    if len(columns) != len(types):
        raise InvalidArgumentError(f"got {len(columns)} arrays for {len(types)} bucket column types "
                                   f"{[str(t) for t in types]}")
    lengths = [len(c) for c in columns]
    if len(set(lengths)) > 1:
        raise InvalidArgumentError(f"bucket column arrays differ in length: {lengths}")
    h = np.zeros(lengths[0] if lengths else 0, dtype=np.int32)
    k = npkernels.chosen()
    for i, (column, t) in enumerate(zip(columns, types)):
        last = i == len(columns) - 1
        h = k.combine_bucket(h, _hash_column(column, t, version), bucket_count if last else 0, i == 0)
    return h
