"""discover() on tables Spark itself wrote with CREATE TABLE ... CLUSTERED BY ... INTO n BUCKETS + INSERT.

The truth is twofold and comes from the engines: Spark's Hive writer chose each file's name and
contents, and Hive's own ``ObjectInspectorUtils.getBucketNumber`` says which bucket each row's key
belongs in. The layout must put every file in the bucket that all its rows hash to.
"""

from __future__ import annotations

import pyarrow.orc as orc
import pytest

from bucketkit import discover
from support.sparkown import spark_insert

N = 4


def hive_bucket(hive, spark, key: int) -> int:
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    values = gateway.new_array(jvm.java.lang.Object, 1)
    values[0] = jvm.java.lang.Integer(key)
    inspectors = gateway.new_array(hive.serde2.objectinspector.ObjectInspector, 1)
    inspectors[0] = hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorFactory.javaIntObjectInspector
    return hive.serde2.objectinspector.ObjectInspectorUtils.getBucketNumber(values, inspectors, N)


def check_rows_in_their_buckets(hive, spark, layout, partition=None):
    seen = 0
    for bucket, paths in layout.files_by_bucket(partition).items():
        for path in paths:
            keys = orc.ORCFile(path).read(columns=["k"]).column("k").to_pylist()
            seen += len(keys)
            assert {hive_bucket(hive, spark, k) for k in set(keys)} <= {bucket}, path
    return seen


@pytest.fixture
def spark_tables(spark):
    made = []
    yield made
    for name in made:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_unpartitioned_table_written_by_spark(spark, hive, tmp_path, spark_tables):
    spark_tables.append("bk_layout_plain")
    spark.sql(f"CREATE TABLE bk_layout_plain (k INT, v STRING) CLUSTERED BY (k) INTO {N} BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path}/plain'")
    spark_insert(spark, "INSERT INTO bk_layout_plain SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(200)")
    spark_insert(spark, "INSERT INTO bk_layout_plain SELECT CAST(id AS INT), 'again' FROM range(50)")  # append: more files
    layout = discover(f"{tmp_path}/plain", N)
    part = layout.partition_layouts[0]
    assert layout.partitions == [{}] and part.scheme == "hive"
    assert all(f.name.endswith(".orc") for f in part.files)
    assert check_rows_in_their_buckets(hive, spark, layout) == 250
    assert all(len(files) >= 2 for files in part.buckets.values())  # each INSERT wrote every bucket


def test_partitioned_table_written_by_spark(spark, hive, tmp_path, spark_tables):
    spark_tables.append("bk_layout_parts")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    spark.sql(f"CREATE TABLE bk_layout_parts (k INT, v STRING) PARTITIONED BY (p STRING) "
              f"CLUSTERED BY (k) INTO {N} BUCKETS STORED AS ORC LOCATION '{tmp_path}/parts'")
    spark_insert(spark, "INSERT INTO bk_layout_parts PARTITION (p) SELECT CAST(id AS INT), 'x', "
              "CASE WHEN id % 3 = 0 THEN 'a/b=c' WHEN id % 3 = 1 THEN 'plain' ELSE NULL END FROM range(120)")
    layout = discover(f"{tmp_path}/parts", N)
    assert layout.partitioned_by == ("p",)
    assert layout.partitions == [{"p": "__HIVE_DEFAULT_PARTITION__"}, {"p": "a/b=c"}, {"p": "plain"}]
    assert [r.p for r in spark.sql("SELECT DISTINCT p FROM bk_layout_parts WHERE p IS NOT NULL ORDER BY p").collect()] \
        == ["a/b=c", "plain"]
    total = sum(check_rows_in_their_buckets(hive, spark, layout, values) for values in layout.partitions)
    assert total == 120
    pruned = discover(f"{tmp_path}/parts", N, partition_filter=lambda v: v["p"] == "a/b=c")
    assert pruned.partitions == [{"p": "a/b=c"}]
