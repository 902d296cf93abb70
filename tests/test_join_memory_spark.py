"""bucketkit.join above its memory budget, in Spark: the spilling path against Spark's join, and
a join that cannot fit fails (never hangs) under a capped ``spark.executor.pyspark.memory``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import bucketkit
from bucketkit.joins.plan import JOIN_TYPES

from support import background
from support.joins import write_table
from support.joins import as_df, assert_same, rows_of

COLUMNS = {"k": "bigint", "s": "string", "v": "double"}
TESTS = os.path.dirname(os.path.abspath(__file__))


def test_join_above_the_budget_option_equals_sparks_join(spark, tmp_path):
    lrows = rows_of([i % 700 for i in range(3000)] + [None] * 4, "l")
    rrows = rows_of([i % 900 for i in range(0, 2700, 2)] + [None] * 2, "r")
    lt, _ = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 2)
    rt, _ = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 4)
    spark.conf.set("spark.bucketkit.join.memory", "32k")  # the groups need ~200 KiB each: many parts
    try:
        for how in JOIN_TYPES:
            ours = bucketkit.join(spark, lt, rt, "k", how)
            ours_plan = bucketkit.plan_join(lt, rt, "k", how, spark=spark)
            assert max(g.memory for g in ours_plan.groups) > 32 * 1024
            assert_same(ours, as_df(spark, lrows).join(as_df(spark, rrows), ["k"], how))
    finally:
        spark.conf.unset("spark.bucketkit.join.memory")


_CAPPED = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from support.joins import write_table
import bucketkit
from bucketkit.spark.session import get_session

base = sys.argv[1]
cols = {"k": "bigint", "v": "double"}
n = 400_000
spread = {"k": [i % 50_000 for i in range(n)], "v": [float(i) for i in range(n)]}
hot = {"k": [7] * n, "v": [float(i) for i in range(n)]}
spark = get_session("capped", warehouse=base + "/wh", shuffle_partitions=2,
                    conf={"spark.executor.pyspark.memory": "600m", "spark.task.maxFailures": "1"})
# the Python kernel's spill and its memory error are what this child tests: at 8 rows per key a side (4 output rows
# per row read) the plan would have Spark's JVM join build the rows (docs/joins.md), and the hot key (160 billion
# pairs) would run there as long as Spark's own join runs
import bucketkit.spark.join
bucketkit.spark.join.EXPANDS = float("inf")
out = {}
lt, _ = write_table(base + "/l", spread, cols, ["k"], 2)
rt, _ = write_table(base + "/r", spread, cols, ["k"], 2)
spark.conf.set("spark.bucketkit.join.memory", "4m")
agg = ("count(*)", "sum(k)", "sum(lv)", "sum(rv)")
ours = bucketkit.join(spark, lt, rt, "k", "full").toDF("k", "lv", "rv").selectExpr(*agg).collect()[0]
theirs = (spark.read.orc(base + "/l").join(spark.read.orc(base + "/r"), ["k"], "full")
          .toDF("k", "lv", "rv").selectExpr(*agg).collect()[0])
out["spread"] = [list(ours), list(theirs)]
ht, _ = write_table(base + "/h", hot, cols, ["k"], 2)
try:
    bucketkit.join(spark, ht, ht, "k").selectExpr("count(*)").collect()
    out["hot"] = "no error"
except Exception as exc:
    out["hot"] = str(exc)
print("RESULT " + json.dumps(out))
spark.stop()
"""


def _child(tmp_path, script: str, *args: str) -> subprocess.CompletedProcess:
    """``script`` run in a process of its own (a session with Python workers capped), in ``tmp_path``."""
    path = tmp_path / "child.py"
    path.write_text(script)
    return subprocess.run([sys.executable, str(path), str(tmp_path), TESTS, *args], capture_output=True, text=True,
                          timeout=420, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


@pytest.mark.spark
def test_capped_workers_spill_or_fail_never_hang(tmp_path):
    proc = child_result("test_capped_workers_spill_or_fail_never_hang", tmp_path)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    ours, theirs = out["spread"]
    assert ours == theirs and ours[0] == 400_000 * 8  # 8 rows a side per key: 64 pairs per key
    assert "JoinMemoryError" in out["hot"] and "bucket group" in out["hot"]
    assert "spark.bucketkit.join.memory=4.0 MiB" in out["hot"] and "Remedy" in out["hot"]


_JVM = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from support.joins import write_table
import bucketkit
from bucketkit.spark.session import get_session

base = sys.argv[1]
cols = {"k": "bigint", "v": "double"}
n = 200_000
left = {"k": [(i * 7919) % 60_000 - 30_000 for i in range(n)], "v": [float(i) for i in range(n)]}
right = {"k": [i % 90_000 - 45_000 for i in range(0, n, 2)], "v": [float(i) for i in range(0, n, 2)]}
spark = get_session("capped", warehouse=base + "/wh", shuffle_partitions=2,
                    conf={"spark.executor.pyspark.memory": sys.argv[3], "spark.task.maxFailures": "1"})
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
lt, _ = write_table(base + "/l", left, cols, ["k"], 4)
rt, _ = write_table(base + "/r", right, cols, ["k"], 8)
plan = bucketkit.plan_join(lt, rt, "k", spark=spark)
out = {"strategy": plan.strategy, "reason": plan.reason, "rows": {}}
agg = ("count(*)", "sum(k)", "sum(lv)", "sum(rv)", "count(lv)", "count(rv)")
for how in ("inner", "full", "left", "right"):
    df = bucketkit.join(spark, lt, rt, "k", how, left_filters=[("k", ">", -20_000)] if how == "left" else None)
    ours = df.toDF("k", "lv", "rv").selectExpr(*agg)
    l, r = spark.read.orc(base + "/l"), spark.read.orc(base + "/r")
    l = l.where("k > -20000") if how == "left" else l
    theirs = l.join(r, ["k"], how).toDF("k", "lv", "rv").selectExpr(*agg)
    out["rows"][how] = [list(ours.collect()[0]), list(theirs.collect()[0])]
    if how == "inner":
        ours.collect()
        out["plan"] = ours._jdf.queryExecution().executedPlan().toString()
print("RESULT " + json.dumps(out))
spark.stop()
"""


_CHILDREN = {"test_capped_workers_spill_or_fail_never_hang": (_CAPPED,),
             "test_a_worker_too_small_for_a_join_task_has_the_jvm_join_the_buckets": (_JVM, "500m")}


def queue_background(names: set[str], tmp_path_factory) -> None:
    """The selected tests' child processes, beside the suite (tests/support/background.py)."""
    for name in sorted(names & set(_CHILDREN)):
        background.start(name, _child, tmp_path_factory.mktemp("capped"), *_CHILDREN[name])


def child_result(name: str, tmp_path) -> subprocess.CompletedProcess:
    return background.result(name, _child, tmp_path, *_CHILDREN[name])


@pytest.mark.spark
def test_a_worker_too_small_for_a_join_task_has_the_jvm_join_the_buckets(tmp_path):
    """spark.executor.pyspark.memory=500m leaves a Python worker a few MiB once it has started (the
    issue's 12M x 12M case failed with a 1.2 MiB budget): the plan says "jvm" and why, and Spark joins
    the bucketed scans of the two directories in the JVM, rows equal to Spark's own join, no shuffle
    of either side (4 x 8 buckets, negative keys, a filtered side)."""
    proc = child_result("test_a_worker_too_small_for_a_join_task_has_the_jvm_join_the_buckets", tmp_path)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT "):])
    assert out["strategy"] == "jvm", out["reason"]
    assert "spark.executor.pyspark.memory" in out["reason"] and "in the JVM" in out["reason"]
    for how, (ours, theirs) in out["rows"].items():
        assert ours == theirs and ours[0] > 0, how
    assert "hashpartitioning" not in out["plan"] and "BatchScan" in out["plan"], out["plan"]
