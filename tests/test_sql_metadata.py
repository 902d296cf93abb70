"""Tables whose metadata changes (issue 29): the catalog against bucketkit's own record.

bucketkit's writer records how it hashed a table's files in ``_bucketkit_table.json``. When the catalog
later declares another layout (``ALTER TABLE ... SET TBLPROPERTIES ('bucketing_version'='2')`` on a table
bucketkit wrote with v1, what teams do when they move to Hive 3), pruning by the catalog's hash would
return no rows for most keys. Both readers (SQL through the catalog, ``bucketkit.scan``) read such a
table unbucketed, with the reason; an INSERT refuses, naming the disagreement. Columns follow the
metastore: ``ALTER TABLE ... ADD COLUMNS`` then ``INSERT`` works. Golden rows: Spark's own plan with
the catalog off.
"""

from __future__ import annotations

import re

import pytest
from pyspark.errors import SparkRuntimeException

import bucketkit
from support.sparkown import catalog_off, final_plan, scans

KEYS = [3, 17, 42, 4242]


def rows_of(spark, sql):
    return sorted(spark.sql(sql).collect(), key=repr)


def spark_rows(spark, sql):
    with catalog_off(spark):
        return rows_of(spark, sql)


def bucketkit_scans(spark, sql):
    df = spark.sql(sql)
    df.collect()
    return scans(final_plan(df))


@pytest.fixture()
def flipped(spark):
    """A v1 table written through the catalog (bucketkit's writer, its record says v1), then ALTERed to v2."""
    spark.sql("DROP TABLE IF EXISTS meta_flip")
    spark.sql("CREATE TABLE meta_flip (k INT, v STRING) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              "TBLPROPERTIES ('bucketing_version'='1')")
    spark.sql("INSERT INTO meta_flip SELECT CAST(id AS INT), CONCAT('v', CAST(id AS STRING)) FROM range(5000)")
    assert bucketkit_scans(spark, "SELECT * FROM meta_flip WHERE k = 3")  # bucketed while they agree
    spark.sql("ALTER TABLE meta_flip SET TBLPROPERTIES ('bucketing_version'='2')")
    yield "meta_flip"
    spark.sql("DROP TABLE IF EXISTS meta_flip")


@pytest.mark.parametrize("key", KEYS)
def test_a_version_flip_on_a_table_bucketkit_wrote_is_read_unbucketed_in_sql(spark, flipped, key):
    sql = f"SELECT * FROM meta_flip WHERE k = {key}"
    rows = rows_of(spark, sql)
    assert rows == spark_rows(spark, sql) and len(rows) == 1
    assert not bucketkit_scans(spark, sql)


def test_a_version_flip_is_one_verdict_for_sql_status_and_the_python_api(spark, flipped):
    status = bucketkit.sql_status(spark, "meta_flip")
    assert not status.bucketed and "_bucketkit_table.json" in status.detail and "bucketing_version 1" in status.detail
    plan = bucketkit.plan_scan("meta_flip", [("k", "=", 4242)], spark=spark)
    assert plan.unbucketed and "bucketing_version 1 where the catalog says 2" in plan.unbucketed
    got = sorted(bucketkit.scan(spark, "meta_flip").where("k IN (3, 4242)").collect(), key=repr)
    assert got == spark_rows(spark, "SELECT * FROM meta_flip WHERE k IN (3, 4242)") and len(got) == 2


def test_an_insert_after_a_version_flip_is_refused_naming_the_disagreement(spark, flipped):
    """A failed commit reaches Python as PySpark's own SparkRuntimeException with bucketkit's message (it was a raw
    Py4JJavaError wrapping an IllegalStateException)."""
    from pyspark.errors import SparkRuntimeException

    before = spark_rows(spark, "SELECT count(*) AS n FROM meta_flip")
    with pytest.raises(SparkRuntimeException, match=r"disagree on how rows are placed.*bucketing_version"):
        spark.sql("INSERT INTO meta_flip VALUES (1, 'x')")
    assert spark_rows(spark, "SELECT count(*) AS n FROM meta_flip") == before


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_add_columns_then_insert_works_and_reads_old_files_with_nulls(spark, fmt):
    spark.sql("DROP TABLE IF EXISTS meta_add")
    spark.sql(f"CREATE TABLE meta_add (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS {fmt} "
              "TBLPROPERTIES ('bucketing_version'='2')")
    spark.sql("INSERT INTO meta_add VALUES (1, 'a'), (2, 'b')")
    spark.sql("ALTER TABLE meta_add ADD COLUMNS (w INT)")
    spark.sql("INSERT INTO meta_add VALUES (3, 'c', 30), (1, 'd', 10)")
    sql = "SELECT * FROM meta_add"
    rows = rows_of(spark, sql)
    assert rows == spark_rows(spark, sql)
    assert [(r.k, r.v, r.w) for r in rows] == [(1, "a", None), (1, "d", 10), (2, "b", None), (3, "c", 30)]
    assert bucketkit_scans(spark, "SELECT * FROM meta_add WHERE k = 1")  # still bucketed: the layout is unchanged
    assert rows_of(spark, "SELECT * FROM meta_add WHERE k = 1") == spark_rows(spark, "SELECT * FROM meta_add WHERE k = 1")
    spark.sql("DROP TABLE IF EXISTS meta_add")


@pytest.fixture()
def unsorted_pair(spark, tmp_path):
    """Two tables declaring SORTED BY (k) whose bucket files are rightly hashed but not sorted (Hive 1.x
    without hive.enforce.sorting; any writer that does not sort): written by bucketkit.write unsorted,
    then declared sorted by external DDL."""
    names = []
    for name, salt in (("meta_unsorted_a", 7), ("meta_unsorted_b", 11)):
        src = spark.sql(f"SELECT CAST((id * {salt} * 7919) % 1000 AS INT) AS k, CAST(id AS STRING) AS v "
                        f"FROM range(4000)")
        path = str(tmp_path / name)
        bucketkit.write(src.repartition(1).sortWithinPartitions("v"), "k", 4, path=path, bucketing_version=2)
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE EXTERNAL TABLE {name} (k INT, v STRING) CLUSTERED BY (k) SORTED BY (k) INTO 4 BUCKETS "
                  f"STORED AS ORC LOCATION '{path}' TBLPROPERTIES ('bucketing_version'='2')")
        names.append(name)
    yield names
    for name in names:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_sorted_by_that_lies_fails_the_join_naming_the_file_never_wrong_rows(spark, unsorted_pair):
    a, b = unsorted_pair
    sql = f"SELECT count(*) AS n FROM {a} JOIN {b} USING (k)"
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        golden = spark_rows(spark, sql)
        assert golden[0].n > 1000
        with pytest.raises(SparkRuntimeException, match=r"bucketkit: \S+ \(table \S+meta_unsorted_\w, which declares "
                                                        r"SORTED BY \(k\)\) is not sorted.*reportSortOrder=false"):
            spark.sql(sql).collect()
        spark.conf.set("spark.bucketkit.reportSortOrder", "false")
        try:
            assert rows_of(spark, sql) == golden  # read without the order: Spark sorts, as its own plan does
        finally:
            spark.conf.unset("spark.bucketkit.reportSortOrder")
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)


@pytest.fixture(params=["ORC", "TEXTFILE"])
def unhashed(spark, tmp_path, request):
    """A table declared CLUSTERED BY (k) INTO 4 BUCKETS (v1) whose files are named 000000_0 ... 000003_0
    but whose rows were dealt round-robin, never hashed (Hive 1.x without hive.enforce.bucketing; any tool
    that copies files in). ORC, and TEXTFILE (Hive's default delimiter, read by bucketkit's own text reader,
    whose rows went unchecked: a pruned read returned no row where Spark's plan returns one)."""
    import os

    raw, table_dir = tmp_path / "raw", tmp_path / "unhashed"
    rows = spark.range(400).selectExpr("CAST(id AS INT) AS k", "CONCAT('v', CAST(id AS STRING)) AS v").repartition(4)
    if request.param == "ORC":
        rows.write.orc(str(raw))
    else:
        rows.write.csv(str(raw), sep="\x01")
    table_dir.mkdir()
    parts = sorted(p for p in os.listdir(raw) if p.startswith("part-"))
    assert len(parts) == 4
    for i, name in enumerate(parts):
        os.rename(raw / name, table_dir / f"{i:06d}_0")
    spark.sql("DROP TABLE IF EXISTS meta_unhashed")
    spark.sql(f"CREATE EXTERNAL TABLE meta_unhashed (k INT, v STRING) CLUSTERED BY (k) INTO 4 BUCKETS "
              f"STORED AS {request.param} LOCATION '{table_dir}'")
    yield "meta_unhashed"
    spark.sql("DROP TABLE IF EXISTS meta_unhashed")


@pytest.mark.parametrize("key", [5, 6, 7, 8])
def test_files_never_hashed_fail_a_pruned_read_naming_the_file_never_wrong_rows(spark, unhashed, key):
    sql = f"SELECT * FROM meta_unhashed WHERE k = {key}"
    golden = spark_rows(spark, sql)
    assert len(golden) == 1
    try:
        rows = rows_of(spark, sql)
    except Exception as e:  # noqa: BLE001 - the error Spark wraps around the task's
        assert re.search(r"bucketkit: \S+/00000\d_0 \(table \S+meta_unhashed, bucket \d of 4 by its name\) holds a "
                         r"row whose k = -?\d+ belongs in bucket \d.*bucketkit validate", str(e)), str(e)[:2000]
    else:
        assert rows == golden  # the one file read held only rows of its bucket: right rows


def test_files_never_hashed_fail_a_bucket_join(spark, unhashed):
    sql = "SELECT count(*) AS n FROM meta_unhashed a JOIN meta_unhashed b USING (k)"
    assert spark_rows(spark, sql)[0].n == 400
    assert rows_of(spark, sql)[0].n == 400  # a broadcast join (small table) relies on no placement: right rows
    before = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # the join bucket by bucket: checked
    try:
        with pytest.raises(Exception, match=r"belongs in bucket"):
            spark.sql(sql).collect()
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", before)


@pytest.mark.parametrize("sql", ["SELECT * FROM meta_unhashed WHERE v = 'v7'", "SELECT count(*), max(k) FROM meta_unhashed",
                                 "SELECT k, v FROM meta_unhashed ORDER BY v DESC LIMIT 3"])
def test_reads_that_do_not_rely_on_placement_return_sparks_rows_unchecked(spark, unhashed, sql):
    """A query that reads every bucket and uses no bucketing (the scan is packed by size) returns the same
    rows wherever they sit: it is not checked (that cost 1.3x Spark's own plan on WHERE v = 123, issue 26),
    and returns what Spark's own plan returns. A bucket filter on the same table is still checked (above)."""
    (scan,) = bucketkit_scans(spark, sql)
    assert "packed by size" in scan and "buckets=all" in scan, scan
    assert rows_of(spark, sql) == spark_rows(spark, sql)
    with pytest.raises(Exception, match=r"belongs in bucket"):
        spark.sql("SELECT * FROM meta_unhashed WHERE k IN (5, 6, 7, 8, 9, 10, 11, 12)").collect()


def test_without_the_check_the_same_files_give_wrong_rows(spark, unhashed):
    """What spark.bucketkit.checkBuckets=false (for tables known to be right) gives on files that lie: the
    pruned reads of Spark's lookups miss rows. The check above is what stands between them and the user."""
    spark.conf.set("spark.bucketkit.checkBuckets", "false")
    try:
        got = [len(rows_of(spark, f"SELECT * FROM meta_unhashed WHERE k = {key}")) for key in range(20)]
    finally:
        spark.conf.unset("spark.bucketkit.checkBuckets")
    assert got.count(0) > 5  # Spark's own plan returns one row for each


@pytest.mark.parametrize("key", [5, 6, 7, 8])
def test_files_never_hashed_fail_a_pruned_python_scan_too(spark, unhashed, key):
    """One behaviour for one table: bucketkit.scan's pruned read checks rows as SQL does (through the catalog,
    which reads it bucketed). Each of the four files holds about 100 rows dealt round-robin, most of them of
    other buckets: the read fails."""
    assert len(spark_rows(spark, f"SELECT * FROM meta_unhashed WHERE k = {key}")) == 1
    with pytest.raises(Exception, match=r"bucketkit: \S+/00000\d_0 \(table .*meta_unhashed.*, bucket \d of 4 by its "
                                        r"name\) holds a row whose k = \d+ belongs in bucket \d"):
        bucketkit.scan(spark, "meta_unhashed", filters=[("k", "=", key)]).collect()
