"""Add a Hive bucket-id column to a Spark DataFrame (``mapInArrow`` over bucketkit's kernels).

Spark's own ``hash()`` is Murmur3 with seed 42 and Spark's encoding, and Spark exposes Hive's v1
hash only inside its Hive writer; neither gives Hive v2 nor varchar's v1 rule. This runs
:meth:`bucketkit.hashing.BucketFunction.bucket_ids` on each Arrow batch in the Python workers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from bucketkit.errors import InvalidArgumentError
from bucketkit.hashing import BucketFunction, check_bucketable

__all__ = ["with_bucket_id"]


class _AppendBucketId:
    """The ``mapInArrow`` function: a module-level class, so its pickle is just the bucket
    function and a few names (no closure over the driver's state)."""

    def __init__(self, function: BucketFunction, columns: tuple[str, ...], name: str):
        self.function = function
        self.columns = columns
        self.name = name

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        field = pa.field(self.name, pa.int32(), nullable=False)
        for batch in batches:
            ids = self.function.bucket_ids([batch.column(c) for c in self.columns])
            yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(ids, pa.int32())],
                                             schema=batch.schema.append(field))


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
    from pyspark.sql.types import IntegerType, StructField, StructType

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
    function = BucketFunction(version, tuple(hive_types), bucket_count)
    schema = StructType([*df.schema.fields, StructField(name, IntegerType(), nullable=False)])
    return df.mapInArrow(_AppendBucketId(function, tuple(f.name for f in fields), name), schema)
