"""Hive's Murmur3 (``org.apache.hive.common.util.Murmur3.hash32``), one byte string at a time.

Hive's Murmur3 is Murmur3_x86_32 with seed 104729, except that the 1-3 tail bytes are read as
*signed* Java bytes, so a tail byte >= 0x80 sign-extends into the high bits of the tail word.
Without such a byte it equals the standard function, which ``mmh3`` computes in C; with one, a
pure-Python version of Hive's exact arithmetic runs instead. The vectorised twin lives in
:mod:`bucketkit._kernels`.
"""

from __future__ import annotations

import mmh3

__all__ = ["SEED", "hive_murmur3_32"]

SEED = 104729

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _signed(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def _hive_murmur3_python(data: bytes) -> int:
    h = SEED
    n = len(data)
    nblocks = n >> 2
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * _C1) & _MASK
        k = _rotl(k, 15)
        k = (k * _C2) & _MASK
        h ^= k
        h = (_rotl(h, 13) * 5 + 0xE6546B64) & _MASK
    tail = data[4 * nblocks:]
    if tail:
        k1 = 0
        # Hive's bug, kept on purpose: Java bytes are signed, so `data[i] << s` sign-extends.
        for shift, b in zip((0, 8, 16), tail):
            k1 ^= ((b - 256 if b >= 0x80 else b) << shift) & _MASK
        k1 = (k1 * _C1) & _MASK
        k1 = _rotl(k1, 15)
        k1 = (k1 * _C2) & _MASK
        h ^= k1
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return _signed(h)


def hive_murmur3_32(data: bytes) -> int:
    """Hive's ``Murmur3.hash32(data, data.length, 104729)`` as a signed 32-bit int.

    Args:
        data: the bytes to hash.
    """
    tail = len(data) & 3
    if tail == 0 or max(data[-tail:]) < 0x80:
        return mmh3.hash(data, SEED, signed=True)
    return _hive_murmur3_python(data)
