"""Hive's ``TABLESAMPLE (BUCKET x OUT OF y)`` and the ``_bucket`` column through bucketkit's catalog (issue 47).

Hive samples the rows whose bucket hash (the table's ``bucketing_version``) taken into y buckets is
x - 1; Spark reads the clause as a random fraction x/y. Golden rows: Spark's own reader (catalog
off) of every row, kept where Hive's own hash code (``support.hive_oracle``, Hive's classes in
pyspark's jars) says so. The files a sample reads: a y dividing the bucket count reads buckets
x-1, x-1+y, ...; a multiple of it reads bucket (x-1) mod n.
"""

from __future__ import annotations

import re

import pytest
from support.hive_oracle import HiveOracle
from support.sparkown import final_plan, rows_by_bucket, scans, spark_rows

from bucketkit.hivetypes import parse_hive_type

pytestmark = pytest.mark.spark

INT = parse_hive_type("int")
STRING = parse_hive_type("string")


@pytest.fixture(scope="module")
def sampled(spark):
    spark.sql("DROP TABLE IF EXISTS smp_v2")
    spark.sql("CREATE TABLE smp_v2 (k INT, v STRING) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("INSERT INTO smp_v2 SELECT CAST(id * 7 - 300 AS INT), CONCAT('v', id) FROM range(400)")
    spark.sql("DROP TABLE IF EXISTS smp_multi")  # two bucket columns: the catalog reads it unbucketed, Hive's rows still
    spark.sql("CREATE TABLE smp_multi (k INT, s STRING, v INT) CLUSTERED BY (k, s) INTO 4 BUCKETS STORED AS PARQUET "
              "TBLPROPERTIES ('bucketing_version'='1')")
    spark.sql("INSERT INTO smp_multi SELECT CAST(id % 97 AS INT), CONCAT('s', id % 13), CAST(id AS INT) FROM range(300)")
    oracle = HiveOracle(spark)  # each row's Hive hash, once: (row, hash) pairs per table
    yield {"smp_v2": [(r, oracle.v2([r[0]], [INT])) for r in spark_rows(spark, "SELECT k, v FROM smp_v2")],
           "smp_multi": [(r, oracle.v1([r[0], r[1]], [INT, STRING]))
                         for r in spark_rows(spark, "SELECT k, s, v FROM smp_multi")]}
    for t in ("smp_v2", "smp_multi", "smp_bad", "smp_named"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")


def _hive_sample(hashed, x, y):
    """Hive's sample predicate, by Hive's own hash: (hash & Integer.MAX_VALUE) % y == x - 1."""
    return sorted(r for r, h in hashed if (h & 0x7FFFFFFF) % y == x - 1)


@pytest.mark.parametrize("x, y, buckets", [(3, 8, {2}), (2, 4, {1, 5}), (1, 2, {0, 2, 4, 6}), (5, 16, {4}),
                                           (16, 16, {7}), (1, 1, set(range(8))), (2, 3, None)])
def test_a_bucket_sample_returns_hives_rows_and_reads_its_buckets(spark, sampled, x, y, buckets):
    golden = _hive_sample(sampled["smp_v2"], x, y)
    assert 0 < len(golden) < len(sampled["smp_v2"]) or y == 1
    df = spark.sql(f"SELECT k, v FROM smp_v2 TABLESAMPLE (BUCKET {x} OUT OF {y}) s")
    assert sorted(tuple(r) for r in df.collect()) == golden
    assert sorted(tuple(r) for r in df.collect()) == golden  # the same rows every time: no random seed
    scan = scans(final_plan(df))
    assert scan, final_plan(df)
    if buckets is not None and buckets != set(range(8)):
        chosen = {int(b) for b in re.search(r"buckets=\d+ of 8 \{([^}]*)\}", scan[0]).group(1).split(", ")}
        assert chosen == buckets, scan[0]


def test_a_sample_composes_with_filters_and_joins(spark, sampled):
    golden = [r for r in _hive_sample(sampled["smp_v2"], 3, 4) if r[0] > 100]
    got = spark.sql("SELECT t.k, t.v FROM smp_v2 TABLESAMPLE (BUCKET 3 OUT OF 4) AS t WHERE t.k > 100").collect()
    assert sorted(tuple(r) for r in got) == golden and golden
    n = spark.sql("SELECT count(*) FROM smp_v2 TABLESAMPLE (BUCKET 3 OUT OF 4) a JOIN smp_v2 b ON a.k = b.k").first()[0]
    assert n == len(_hive_sample(sampled["smp_v2"], 3, 4))


def test_a_table_on_two_columns_samples_hives_rows_without_pruning(spark, sampled):
    golden = _hive_sample(sampled["smp_multi"], 2, 4)
    got = spark.sql("SELECT k, s, v FROM smp_multi TABLESAMPLE (BUCKET 2 OUT OF 4)").collect()
    assert sorted(tuple(r) for r in got) == golden and 0 < len(golden) < len(sampled["smp_multi"])


def test_other_tables_keep_sparks_meaning_and_an_unknown_hash_is_refused(spark, sampled):
    spark.sql("DROP TABLE IF EXISTS smp_bad")
    spark.sql("CREATE TABLE smp_bad (k INT) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='3')")
    with pytest.raises(Exception, match=r"TABLESAMPLE \(BUCKET 1 OUT OF 4\) on .*smp_bad.*bucketing_version='3'"):
        spark.sql("SELECT * FROM smp_bad TABLESAMPLE (BUCKET 1 OUT OF 4)").collect()
    plain = spark.range(100).selectExpr("id AS k")  # no catalog table: Spark's random sample, as before
    plain.createOrReplaceTempView("smp_view")
    plan = spark.sql("SELECT * FROM smp_view TABLESAMPLE (BUCKET 1 OUT OF 4)")._jdf.queryExecution().analyzed()
    assert "Sample" in plan.toString()


def _chosen(df):
    scan = scans(final_plan(df))[0]
    return {int(b) for b in re.search(r"buckets=\d+ of 8 \{([^}]*)\}", scan).group(1).split(", ")}


def test_the_bucket_column_is_each_rows_file_bucket_and_prunes(spark, sampled):
    """``_bucket`` (Trino's ``$bucket``): the bucket of the file each row was read from, by Spark's own reader
    of the same files (their names); filters on it read only those buckets."""
    by_bucket = rows_by_bucket(spark, "smp_v2")
    got = {}
    for r in spark.sql("SELECT k, v, _bucket FROM smp_v2").collect():
        got.setdefault(r[2], set()).add((r[0], r[1]))
    assert got == by_bucket and len(by_bucket) == 8
    df = spark.sql("SELECT k, v FROM smp_v2 WHERE _bucket = 5")
    assert {tuple(r) for r in df.collect()} == by_bucket[5] and _chosen(df) == {5}
    df = spark.sql("SELECT k, v FROM smp_v2 WHERE _bucket IN (1, 9, NULL)")
    assert {tuple(r) for r in df.collect()} == by_bucket[1] and _chosen(df) == {1}
    counts = spark.sql("SELECT _bucket, count(*) FROM smp_v2 GROUP BY _bucket").collect()
    assert {r[0]: r[1] for r in counts} == {b: len(rows) for b, rows in by_bucket.items()}
    assert "_bucket" not in spark.sql("SELECT * FROM smp_v2").columns  # a metadata column: asked for by name
    sample = spark.sql("SELECT k, v FROM smp_v2 TABLESAMPLE (BUCKET 3 OUT OF 8)").collect()
    assert {tuple(r) for r in sample} == by_bucket[2]  # Hive's sample of y = n is one bucket's file


def test_a_column_named_bucket_is_the_tables_own(spark, sampled):
    spark.sql("DROP TABLE IF EXISTS smp_named")
    spark.sql("CREATE TABLE smp_named (k INT, _bucket STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("INSERT INTO smp_named VALUES (1, 'mine'), (2, 'ours')")
    assert sorted(r[0] for r in spark.sql("SELECT _bucket FROM smp_named").collect()) == ["mine", "ours"]
