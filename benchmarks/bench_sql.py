"""SQL benchmark: Spark SQL through bucketkit's catalog vs Spark's own plan of the same query, same run.

The rows of bench_join.py (``k bigint`` uniform in [0, N), ``s string``, ``d double``; N = 10M by
default, ``--scale``) written once by bucketkit.write (ORC, Hive bucketing v2, 64 buckets) and
registered as external Hive tables over those files. Queries, as SQL text:

    join:     SELECT count(*), sum(l.d + r.d) FROM l JOIN r ON l.k = r.k
    group by: SELECT count(*), sum(n) FROM (SELECT k, count(*) AS n FROM l GROUP BY k)
    copy:     INSERT OVERWRITE TABLE c SELECT * FROM l (c bucketed alike: no shuffle, WriteFromAlikeBuckets)
              vs the same INSERT with spark.bucketkit.writeFromAlikeBuckets=false (the shuffle it replaces;
              Spark alone cannot write a v2 table)
    text:     INSERT OVERWRITE TABLE t SELECT * FROM src, t a v1 TEXTFILE table of 64 buckets, at 100k and 2M
              rows: bucketkit's writer (catalog on) vs Spark's own Hive writer (catalog off), same rows

Compared: the same SQL with the catalog on (a storage-partitioned join: checked to have no
hash-partitioning Exchange) and off (``spark.bucketkit.catalog.enabled=false``: Spark's own
shuffle plan over the same files); the join also beside ``bucketkit.join`` on the same tables.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from benchmarks.bench_join import aggregate, write_pair
from benchmarks.common import BenchResult, bench_session, data_dir, print_results, scaled, timed_interleaved

BUCKETS = 64
SWITCH = "spark.bucketkit.catalog.enabled"
JOIN = "SELECT count(*), sum(l.d + r.d) FROM {l} l JOIN {r} r ON l.k = r.k"
GROUP = "SELECT count(*), sum(n) FROM (SELECT k, count(*) AS n FROM {l} GROUP BY k)"


def prepare(spark: Any, n: int) -> dict[str, str]:
    """Write the two tables once per size and (re)register them in the catalog."""
    paths = write_pair(spark, data_dir(f"sql-{n}"), BUCKETS, n, ("left64", "right64"))
    names = {side: f"bench_sql_{side}_{n}" for side in paths}
    for side, name in names.items():
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE EXTERNAL TABLE {name} (k BIGINT, s STRING, d DOUBLE) CLUSTERED BY (k) INTO {BUCKETS} "
                  f"BUCKETS STORED AS ORC LOCATION '{paths[side]}' TBLPROPERTIES ('bucketing_version'='2')")
    return {**paths, **names}


def _sql(spark: Any, text: str, catalog: bool) -> tuple:
    spark.conf.set(SWITCH, str(catalog).lower())
    try:
        return tuple(spark.sql(text).collect()[0])
    finally:
        spark.conf.unset(SWITCH)


def _plan(spark: Any, text: str) -> str:
    df = spark.sql(text)
    df.collect()
    return df._jdf.queryExecution().executedPlan().toString()


def run(scale: float = 1.0) -> list[BenchResult]:
    import bucketkit

    n = scaled(10_000_000, scale)
    spark = bench_session()
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    t = prepare(spark, n)
    join, group = JOIN.format(l=t["left"], r=t["right"]), GROUP.format(l=t["left"])
    for text in (join, group):  # the catalog's plans shuffle no rows by key (the global sum gathers one row per task)
        plan = _plan(spark, text)
        assert "hashpartitioning" not in plan and "BatchScan" in plan, plan
    for text in (join, group):  # counts exactly; sums of doubles up to the order of addition
        ours, spark_s = _sql(spark, text, True), _sql(spark, text, False)
        assert ours[0] == spark_s[0] and math.isclose(ours[1], spark_s[1], rel_tol=1e-9), (text, ours, spark_s)

    def ours_join() -> Any:
        return aggregate(bucketkit.join(spark, t["left"], t["right"], "k", columns=[("left", "d"), ("right", "d")])
                    .toDF("ld", "rd"))

    notes = f"{n:,} x {n:,} rows, ORC, v2, {BUCKETS} buckets, 2 cores"
    t_sql, t_spark, t_bk = timed_interleaved(
        [lambda: _sql(spark, join, True), lambda: _sql(spark, join, False), ours_join], repeat=3)
    t_sql_group, t_spark_group = timed_interleaved(
        [lambda: _sql(spark, group, True), lambda: _sql(spark, group, False)], repeat=3)
    return [
        *(text_insert(spark, scaled(size, scale)) for size in (100_000, 2_000_000)),
        copy_alike(spark, t["left"], n),
        BenchResult(f"SQL join+agg {BUCKETS}x{BUCKETS} via catalog", t_sql, t_spark,
                    "Spark SQL shuffle join, same files", notes, {"rows": n}, goal_ratio=0.6),
        BenchResult(f"SQL join+agg {BUCKETS}x{BUCKETS} via catalog", t_sql, t_bk,
                    "bucketkit.join, same tables", notes, {"rows": n}),
        BenchResult(f"SQL GROUP BY k via catalog ({BUCKETS} buckets)", t_sql_group, t_spark_group,
                    "Spark SQL GROUP BY k, same files", f"{n:,} rows, ORC, v2, 2 cores", {"rows": n}),
    ]


def text_insert(spark: Any, n: int) -> BenchResult:
    """INSERT OVERWRITE into a v1 TEXTFILE table (Hive's default format): bucketkit's writer (the table's serde, one
    file per bucket, one commit) against Spark's own Hive writer, the one writer of such tables before."""
    source = f"bench_sql_text_src_{n}"
    spark.range(n).selectExpr("CAST(id % 1000003 AS INT) AS k", "CONCAT('value-', id) AS v", "id * 0.5 AS d") \
        .createOrReplaceTempView(source)
    spark.table(source).cache().count()
    targets = {catalog: f"bench_sql_text_{'ours' if catalog else 'spark'}_{n}" for catalog in (True, False)}
    for target in targets.values():
        spark.sql(f"DROP TABLE IF EXISTS {target}")
        spark.sql(f"CREATE TABLE {target} (k INT, v STRING, d DOUBLE) CLUSTERED BY (k) INTO {BUCKETS} BUCKETS "
                  f"STORED AS TEXTFILE TBLPROPERTIES ('bucketing_version'='1')")

    def insert(catalog: bool) -> None:
        spark.conf.set(SWITCH, str(catalog).lower())
        try:
            spark.sql(f"INSERT OVERWRITE TABLE {targets[catalog]} SELECT * FROM {source}")
        finally:
            spark.conf.unset(SWITCH)

    t_ours, t_spark = timed_interleaved([lambda: insert(True), lambda: insert(False)], repeat=3)
    counts = {c: _sql(spark, f"SELECT count(*), sum(k) FROM {t}", False) for c, t in targets.items()}
    assert counts[True] == counts[False] and counts[True][0] == n, counts
    spark.table(source).unpersist()
    for target in targets.values():
        spark.sql(f"DROP TABLE IF EXISTS {target}")
    return BenchResult(f"SQL INSERT OVERWRITE into a TEXTFILE table ({n:,} rows, {BUCKETS} buckets)", t_ours, t_spark,
                       "Spark's own Hive INSERT (catalog off), same rows", f"{n:,} rows, TEXTFILE, v1, 2 cores",
                       {"rows": n}, goal_ratio=1.0)


def copy_alike(spark: Any, source: str, n: int) -> BenchResult:
    """INSERT OVERWRITE from a table bucketed alike: the source's buckets written as they are vs shuffled."""
    target = f"bench_sql_copy_{n}"
    spark.sql(f"DROP TABLE IF EXISTS {target}")
    spark.sql(f"CREATE TABLE {target} (k BIGINT, s STRING, d DOUBLE) CLUSTERED BY (k) INTO {BUCKETS} BUCKETS "
              f"STORED AS ORC TBLPROPERTIES ('bucketing_version'='2')")
    insert = f"INSERT OVERWRITE TABLE {target} SELECT * FROM {source}"
    setting = "spark.bucketkit.writeFromAlikeBuckets"
    assert "Exchange" not in spark.sql(f"EXPLAIN {insert}").first()[0]

    def copy(shuffle: bool) -> None:
        spark.conf.set(setting, str(not shuffle).lower())
        try:
            spark.sql(insert)
        finally:
            spark.conf.unset(setting)

    t_copy, t_shuffled = timed_interleaved([lambda: copy(False), lambda: copy(True)], repeat=3)
    assert spark.table(target).count() == n
    spark.sql(f"DROP TABLE IF EXISTS {target}")
    return BenchResult(f"SQL INSERT OVERWRITE from a table bucketed alike ({BUCKETS} buckets)", t_copy, t_shuffled,
                       "the same INSERT, shuffled by bucket", f"{n:,} rows, ORC, v2, 2 cores", {"rows": n})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of 10M rows per table")
    print_results(run(parser.parse_args().scale))
