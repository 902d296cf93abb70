"""Re-bucketing a table: ``bucketkit.rebucket`` against the manual way, a Spark CTAS + DROP + RENAME (issue 29).

A catalog table (k bigint, v int, s string; ORC, Hive bucketing v1) is rewritten from 64 buckets to 256
and back, by ``bucketkit.rebucket`` (atomic in place, metastore updated) and by hand with Spark's own
writer (``CREATE TABLE new CLUSTERED BY (k) INTO n BUCKETS AS SELECT * FROM t``, ``DROP TABLE t``,
``ALTER TABLE new RENAME TO t``: v1 only, since Spark's writer hashes v1, and not atomic for readers).
Each call moves the table to the other bucket count, so both sides do the same work in alternating
rounds; rows and placement are checked after. Also ``rebucket`` to v2 (which Spark cannot write).
"""

from __future__ import annotations

import argparse
from typing import Any

from benchmarks.common import BenchResult, bench_session, print_results, scaled, timed_interleaved, with_spark_memory

SWITCH = "spark.bucketkit.catalog.enabled"
SIZES = (1_000_000, 8_000_000)


def _create(spark: Any, name: str, n: int, spark_writes: bool) -> None:
    """The 64-bucket v1 table: written by bucketkit (ours), or a managed table by Spark's own CTAS (the manual
    way's, which DROP TABLE deletes, so that its RENAME finds the location free)."""
    import shutil

    import bucketkit
    from bucketkit.io import resolve_filesystem
    from bucketkit.spark.catalog import table_location

    for table in (name, f"{name}_new"):
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        shutil.rmtree(resolve_filesystem(table_location(spark, table))[1], ignore_errors=True)
    rows = spark.range(n).selectExpr("CAST(hash(id, 7) AS BIGINT) AS k", "CAST(id % 100000 AS INT) AS v",
                                     "concat('s', CAST(hash(id) % 5000 AS STRING)) AS s")
    if not spark_writes:
        bucketkit.write(rows, "k", 64, table=name, bucketing_version=1, mode="overwrite")
        return
    rows.createOrReplaceTempView("bench_rebucket_rows")
    spark.conf.set(SWITCH, "false")
    try:
        spark.sql(f"CREATE TABLE {name} CLUSTERED BY (k) INTO 64 BUCKETS STORED AS ORC AS SELECT * FROM bench_rebucket_rows")
    finally:
        spark.conf.unset(SWITCH)


def _by_hand(spark: Any, name: str, state: dict) -> None:
    target = 256 if state["buckets"] == 64 else 64
    spark.conf.set(SWITCH, "false")  # Spark's own writer, as a team without bucketkit does it
    try:
        spark.sql(f"DROP TABLE IF EXISTS {name}_new")
        spark.sql(f"CREATE TABLE {name}_new CLUSTERED BY (k) INTO {target} BUCKETS STORED AS ORC "
                  f"AS SELECT * FROM {name}")
        spark.sql(f"DROP TABLE {name}")
        spark.sql(f"ALTER TABLE {name}_new RENAME TO {name}")
    finally:
        spark.conf.unset(SWITCH)
    state["buckets"] = target


def _rebucket(spark: Any, name: str, state: dict, version: int = 1) -> None:
    import bucketkit

    target = 256 if state["buckets"] == 64 else 64
    bucketkit.rebucket(spark, name, bucket_count=target, bucketing_version=version)
    state["buckets"] = target


def run(scale: float = 1.0) -> list[BenchResult]:
    import bucketkit
    from bucketkit.spark.catalog import load_table

    spark = bench_session()
    results = []
    for size in SIZES:
        n = scaled(size, scale)
        ours, theirs = f"bench_rebucket_ours_{n}", f"bench_rebucket_spark_{n}"
        _create(spark, ours, n, spark_writes=False)
        _create(spark, theirs, n, spark_writes=True)
        mine, hand = {"buckets": 64}, {"buckets": 64}
        t_ours, t_hand = timed_interleaved([lambda: _rebucket(spark, ours, mine), lambda: _by_hand(spark, theirs, hand)],
                                           repeat=2, warmup=0)
        check = bucketkit.validate(load_table(spark, ours))
        assert check.ok and check.rows_checked == n, check
        assert spark.table(ours).count() == spark.table(theirs).count() == n
        notes = f"{n:,} rows, ORC, 64 <-> 256 buckets, v1, 2 cores"
        results.append(BenchResult(f"rebucket 64 <-> 256 buckets ({n:,} rows)", t_ours, t_hand,
                                   "Spark CTAS + DROP + RENAME (v1)", notes, {"rows": n}, goal_ratio=1.0))
        v2 = {"buckets": mine["buckets"]}
        (t_v2,) = timed_interleaved([lambda: _rebucket(spark, ours, v2, version=2)], repeat=2, warmup=0)
        assert bucketkit.validate(load_table(spark, ours)).ok
        results.append(BenchResult(f"rebucket to v2, 64 <-> 256 buckets ({n:,} rows)", t_v2, t_hand,
                                   "Spark CTAS + DROP + RENAME (v1: Spark cannot write v2)", notes, {"rows": n}))
        for name in (ours, theirs, f"{theirs}_new"):
            spark.sql(f"DROP TABLE IF EXISTS {name}")
    return with_spark_memory(spark, results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the sizes (1M, 8M rows)")
    print_results(run(parser.parse_args().scale))
