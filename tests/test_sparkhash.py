"""Spark's bucketBy hash, checked against Spark itself: ``hash()`` over every type Spark can bucket on,
and the files Spark's own ``bucketBy`` writer produces."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bucketkit.errors import UnsupportedTypeError
from bucketkit.hashing.hive import BucketFunction
from bucketkit.layout.naming import SPARK
from bucketkit.hashing.spark import spark_bucket_ids, spark_hash, spark_hash_arrays

UTC = dt.timezone.utc
INT = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
DDL = {"tinyint": "tinyint", "smallint": "smallint", "int": "int", "bigint": "bigint", "boolean": "boolean",
       "float": "float", "double": "double", "string": "string", "binary": "binary", "date": "date",
       "timestamp": "timestamp", "decimal(10,2)": "decimal(10,2)", "decimal(30,5)": "decimal(30,5)",
       "array<int>": "array<int>", "array<string>": "array<string>",
       "struct<a:bigint,b:string>": "struct<a:bigint,b:string>"}


def _decimal(precision: int, scale: int):
    return st.decimals(min_value=-(10 ** (precision - scale)) + 1, max_value=10 ** (precision - scale) - 1,
                       places=scale, allow_nan=False, allow_infinity=False)


VALUES = {
    **{t: st.integers(-(1 << (b - 1)), (1 << (b - 1)) - 1) for t, b in INT.items()},
    "boolean": st.booleans(),
    "float": st.floats(width=32) | st.sampled_from([0.0, -0.0, float("nan"), float("inf")]),
    "double": st.floats() | st.sampled_from([0.0, -0.0, float("nan"), float("-inf")]),
    "string": st.text(max_size=11),  # every tail length, non-ASCII and 4-byte UTF-8 included
    "binary": st.binary(max_size=11),
    "date": st.dates(min_value=dt.date(1, 1, 1)),
    "timestamp": st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2300, 1, 1),
                              timezones=st.just(UTC)),
    "decimal(10,2)": _decimal(10, 2),
    "decimal(30,5)": _decimal(30, 5),
    "array<int>": st.lists(st.none() | st.integers(-(1 << 31), (1 << 31) - 1), max_size=4),
    "array<string>": st.lists(st.none() | st.text(max_size=6), max_size=4),
    "struct<a:bigint,b:string>": st.tuples(st.none() | st.integers(-(1 << 63), (1 << 63) - 1),
                                           st.none() | st.text(max_size=6)),
}


def test_the_values_spark_documents():
    # Spark's Murmur3Hash documentation: hash(0) = 933211791, hash(4) = -397064898, hash(NULL) = 42.
    assert [spark_hash([v], ["int"]) for v in (0, 4, None)] == [933211791, -397064898, 42]


def test_maps_cannot_be_spark_bucket_columns():
    with pytest.raises(UnsupportedTypeError, match="does not hash maps"):
        BucketFunction(1, ("map<int,int>",), 4, "spark")


@settings(max_examples=60)
@given(data=st.data())
def test_scalar_and_vectorised_paths_agree(data):
    types = data.draw(st.lists(st.sampled_from(sorted(VALUES)), min_size=1, max_size=3))
    rows = data.draw(st.lists(st.tuples(*[st.none() | VALUES[t] for t in types]), min_size=1, max_size=20))
    from bucketkit.hivetypes import arrow_type_of_hive

    arrays = [pa.array([r[i] for r in rows], arrow_type_of_hive(t) if t != "timestamp" else pa.timestamp("us", "UTC"))
              for i, t in enumerate(types)]
    scalar = [spark_hash(list(r), types) for r in rows]
    assert spark_hash_arrays(arrays, types).tolist() == scalar


@pytest.mark.parametrize("hive_type", sorted(VALUES))
@settings(max_examples=5)
@given(data=st.data())
def test_hash_equals_sparks_hash_function(spark, hive_type, data):
    values = data.draw(st.lists(st.none() | VALUES[hive_type], min_size=1, max_size=40))
    df = spark.createDataFrame([(i, v) for i, v in enumerate(values)], f"i int, v {DDL[hive_type]}")
    got = {r.i: r.h for r in df.selectExpr("i", "hash(v) AS h").collect()}
    assert [spark_hash([v], [hive_type]) for v in values] == [got[i] for i in range(len(values))]
    arrow = df.orderBy("i").toArrow()
    assert spark_hash_arrays([arrow.column("v")], [hive_type]).tolist() == [got[i] for i in range(len(values))]


@settings(max_examples=15)
@given(data=st.data())
def test_several_columns_chain_like_spark(spark, data):
    types = data.draw(st.lists(st.sampled_from(sorted(VALUES)), min_size=2, max_size=3))
    rows = data.draw(st.lists(st.tuples(*[st.none() | VALUES[t] for t in types]), min_size=1, max_size=20))
    names = [f"c{i}" for i in range(len(types))]
    schema = "i int, " + ", ".join(f"{n} {DDL[t]}" for n, t in zip(names, types))
    df = spark.createDataFrame([(i, *r) for i, r in enumerate(rows)], schema)
    got = [r.h for r in df.orderBy("i").selectExpr(f"hash({', '.join(names)}) AS h").collect()]
    assert [spark_hash(list(r), types) for r in rows] == got


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_every_row_lies_in_the_bucket_sparks_bucketby_writer_chose(spark, tmp_path, fmt):
    name = f"sparkhash_bucketby_{fmt}"
    df = spark.range(3000).selectExpr("id % 211 - 100 AS k", "concat('u', id % 37) AS s",
                                      "CAST(id AS double) / 7 AS x", "date_add(DATE'2020-01-01', CAST(id % 50 AS int)) AS d")
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    df.write.bucketBy(7, "k", "s").format(fmt).option("path", str(tmp_path / name)).saveAsTable(name)
    try:
        checked = 0
        function = BucketFunction(1, ("bigint", "string"), 7, "spark")
        for entry in os.scandir(tmp_path / name):
            if entry.name.startswith(("_", ".")):
                continue
            bucket = SPARK.parse(entry.name).bucket
            table = pq.read_table(entry.path) if fmt == "parquet" else __import__("pyarrow.orc").orc.read_table(entry.path)
            ids = spark_bucket_ids([table.column("k"), table.column("s")], ["bigint", "string"], 7)
            assert set(ids.tolist()) == {bucket}, entry.name
            first = table.slice(0, 1).to_pylist()[0]
            assert function.bucket_of([first["k"], first["s"]]) == bucket
            checked += table.num_rows
        assert checked == 3000
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_decimal_scale_beyond_the_type_is_refused():
    from bucketkit.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="2 after the point"):
        spark_hash([decimal.Decimal("1.234")], ["decimal(10,2)"])
