"""Spark ``bucketBy`` tables are read with Spark's hash, never Hive's; tables whose hash is unknown are
read unbucketed with the reason. Every expected row set comes from Spark itself."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bucketkit
from bucketkit.cli import main
from bucketkit.layout.naming import SPARK
from support.sparkown import spark_insert, spark_insert_into_v2


def rows(df):
    return sorted(tuple(r) for r in df.collect())


def exchanges(df) -> int:
    return df._jdf.queryExecution().executedPlan().toString().count("Exchange")


@pytest.fixture(scope="module")
def bucketby(spark, tmp_path_factory):
    """The issue's tables: bucketBy(8, k) in Parquet and ORC, bucketBy(16, k), bucketBy(8, k, s)."""
    base = tmp_path_factory.mktemp("bucketby")
    src = spark.range(2000).selectExpr("id % 97 AS k", "id AS v", "concat('u', id % 13) AS s")
    made = {}
    for name, fmt, n, cols in (("sb_parquet", "parquet", 8, ["k"]), ("sb_orc", "orc", 8, ["k"]),
                               ("sb16", "parquet", 16, ["k"]), ("sb_two", "orc", 8, ["k", "s"])):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        src.write.bucketBy(n, *cols).format(fmt).option("path", str(base / name)).saveAsTable(name)
        made[name] = str(base / name)
    yield made
    for name in made:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("name", ["sb_parquet", "sb_orc"])
def test_point_lookup_prunes_with_sparks_hash(spark, bucketby, name):
    df = bucketkit.scan(spark, table=name, filters=[("k", "=", 5)])
    assert rows(df) == rows(spark.table(name).where("k = 5"))
    assert df.count() == 21
    plan = bucketkit.plan_scan(spark=spark, table=name, filters=[("k", "=", 5)])
    assert plan.table.spec.hash_family == "spark" and plan.unbucketed is None
    assert len(plan.selected_buckets) == 1 and "Spark's bucketBy hash" in plan.bucket_reason
    (bucket,) = plan.selected_buckets
    assert {SPARK.parse(os.path.basename(f)).bucket for f in df.inputFiles()} == {bucket}


@settings(max_examples=10)
@given(k=st.integers(-5, 100), s=st.integers(0, 14), alone=st.booleans())
def test_every_bucket_column_prunes_where_spark_prunes_none(spark, bucketby, k, s, alone):
    where = f"k = {k}" if alone else f"k = {k} AND s = 'u{s}'"
    plan = bucketkit.plan_scan(spark=spark, table="sb_two", filters=where)
    assert (plan.selected_buckets is None) == alone  # a multi-column key is pinned only by both columns
    assert rows(bucketkit.scan(spark, table="sb_two", filters=where)) == rows(spark.table("sb_two").where(where))


def test_spark_hashed_and_hive_hashed_tables_are_never_paired(spark, bucketby, tmp_path):
    other = spark.range(97).selectExpr("id AS k", "id * 10 AS w")
    path = str(tmp_path / "hive_v1")
    bucketkit.write(other, "k", 8, path=path, bucketing_version=1)
    joined = bucketkit.join(spark, "sb_parquet", path, "k")
    plan = bucketkit.plan_join("sb_parquet", path, "k", spark=spark)
    assert plan.strategy == "shuffle"
    assert "Spark's bucketBy hash" in plan.reason and "Hive bucketing v1" in plan.reason
    expected = spark.table("sb_parquet").join(spark.read.orc(path), "k")
    assert joined.count() == 2000 and rows(joined) == rows(expected)


@pytest.mark.parametrize("how", ["inner", "full"])
def test_two_spark_tables_join_bucket_by_bucket(spark, bucketby, how):
    joined = bucketkit.join(spark, "sb_parquet", "sb16", "k", how=how, columns=["k", "v"])
    plan = bucketkit.plan_join("sb_parquet", "sb16", "k", how=how, spark=spark)
    assert plan.strategy == "bucketed", plan.reason
    assert "8 and 16 buckets" in plan.reason and exchanges(joined) == 0
    left, right = spark.table("sb_parquet"), spark.table("sb16")
    expected = left.join(right, "k", how).select("k", left.v, right.v)
    assert rows(joined) == rows(expected)


def test_hive_v2_table_with_sparks_v1_insert_is_read_unbucketed(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS bk_v2_mixed")
    spark.sql(f"CREATE TABLE bk_v2_mixed (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path}/t' TBLPROPERTIES ('bucketing_version'='2')")
    try:
        spark_insert_into_v2(spark, "bk_v2_mixed", "INSERT INTO bk_v2_mixed SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(100)")
        plan = bucketkit.plan_scan(spark=spark, table="bk_v2_mixed", filters=[("k", "=", 7)])
        assert plan.selected_buckets is None and "written by Spark's own INSERT" in plan.unbucketed
        got = bucketkit.scan(spark, table="bk_v2_mixed", filters=[("k", "=", 7)])
        assert rows(got) == rows(spark.table("bk_v2_mixed").where("k = 7")) == [(7, "7")]
    finally:
        spark.sql("DROP TABLE IF EXISTS bk_v2_mixed")


def test_foreign_path_table_without_a_version_is_read_unbucketed(spark, bucketby):
    spec = dict(bucketed_by="k", bucket_count=8, bucket_types=["bigint"], file_format="parquet")
    plan = bucketkit.plan_scan(bucketby["sb_parquet"], spark=spark, filters="k = 5", **spec)
    assert plan.selected_buckets is None and "no bucketing_version given" in plan.bucket_reason
    assert bucketkit.scan(spark, bucketby["sb_parquet"], filters="k = 5", **spec).count() == 21
    # Declared Hive-hashed although Spark's bucketBy wrote it: the file names contradict the declaration.
    plan = bucketkit.plan_scan(bucketby["sb_parquet"], spark=spark, filters="k = 5", bucketing_version=1, **spec)
    assert plan.selected_buckets is None and "Spark bucketBy file name" in plan.unbucketed
    assert bucketkit.scan(spark, bucketby["sb_parquet"], filters="k = 5", bucketing_version=1, **spec).count() == 21
    plan = bucketkit.plan_scan(bucketby["sb_parquet"], spark=spark, filters="k = 5", hash_family="spark", **spec)
    assert plan.unbucketed is None and len(plan.selected_buckets) == 1


def test_validate_rehashes_with_sparks_hash(bucketby, tmp_path, capsys):
    root = tmp_path / "copy"
    shutil.copytree(bucketby["sb_orc"], root)
    flags = ["--bucket-count", "8", "--bucketed-by", "k", "--bucket-types", "bigint", "--hash-family", "spark"]
    assert main(["validate", str(root), *flags, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows_checked"] == 2000 and data["misplaced_rows"] == 0 and not data["skipped"]
    victim = next(p for p in sorted(os.listdir(root)) if not p.startswith(("_", ".")))
    bucket = SPARK.parse(victim).bucket
    moved = "moved-" + victim.replace(f"_{bucket:05d}.", f"_{(bucket + 1) % 8:05d}.")
    os.rename(root / victim, root / moved)
    assert main(["validate", str(root), *flags, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["misplaced_rows"] > 0 and all(r["expected_bucket"] == bucket for r in data["misplaced"])


def test_bucketkit_never_writes_into_a_spark_bucketby_table(spark, bucketby):
    from bucketkit.errors import SpecMismatchError

    df = spark.range(10).selectExpr("id AS k", "id AS v", "'x' AS s")
    with pytest.raises(SpecMismatchError, match="hash_family: table has 'spark', write has 'hive'"):
        bucketkit.write(df, "k", 8, table="sb_parquet", mode="append", bucketing_version=1, file_format="parquet")
    assert spark.table("sb_parquet").count() == 2000
