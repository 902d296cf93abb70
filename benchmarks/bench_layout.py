"""Commit layouts benchmark (issue 48): ``bucketkit.write`` switching a table's directory beside it (a local
disk's default) and publishing versions inside it (S3's, GCS's and ADLS's layout, the one a store that refuses
writes beside a table gets, and ``spark.bucketkit.commit.layout=inside``), each against Spark's own Hive
bucketed INSERT of the same cached rows, same run, interleaved rounds.

Sizes 200k and 2M rows (``--scale``), ``key bigint``, ``s string``, 64 buckets, ORC snappy; an overwrite of the
table, and an append to it (each round adds the rows again, so every writer's table grows alike: the append
keeps every earlier file, hard-linked into bucketkit's next version in both layouts). On this local disk the
inside layout renames no directory and builds the version in place; its cost beside the switch is the pointer
and the version store's listing. Object stores are not timed: the S3 server here is moto's, whose requests are
not S3's (tests/test_s3_core.py checks the protocol there, not its speed).
"""

from __future__ import annotations

import argparse
import shutil
from typing import Any

from benchmarks.common import BenchResult, bench_session, catalog_rows, data_dir, print_results, scaled, timed_interleaved

BUCKETS = 64
SIZES = (200_000, 2_000_000)


def run(scale: float = 1.0, repeat: int = 3) -> list[BenchResult]:
    spark = bench_session()
    results = []
    for n in (scaled(s, scale) for s in SIZES):
        for mode in ("overwrite", "append"):
            results += _run_case(spark, n, mode, repeat)
    return results


def _run_case(spark: Any, n: int, mode: str, repeat: int) -> list[BenchResult]:
    import bucketkit
    from pyspark.sql import functions as F

    df = spark.range(0, n, 1, 2).select(F.xxhash64(F.col("id")).alias("key"),
                                        F.concat(F.lit("name-"), F.col("id").cast("string")).alias("s")).cache()
    df.count()
    df.createOrReplaceTempView("bench_layout_src")
    base = data_dir(f"layout_{n}_{mode}")
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    roots = {layout: str(base / layout) for layout in ("beside", "inside", "spark")}
    spark.sql("DROP TABLE IF EXISTS bench_layout_spark")
    spark.sql(f"CREATE TABLE bench_layout_spark (key bigint, s string) CLUSTERED BY (key) INTO {BUCKETS} BUCKETS "
              f"STORED AS ORC LOCATION 'file://{roots['spark']}' TBLPROPERTIES ('orc.compress'='SNAPPY')")

    def ours(layout: str):
        return lambda: bucketkit.write(df, "key", BUCKETS, path=roots[layout], mode=mode, compression="snappy",
                                       layout=layout, bucketing_version=1)

    def theirs() -> None:  # Spark's own Hive writer (catalog off), the same rows, v1 as Spark places them
        verb = "INSERT OVERWRITE TABLE" if mode == "overwrite" else "INSERT INTO"
        catalog_rows(spark, f"{verb} bench_layout_spark SELECT * FROM bench_layout_src", False)

    t_beside, t_inside, t_spark = timed_interleaved([ours("beside"), ours("inside"), theirs], repeat=repeat, warmup=1)
    rows = {layout: bucketkit.scan(spark, roots[layout]).count() for layout in ("beside", "inside")}
    assert rows["beside"] == rows["inside"] == spark.table("bench_layout_spark").count(), rows
    assert not any(p.name.startswith(".inside") for p in base.iterdir()), "the inside layout wrote beside its table"
    df.unpersist()
    spark.sql("DROP TABLE IF EXISTS bench_layout_spark")
    what = f"{n:,} rows, {BUCKETS} buckets, ORC, {mode}"
    return [
        BenchResult(f"write {what}, versions beside the table (switched)", t_beside, t_spark,
                    "Spark Hive-bucketed INSERT", extra={"rows": n, "mode": mode, "rows_after": rows["beside"]}),
        BenchResult(f"write {what}, versions inside the table (pointer)", t_inside, t_spark,
                    "Spark Hive-bucketed INSERT", notes=f"inside / beside {t_inside / t_beside:.2f}x",
                    extra={"rows": n, "mode": mode, "inside_over_beside": t_inside / t_beside,
                           "rows_after": rows["inside"]}),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the sizes (200k and 2M rows)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds per side, interleaved (best is reported)")
    args = parser.parse_args()
    print_results(run(args.scale, args.repeat))
