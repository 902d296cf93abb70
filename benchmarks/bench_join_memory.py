"""Join memory benchmark: groups far larger than a capped Python worker, vs Spark's join, same run.

Two tables of N rows (default 20M; ``--scale``) like bench_join's (``k bigint`` uniform in [0, N),
``s string``, ``d double``), written once with bucketkit.write (ORC, Hive v2) into 4 buckets, so a
bucket group holds 5M rows a side. The session caps each Python worker with
``spark.executor.pyspark.memory=600m`` (Spark sets ``RLIMIT_AS`` of the worker to it), the setting
under which the join failed (20M) or hung (12M) before the grace hash join (issue 11). A second case is issue 22's:
12M x 12M under ``500m``, where a started worker has about 1 MiB left; the plan then says ``jvm`` and
Spark joins the bucketed scans of the two directories in the JVM (no shuffle).
Query: inner join, then ``count(*), sum(l.d + r.d)``; baseline: Spark's shuffle join over the same
ORC files (broadcast off), timed in alternating rounds. Peak worker RSS: the largest ``VmHWM`` of
the JVM's Python worker processes.

``--engines`` also measures the kernel alone on one group, each engine in a fresh process (time and
peak RSS): bucketkit in memory, bucketkit's grace hash join at a budget, and duckdb with a memory
limit and a spill directory fed the same Arrow batches (if duckdb is importable).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks.bench_join import aggregate, write_pair
from benchmarks.common import (BenchResult, bench_session, data_dir, descendants, jvm_pid, peak_rss_mb, print_results,
                               scaled, timed_interleaved)

BUCKETS = 4
PYSPARK_MEMORY = "600m"
#: (rows a side, spark.executor.pyspark.memory): groups spilled by the Python join under 600m; and the
#: issue-22 case, 12M x 12M under 500m, where a worker has ~1 MiB left and the JVM joins the buckets.
CASES = ((20_000_000, "600m"), (12_000_000, "500m"))


def prepare(spark: Any, n: int) -> dict[str, str]:
    """Write the two tables once per size; later runs reuse them."""
    return write_pair(spark, data_dir(f"join-memory-{n}"), BUCKETS, n)


def capped_session(cap: str = PYSPARK_MEMORY) -> Any:
    """The benchmark session with each Python worker capped; a session with another cap is restarted."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and active.conf.get("spark.executor.pyspark.memory", None) != cap:
        active.stop()
    return bench_session(conf={"spark.executor.pyspark.memory": cap})


def run(scale: float = 1.0) -> list[BenchResult]:
    return [_case(scaled(n, scale), cap) for n, cap in CASES]


def _case(n: int, cap: str) -> BenchResult:
    import bucketkit

    spark = capped_session(cap)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    t = prepare(spark, n)
    cols = [("left", "d"), ("right", "d")]

    def ours() -> Any:
        return bucketkit.join(spark, t["left"], t["right"], "k", columns=cols).toDF("ld", "rd")

    def shuffle() -> Any:
        ldf, rdf = spark.read.orc(t["left"]), spark.read.orc(t["right"])
        return ldf.join(rdf, "k").select(ldf.d.alias("ld"), rdf.d.alias("rd"))

    plan = bucketkit.plan_join(t["left"], t["right"], "k", spark=spark)
    assert plan.strategy in ("bucketed", "jvm"), plan.reason
    start = time.perf_counter()
    first = aggregate(ours())
    first_s = time.perf_counter() - start
    assert first[0] == aggregate(shuffle())[0], "bucketkit and Spark disagree on the row count"
    t_ours, t_shuffle = timed_interleaved([lambda: aggregate(ours()), lambda: aggregate(shuffle())], repeat=3)
    pid = jvm_pid(spark)
    worker_peak = max((peak_rss_mb(p) for p in descendants(pid)), default=0.0) if pid else 0.0
    extra = {"rows": n, "first_run_s": round(first_s, 2), "pyspark_memory": cap, "strategy": plan.strategy,
             "python_workers_peak_rss_mb_max": round(worker_peak, 1),
             "jvm_peak_rss_mb": round(peak_rss_mb(pid), 1) if pid else None,
             "files_mb": round((plan.left_bytes + plan.right_bytes) / 2 ** 20, 1),
             "plan_memory_estimate_mb": round(plan.memory / 2 ** 20, 1),
             "largest_group_estimate_mb": round(max(g.memory for g in plan.groups) / 2 ** 20, 1)}
    notes = (f"{n:,} x {n:,} rows, {BUCKETS} buckets, ORC, v2, 2 cores, spark.executor.pyspark.memory={cap}; "
             f"strategy {plan.strategy}; worker peak RSS {worker_peak:.0f} MB")
    label = f"join inner+agg {BUCKETS}x{BUCKETS} buckets, capped workers"
    if cap != PYSPARK_MEMORY:
        label += f" ({cap}, {n // 1_000_000}M rows)"
    return BenchResult(label, t_ours, t_shuffle, "Spark shuffle join, same files", notes, extra, goal_ratio=0.8)


# -- the kernel alone, engine by engine --------------------------------------------------------------

_ENGINE = r"""
import json, resource, sys, time
import pyarrow as pa
engine, left, right, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import bucketkit
from bucketkit.joins.execute import build_exec, execute_group
from bucketkit.joins.memory import Budget
from bucketkit.joins.spill import SpillStats
plan = bucketkit.plan_join(left, right, "k")
ex = build_exec(plan, [("left", "d"), ("right", "d")])
g = plan.groups[0]
start = time.perf_counter()
rows, stats = 0, SpillStats()
if engine == "duckdb":
    import duckdb, tempfile
    con = duckdb.connect(config={"memory_limit": f"{budget // 2**20}MB", "threads": 1,
                                 "temp_directory": tempfile.mkdtemp(), "preserve_insertion_order": False})
    lr = pa.RecordBatchReader.from_batches(ex.left.read_schema, ex.left.stream(g.left_files, 65536))
    rr = pa.RecordBatchReader.from_batches(ex.right.read_schema, ex.right.stream(g.right_files, 65536))
    con.register("l", lr)
    con.register("r", rr)
    out = con.execute("select l.d as ld, r.d as rd from l join r on l.k = r.k").to_arrow_reader(65536)
    for b in out:
        rows += b.num_rows
else:
    for b in execute_group(ex, g, stats, Budget(budget, "benchmark")):
        rows += b.num_rows
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"engine": engine, "rows": rows, "seconds": round(seconds, 3), "peak_rss_mb": round(peak, 1),
                  "parts": stats.parts_joined, "spilled_mb": round(stats.bytes_spilled / 2**20, 1)}))
"""


def compare_engines(paths: dict[str, str], budget_mb: int = 64) -> list[dict]:
    """Join the first group of the tables alone, once per engine, each in a fresh process."""
    runs = [("bucketkit-in-memory", 2 ** 40), ("bucketkit-grace", budget_mb * 2 ** 20),
            ("duckdb", max(budget_mb, 100) * 2 ** 20)]
    out = []
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_ENGINE)
    for engine, budget in runs:
        proc = subprocess.run([sys.executable, f.name, engine,
                               paths["left"], paths["right"], str(budget)], capture_output=True, text=True,
                              timeout=900)
        if proc.returncode:
            out.append({"engine": engine, "error": proc.stderr.strip().splitlines()[-1:]})
        else:
            out.append({**json.loads(proc.stdout.strip().splitlines()[-1]), "engine": engine,
                        "budget_mb": budget // 2 ** 20 if budget < 2 ** 40 else None})
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of 20M rows per table")
    parser.add_argument("--engines", action="store_true", help="only the kernel alone, engine by engine")
    parser.add_argument("--budget-mb", type=int, default=64, help="budget of the grace join in --engines")
    args = parser.parse_args()
    if args.engines:
        n = scaled(20_000_000, args.scale)
        paths = {"left": str(data_dir(f"join-memory-{n}") / "left"), "right": str(data_dir(f"join-memory-{n}") / "right")}
        for row in compare_engines(paths, args.budget_mb):
            print(json.dumps(row))
    else:
        print_results(run(args.scale))
