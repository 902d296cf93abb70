"""Vectorised Hive bucketing hashes over Arrow arrays (the twin of hashing's scalar path)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from bucketkit.errors import InvalidArgumentError
from bucketkit.hivetypes import HiveType

__all__ = ["hash_columns"]


def _columns(arrays: Any) -> list[Any]:
    if isinstance(arrays, (pa.Table, pa.RecordBatch)):
        return list(arrays.columns)
    if isinstance(arrays, (pa.Array, pa.ChunkedArray)):
        return [arrays]
    return list(arrays)


def hash_columns(arrays: Any, types: tuple[HiveType, ...], version: int) -> np.ndarray:
    from bucketkit.hashing import _hash_value

    columns = _columns(arrays)
    if len(columns) != len(types):
        raise InvalidArgumentError(f"got {len(columns)} arrays for {len(types)} bucket column types "
                                   f"{[str(t) for t in types]}")
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise InvalidArgumentError(f"bucket column arrays differ in length: {[len(c) for c in columns]}")
    n = lengths.pop() if lengths else 0
    h = np.zeros(n, dtype=np.int32)
    for column, t in zip(columns, types):
        x = np.fromiter((_hash_value(v, t, version) for v in column.to_pylist()), dtype=np.int64, count=n)
        h = h * np.int32(31) + x.astype(np.int32)
    return h
