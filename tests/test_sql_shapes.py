"""Queries that do not use the bucketing, through bucketkit's catalog: never a worse plan than Spark's.

Issue 26: with the catalog on, every query on a bucketed table used to read one task per bucket, push
no filter on other columns to the file reader, lose dynamic partition pruning and shuffle both sides of
a join with a plain table. Each test runs a query with the catalog on and the same SQL planned by Spark
alone (catalog off): rows come from Spark, plans are Spark's executed plans after the query ran.
"""

from __future__ import annotations

import re

import pytest

import bucketkit
from support.sparkown import catalog_off, final_plan, scans, spark_rows

ROWS = 3000
BUCKETS = 8
PARTS = 6


def run(spark, sql, *, broadcast=False):
    """(sorted rows, executed plan) with the catalog on, and Spark's own (rows, plan)."""

    def once():
        df = spark.sql(sql)
        rows = sorted(df.collect(), key=repr)
        return rows, final_plan(df)

    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    if not broadcast:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        rows, plan = once()
        with catalog_off(spark):
            golden, golden_plan = once()
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)
    return rows, plan, golden, golden_plan


@pytest.fixture(scope="module")
def shapes(spark):
    src = spark.sql(f"""
        SELECT CAST(id % 500 AS INT) AS k, CAST(id % 997 AS INT) AS v, CONCAT('s', CAST(id % 37 AS STRING)) AS s,
               CAST(id % {PARTS} AS INT) AS d
        FROM range({ROWS})""")
    for name in ("shp_fact", "shp_fact2", "shp_fact_p", "shp_dim", "shp_multi"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    bucketkit.write(src, "k", BUCKETS, table="shp_fact", bucketing_version=2)
    bucketkit.write(src.withColumn("v", src.v + 1), "k", BUCKETS, table="shp_fact2", bucketing_version=2)
    bucketkit.write(src, "k", BUCKETS, table="shp_fact_p", bucketing_version=2, partitioned_by="d")
    # two files in every bucket (two appends): one bucket's read packs into more than one task
    bucketkit.write(src, "k", BUCKETS, table="shp_multi", bucketing_version=2)
    bucketkit.write(src, "k", BUCKETS, table="shp_multi", bucketing_version=2, mode="append")
    # a plain (unbucketed) dimension, as star schemas have them
    spark.sql("SELECT CAST(id AS INT) AS k, CONCAT('n', CAST(id AS STRING)) AS name, CAST(id % 3 AS INT) AS d "
              "FROM range(0, 600, 2)").write.format("parquet").saveAsTable("shp_dim")
    return "shp_fact"


UNNEEDED = {
    "count": "SELECT count(*) AS n FROM shp_fact",
    "filter on another column": "SELECT * FROM shp_fact WHERE v = 123",
    "global aggregate": "SELECT count(*) AS n, max(s) AS m FROM shp_fact WHERE v < 100",
    "distinct of an expression": "SELECT count(DISTINCT substr(s, 1, 2)) AS n FROM shp_fact",
    "top k": "SELECT k, v FROM shp_fact ORDER BY v DESC, k LIMIT 5",
    # a window without PARTITION BY over Spark's top-n: the top-n gathers its rows into one partition itself
    "row_number top 2": "SELECT * FROM (SELECT k, v, row_number() OVER (ORDER BY v, k) AS rn FROM shp_fact) WHERE rn <= 2",
    "group by another column": "SELECT v % 10 AS g, count(*) AS n FROM shp_fact GROUP BY v % 10",
}


@pytest.mark.parametrize("query", list(UNNEEDED), ids=list(UNNEEDED))
def test_a_query_that_does_not_use_the_bucketing_is_packed_by_size(spark, shapes, query):
    rows, plan, golden, _ = run(spark, UNNEEDED[query])
    assert rows == golden and rows
    (scan,) = scans(plan)
    assert "packed by size" in scan, plan


@pytest.mark.parametrize("sql", [
    "SELECT count(*) AS n FROM shp_multi WHERE k = 7",
    "SELECT count(*) AS n, max(v) AS m, min(s) AS s FROM shp_multi WHERE k IN (7, 8) AND v > 0",
    "SELECT v FROM shp_multi WHERE k = 7 ORDER BY v DESC LIMIT 3",
    "SELECT count(DISTINCT v) AS n FROM shp_multi WHERE k = 7",
    "SELECT * FROM shp_multi WHERE k = 7 LIMIT 1000",
])
def test_a_global_aggregate_over_one_bucket_of_several_files_counts_every_file(spark, shapes, sql):
    """One bucket is one partition, so Spark needs no exchange before a global aggregate; a scan packed
    into several tasks there would return one partial result per task."""
    rows, plan, golden, _ = run(spark, sql)
    assert rows == golden and rows


def test_a_filter_on_another_column_is_pushed_to_the_file_reader(spark, shapes):
    _, plan, _, _ = run(spark, UNNEEDED["filter on another column"])
    (scan,) = scans(plan)
    assert re.search(r"PushedFilters: \[.*EqualTo\(v,123\)", scan), scan


def test_a_packed_scan_reads_fewer_tasks_than_buckets(spark, shapes):
    df = spark.sql("SELECT * FROM shp_fact WHERE v = 123")
    df.collect()
    (scan,) = scans(final_plan(df))
    assert df.rdd.getNumPartitions() < BUCKETS, scan


@pytest.mark.parametrize("sql", [
    "SELECT k, count(*) AS n FROM shp_fact GROUP BY k",
    "SELECT k, v, count(*) AS n FROM shp_fact GROUP BY k, v",
    "SELECT * FROM shp_fact a JOIN shp_fact2 b USING (k)",
    "SELECT * FROM shp_fact a JOIN shp_fact2 b ON a.k = b.k AND a.d = b.d",
    "SELECT * FROM shp_fact a JOIN shp_fact_p b ON a.k = b.k AND a.v = b.v",
    "SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v) AS r FROM shp_fact",
], ids=["group by k", "group by k, v", "join on k", "join on k, d", "join with a partitioned table on k, v",
        "window by k"])
def test_a_query_that_uses_the_bucketing_keeps_it(spark, shapes, sql):
    rows, plan, golden, golden_plan = run(spark, sql)
    assert rows == golden and rows
    assert "Exchange" not in plan, plan
    assert "Exchange" in golden_plan
    assert scans(plan) and not any("packed by size" in s for s in scans(plan)), plan


@pytest.mark.parametrize("how", ["INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER"])
def test_a_star_join_with_a_plain_table_shuffles_only_the_plain_side(spark, shapes, how):
    rows, plan, golden, golden_plan = run(
        spark, f"SELECT f.k, f.v, d.name FROM shp_fact f {how} JOIN shp_dim d ON f.k = d.k")
    assert rows == golden and rows
    assert golden_plan.count("Exchange hashpartitioning") == 2
    assert plan.count("Exchange") == 1, plan
    (scan,) = scans(plan)
    assert "packed by size" not in scan


BUILDS = {"INNER": "BuildRight", "LEFT OUTER": "BuildRight", "LEFT SEMI": "BuildRight", "LEFT ANTI": "BuildRight",
          "FULL OUTER": "BuildRight", "RIGHT OUTER": None}  # a right outer join cannot build its right side


@pytest.mark.parametrize("how", list(BUILDS))
def test_a_star_join_hashes_the_moved_side_and_streams_the_buckets_unsorted(spark, shapes, how):
    """HashJoinIntoBuckets: once the plain side's shuffle has run and every partition is small, the join is
    a hash join building that side; the bucketed side is not sorted. Spark's own plan stays a sort-merge join."""
    columns = "f.k, f.v" if "SEMI" in how or "ANTI" in how else "f.k, f.v, d.name"
    rows, plan, golden, golden_plan = run(spark, f"SELECT {columns} FROM shp_fact f {how} JOIN shp_dim d ON f.k = d.k")
    assert rows == golden and rows
    assert "SortMergeJoin" in golden_plan and "ShuffledHashJoin" not in golden_plan
    assert plan.count("Exchange") == 1, plan
    if BUILDS[how]:
        assert re.search(rf"ShuffledHashJoin .*{BUILDS[how]}", plan), plan
        assert "Sort [" not in plan, plan
    else:
        assert "SortMergeJoin" in plan and "ShuffledHashJoin" not in plan, plan


def test_a_star_join_with_the_plain_side_on_the_left_builds_the_left(spark, shapes):
    rows, plan, golden, _ = run(spark, "SELECT f.k, f.v, d.name FROM shp_dim d JOIN shp_fact f ON f.k = d.k")
    assert rows == golden and rows
    assert re.search(r"ShuffledHashJoin .*BuildLeft", plan), plan


@pytest.mark.parametrize("setting, hint", [("0", ""), ("1b", ""), (None, "/*+ MERGE(f) */ ")],
                         ids=["switched off", "partitions over the threshold", "a join hint"])
def test_a_star_join_stays_sort_merge(spark, shapes, setting, hint):
    if setting is not None:
        spark.conf.set("spark.bucketkit.hashJoinThreshold", setting)
    try:
        rows, plan, golden, _ = run(spark, f"SELECT {hint}f.k, f.v, d.name FROM shp_fact f JOIN shp_dim d ON f.k = d.k")
    finally:
        spark.conf.unset("spark.bucketkit.hashJoinThreshold")
    assert rows == golden and rows
    assert "SortMergeJoin" in plan and "ShuffledHashJoin" not in plan, plan
    assert plan.count("Exchange") == 1, plan


def test_a_broadcast_join_packs_the_bucketed_side(spark, shapes):
    rows, plan, golden, _ = run(spark, "SELECT f.k, f.v, d.name FROM shp_fact f JOIN shp_dim d ON f.k = d.k "
                                       "WHERE d.name = 'n10'", broadcast=True)
    assert rows == golden and rows
    assert "BroadcastHashJoin" in plan
    (scan,) = scans(plan)
    assert "packed by size" in scan


def test_dynamic_partition_pruning_reads_only_the_partitions_the_dimension_keeps(spark, shapes):
    sql = ("SELECT f.k, f.v, f.d FROM shp_fact_p f JOIN shp_dim d ON f.d = d.d WHERE d.name = 'n10'")
    with_dpp = {"spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly": "false"}
    saved = {k: spark.conf.get(k) for k in with_dpp}
    for k, v in with_dpp.items():
        spark.conf.set(k, v)
    try:
        rows, plan, golden, golden_plan = run(spark, sql, broadcast=True)
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)
    assert rows == golden and rows
    assert "dynamicpruning" in golden_plan  # Spark prunes this query at run time...
    (scan,) = scans(plan)
    assert re.search(r"RuntimeFilters: \[dynamicpruning", plan), plan  # ... and so does bucketkit's scan
    # n10 is d = 1: the metastore is asked for the partitions the run-time filter keeps, as Spark asks it
    assert "partitions=1 (pruned by the metastore)" in scan, scan


def test_a_pruning_subquery_reuses_the_joins_broadcast(spark, shapes):
    """A few partitions joined to themselves: the dynamic-pruning subquery reuses the join's broadcast, as in
    Spark's own plan, instead of scanning and broadcasting the same side a second time."""
    sql = ("SELECT count(*) AS n, sum(a.v + b.v) AS s FROM shp_fact_p a JOIN shp_fact_p b ON a.k = b.k AND a.d = b.d "
           "WHERE a.d IN (1, 2) AND b.d IN (1, 2)")
    rows, plan, golden, golden_plan = run(spark, sql, broadcast=True)
    assert rows == golden and rows[0].n > 0
    assert "SubqueryBroadcast" in golden_plan and "ReusedExchange" in golden_plan, golden_plan
    assert "SubqueryBroadcast" in plan and "ReusedExchange" in plan, plan


def test_a_runtime_filter_on_the_bucket_column_narrows_buckets(spark, shapes):
    """A semi-join's runtime filter on the bucket key keeps the rows; the scan may read fewer buckets."""
    rows, plan, golden, _ = run(spark, "SELECT count(*) AS n FROM shp_fact f WHERE f.k IN "
                                       "(SELECT k FROM shp_dim WHERE name IN ('n10', 'n20'))", broadcast=True)
    assert rows == golden and rows[0].n > 0


def test_packing_can_be_switched_off(spark, shapes):
    spark.conf.set("spark.bucketkit.packUnneededBuckets", "false")
    try:
        _, plan, _, _ = run(spark, UNNEEDED["count"])
    finally:
        spark.conf.unset("spark.bucketkit.packUnneededBuckets")
    (scan,) = scans(plan)
    assert "packed by size" not in scan


@pytest.mark.parametrize("where, same", [
    ("k IN (7, NULL)", "k = 7"),
    ("v IN (3, NULL)", "v = 3"),
    ("v = 5 OR k IN (2, NULL)", "v = 5 OR k = 2"),
    ("k NOT IN (7, NULL)", "false"),
    ("NOT (v IN (3, NULL))", "false"),
])
def test_an_in_list_holding_null_is_read_as_sql_defines_it(spark, shapes, where, same):
    """`x IN (a, NULL)` is true where `x = a`, NULL elsewhere. Spark 4.3's own plan of these fails in
    the ORC reader (a NullPointerException building its search argument), so the golden rows are
    Spark's for the equivalent predicate."""
    rows = sorted(spark.sql(f"SELECT * FROM shp_multi WHERE {where}").collect(), key=repr)
    with catalog_off(spark):
        golden = sorted(spark.sql(f"SELECT * FROM shp_multi WHERE {same}").collect(), key=repr)
    assert rows == golden


def grouped_scan(spark, setting: str | None = None, value: str | None = None) -> str:
    """The scan of GROUP BY k over shp_fact (rows equal to Spark's, no Exchange), with ``setting`` set."""
    if setting:
        spark.conf.set(setting, value)
    try:
        rows, plan, golden, _ = run(spark, "SELECT k, count(*) AS n FROM shp_fact GROUP BY k")
    finally:
        if setting:
            spark.conf.unset(setting)
    assert rows == golden and "Exchange" not in plan
    (scan,) = scans(plan)
    return scan


def test_a_small_table_reads_several_buckets_per_task(spark, shapes):
    """8 buckets of a few KB on 2 cores: the scan reports hive_v2_bucket_2(k) (bucket % 2), 4 buckets per task."""
    scan = grouped_scan(spark)
    assert "4 buckets per task (as 2 buckets)" in scan, scan
    assert "per task" not in grouped_scan(spark, "spark.bucketkit.groupBuckets", "false")


@pytest.mark.parametrize("per_task, description", [("1b", None), ("1g", "4 buckets per task (as 2 buckets)")])
def test_buckets_per_task_follow_the_bytes_a_task_reads(spark, shapes, per_task, description):
    """spark.bucketkit.groupBuckets.bytesPerTask: a task reads at most that many bytes of files (one bucket at
    least), and every core gets a task (2 cores: 2 groups however small the table)."""
    scan = grouped_scan(spark, "spark.bucketkit.groupBuckets.bytesPerTask", per_task)
    assert (description in scan) if description else ("per task" not in scan), scan


@pytest.mark.parametrize("how", ["INNER", "FULL OUTER"])
def test_tables_grouped_alike_join_without_exchange(spark, shapes, how):
    """shp_fact (8 buckets) and shp_fact_p (8 buckets, partitioned): both grouped into 2, still co-partitioned."""
    rows, plan, golden, _ = run(spark, f"SELECT a.k, a.v, b.d FROM shp_fact a {how} JOIN shp_fact_p b "
                                       f"ON a.k = b.k AND a.v = b.v")
    assert rows == golden and rows
    assert "Exchange" not in plan
    assert all("buckets per task" in s for s in scans(plan)), plan


@pytest.fixture(scope="module")
def mixed_types(spark):
    """INT bucket keys (negative too; v1 hashes a negative INT and BIGINT differently) in v1 and v2 facts, a
    BIGINT-keyed fact, and plain dimensions keyed by the other type, with values outside INT's range."""
    src = spark.sql("SELECT CAST(id - 400 AS INT) AS k, CAST(id % 97 AS INT) AS v FROM range(900)")
    for name in ("shp_int_v1", "shp_int_v2", "shp_big_v2", "shp_dim_big", "shp_dim_int"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    bucketkit.write(src, "k", BUCKETS, table="shp_int_v1", bucketing_version=1)
    bucketkit.write(src, "k", BUCKETS, table="shp_int_v2", bucketing_version=2)
    bucketkit.write(src.selectExpr("CAST(k AS BIGINT) AS k", "v"), "k", BUCKETS, table="shp_big_v2", bucketing_version=2)
    spark.sql("SELECT id * 3 - 600 + (CASE WHEN id % 11 = 0 THEN 4294967296 WHEN id % 13 = 0 THEN -4294967296 "
              "ELSE 0 END) AS k, CONCAT('n', CAST(id AS STRING)) AS name FROM range(400)") \
        .write.format("parquet").saveAsTable("shp_dim_big")
    spark.sql("SELECT CAST(id * 3 - 600 AS INT) AS k, CONCAT('n', CAST(id AS STRING)) AS name FROM range(400)") \
        .write.format("parquet").saveAsTable("shp_dim_int")


@pytest.mark.parametrize("how", ["INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI", "LEFT ANTI"])
@pytest.mark.parametrize("fact,dim", [("shp_int_v1", "shp_dim_big"), ("shp_int_v2", "shp_dim_big"),
                                      ("shp_big_v2", "shp_dim_int")])
def test_a_dimension_keyed_by_another_integer_type_moves_alone(spark, mixed_types, fact, dim, how):
    """fact.k INT = dim.k BIGINT is joined as fact.k = TRY_CAST(dim.k AS INT) (JoinInBucketType): the
    dimension is hashed into the fact's buckets as an INT; BIGINT values outside INT's range match nothing,
    as in Spark's own plan. A BIGINT fact with an INT dimension keeps Spark's CAST(d.k AS BIGINT), computed
    as a column of the dimension's side."""
    cols = "f.k, f.v" if "SEMI" in how or "ANTI" in how else "f.k, f.v, d.k AS dk, d.name"
    rows, plan, golden, golden_plan = run(spark, f"SELECT {cols} FROM {fact} f {how} JOIN {dim} d ON f.k = d.k")
    assert rows == golden and rows
    assert golden_plan.count("Exchange hashpartitioning") == 2
    assert plan.count("Exchange") == 1, plan
    assert ("try_cast" in plan) == (fact != "shp_big_v2"), plan
    # the dimension's key is a column of its side, so the join hashes the dimension (HashJoinIntoBuckets)
    assert "bucketkit_join_key" in plan, plan
    assert ("ShuffledHashJoin" in plan) == (how != "RIGHT OUTER"), plan


def test_join_in_bucket_type_can_be_switched_off(spark, mixed_types):
    spark.conf.set("spark.bucketkit.joinInBucketType", "false")
    try:
        rows, plan, golden, _ = run(spark, "SELECT f.k, d.name FROM shp_int_v2 f JOIN shp_dim_big d ON f.k = d.k")
    finally:
        spark.conf.unset("spark.bucketkit.joinInBucketType")
    assert rows == golden and rows
    assert plan.count("Exchange") == 2, plan


PAIR_BUILDS = {"INNER": "Build", "LEFT OUTER": "BuildRight", "RIGHT OUTER": "BuildLeft", "FULL OUTER": None,
               "LEFT SEMI": "BuildRight", "LEFT ANTI": "BuildRight"}  # a full outer join stays sort-merge


@pytest.mark.parametrize("how", list(PAIR_BUILDS))
def test_two_bucketed_tables_join_by_hash_unsorted(spark, shapes, how):
    """HashJoinBucketPairs: two tables joined bucket by bucket hash the side with the smaller task share, and
    neither side is sorted; rows equal Spark's own plan (a sort-merge join after shuffling both). A full outer join
    stays a sort-merge join of the buckets: Spark's full outer hash join, tracking the build rows it matched, measured
    slower than the sorts it saves (benchmarks/RESULTS.md, full outer joins)."""
    columns = "a.k, a.v" if "SEMI" in how or "ANTI" in how else "a.k, a.v, b.v AS w"
    rows, plan, golden, golden_plan = run(spark, f"SELECT {columns} FROM shp_fact a {how} JOIN shp_fact2 b "
                                                 "ON a.k = b.k AND a.v < b.v - 500")
    assert rows == golden and rows
    assert "Exchange hashpartitioning" in golden_plan and "Exchange hashpartitioning" not in plan, plan
    if PAIR_BUILDS[how]:
        assert re.search(rf"ShuffledHashJoin .*{PAIR_BUILDS[how]}", plan), plan
        assert "Sort [" not in plan, plan
    else:
        assert "SortMergeJoin" in plan and "ShuffledHashJoin" not in plan, plan


def test_a_join_whose_order_a_parent_needs_stays_sort_merge(spark, shapes):
    """Three tables on one key: the outer join reads the inner join's order (no sort of its own), so the inner
    join must stay a sort-merge join whatever the rule would pick; a window over a join keeps it too."""
    rows, plan, golden, _ = run(spark, "SELECT a.k, a.v, b.v AS w, c.v AS x FROM shp_fact a JOIN shp_fact2 b "
                                       "ON a.k = b.k JOIN shp_multi c ON a.k = c.k WHERE a.v < 50 AND c.v < 20")
    assert rows == golden and rows
    rows, plan, golden, _ = run(spark, "SELECT a.k, rank() OVER (PARTITION BY a.k ORDER BY b.v) AS r "
                                       "FROM shp_fact a JOIN shp_fact2 b ON a.k = b.k WHERE a.v < 30")
    assert rows == golden and rows


@pytest.mark.parametrize("setting", ["0", "1b"], ids=["switched off", "tasks over the threshold"])
def test_two_bucketed_tables_stay_sort_merge(spark, shapes, setting):
    spark.conf.set("spark.bucketkit.hashJoinThreshold", setting)
    try:
        rows, plan, golden, _ = run(spark, "SELECT a.k, a.v, b.v AS w FROM shp_fact a JOIN shp_fact2 b ON a.k = b.k")
    finally:
        spark.conf.unset("spark.bucketkit.hashJoinThreshold")
    assert rows == golden and rows
    assert "SortMergeJoin" in plan and "ShuffledHashJoin" not in plan, plan


AGGREGATES = {
    "count": "SELECT k, count(*) AS n FROM shp_fact GROUP BY k",
    "several functions": "SELECT k, sum(v) AS s, avg(v) AS a, min(s) AS lo, max(v) AS hi FROM shp_fact GROUP BY k",
    "a FILTER clause": "SELECT k, count(*) FILTER (WHERE v > 500) AS n, sum(v) FILTER (WHERE v < 100) AS s "
                       "FROM shp_fact GROUP BY k",
    "having": "SELECT k, count(*) AS n FROM shp_fact GROUP BY k HAVING count(*) > 5 AND max(v) > 10",
    "distinct keys": "SELECT DISTINCT k FROM shp_fact",
    "two keys": "SELECT k, d, count(*) AS n FROM shp_fact GROUP BY k, d",
    "several files a bucket": "SELECT k, count(*) AS n, sum(v) AS s FROM shp_multi GROUP BY k",
    "partitioned": "SELECT k, count(*) AS n FROM shp_fact_p GROUP BY k",
    "an aggregate above": "SELECT count(*), sum(c) FROM (SELECT k, count(*) AS c FROM shp_fact GROUP BY k)",
    "results from buffers": "SELECT k, avg(CAST(v AS DECIMAL(12, 2))) AS a, round(stddev(v), 6) AS sd, "
                            "bool_and(v > 3) AS b, max_by(d, v) AS top, count(v) / 2 + max(v) AS e "
                            "FROM shp_fact GROUP BY k",
    "an object aggregate": "SELECT k, sort_array(collect_set(v % 3)) AS vs FROM shp_fact GROUP BY k",
    "a sort aggregate": "SELECT k, min(s) AS lo, max(s) AS hi FROM shp_multi GROUP BY k",
}


@pytest.mark.parametrize("query", list(AGGREGATES), ids=list(AGGREGATES))
def test_a_group_by_on_the_bucket_column_aggregates_each_row_once(spark, shapes, query):
    """AggregateInBuckets: with no shuffle between Spark's partial and final aggregate, the two are one
    aggregate (grouping by k once); of a hash aggregate, Spark's partial one (its fast hash map) with each
    function's result evaluated in a Project above, of the others one of Complete mode (no partial_ function
    left); rows equal Spark's plan."""
    rows, plan, golden, golden_plan = run(spark, AGGREGATES[query])
    assert rows == golden and rows
    assert "Exchange hashpartitioning" not in plan and "Exchange hashpartitioning" in golden_plan, plan
    lines = plan.splitlines()
    grouped = [i for i, line in enumerate(lines) if re.search(r"(Hash|Sort)Aggregate\(keys?=\[k#", line)]
    assert len(grouped) == 1 and plan.count("Sort [") <= 1, plan
    line = lines[grouped[0]]
    if "partial_" in line or query == "results from buffers":
        assert "HashAggregate" in line and "partial_" in line and "Project [" in lines[grouped[0] - 1], plan
    else:
        assert "functions=[]" in line or "ObjectHashAggregate" in line or "SortAggregate" in line, plan


@pytest.mark.parametrize("sql", [
    "SELECT k, count(DISTINCT v) AS n FROM shp_fact GROUP BY k",
    "SELECT k, count(DISTINCT v) AS n, sum(v) AS s FROM shp_fact GROUP BY k",
], ids=["count distinct", "distinct and plain"])
def test_distinct_aggregates_keep_their_rows(spark, shapes, sql):
    """DISTINCT plans four aggregates: the grouping by (k, v) pair combines (no functions), a merge phase
    (sum in PartialMerge mode) is left as Spark plans it; rows equal Spark's plan."""
    rows, plan, golden, _ = run(spark, sql)
    assert rows == golden and rows
    assert "Exchange hashpartitioning" not in plan, plan


@pytest.fixture(scope="module")
def many_keys(spark, shapes):
    """6,000 keys in 4 buckets, 1,500 a bucket: more than a fast hash map of 1,024 rows holds."""
    spark.sql("DROP TABLE IF EXISTS shp_keys")
    bucketkit.write(spark.sql("SELECT CAST(id % 6000 AS INT) AS k, CAST(id % 97 AS INT) AS v FROM range(24000)"),
                    "k", 4, table="shp_keys", bucketing_version=2)
    return "shp_keys"


@pytest.mark.parametrize("setting", [("spark.sql.codegen.aggregate.fastHashMap.capacityBit", "10"),
                                     ("spark.sql.codegen.wholeStage", "false")],
                         ids=["fast hash map overflowing", "no generated code"])
def test_an_aggregate_of_whole_keys_gives_one_row_a_key(spark, many_keys, setting):
    """The partial aggregate that stands for the final one emits one row a key however Spark's aggregate runs:
    a fast hash map of 1,024 rows that sends the other keys to its second map, or Spark's interpreted iterator."""
    spark.conf.set(*setting)
    try:
        rows, plan, golden, _ = run(spark, "SELECT k, count(*) AS n, sum(v) AS s, avg(v) AS a, max(v) AS m "
                                           "FROM shp_keys GROUP BY k")
    finally:
        spark.conf.unset(setting[0])
    assert rows == golden and len(rows) == 6000 and "partial_" in plan, plan
    assert "Exchange hashpartitioning" not in plan, plan


def test_aggregate_in_buckets_can_be_switched_off(spark, shapes):
    spark.conf.set("spark.bucketkit.aggregateInBuckets", "false")
    try:
        rows, plan, golden, _ = run(spark, AGGREGATES["count"])
    finally:
        spark.conf.unset("spark.bucketkit.aggregateInBuckets")
    assert rows == golden and rows
    assert "partial_count" in plan and "Exchange hashpartitioning" not in plan, plan


def test_a_python_scan_of_a_catalog_table_groups_by_its_buckets(spark, shapes):
    """bucketkit.scan of a table the catalog reads bucketed goes through the catalog: a groupBy on the bucket
    column does not shuffle, and filters prune buckets there; rows equal Spark's own plan."""
    from pyspark.sql import functions as F

    df = bucketkit.scan(spark, "shp_fact_p", columns=["k", "v", "d"], filters=[("d", "in", [1, 2])])
    grouped = df.groupBy("k").agg(F.count("*").alias("n"), F.sum("v").alias("s"))
    got = sorted(map(tuple, grouped.collect()))
    plan = final_plan(grouped)
    assert "Exchange" not in plan and "bucketkit" in plan and "partitions=2 of 6" in plan, plan
    assert got == sorted(spark_rows(spark, "SELECT k, count(*), sum(v) FROM shp_fact_p WHERE d IN (1, 2) GROUP BY k"))
    lookup = bucketkit.scan(spark, "shp_fact", filters="k = 7 AND v > 3")
    assert "buckets=1 of 8" in final_plan(lookup.select("k")), final_plan(lookup)
    assert sorted(map(tuple, lookup.collect())) == sorted(spark_rows(spark, "SELECT * FROM shp_fact WHERE k = 7 AND v > 3"))
    with catalog_off(spark):  # bucketkit reads it itself: the same rows, Spark's shuffle for the groupBy
        again = bucketkit.scan(spark, "shp_fact_p", columns=["k", "v", "d"], filters=[("d", "in", [1, 2])]) \
            .groupBy("k").agg(F.count("*").alias("n"), F.sum("v").alias("s"))
        assert sorted(map(tuple, again.collect())) == got
