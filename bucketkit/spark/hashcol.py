"""Add a Hive bucket-id column to a Spark DataFrame.

Three ways to the same ids, cheapest first, chosen once per key spec:

1. In a session whose JVM has bucketkit's jar (every :func:`bucketkit.spark.session.get_session`
   session, and sessions set up with ``configure_builder``), a JVM column for every key type and
   any number of key columns: ``io.bucketkit.hashing.HiveBucketColumn`` calls the jar's ``HiveHash``
   from Spark's generated code, as cheap as Spark's own ``hash()`` (benchmarks/RESULTS.md). Whether
   the class is there is asked once per session.
2. Without the jar, integer-like keys (boolean, tinyint, smallint, int, bigint, date) get a plain
   Spark SQL expression (:mod:`bucketkit.spark.hashexpr`), also evaluated in the JVM.
3. Otherwise (strings, varchar, floating point, arrays, maps without the jar; Spark Connect) a
   scalar Arrow UDF runs :meth:`bucketkit.hashing.hive.BucketFunction.bucket_ids` on batches of the key
   columns in the Python workers: Spark's own ``hash()`` is Murmur3 with seed 42 and Spark's string
   encoding, and Spark exposes Hive's v1 hash only inside its Hive writer.

All three are held to Hive's own classes by the tests (tests/test_hashcol_jvm.py,
tests/test_hashexpr.py, tests/test_hashing_spark.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from bucketkit.errors import InvalidArgumentError
from bucketkit.hashing.hive import BucketFunction, check_bucketable
from bucketkit.spark.driver import has_extensions, is_connect, jar_class
from bucketkit.spark.hashexpr import native_bucket_id_column
from bucketkit.spark.types import column

__all__ = ["with_bucket_id", "bucket_id_column", "arrow_bucket_id_column", "jvm_column_class", "java_keys"]


def bucket_id_column(columns: Sequence[Any], hive_types: Sequence[str], version: int, bucket_count: int, *,
                     spark: Any = None) -> Any:
    """A Spark Column holding each row's Hive bucket (int).

    A JVM column when ``spark``'s JVM has bucketkit's jar, else a Spark SQL expression when every
    key type allows one, else a scalar Arrow UDF: only the bucket columns travel to the Python
    workers and one int32 column comes back, which is cheaper than sending whole rows through
    ``mapInArrow``.

    Args:
        columns: the bucket columns (names or Columns), in bucketing order.
        hive_types: their Hive types, as the table declares them.
        version: Hive bucketing version, 1 or 2.
        bucket_count: number of buckets.
        spark: the session the column will be used in (default: the active one); decides whether
            the JVM column is available.
    """
    function = BucketFunction(version, tuple(hive_types), bucket_count)  # validates version, types, count
    jvm_column = _jvm_bucket_column(spark, columns, function)
    if jvm_column is not None:
        return jvm_column
    native = native_bucket_id_column(columns, function.hive_types, version, bucket_count)
    return native if native is not None else arrow_bucket_id_column(columns, function)


def arrow_bucket_id_column(columns: Sequence[Any], function: BucketFunction) -> Any:
    """The last resort of :func:`bucket_id_column`: a scalar Arrow UDF hashing in the Python workers."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    # The closure holds only the small, picklable BucketFunction.
    def bucket_ids(*arrays: pa.Array) -> pa.Array:
        return pa.array(function.bucket_ids(list(arrays)), pa.int32())

    cols = [column(c) if isinstance(c, str) else c for c in columns]
    try:
        from pyspark.sql.functions import arrow_udf
    except ImportError:  # pyspark 4.0 has no Arrow UDFs: a pandas UDF, its Series turned back into Arrow arrays
        import warnings

        from pyspark.sql.functions import PandasUDFType, pandas_udf

        from bucketkit.hivetypes import arrow_type_of_hive

        types = [arrow_type_of_hive(t) for t in function.hive_types]

        def bucket_ids_of_series(*series):  # no type hints: Spark cannot infer a UDF's kind from *args
            import pandas as pd

            arrays = [pa.Array.from_pandas(s, type=t) for s, t in zip(series, types)]
            return pd.Series(bucket_ids(*arrays).to_numpy(zero_copy_only=False), dtype="int32")

        with warnings.catch_warnings():  # PandasUDFType is deprecated from 4.0 on, and the only way here
            warnings.simplefilter("ignore")
            return pandas_udf(bucket_ids_of_series, IntegerType(), PandasUDFType.SCALAR)(*cols)
    return arrow_udf(bucket_ids, IntegerType())(*cols)


def jvm_column_class(spark: Any) -> Any | None:
    """bucketkit's ``HiveBucketColumn`` in ``spark``'s JVM (a py4j class), or None: no classic
    session (Spark Connect has no py4j JVM), or bucketkit's jar is not on its classpath (a user's
    own session without ``configure_builder``). Looked up once per session (:func:`~bucketkit.spark.driver.jar_class`)."""
    return jar_class(spark, "hashing.HiveBucketColumn")


def _jvm_bucket_column(spark: Any, columns: Sequence[Any], function: BucketFunction) -> Any | None:
    from pyspark.sql import SparkSession
    from pyspark.sql.classic.column import Column

    spark = spark if spark is not None else SparkSession.getActiveSession()
    if spark is not None and is_connect(spark):  # no py4j: the same expression, as bucketkit's SQL function
        if not has_extensions(spark):
            return None
        from pyspark.sql import functions as F

        cols = [column(c) if isinstance(c, str) else c for c in columns]
        return F.call_function("bucketkit_hive_bucket", F.lit(function.version), F.lit(function.bucket_count),
                               F.array(*[F.lit(str(t)) for t in function.hive_types]), *cols)
    cls = jvm_column_class(spark)
    if cls is None:
        return None
    return Column(cls.of(*java_keys(spark, columns, function.hive_types), function.version, function.bucket_count))


def java_keys(spark: Any, columns: Sequence[Any], hive_types: Sequence[str]) -> tuple[Any, Any]:
    """The key columns (names or Columns) and their Hive types as the Java arrays bucketkit's JVM columns take
    (``Column[]``, ``String[]``), over ``spark``'s py4j gateway."""
    from pyspark.sql.classic.column import _to_java_column

    gateway = spark.sparkContext._gateway
    keys = gateway.new_array(gateway.jvm.org.apache.spark.sql.Column, len(columns))
    types = gateway.new_array(gateway.jvm.java.lang.String, len(columns))
    for i, (c, t) in enumerate(zip(columns, hive_types)):
        keys[i] = _to_java_column(column(c) if isinstance(c, str) else c)
        types[i] = str(t)
    return keys, types


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
        UnsupportedTypeError: a bucket column type bucketkit (as Trino) cannot hash for Hive bucketing.

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
    return df.withColumn(name, bucket_id_column([df[f.name] for f in fields], hive_types, version, bucket_count,
                                                spark=df.sparkSession))
