"""Write benchmark: bucketkit.write vs Spark's native Hive-bucketed INSERT, same run, same cached input.

N rows (default 10M; ``--scale``) of ``key bigint`` (xxhash64 of the row number), ``s string``,
``d double``, 64 buckets, ORC with snappy on both sides (bucketkit's default codec; Spark's table
gets ``orc.compress=SNAPPY``). Two bucketkit writers, each timed in the same interleaved rounds as
Spark's own Hive INSERT: ``bucketkit.write`` and a SQL ``INSERT OVERWRITE`` into a
``bucketing_version=2`` table through bucketkit's catalog (issue 14). Goal: each <= 1.0x Spark's
time, with 64 files where Spark writes (input tasks x 64). The cost of the bucket-id column alone, next to Spark's own ``hash()``,
is measured by ``bench_hashing``.

The input's partition count decides how many files Spark's INSERT writes, so it is measured twice:
in 2 partitions (one per core of ``local[2]``: Spark's best case, 128 files) and in 16 (as a
300 MB input read from a lake in small splits, or after a shuffle, arrives: 1,024 files). A third
row buckets by the string column instead (2 partitions), whose bucket ids came from the Arrow UDF
before bucketkit's JVM column covered every key type; it carries no goal. A fourth buckets by two columns,
``CLUSTERED BY (key, s)`` (2 partitions): Spark's own INSERT writes such a v1 table with Hive's row
hash, bucketkit's SQL INSERT writes it v2 since issue 47 (it was refused); goal <= 1.0x. Each row also times the exchange alone (bucket
ids + the shuffle that brings every bucket to one task, into a ``noop`` sink): the part of the work
one file per bucket needs and Spark's tasks x buckets files do not, and a plain unbucketed ORC
write of the same rows. Their sum over Spark's time is the ``floor`` ratio: no write that moves
every bucket to one task with Spark's plain shuffle (the exchange here clusters by a column, which
bucketkit does not pack) and Spark's ORC writer can go below it; bucketkit's packed shuffle and
``OrcRowWriter`` do.
"""

from __future__ import annotations

import argparse
import os
import shutil
from typing import Any

from benchmarks.common import BenchResult, bench_session, catalog_rows, data_dir, print_results, scaled, timed_interleaved

BUCKETS = 64


def _files(root: str) -> int:
    """Visible data files below ``root`` (no hidden file or directory on the way)."""
    return sum(1 for d, _, fs in os.walk(root) for f in fs
               if not any(p.startswith((".", "_")) for p in os.path.relpath(os.path.join(d, f), root).split(os.sep)))


INPUT_PARTITIONS = (2, 16)


def run(scale: float = 1.0, repeat: int = 2) -> list[BenchResult]:
    spark = bench_session()
    n = scaled(10_000_000, scale)
    cases = [*(_run_case(spark, n, p, repeat) for p in INPUT_PARTITIONS),
             _run_case(spark, n, INPUT_PARTITIONS[0], repeat, keys=("s",)),
             _run_case(spark, n, INPUT_PARTITIONS[0], repeat, keys=("key", "s"))]
    return [r for case in cases for r in reversed(case)]


def _run_case(spark: Any, n: int, partitions: int, repeat: int,
              keys: tuple[str, ...] = ("key",)) -> tuple[BenchResult, BenchResult]:
    """(bucketkit.write, SQL INSERT through the catalog), each against Spark's own INSERT in the same rounds."""
    import bucketkit
    from pyspark.sql import functions as F

    from bucketkit.spark.hashcol import with_bucket_id

    df = spark.range(0, n, 1, partitions).select(F.xxhash64(F.col("id")).alias("key"),
                                                 F.concat(F.lit("name-"), F.col("id").cast("string")).alias("s"),
                                                 (F.rand(7) * 1000).alias("d")).cache()
    df.count()
    df.createOrReplaceTempView("bench_write_src")
    base = data_dir("write")
    ours_root, spark_root, sql_root = str(base / "bucketkit"), str(base / "spark"), str(base / "sql")
    spark.sql("DROP TABLE IF EXISTS bench_write_spark")
    clustered = ", ".join(keys)
    spark.sql(f"CREATE TABLE bench_write_spark (key bigint, s string, d double) CLUSTERED BY ({clustered}) "
              f"INTO {BUCKETS} "
              f"BUCKETS STORED AS ORC LOCATION 'file://{spark_root}' TBLPROPERTIES ('orc.compress'='SNAPPY')")

    def ours() -> Any:
        return bucketkit.write(df, list(keys), BUCKETS, path=ours_root, mode="overwrite", compression="snappy")

    def theirs() -> None:  # Spark's own Hive writer: the catalog off (on, bucketkit writes this v1 table too)
        catalog_rows(spark, "INSERT OVERWRITE TABLE bench_write_spark SELECT * FROM bench_write_src", False)

    spark.sql("DROP TABLE IF EXISTS bench_write_sql")
    shutil.rmtree(sql_root, ignore_errors=True)  # an earlier case's files and bucketkit metadata (another key)
    spark.sql(f"CREATE TABLE bench_write_sql (key bigint, s string, d double) CLUSTERED BY ({clustered}) "
              f"INTO {BUCKETS} "
              f"BUCKETS STORED AS ORC LOCATION 'file://{sql_root}' "
              "TBLPROPERTIES ('orc.compress'='SNAPPY', 'bucketing_version'='2')")

    def sql_insert() -> None:  # the same INSERT into a v2 table, written by bucketkit's catalog
        spark.sql("INSERT OVERWRITE TABLE bench_write_sql SELECT * FROM bench_write_src")

    def exchange_only() -> None:  # the shuffle one file per bucket needs, without sorting or writing
        tasks = int(spark.conf.get("spark.sql.shuffle.partitions"))  # the writer's default task count
        (with_bucket_id(df, list(keys), None, 2, BUCKETS, name="_b").repartition(tasks, "_b")
         .write.format("noop").mode("overwrite").save())

    def plain_write() -> None:  # the same rows, unbucketed, in one ORC file per input task
        df.write.mode("overwrite").option("compression", "snappy").orc(str(base / "plain"))

    t_ours, t_spark, t_sql, t_exchange, t_plain = timed_interleaved(
        [ours, theirs, sql_insert, exchange_only, plain_write], repeat=repeat, warmup=1)
    floor = (t_exchange + t_plain) / t_spark
    ours_files, spark_files, sql_files = _files(ours_root), _files(spark_root), _files(sql_root)
    for root in (ours_root, sql_root):
        rows = spark.read.orc(root).count()
        assert rows == n, f"bucketkit wrote {rows} rows to {root}, expected {n}"
    df.unpersist()
    what = (f"{n:,} rows, {BUCKETS} buckets, ORC, input in {partitions} partitions"
            + ("" if keys == ("key",) else ", bucketed by s (string)" if keys == ("s",)
               else f", bucketed by ({clustered})"))
    goal = None if keys == ("s",) else 1.0
    sql = BenchResult(
        f"SQL INSERT through bucketkit's catalog (v2 table), {what}", t_sql, t_spark, "Spark Hive-bucketed INSERT",
        notes=f"files: bucketkit {sql_files}, Spark {spark_files}; floor {floor:.2f}x",
        extra={"rows": n, "files_ours": sql_files, "files_spark": spark_files, "input_partitions": partitions},
        goal_ratio=goal)
    return sql, BenchResult(
        f"write {what}", t_ours, t_spark,
        "Spark Hive-bucketed INSERT", notes=f"files: bucketkit {ours_files}, Spark {spark_files}; "
                                            f"floor {floor:.2f}x = bucket ids + shuffle alone {t_exchange:.2f} s "
                                            f"+ plain ORC write {t_plain:.2f} s",
        extra={"rows": n, "rows_per_s": n / t_ours, "files_ours": ours_files, "files_spark": spark_files,
               "input_partitions": partitions, "exchange_only_s": t_exchange, "plain_write_s": t_plain,
               "floor_ratio": floor},
        goal_ratio=goal)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of 10M rows (0.01 = 100k)")
    parser.add_argument("--repeat", type=int, default=2, help="timed rounds per side, interleaved (best is reported)")
    args = parser.parse_args()
    print_results(run(args.scale, args.repeat))
