"""Hive bucket ids as plain Spark SQL expressions, for the key types Spark's own functions can hash.

For integer-like keys (boolean, tinyint, smallint, int, bigint, date) Hive's v1 and v2 hashes can
be written with Spark's built-in functions, so the bucket id is computed inside Spark's generated
JVM code: no Python worker, no Arrow conversion. :func:`bucketkit.spark.hashcol.bucket_id_column`
uses this when every bucket column is covered and falls back to the Arrow UDF otherwise.

How v2 (Murmur3) is expressed: Spark's ``hash(a, b)`` is Murmur3_x86_32 where the hash of ``a``
(seed 42) becomes the seed for ``b``, and Spark hashes an int or bigint as the standard Murmur3 of
its 4 or 8 little-endian bytes. Murmur3 on one 4-byte block is a bijection, so there is an int
whose Spark hash is exactly Hive's seed 104729 (:data:`HIVE_SEED_PREIMAGE`, derived below);
``hash(HIVE_SEED_PREIMAGE, x)`` then hashes ``x`` with Hive's seed. Hive hashes the *big-endian*
bytes, so the value's bytes are reversed first. smallint under v2 hashes a 2-byte tail, which
Spark has no function for, so it goes to the UDF.

All combining arithmetic runs on bigint with explicit 32-bit masks: under ANSI mode (Spark 4's
default) int overflow is an error, while Hive relies on Java's wrap-around.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bucketkit.hashing.murmur3 import C1, C2, MASK32, SEED, rotl32
from bucketkit.hivetypes import parse_hive_type
from bucketkit.spark.types import column

__all__ = ["native_bucket_id_column", "NATIVE_TYPES", "HIVE_SEED_PREIMAGE", "spark_hash_seed_preimage"]

_SPARK_SEED = 42  # the seed of Spark's hash()

# Hive type -> the Spark SQL type its values are cast to before hashing, per version.
NATIVE_TYPES = {
    1: {"boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "int", "bigint": "bigint",
        "date": "date"},
    2: {"boolean": "boolean", "tinyint": "tinyint", "int": "int", "bigint": "bigint", "date": "date"},
}


def _unxorshift(h: int, shift: int) -> int:
    x = h
    for _ in range(32 // shift + 1):
        x = h ^ (x >> shift)
    return x & MASK32


def spark_hash_seed_preimage(target: int, seed: int = _SPARK_SEED) -> int:
    """The int ``k`` whose Murmur3_x86_32 (4 little-endian bytes, ``seed``) equals ``target``.

    Runs Murmur3's steps backwards: the final mix, the block mix into the state, then the key
    mix. Every step is a bijection on 32-bit words (odd multipliers, rotations, xor-shifts).
    """
    h = _unxorshift(target & MASK32, 16)
    h = (h * pow(0xC2B2AE35, -1, 1 << 32)) & MASK32
    h = _unxorshift(h, 13)
    h = (h * pow(0x85EBCA6B, -1, 1 << 32)) & MASK32
    h = _unxorshift(h, 16) ^ 4  # the length (4 bytes) is xored in before the final mix
    h = rotl32(((h - 0xE6546B64) * pow(5, -1, 1 << 32)) & MASK32, 32 - 13)  # rotate right by 13
    k = (rotl32((h ^ seed) * pow(C2, -1, 1 << 32) & MASK32, 32 - 15) * pow(C1, -1, 1 << 32)) & MASK32
    return k - (1 << 32) if k >= 1 << 31 else k


HIVE_SEED_PREIMAGE = spark_hash_seed_preimage(SEED)


def _reverse_bytes(F: Any, c: Any, width: int) -> Any:
    """``c`` (an int or bigint Column) with its ``width`` bytes in reverse order, same type.

    Swaps neighbouring bytes, then 2-byte pairs, then (bigint) 4-byte halves: 5 operations a step.
    """
    kind = "int" if width == 4 else "bigint"
    masks = {8: 0x00FF00FF00FF00FF, 16: 0x0000FFFF0000FFFF, 32: 0x00000000FFFFFFFF}
    for shift in (8, 16, 32)[: width.bit_length() - 1]:
        mask = F.lit(masks[shift] & ((1 << 8 * width) - 1)).cast(kind)
        c = F.shiftleft(c.bitwiseAND(mask), shift).bitwiseOR(F.shiftrightunsigned(c, shift).bitwiseAND(mask))
    return c


def _hive_murmur(F: Any, value: Any, width: int) -> Any:
    """Hive's Murmur3 of ``value``'s big-endian bytes (``width`` 4 or 8), as an int Column; NULL stays NULL.

    (Spark's ``hash`` skips a NULL argument, which would leave the seed as the hash.)
    """
    return F.when(value.isNotNull(), F.hash(F.lit(HIVE_SEED_PREIMAGE), _reverse_bytes(F, value, width)))


def _column_hash(F: Any, c: Any, hive_type: str, version: int) -> Any:
    """The Hive hash of one column as a bigint in ``[0, 2**32)`` (the 32-bit pattern); NULL -> 0."""
    v = c.cast(NATIVE_TYPES[version][hive_type])
    if hive_type == "boolean":
        h = F.when(v, F.lit(1)).otherwise(F.lit(0))
    elif hive_type in ("tinyint", "smallint") or (hive_type == "int" and version == 1):
        h = v
    elif hive_type == "date":
        days = F.unix_date(v)
        h = days if version == 1 else _hive_murmur(F, days, 4)
    elif hive_type == "int":
        h = _hive_murmur(F, v, 4)
    elif version == 1:  # bigint: (int)(v ^ v >>> 32)
        h = v.bitwiseXOR(F.shiftrightunsigned(v, 32))
    else:
        h = _hive_murmur(F, v, 8)
    return F.coalesce(h.cast("bigint").bitwiseAND(F.lit(MASK32)), F.lit(0).cast("bigint"))


def native_bucket_id_column(columns: Sequence[Any], hive_types: Sequence[str], version: int,
                            bucket_count: int) -> Any | None:
    """A Spark Column computing Hive's bucket id in the JVM, or None if a type is not covered.

    Args:
        columns: the bucket columns (names or Columns), in bucketing order.
        hive_types: their Hive types (``int``, ``bigint``, ...), as the table declares them.
        version: Hive bucketing version, 1 or 2.
        bucket_count: number of buckets.
    """
    from pyspark.sql import functions as F

    types = [str(parse_hive_type(t)) for t in hive_types]
    if version not in NATIVE_TYPES or not all(t in NATIVE_TYPES[version] for t in types):
        return None
    h = F.lit(0).cast("bigint")
    for c, t in zip(columns, types):  # h = 31 * h + hash(col), in 32-bit arithmetic
        col = column(c) if isinstance(c, str) else c
        h = (h * F.lit(31) + _column_hash(F, col, t, version)).bitwiseAND(F.lit(MASK32))
    return (h.bitwiseAND(F.lit(0x7FFFFFFF)) % F.lit(bucket_count)).cast("int")
