"""numba kernels for the vectorised Hive bucketing hashes (compiled lazily, cached on disk).

Each kernel is the array twin of a rule in :mod:`bucketkit.hashing.hive` / :mod:`bucketkit.hashing.murmur3`
and returns ``int32`` hashes; validity (NULL -> 0) is applied by the caller. All arithmetic runs
in ``uint64`` masked to 32 bits, which reproduces Java's ``int`` overflow exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "murmur3_int16_be", "murmur3_int32_be", "murmur3_int64_be", "murmur3_bytes", "java_list_hash",
    "map_hash", "combine_bucket", "spark_murmur3_long", "spark_murmur3_bytes",
]

# Typed constants: numba would turn uint64-with-int arithmetic into float64.
_U = np.uint64
_SEED = _U(104729)
_M = _U(0xFFFFFFFF)
_C1 = _U(0xCC9E2D51)
_C2 = _U(0x1B873593)
_N = _U(0xE6546B64)
_F1 = _U(0x85EBCA6B)
_F2 = _U(0xC2B2AE35)
_B = _U(0xFF)
_31 = _U(31)
_SIGN = _U(0x7FFFFFFF)
_S8, _S13, _S15, _S16, _S17, _S19, _S24, _S32 = (_U(n) for n in (8, 13, 15, 16, 17, 19, 24, 32))


@njit(inline="always")
def _mix_k(k):
    k = (k * _C1) & _M
    k = ((k << _S15) | (k >> _S17)) & _M
    return (k * _C2) & _M


@njit(inline="always")
def _mix_h(h, k):
    h ^= _mix_k(k)
    h = ((h << _S13) | (h >> _S19)) & _M
    return (h * _U(5) + _N) & _M


@njit(inline="always")
def _fmix(h, length):
    h ^= length
    h ^= h >> _S16
    h = (h * _F1) & _M
    h ^= h >> _S13
    h = (h * _F2) & _M
    h ^= h >> _S16
    return h


@njit(inline="always")
def _mix_blocks(h, data, start, end):
    """Mix ``data[start:end]`` (a multiple of 4 bytes) into ``h`` as little-endian 4-byte blocks."""
    for j in range(start, end, 4):
        k = (_U(data[j]) | (_U(data[j + 1]) << _S8) | (_U(data[j + 2]) << _S16)
             | (_U(data[j + 3]) << _S24))
        h = _mix_h(h, k)
    return h


@njit(inline="always")
def _bswap32(x):
    return (((x & _B) << _S24) | (((x >> _S8) & _B) << _S16) | (((x >> _S16) & _B) << _S8)
            | ((x >> _S24) & _B))


@njit(inline="always")
def _u32(x):
    """An int (any width, maybe negative) as its 32-bit two's-complement pattern in uint64."""
    return _U(np.int64(x)) & _M


@njit(inline="always")
def _i32(x):
    return np.int32(np.uint32(x))


@njit(cache=True)
def murmur3_int16_be(values):
    """Hive Murmur3 of each int16's 2 big-endian bytes (both are tail bytes, sign-extended)."""
    out = np.empty(values.shape[0], dtype=np.int32)
    for i in range(values.shape[0]):
        v = np.int64(values[i])
        b0 = np.int64(np.int8((v >> 8) & 0xFF))  # data[0], a signed Java byte
        b1 = np.int64(np.int8(v & 0xFF))  # data[1]
        h = _SEED ^ _mix_k(_u32(b1 << 8) ^ _u32(b0))
        out[i] = _i32(_fmix(h, _U(2)))
    return out


@njit(cache=True)
def murmur3_int32_be(values):
    """Hive Murmur3 of each int32's 4 big-endian bytes (one little-endian block = bswap)."""
    out = np.empty(values.shape[0], dtype=np.int32)
    for i in range(values.shape[0]):
        k = _bswap32(_u32(values[i]))
        out[i] = _i32(_fmix(_mix_h(_SEED, k), _U(4)))
    return out


@njit(cache=True)
def murmur3_int64_be(values):
    """Hive Murmur3 of each int64's 8 big-endian bytes."""
    out = np.empty(values.shape[0], dtype=np.int32)
    for i in range(values.shape[0]):
        u = _U(np.int64(values[i]))
        h = _mix_h(_SEED, _bswap32(u >> _S32))
        h = _mix_h(h, _bswap32(u & _M))
        out[i] = _i32(_fmix(h, _U(8)))
    return out


@njit(cache=True)
def murmur3_bytes(offsets, data):
    """Hive Murmur3 of each byte string ``data[offsets[i]:offsets[i+1]]`` (``data``: uint8)."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int32)
    for i in range(n):
        start = np.int64(offsets[i])
        length = np.int64(offsets[i + 1]) - start
        h = _SEED
        j = start + (length & ~np.int64(3))
        h = _mix_blocks(h, data, start, j)
        rem = length & 3
        if rem:
            # Hive's tail: Java's signed bytes, so each byte sign-extends before the shift.
            k1 = np.int64(0)
            if rem == 3:
                k1 ^= np.int64(np.int8(data[j + 2])) << 16
            if rem >= 2:
                k1 ^= np.int64(np.int8(data[j + 1])) << 8
            k1 ^= np.int64(np.int8(data[j]))
            h ^= _mix_k(_u32(k1))
        out[i] = _i32(_fmix(h, _u32(length)))
    return out


@njit(cache=True)
def java_list_hash(offsets, values, initial):
    """``r = 31 * r + values[j]`` over each slice ``values[offsets[i]:offsets[i+1]]``, from ``initial``.

    Java's List/String hash rule, which Hive v1 uses for strings and varchar (``values``: the UTF-8
    bytes viewed as *signed* int8, ``initial`` 0 or 1) and both versions use for arrays
    (``values``: the element hashes, ``initial`` 0).
    """
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int32)
    for i in range(n):
        r = _u32(initial)
        for j in range(np.int64(offsets[i]), np.int64(offsets[i + 1])):
            r = (r * _31 + _u32(values[j])) & _M
        out[i] = _i32(r)
    return out


@njit(cache=True)
def map_hash(offsets, keys, values):
    """Sum of ``keys[j] ^ values[j]`` over each map's entries."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int32)
    for i in range(n):
        r = _U(0)
        for j in range(np.int64(offsets[i]), np.int64(offsets[i + 1])):
            r = (r + _u32(keys[j] ^ values[j])) & _M
        out[i] = _i32(r)
    return out


@njit(cache=True)
def combine_bucket(h, x, bucket_count, first):
    """``31 * h + x`` per row (just ``x`` if ``first``), then the bucket ``(h & 0x7fffffff) %
    bucket_count`` if ``bucket_count > 0``.

    The vectorised twin of ``hashing.bucket_number``, fused with the last column's combine step so
    a 10M-row column is read once.
    """
    out = np.empty(x.shape[0], dtype=np.int32)
    n = np.int64(bucket_count)
    # Integer division is most of this loop's cost; a multiply by 1/n is exact to within 2**-21
    # for dividends < 2**31, so its floor is off by at most one, which the fix-up corrects.
    inv = 1.0 / n if n > 0 else 0.0
    for i in range(x.shape[0]):
        r = _u32(x[i]) if first else (_u32(h[i]) * _31 + _u32(x[i])) & _M
        if n > 0:
            v = np.int64(r & _SIGN)
            rem = v - np.int64(v * inv) * n
            if rem >= n:
                rem -= n
            elif rem < 0:
                rem += n
            r = _U(rem)
        out[i] = _i32(r)
    return out


# -- Spark's Murmur3Hash (bucketBy), each row seeded by the previous column's hash -------------------
@njit(cache=True)
def spark_murmur3_long(values, seeds, is_long):
    """Spark's ``hashLong`` (``is_long``) or ``hashInt`` of each value, seeded per row.

    ``values``: int64 (for hashInt the low 32 bits are the int); ``seeds`` and the result: uint32
    values held in int64.
    """
    out = np.empty(values.shape[0], dtype=np.int64)
    for i in range(values.shape[0]):
        u = _U(np.int64(values[i]))
        h = _mix_h(_U(seeds[i]) & _M, u & _M)
        if is_long:
            h = _mix_h(h, u >> _S32)
        out[i] = np.int64(_fmix(h, _U(8) if is_long else _U(4)))
    return out


@njit(cache=True)
def spark_murmur3_bytes(offsets, data, seeds):
    """Spark's ``hashUnsafeBytes`` of each byte string: 4-byte little-endian blocks, then every tail
    byte as a block of its own (sign-extended), seeded per row; uint32 results held in int64."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        start = np.int64(offsets[i])
        length = np.int64(offsets[i + 1]) - start
        h = _U(seeds[i]) & _M
        j = start + (length & ~np.int64(3))
        h = _mix_blocks(h, data, start, j)
        while j < start + length:
            h = _mix_h(h, _u32(np.int8(data[j])))
            j += 1
        out[i] = np.int64(_fmix(h, _u32(length)))
    return out
