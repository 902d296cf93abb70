"""Hive bucketing hash functions, versions 1 and 2, bit-exact with Hive and Trino.

A row's bucket is ``(hash & 0x7fffffff) % bucket_count`` where ``hash`` combines the row's bucket
columns left to right as ``h = 31 * h + hash(column)`` in signed 32-bit arithmetic, NULL hashing
to 0. Per-type rules (Hive's ``ObjectInspectorUtils.hashCode`` for v1, ``hashCodeMurmur`` for v2):

========================  =====================================  ===========================================
Hive type                 v1                                     v2
========================  =====================================  ===========================================
boolean                   1 / 0                                  1 / 0
tinyint                   value                                  value
smallint, int, date       value (date: days since 1970-01-01)    Murmur3 of the 2/4 big-endian bytes
bigint                    ``(int) (v >>> 32 ^ v)``               Murmur3 of the 8 big-endian bytes
float                     ``floatToIntBits(f)``                  Murmur3 of ``(float) floatToIntBits(f)``
double                    fold of ``doubleToLongBits(d)``        Murmur3 of ``(double) doubleToLongBits(d)``
string                    ``r = 31 * r + b`` from 0, signed      Murmur3 of the UTF-8 bytes
                          UTF-8 bytes
varchar(n)                the same, but starting from 1          Murmur3 of the UTF-8 bytes
array<T>                  ``r = 31 * r + hash(e)``               the same, elements with v2
map<K,V>                  sum of ``hash(k) ^ hash(v)``           sum of ``v2(k) ^ v1(v)`` (values with v1!)
========================  =====================================  ===========================================

Murmur3 is Hive's: seed 104729 with sign-extended tail bytes (:mod:`bucketkit.hashing.murmur3`). The
float/double v2 quirk converts the IEEE bits *numerically* back to a float before hashing its
bytes. timestamp, decimal, char, binary and struct cannot be bucketed on (Trino reads such tables
as unbucketed), so they raise :class:`~bucketkit.errors.UnsupportedTypeError`.

Two paths share these rules: a scalar one over Python values (:func:`hive_hash`, for pruning
literals) and a vectorised one over Arrow arrays (:func:`hash_arrays`, :func:`bucket_ids`, for
writing and validating), each tested against Hive's own classes and against each other.
"""

from __future__ import annotations

import datetime
import functools
import math
import numbers
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bucketkit.hashing.murmur3 import hive_murmur3_32
from bucketkit.errors import InvalidArgumentError, UnsupportedTypeError
from bucketkit.hivetypes import HiveType, parse_hive_type

__all__ = [
    "BUCKETABLE_PRIMITIVES",
    "HASH_FAMILIES",
    "HashFamily",
    "HiveBucketing",
    "SparkBucketBy",
    "hash_family",
    "hashing_name",
    "BucketFunction",
    "bucket_ids",
    "bucket_number",
    "bucket_numbers",
    "check_bucketable",
    "check_version",
    "hash_arrays",
    "hive_hash",
]

BUCKETABLE_PRIMITIVES = frozenset({
    "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string", "varchar", "date",
})
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_EPOCH = datetime.date(1970, 1, 1)


def _i32(x: int) -> int:
    """Wrap a Python int to Java's signed 32-bit ``int``."""
    return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000


# --------------------------------------------------------------------------- types and versions

def check_version(version: Any) -> int:
    """Validate a bucketing version (``1``, ``2`` or their strings, as in ``bucketing_version``).

    Raises:
        InvalidArgumentError: anything else.
    """
    if isinstance(version, str) and version.strip() in ("1", "2"):
        return int(version)
    if isinstance(version, (int, np.integer)) and not isinstance(version, bool) and version in (1, 2):
        return int(version)
    raise InvalidArgumentError(f"bucketing version must be 1 or 2, got {version!r}")


@functools.lru_cache(maxsize=1024)
def _bucketable(column: str, hive_type: str | HiveType) -> HiveType:
    parsed = parse_hive_type(hive_type)

    def check(t: HiveType) -> None:
        if t.name == "array":
            check(t.children[0])
        elif t.name == "map":
            check(t.children[0])
            check(t.children[1])
        elif t.name not in BUCKETABLE_PRIMITIVES:
            where = "" if t == parsed else f" (inside {parsed})"
            raise UnsupportedTypeError(
                f"column {column!r} has Hive type {parsed}: bucketkit (as Trino) cannot hash {t.name}{where} for Hive "
                f"bucketing (a table Hive bucketed on it is read unbucketed); "
                f"bucketable types are {', '.join(sorted(BUCKETABLE_PRIMITIVES))}, array<...> and map<...> "
                f"of them")

    check(parsed)
    return parsed


def check_bucketable(column: str, hive_type: str | HiveType) -> HiveType:
    """Check that Hive/Trino can bucket on a column of this type and return the parsed type.

    Args:
        column: the column's name, used in the error message.
        hive_type: a Hive type string such as ``"varchar(10)"`` or a parsed :class:`HiveType`.

    Raises:
        UnsupportedTypeError: the type (or a type nested in it) is timestamp, decimal, char, binary
            or struct.
        InvalidArgumentError: the string is not a Hive type.
    """
    return _bucketable(str(column), hive_type)


def _types_of(hive_types: Any) -> tuple[HiveType, ...]:
    if isinstance(hive_types, (str, HiveType)):
        hive_types = (hive_types,)
    return tuple(check_bucketable(f"#{i}", t) for i, t in enumerate(hive_types))


# --------------------------------------------------------------------------- scalar path

def _expect(value: Any, t: HiveType, expected: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"cannot hash {value!r} as Hive {t}: expected {expected}")


def _int_value(value: Any, t: HiveType) -> int:
    if t.name == "date":
        if isinstance(value, datetime.datetime):
            raise _expect(value, t, "a datetime.date (not a datetime) or days since 1970-01-01")
        if isinstance(value, datetime.date):
            return (value - _EPOCH).days
        bits = 32
    else:
        bits = _INT_BITS[t.name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _expect(value, t, "an int" if t.name != "date" else "a datetime.date")
    v = int(value)
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise _expect(value, t, f"a value in [{-(1 << (bits - 1))}, {(1 << (bits - 1)) - 1}]")
    return v


def _real_value(value: Any, t: HiveType) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _expect(value, t, "a float")
    return float(value)


def _float_to_int_bits(value: float, t: HiveType) -> int:
    """Java's ``Float.floatToIntBits((float) value)``: NaN canonical, signed."""
    if math.isnan(value):
        return 0x7FC00000
    try:
        return struct.unpack(">i", struct.pack(">f", value))[0]
    except OverflowError:
        raise _expect(value, t, "a value within float's range") from None


def _double_to_long_bits(value: float) -> int:
    """Java's ``Double.doubleToLongBits(value)``: NaN canonical, signed."""
    if math.isnan(value):
        return 0x7FF8000000000000
    return struct.unpack(">q", struct.pack(">d", value))[0]


def _utf8(value: Any, t: HiveType) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise _expect(value, t, "a str (or its UTF-8 bytes)")


def _hash_value(value: Any, t: HiveType, version: int) -> int:
    """One value's hash, Hive's ``hashCode`` (v1) or ``hashCodeMurmur`` (v2)."""
    if value is None:
        return 0
    name = t.name
    if name == "boolean":
        if not isinstance(value, (bool, np.bool_)):
            raise _expect(value, t, "a bool")
        return 1 if value else 0
    if name == "tinyint":
        return _int_value(value, t)
    if name in ("smallint", "int", "date"):
        v = _int_value(value, t)
        if version == 1:
            return v
        return hive_murmur3_32(v.to_bytes(2 if name == "smallint" else 4, "big", signed=True))
    if name == "bigint":
        v = _int_value(value, t)
        if version == 1:
            u = v & 0xFFFFFFFFFFFFFFFF
            return _i32((u >> 32) ^ u)
        return hive_murmur3_32(v.to_bytes(8, "big", signed=True))
    if name == "float":
        bits = _float_to_int_bits(_real_value(value, t), t)
        if version == 1:
            return bits
        # Hive quirk: the int bits are converted numerically to a float, then hashed as bytes.
        return hive_murmur3_32(struct.pack(">f", float(bits)))
    if name == "double":
        bits = _double_to_long_bits(_real_value(value, t))
        if version == 1:
            u = bits & 0xFFFFFFFFFFFFFFFF
            return _i32((u >> 32) ^ u)
        return hive_murmur3_32(struct.pack(">d", float(bits)))
    if name in ("string", "varchar"):
        data = _utf8(value, t)
        if version == 2:
            return hive_murmur3_32(data)
        r = 1 if name == "varchar" else 0  # varchar: Text.hashCode; string: Hive's own loop
        for b in data:
            r = (31 * r + (b - 256 if b >= 0x80 else b)) & 0xFFFFFFFF
        return _i32(r)
    if name == "array":
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
            raise _expect(value, t, "a list")
        r = 0
        for element in value:
            r = 31 * r + _hash_value(element, t.children[0], version)
        return _i32(r)
    if name == "map":
        if isinstance(value, Mapping):
            items = value.items()
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            items = value
        else:
            raise _expect(value, t, "a dict (or a list of key/value pairs)")
        r = 0
        for key, item in items:
            # Hive quirk (hashCodeMurmur): map values are hashed with v1 even in v2.
            r += _hash_value(key, t.children[0], version) ^ _hash_value(item, t.children[1], 1)
        return _i32(r)
    raise UnsupportedTypeError(f"cannot hash Hive type {t}")  # check_bucketable stops this earlier


def hive_hash(values: Any, hive_types: Any, version: int) -> int:
    """Hive's bucketing hash of one row (signed 32-bit), as Hive and Trino compute it.

    Args:
        values: the row's bucket-column values, one per type (``int``, ``float``, ``bool``,
            ``str``, ``datetime.date``, ``list`` for arrays, ``dict`` for maps, ``None`` for NULL).
            With a single type string, ``values`` is that one column's value.
        hive_types: Hive type strings (``"bigint"``, ``"varchar(15)"``, ``"map<string,int>"``),
            one per column, or a single type string.
        version: bucketing version, 1 or 2.

    Returns:
        The combined hash ``h = 31 * h + hash(column)`` as a signed 32-bit int.

    Raises:
        UnsupportedTypeError: a type cannot be bucketed on.
        InvalidArgumentError: a value does not fit its type, or the counts differ.

    Example:
        >>> hive_hash([300000], ["int"], 2)
        -678663480
        >>> hive_hash("", "varchar(3)", 1)
        1
    """
    single = isinstance(hive_types, (str, HiveType))
    types = _types_of(hive_types)
    version = check_version(version)
    row = (values,) if single else tuple(values)
    if len(row) != len(types):
        raise InvalidArgumentError(f"got {len(row)} values {row!r} for {len(types)} bucket column types "
                                   f"{[str(t) for t in types]}")
    h = 0
    for value, t in zip(row, types):
        h = 31 * h + _hash_value(value, t, version)
    return _i32(h)


def bucket_number(hash_code: int, bucket_count: int) -> int:
    """The bucket a hash falls into: ``(hash_code & 0x7fffffff) % bucket_count``.

    This is the one definition; :func:`bucket_numbers` is its vectorised twin (same expression on
    an int32 array).

    Raises:
        InvalidArgumentError: ``bucket_count`` is not a positive int.
    """
    if isinstance(bucket_count, bool) or not isinstance(bucket_count, (int, np.integer)) or bucket_count < 1:
        raise InvalidArgumentError(f"bucket_count must be a positive int, got {bucket_count!r}")
    return (int(hash_code) & 0x7FFFFFFF) % int(bucket_count)


def bucket_numbers(hashes: np.ndarray, bucket_count: int) -> np.ndarray:
    """Vectorised :func:`bucket_number`: ``(hashes & 0x7fffffff) % bucket_count`` as int32.

    Computed by ``combine_bucket`` (numba's, or its numpy twin where numba cannot load), the one array form of
    the expression (it is fused there with the last column's ``31 * h + x`` step of :func:`bucket_ids`).
    """
    from bucketkit.hashing.npkernels import chosen

    combine_bucket = chosen().combine_bucket
    bucket_number(0, bucket_count)  # validates the count
    hashes = np.ascontiguousarray(hashes, dtype=np.int32)
    return combine_bucket(hashes, hashes, int(bucket_count), True)


# --------------------------------------------------------------------------- vectorised path

def hash_arrays(arrays: Any, hive_types: Any, version: int) -> np.ndarray:
    """Hive's bucketing hash of every row of Arrow columns.

    Args:
        arrays: one ``pyarrow.Array`` / ``ChunkedArray`` per bucket column (all the same length),
            or a ``pyarrow.Table`` / ``RecordBatch`` whose columns are the bucket columns in order.
        hive_types: the columns' Hive types (they decide the hash, e.g. ``varchar`` vs ``string``).
        version: bucketing version, 1 or 2.

    Returns:
        ``np.ndarray[int32]``, one combined hash per row.

    Raises:
        UnsupportedTypeError: a type cannot be bucketed on, or an array's Arrow type cannot hold it.
        InvalidArgumentError: lengths or counts differ.
    """
    from bucketkit.hashing.vectorized import hash_columns

    return hash_columns(arrays, _types_of(hive_types), check_version(version))


def bucket_ids(arrays: Any, hive_types: Any, version: int, bucket_count: int) -> np.ndarray:
    """The bucket of every row of Arrow columns, ``np.ndarray[int32]``; see :func:`hash_arrays`.

    Equal to ``bucket_numbers(hash_arrays(...), bucket_count)``, computed in one pass.
    """
    bucket_number(0, bucket_count)  # validates the count
    from bucketkit.hashing.vectorized import hash_columns

    return hash_columns(arrays, _types_of(hive_types), check_version(version), int(bucket_count))


# --------------------------------------------------------------------------- the value object

def _hash_class(t: HiveType, version: int) -> str:
    """A key equal for two types exactly when equal values of them always hash the same."""
    name = t.name
    if name == "array":
        return f"array<{_hash_class(t.children[0], version)}>"
    if name == "map":
        # v2 hashes map values with v1 (see _hash_value).
        return f"map<{_hash_class(t.children[0], version)},{_hash_class(t.children[1], 1)}>"
    if version == 1 and name in ("tinyint", "smallint"):
        return "int"  # v1 hashes all three as the value itself
    if version == 2 and name == "varchar":
        return "string"  # v2 hashes both as Murmur3 of the UTF-8 bytes
    return name


class HashFamily:
    """One way of placing rows into buckets (as pyiceberg's ``Transform`` is one partition transform):
    how it checks the bucket columns' types, hashes a row and a column of rows, turns a hash into a
    bucket, and which types it hashes alike. :class:`BucketFunction` is a family applied to column
    types and a bucket count; adding a family (Hudi's bucket index, say) is a class here and an entry
    in :data:`HASH_FAMILIES`, nothing else.

    Attributes:
        name: the family as ``TableSpec.hash_family`` spells it (``"hive"``, ``"spark"``).
    """

    name: str = ""

    def describe(self) -> str:
        """The hash in words, e.g. ``"Hive bucketing v2"``."""
        raise NotImplementedError

    def short(self) -> str:
        """How a message names the hash next to a type: ``"v2"``, ``"Spark's hash"``."""
        raise NotImplementedError

    def check_types(self, types: Sequence[str]) -> tuple[Any, ...]:
        """The bucket columns' types, normalised; raises :class:`UnsupportedTypeError` for one it cannot hash."""
        raise NotImplementedError

    def hash(self, values: Any, types: Sequence[str]) -> int:
        raise NotImplementedError

    def bucket(self, hash_value: int, count: int) -> int:
        raise NotImplementedError

    def bucket_ids(self, arrays: Any, types: Sequence[str], count: int) -> np.ndarray:
        raise NotImplementedError

    def hash_class(self, hive_type: str) -> str:
        """Types of one class hash every value they share identically (``int``/``bigint`` in v1)."""
        raise NotImplementedError


@dataclass(frozen=True)
class HiveBucketing(HashFamily):
    """Hive's (and Trino's) bucketing, version 1 or 2: ``(hash & 0x7fffffff) % n``."""

    version: int = 2
    name: str = "hive"

    def describe(self) -> str:
        return f"Hive bucketing v{self.version}"

    def short(self) -> str:
        return f"v{self.version}"

    def check_types(self, types: Sequence[str]) -> tuple[Any, ...]:
        return _types_of(types)

    def hash(self, values: Any, types: Sequence[str]) -> int:
        return hive_hash(values, types, self.version)

    def bucket(self, hash_value: int, count: int) -> int:
        return bucket_number(hash_value, count)

    def bucket_ids(self, arrays: Any, types: Sequence[str], count: int) -> np.ndarray:
        return bucket_ids(arrays, types, self.version, count)

    def hash_class(self, hive_type: str) -> str:
        return _hash_class(parse_hive_type(hive_type), self.version)


@dataclass(frozen=True)
class SparkBucketBy(HashFamily):
    """Spark's own ``bucketBy``: ``pmod(murmur3(cols, seed 42), n)`` (:mod:`bucketkit.hashing.spark`)."""

    name: str = "spark"

    def describe(self) -> str:
        return "Spark's bucketBy hash (Murmur3, seed 42)"

    def short(self) -> str:
        return "Spark's hash"

    def check_types(self, types: Sequence[str]) -> tuple[Any, ...]:
        from bucketkit.hashing.spark import check_spark_bucketable

        return tuple(check_spark_bucketable(f"#{i}", t) for i, t in enumerate(types))

    def hash(self, values: Any, types: Sequence[str]) -> int:
        from bucketkit.hashing.spark import spark_hash

        return spark_hash(values, types)

    def bucket(self, hash_value: int, count: int) -> int:
        return hash_value % count  # Spark's pmod: no sign mask

    def bucket_ids(self, arrays: Any, types: Sequence[str], count: int) -> np.ndarray:
        from bucketkit.hashing.spark import spark_bucket_ids

        return spark_bucket_ids(arrays, types, count)

    def hash_class(self, hive_type: str) -> str:
        from bucketkit.hashing.spark import spark_hash_class

        return spark_hash_class(hive_type)


@dataclass(frozen=True)
class HudiBucketIndex(HashFamily):
    """Apache Hudi's bucket index: ``(List<String>.hashCode() & Integer.MAX_VALUE) % n`` of the hash
    fields as the record key spells them (:mod:`bucketkit.hashing.hudi`)."""

    name: str = "hudi"

    def describe(self) -> str:
        return "Hudi's bucket index (Java List<String>.hashCode of the record key fields)"

    def short(self) -> str:
        return "Hudi's hash"

    def check_types(self, types: Sequence[str]) -> tuple[Any, ...]:
        from bucketkit.hashing.hudi import check_hudi_bucketable

        return tuple(check_hudi_bucketable(f"#{i}", t) for i, t in enumerate(types))

    def hash(self, values: Any, types: Sequence[str]) -> int:
        from bucketkit.hashing.hudi import hudi_hash

        return hudi_hash(values, types)

    def bucket(self, hash_value: int, count: int) -> int:
        from bucketkit.hashing.hudi import hudi_bucket

        return hudi_bucket(hash_value, count)

    def bucket_ids(self, arrays: Any, types: Sequence[str], count: int) -> np.ndarray:
        from bucketkit.hashing.hudi import hudi_bucket_ids

        return hudi_bucket_ids(arrays, types, count)

    def hash_class(self, hive_type: str) -> str:
        from bucketkit.hashing.hudi import hudi_hash_class

        return hudi_hash_class(hive_type)


#: The hash families by ``TableSpec.hash_family`` name: each makes its :class:`HashFamily` from a
#: Hive bucketing version (which only Hive's uses).
HASH_FAMILIES: dict[str, Any] = {"hive": lambda version: HiveBucketing(check_version(version)),
                                 "spark": lambda version: SparkBucketBy(),
                                 "hudi": lambda version: HudiBucketIndex()}


def hash_family(name: str, version: int = 2) -> HashFamily:
    """The :class:`HashFamily` called ``name`` (with Hive bucketing ``version`` where it applies)."""
    if name not in HASH_FAMILIES:
        raise InvalidArgumentError(f"hash family {name!r}: expected one of {list(HASH_FAMILIES)}")
    return HASH_FAMILIES[name](version)


def hashing_name(family: str, version: int) -> str:
    """A hash family in words: ``"Hive bucketing v2"`` or ``"Spark's bucketBy hash"``."""
    return hash_family(family, version).describe()


@dataclass(frozen=True)
class BucketFunction:
    """How a table places rows into buckets: hash family, Hive bucketing version, column types, count.

    A small value object: frozen, hashable, picklable (it travels to Spark executors) and
    printable. Types are stored normalised (``"INTEGER"`` becomes ``"int"``).

    Attributes:
        version: Hive bucketing version, 1 or 2 (ignored by the ``"spark"`` family).
        hive_types: the bucket columns' types (Hive type strings), in bucketing order.
        bucket_count: number of buckets.
        family: ``"hive"`` (Hive/Trino bucketing, ``(hash & 0x7fffffff) % n``) or ``"spark"``
            (Spark's ``bucketBy``: ``pmod(murmur3(cols, seed 42), n)``, see :mod:`bucketkit.hashing.spark`).

    Raises:
        UnsupportedTypeError: a type cannot be bucketed on in this family.
        InvalidArgumentError: bad family, version, count or type string.

    Example:
        >>> f = BucketFunction(2, ("bigint",), 8)
        >>> f.bucket_of([42])
        2
    """

    version: int
    hive_types: tuple[str, ...]
    bucket_count: int
    family: str = "hive"

    def __post_init__(self) -> None:
        object.__setattr__(self, "version", check_version(self.version))
        scheme = hash_family(self.family, self.version)
        types = scheme.check_types((self.hive_types,) if isinstance(self.hive_types, str) else tuple(self.hive_types))
        if not types:
            raise InvalidArgumentError("a bucket function needs at least one bucket column type, got none")
        object.__setattr__(self, "hive_types", tuple(str(t) for t in types))
        bucket_number(0, self.bucket_count)
        object.__setattr__(self, "bucket_count", int(self.bucket_count))
        object.__setattr__(self, "_scheme", scheme)  # not a field: equality and hashing stay the fields'

    @property
    def scheme(self) -> HashFamily:
        """The :class:`HashFamily` placing the rows (Hive bucketing of this version, or Spark's)."""
        return self._scheme

    @property
    def hashing(self) -> str:
        """The hash in words: ``"Hive bucketing v2"`` or ``"Spark's bucketBy hash"``."""
        return self.scheme.describe()

    def __str__(self) -> str:
        return f"{self.hashing} on ({', '.join(self.hive_types)}) into {self.bucket_count} buckets"

    def hash(self, values: Any) -> int:
        """The combined hash of one row (see :func:`hive_hash`, :func:`bucketkit.hashing.spark.spark_hash`)."""
        return self.scheme.hash(values, self.hive_types)

    def bucket_of(self, values: Any) -> int:
        """The bucket of one row given as Python values, one per bucket column."""
        return self.scheme.bucket(self.hash(values), self.bucket_count)

    def bucket_ids(self, arrays: Any) -> np.ndarray:
        """The bucket of every row of Arrow columns (see :func:`bucket_ids`)."""
        return self.scheme.bucket_ids(arrays, self.hive_types, self.bucket_count)

    def incompatibility(self, other: BucketFunction) -> str | None:
        """Why rows with equal keys could land in unrelated buckets of ``self`` and ``other``.

        Returns None when both hash every key identically and one bucket count divides the other
        (bucket ``i`` of the N-side then matches buckets ``i, i+N, ...`` of the kN-side); else a
        reason a person can read, e.g. ``"column 1: left hashes bigint with v2, right int: v2
        hashes differ"``.
        """
        if not isinstance(other, BucketFunction):
            raise InvalidArgumentError(f"expected a BucketFunction to compare with, got {other!r}")
        if self.family != other.family:
            return (f"left is placed by {self.hashing}, right by {other.hashing}: the two hash families put "
                    "equal keys in unrelated buckets")
        if self.scheme != other.scheme:
            return f"left uses bucketing {self.scheme.short()}, right {other.scheme.short()}: their hashes differ"
        if len(self.hive_types) != len(other.hive_types):
            return (f"left has {len(self.hive_types)} bucket columns ({', '.join(self.hive_types)}), right "
                    f"{len(other.hive_types)} ({', '.join(other.hive_types)})")
        for i, (a, b) in enumerate(zip(self.hive_types, other.hive_types), 1):
            if self.scheme.hash_class(a) != other.scheme.hash_class(b):
                how = self.scheme.short()
                return f"column {i}: left hashes {a} with {how}, right {b}: {how} hashes differ"
        small, large = sorted((self.bucket_count, other.bucket_count))
        if large % small:
            return f"bucket counts {self.bucket_count} and {other.bucket_count}: neither divides the other"
        return None
