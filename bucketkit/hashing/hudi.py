"""Apache Hudi's bucket index, bit-exact: a hash family of its own, next to Hive's and Spark's.

A Hudi table with ``hoodie.index.type=BUCKET`` (the SIMPLE bucket engine) puts each record in bucket
``(hashKeys.hashCode() & Integer.MAX_VALUE) % numBuckets`` (Hudi's ``BucketIdentifier.getBucketId``),
where ``hashKeys`` is the ``List<String>`` of the record's hash-field values as its record key spells
them (``hoodie.bucket.index.hash.field``, by default the record key fields): Java's ``List.hashCode``
(``31 * h + e.hashCode()`` from 1, ``String.hashCode`` over UTF-16 code units, 32-bit wrap) of
strings, not of typed values. A value is spelled as Hudi's key generators spell it (``String.valueOf``
of the Avro value): an integer as its decimal digits (``5``, ``-7``: ``int`` and ``bigint`` alike),
a boolean as ``true``/``false``, a string as itself. Hudi's releases differ on nulls, empty values and
strings holding ``,`` or ``:`` (how a complex key ``f1:v1,f2:v2`` is split back into values changed in
0.13 and 1.0), so such values are never hashed: a filter pinning one reads every bucket. Other types (floating point, decimals, dates,
timestamps) are spelled in ways that depend on writer settings, so they are refused: a table bucketed
on them is read unbucketed, never guessed. Each bucket is one file group whose id starts with the
bucket number as 8 digits (``00000005-<uuid>-0``).

The scalar path (:func:`hudi_hash`, pruning literals) and the vectorised one (:func:`hudi_bucket_ids`,
validating) are held equal to Java's own ``List.hashCode`` through the JVM in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, parse_hive_type

__all__ = ["NULL_KEY", "EMPTY_KEY", "check_hudi_bucketable", "key_string", "java_string_hash", "java_list_hash",
           "hudi_hash", "hudi_bucket", "hudi_bucket_ids", "hudi_hash_class", "bucket_of_file_id"]

NULL_KEY, EMPTY_KEY = "__null__", "__empty__"
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_STRINGS = ("string", "varchar")
_MASK = 0xFFFFFFFF


def check_hudi_bucketable(column: str, hive_type: str | HiveType) -> HiveType:
    """The parsed type, if Hudi's bucket index spells its values one way only (integers, booleans, strings)."""
    t = parse_hive_type(hive_type) if isinstance(hive_type, str) else hive_type
    if t.name not in _INTEGRAL + _STRINGS + ("boolean",):
        raise UnsupportedTypeError(
            f"bucket column {column} of type {t}: Hudi's bucket index hashes a value as its record key spells it, "
            f"and bucketkit knows that spelling only for tinyint/smallint/int/bigint, boolean, string and varchar")
    return t


def hudi_hash_class(hive_type: str) -> str:
    """Types whose equal values Hudi spells alike: every integer type, booleans, strings."""
    name = parse_hive_type(hive_type).name
    return "integral" if name in _INTEGRAL else "string" if name in _STRINGS else name


def key_string(value: Any, hive_type: str | HiveType) -> str:
    """One value as Hudi's record key spells it and its bucket index hashes it (``5``, ``true``, ``abc``).

    Raises:
        InvalidArgumentError: a value Hudi's releases hash differently: a null or empty value (its
            ``__null__``/``__empty__`` placeholder before Hudi 0.13, a null element since), or a string
            with ``,`` or ``:`` (the separators of a complex key, split apart by some releases).
    """
    if value is None or value == "":
        raise InvalidArgumentError(f"{value!r}: Hudi's releases hash a null or empty key value differently "
                                   f"({NULL_KEY!r}/{EMPTY_KEY!r} placeholders, or a null element)")
    name = (parse_hive_type(hive_type) if isinstance(hive_type, str) else hive_type).name
    if name == "boolean":
        return "true" if value else "false"
    if name in _INTEGRAL:
        return str(int(value))
    text = str(value)
    if "," in text or ":" in text:
        raise InvalidArgumentError(f"{text!r}: Hudi's releases split a key value with ',' or ':' differently")
    return text


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (signed 32-bit): ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units."""
    units = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] | units[i + 1] << 8)) & _MASK
    return h - (1 << 32) if h >= 1 << 31 else h


def java_list_hash(strings: Sequence[str]) -> int:
    """Java's ``List.hashCode`` of strings (signed 32-bit): ``31 * h + e.hashCode()`` from 1."""
    h = 1
    for s in strings:
        h = (31 * h + java_string_hash(s)) & _MASK
    return h - (1 << 32) if h >= 1 << 31 else h


def hudi_hash(values: Any, hive_types: Sequence[str]) -> int:
    """The hash of one record's hash-field values (Python values, one per column, typed by ``hive_types``)."""
    values = values if isinstance(values, (list, tuple)) else [values]
    return java_list_hash([key_string(v, t) for v, t in zip(values, hive_types)])


def hudi_bucket(hash_value: int, count: int) -> int:
    """``(hash & Integer.MAX_VALUE) % numBuckets``, as ``BucketIdentifier.getBucketId``."""
    return (hash_value & 0x7FFFFFFF) % count


def hudi_bucket_ids(arrays: Sequence[Any], hive_types: Sequence[str], count: int) -> np.ndarray:
    """The bucket of every row of Arrow columns (one per hash field), as ``int32``."""
    columns = [a.to_pylist() for a in arrays]
    rows = len(columns[0]) if columns else 0
    out = np.empty(rows, dtype=np.int32)
    cache: dict[tuple, int] = {}
    for i in range(rows):
        key = tuple(c[i] for c in columns)
        b = cache.get(key)
        if b is None:
            b = cache[key] = hudi_bucket(hudi_hash(list(key), hive_types), count)
        out[i] = b
    return out


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket a bucket-index file group holds, from its id (``00000005-<uuid>-0`` -> 5), or None."""
    head, sep, _ = file_id.partition("-")
    return int(head) if sep and len(head) == 8 and head.isdigit() else None
