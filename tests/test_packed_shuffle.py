"""A bucketkit write's shuffle moves its rows packed (io.bucketkit.rules.PackedShuffle, docs/writing.md).

Golden data never comes from the packing: each write is compared, file by file, with the same write
with the packing off (Spark's own shuffle moves the rows), and the table's rows with the source as
Spark reads it with the catalog off. The rows fill several buffers per task, some are larger than a
buffer (1 MB), and some keys are NULL.
"""

from __future__ import annotations

from contextlib import contextmanager

import pyarrow.orc as orc
import pytest
from support.files import data_files
from support.sparkown import final_plan, last_plan, spark_rows

import bucketkit
from bucketkit.layout.naming import bucket_of

pytestmark = pytest.mark.spark

SWITCH = "spark.bucketkit.packedWriteShuffle"
SOURCE = """SELECT IF(id % 13 = 0, NULL, CAST((id * 7919) % 5000 AS BIGINT)) AS k,
                   CONCAT(REPEAT('x', CAST(id % 300 AS INT)), CAST(id AS STRING)) AS v,
                   CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE NULL END AS p
            FROM range(120000)
            UNION ALL
            SELECT id AS k, REPEAT('y', 1500000) AS v, 'a' AS p FROM range(3)"""


@contextmanager
def packing(spark, on: bool):
    spark.conf.set(SWITCH, str(on).lower())
    try:
        yield
    finally:
        spark.conf.unset(SWITCH)


@pytest.fixture(scope="module")
def src(spark):
    spark.sql(SOURCE).repartition(2).createOrReplaceTempView("packed_src")
    return "packed_src"


@pytest.fixture(scope="module")
def src_rows(spark, src):
    """The source's rows as Spark's own plan reads them (the golden rows of every insert of it), read once."""
    return spark_rows(spark, f"SELECT * FROM {src}")


def files_and_rows(root) -> dict[tuple[str, int], list]:
    """Every data file under ``root`` (as its directory relative to it and its bucket) with its rows, in one order."""
    out = {}
    for f in data_files(root):
        key = (str(f.parent.relative_to(root)), bucket_of(f.name))
        assert key not in out, f"two files of bucket {key}"
        out[key] = sorted(orc.read_table(str(f)).to_pylist(), key=repr)
    return out


@pytest.mark.parametrize("partitioned", [False, True])
def test_sql_insert_packed_writes_the_files_of_the_plain_shuffle(spark, src, src_rows, tmp_path, partitioned):
    cols = "k BIGINT, v STRING" if partitioned else "k BIGINT, v STRING, p STRING"
    roots = {}
    for on in (False, True):
        name = f"packed_{'part' if partitioned else 'flat'}_{'on' if on else 'off'}"
        roots[on] = tmp_path / name
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} ({cols}) {'PARTITIONED BY (p STRING)' if partitioned else ''} "
                  f"CLUSTERED BY (k) INTO 16 BUCKETS STORED AS ORC LOCATION '{roots[on]}' "
                  f"TBLPROPERTIES ('bucketing_version'='2')")
        with packing(spark, on):
            spark.sql(f"INSERT INTO {name} SELECT k, v, p FROM {src}")
        plan = last_plan(spark, f"default.{name}")
        assert ("PackRows" in plan and "UnpackRows" in plan) == on, plan
        assert spark_rows(spark, f"SELECT k, v, p FROM {name}") == src_rows
    plain, packed = files_and_rows(roots[False]), files_and_rows(roots[True])
    assert len(plain) >= 16 and sorted(plain) == sorted(packed)
    for name, rows in plain.items():
        assert packed[name] == rows, name


def test_bucketkit_write_packed_writes_the_files_of_the_plain_shuffle(spark, src, tmp_path):
    df = spark.table(src)
    buckets = {}
    for on in (False, True):
        with packing(spark, on):
            result = bucketkit.write(df, "k", 16, path=str(tmp_path / str(on)))
        assert ("PackRows" in last_plan(spark, "bucketkit staged write")) == on
        buckets[on] = {f.bucket: sorted(orc.read_table(f.path).to_pylist(), key=repr) for f in result.files}
    assert sorted(buckets[False]) == sorted(buckets[True]) == list(range(16))
    for bucket, rows in buckets[False].items():
        assert buckets[True][bucket] == rows, bucket
    assert sum(len(r) for r in buckets[True].values()) == df.count()


@pytest.mark.parametrize("tasks", [8, 300])  # 300: above Spark's bypass-merge threshold, smaller buffers
def test_every_row_reaches_the_task_sparks_own_shuffle_sends_it_to(spark, src, tasks):
    """The packed shuffle keeps the clustering it replaces: every row in the task Spark's hash partitioning
    of the bucket id picks (what the plan says downstream), not merely with the rows of its bucket."""
    from pyspark.sql import functions as F

    from bucketkit.spark.hashcol import bucket_id_column

    bucket = bucket_id_column(["k"], ["bigint"], 2, 512, spark=spark)
    placed = {}
    for on in (False, True):
        with packing(spark, on):
            df = spark.table(src).repartition(tasks, bucket).select(F.spark_partition_id(), "k", F.length("v"))
            placed[on] = sorted((tuple(r) for r in df.collect()), key=repr)
            assert ("PackRows" in final_plan(df)) == on
    assert placed[True] == placed[False]
    assert len({t for t, *_ in placed[True]}) > 1


@pytest.mark.parametrize("tasks, packed", [(2048, True), (2049, False)])
def test_a_shuffle_into_more_tasks_than_the_buffer_budget_allows_stays_plain(spark, src, tasks, packed):
    """32 MB of buffers a map task, none smaller than 16 KB: up to 2,048 tasks."""
    from bucketkit.spark.hashcol import bucket_id_column

    bucket = bucket_id_column(["k"], ["bigint"], 2, 4096, spark=spark)
    plan = spark.table(src).repartition(tasks, bucket)._jdf.queryExecution().executedPlan().toString()
    assert ("PackRows" in plan) == packed, plan


def test_a_coalesced_packed_shuffle_still_clusters_what_follows(spark, src):
    """Adaptive execution coalesces a shuffle by columns into fewer tasks; the rows keep the clustering, so
    an aggregate on the bucket id over it needs no second Exchange, as over Spark's own shuffle."""
    from pyspark.sql import functions as F

    from bucketkit.spark.hashcol import bucket_id_column

    bucket = bucket_id_column(["k"], ["bigint"], 2, 64, spark=spark)
    results = {}
    for on in (False, True):
        with packing(spark, on):
            df = spark.table(src).repartition(bucket).groupBy(bucket.alias("b")).agg(F.count("*"), F.sum("k"))
            results[on] = sorted(tuple(r) for r in df.collect())
            plan = final_plan(df)
            assert ("PackRows" in plan) == on, plan
            assert plan.count("Exchange") == 1 and "coalesced" in plan, plan
    assert results[True] == results[False] and len(results[True]) == 64


def _last_stage_tasks(spark) -> int:
    tracker = spark.sparkContext.statusTracker()
    job = tracker.getJobInfo(max(tracker.getJobIdsForGroup(None)))
    return tracker.getStageInfo(max(job.stageIds)).numTasks


def test_a_small_partitioned_insert_is_written_by_as_many_tasks_as_the_session_has_cores(spark, tmp_path):
    """Adaptive execution coalesces a small write's shuffle into one task (by bytes); its cost follows its files,
    so the packed shuffle is read again in as many tasks as the session's parallelism (local[2]: 2)."""
    cores = spark.sparkContext.defaultParallelism
    spark.range(2000).selectExpr("id * 7919 % 1000 AS k", "CAST(id AS STRING) AS v",
                                 "CAST(id % 3 AS STRING) AS p").createOrReplaceTempView("packed_small")
    tasks = {}
    for on in (False, True):
        name = f"packed_small_{'on' if on else 'off'}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} (k BIGINT, v STRING) PARTITIONED BY (p STRING) CLUSTERED BY (k) "
                  f"INTO 16 BUCKETS STORED AS ORC LOCATION '{tmp_path / name}' TBLPROPERTIES ('bucketing_version'='2')")
        with packing(spark, on):
            spark.sql(f"INSERT INTO {name} SELECT k, v, p FROM packed_small")
        tasks[on] = _last_stage_tasks(spark)
        assert spark_rows(spark, f"SELECT k, v, p FROM {name}") == spark_rows(spark, "SELECT * FROM packed_small")
        assert len(files_and_rows(tmp_path / name)) == 48  # one file per (partition, bucket): 3 x 16
    assert tasks == {False: 1, True: cores}, tasks
