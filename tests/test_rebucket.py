"""bucketkit.rebucket: a table's hashing changed by rewriting its rows, atomically (issue 29).

Golden rows come from Spark's own plan with the catalog off; placement is checked by ``validate``
(whose hashing tests/test_hashing*.py hold equal to Hive's own classes) and by the number of files.
"""

from __future__ import annotations

import re

import pytest
from support.files import data_files
from support.sparkown import rows_of, spark_rows

import bucketkit
from bucketkit.errors import InvalidArgumentError
from bucketkit.spark.catalog import load_table

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_v1_table_moves_to_v2_and_more_buckets(spark, tmp_path, partitioned):
    name, root = f"rb_{int(partitioned)}", tmp_path / "rb"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (k bigint, v string) {'PARTITIONED BY (p string)' if partitioned else ''} "
              f"CLUSTERED BY (k) SORTED BY (k) INTO 4 BUCKETS STORED AS ORC LOCATION '{root}'")  # no version: v1
    cols = "id AS k, CONCAT('v', CAST(id AS STRING)) AS v" + (", IF(id % 3 = 0, 'a', 'b') AS p" if partitioned else "")
    spark.sql(f"INSERT INTO {name} SELECT {cols} FROM range(2000)")
    before = spark_rows(spark, f"SELECT * FROM {name}")
    try:
        result = bucketkit.rebucket(spark, name, bucket_count=16, bucketing_version=2)
        assert result.spec.bucket_count == 16 and result.spec.bucketing_version == 2
        described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()}
        assert described["Num Buckets"] == "16" and "bucketing_version=2" in described["Table Properties"], described
        # as Hive and Trino read the metastore: the table's own bucket fields, not Spark's copy in its properties
        raw = spark._jsparkSession.sharedState().externalCatalog().unwrapped().client().getRawHiveTable(
            "default", name).rawTable()
        assert raw.getNumBuckets() == 16 and list(raw.getBucketCols()) == ["k"]
        assert raw.getParameters().get("bucketing_version") == "2"
        assert spark_rows(spark, f"SELECT * FROM {name}") == before
        assert rows_of(spark, f"SELECT * FROM {name}") == before
        assert len(data_files(root)) == 16 * (2 if partitioned else 1)
        table = load_table(spark, name)
        assert table.unbucketed_reason is None and table.spec.bucketing_version == 2
        check = bucketkit.validate(table)
        assert check.ok and check.rows_checked == 2000
        status = bucketkit.sql_status(spark, name)
        assert status.bucketed and "v2, 16 buckets" in status.detail, status
        assert spark.sql(f"SELECT v FROM {name} WHERE k = 1234").collect()[0].v == "v1234"
        spark.sql(f"INSERT INTO {name} SELECT {cols} FROM range(2000, 2100)")  # INSERTs go on in the new layout
        assert bucketkit.validate(load_table(spark, name)).ok
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_flipped_property_is_repaired_by_rebucketing_to_it(spark, tmp_path):
    """ALTER TABLE ... SET TBLPROPERTIES ('bucketing_version'='2') over v1 files makes the files lie (read
    unbucketed, INSERT refused); rebucketing with the table's own settings rewrites them as it says."""
    spark.sql("DROP TABLE IF EXISTS rb_flip")
    spark.sql(f"CREATE TABLE rb_flip (k int, v string) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path / 'flip'}' TBLPROPERTIES ('bucketing_version'='1')")
    try:
        spark.sql("INSERT INTO rb_flip SELECT CAST(id AS INT), CAST(id AS STRING) FROM range(500)")
        spark.sql("ALTER TABLE rb_flip SET TBLPROPERTIES ('bucketing_version'='2')")
        assert not bucketkit.sql_status(spark, "rb_flip").bucketed
        bucketkit.rebucket(spark, "rb_flip")
        assert bucketkit.sql_status(spark, "rb_flip").bucketed
        assert bucketkit.validate(load_table(spark, "rb_flip")).ok
        assert spark.sql("SELECT count(*) FROM rb_flip WHERE k = 77").first()[0] == 1
    finally:
        spark.sql("DROP TABLE IF EXISTS rb_flip")


def test_a_directory_table_is_rebucketed_in_place(spark, tmp_path):
    df = spark.range(300).selectExpr("id AS k", "id * 2 AS w")
    bucketkit.write(df, "k", 4, path=str(tmp_path / "d"))
    result = bucketkit.rebucket(spark, str(tmp_path / "d"), bucket_count=8, bucketed_by="w")
    assert result.spec.bucketed_by == ("w",) and bucketkit.read_spec(str(tmp_path / "d")).bucket_count == 8
    assert bucketkit.validate(str(tmp_path / "d")).ok
    assert sorted(tuple(r) for r in bucketkit.scan(spark, path=str(tmp_path / "d")).collect()) == \
        [(k, 2 * k) for k in range(300)]


def test_refused_where_bucketkit_must_not_rewrite(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS rb_spark")
    spark.range(10).selectExpr("id AS k").write.bucketBy(4, "k").saveAsTable("rb_spark")
    try:
        with pytest.raises(InvalidArgumentError, match=r"Spark's own hash"):
            bucketkit.rebucket(spark, "rb_spark", bucket_count=8)
    finally:
        spark.sql("DROP TABLE IF EXISTS rb_spark")
    bucketkit.write(spark.range(10).selectExpr("id AS k"), "k", 4, path=str(tmp_path / "x"))
    with pytest.raises(InvalidArgumentError, match=r"bucketed_by=\['nope'\]"):
        bucketkit.rebucket(spark, str(tmp_path / "x"), bucketed_by="nope")


def test_a_table_whose_clustered_by_the_metastore_cannot_change_is_refused_before_it_is_rewritten(spark, tmp_path):
    """Hive refuses every ALTER TABLE of a table whose bucket column is spelled with capitals (Spark's own ALTER TABLE
    too), so its CLUSTERED BY cannot follow a rewrite. Failed before: the files were rewritten in 8 buckets, then a raw
    Py4JJavaError, and the table read unbucketed (the record said 8, the catalog 4)."""
    for name, column in (("rb_caps", "UserId"), ("rb_lower", "userid")):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.sql(f"CREATE TABLE {name} ({column} INT, v STRING) CLUSTERED BY ({column}) INTO 4 BUCKETS STORED AS ORC "
                  f"LOCATION '{tmp_path / name}'")
        spark.sql(f"INSERT INTO {name} SELECT CAST(id AS INT), 'a' FROM range(100)")
    before = sorted(data_files(tmp_path / "rb_caps"))
    with pytest.raises(InvalidArgumentError, match=r"rb_caps: cannot be re-bucketed in place.*\['UserId'\].*Nothing"):
        bucketkit.rebucket(spark, "rb_caps", bucket_count=8)
    assert sorted(data_files(tmp_path / "rb_caps")) == before
    assert load_table(spark, "rb_caps").spec.bucket_count == 4 and bucketkit.validate(load_table(spark, "rb_caps")).ok
    bucketkit.rebucket(spark, "rb_lower", bucketed_by="USERID", bucket_count=8)  # a name in any case
    assert load_table(spark, "rb_lower").spec.bucket_count == 8 and bucketkit.validate(load_table(spark, "rb_lower")).ok
    assert spark_rows(spark, "SELECT count(*) FROM rb_lower") == [(100,)]


def test_the_cli_rebuckets_a_directory(spark, tmp_path, capsys):
    import json

    from bucketkit.cli import main

    bucketkit.write(spark.range(200).selectExpr("id AS k"), "k", 4, path=str(tmp_path / "c"), bucketing_version=1)
    assert main(["rebucket", str(tmp_path / "c"), "--bucket-count", "32", "--bucketing-version", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bucket_count"] == 32 and out["bucketing_version"] == 2 and out["rows"] == 200
    assert bucketkit.validate(str(tmp_path / "c")).ok
    assert main(["rebucket", str(tmp_path / "c"), "--conf", "nonsense"]) == 2
    assert "--conf 'nonsense': expected KEY=VALUE" in capsys.readouterr().err


def test_readers_during_a_rebucket_see_the_rows_or_a_clear_error(spark, tmp_path):
    """SQL readers loop while the table is re-bucketed twice (8 v1 -> 16 v2 -> 8 v1): every read returns the
    table's rows (the same rows in either layout) or fails with an error naming what changed under it —
    never a part, never a row missed by pruning with the other layout's hash."""
    import threading

    name, root = "rb_loop", tmp_path / "rb_loop"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (k bigint, v string) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              f"LOCATION '{root}'")
    spark.sql(f"INSERT INTO {name} SELECT id, CONCAT('v', CAST(id AS STRING)) FROM range(20000)")
    queries = {f"SELECT count(*), sum(k) FROM {name}": [(20000, sum(range(20000)))],
               f"SELECT v FROM {name} WHERE k = 1234": [("v1234",)],
               f"SELECT count(*) FROM {name} WHERE k IN (7, 4242, 19999)": [(3,)]}
    outcomes, stop = [], threading.Event()

    def read():
        while not stop.is_set():
            for sql, expected in queries.items():
                try:
                    got = [tuple(r) for r in spark.sql(sql).collect()]
                    outcomes.append(("rows", sql, got == expected, got))
                except Exception as exc:  # noqa: BLE001 - every error is recorded and judged below
                    outcomes.append(("error", sql, False, str(exc)[:4000]))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for count, version in ((16, 2), (8, 1), (16, 2), (8, 1)):
            bucketkit.rebucket(spark, name, bucket_count=count, bucketing_version=version)
    finally:
        stop.set()
        reader.join(timeout=120)
    try:
        wrong = [o for o in outcomes if o[0] == "rows" and not o[2]]
        assert not wrong, wrong[:3]
        errors = [o for o in outcomes if o[0] == "error"]
        # a query planned before a switch finds its files gone: said so, never Spark's bare FileNotFoundException
        unclear = [o for o in errors if not re.search(r"bucketkit: table \S+: a file it listed is gone .*overwritten "
                                                      r"while it was read; run the read again", o[3])]
        assert not unclear, unclear[:3]
        assert sum(o[0] == "rows" for o in outcomes) >= len(queries), outcomes[:5]
        assert bucketkit.validate(load_table(spark, name)).ok
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_a_query_planned_before_a_rewrite_reads_its_version(spark, tmp_path):
    """A query lists the table's files when it is planned for a run, with bucketkit's record, as one version.
    Analyzed before a rebucket and run after it, it reads the new files (their record says they are hashed
    into another count than the metastore said at analysis: read unbucketed, the right rows). An RDD
    planned (its files listed) before a rewrite and run after it reads the version it listed, kept beside
    the table (docs/writing.md, Versions): the old files, whole."""
    name = "rb_planned"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (k bigint, v string) CLUSTERED BY (k) INTO 4 BUCKETS STORED AS ORC "
              f"LOCATION '{tmp_path / name}'")
    try:
        spark.sql(f"INSERT INTO {name} SELECT id, CAST(id AS STRING) FROM range(100)")
        analyzed = spark.sql(f"SELECT count(*), sum(k) FROM {name} WHERE k IN (3, 50, 77)")
        bucketkit.rebucket(spark, name, bucket_count=8)
        assert [tuple(r) for r in analyzed.collect()] == [(3, 130)]
        planned = spark.sql(f"SELECT k FROM {name}").rdd
        bucketkit.rebucket(spark, name, bucket_count=2)
        assert sorted(r[0] for r in planned.collect()) == list(range(100))  # 8 buckets' files, kept
        assert spark.sql(f"SELECT count(*) FROM {name}").first()[0] == 100  # planned again: the new files
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
