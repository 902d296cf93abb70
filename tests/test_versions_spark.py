"""Kept versions through Spark: a bucketkit.scan / bucketkit.join DataFrame planned before overwrites
reads what it was planned on when it runs; ``as_of`` in scan, join and the data source (rows
expected from what each write wrote, and from Spark's own reader of the live directory)."""

from __future__ import annotations

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
