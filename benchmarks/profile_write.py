"""Where bucketkit.write's time goes: ``python -m benchmarks.profile_write [key|s] [rows]``.

bench_write's data (10M rows of key bigint, s string, d double, cached, in 2 partitions), 64
buckets, ORC. Prints wall times (best of 3 interleaved rounds) of cumulative steps, each into a
``noop`` sink: the cached input, + bucket ids, + the shuffle to 8 tasks, + sortWithinPartitions;
then ``write_staged`` (the Spark part of bucketkit.write), the whole write, Spark's Hive INSERT and
a plain ORC write. Then, for one ``write_staged`` run, the SQL metrics of each operator and the task
times of each stage from Spark's status store. Not part of ``benchmarks.run``: it informs where to
work next (RESULTS.md quotes it).
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any

from benchmarks.common import bench_session, data_dir, timed_interleaved

BUCKETS = 64


def _operator_metrics(spark: Any) -> tuple[list[str], Any]:
    """``Operator: metric: value`` for the time, size and count metrics of the last SQL execution."""
    store = spark._jsparkSession.sharedState().statusStore()
    execution = store.executionsList().last()
    values = store.executionMetrics(execution.executionId())
    nodes = store.planGraph(execution.executionId()).allNodes()
    lines = []
    for i in range(nodes.size()):
        metrics = nodes.apply(i).metrics()
        for j in range(metrics.size()):
            m = metrics.apply(j)
            value = values.get(m.accumulatorId())
            if value.isDefined() and any(w in m.name() for w in ("time", "size", "rows", "files")):
                lines.append(f"{nodes.apply(i).name()}: {m.name()}: {value.get()}".replace("\n", " "))
    return lines, execution


def _stage_lines(spark: Any, execution: Any) -> list[str]:
    store = spark.sparkContext._jsc.sc().statusStore()
    stage_ids = set()
    jobs = execution.jobs().keys().iterator()
    while jobs.hasNext():
        ids = store.job(jobs.next()).stageIds()
        stage_ids.update(ids.apply(k) for k in range(ids.size()))
    lines = []
    for sid in sorted(stage_ids):
        st = store.lastStageAttempt(sid)
        if not st.completionTime().isDefined():
            continue  # skipped
        wall = (st.completionTime().get().getTime() - st.submissionTime().get().getTime()) / 1000
        lines.append(f"stage {sid}: {st.numTasks()} tasks, wall {wall:.2f} s, task time {st.executorRunTime() / 1000:.2f} s "
                     f"(CPU {st.executorCpuTime() / 1e9:.2f} s, GC {st.jvmGcTime() / 1000:.2f} s), shuffle write "
                     f"{st.shuffleWriteBytes() / 2**20:.0f} MiB in {st.shuffleWriteTime() / 1e9:.2f} s, shuffle read "
                     f"{st.shuffleReadBytes() / 2**20:.0f} MiB, output {st.outputBytes() / 2**20:.0f} MiB")
    return lines


def main(key: str = "key", n: int = 10_000_000) -> None:
    from pyspark.sql import functions as F

    import bucketkit
    from bucketkit.spark.hashcol import with_bucket_id
    from bucketkit.spark.writer import build_spec, write_staged

    spark = bench_session()
    df = spark.range(0, n, 1, 2).select(F.xxhash64(F.col("id")).alias("key"),
                                        F.concat(F.lit("name-"), F.col("id").cast("string")).alias("s"),
                                        (F.rand(7) * 1000).alias("d")).cache()
    df.count()
    df.createOrReplaceTempView("profile_src")
    base = data_dir("profile_write")
    spec = build_spec(df.schema, [key], BUCKETS)
    spark.sql("DROP TABLE IF EXISTS profile_spark")
    spark.sql(f"CREATE TABLE profile_spark (key bigint, s string, d double) CLUSTERED BY ({key}) INTO {BUCKETS} "
              f"BUCKETS STORED AS ORC LOCATION 'file://{base / 'spark'}' TBLPROPERTIES ('orc.compress'='SNAPPY')")

    def noop(frame: Any) -> None:
        frame.write.format("noop").mode("overwrite").save()

    def with_ids() -> Any:
        return with_bucket_id(df, [key], None, 2, BUCKETS, name="_b")

    def staged() -> None:
        shutil.rmtree(base / "staged", ignore_errors=True)
        write_staged(df, spec, f"file://{base / 'staged'}", compression="snappy", num_tasks=None)

    steps = {
        "cached input": lambda: noop(df),
        "+ bucket ids": lambda: noop(with_ids()),
        "+ shuffle to 8 tasks": lambda: noop(with_ids().repartition(8, "_b")),
        "+ sortWithinPartitions": lambda: noop(with_ids().repartition(8, "_b").sortWithinPartitions("_b")),
        "write_staged (+ partitionBy ORC writer)": staged,
        "bucketkit.write (all)": lambda: bucketkit.write(df, key, BUCKETS, path=str(base / "ours"), mode="overwrite",
                                                         compression="snappy"),
        "Spark Hive INSERT": lambda: spark.sql("INSERT OVERWRITE TABLE profile_spark SELECT * FROM profile_src"),
        "plain ORC write (one file per input task)": lambda: df.write.mode("overwrite").option(
            "compression", "snappy").orc(str(base / "plain")),
    }
    for name, seconds in zip(steps, timed_interleaved(list(steps.values()), repeat=3, warmup=1)):
        print(f"{seconds:7.3f} s  {name}")
    start = time.perf_counter()
    staged()
    print(f"\none write_staged run: {time.perf_counter() - start:.3f} s")
    metrics, execution = _operator_metrics(spark)
    print("\n".join(metrics + _stage_lines(spark, execution)))


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["key"]), *[int(float(a)) for a in sys.argv[2:3]])
