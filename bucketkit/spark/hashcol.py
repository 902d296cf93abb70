"""Add a Hive bucket-id column to a Spark DataFrame.

Integer-like keys (boolean, tinyint, smallint, int, bigint, date) get a plain Spark SQL expression
(:mod:`bucketkit.spark.hashexpr`), evaluated in the JVM. Other keys (strings, varchar, floating
point, arrays, maps) get a scalar Arrow UDF that runs
:meth:`bucketkit.hashing.BucketFunction.bucket_ids` on batches of the key columns in the Python
workers: Spark's own ``hash()`` is Murmur3 with seed 42 and Spark's string encoding, and Spark
exposes Hive's v1 hash only inside its Hive writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from bucketkit.errors import InvalidArgumentError
from bucketkit.hashing import BucketFunction, check_bucketable
from bucketkit.spark.hashexpr import native_bucket_id_column

__all__ = ["with_bucket_id", "bucket_id_column"]


def bucket_id_column(columns: Sequence[Any], hive_types: Sequence[str], version: int, bucket_count: int) -> Any:
    """A Spark Column holding each row's Hive bucket (int).

    A JVM expression when every key type allows it, else a scalar Arrow UDF: only the bucket
    columns travel to the Python workers and one int32 column comes back, which is cheaper than
    sending whole rows through ``mapInArrow``.

    Args:
        columns: the bucket columns (names or Columns), in bucketing order.
        hive_types: their Hive types, as the table declares them.
        version: Hive bucketing version, 1 or 2.
        bucket_count: number of buckets.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.functions import arrow_udf
    from pyspark.sql.types import IntegerType

    function = BucketFunction(version, tuple(hive_types), bucket_count)  # validates version, types, count
    native = native_bucket_id_column(columns, function.hive_types, version, bucket_count)
    if native is not None:
        return native

    # The closure holds only the small, picklable BucketFunction.
    def bucket_ids(*arrays: pa.Array) -> pa.Array:
        return pa.array(function.bucket_ids(list(arrays)), pa.int32())

    udf = arrow_udf(bucket_ids, IntegerType())
    return udf(*[F.col(c) if isinstance(c, str) else c for c in columns])


def _resolve(df: Any, columns: Sequence[str]) -> list[Any]:
    fields = {f.name: f for f in df.schema.fields}
    lower = {f.name.lower(): f for f in df.schema.fields}
    out = []
    for c in columns:
        field = fields.get(c) or lower.get(c.lower())
        if field is None:
            raise InvalidArgumentError(f"bucket column {c!r} is not a column of the DataFrame {list(fields)}")
        out.append(field)
    return out


def with_bucket_id(df: Any, columns: Sequence[str] | str, hive_types: Sequence[str] | None, version: int,
                   bucket_count: int, name: str = "_bucket_id") -> Any:
    """Return ``df`` with an int32 column ``name`` holding each row's Hive bucket.

    Args:
        df: a Spark DataFrame.
        columns: the bucket columns, in bucketing order.
        hive_types: their Hive types as the table declares them (they decide the hash); None
            derives them from the DataFrame's schema with
            :func:`bucketkit.spark.types.hive_type_of_spark`.
        version: Hive bucketing version, 1 or 2.
        bucket_count: number of buckets.
        name: the new column's name.

    Raises:
        InvalidArgumentError: unknown column, a name clash, or a bad version/count.
        UnsupportedTypeError: a bucket column type Hive/Trino cannot bucket on.

    Example:
        >>> df = with_bucket_id(spark.range(10), ["id"], ["bigint"], 2, 4)  # doctest: +SKIP
    """
    from bucketkit.spark.types import hive_type_of_spark

    columns = [columns] if isinstance(columns, str) else list(columns)
    fields = _resolve(df, columns)
    if hive_types is None:
        hive_types = [hive_type_of_spark(f) for f in fields]
    elif len(hive_types) != len(columns):
        raise InvalidArgumentError(f"got {len(hive_types)} hive_types {list(hive_types)} for "
                                   f"{len(columns)} bucket columns {columns}")
    if name in {f.name for f in df.schema.fields}:
        raise InvalidArgumentError(f"the DataFrame already has a column named {name!r}; pass another name=")
    for field, hive_type in zip(fields, hive_types):
        check_bucketable(field.name, hive_type)  # names the column in the error
    return df.withColumn(name, bucket_id_column([df[f.name] for f in fields], hive_types, version, bucket_count))
