"""Tables bucketed on several columns in Spark SQL (issue 47): bucketkit's catalog reads them bucketed,
prunes their buckets by a WHERE that pins every bucket column, offers each row's bucket as ``_bucket``,
and checks the rows it reads against Hive's hash. Spark's key-grouped partitioning takes one column per
expression, so their scans are keyed by ``_bucket_hash``, each row's Hive hash of its bucket columns: a join
pairing every bucket column of two tables hashed alike (N and kN buckets too), and a GROUP BY on every bucket
column, run without an Exchange (rules.KeyBySeveralColumns); a join on some of them shuffles, as Hive's does.

Golden values: the files Spark's own Hive writer places (v1, its hash is Hive's ``31 * h + hash(c)``),
and the rows Spark returns with the catalog off. The v2 table is written by bucketkit.write, whose
multi-column hash test_hashing_jvm holds to Hive's own classes.
"""

from __future__ import annotations

import shutil

import pytest
from support.sparkown import catalog_off, final_plan, no_broadcast, rows_by_bucket, scans, spark_insert, spark_rows

import bucketkit
from bucketkit.layout.naming import bucket_of

pytestmark = pytest.mark.spark

LOOKUPS = ["k = 7 AND j = 's3'", "j = 's3' AND k = 7 AND v > 0", "k IN (7, 8) AND j = 's3'",
           "k = 7 AND j IN ('s3', 's4', 's5')", "k <=> 7 AND j = 's1'"]


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("multi_column")
    spark.sql("DROP TABLE IF EXISTS mc_v1")
    spark.sql(f"CREATE TABLE mc_v1 (k INT, j STRING, v BIGINT) CLUSTERED BY (k, j) INTO 8 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp}/mc_v1' TBLPROPERTIES ('bucketing_version'='1')")
    spark_insert(spark, "INSERT INTO mc_v1 SELECT IF(id % 97 = 0, NULL, CAST(id % 50 AS INT)), "
                        "CONCAT('s', id % 7), id FROM range(2000)")
    spark.sql("DROP TABLE IF EXISTS mc_v2")
    df = spark.range(2000).selectExpr("CAST(id % 50 AS INT) AS k", "CONCAT('s', id % 7) AS j", "id AS v",
                                      "IF(id % 2 = 0, 'a', 'b') AS p")
    bucketkit.write(df, ["k", "j"], 8, path=str(tmp / "mc_v2"), partitioned_by="p", bucketing_version=2,
                    file_format="parquet")
    spark.sql(f"CREATE EXTERNAL TABLE mc_v2 (k INT, j STRING, v BIGINT) PARTITIONED BY (p STRING) "
              f"CLUSTERED BY (k, j) INTO 8 BUCKETS STORED AS PARQUET LOCATION '{tmp}/mc_v2' "
              f"TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("MSCK REPAIR TABLE mc_v2")
    spark.sql("DROP TABLE IF EXISTS mc_v1b")  # a second v1 table hashed alike, other rows
    spark.sql(f"CREATE TABLE mc_v1b (k INT, j STRING, w BIGINT) CLUSTERED BY (k, j) INTO 8 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp}/mc_v1b' TBLPROPERTIES ('bucketing_version'='1')")
    spark_insert(spark, "INSERT INTO mc_v1b SELECT IF(id % 89 = 0, NULL, CAST(id % 60 AS INT)), "
                        "CONCAT('s', id % 5), id * 10 FROM range(1500)")
    yield tmp
    for name in ("mc_v1", "mc_v1b", "mc_v2", "mc_lying", "mc_stray"):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("name", ["mc_v1", "mc_v2"])
def test_the_catalog_reads_it_bucketed_keyed_by_its_bucket_column(spark, tables, name):
    status = bucketkit.sql_status(spark, name)
    assert status.bucketed, status
    assert "8 buckets on k, j (keyed by _bucket_hash" in status.detail, status


@pytest.mark.parametrize("name", ["mc_v1", "mc_v2"])
@pytest.mark.parametrize("where", LOOKUPS)
def test_a_where_pinning_every_bucket_column_reads_only_their_buckets(spark, tables, name, where):
    sql = f"SELECT k, j, v FROM {name} WHERE {where}"
    golden = spark_rows(spark, sql)
    assert golden, sql  # a wrong bucket would read none of them
    df = spark.sql(sql)
    assert sorted((tuple(r) for r in df.collect()), key=repr) == golden
    [scan] = scans(final_plan(df))
    keys = len({(r[0], r[1]) for r in golden})
    assert "buckets=all" not in scan and "of 8" in scan, scan
    read = int(scan.split("buckets=")[1].split(" ")[0])
    assert 1 <= read <= keys, scan
    assert "packed by size (bucketed by k, j: keyed only by _bucket_hash)" in scan, scan


@pytest.mark.parametrize("where", ["k = 7", "j = 's3'", "k = 7 OR j = 's3'", "k > 7 AND j = 's3'"])
def test_a_where_leaving_a_bucket_column_free_reads_every_bucket(spark, tables, where):
    sql = f"SELECT k, j, v FROM mc_v1 WHERE {where}"
    df = spark.sql(sql)
    assert sorted((tuple(r) for r in df.collect()), key=repr) == spark_rows(spark, sql)
    [scan] = scans(final_plan(df))
    assert "buckets=all 8" in scan, scan


def test_a_null_key_is_pruned_to_hives_bucket_of_null(spark, tables):
    sql = "SELECT k, j, v FROM mc_v1 WHERE k IS NULL AND j = 's0'"
    golden = spark_rows(spark, sql)
    assert golden
    df = spark.sql(sql)
    assert sorted((tuple(r) for r in df.collect()), key=repr) == golden
    assert "buckets=1 of 8" in scans(final_plan(df))[0]


def test_the_bucket_column_is_the_bucket_sparks_writer_placed_each_row_in(spark, tables):
    placed = rows_by_bucket(spark, "mc_v1")
    assert len(placed) > 1
    got: dict[int, set[tuple]] = {}
    for r in spark.sql("SELECT _bucket, k, j, v FROM mc_v1").collect():
        got.setdefault(r[0], set()).add(tuple(r[1:]))
    assert got == placed
    sql = "SELECT k, j, v FROM mc_v1 WHERE _bucket = 3"
    assert {tuple(r) for r in spark.sql(sql).collect()} == placed[3]


def _run(spark, sql):
    """(rows, final plan) with the catalog, and Spark's rows with it off; broadcasts off (the tables are small)."""
    with no_broadcast(spark):
        df = spark.sql(sql)
        rows = sorted((tuple(r) for r in df.collect()), key=repr)
        return rows, final_plan(df), spark_rows(spark, sql)


@pytest.mark.parametrize("how", ["JOIN", "LEFT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"])
def test_a_join_on_every_bucket_column_of_tables_hashed_alike_has_no_exchange(spark, tables, how):
    cols = "a.k, a.j, a.v" + ("" if "SEMI" in how or "ANTI" in how else ", b.w")
    sql = f"SELECT {cols} FROM mc_v1 a {how} mc_v1b b ON a.j = b.j AND b.k = a.k"
    rows, plan, golden = _run(spark, sql)
    assert golden and rows == golden
    assert "Exchange" not in plan, plan
    assert len(scans(plan)) == 2 and all("mc_v1" in s for s in scans(plan)), plan


def test_a_textfile_table_on_two_columns_joins_an_orc_one_in_buckets(spark, tables):
    """Hive's text serde read by bucketkit's own text reader, keyed by _bucket_hash like the ORC table it joins."""
    spark.sql("DROP TABLE IF EXISTS mc_text")
    spark.sql(f"CREATE TABLE mc_text (k INT, j STRING, t STRING) CLUSTERED BY (k, j) INTO 8 BUCKETS "
              f"STORED AS TEXTFILE LOCATION '{tables}/mc_text' TBLPROPERTIES ('bucketing_version'='1')")
    try:
        spark_insert(spark, "INSERT INTO mc_text SELECT CAST(id % 40 AS INT), CONCAT('s', id % 6), "
                            "CONCAT('t', id) FROM range(900)")
        for sql in ("SELECT a.k, a.j, a.t, b.w FROM mc_text a JOIN mc_v1b b ON a.k = b.k AND a.j = b.j",
                    "SELECT k, j, count(*), max(t) FROM mc_text GROUP BY k, j"):
            rows, plan, golden = _run(spark, sql)
            assert golden and rows == golden, sql
            assert "Exchange" not in plan, plan
        got = {tuple(r) for r in spark.sql("SELECT _bucket, k, j, t FROM mc_text").collect()}
        assert got == {(b, *row) for b, rows in rows_by_bucket(spark, "mc_text").items() for row in rows}
    finally:
        spark.sql("DROP TABLE IF EXISTS mc_text")


def test_a_group_by_every_bucket_column_has_no_exchange(spark, tables):
    for sql in ("SELECT k, j, count(*), sum(v) FROM mc_v2 GROUP BY k, j",
                "SELECT j, k, max(v) FROM mc_v1 WHERE v > 100 GROUP BY k, j HAVING count(*) > 1"):
        rows, plan, golden = _run(spark, sql)
        assert golden and rows == golden
        assert "Exchange" not in plan, plan


def test_a_small_table_is_read_several_buckets_per_task_and_still_groups_without_an_exchange(spark, tables):
    """2,000 rows in 8 buckets: the scan reports a divisor of 8 (hash_mod_<d>), as a table on one column does, and
    Spark groups its buckets into that many tasks; with grouping off, one task a bucket."""
    sql = "SELECT k, j, count(*), sum(v) FROM mc_v1 GROUP BY k, j"
    rows, plan, golden = _run(spark, sql)
    assert golden and rows == golden and "Exchange" not in plan, plan
    [scan] = scans(plan)
    assert "buckets per task" in scan and "keyed by _bucket_hash" in scan, scan
    spark.conf.set("spark.bucketkit.groupBuckets", "false")
    try:
        rows, plan, golden = _run(spark, sql)
        assert rows == golden and "Exchange" not in plan and "buckets per task" not in scans(plan)[0], plan
    finally:
        spark.conf.unset("spark.bucketkit.groupBuckets")


def test_the_bucket_hash_column_is_hives_row_hash(spark, tables):
    """_bucket_hash is Hive's own v1 row hash of (k, j) (ObjectInspectorUtils.getBucketHashCode, NULL keys
    included), masked non-negative; its remainder by 8 is the bucket Spark's writer put the row in."""
    from support.hive_oracle import HiveOracle

    oracle = HiveOracle(spark)
    got = spark.sql("SELECT _bucket_hash, _bucket, k, j FROM mc_v1").collect()
    assert any(r[2] is None for r in got)
    sample = [r for r in got if r[2] is None][:3] + got[:: max(1, len(got) // 40)]
    for h, b, k, j in sample:
        assert h == oracle.v1([k, j], ["int", "string"]) & 0x7FFFFFFF and h % 8 == b, (h, b, k, j)


def test_tables_of_n_and_2n_buckets_join_without_an_exchange(spark, tables):
    """A table of 16 buckets on (k, j) written by Spark's own Hive writer joins one of 8: rows of equal keys
    have equal _bucket_hash, and Spark reduces the 16 side's keys to 8 (hash mod 16 mod 8 = hash mod 8)."""
    spark.sql("DROP TABLE IF EXISTS mc_v1_16")
    spark.sql(f"CREATE TABLE mc_v1_16 (k INT, j STRING, u BIGINT) CLUSTERED BY (k, j) INTO 16 BUCKETS STORED AS ORC "
              f"LOCATION '{tables}/mc_v1_16' TBLPROPERTIES ('bucketing_version'='1')")
    try:
        spark_insert(spark, "INSERT INTO mc_v1_16 SELECT IF(id % 83 = 0, NULL, CAST(id % 45 AS INT)), "
                            "CONCAT('s', id % 6), id FROM range(1800)")
        spark.conf.set("spark.bucketkit.groupBuckets", "false")  # 8 and 16 keys: the reduction is what joins them
        for sql in ("SELECT a.k, a.j, a.v, b.u FROM mc_v1 a JOIN mc_v1_16 b ON a.k = b.k AND a.j = b.j",
                    "SELECT a.k, a.j, b.u FROM mc_v1_16 b LEFT JOIN mc_v1 a ON a.j = b.j AND a.k = b.k"):
            rows, plan, golden = _run(spark, sql)
            assert golden and rows == golden, sql
            assert "Exchange" not in plan, plan
        got = spark.sql("SELECT _bucket_hash % 16, k, j, u FROM mc_v1_16").collect()
        assert {(r[0], *r[1:]) for r in got} == {(b, *row) for b, rs in rows_by_bucket(spark, "mc_v1_16").items()
                                                 for row in rs}
        # 8 and 6 buckets: neither reduces to the other, so Spark moves rows as it must; the rows are Spark's
        spark.sql(f"CREATE TABLE mc_v1_6 (k INT, j STRING, u BIGINT) CLUSTERED BY (k, j) INTO 6 BUCKETS STORED AS ORC "
                  f"LOCATION '{tables}/mc_v1_6' TBLPROPERTIES ('bucketing_version'='1')")
        spark_insert(spark, "INSERT INTO mc_v1_6 SELECT * FROM mc_v1_16")
        rows, plan, golden = _run(spark, "SELECT a.k, a.j, a.v, b.u FROM mc_v1 a JOIN mc_v1_6 b ON a.k = b.k AND a.j = b.j")
        assert golden and rows == golden
    finally:
        spark.conf.unset("spark.bucketkit.groupBuckets")
        spark.sql("DROP TABLE IF EXISTS mc_v1_16")
        spark.sql("DROP TABLE IF EXISTS mc_v1_6")


@pytest.mark.parametrize("sql", [
    "SELECT a.k, a.j, a.v, b.w FROM mc_v1 a JOIN mc_v1b b ON a.k = b.k",  # some of the bucket columns
    "SELECT a.k, a.j, a.v, b.w FROM mc_v1 a JOIN mc_v1b b ON a.k = b.k AND a.j = b.j AND a.v > b.w",
    "SELECT a.k, a.j, a.v, b.v FROM mc_v1 a JOIN mc_v2 b ON a.k = b.k AND a.j = b.j",  # v1 and v2 hash apart
    "SELECT a.k, a.j, a.v, b.w FROM mc_v1 a JOIN mc_v1b b ON a.k = b.k AND a.j = b.j AND a.k = 7",
    "SELECT a.k, b.k, a.v FROM mc_v1 a JOIN mc_v1b b ON a.k = b.k AND a.j = concat(b.j, '')",
    "SELECT k, count(*) FROM mc_v1 GROUP BY k",
])
def test_other_joins_and_groupings_return_sparks_rows(spark, tables, sql):
    rows, plan, golden = _run(spark, sql)
    assert golden and rows == golden
    if "mc_v2" in sql or "a.k = b.k AND a.j = b.j" not in sql:
        assert "Exchange" in plan, plan  # Spark's shuffle, as Hive's: the buckets say nothing of these keys


@pytest.mark.parametrize("vectorized", ["true", "false"])  # batches, and rows (Spark's row reader)
def test_a_table_read_unbucketed_still_joins_every_row_by_the_hash_of_its_keys(spark, tables, tmp_path, vectorized):
    """A file of no bucket name beside Spark's: the listing cannot vouch for the files, the table is read
    unbucketed, and each row's _bucket is the hash of its bucket columns, so the join keyed by it loses no row."""
    spark.conf.set("spark.sql.orc.enableVectorizedReader", vectorized)
    try:
        _unbucketed_joins(spark, tables, tmp_path)
    finally:
        spark.conf.unset("spark.sql.orc.enableVectorizedReader")


def _unbucketed_joins(spark, tables, tmp_path):
    dst = tmp_path / "mc_stray"
    shutil.copytree(tables / "mc_v1", dst, ignore=shutil.ignore_patterns("*.crc"))
    first = sorted(f for f in dst.iterdir() if f.is_file() and not f.name.startswith((".", "_")))[0]
    shutil.copy(first, dst / "stray-copy.orc")
    spark.sql("DROP TABLE IF EXISTS mc_stray")
    spark.sql(f"CREATE EXTERNAL TABLE mc_stray (k INT, j STRING, v BIGINT) CLUSTERED BY (k, j) INTO 8 BUCKETS "
              f"STORED AS ORC LOCATION '{dst}' TBLPROPERTIES ('bucketing_version'='1')")
    placed = {row: b for b, rows in rows_by_bucket(spark, "mc_v1").items() for row in rows}
    for r in spark.sql("SELECT _bucket, k, j, v FROM mc_stray").collect():
        assert r[0] == placed[tuple(r[1:])], r
    for sql in ("SELECT a.k, a.j, a.v, b.w FROM mc_stray a JOIN mc_v1b b ON a.k = b.k AND a.j = b.j",
                "SELECT k, j, count(*) FROM mc_stray GROUP BY k, j"):
        rows, plan, golden = _run(spark, sql)
        assert golden and rows == golden


def test_a_misplaced_row_fails_the_pruned_read_naming_every_bucket_column(spark, tables, tmp_path):
    """Two of Spark's bucket files swapped (a copy by hand): the read pruned to one of them stops at its
    first row, naming the file, both columns' values and the bucket they belong in."""
    src = tables / "mc_v1"
    dst = tmp_path / "mc_lying"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.crc"))  # Hadoop's checksums would name the swap
    files = {bucket_of(f.name): f for f in dst.iterdir() if f.is_file() and not f.name.startswith((".", "_"))}
    a, b = sorted(files)[:2]
    fa, fb = files[a], files[b]
    tmp = fa.with_name("swap.tmp")
    fa.rename(tmp)
    fb.rename(fa)
    tmp.rename(fb)
    spark.sql("DROP TABLE IF EXISTS mc_lying")
    spark.sql(f"CREATE EXTERNAL TABLE mc_lying (k INT, j STRING, v BIGINT) CLUSTERED BY (k, j) INTO 8 BUCKETS "
              f"STORED AS ORC LOCATION '{dst}' TBLPROPERTIES ('bucketing_version'='1')")
    k, j, _ = sorted(rows_by_bucket(spark, "mc_v1")[a], key=repr)[0]
    where = ("k IS NULL" if k is None else f"k = {k}") + f" AND j = '{j}'"
    with pytest.raises(Exception, match=r"holds a row whose k = .*, j = .* belongs in bucket"):
        spark.sql(f"SELECT * FROM mc_lying WHERE {where}").collect()
    # a join keyed by the buckets, and a grouping by _bucket (its scan packed, every bucket read): checked too
    for sql in ("SELECT a.k, b.w FROM mc_lying a JOIN mc_v1b b ON a.k = b.k AND a.j = b.j",
                "SELECT _bucket, count(*) FROM mc_lying GROUP BY _bucket"):
        with no_broadcast(spark), pytest.raises(Exception, match=r"holds a row whose k = .*, j = .* belongs in bucket"):
            spark.sql(sql).collect()
    # broadcast, the scans packed: the join matches rows by _bucket_hash, each row's own hash, so no file's name
    # is relied on, and the rows are Spark's
    sql = "SELECT /*+ BROADCAST(b) */ a.k, b.w FROM mc_lying a JOIN mc_v1b b ON a.k = b.k AND a.j = b.j"
    df = spark.sql(sql)
    assert sorted((tuple(r) for r in df.collect()), key=repr) == spark_rows(spark, sql)
    assert "_bucket_hash" in final_plan(df), final_plan(df)
    with catalog_off(spark):  # Spark itself reads it unbucketed: the row is there
        assert spark.sql(f"SELECT * FROM mc_lying WHERE {where}").count() >= 1


@pytest.mark.parametrize("x, y, read", [(3, 8, 1), (2, 4, 2), (1, 1, 8), (5, 16, 1)])
def test_bucket_sampling_reads_only_the_buckets_it_names(spark, tables, x, y, read):
    """Hive's TABLESAMPLE (BUCKET x OUT OF y): the rows whose row hash mod y is x - 1. With y a divisor of the
    8 buckets those are whole buckets of Spark's writer's files; with y a multiple, part of bucket (x-1) mod 8."""
    placed = rows_by_bucket(spark, "mc_v1")
    df = spark.sql(f"SELECT k, j, v FROM mc_v1 TABLESAMPLE (BUCKET {x} OUT OF {y})")
    rows = {tuple(r) for r in df.collect()}
    if 8 % y == 0:
        assert rows == set().union(*(placed.get(b, set()) for b in range(x - 1, 8, y)))
    else:
        assert rows and rows < placed[(x - 1) % 8]
    [scan] = scans(final_plan(df))
    assert f"buckets={read} of 8" in scan, scan
