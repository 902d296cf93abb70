"""numpy twins of the numba kernels (:mod:`bucketkit.hashing.kernels`), and the choice between the two.

numba's LLVM needs ~190 MiB of address space, which a Python worker under ``spark.executor.pyspark.memory`` may not
have (``libllvmlite.so`` then fails to load); there the hashes run on these, whole arrays at a time: a fixed-width
column costs a few numpy passes, a string column one pass per 4-byte block of its longest string. Same
signatures, same results: ``tests/test_hashing_npkernels.py`` holds each kernel equal to its numba twin.

All arithmetic is ``uint32``, whose wrap-around is Java's ``int`` overflow.
"""

from __future__ import annotations

import functools
import importlib
import sys
from types import ModuleType
from typing import Callable

import numpy as np

__all__ = [
    "murmur3_int16_be", "murmur3_int32_be", "murmur3_int64_be", "murmur3_bytes", "java_list_hash",
    "map_hash", "combine_bucket", "spark_murmur3_long", "spark_murmur3_bytes", "chosen", "numba_module",
]

_U32 = np.uint32
_SEED = _U32(104729)
_C1, _C2 = _U32(0xCC9E2D51), _U32(0x1B873593)
_N, _F1, _F2 = _U32(0xE6546B64), _U32(0x85EBCA6B), _U32(0xC2B2AE35)


@functools.cache
def chosen() -> ModuleType:
    """The kernels this process hashes with: numba's (:func:`numba_module`), else this module's. Looked up once."""
    return numba_module("bucketkit.hashing.kernels") or sys.modules[__name__]


def numba_module(name: str) -> ModuleType | None:
    """The module of numba kernels ``name``, imported, or None where this process does not load it: under an
    address-space cap (a Python worker under ``spark.executor.pyspark.memory``) unless it is loaded already, or where
    it fails to load. numba's LLVM takes ~190 MiB of address space; near a cap it fails to load (``OSError``) or
    aborts the process (``std::bad_alloc``, measured at 500 MiB), and below it, it takes room the task's data needs.
    The one rule for bucketkit's numba kernels (the hashes here, the join's in :mod:`bucketkit.joins.execute`)."""
    if name not in sys.modules and address_space_cap() is not None:
        return None
    try:
        return importlib.import_module(name)
    except (ImportError, OSError, MemoryError):
        return None


def address_space_cap() -> int | None:
    """This process's ``RLIMIT_AS`` soft limit in bytes (Spark sets it on a Python worker from
    ``spark.executor.pyspark.memory``), or None: uncapped, or no such limit on this platform."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    return None if soft in (resource.RLIM_INFINITY, -1) else soft


#: Values (rows, bytes, list items) per pass: bounds the temporaries (a few arrays of this many 8-byte values) in a
#: Python worker whose memory is capped, which is where these kernels run.
CHUNK = 1 << 20


def _u32(x: np.ndarray) -> np.ndarray:
    """Integers of any width (maybe negative) as their low 32 bits, two's complement."""
    x = np.asarray(x)
    if x.dtype == np.uint32:
        return x
    if x.dtype.itemsize <= 4 and x.dtype.kind == "i":
        return x.astype(np.int32).view(np.uint32)  # sign-extended
    return (x.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def _by_rows(kernel: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """``kernel`` over the arrays' rows (sliced alike), :data:`CHUNK` rows at a time."""
    n = len(arrays[0])
    if n <= CHUNK:
        return kernel(*arrays)
    return np.concatenate([kernel(*(a[i:i + CHUNK] for a in arrays)) for i in range(0, n, CHUNK)])


def _by_slices(offsets: np.ndarray, kernel: Callable[[np.ndarray, int, int, slice], np.ndarray]) -> np.ndarray:
    """``kernel(offsets from 0, first value, end value, rows)`` over runs of rows covering about :data:`CHUNK`
    values (a longer row alone), the results of the runs concatenated: one per row of ``offsets``."""
    offsets = np.asarray(offsets)
    rows, parts, i = len(offsets) - 1, [], 0
    while True:
        j = min(rows, max(i + 1, int(np.searchsorted(offsets, offsets[i] + CHUNK, side="right")) - 1))
        window = offsets[i:j + 1].astype(np.int64)
        parts.append(kernel(window - window[0], int(window[0]), int(window[-1]), slice(i, j)))
        if j >= rows:
            return np.concatenate(parts) if len(parts) > 1 else parts[0]
        i = j


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U32(r)) | (x >> _U32(32 - r))


def _mix_k(k: np.ndarray) -> np.ndarray:
    return _rotl(k * _C1, 15) * _C2


def _mix_h(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _rotl(h ^ _mix_k(k), 13) * _U32(5) + _N


def _fmix(h: np.ndarray, length: np.ndarray | np.uint32) -> np.ndarray:
    h = h ^ length
    h ^= h >> _U32(16)
    h *= _F1
    h ^= h >> _U32(13)
    h *= _F2
    h ^= h >> _U32(16)
    return h


def _i32(h: np.ndarray) -> np.ndarray:
    return h.astype(np.uint32).view(np.int32)


def _bswap(x: np.ndarray) -> np.ndarray:
    return x.astype(np.uint32).byteswap()


def murmur3_int16_be(values: np.ndarray) -> np.ndarray:
    """Hive Murmur3 of each int16's 2 big-endian bytes (both tail bytes, sign-extended)."""
    return _by_rows(_murmur3_int16_be, values)


def _murmur3_int16_be(values: np.ndarray) -> np.ndarray:
    v = values.astype(np.int64)
    high = ((v >> 8) & 0xFF).astype(np.uint8).view(np.int8).astype(np.int64)  # data[0], a signed Java byte
    low = (v & 0xFF).astype(np.uint8).view(np.int8).astype(np.int64)
    return _i32(_fmix(_SEED ^ _mix_k(_u32((low << 8) ^ high)), _U32(2)))


def murmur3_int32_be(values: np.ndarray) -> np.ndarray:
    """Hive Murmur3 of each int32's 4 big-endian bytes (one little-endian block: the byte-swapped value)."""
    return _by_rows(lambda v: _i32(_fmix(_mix_h(np.full(len(v), _SEED), _bswap(_u32(v))), _U32(4))), values)


def murmur3_int64_be(values: np.ndarray) -> np.ndarray:
    """Hive Murmur3 of each int64's 8 big-endian bytes."""
    return _by_rows(_murmur3_int64_be, values)


def _murmur3_int64_be(values: np.ndarray) -> np.ndarray:
    u = np.asarray(values).astype(np.int64).view(np.uint64)
    h = _mix_h(np.full(len(u), _SEED), _bswap(u >> np.uint64(32)))
    return _i32(_fmix(_mix_h(h, _bswap(u & np.uint64(0xFFFFFFFF))), _U32(8)))


def _blocks(h: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mix every whole 4-byte little-endian block of each string into ``h`` (one pass per block index, over the
    strings that long); returns (h, each string's tail start, its tail length)."""
    start = offsets[:-1]
    length = offsets[1:] - start
    blocks = length >> 2
    order = np.argsort(-blocks, kind="stable")  # the strings still mixing at block j: a prefix of this order
    ordered_start, ordered_blocks = start[order], blocks[order]
    hs = h[order]
    top = int(ordered_blocks[0]) if len(order) else 0
    active = len(order) - np.searchsorted(ordered_blocks[::-1], np.arange(top), side="right")  # more than j blocks
    byte = data.astype(np.uint32)
    for j in range(top):
        count = int(active[j])
        at = ordered_start[:count] + 4 * j
        k = byte[at] | (byte[at + 1] << _U32(8)) | (byte[at + 2] << _U32(16)) | (byte[at + 3] << _U32(24))
        hs[:count] = _mix_h(hs[:count], k)
    out = np.empty_like(h)
    out[order] = hs
    return out, start + (blocks << 2), length & 3


def _signed_bytes(data: np.ndarray, at: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``data[at]`` as Java's signed bytes (int64), 0 where not ``present``."""
    safe = np.where(present, at, 0)
    values = data[safe].view(np.int8).astype(np.int64) if len(data) else np.zeros(len(at), np.int64)
    return np.where(present, values, 0)


def murmur3_bytes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Hive Murmur3 of each byte string ``data[offsets[i]:offsets[i+1]]`` (``data``: uint8)."""
    return _by_slices(offsets, lambda o, lo, hi, _: _murmur3_bytes(o, data[lo:hi]))


def _murmur3_bytes(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    n = len(offsets) - 1
    h, tail, rem = _blocks(np.full(n, _SEED), offsets, data)
    # Hive's tail: Java's signed bytes, each sign-extended before its shift, xor-ed into one block
    k1 = _signed_bytes(data, tail, rem >= 1) ^ (_signed_bytes(data, tail + 1, rem >= 2) << 8) \
        ^ (_signed_bytes(data, tail + 2, rem == 3) << 16)
    h = np.where(rem > 0, h ^ _mix_k(_u32(k1)), h)
    return _i32(_fmix(h, _u32(offsets[1:] - offsets[:-1])))


def _segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``sum(values[offsets[i]:offsets[i+1]])`` mod 2**32 per segment (``values``: uint32; ``offsets`` from 0)."""
    running = np.zeros(len(values) + 1, np.uint32)
    np.cumsum(values, dtype=np.uint32, out=running[1:])
    return running[offsets[1:]] - running[offsets[:-1]]


def java_list_hash(offsets: np.ndarray, values: np.ndarray, initial: int) -> np.ndarray:
    """``r = 31 * r + values[j]`` over each slice ``values[offsets[i]:offsets[i+1]]``, from ``initial``: the sum of
    ``values[j] * 31**(elements after j)``, plus ``initial * 31**length`` (Java's List/String hash; see
    :func:`bucketkit.hashing.kernels.java_list_hash`)."""
    return _by_slices(offsets, lambda o, lo, hi, _: _java_list_hash(o, _u32(values[lo:hi]), initial))


def _java_list_hash(offsets: np.ndarray, values: np.ndarray, initial: int) -> np.ndarray:
    length = offsets[1:] - offsets[:-1]
    longest = int(length.max()) if len(length) else 0
    powers = np.ones(longest + 1, np.uint32)
    np.cumprod(np.full(longest, 31, np.uint32), dtype=np.uint32, out=powers[1:])
    after = np.repeat(offsets[1:] - 1, length) - np.arange(len(values))  # values after each one in its slice
    return _i32(_segment_sums(values * powers[after], offsets) + _U32(initial & 0xFFFFFFFF) * powers[length])


def map_hash(offsets: np.ndarray, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``keys[j] ^ values[j]`` over each map's entries."""
    return _by_slices(offsets, lambda o, lo, hi, _: _i32(_segment_sums(_u32(keys[lo:hi]) ^ _u32(values[lo:hi]), o)))


def combine_bucket(h: np.ndarray, x: np.ndarray, bucket_count: int, first: bool) -> np.ndarray:
    """``31 * h + x`` per row (just ``x`` if ``first``), then the bucket ``(h & 0x7fffffff) % bucket_count`` if
    ``bucket_count > 0``."""
    r = _u32(x) if first else _u32(h) * _U32(31) + _u32(x)
    if bucket_count > 0:
        r = (r & _U32(0x7FFFFFFF)) % _U32(bucket_count)
    return _i32(r)


def spark_murmur3_long(values: np.ndarray, seeds: np.ndarray, is_long: bool) -> np.ndarray:
    """Spark's ``hashLong`` (``is_long``) or ``hashInt`` of each value, seeded per row (uint32 held in int64)."""
    return _by_rows(lambda v, s: _spark_murmur3_long(v, s, is_long), values, seeds)


def _spark_murmur3_long(values: np.ndarray, seeds: np.ndarray, is_long: bool) -> np.ndarray:
    u = np.asarray(values).astype(np.int64).view(np.uint64)
    h = _mix_h(_u32(seeds), (u & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    if is_long:
        h = _mix_h(h, (u >> np.uint64(32)).astype(np.uint32))
    return _fmix(h, _U32(8 if is_long else 4)).astype(np.int64)


def spark_murmur3_bytes(offsets: np.ndarray, data: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Spark's ``hashUnsafeBytes`` of each byte string: 4-byte little-endian blocks, then every tail byte as a block
    of its own (sign-extended), seeded per row; uint32 results held in int64."""
    return _by_slices(offsets, lambda o, lo, hi, rows: _spark_murmur3_bytes(o, data[lo:hi], seeds[rows]))


def _spark_murmur3_bytes(offsets: np.ndarray, data: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    h, tail, rem = _blocks(_u32(seeds), offsets, data)
    for i in range(3):
        present = rem > i
        h = np.where(present, _mix_h(h, _u32(_signed_bytes(data, tail + i, present))), h)
    return _fmix(h, _u32(offsets[1:] - offsets[:-1])).astype(np.int64)
