"""Hive's Murmur3 (``org.apache.hive.common.util.Murmur3.hash32``), one byte string at a time.

Hive's Murmur3 is Murmur3_x86_32 with seed 104729, except that the 1-3 tail bytes are read as
*signed* Java bytes, so a tail byte >= 0x80 sign-extends into the high bits of the tail word.
Without such a byte it equals the standard function, which ``mmh3`` computes in C; with one, a
pure-Python version of Hive's exact arithmetic runs instead. The vectorised twin lives in
:mod:`bucketkit.hashing.kernels`.
"""

from __future__ import annotations

import mmh3

__all__ = ["SEED", "C1", "C2", "MASK32", "rotl32", "scramble", "mix", "fmix", "signed32", "hive_murmur3_32"]

SEED = 104729
C1, C2 = 0xCC9E2D51, 0x1B873593  # Murmur3_x86_32's block constants
MASK32 = 0xFFFFFFFF


def rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & MASK32


def scramble(k: int) -> int:
    """A 32-bit block word scrambled before it is mixed into the state."""
    return (rotl32((k * C1) & MASK32, 15) * C2) & MASK32


def mix(h: int, k: int) -> int:
    """The state after one 32-bit block ``k`` (Hive's and Spark's body step)."""
    return (rotl32(h ^ scramble(k), 13) * 5 + 0xE6546B64) & MASK32


def fmix(h: int, length: int) -> int:
    """Murmur3's finalisation of state ``h`` after ``length`` bytes (unsigned result)."""
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    return h ^ (h >> 16)


def signed32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def _hive_murmur3_python(data: bytes) -> int:
    h = SEED
    n = len(data)
    nblocks = n >> 2
    for i in range(nblocks):
        h = mix(h, int.from_bytes(data[4 * i:4 * i + 4], "little"))
    tail = data[4 * nblocks:]
    if tail:
        k1 = 0
        # Hive's bug, kept on purpose: Java bytes are signed, so `data[i] << s` sign-extends.
        for shift, b in zip((0, 8, 16), tail):
            k1 ^= ((b - 256 if b >= 0x80 else b) << shift) & MASK32
        h ^= scramble(k1)
    return signed32(fmix(h, n))


def hive_murmur3_32(data: bytes) -> int:
    """Hive's ``Murmur3.hash32(data, data.length, 104729)`` as a signed 32-bit int.

    Args:
        data: the bytes to hash.
    """
    tail = len(data) & 3
    if tail == 0 or max(data[-tail:]) < 0x80:
        return mmh3.hash(data, SEED, signed=True)
    return _hive_murmur3_python(data)
