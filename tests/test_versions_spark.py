"""Kept versions through Spark: a bucketkit.scan / bucketkit.join DataFrame planned before overwrites
reads what it was planned on when it runs; ``as_of`` in scan, join and the data source (rows
expected from what each write wrote, and from Spark's own reader of the live directory)."""

from __future__ import annotations

import os

import pytest

import bucketkit
from bucketkit.errors import VersionNotFoundError


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def version(spark, n: int, tag: str):
    return spark.range(n).selectExpr("id AS k", f"'{tag}' AS v")


def test_a_scan_planned_before_overwrites_reads_its_version(spark, tmp_path):
    root = str(tmp_path / "t")
    bucketkit.write(version(spark, 40, "one"), "k", 4, path=root, bucketing_version=2)
    planned = bucketkit.scan(spark, root)  # the case: planned, three overwrites, then count()
    pruned = bucketkit.scan(spark, root, filters=[("k", "=", 7)])
    for tag, n in (("two", 10), ("three", 5), ("four", 3)):
        bucketkit.write(version(spark, n, tag), "k", 4, path=root, mode="overwrite", bucketing_version=2)
    assert planned.count() == 40 and rows(planned) == [(k, "one") for k in range(40)]
    assert rows(pruned) == [(7, "one")]
    assert rows(spark.read.orc(root)) == [(k, "four") for k in range(3)]  # the directory itself is the live table


def test_as_of_in_scan_join_and_the_data_source(spark, tmp_path):
    left, right = str(tmp_path / "l"), str(tmp_path / "r")
    bucketkit.write(version(spark, 20, "a"), "k", 4, path=left, bucketing_version=2)
    bucketkit.write(spark.range(0, 20, 2).selectExpr("id AS k", "id * 10 AS w"), "k", 4, path=right,
                    bucketing_version=2)
    bucketkit.write(version(spark, 6, "b"), "k", 4, path=left, mode="overwrite", bucketing_version=2)
    committed = bucketkit.history(left)[1].committed_at
    assert rows(bucketkit.scan(spark, left, as_of=0)) == [(k, "a") for k in range(20)]
    assert rows(bucketkit.scan(spark, left, as_of=committed)) == [(k, "b") for k in range(6)]
    joined = bucketkit.join(spark, left, right, "k", left_as_of=0)
    assert rows(joined) == [(k, "a", k * 10) for k in range(0, 20, 2)]
    assert bucketkit.plan_join(left, right, "k", left_as_of=0).bucketed
    assert rows(bucketkit.join(spark, left, right, "k")) == [(k, "b", k * 10) for k in range(0, 6, 2)]
    df = spark.read.format("bucketkit").option("as_of", "0").load(left).where("k < 3")
    assert rows(df.select("k", "v")) == [(0, "a"), (1, "a"), (2, "a")]
    bucketkit.vacuum(left, retain=0)
    with pytest.raises(VersionNotFoundError, match="was removed"):
        bucketkit.scan(spark, left, as_of=0)


def test_sql_planned_before_overwrites_reads_its_version_as_the_python_plan_does(spark, tmp_path):
    """Spark SQL through bucketkit's catalog: a query planned (its files listed) before INSERT OVERWRITEs
    returns the rows it was planned on; the JVM's verdict (kept version or in place) is the Python plan's."""
    import shutil

    from bucketkit.spark.catalog import resolve_table

    spark.sql("DROP TABLE IF EXISTS vers_sql")
    bucketkit.write(version(spark, 30, "one"), "k", 4, table="vers_sql", bucketing_version=2)
    location = resolve_table(spark, "vers_sql").location
    planned = spark.sql("SELECT k, v FROM vers_sql")
    assert "(from the kept version)" in planned._jdf.queryExecution().executedPlan().toString()
    assert bucketkit.plan_scan("vers_sql", spark=spark).root != location
    for tag in ("two", "three"):
        spark.sql(f"INSERT OVERWRITE TABLE vers_sql SELECT id AS k, '{tag}' AS v FROM range(5)")
    assert rows(planned) == [(k, "one") for k in range(30)]
    assert rows(spark.sql("SELECT k, v FROM vers_sql")) == [(k, "three") for k in range(5)]
    # a writer outside bucketkit adds a file (Hive's name for a second file of bucket 1): read in place
    first = sorted(p for p in os.listdir(location) if p.startswith("000001_0"))[0]
    shutil.copy(os.path.join(location, first), os.path.join(location, "000001_0_copy_1"))
    live = spark.sql("SELECT k, v FROM vers_sql")
    assert "(from the kept version)" not in live._jdf.queryExecution().executedPlan().toString()
    assert bucketkit.plan_scan("vers_sql", spark=spark).root == location
    spark.conf.set("spark.bucketkit.catalog.enabled", "false")
    try:
        expected = rows(spark.sql("SELECT k, v FROM vers_sql"))  # Spark's own reader of the directory
    finally:
        spark.conf.unset("spark.bucketkit.catalog.enabled")
    assert rows(live) == expected and len(expected) > 5
