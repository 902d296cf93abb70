"""ACID benchmark: bucketkit.scan of a Hive ACID table vs Spark reading the same surviving rows as plain ORC.

The data (:mod:`benchmarks.acid_data`): N rows (default 10M; ``--scale``) of ``key bigint``,
``s string``, ``d double`` in 64 buckets by Hive's v2 hash of ``key``, as one insert delta of
``bucket_NNNNN`` ACID files plus three delete deltas removing 10% of the rows, each event in the
file of the deleted row's bucket; and the surviving rows as a plain ORC table of 64 files. Spark
cannot read the ACID table at all, so its baseline reads the plain copy: the floor for any reader
of these rows, which has no merging to do.

Compared, in the same run, every query forced to full evaluation with ``count(*), sum(hash(key,
s, d))`` (every column of every row):
    * full read: bucketkit.scan of the ACID table vs ``spark.read.orc`` of the plain table
      (goal: within 1.5x);
    * point lookup ``key = v``: bucketkit.scan, which must read one bucket's files only (checked
      on the plan), vs Spark's filter over the plain table.
Peak memory: VmHWM of the JVM and of the Python worker processes, as bench_join reports it. A
profile of the JVM-free part (pyarrow reading + merging every bucket, one thread) says how much of
bucketkit's time is the ACID merge rather than Spark.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks import acid_data
from benchmarks.common import (BenchResult, bench_session, data_dir, print_results, scaled, timed_interleaved,
                               with_spark_memory)

SPEC = dict(bucketed_by="key", bucket_count=acid_data.BUCKETS, bucketing_version=2, table_columns=acid_data.COLUMNS)


def _force(df: Any) -> tuple:
    from pyspark.sql import functions as F

    return tuple(df.agg(F.count(F.lit(1)), F.sum(F.hash("key", "s", "d"))).collect()[0])


def _merge_profile(root: str) -> dict[str, float]:
    """Time the JVM-free ACID read of every bucket in this process (no Spark): list, then merge."""
    import pyarrow.fs as pafs

    from bucketkit.acid.read import read_bucket, snapshot, state_buckets

    fs = pafs.LocalFileSystem()
    t0 = time.perf_counter()
    state = snapshot(fs, root)
    t1 = time.perf_counter()
    rows = sum(read_bucket(fs, root, state, b).num_rows for b in state_buckets(state))
    t2 = time.perf_counter()
    return {"snapshot_s": round(t1 - t0, 3), "pyarrow_merge_all_buckets_s": round(t2 - t1, 3), "merged_rows": rows}


def run(scale: float = 1.0) -> list[BenchResult]:
    import bucketkit

    n = scaled(10_000_000, scale)
    spark = bench_session()
    root = data_dir("acid") / f"t{acid_data.BUCKETS}_{n}"
    facts = acid_data.prepare(root, n)
    acid, plain = str(root / "acid"), "file://" + str(root / "plain")
    probe, bucket = facts["probe_key"], facts["probe_bucket"]

    plan = bucketkit.plan_scan(path=acid, filters=[("key", "=", probe)], **SPEC)
    assert plan.selected_buckets == frozenset({bucket}), plan.explain()
    opened = [f.rsplit("/", 1)[-1] for f in plan.files]
    assert opened and set(opened) == {f"bucket_{bucket:05d}"}, plan.explain()  # one bucket's files, and only them
    whole = bucketkit.plan_scan(path=acid, **SPEC)

    def ours_full() -> tuple:
        return _force(bucketkit.scan(spark, path=acid, **SPEC))

    def spark_full() -> tuple:
        return _force(spark.read.orc(plain))

    def ours_point() -> tuple:
        return _force(bucketkit.scan(spark, path=acid, filters=[("key", "=", probe)], **SPEC))

    def spark_point() -> tuple:
        return _force(spark.read.orc(plain).where(f"key = {probe}"))

    expected = spark_full()
    assert expected[0] == facts["surviving"], (expected, facts)
    assert ours_full() == expected, "full read: bucketkit and Spark disagree"
    assert ours_point() == spark_point() and spark_point()[0] == 1, "point lookup: results differ"
    t_ours, t_spark = timed_interleaved([ours_full, spark_full], repeat=3)
    t_ours_pt, t_spark_pt = timed_interleaved([ours_point, spark_point], repeat=5)
    notes = (f"{n:,} rows, {facts['deleted']:,} deleted over 3 delete deltas, {acid_data.BUCKETS} buckets, "
             f"{len(whole.files)} ACID files / {whole.bytes_selected / 2**20:.1f} MiB")
    extra = {"rows": n, "surviving": facts["surviving"], **_merge_profile(acid)}
    results = [
        BenchResult("ACID full read (count + hash of every column)", t_ours, t_spark,
                    "Spark reading the surviving rows as plain ORC", notes, extra, goal_ratio=1.5),
        BenchResult("ACID point lookup key = v", t_ours_pt, t_spark_pt, "Spark filter over the plain ORC table",
                    f"{len(plan.files)} files of bucket {bucket} read ({plan.bytes_selected / 2**10:.0f} KiB)",
                    {"rows": n, "files_read": len(plan.files), "bytes_read": plan.bytes_selected}),
    ]
    return with_spark_memory(spark, results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 10M-row table (default 1.0)")
    print_results(run(parser.parse_args().scale))
