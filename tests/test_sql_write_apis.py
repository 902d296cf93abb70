"""Every Spark write API into an existing Hive bucketed table, with bucketkit's catalog on: each one
either places every row in the bucket Hive's hash of the table's ``bucketing_version`` says (checked
by ``bucketkit.validate``, whose hash tests/test_hashing_hive.py holds to Hive's own classes), or is
refused by Spark before anything is written. Never misplaced rows.

What Spark itself decides is Spark's: ``saveAsTable`` in ``overwrite`` mode replaces the table's
definition (it drops the table and creates Spark's own unbucketed data source table, catalog on or
off); ``REPLACE TABLE ... AS SELECT``/``writeTo(...).createOrReplace()`` are refused by Spark's session
catalog for Hive tables; ``writeTo(...).partitionedBy(bucket(n, k)).create()`` creates Spark's own
``bucketBy`` table, hashed and read by Spark's rules (tests/test_spark_bucketby.py).
"""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import bucketkit
from support.sparkown import catalog_off

WRITES = {
    "writeTo.append": lambda df: df.writeTo("wapi").append(),
    "writeTo.overwritePartitions": lambda df: df.writeTo("wapi").overwritePartitions(),
    "writeTo.overwrite": lambda df: df.writeTo("wapi").overwrite(F.lit(True)),
    "insertInto": lambda df: df.write.insertInto("wapi"),
    "insertInto overwrite": lambda df: df.write.insertInto("wapi", overwrite=True),
}


@pytest.fixture
def source(spark):
    return spark.range(-500, 700).selectExpr("id AS k", "CAST(id AS STRING) AS v")


def create(spark, version):
    spark.sql("DROP TABLE IF EXISTS wapi")
    spark.sql(f"CREATE TABLE wapi (k bigint, v string) CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
              f"TBLPROPERTIES ('bucketing_version'='{version}')")


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("api", sorted(WRITES))
def test_write_api_places_every_row(spark, source, api, version):
    create(spark, version)
    try:
        WRITES[api](source)
        checked = bucketkit.validate(bucketkit.resolve_table(spark, "wapi"))
        assert checked.rows_checked == 1200 and checked.ok, checked.format()
        with catalog_off(spark):  # Spark's own reader of the same files: every row, once
            assert sorted(r.k for r in spark.table("wapi").collect()) == list(range(-500, 700))
    finally:
        spark.sql("DROP TABLE IF EXISTS wapi")


@pytest.mark.parametrize("how", ["createOrReplace", "replace"])
def test_replace_without_hive_bucketing_is_refused_and_keeps_the_table(spark, source, how):
    """writeTo(t).replace() with no USING hive and no bucket(): a data source table, which Spark refuses to put in
    place of a session-catalog table; the Hive bucketed table stays."""
    create(spark, 2)
    try:
        WRITES["insertInto"](source)
        with pytest.raises(AnalysisException, match="REPLACE TABLE AS SELECT"):
            getattr(source.writeTo("wapi"), how)()
        assert bucketkit.sql_status(spark, "wapi").bucketed
        assert spark.table("wapi").count() == 1200
    finally:
        spark.sql("DROP TABLE IF EXISTS wapi")


def test_replace_with_hive_bucketing_replaces_the_table(spark, source):
    """CREATE OR REPLACE TABLE ... STORED AS ORC CLUSTERED BY ... AS SELECT: bucketkit's REPLACE (test_sql_ctas)."""
    create(spark, 2)
    try:
        WRITES["insertInto"](source)
        source.where("k < 0").createOrReplaceTempView("wapi_src")
        spark.sql("CREATE OR REPLACE TABLE wapi CLUSTERED BY (k) INTO 8 BUCKETS STORED AS ORC "
                  "TBLPROPERTIES ('bucketing_version'='2') AS SELECT * FROM wapi_src")
        assert bucketkit.sql_status(spark, "wapi").bucketed
        with catalog_off(spark):
            assert sorted(r.k for r in spark.table("wapi").collect()) == list(range(-500, 0))
        checked = bucketkit.validate(bucketkit.resolve_table(spark, "wapi"))
        assert checked.ok and checked.rows_checked == 500
    finally:
        spark.sql("DROP TABLE IF EXISTS wapi")


def test_save_as_table_append_is_refused_by_spark(spark, source):
    create(spark, 2)
    try:
        with pytest.raises(AnalysisException, match="bucketing does not match|doesn't match the specified format"):
            source.write.format("hive").mode("append").saveAsTable("wapi")
        with pytest.raises(AnalysisException, match="doesn't match the specified format"):
            source.write.mode("append").saveAsTable("wapi")
        assert spark.table("wapi").count() == 0
    finally:
        spark.sql("DROP TABLE IF EXISTS wapi")


@pytest.mark.parametrize("off", [False, True], ids=["catalog on", "catalog off"])
def test_save_as_table_overwrite_replaces_the_definition_as_spark_does(spark, source, off):
    create(spark, 2)
    try:
        if off:
            with catalog_off(spark):
                source.write.mode("overwrite").saveAsTable("wapi")
        else:
            source.write.mode("overwrite").saveAsTable("wapi")
        table = spark.sql("DESCRIBE TABLE EXTENDED wapi").collect()
        assert {r.col_name: r.data_type for r in table}["Provider"] == "parquet"
        assert not any(r.col_name == "Num Buckets" for r in table)
        assert spark.table("wapi").count() == 1200
        with pytest.raises(bucketkit.errors.InvalidArgumentError, match="is not bucketed"):
            bucketkit.resolve_table(spark, "wapi")
    finally:
        spark.sql("DROP TABLE IF EXISTS wapi")


@pytest.mark.parametrize("write", [
    "INSERT INTO wapi_p REPLACE WHERE d = 'x' SELECT 5, 'z', 'y'",
    "INSERT INTO wapi_p REPLACE WHERE d <=> 'x' SELECT 5, 'z', 'x'",
    "INSERT INTO wapi_p REPLACE WHERE k = 1 SELECT 1, 'z', 'x'",
    "writeTo d = 'x'",
])
def test_overwriting_the_rows_a_condition_names_is_refused_and_nothing_is_lost(spark, write):
    """``INSERT INTO t REPLACE WHERE cond`` and ``writeTo(t).overwrite(cond)``: Spark refuses both on its own Hive
    tables. The catalog's overwrite replaces whole partitions, the ones the query writes: REPLACE WHERE d = 'x' with
    a row of d = 'y' emptied partition y too (4 rows in, 1 left). Refused now, before anything is written."""
    spark.sql("DROP TABLE IF EXISTS wapi_p")
    spark.sql("CREATE TABLE wapi_p (k INT, v STRING, d STRING) PARTITIONED BY (d) CLUSTERED BY (k) INTO 4 BUCKETS "
              "STORED AS ORC")
    try:
        spark.sql("INSERT INTO wapi_p VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'y')")
        with pytest.raises(AnalysisException, match=r"wapi_p REPLACE WHERE .*does not support.*INSERT OVERWRITE "
                                                    r"\S*wapi_p PARTITION"):
            if write.startswith("writeTo"):
                spark.createDataFrame([(5, "z", "x")], "k INT, v STRING, d STRING").writeTo("wapi_p") \
                    .overwrite(F.col("d") == "x")
            else:
                spark.sql(write)
        with catalog_off(spark):
            assert sorted(map(tuple, spark.table("wapi_p").collect())) == [
                (1, "a", "x"), (2, "b", "x"), (3, "c", "y"), (4, "d", "y")]
    finally:
        spark.sql("DROP TABLE IF EXISTS wapi_p")
