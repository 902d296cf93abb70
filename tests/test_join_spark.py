"""bucketkit.join against Spark's own join: same rows, same columns, no shuffle when co-partitioned."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bucketkit
from bucketkit.joins.plan import JOIN_TYPES

from support.joins import COLUMNS, SPARK_SCHEMA, as_df, assert_same, collected, rows_of, sort_key, write_table
from support.sparkown import no_broadcast, spark_insert

SPARK_HOW = {"inner": "inner", "left": "left_outer", "right": "rightouter", "full": "outer",
             "left_semi": "semi", "left_anti": "leftanti"}  # Spark's aliases, as a user might write them


def has_exchange(df) -> bool:
    return "Exchange" in df._jdf.queryExecution().executedPlan().toString()


keys_st = st.lists(st.one_of(st.none(), st.integers(-3, 12), st.just(7)), max_size=30)


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lkeys=keys_st, rkeys=keys_st, how=st.sampled_from(JOIN_TYPES), k=st.sampled_from([1, 3]),
       flip=st.booleans(), lfilter=st.sampled_from([None, [("v", "<", 10.0)], [("k", "in", [1, 7, None])]]),
       rfilter=st.sampled_from([None, [("k", "=", 7)], [[("k", "is null")], [("s", "!=", "r1")]]]))
def test_join_equals_sparks_join(spark, tmp_path_factory, lkeys, rkeys, how, k, flip, lfilter, rfilter):
    base = tmp_path_factory.mktemp("dj")
    n, m = (4, 4 * k) if not flip else (4 * k, 4)
    lrows, rrows = rows_of(lkeys, "l"), rows_of(rkeys, "r")
    lt, _ = write_table(str(base / "l"), lrows, COLUMNS, ["k"], n)
    rt, _ = write_table(str(base / "r"), rrows, COLUMNS, ["k"], m)
    ours = bucketkit.join(spark, lt, rt, "k", SPARK_HOW[how], left_filters=lfilter, right_filters=rfilter)
    ours_plan = bucketkit.plan_join(lt, rt, "k", SPARK_HOW[how], left_filters=lfilter, right_filters=rfilter,
                                   spark=spark)
    # bucket by bucket, never a shuffle: the Python kernel, or Spark's JVM join of the bucketed scans where keys
    # repeat (the 7s): both strategies held to Spark's join on the same drawn rows
    assert ours_plan.strategy in ("bucketed", "jvm"), ours_plan.reason
    from bucketkit.pruning.filters import normalize as normalize_filters
    from bucketkit.spark.filters import to_column as dnf_to_column

    ldf, rdf = as_df(spark, lrows), as_df(spark, rrows)
    if lfilter:
        ldf = ldf.where(dnf_to_column(normalize_filters(lfilter)))
    if rfilter:
        rdf = rdf.where(dnf_to_column(normalize_filters(rfilter)))
    assert_same(ours, ldf.join(rdf, ["k"], SPARK_HOW[how]))


@pytest.mark.parametrize("how", ["inner", "full"])
def test_copartitioned_join_has_no_exchange(spark, tmp_path, how):
    lt, _ = write_table(str(tmp_path / "l"), rows_of(list(range(50)), "l"), COLUMNS, ["k"], 4)
    rt, _ = write_table(str(tmp_path / "r"), rows_of(list(range(25, 90)), "r"), COLUMNS, ["k"], 8)
    df = bucketkit.join(spark, str(tmp_path / "l"), str(tmp_path / "r"), "k", how)
    df_plan = bucketkit.plan_join(str(tmp_path / "l"), str(tmp_path / "r"), "k", how, spark=spark)
    assert df_plan.strategy == "bucketed" and len(df_plan.groups) == 4
    assert not has_exchange(df)
    assert df.count() == (25 if how == "inner" else 90)


@pytest.mark.parametrize("how", ["inner", "full", "left_semi"])
def test_a_join_whose_keys_repeat_is_joined_in_the_jvm_by_bucket(spark, tmp_path, monkeypatch, how):
    """50 keys, 6 rows each on both sides: 1,800 pairs from 600 rows. Spark builds such rows faster in the JVM than a
    Python task hands them over (benchmarks/bench_join.py --repeated-keys). This session's bucketed scans group small
    buckets into few tasks: the plan says "jvm" and why, Spark joins the bucketed scans with no Exchange, rows as
    Spark's own join. Where the scans run a task per bucket (``spark.bucketkit.groupBuckets=false``, as in a session
    the user built), a join this small stays with the kernel's few tasks until its output per bucket reaches the size
    rule. Unique keys stay with the Python kernel, and so does a semi join, which outputs at most its rows."""
    import bucketkit.spark.join as spark_join

    keys = [k for k in range(50) for _ in range(6)]
    lrows, rrows = rows_of(keys, "l"), rows_of(keys[::-1], "r")
    write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 4)
    write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 4)
    write_table(str(tmp_path / "u"), rows_of(list(range(100)), "u"), COLUMNS, ["k"], 4)
    expected = "bucketed" if how == "left_semi" else "jvm"
    spark.conf.set("spark.bucketkit.groupBuckets", "false")
    try:
        small = bucketkit.plan_join(str(tmp_path / "l"), str(tmp_path / "r"), "k", how, spark=spark)
        assert small.strategy == "bucketed", small.reason
        monkeypatch.setattr(spark_join, "OUTPUT_PER_BUCKET", 0)
        sized = bucketkit.plan_join(str(tmp_path / "l"), str(tmp_path / "r"), "k", how, spark=spark)
        assert sized.strategy == expected, sized.reason
    finally:
        spark.conf.unset("spark.bucketkit.groupBuckets")
    monkeypatch.undo()
    plan = bucketkit.plan_join(str(tmp_path / "l"), str(tmp_path / "r"), "k", how, spark=spark)
    assert plan.strategy == expected, plan.reason
    if how != "left_semi":
        assert "keys repeat" in plan.reason and "3.0 output rows per row" in plan.reason
    with no_broadcast(spark):  # Spark broadcasts sides this small: the buckets are joined only without that
        df = bucketkit.join(spark, str(tmp_path / "l"), str(tmp_path / "r"), "k", how)
        assert not has_exchange(df)
    assert_same(df, as_df(spark, lrows).join(as_df(spark, rrows), ["k"], SPARK_HOW[how]))
    unique = bucketkit.plan_join(str(tmp_path / "l"), str(tmp_path / "u"), "k", how, spark=spark)
    assert unique.strategy == "bucketed", unique.reason


_SETTING = st.sampled_from([None, "true", "false", "TRUE", "False"])


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(group=st.one_of(_SETTING, st.sampled_from(["yes", " true", ""])), compatible=_SETTING)
def test_a_connect_client_reads_the_grouping_of_buckets_as_the_jvm_decides_it(spark, group, compatible):
    """A Spark Connect client cannot ask the server's JVM whether its scans group small buckets into tasks (which
    lifts the join's size bound): it reads the two settings. Both answers, for the same settings, agree."""
    from bucketkit.spark.driver import jar_class
    from bucketkit.spark.join import GROUP_BUCKETS, settings_group_buckets
    from bucketkit.spark.sqlstatus import COMPATIBLE_TRANSFORMS

    before = {name: spark.conf.get(name, None) for name in (GROUP_BUCKETS, COMPATIBLE_TRANSFORMS)}
    try:
        for name, value in ((GROUP_BUCKETS, group), (COMPATIBLE_TRANSFORMS, compatible)):
            spark.conf.unset(name) if value is None else spark.conf.set(name, value)
        jvm = jar_class(spark, "table.BucketScan").groupsBuckets(spark._jsparkSession)
        assert settings_group_buckets(spark.conf.get) == jvm, (group, compatible)
    finally:
        for name, value in before.items():
            spark.conf.unset(name) if value is None else spark.conf.set(name, value)


@pytest.mark.parametrize("strategy", ["bucketed", "jvm"])
def test_a_file_of_unhashed_rows_in_a_vouched_table_fails_the_join(spark, tmp_path, monkeypatch, strategy):
    """A file of rows never hashed, named as a bucket of a table bucketkit wrote: the manifest does not list it, so
    the join re-hashes that partition's rows as it reads them and fails naming the file, in the Python kernel as in
    Spark's JVM join of the bucketed scans (never the rows of a bucket-by-bucket join that misses their partners;
    Spark's own join of the same files returns 8,000 rows)."""
    import os

    import bucketkit.spark.join as spark_join
    from pyspark.sql import functions as F

    root, other, raw = str(tmp_path / "t"), str(tmp_path / "o"), str(tmp_path / "raw")
    keyed = lambda lo, hi: spark.range(lo, hi).select((F.col("id") % 40).cast("int").alias("k"), "id")  # noqa: E731
    bucketkit.write(keyed(0, 400), "k", 4, path=root)
    bucketkit.write(keyed(0, 400).withColumnRenamed("id", "w"), "k", 4, path=other)
    keyed(400, 800).repartition(1).write.orc(raw)
    (part,) = [p for p in os.listdir(raw) if p.startswith("part-")]
    os.rename(os.path.join(raw, part), os.path.join(root, "000001_0_copy_1"))
    assert spark.read.orc(root).join(spark.read.orc(other), "k").count() == 8_000
    if strategy == "bucketed":
        monkeypatch.setattr(spark_join, "EXPANDS", float("inf"))  # 10 rows per key a side: else the JVM joins them
    plan = bucketkit.plan_join(root, other, "k", spark=spark)
    assert plan.strategy == strategy, plan.reason
    assert "_copy_1 is not among the files" in plan.left_placement and plan.right_placement.startswith("vouched")
    with no_broadcast(spark), pytest.raises(Exception, match=r"000001_0_copy_1.* (a row with k = \d+ is in bucket 1's "
                                                              r"files|holds a row whose)"):
        bucketkit.join(spark, root, other, "k").count()


def test_pairs_and_columns_match_sparks_condition_join(spark, tmp_path):
    lrows, rrows = rows_of([1, 2, 2, None, 4], "l"), {"id": [2, 4, 4, 9], "w": ["a", "b", "c", "d"]}
    lt, _ = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 2)
    rt, _ = write_table(str(tmp_path / "r"), rrows, {"id": "bigint", "w": "string"}, ["id"], 6)
    ldf = as_df(spark, lrows)
    rdf = spark.createDataFrame(list(zip(*rrows.values())), "id bigint, w string")
    for how in ("inner", "left", "right", "full", "left_semi", "left_anti"):
        ours = bucketkit.join(spark, lt, rt, [("k", "id")], how)
        ours_plan = bucketkit.plan_join(lt, rt, [("k", "id")], how, spark=spark)
        assert ours_plan.bucketed
        assert_same(ours, ldf.join(rdf, ldf.k == rdf.id, how))
    ours = bucketkit.join(spark, lt, rt, [("k", "id")], "full", columns=["w", ("left", "s")])
    assert_same(ours, ldf.join(rdf, ldf.k == rdf.id, "full").select(rdf.w, ldf.s))


def test_mismatched_tables_fall_back_with_the_reason(spark, tmp_path):
    lrows, rrows = rows_of([1, 2, 3, None], "l"), rows_of([2, 3, 3], "r")
    lt, _ = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 4, version=2)
    rt, _ = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 4, version=1)
    ours = bucketkit.join(spark, lt, rt, "k", "left", right_filters=[("k", "=", 3)])
    ours_plan = bucketkit.plan_join(lt, rt, "k", "left", right_filters=[("k", "=", 3)], spark=spark)
    plan = ours_plan
    assert plan.strategy == "shuffle" and "v1" in plan.reason and "v2" in plan.reason
    ldf, rdf = as_df(spark, lrows), as_df(spark, rrows).where("k = 3")
    assert_same(ours, ldf.join(rdf, ["k"], "left"))
    # Columns selection works on the fallback too.
    assert_same(bucketkit.join(spark, lt, rt, "k", "full", columns=["k", ("right", "s")]),
                ldf.join(as_df(spark, rrows), ["k"], "full").select("k", as_df(spark, rrows).s)
                if False else _full_k_rs(ldf, as_df(spark, rrows)))


def _full_k_rs(ldf, rdf):
    return ldf.join(rdf, ["k"], "full").select("k", rdf.s)


def test_sql_string_filters_use_sparks_join(spark, tmp_path):
    lrows = rows_of([1, 2, 3], "l")
    lt, _ = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 2)
    ours = bucketkit.join(spark, lt, lt, "k", "inner", left_filters="k >= 2")
    ours_plan = bucketkit.plan_join(lt, lt, "k", "inner", left_filters="k >= 2", spark=spark)
    assert ours_plan.strategy == "shuffle" and "SQL string" in ours_plan.reason
    assert sorted(r.k for r in ours.collect()) == [2, 3]


def test_spark_hive_writer_table_joins_bucketkit_written_table(spark, tmp_path):
    """Spark's Hive writer (v1) on one side, bucketkit.write (v1) on the other: same placement."""
    keys = [None, *range(-20, 40), 7, 7]
    lrows = rows_of(keys, "l")
    ldf = as_df(spark, lrows)
    ldf.createOrReplaceTempView("join_src")
    spark.sql("DROP TABLE IF EXISTS join_hive_side")
    spark.sql("CREATE TABLE join_hive_side (k bigint, s string, v double) CLUSTERED BY (k) INTO 4 BUCKETS "
              "STORED AS ORC")
    spark_insert(spark, "INSERT INTO join_hive_side SELECT * FROM join_src")
    rrows = rows_of(list(range(0, 60, 3)) + [None], "r")
    rdf = as_df(spark, rrows)
    bucketkit.write(rdf, "k", 8, path=str(tmp_path / "bk"), bucketing_version=1)
    for how in ("inner", "full", "left_anti"):
        ours = bucketkit.join(spark, "join_hive_side", str(tmp_path / "bk"), "k", how)
        ours_plan = bucketkit.plan_join("join_hive_side", str(tmp_path / "bk"), "k", how, spark=spark)
        assert ours_plan.strategy == "bucketed", ours_plan.reason
        assert not has_exchange(ours)
        assert_same(ours, spark.table("join_hive_side").join(rdf, ["k"], how))


def test_sorted_tables_use_the_merge_join(spark, tmp_path):
    lrows, rrows = rows_of([5, 1, None, 3, 3, 9] * 5, "l"), rows_of([3, 9, 9, None, 0] * 4, "r")
    lt, _ = write_table(str(tmp_path / "l"), lrows, COLUMNS, ["k"], 2, sorted_by=["k"])
    rt, _ = write_table(str(tmp_path / "r"), rrows, COLUMNS, ["k"], 4, sorted_by=["k"], files_per_bucket=2)
    for how in ("inner", "left", "full", "left_semi"):
        ours = bucketkit.join(spark, lt, rt, "k", how)
        ours_plan = bucketkit.plan_join(lt, rt, "k", how, spark=spark)
        assert ours_plan.merge
        assert_same(ours, as_df(spark, lrows).join(as_df(spark, rrows), ["k"], how))


def test_groups_are_packed_into_balanced_tasks():
    from bucketkit.joins.plan import BucketGroup, ReadUnit
    from bucketkit.spark.jointasks import pack_groups

    groups = [BucketGroup(i, (i,), (i,), (ReadUnit(f"/l/{i}", 100 * (i + 1), i),), ()) for i in range(10)]
    tasks = pack_groups(groups, parallelism=2, task_bytes=10**9)
    assert len(tasks) == 4  # 2 x parallelism: small data, few tasks
    assert sorted(g.group_id for t in tasks for g in t) == list(range(10))
    loads = [sum(g.bytes for g in t) for t in tasks]
    assert loads == sorted(loads, reverse=True) and max(loads) - min(loads) <= 1000
    assert len(pack_groups(groups, parallelism=2, task_bytes=300)) == 10  # large data: one group a task
    assert pack_groups([], 2) == []


def test_a_double_keyed_join_pairs_0_and_minus_0_as_sparks_join_does(spark, tmp_path):
    """Hive's hash places 0.0 and -0.0 in different buckets; a join equates them. bucketkit.join then joins as
    Spark does (one verdict with the SQL catalog, which reports no bucketing for a float key), saying why."""
    import math

    keys = [0.0, -0.0, 1.5, -2.25]
    left = spark.createDataFrame([(k, f"l{i}") for i, k in enumerate(keys)], "d double, s string")
    right = spark.createDataFrame([(k, f"r{i}") for i, k in enumerate(reversed(keys))], "d double, t string")
    bucketkit.write(left, "d", 8, path=str(tmp_path / "l"), bucketing_version=2)
    bucketkit.write(right, "d", 8, path=str(tmp_path / "r"), bucketing_version=2)
    sides = [spark.read.orc(str(tmp_path / s)) for s in ("l", "r")]  # as written, read back by Spark
    signs = {math.copysign(1.0, r.d) for r in sides[0].collect() if r.d == 0}
    assert signs == {1.0, -1.0}  # both zeros were written as such
    plan = bucketkit.plan_join(str(tmp_path / "l"), str(tmp_path / "r"), "d", spark=spark)
    assert plan.strategy != "bucketed" and "0.0 and -0.0" in plan.reason, plan.reason
    ours = bucketkit.join(spark, str(tmp_path / "l"), str(tmp_path / "r"), "d")
    theirs = sides[0].join(sides[1], "d")
    assert sorted(r.s + r.t for r in ours.collect()) == sorted(r.s + r.t for r in theirs.collect())
    assert len(theirs.collect()) == 6  # 0.0 and -0.0 pair four ways
