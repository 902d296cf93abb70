"""bucketkit.join of a Hive ACID table with a table bucketkit.write wrote through Spark: no Exchange in
the executed plan, and Spark's own join of the same rows gives the same result.

The ACID side is written as Hive 3 writes it (tests/support/acid.py); Spark's join gets its rows from
what the writes left (kept while writing), not from bucketkit's reader.
"""

from __future__ import annotations

import pytest

import bucketkit

from support.acid import AcidTable
from support.joins import sort_key

pytestmark = pytest.mark.spark


def collected(df):
    return sorted((tuple(r) for r in df.collect()), key=sort_key)


def test_acid_join_has_no_exchange_and_equals_sparks_join(spark, tmp_path):
    acid = AcidTable(tmp_path / "acid", 4)
    (tmp_path / "acid").mkdir()
    acid.write(list(range(0, 300, 3)) + [None])
    acid.write([], list(range(0, 60, 2)))                   # DELETE ... WHERE k IN (...)
    acid.write([30, 33, 1000], [30, 33])                    # UPDATE: delete + insert in one write
    acid.write([9, 12, 15], [9], committed=False)           # still open: invisible
    right = spark.createDataFrame([(k % 200, f"r{k}") for k in range(400)] + [(None, "null")], "k int, w string")
    bucketkit.write(right, "k", 8, path=str(tmp_path / "right"), bucketing_version=2)
    ids = acid.write_ids()
    expected_left = spark.createDataFrame([(r["k"], r["v"]) for r in acid.rows()], "k int, v string")
    for how in ("inner", "left", "full", "left_anti"):
        ours = bucketkit.join(spark, acid.open_table(), str(tmp_path / "right"), "k", how, left_write_ids=ids)
        plan = bucketkit.plan_join(acid.open_table(), str(tmp_path / "right"), "k", how, left_write_ids=ids)
        assert plan.strategy == "bucketed" and ids in plan.left_snapshot
        assert "Exchange" not in ours._jdf.queryExecution().executedPlan().toString()
        theirs = expected_left.join(spark.read.orc(str(tmp_path / "right")), "k", how)
        assert ours.columns == theirs.columns
        assert collected(ours) == collected(theirs), how


def test_an_acid_side_that_cannot_be_paired_is_joined_by_spark_over_its_snapshot(spark, tmp_path):
    acid = AcidTable(tmp_path / "acid", 4)
    (tmp_path / "acid").mkdir()
    acid.write(list(range(20)))
    acid.write([], [3, 4])
    acid.write([5], [], committed=False)
    right = spark.createDataFrame([(k, f"r{k}") for k in range(10)], "k int, w string")
    bucketkit.write(right, "k", 3, path=str(tmp_path / "right"), bucketing_version=2)  # 4 and 3: no pairing
    ours = bucketkit.join(spark, acid.open_table(), str(tmp_path / "right"), "k", "left",
                          left_write_ids=acid.write_ids())
    plan = bucketkit.plan_join(acid.open_table(), str(tmp_path / "right"), "k", "left",
                               left_write_ids=acid.write_ids())
    assert plan.strategy == "shuffle" and "neither divides the other" in plan.reason
    expected_left = spark.createDataFrame([(r["k"], r["v"]) for r in acid.rows()], "k int, v string")
    assert collected(ours) == collected(expected_left.join(spark.read.orc(str(tmp_path / "right")), "k", "left"))
