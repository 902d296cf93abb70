"""Apache Hudi benchmark (issue 24): reading Hudi tables with bucketkit.scan (hudi-rs in Spark tasks) against Spark's
own Parquet reader of the same base files, and a join of two bucket-index tables against Spark's shuffle join.

Tables:
    * hudi-rs's merge-on-read trips table (``../shared``, v8_trips_8i3u1d: 8 inserts, updates and deletes in log
      files): a small table, where planning dominates. Skipped without ``../shared``.
    * bucket-index tables built by benchmarks/hudi_data.py, as the tests build them (a real Hudi table's timeline and schema, rows
      placed in file groups ``<bucket as 8 digits>-...`` by Hudi's rule), at several sizes: copy-on-write, base files
      only. No Hudi writer runs here, so no large table has log files; the MOR merge is measured on the small one.

Compared, in the same run, each query forced with ``count(*), sum(hash(id, name))``:
    * snapshot read: bucketkit.scan vs ``spark.read.parquet`` of the slices' base files (which for a MOR table with
      log files returns stale rows: the floor, not an equal);
    * point lookup ``id = v`` on a bucket-index table: bucketkit.scan (one file slice, by the plan) vs Spark's
      filter over the base files;
    * join of two bucket-index tables (16 and 32 buckets) + aggregate: bucketkit.join (bucket by bucket) vs Spark's
      shuffle join of the base files.
"""

from __future__ import annotations

import argparse
import glob
import os
from typing import Any

from benchmarks.common import (BenchResult, bench_session, data_dir, print_results, scaled, timed_interleaved,
                               with_spark_memory)
from benchmarks.hudi_data import bucket_index_table, unzip

ENGINE = "/work/shared/data/engine-files/hudi"
_here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "engine-files", "hudi")
if os.path.isdir(_here):
    ENGINE = os.path.abspath(_here)


def _bucket_table(template: str, target: str, n: int, buckets: int, step: int) -> str:
    """``n`` rows (id = 0, step, 2*step, ...) in ``buckets`` file groups placed by Hudi's bucket rule (once)."""
    from bucketkit.hashing.hudi import hudi_bucket, java_list_hash

    marker = target + ".complete"
    if not os.path.exists(marker):
        bucket_index_table(template, target, range(0, n * step, step),
                           lambda k: hudi_bucket(java_list_hash([str(k)]), buckets))
        open(marker, "w").close()
    return target


def _force(df: Any) -> tuple:
    from pyspark.sql import functions as F

    return tuple(df.agg(F.count(F.lit(1)), F.sum(F.hash("id", "name"))).collect()[0])


def run(scale: float = 1.0) -> list[BenchResult]:
    import bucketkit

    if not os.path.isdir(ENGINE):
        print("bench_hudi: ../shared/data/engine-files/hudi is absent; skipped")
        return []
    spark = bench_session()
    root = str(data_dir("hudi"))
    results: list[BenchResult] = []

    trips = unzip(ENGINE, "quickstart_trips_table/mor/avro/v8_trips_8i3u1d", root)
    plan = bucketkit.plan_scan(trips)
    bases = ["file://" + u.data_files[0] for u in plan.units()]

    def trips_ours() -> tuple:
        return tuple(bucketkit.scan(spark, trips).selectExpr("count(*)", "sum(hash(uuid, fare))").collect()[0])

    def trips_spark() -> tuple:
        return tuple(spark.read.parquet(*bases).selectExpr("count(*)", "sum(hash(uuid, fare))").collect()[0])

    trips_ours(), trips_spark()
    t_ours, t_spark = timed_interleaved([trips_ours, trips_spark], repeat=5)
    results.append(BenchResult("Hudi MOR snapshot, 6 rows (3 slices, 1 log file)", t_ours, t_spark,
                               "Spark's Parquet reader of the base files (stale rows: the floor)",
                               "hudi-rs merges the log file; planning dominates", {"slices": len(plan.units())}))

    template = unzip(ENGINE, "sample_table/cow/v8_nonpartitioned", root)
    for n in (scaled(100_000, scale), scaled(2_000_000, scale)):
        left = _bucket_table(template, os.path.join(root, f"left16_{n}"), n, 16, 2)
        right = _bucket_table(template, os.path.join(root, f"right32_{n}"), n, 32, 3)
        lt = bucketkit.resolve_table(spark, left, bucket_count=16)
        rt = bucketkit.resolve_table(spark, right, bucket_count=32)
        lfiles = ["file://" + f for f in sorted(glob.glob(os.path.join(left, "*.parquet")))]
        rfiles = ["file://" + f for f in sorted(glob.glob(os.path.join(right, "*.parquet")))]
        probe = 2 * (n // 3)
        assert len(bucketkit.plan_scan(left, [("id", "=", probe)], bucket_count=16).units()) == 1

        def read_ours() -> tuple:
            return _force(bucketkit.scan(spark, left, bucket_count=16))

        def read_spark() -> tuple:
            return _force(spark.read.parquet(*lfiles))

        def point_ours() -> tuple:
            return _force(bucketkit.scan(spark, left, filters=[("id", "=", probe)], bucket_count=16))

        def point_spark() -> tuple:
            return _force(spark.read.parquet(*lfiles).where(f"id = {probe}"))

        def join_ours() -> tuple:
            df = bucketkit.join(spark, lt, rt, "id", columns=["id", ("left", "name"), ("right", "longField")])
            return tuple(df.selectExpr("count(*)", "sum(hash(id))").collect()[0])

        def join_spark() -> tuple:
            df = spark.read.parquet(*lfiles).select("id", "name").join(
                spark.read.parquet(*rfiles).select("id", "longField"), "id")
            return tuple(df.selectExpr("count(*)", "sum(hash(id))").collect()[0])

        assert read_ours() == read_spark(), "snapshot read: rows differ"
        assert point_ours() == point_spark() and point_spark()[0] == 1, "point lookup: rows differ"
        assert join_ours() == join_spark(), "join: rows differ"
        t_r, t_rs = timed_interleaved([read_ours, read_spark], repeat=3)
        t_p, t_ps = timed_interleaved([point_ours, point_spark], repeat=5)
        t_j, t_js = timed_interleaved([join_ours, join_spark], repeat=3)
        size = f"{n:,} rows"
        results += [
            BenchResult(f"Hudi snapshot read (bucket-index COW), {size}", t_r, t_rs,
                        "Spark's Parquet reader of the base files",
                        "16 file slices, each one base file: read by Spark's own reader",
                        {"rows": n}),
            BenchResult(f"Hudi bucket-index lookup id = v, {size}", t_p, t_ps, "Spark's filter over the base files",
                        "1 of 16 file slices read", {"rows": n}, goal_ratio=1.0),
            BenchResult(f"Hudi bucket-index join 16 x 32 buckets, {size} each", t_j, t_js,
                        "Spark's shuffle join of the base files", "bucket by bucket, no shuffle; the same 3 columns read",
                        {"rows": n}, goal_ratio=1.0),
        ]
    return with_spark_memory(spark, results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 2M-row tables (default 1.0)")
    print_results(run(parser.parse_args().scale))
