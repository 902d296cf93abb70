"""Fast at every size (issue 23): SQL and the Python API against Spark's own plan, 100k to 10M rows.

Small and medium tables are most tables, and a fixed cost per task, per bucket or per commit is what makes
them lose. At each size (100k, 1M, 10M rows; ``--scale`` multiplies them), two ORC tables bucketed alike
(64 buckets, Hive v2, by ``k bigint``; the second holds half as many rows) and, in the same rounds:

- SQL join + aggregate, ``GROUP BY k``, lookup ``WHERE k = v``: the catalog on vs off (Spark's own plan of
  the same SQL over the same files, ``spark.bucketkit.catalog.enabled=false``);
- the Python API: ``bucketkit.join`` of the two tables, ``bucketkit.scan(..., filters="k = v")`` and
  ``bucketkit.scan(...).groupBy("k")``, against the same queries in SQL with the catalog off;
- writes: a SQL ``INSERT OVERWRITE`` through the catalog and ``bucketkit.write``, each writing one file per
  bucket, against Spark's own Hive-bucketed ``INSERT OVERWRITE`` of the same cached rows (a table without
  ``bucketing_version``, written with the catalog off: with it on, bucketkit writes that v1 table too).

Medians of interleaved runs (15 for queries under a second warm, 5 above; writes 5), rows checked equal
first; the best-of ratio is in the notes.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

from benchmarks.common import BenchResult, bench_session, catalog_rows, data_dir, print_results, scaled, \
    times_interleaved, with_spark_memory

SIZES = (100_000, 1_000_000, 10_000_000)
BUCKETS = 64
BASELINE = "Spark's own plan (catalog off), same files"
WRITE_BASELINE = "Spark's Hive-bucketed INSERT OVERWRITE, same cached rows"


def _rows(spark: Any, n: int) -> Any:
    return spark.range(n).selectExpr(f"CAST(hash(id, 11) % {max(1, n // 4)} AS BIGINT) AS k",
                                      "CAST(id % 100000 AS INT) AS v", "concat('s', CAST(id AS STRING)) AS s")


def _register(spark: Any, name: str, path: str, columns: str, version: str | None) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    # ORC compressed with snappy, bucketkit's default, whoever writes (Spark's own default is zstd)
    props = "'orc.compress'='SNAPPY'" + (f", 'bucketing_version'='{version}'" if version else "")
    props = f" TBLPROPERTIES ({props})"
    spark.sql(f"CREATE EXTERNAL TABLE {name} ({columns}) CLUSTERED BY (k) INTO {BUCKETS} BUCKETS STORED AS ORC "
              f"LOCATION '{path}'{props}")


def prepare(spark: Any, n: int) -> tuple[str, str]:
    """The two tables of one size, written once by bucketkit.write (later runs reuse them)."""
    import bucketkit

    root = data_dir(f"size-curve-{n}")
    if not (root / "READY").exists():
        bucketkit.write(_rows(spark, n), "k", BUCKETS, path=str(root / "a"), mode="overwrite")
        bucketkit.write(_rows(spark, n // 2).selectExpr("k", "v AS w"), "k", BUCKETS, path=str(root / "b"),
                        mode="overwrite")
        (root / "READY").write_text(str(n))
    a, b = f"bench_curve_a_{n}", f"bench_curve_b_{n}"
    _register(spark, a, str(root / "a"), "k BIGINT, v INT, s STRING", "2")
    _register(spark, b, str(root / "b"), "k BIGINT, w INT", "2")
    return a, b


def _medians(name: str, ours: Callable[[], Any], theirs: Callable[[], Any], baseline: str, notes: str, n: int,
             goal: float, runs: int | None = None) -> BenchResult:
    """``ours`` against ``theirs``: rows equal, then medians of interleaved runs; best-of in the notes."""
    got = ours()
    if got is not None:
        want = theirs()
        assert sorted(map(tuple, got)) == sorted(map(tuple, want)), (name, got[:5], want[:5])
    if runs is None:  # how many: by a warm run (the first compiles and lists cold)
        start = time.perf_counter()
        ours()
        runs = 15 if time.perf_counter() - start < 1.0 else 5
    t_ours, t_theirs = times_interleaved([ours, theirs], repeat=runs, warmup=0 if got is None else 1)
    best = min(t_ours) / min(t_theirs)
    return BenchResult(name, statistics.median(t_ours), statistics.median(t_theirs), baseline,
                       f"{notes}; median of {runs} interleaved runs, best-of ratio {best:.2f}x",
                       {"rows": n, "runs": runs, "best_ratio": round(best, 3)}, goal_ratio=goal)


def queries(spark: Any, n: int) -> list[BenchResult]:
    import bucketkit

    a, b = prepare(spark, n)
    key = int(catalog_rows(spark, f"SELECT k FROM {a} LIMIT 1", False)[0][0])
    notes = f"{n:,} x {n // 2:,} rows, ORC, v2, {BUCKETS} buckets, 2 cores"
    join_sql = f"SELECT count(*), sum(b.w), max(a.s) FROM {a} a JOIN {b} b ON a.k = b.k"
    group_sql = f"SELECT count(*), sum(c) FROM (SELECT k, count(*) AS c FROM {a} GROUP BY k)"
    lookup_sql = f"SELECT * FROM {a} WHERE k = {key}"
    goal_join, goal_group = (0.5, 0.3) if n >= 10_000_000 else (1.0, 1.0)
    out = [
        _medians(f"SQL join + agg ({n:,} rows)", lambda: catalog_rows(spark, join_sql, True),
                 lambda: catalog_rows(spark, join_sql, False), BASELINE, notes, n, goal_join),
        _medians(f"SQL GROUP BY k ({n:,} rows)", lambda: catalog_rows(spark, group_sql, True),
                 lambda: catalog_rows(spark, group_sql, False), BASELINE, notes, n, goal_group),
        _medians(f"SQL WHERE k = v ({n:,} rows)", lambda: catalog_rows(spark, lookup_sql, True),
                 lambda: catalog_rows(spark, lookup_sql, False), BASELINE, notes, n, 1.0),
    ]

    def api_join() -> list:
        return bucketkit.join(spark, a, b, "k", columns=["k", ("right", "w"), "s"]) \
            .selectExpr("count(*)", "sum(w)", "max(s)").collect()

    def api_lookup() -> list:
        return bucketkit.scan(spark, a, filters=f"k = {key}").collect()

    def api_group() -> list:
        return bucketkit.scan(spark, a, columns=["k"]).groupBy("k").count() \
            .selectExpr("count(*)", "sum(count)").collect()

    out += [
        _medians(f"Python API bucketkit.join ({n:,} rows)", api_join, lambda: catalog_rows(spark, join_sql, False),
                 BASELINE, notes, n, goal_join),
        _medians(f"Python API scan + groupBy k ({n:,} rows)", api_group, lambda: catalog_rows(spark, group_sql, False),
                 BASELINE, notes, n, goal_group),
        _medians(f"Python API scan k = v ({n:,} rows)", api_lookup, lambda: catalog_rows(spark, lookup_sql, False),
                 BASELINE, notes, n, 1.0),
    ]
    return out


def writes(spark: Any, n: int) -> list[BenchResult]:
    """SQL INSERT OVERWRITE through the catalog and bucketkit.write vs Spark's own Hive INSERT, same rows."""
    import bucketkit

    root = data_dir(f"size-curve-writes-{n}")
    rows = _rows(spark, n).repartition(2).cache()
    rows.count()
    rows.createOrReplaceTempView("bench_curve_src")
    columns = "k BIGINT, v INT, s STRING"
    _register(spark, "bench_curve_spark", f"file://{root / 'spark'}", columns, None)
    _register(spark, "bench_curve_sql", f"file://{root / 'sql'}", columns, "2")

    def spark_insert() -> None:  # Spark's own Hive writer: the catalog off (on, bucketkit writes v1 tables too)
        catalog_rows(spark, "INSERT OVERWRITE TABLE bench_curve_spark SELECT * FROM bench_curve_src", False)

    def sql_insert() -> None:
        spark.sql("INSERT OVERWRITE TABLE bench_curve_sql SELECT * FROM bench_curve_src")

    def api_write() -> None:
        bucketkit.write(rows, "k", BUCKETS, path=str(root / "api"), mode="overwrite")

    goal = 0.8 if n >= 10_000_000 else 1.2
    runs = 5
    notes = f"{n:,} rows (bigint, int, string), {BUCKETS} buckets, ORC, input in 2 partitions, 2 cores"
    out = [_medians(f"SQL INSERT OVERWRITE through the catalog ({n:,} rows)", sql_insert, spark_insert,
                    WRITE_BASELINE, notes, n, goal, runs),
           _medians(f"bucketkit.write ({n:,} rows)", api_write, spark_insert, WRITE_BASELINE, notes, n, goal, runs)]
    for table in ("bench_curve_sql",):
        assert spark.table(table).count() == n
    assert spark.read.orc(str(root / "api")).count() == n
    rows.unpersist()
    return out


def run(scale: float = 1.0) -> list[BenchResult]:
    spark = bench_session()
    saved = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    results: list[BenchResult] = []
    try:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # joins of two tables, neither broadcast
        for size in SIZES:
            n = scaled(size, scale)
            results += queries(spark, n)
            results += writes(spark, n)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", saved)
    return with_spark_memory(spark, results)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the sizes (100k, 1M, 10M rows)")
    print_results(run(parser.parse_args().scale))
