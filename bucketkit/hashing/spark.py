"""Spark's own bucket hash (``bucketBy``), bit-exact: a hash family of its own, next to Hive's.

Spark places a row of a ``bucketBy(n, cols)`` table in bucket ``pmod(murmur3(cols), n)``, where
``murmur3`` is Spark's ``Murmur3Hash`` expression (``hash()`` in SQL) with seed 42: the columns are
hashed left to right, each with the previous hash as its seed, and a NULL leaves the seed as it is.
Per value (Spark's ``InterpretedHashFunction.hash``):

=====================================  ==============================================================
type                                   hashed as
=====================================  ==============================================================
boolean, tinyint, smallint, int, date  ``hashInt`` of the value (true = 1, a date = days since 1970)
bigint, timestamp                      ``hashLong`` (a timestamp as microseconds since the epoch, UTC)
float / double                         ``hashInt(floatToIntBits)`` / ``hashLong(doubleToLongBits)``;
                                       -0.0 as 0.0, NaN canonical
decimal(p, s)                          p <= 18: ``hashLong`` of the unscaled value; else the bytes of
                                       ``BigInteger.toByteArray()`` of the unscaled value
string, varchar, char, binary          Spark's ``hashUnsafeBytes``: 4-byte little-endian blocks, then
                                       *each* tail byte as a whole signed block (not standard Murmur3)
array<T> / struct<...>                 the elements / fields in order, each seeded with the last hash
map<K,V>                               refused: Spark does not hash maps (so cannot bucket on them)
=====================================  ==============================================================

``hashInt`` is Murmur3_x86_32 of the int's 4 little-endian bytes and ``hashLong`` of the long's 8, so
both are standard Murmur3; only byte strings with a 1-3 byte tail differ. Unlike Hive there is no
``& 0x7fffffff``: the bucket is the positive modulus. Scalar path (:func:`spark_hash`, for pruning
literals) and vectorised path (:func:`spark_hash_arrays`, for validating) are each proven against
Spark's ``hash()`` and its ``bucketBy`` writer in the tests.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from bucketkit.hashing.murmur3 import MASK32, fmix, mix, signed32
from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, parse_hive_type

__all__ = ["SPARK_SEED", "check_spark_bucketable", "spark_hash", "spark_hash_arrays", "spark_bucket_ids",
           "spark_hash_class"]

SPARK_SEED = 42
_INT_LIKE = ("boolean", "tinyint", "smallint", "int", "date")
_LONG_LIKE = ("bigint", "timestamp")
_BYTES_LIKE = ("string", "varchar", "char", "binary")
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64, "date": 32, "timestamp": 64}
_EPOCH = datetime.date(1970, 1, 1)
_EPOCH_TS = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_LONG_DIGITS = 18  # Spark's Decimal.MAX_LONG_DIGITS


def check_spark_bucketable(column: str, hive_type: str | HiveType) -> HiveType:
    """The parsed type, if Spark can bucket on (hash) a column of it.

    Raises:
        UnsupportedTypeError: a map (Spark refuses to hash maps) or a type Spark has no hash for.
    """
    parsed = parse_hive_type(hive_type)

    def check(t: HiveType) -> None:
        if t.name == "map":
            raise UnsupportedTypeError(f"column {column!r} has type {parsed}: Spark does not hash maps, so a "
                                       f"bucketBy table cannot be bucketed on it")
        if t.name in ("array", "struct"):
            for child in t.children:
                check(child)
        elif t.name not in _INT_LIKE + _LONG_LIKE + _BYTES_LIKE + ("float", "double", "decimal"):
            raise UnsupportedTypeError(f"column {column!r} has type {parsed}: bucketkit has no Spark hash "
                                       f"for {t.name}")

    check(parsed)
    return parsed


def spark_hash_class(hive_type: str | HiveType) -> str:
    """A key equal for two types exactly when equal values of them always hash alike in Spark."""
    t = parse_hive_type(hive_type)
    if t.name in ("tinyint", "smallint", "int"):
        return "int"  # all three are hashInt of the value
    if t.name == "varchar":
        return "string"  # both hash their UTF-8 bytes
    if t.name in ("array", "struct"):
        return f"{t.name}<{','.join(spark_hash_class(c) for c in t.children)}>"
    if t.name == "decimal":
        return "decimal(long)" if t.params[0] <= _LONG_DIGITS else str(t)  # scale changes the value
    return t.name


# -- Murmur3_x86_32 as Spark's unsafe.hash.Murmur3_x86_32 computes it ---------------------------------
def _hash_int(value: int, seed: int) -> int:
    return fmix(mix(seed & MASK32, value & MASK32), 4)


def _hash_long(value: int, seed: int) -> int:
    u = value & 0xFFFFFFFFFFFFFFFF
    return fmix(mix(mix(seed & MASK32, u & MASK32), u >> 32), 8)


def _hash_bytes(data: bytes, seed: int) -> int:
    h = seed & MASK32
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h = mix(h, int.from_bytes(data[i:i + 4], "little"))
    for b in data[aligned:]:  # Spark's tail: each byte alone, as a sign-extended int
        h = mix(h, (b - 256 if b >= 0x80 else b) & MASK32)
    return fmix(h, len(data))


# -- one value ----------------------------------------------------------------------------------------
def _expect(value: Any, t: HiveType, expected: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"cannot hash {value!r} as Spark {t}: expected {expected}")


def _integer(value: Any, t: HiveType) -> int:
    if t.name == "boolean":
        if not isinstance(value, (bool, np.bool_)):
            raise _expect(value, t, "a bool")
        return int(bool(value))
    if t.name == "date" and isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return (value - _EPOCH).days
    if t.name == "timestamp" and isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise _expect(value, t, "a timezone-aware datetime or microseconds since the epoch")
        delta = value - _EPOCH_TS
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _expect(value, t, "an int" + (" or a datetime.date" if t.name == "date" else ""))
    bits = _INT_BITS[t.name]
    if not -(1 << (bits - 1)) <= int(value) < (1 << (bits - 1)):
        raise _expect(value, t, f"a value in [{-(1 << (bits - 1))}, {(1 << (bits - 1)) - 1}]")
    return int(value)


def _real_bits(value: Any, t: HiveType) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _expect(value, t, "a float")
    f = float(value)
    if f == 0.0:
        return 0  # Spark hashes -0.0 as 0.0
    if t.name == "float":
        if math.isnan(f):
            return 0x7FC00000
        try:
            return struct.unpack("<i", struct.pack("<f", f))[0]
        except OverflowError:
            raise _expect(value, t, "a value within float's range") from None
    return 0x7FF8000000000000 if math.isnan(f) else struct.unpack("<q", struct.pack("<d", f))[0]


def _unscaled(value: Any, t: HiveType) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal, np.integer)):
        raise _expect(value, t, "a decimal.Decimal")
    precision, scale = t.params
    d = decimal.Decimal(int(value)) if not isinstance(value, decimal.Decimal) else value
    scaled = d.scaleb(scale, context=decimal.Context(prec=precision + scale + 40))
    if not scaled.is_finite() or scaled != scaled.to_integral_value() or abs(scaled) >= 10 ** precision:
        raise _expect(value, t, f"a value with at most {precision} digits, {scale} after the point")
    return int(scaled)


def _java_bytes(n: int) -> bytes:
    """``BigInteger.valueOf(n).toByteArray()``: minimal big-endian two's complement."""
    return n.to_bytes((n if n >= 0 else ~n).bit_length() // 8 + 1, "big", signed=True)


def _hash_value(value: Any, t: HiveType, seed: int) -> int:
    """Spark's hash of one value with ``seed`` (unsigned 32-bit), as an unsigned 32-bit int."""
    if value is None:
        return seed & MASK32
    name = t.name
    if name in _INT_LIKE:
        return _hash_int(_integer(value, t), seed)
    if name in _LONG_LIKE:
        return _hash_long(_integer(value, t), seed)
    if name == "float":
        return _hash_int(_real_bits(value, t), seed)
    if name == "double":
        return _hash_long(_real_bits(value, t), seed)
    if name == "decimal":
        unscaled = _unscaled(value, t)
        if t.params[0] <= _LONG_DIGITS:
            return _hash_long(unscaled, seed)
        return _hash_bytes(_java_bytes(unscaled), seed)
    if name in _BYTES_LIKE:
        if isinstance(value, str):
            return _hash_bytes(value.encode("utf-8"), seed)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _hash_bytes(bytes(value), seed)
        raise _expect(value, t, "a str or bytes")
    if name == "array":
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
            raise _expect(value, t, "a list")
        for element in value:
            seed = _hash_value(element, t.children[0], seed)
        return seed & MASK32
    if name == "struct":
        fields = list(value.values()) if isinstance(value, Mapping) else value
        if not isinstance(fields, (Sequence, tuple)) or len(fields) != len(t.children):
            raise _expect(value, t, f"a dict or tuple of {len(t.children)} fields")
        for field_value, child in zip(fields, t.children):
            seed = _hash_value(field_value, child, seed)
        return seed & MASK32
    raise UnsupportedTypeError(f"cannot hash Spark type {t}")  # check_spark_bucketable stops this earlier


def spark_hash(values: Sequence[Any], types: Sequence[str | HiveType], seed: int = SPARK_SEED) -> int:
    """Spark's ``hash(col1, col2, ...)`` of one row, a signed 32-bit int.

    Args:
        values: one Python value per column (``None`` = NULL).
        types: the columns' types as Hive type strings (``"bigint"``, ``"decimal(20,2)"``,
            ``"struct<a:int,b:string>"``).

    Example:
        >>> spark_hash([0], ["int"])
        933211791
    """
    parsed = [check_spark_bucketable(f"#{i}", t) for i, t in enumerate(types)]
    if len(values) != len(parsed):
        raise InvalidArgumentError(f"got {len(values)} values {list(values)!r} for {len(parsed)} column types")
    h = seed & MASK32
    for value, t in zip(values, parsed):
        h = _hash_value(value, t, h)
    return signed32(h)


# -- vectorised ---------------------------------------------------------------------------------------
def _column_hash(column: Any, t: HiveType, seeds: np.ndarray) -> np.ndarray:
    """One column's Spark hash per row, each row seeded with ``seeds`` (uint32 as int64)."""
    import pyarrow as pa

    from bucketkit.hashing import npkernels

    k = npkernels.chosen()
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else None
    name = t.name
    if name in _INT_LIKE and not pa.types.is_date64(arr.type):
        x = arr.cast(pa.int32()).fill_null(0).to_numpy().astype(np.int64)
        h = k.spark_murmur3_long(x, seeds, False)
    elif name in ("bigint", "timestamp") and (pa.types.is_integer(arr.type) or pa.types.is_timestamp(arr.type)):
        x = (arr.cast(pa.timestamp("us")) if pa.types.is_timestamp(arr.type) else arr).cast(pa.int64())
        h = k.spark_murmur3_long(x.fill_null(0).to_numpy(), seeds, True)
    elif name in ("float", "double"):
        x = arr.cast(pa.float32() if name == "float" else pa.float64()).fill_null(0).to_numpy()
        bits = np.where(x == 0, 0, x).astype(x.dtype).view(np.int32 if name == "float" else np.int64).astype(np.int64)
        bits[np.isnan(x)] = 0x7FC00000 if name == "float" else 0x7FF8000000000000
        h = k.spark_murmur3_long(bits, seeds, name == "double")
    elif name in _BYTES_LIKE and (pa.types.is_string(arr.type) or pa.types.is_binary(arr.type)):
        data = arr.buffers()[2]
        offsets = np.frombuffer(arr.buffers()[1], np.int32, len(arr) + 1, arr.offset * 4)
        h = k.spark_murmur3_bytes(offsets, np.frombuffer(data, np.uint8) if data else np.zeros(0, np.uint8), seeds)
    else:  # decimals, nested and unusual Arrow types: the scalar path, row by row
        h = np.array([_hash_value(v, t, int(s)) for v, s in zip(arr.to_pylist(), seeds)], dtype=np.int64)
        valid = None  # the scalar path already leaves NULLs' seeds as they are
    return h if valid is None else np.where(valid, h, seeds)


def spark_hash_arrays(arrays: Sequence[Any], types: Sequence[str | HiveType]) -> np.ndarray:
    """Spark's ``hash(cols...)`` of every row of Arrow columns, ``np.ndarray[int32]``."""
    parsed = [check_spark_bucketable(f"#{i}", t) for i, t in enumerate(types)]
    columns = list(arrays.columns) if hasattr(arrays, "columns") else list(arrays)
    if len(columns) != len(parsed):
        raise InvalidArgumentError(f"got {len(columns)} arrays for {len(parsed)} bucket column types")
    h = np.full(len(columns[0]) if columns else 0, SPARK_SEED, dtype=np.int64)
    for column, t in zip(columns, parsed):
        h = _column_hash(column, t, h)
    return h.astype(np.uint32).view(np.int32)


def spark_bucket_ids(arrays: Sequence[Any], types: Sequence[str | HiveType], bucket_count: int) -> np.ndarray:
    """``pmod(hash(cols...), bucket_count)`` of every row: the bucket Spark's ``bucketBy`` writes it to."""
    return np.mod(spark_hash_arrays(arrays, types).astype(np.int64), bucket_count).astype(np.int32)
