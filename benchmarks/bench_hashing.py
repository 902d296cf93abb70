"""Hive bucketing hashes: vectorised kernel throughput, and a bucket-id column in Spark.

Kernels: ``bucketkit.hashing.hive.bucket_ids`` over 10M Arrow values per case (v1/v2 int and bigint,
~16-byte strings), reported as rows per CPU-second of this single-threaded process, i.e. per core
(robust to other load on the machine); the issue's goals are >= 200 M rows/s for v1 int/bigint
and >= 20 M rows/s for v2 strings. Spark: ``with_bucket_id`` on a 10M-row DataFrame next to Spark's
own ``hash()`` column on the same data, both forced with a ``noop`` write, in alternating rounds:
the JVM column bucketkit uses when the session has its jar (``io.bucketkit.hashing.HiveBucketColumn``),
and the two fallbacks without it (the Spark SQL expression of ``bucketkit.spark.hashexpr`` for
integer keys, the scalar Arrow UDF otherwise).

``--capped``: the same kernels in a child process under a 600 MiB address-space cap (a Python worker under
``spark.executor.pyspark.memory=600m``), where numba is not loaded and the numpy twins hash
(``bucketkit.hashing.npkernels``), against the numba kernels of this process on the same values (1M a case).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.common import BenchResult, bench_session, print_results, scaled, timed, timed_interleaved

BUCKETS = 64


def _kernel_results(n: int) -> list[BenchResult]:
    import pyarrow as pa

    from bucketkit.hashing.hive import bucket_ids

    rng = np.random.default_rng(42)
    ints = pa.array(rng.integers(-(2**31), 2**31, n, dtype=np.int32))
    bigints = pa.array(rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64))
    strings = pa.array(np.char.add("user-", np.char.zfill(rng.integers(0, 10**11, n).astype(str), 11)).tolist())
    cases = [
        ("v1 int", ints, "int", 1, 200e6), ("v1 bigint", bigints, "bigint", 1, 200e6),
        ("v2 int", ints, "int", 2, None), ("v2 bigint", bigints, "bigint", 2, None),
        ("v2 string (16 B)", strings, "string", 2, 20e6), ("v1 string (16 B)", strings, "string", 1, None),
    ]
    results = []
    for label, arr, hive_type, version, goal in cases:
        def fn(arr=arr, hive_type=hive_type, version=version):
            return bucket_ids([arr], [hive_type], version, BUCKETS)

        cpu_s = timed(fn, warmup=1, clock=time.process_time)
        wall_s = timed(fn, repeat=3, warmup=0)
        extra = {"rows": n, "rows_per_s": n / cpu_s, "cpu_s": cpu_s}
        if goal:
            extra["goal_rows_per_s"] = goal
        results.append(BenchResult(f"bucket_ids {label}", wall_s, None, "-",
                                   notes=f"{n:,} values, {BUCKETS} buckets; rows/s per CPU-second", extra=extra))
    return results


def _spark_results(n: int) -> list[BenchResult]:
    from pyspark.sql import functions as F

    from bucketkit.hashing.hive import BucketFunction
    from bucketkit.spark.hashcol import arrow_bucket_id_column, bucket_id_column, jvm_column_class
    from bucketkit.spark.hashexpr import native_bucket_id_column

    spark = bench_session()
    assert jvm_column_class(spark) is not None, "the benchmark session has no bucketkit jar"
    df = spark.range(n).select(F.col("id").alias("k"),
                               F.concat(F.lit("user-"), F.lpad(F.col("id").cast("string"), 11, "0")).alias("s"))
    cases = [  # label, key columns, Hive types, how the column is built
        ("bigint (JVM column)", ["k"], ["bigint"], lambda c, t: bucket_id_column(c, t, 2, BUCKETS, spark=spark)),
        ("string (JVM column)", ["s"], ["string"], lambda c, t: bucket_id_column(c, t, 2, BUCKETS, spark=spark)),
        ("bigint, string (JVM column)", ["k", "s"], ["bigint", "string"],
         lambda c, t: bucket_id_column(c, t, 2, BUCKETS, spark=spark)),
        # what sessions without bucketkit's jar get
        ("bigint (SQL expression, no jar)", ["k"], ["bigint"],
         lambda c, t: native_bucket_id_column(c, t, 2, BUCKETS)),
        ("string (Arrow UDF, no jar)", ["s"], ["string"],
         lambda c, t: arrow_bucket_id_column(c, BucketFunction(2, tuple(t), BUCKETS))),
    ]
    results = []
    for label, columns, types, column in cases:
        def ours(columns=columns, types=types, column=column):
            df.withColumn("_b", column(columns, types)).write.format("noop").mode("overwrite").save()

        def spark_hash(columns=columns):
            df.withColumn("_h", F.hash(*columns)).write.format("noop").mode("overwrite").save()

        ours_s, base_s = timed_interleaved([ours, spark_hash], repeat=3, warmup=1)
        results.append(BenchResult(f"Spark: add bucket id column, v2 {label}", ours_s, base_s,
                                   "Spark hash() column", notes=f"{n:,} rows, local[2], noop write",
                                   extra={"rows": n, "rows_per_s": n / ours_s}))
    return results


CAP = 600 << 20


def capped(scale: float = 1.0) -> list[BenchResult]:
    """``bucket_ids`` on the numpy kernels (a child under a 600 MiB cap) against numba's (this process)."""
    n = scaled(1_000_000, scale)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, "-m", "benchmarks.bench_hashing", "--child-capped", out.name, "--scale",
                        str(scale)], check=True)
        theirs = json.load(open(out.name))
    results = []
    for r in _kernel_results(n):
        child = theirs["results"][r.name]
        results.append(BenchResult(f"{r.name} under a 600m cap ({theirs['kernels']})", child["wall_s"], r.ours_s,
                                   "numba kernels, uncapped", notes=f"{n:,} values; rows/s per CPU-second",
                                   extra={"rows": n, "rows_per_s": child["rows_per_s"],
                                          "numba_rows_per_s": r.extra["rows_per_s"]}))
    return results


def _child_capped(out: str, scale: float) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CAP, resource.getrlimit(resource.RLIMIT_AS)[1]))
    from bucketkit.hashing import npkernels

    results = {r.name: {"wall_s": r.ours_s, "rows_per_s": r.extra["rows_per_s"]}
               for r in _kernel_results(scaled(1_000_000, scale))}
    with open(out, "w") as f:
        json.dump({"kernels": npkernels.chosen().__name__.rsplit(".", 1)[1], "results": results}, f)


def run(scale: float = 1.0) -> list[BenchResult]:
    """Kernel throughput on ``10M * scale`` values and the Spark bucket-id column on as many rows."""
    n = scaled(10_000_000, scale)
    return _kernel_results(n) + _spark_results(n)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0 = 10M values/rows per case")
    parser.add_argument("--capped", action="store_true", help="the numpy kernels under a 600 MiB cap vs numba's")
    parser.add_argument("--child-capped", metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_capped:
        _child_capped(args.child_capped, args.scale)
    else:
        print_results(capped(args.scale) if args.capped else run(args.scale))
