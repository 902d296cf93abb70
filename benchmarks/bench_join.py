"""Join benchmark: bucketkit.join vs Spark's shuffle join and Spark's own bucketed join, same run.

Two tables of N rows (default 10M; ``--scale``): ``k bigint`` (uniform in [0, N), so about one
match per row), ``s string``, ``d double``; written once with bucketkit.write (ORC, Hive
bucketing v2) into 64 buckets (left and right) and 256 buckets (right), plus ``bucketBy(64, k)
.sortBy(k)`` catalog copies of the same rows for Spark's native bucketed join. Query: inner join
then ``count(*), sum(l.d + r.d)``.

Compared:
    (a) Spark's shuffle join over the same ORC files (``spark.read.orc``, broadcast off);
    (b) Spark's bucketed join over the ``bucketBy`` copies (checked: no Exchange in its plan);
    also 64 x 256 buckets (a multiple) and a left outer join, each against (a).
Peak memory: VmHWM of the JVM and of the Python worker processes. A profile of the kernel alone
(read vs join, in this process, no Spark) says where bucketkit's time goes.

``--repeated-keys``: joins whose keys repeat on both sides (:func:`repeated_keys`), where the output outnumbers the
rows read and the plan hands the join to Spark's JVM join of the bucketed scans.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from benchmarks.common import (BenchResult, bench_session, data_dir, print_results, scaled, timed_interleaved,
                               with_spark_memory)

BUCKETS, MULTIPLE = 64, 256


def _rows_df(spark: Any, n: int, seed: int, keys: int | None = None) -> Any:
    """``n`` rows whose ``k`` is spread over ``keys`` values (default ``n``: about one row per key)."""
    from pyspark.sql import functions as F

    return (spark.range(n)
            .select((F.abs(F.xxhash64(F.col("id"), F.lit(seed))) % (keys or n)).alias("k"),
                    F.concat(F.lit("s"), F.col("id").cast("string")).alias("s"),
                    (F.rand(seed) * 100).alias("d")))


def write_pair(spark: Any, root: Any, buckets: int, n: int,
               dirs: tuple[str, str] = ("left", "right"), keys: int | None = None) -> dict[str, str]:
    """``{"left": path, "right": path}``: ``n`` rows each (seeds 1 and 2, ``k`` over ``keys`` values) bucketed by
    ``k`` into ``buckets``, written under ``root`` once per size; later runs reuse them."""
    import bucketkit

    paths = {"left": str(root / dirs[0]), "right": str(root / dirs[1])}
    marker = root / "READY"
    if not marker.exists():
        for side, seed in (("left", 1), ("right", 2)):
            bucketkit.write(_rows_df(spark, n, seed, keys), "k", buckets, path=paths[side], mode="overwrite")
        marker.write_text(str(n))
    return paths


def prepare(spark: Any, n: int) -> dict[str, str]:
    """Write the tables once per size; later runs reuse them."""
    import bucketkit

    root = data_dir(f"join-{n}")
    paths = {"left": str(root / "left64"), "right": str(root / "right64"), "right256": str(root / "right256")}
    names = {"bk_left": f"bench_join_bk_left_{n}", "bk_right": f"bench_join_bk_right_{n}"}
    marker = root / "READY"
    tables_there = all(spark.catalog.tableExists(t) for t in names.values())
    if not marker.exists() or not tables_there:
        left, right = _rows_df(spark, n, 1).cache(), _rows_df(spark, n, 2).cache()
        bucketkit.write(left, "k", BUCKETS, path=paths["left"], mode="overwrite")
        bucketkit.write(right, "k", BUCKETS, path=paths["right"], mode="overwrite")
        bucketkit.write(right, "k", MULTIPLE, path=paths["right256"], mode="overwrite")
        for df, name in ((left, names["bk_left"]), (right, names["bk_right"])):
            spark.sql(f"DROP TABLE IF EXISTS {name}")
            df.write.format("orc").bucketBy(BUCKETS, "k").sortBy("k").saveAsTable(name)
        left.unpersist()
        right.unpersist()
        marker.write_text(str(n))
    return {**paths, **names}


def aggregate(df: Any) -> tuple:
    from pyspark.sql import functions as F

    return tuple(df.agg(F.count(F.lit(1)), F.sum(F.col("ld") + F.col("rd"))).collect()[0])


def _profile_kernel(plan: Any) -> dict[str, float]:
    """Time the pyarrow kernel alone over every group: reading vs joining (no Spark)."""
    from bucketkit.joins.execute import build_exec, hash_join

    ex = build_exec(plan, [("left", "d"), ("right", "d")])
    g0 = plan.groups[0]
    hash_join(ex.left.read(g0.left_files), ex.right.read(g0.right_files), ex)  # numba compiles or loads its cache
    read_s = join_s = 0.0
    for g in plan.groups:
        t0 = time.perf_counter()
        lt, rt = ex.left.read(g.left_files), ex.right.read(g.right_files)
        t1 = time.perf_counter()
        hash_join(lt, rt, ex)
        t2 = time.perf_counter()
        read_s, join_s = read_s + t1 - t0, join_s + t2 - t1
    return {"kernel_read_s": round(read_s, 3), "kernel_join_s": round(join_s, 3)}


def run(scale: float = 1.0) -> list[BenchResult]:
    import bucketkit

    n = scaled(10_000_000, scale)
    spark = bench_session()
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    spark.conf.set("spark.sql.sources.bucketing.enabled", "true")
    t = prepare(spark, n)
    cols = [("left", "d"), ("right", "d")]

    plans = {(right, how): bucketkit.plan_join(t["left"], t[right], "k", how, spark=spark)
             for right, how in (("right", "inner"), ("right256", "inner"), ("right", "left"))}
    for plan in plans.values():  # checked once, outside the timed calls (join plans for itself)
        assert plan.strategy == "bucketed", plan.reason

    def ours(right: str, how: str = "inner") -> Any:
        return bucketkit.join(spark, t["left"], t[right], "k", how, columns=cols).toDF("ld", "rd")

    def shuffle(right: str, how: str = "inner") -> Any:
        ldf, rdf = spark.read.orc(t["left"]), spark.read.orc(t[right])
        return ldf.join(rdf, "k", how).select(ldf.d.alias("ld"), rdf.d.alias("rd"))

    def native(how: str = "inner") -> Any:
        ldf, rdf = spark.table(t["bk_left"]), spark.table(t["bk_right"])
        df = ldf.join(rdf, "k", how).select(ldf.d.alias("ld"), rdf.d.alias("rd"))
        return df

    native_plan = native()._jdf.queryExecution().executedPlan().toString()
    native_ok = "Exchange" not in native_plan
    ours_df = ours("right")
    assert "Exchange" not in ours_df._jdf.queryExecution().executedPlan().toString()
    assert aggregate(ours_df)[0] == aggregate(shuffle("right"))[0], "bucketkit and Spark disagree on the row count"

    notes = f"{n:,} x {n:,} rows, ORC, v2, 2 cores"
    results = []
    t_ours, t_shuffle, t_native = timed_interleaved(
        [lambda: aggregate(ours("right")), lambda: aggregate(shuffle("right")), lambda: aggregate(native())], repeat=3)
    extra = {"rows": n, **_profile_kernel(plans["right", "inner"])}
    results.append(BenchResult(f"join inner+agg {BUCKETS}x{BUCKETS} buckets", t_ours, t_shuffle,
                               "Spark shuffle join, same files", notes, extra, goal_ratio=0.25))
    results.append(BenchResult(f"join inner+agg {BUCKETS}x{BUCKETS} buckets", t_ours, t_native,
                               "Spark bucketed join (bucketBy copies)" + ("" if native_ok else " [HAD Exchange]"),
                               notes, {"rows": n}, goal_ratio=0.5))
    t_ours256, t_shuffle256 = timed_interleaved(
        [lambda: aggregate(ours("right256")), lambda: aggregate(shuffle("right256"))], repeat=2)
    results.append(BenchResult(f"join inner+agg {BUCKETS}x{MULTIPLE} buckets", t_ours256, t_shuffle256,
                               "Spark shuffle join, same files", notes, {"rows": n}))
    t_ours_left, t_shuffle_left, t_native_left = timed_interleaved(
        [lambda: aggregate(ours("right", "left")), lambda: aggregate(shuffle("right", "left")), lambda: aggregate(native("left"))],
        repeat=2)
    results.append(BenchResult(f"join left outer+agg {BUCKETS}x{BUCKETS}", t_ours_left, t_shuffle_left,
                               "Spark shuffle join, same files", notes, {"rows": n}))
    results.append(BenchResult(f"join left outer+agg {BUCKETS}x{BUCKETS}", t_ours_left, t_native_left,
                               "Spark bucketed join (bucketBy copies)", notes, {"rows": n}))
    results.extend(repeated_keys(spark, scale))
    return with_spark_memory(spark, results)


#: Rows per key on each side in :func:`repeated_keys` (1: unique keys; r: r x r output rows per key).
REPEATS = (1, 3, 8, 20)


def repeated_keys(spark: Any, scale: float = 1.0, session: str = "get_session()") -> list[BenchResult]:
    """bucketkit.join of two 2M-row tables in 16 buckets whose keys repeat ``r`` times on each side (``r x r`` output
    rows per key: 0.5, 1.5, 4 and 10 output rows per row read) against Spark's shuffle join of the same files, inner join
    + aggregate of a column of each side; the label names the strategy the plan chose (the Python kernel, or Spark's
    JVM join of the bucketed scans where the output outnumbers the rows read)."""
    import bucketkit

    n = scaled(2_000_000, scale)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    cols = [("left", "d"), ("right", "d")]
    results = []
    for r in REPEATS:
        t = write_pair(spark, data_dir(f"join-repeated-{n}-{r}"), 16, n, keys=max(1, n // r))
        plan = bucketkit.plan_join(t["left"], t["right"], "k", spark=spark)

        def ours() -> tuple:
            return aggregate(bucketkit.join(spark, t["left"], t["right"], "k", columns=cols).toDF("ld", "rd"))

        def shuffle() -> tuple:
            ldf, rdf = spark.read.orc(t["left"]), spark.read.orc(t["right"])
            return aggregate(ldf.join(rdf, "k").select(ldf.d.alias("ld"), rdf.d.alias("rd")))

        out = ours()
        assert out[0] == shuffle()[0], "repeated keys: row counts differ"
        t_ours, t_spark = timed_interleaved([ours, shuffle], repeat=3)
        results.append(BenchResult(f"join inner+agg, keys x{r} each side ({out[0] / (2 * n):.1f} out/in), "
                                   f"strategy {plan.strategy}", t_ours, t_spark, "Spark shuffle join, same files",
                                   f"{n:,} x {n:,} rows, 16 buckets, ORC, {session}", {"rows": n, "output": out[0]},
                                   goal_ratio=1.0))
    return results


def checked_join(spark: Any, scale: float = 1.0, session: str = "get_session()") -> list[BenchResult]:
    """The join's read-time check (docs/joins.md, Placement): two 10M-row tables in 64 buckets that bucketkit wrote
    (vouched by their commit's record: no row re-hashed) against the same files copied without that record (every
    row's bucket re-hashed as the join reads it), inner join + aggregate (goal: the check within 5%)."""
    import shutil

    import bucketkit
    from bucketkit.layout.manifest import MANIFEST_FILE

    n = scaled(10_000_000, scale)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    root = data_dir(f"join-checked-{n}")
    vouched = write_pair(spark, root, BUCKETS, n)
    checked = {side: str(root / f"{side}-unrecorded") for side in vouched}
    for side, path in checked.items():
        if not os.path.exists(path):
            shutil.copytree(vouched[side], path, ignore=shutil.ignore_patterns(MANIFEST_FILE))
    cols = [("left", "d"), ("right", "d")]

    def join(t: dict[str, str]) -> Any:
        return lambda: aggregate(bucketkit.join(spark, t["left"], t["right"], "k", columns=cols).toDF("ld", "rd"))

    plan = bucketkit.plan_join(checked["left"], checked["right"], "k", spark=spark)
    assert plan.left_placement.startswith("checked") and join(vouched)() == join(checked)(), plan.left_placement
    t_checked, t_vouched = timed_interleaved([join(checked), join(vouched)], repeat=5)
    return [BenchResult("join inner+agg of files without a commit record (rows re-hashed)", t_checked, t_vouched,
                        "the same files vouched by their record", f"{n:,} x {n:,} rows, {BUCKETS} buckets, {session}",
                        {"rows": n}, goal_ratio=1.05)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of 10M rows per table")
    parser.add_argument("--repeated-keys", action="store_true",
                        help="only joins whose keys repeat (2M rows; the plan's strategy by output per row read)")
    parser.add_argument("--checked", action="store_true",
                        help="only the read-time check: 10M x 10M rows, vouched files against the same unrecorded")
    args = parser.parse_args()
    only = repeated_keys if args.repeated_keys else checked_join if args.checked else None
    print_results(with_spark_memory(bench_session(), only(bench_session(), args.scale)) if only else run(args.scale))
